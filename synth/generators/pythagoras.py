"""Pythagoras: the hypotenuse or a leg of a right triangle, surds simplified."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import register
from synth.generators._display import num, show, square_factor, step, surd
from synth.generators._figure import (
    GRID_SHARE,
    GRID_STEPS,
    TRIANGLE_NAMES,
    TRIPLES,
    UNITS,
    FigureFamily,
    Quantity,
    counted,
    figure_spec,
    grid_elements,
    grid_size,
    length_text,
    pick,
    vertex_labels,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft
from synth.records import Figure


@dataclass(frozen=True)
class _Level:
    find: str | None  # "hyp" or "leg" from a Pythagorean triple; None: either, with a surd answer to simplify
    triples: int = 0  # how many of TRIPLES (smallest first) the triple comes from
    grid: bool = False  # on a share (GRID_SHARE), the legs drawn along the lines of squared paper


_LEVELS = {"easy": _Level("hyp", triples=4, grid=True), "medium": _Level("leg", triples=len(TRIPLES)),
           "hard": _Level(None)}


@register
class Pythagoras(FigureFamily):
    """easy: hypotenuse from a triple; medium: a leg; hard: a surd answer simplified (√52 = 2√13)."""

    id = "geometry.pythagoras"
    domain = "geometry"
    subdomain = "right_triangles"
    grade_band = "8-9"
    malrules = (
        MalRule("leg_by_adding", "theorem_misapplication", "adds the squares to find a leg instead of subtracting"),
        MalRule("no_square_root", "formula_misuse", "stops at the sum of squares and does not take the square root"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        names, unit, flip = pick(rng, TRIANGLE_NAMES), pick(rng, UNITS), bool(rng.integers(2))
        if level.grid and rng.random() < GRID_SHARE:  # legs along the lines of squared paper
            k = pick(rng, GRID_STEPS)
            a, b, c = (v * k for v in pick(rng, ((3, 4, 5), (6, 8, 10), (5, 12, 13))))
            if rng.integers(2):
                a, b = b, a
            return {"names": names, "unit": unit, "flip": flip, "find": "hyp", "a": a, "b": b, "c": c, "grid": k}
        if level.find is not None:
            a, b, c = pick(rng, TRIPLES[:level.triples])
            k = int(rng.integers(1, 5 if c < 20 else 2))
            a, b, c = a * k, b * k, c * k
            if rng.integers(2):
                a, b = b, a
            return {"names": names, "unit": unit, "flip": flip, "find": level.find, "a": a, "b": b, "c": c}
        return self._sample_surd(rng, names, unit, flip)

    @staticmethod
    def _sample_surd(rng: np.random.Generator, names: str, unit: str, flip: bool) -> dict[str, Any]:
        """A hypotenuse or a leg whose length is a surd to simplify (√52 = 2√13); some hypotenuses on squared paper."""
        while True:
            find = pick(rng, ("hyp", "leg"))
            if find == "hyp" and rng.random() < GRID_SHARE:
                k = pick(rng, GRID_STEPS)
                a, other = int(rng.integers(2, 9)), int(rng.integers(2, 10))
                sq = a * a + other * other
                if math.isqrt(sq) ** 2 != sq:
                    return {"names": names, "unit": unit, "flip": flip, "find": find, "a": a * k, "b": other * k,
                            "c": None, "grid": k}
                continue
            a, other = int(rng.integers(2, 13)), int(rng.integers(2, 16))
            if find == "hyp":
                sq = a * a + other * other
                params = {"a": a, "b": other, "c": None}
            else:
                c = max(a, other) + int(rng.integers(1, 6))
                sq = c * c - a * a
                params = {"a": a, "b": None, "c": c}
            if math.isqrt(sq) ** 2 != sq and square_factor(sq) > 1:
                return {"names": names, "unit": unit, "flip": flip, "find": find, **params}

    def _sides(self, params: dict[str, Any]) -> tuple[float, float, float]:
        a, b, c = params["a"], params["b"], params["c"]
        if b is None:
            b = math.sqrt(c * c - a * a)
        if c is None or params["find"] == "hyp":
            c = math.hypot(a, b)
        return float(a), float(b), float(c)

    def valid(self, params: dict[str, Any]) -> bool:
        return params["find"] == "hyp" or params["c"] > params["a"]

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        n, u = params["names"], params["unit"]
        grid = bool(params.get("grid"))  # only the legs lie along grid lines: a hypotenuse is never counted
        out = [Quantity(f"{n[1]}{n[2]}", "a", f"side_{n[1]}{n[2]}", u, on_grid=grid)]
        if params["find"] == "hyp":
            out.append(Quantity(f"{n[0]}{n[2]}", "b", f"side_{n[0]}{n[2]}", u, on_grid=grid))
        else:
            out.append(Quantity(f"{n[0]}{n[1]}", "c", f"side_{n[0]}{n[1]}", u))
        return out

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """The right angle misplaced: the longer leg taken for the hypotenuse (subtracting squares).

        Which side is which changes what is asked and where each length goes (find, a, b, c together).
        The opposite misread, the hypotenuse taken for a leg, writes exactly the numbers of the
        ``leg_by_adding`` mal-rule; one working must carry one label, so it is left to the mal-rule.
        """
        n, a, b = params["names"], params["a"], params["b"]
        keys = ("find", "a", "b", "c")
        if params["find"] == "leg":
            return ()
        if b > a:  # then a is a leg and b is taken for the hypotenuse
            return (Reading("find", f"side_{n[0]}{n[2]}", "misread_relation", (("leg", a, None, b),), also=keys[1:]),)
        if a > b:
            return (Reading("find", f"side_{n[1]}{n[2]}", "misread_relation", (("leg", b, None, a),), also=keys[1:]),)
        return ()

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        a = params["a"]
        hyp = params["find"] == "hyp"
        if mal == "leg_by_adding" and hyp:
            return None
        other = params["b"] if hyp else params["c"]
        op = "+" if hyp or mal == "leg_by_adding" else "-"
        first, second = (a, other) if hyp else (other, a)
        root = mal != "no_square_root"
        wrap = (lambda n: ["sqrt", n]) if root else (lambda n: n)
        rule = "mal:" + mal if mal else ("pythagoras_hypotenuse" if hyp else "pythagoras_leg")
        step(d, rule, wrap([op, ["pow", first, 2], ["pow", second, 2]]))
        s1 = d.compute(sympy.Integer(first) ** 2)
        step(d, "square", wrap([op, num(s1), ["pow", second, 2]]), s1)
        s2 = d.compute(sympy.Integer(second) ** 2)
        step(d, "square", wrap([op, num(s1), num(s2)]), s2)
        total = d.compute(s1 + s2 if op == "+" else s1 - s2)
        step(d, "add" if op == "+" else "subtract", wrap(num(total)), total)
        if not root:
            return d.steps
        if total > 0 and total.is_Integer and square_factor(int(total)) > 1:
            f = square_factor(int(total))
            if f != total:
                step(d, "square_factor", ["sqrt", ["*", f, int(total) // f]])
            simple = surd(total)
            coef = sympy.Integer(math.isqrt(f))
            result = d.compute(coef)
            if result != coef:  # a slipped coefficient is still written as c√k
                # ``num`` makes the slipped SymPy number a display leaf (value_of cannot read SymPy).
                simple = num(result) if int(total) == f else ["*", num(result), ["sqrt", int(total) // f]]
            step(d, "square_root", simple, result)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Distance formula on coordinates: legs along the axes, hypotenuse between their ends.
        a = sympy.Integer(params["a"])
        if params["find"] == "hyp":
            p, q = sympy.Point(a, 0), sympy.Point(0, params["b"])
            return p.distance(q)
        return sympy.sqrt((params["c"] - a) * (params["c"] + a))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        _, t, lt = show(surd(answer**2))
        return f"{t} {params['unit']}", rf"{lt}\ \mathrm{{{params['unit']}}}"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        n = params["names"]
        return {"right": n[2], "leg1": f"{n[1]}{n[2]}", "leg2": f"{n[0]}{n[2]}", "hyp": f"{n[0]}{n[1]}",
                "tri": n}

    def figure(self, params: dict[str, Any]) -> Figure:
        n, u = params["names"], params["unit"]
        a, b, c = self._sides(params)
        sx = -1.0 if params["flip"] else 1.0
        pts = {n[2]: (0.0, 0.0), n[1]: (0.0, a), n[0]: (sx * b, 0.0)}  # right angle at n[2]
        text = {
            f"{n[1]}{n[2]}": length_text(params["a"], u),
            f"{n[0]}{n[2]}": length_text(params["b"], u) if params["find"] == "hyp" else "x",
            f"{n[0]}{n[1]}": "x" if params["find"] == "hyp" else length_text(params["c"], u),
        }
        value = {f"{n[1]}{n[2]}": params["a"], f"{n[0]}{n[2]}": params["b"], f"{n[0]}{n[1]}": params["c"]}
        els: list[dict[str, Any]] = [{"id": f"triangle_{n}", "type": "polygon", "points": list(n)}, *vertex_labels(n),
                                     {"id": f"right_{n[2]}", "type": "right_angle", "at": n[2], "arms": [n[1], n[0]]}]
        grid = bool(params.get("grid"))
        for side, (p, q) in ((f"{n[1]}{n[2]}", (n[1], n[2])), (f"{n[0]}{n[2]}", (n[0], n[2])),
                             (f"{n[0]}{n[1]}", (n[0], n[1]))):
            el = {"id": f"side_{side}", "type": "segment", "from": p, "to": q, "text": text[side]}
            if text[side] == "x":
                el["style"] = "italic"
            elif value[side] is not None:
                el["value"] = value[side]
                if grid:  # counted in squares, not written
                    el = counted(el, params["grid"])
            els.append(el)
        if grid:
            size = grid_size(params, (b, a))
            return Figure(self.figure_kind, figure_spec(pts, [*grid_elements(params, n[2]), *els], size))
        return Figure(self.figure_kind, figure_spec(pts, els, (2.8, 2.2)))
