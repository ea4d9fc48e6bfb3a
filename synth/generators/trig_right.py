"""Right-triangle trigonometry with a figure: SOH-CAH-TOA ratios and sides, exact values at 30°, 45°, 60°."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._display import num, show, step
from synth.generators._figure import (
    GRID_SHARE,
    GRID_STEPS,
    TRIANGLE_NAMES,
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
from synth.generators.base import Derivation, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure

# Exact ratio values as a pupil writes them (tan 30° rationalised).
_RATIO_NODE: dict[tuple[str, int], E.Node] = {
    ("sin", 30): ["frac", 1, 2], ("cos", 60): ["frac", 1, 2], ("tan", 45): 1, ("sin", 45): ["frac", ["sqrt", 2], 2],
    ("cos", 45): ["frac", ["sqrt", 2], 2], ("sin", 60): ["frac", ["sqrt", 3], 2], ("cos", 30): ["frac", ["sqrt", 3], 2],
    ("tan", 60): ["sqrt", 3], ("tan", 30): ["frac", ["sqrt", 3], 3],
}  # fmt: skip
_RATIONAL = (("sin", 30), ("cos", 60), ("tan", 45))
_SURD = (("sin", 60), ("cos", 30), ("tan", 60), ("tan", 30), ("sin", 45), ("cos", 45))
# Which sides a ratio relates: (numerator, denominator).
_SIDES = {"sin": ("opp", "hyp"), "cos": ("adj", "hyp"), "tan": ("opp", "adj")}
_SWAP = {"sin": "cos", "cos": "sin"}
_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (4, 3, 5), (12, 5, 13), (15, 8, 17), (20, 21, 29), (21, 20, 29))


def exact(v: sympy.Basic) -> sympy.Basic:
    """``v`` with rational denominators, as c·√m; only floats go through nsimplify's slow search."""
    return sympy.nsimplify(v) if v.has(sympy.Float) else sympy.radsimp(v)


def surd_node(v: sympy.Basic) -> E.Node:
    """A value c·√m (c rational, m square-free) as pupils write it: 6√3, 5√2/2, 4."""
    v = exact(v)
    if v.is_Rational:
        return num(v)
    coef, root = v.as_coeff_Mul()
    m = int(root.args[0])
    c = E.to_fraction(coef)
    body: E.Node = ["sqrt", m] if c.numerator == 1 else ["*", c.numerator, ["sqrt", m]]
    return body if c.denominator == 1 else ["frac", body, c.denominator]


def _ratio(func: str, angle: int) -> sympy.Expr:
    return show(_RATIO_NODE[(func, angle)])[0]


@dataclass(frozen=True)
class _Level:
    kind: str  # "side": a side from an angle's exact ratio; "ratio": a ratio from two sides (Pythagoras first)
    angles: tuple[tuple[str, int], ...] = ()  # the (function, angle) pairs a side is found with
    step: int = 1  # known sides are multiples of this
    whole_coefficient: bool = False  # the unknown side's coefficient must be whole (2√3 yes, √3/2 no)
    grid: bool = False  # on a share (GRID_SHARE), the triangle on squared paper


_LEVELS = {"easy": _Level("side", _RATIONAL, step=2, grid=True), "medium": _Level("ratio"),
           "hard": _Level("side", _SURD, step=6, whole_coefficient=True)}


@register
class RightTriangleRatios(FigureFamily):
    """easy: a side from sin 30°, cos 60° or tan 45° (on a share, from a leg counted on squared paper);
    medium: a ratio as a fraction (third side by Pythagoras);
    hard: a side in surd form from sin, cos or tan of 30°, 45° or 60° (rationalising when dividing)."""

    id = "trig.right_triangle.ratios"
    domain = "trigonometry"
    subdomain = "right_triangles"
    grade_band = "9-10"
    malrules = (
        MalRule("ratio_swap", "theorem_misapplication", "mixes up SOH-CAH-TOA: uses sine where cosine belongs "
                "(or the other way round)"),
        MalRule("ratio_inverted", "formula_misuse", "turns the ratio upside down (multiplies where it should "
                "divide, or hypotenuse over opposite)"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        names, unit, flip = pick(rng, TRIANGLE_NAMES), pick(rng, UNITS), bool(rng.integers(2))
        base = {"names": names, "unit": unit, "flip": flip}
        level = _LEVELS[difficulty]
        if level.kind == "ratio":
            a, b, c = pick(rng, _TRIPLES)
            k = int(rng.integers(2, 5))
            func = pick(rng, ("sin", "cos", "tan"))
            # Give two sides that leave one side the ratio needs to Pythagoras.
            sides = {"opp": a * k, "adj": b * k, "hyp": c * k}
            drop = sorted(_SIDES[func])[int(rng.integers(2))]
            given = sorted({"opp", "adj", "hyp"} - {drop})
            return {**base, "level": "ratio", "func": func, "opp": sides["opp"], "adj": sides["adj"],
                    "hyp": sides["hyp"], "given": given, "answer_form": "fraction"}
        if level.grid and rng.random() < GRID_SHARE:
            return {**base, **self._sample_grid(rng)}
        func, angle = pick(rng, level.angles)
        op = pick(rng, ("multiply", "divide"))
        known_side = _SIDES[func][1] if op == "multiply" else _SIDES[func][0]
        r = _ratio(func, angle)
        step_k = level.step
        while True:
            known = int(rng.integers(1, 16)) * step_k
            unknown = known * r if op == "multiply" else known / r
            if not level.whole_coefficient or exact(unknown).as_coeff_Mul()[0].is_Integer:
                return {**base, "level": "side", "func": func, "angle": angle, "op": op, "known": known,
                        "known_side": known_side}

    @staticmethod
    def _sample_grid(rng: np.random.Generator) -> dict[str, Any]:
        """The triangle on squared paper, its legs along the grid lines: the known leg is counted in squares and
        scaled by the key, and the hypotenuse asked (it runs across the squares, so it cannot be counted).

        Only sin 30° and cos 60° with a known leg: with tan 45° the other leg, the one asked, would be
        countable too, and a known hypotenuse would not lie along a grid line.
        """
        func = pick(rng, ("sin", "cos"))
        k = pick(rng, GRID_STEPS)
        return {"level": "side", "func": func, "angle": 30 if func == "sin" else 60, "op": "divide",
                "known": int(rng.integers(2, 8)) * k, "known_side": _SIDES[func][0], "grid": k}

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        n, u = params["names"], params["unit"]
        ids = {"opp": f"side_{n[1]}{n[2]}", "adj": f"side_{n[0]}{n[2]}", "hyp": f"side_{n[0]}{n[1]}"}
        if params["level"] == "ratio":
            return [Quantity(f"side {ids[s][5:]}", s, ids[s], u) for s in params["given"]]
        return [Quantity(f"angle {n[0]}", "angle", f"angle_{n[0]}", "°"),
                Quantity(f"side {ids[params['known_side']][5:]}", "known", ids[params["known_side"]], u,
                         on_grid=bool(params.get("grid")))]

    def valid(self, params: dict[str, Any]) -> bool:
        if params["level"] == "ratio":
            return params["hyp"] > max(params["opp"], params["adj"])
        return (params["func"], params["angle"]) in _RATIO_NODE

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        # Angles read off the figure can only be misread as another special angle the table covers.
        out = [r for r in super().figure_readings(params) if r.param != "angle"]
        if params["image_role"] == "required" and params["level"] == "side":
            alts = tuple(a for a in (30, 45, 60) if a != params["angle"] and (params["func"], a) in _RATIO_NODE)
            if alts:
                out.append(Reading("angle", f"angle_{params['names'][0]}", "misread_value", alts))
            # No misread_relation: the right-angle mark misread (hypotenuse taken for a leg) divides by the
            # ratio instead of multiplying, exactly the ratio_inverted mal-rule's working (one working, one label).
        return effective_readings(self, params, out)

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        if params["level"] == "ratio":
            return self._ratio_steps(params, d, mal)
        func, angle, op, known = params["func"], params["angle"], params["op"], params["known"]
        if mal == "ratio_swap":
            if func not in _SWAP:
                return None
            func = _SWAP[func]
        if mal == "ratio_inverted":
            op = "divide" if op == "multiply" else "multiply"
        rule = "mal:" + mal if mal else f"{func}_{op}"
        sym = "*" if op == "multiply" else "/"
        step(d, rule, [sym, known, [func, angle]])
        node = _RATIO_NODE[(func, angle)]
        r = show(node)[0]
        step(d, f"exact_value:{func}", [sym, known, node])
        if op == "multiply":
            v = known * r
            c, rad = exact(v).as_coeff_Mul()
            coef = d.compute(c)
            step(d, "multiply", surd_node(coef * rad), coef)
            return d.steps
        if r.is_Rational:
            v = d.compute(known / r)
            step(d, "divide", num(v), v)
            return d.steps
        # k ÷ (√m/q) = kq/√m = kq√m/m
        m = int(max(r.atoms(sympy.Integer) - {sympy.Integer(1)}, key=int, default=sympy.Integer(1)))
        q = exact(sympy.sqrt(m) / r)
        if q != 1:
            top = d.compute(known * q)
            step(d, "divide_by_fraction", ["frac", num(top), ["sqrt", m]], top)
        else:
            top = sympy.Integer(known)
        step(d, "rationalise", ["frac", ["*", num(top), ["sqrt", m]], m])
        coef = d.compute(top / m)
        step(d, "simplify", surd_node(coef * sympy.sqrt(m)), coef)
        return d.steps

    def _ratio_steps(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        func = params["func"]
        if mal == "ratio_swap":
            if func not in _SWAP:
                return None
            func = _SWAP[func]
        top_side, bottom_side = _SIDES[func]
        if mal == "ratio_inverted":
            top_side, bottom_side = bottom_side, top_side
        rule = "mal:" + mal if mal else f"ratio:{func}"
        given = params["given"]
        missing = ({"opp", "adj", "hyp"} - set(given)).pop()
        if missing == "hyp":
            first, second = params["opp"], params["adj"]
            op = "+"
        else:
            other = "adj" if missing == "opp" else "opp"
            first, second = params["hyp"], params[other]
            op = "-"

        def shown(missing_node: E.Node) -> E.Node:
            top = missing_node if top_side == missing else params[top_side]
            bottom = missing_node if bottom_side == missing else params[bottom_side]
            return ["frac", top, bottom]

        step(d, rule, shown(["sqrt", [op, ["pow", first, 2], ["pow", second, 2]]]))
        uses_missing = missing in (top_side, bottom_side)
        if uses_missing:
            s1 = d.compute(sympy.Integer(first) ** 2)
            step(d, "square", shown(["sqrt", [op, num(s1), ["pow", second, 2]]]), s1)
            s2 = d.compute(sympy.Integer(second) ** 2)
            step(d, "square", shown(["sqrt", [op, num(s1), num(s2)]]), s2)
            tot = d.compute(s1 + s2 if op == "+" else s1 - s2)
            step(d, "add" if op == "+" else "subtract", shown(["sqrt", num(tot)]), tot)
            root = sympy.sqrt(tot)
            if not root.is_Rational:
                return d.steps
            side = d.compute(root)
            step(d, "square_root", shown(num(side)), side)
            value = E.sym(["frac", num(side) if top_side == missing else params[top_side],
                           num(side) if bottom_side == missing else params[bottom_side]])
        else:
            value = sympy.Rational(params[top_side], params[bottom_side])
        value = d.compute(value)
        step(d, "simplify_fraction", E.leaf(value), value)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Coordinates: put the triangle on axes and evaluate the function of the angle at A with SymPy.
        if params["level"] == "ratio":
            opp, adj = sympy.Integer(params["opp"]), sympy.Integer(params["adj"])
            theta = sympy.atan2(opp, adj)
            # SymPy evaluates a function of atan2 to a surd quotient itself; radsimp clears the root (simplify
            # gave the same values on 450 sampled problems at 3.7 times the cost), and a Pythagorean triple's
            # ratio is then already rational.
            value = sympy.radsimp({"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan}[params["func"]](theta))
            return value if value.is_Rational else sympy.nsimplify(value)
        theta = sympy.pi * params["angle"] / 180
        # Build the triangle from the known side and the angle, then read off the other side.
        k = sympy.Integer(params["known"])
        kind = params["known_side"]
        hyp = {"hyp": k, "opp": k / sympy.sin(theta), "adj": k / sympy.cos(theta)}[kind]
        opp, adj = hyp * sympy.sin(theta), hyp * sympy.cos(theta)
        want = ({"opp", "adj", "hyp"} & set(_SIDES[params["func"]])) - {kind}
        (w,) = want
        return sympy.radsimp({"opp": opp, "adj": adj, "hyp": hyp}[w])

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        if params["level"] == "ratio":
            return E.num_text(answer), E.num_latex(answer)
        _, t, lt = show(surd_node(answer))
        return f"{t} {params['unit']}", rf"{lt}\ \mathrm{{{params['unit']}}}"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        n, u = params["names"], params["unit"]
        side = {"opp": f"{n[1]}{n[2]}", "adj": f"{n[0]}{n[2]}", "hyp": f"{n[0]}{n[1]}"}
        ctx: dict[str, Any] = {"A": n[0], "right": n[2], "tri": n}
        if params["level"] == "ratio":
            ctx["facts"] = [f"{side[s]} = {length_text(params[s], u)}" for s in params["given"]]
        else:
            want = ({"opp", "adj", "hyp"} & set(_SIDES[params["func"]])) - {params["known_side"]}
            ctx.update({"known_t": f"{side[params['known_side']]} = {length_text(params['known'], u)}",
                        "want": side[want.pop()]})
        return ctx

    def figure(self, params: dict[str, Any]) -> Figure:
        n, u = params["names"], params["unit"]
        if params["level"] == "ratio":
            opp, adj = float(params["opp"]), float(params["adj"])
            texts = {s: (length_text(params[s], u) if s in params["given"] else None) for s in ("opp", "adj", "hyp")}
            angle_text, angle_value = "θ", None
        else:
            theta = math.radians(params["angle"])
            opp, adj = math.sin(theta), math.cos(theta)
            if params.get("grid"):  # true lengths, so the known leg spans its squares
                hyp = params["known"] / {"hyp": 1.0, "opp": opp, "adj": adj}[params["known_side"]]
                opp, adj = opp * hyp, adj * hyp
            want = (({"opp", "adj", "hyp"} & set(_SIDES[params["func"]])) - {params["known_side"]}).pop()
            texts = {s: None for s in ("opp", "adj", "hyp")}
            texts[params["known_side"]] = length_text(params["known"], u)
            texts[want] = "x"
            angle_text, angle_value = f"{params['angle']}°", params["angle"]
        sx = -1.0 if params["flip"] else 1.0
        pts = {n[0]: (sx * -adj, 0.0), n[2]: (0.0, 0.0), n[1]: (0.0, opp)}
        ids = {"opp": (n[1], n[2]), "adj": (n[0], n[2]), "hyp": (n[0], n[1])}
        els: list[dict[str, Any]] = [{"id": f"triangle_{n}", "type": "polygon", "points": list(n)}, *vertex_labels(n),
                                     {"id": f"right_{n[2]}", "type": "right_angle", "at": n[2], "arms": [n[0], n[1]]}]
        angle = {"id": f"angle_{n[0]}", "type": "angle_mark", "at": n[0], "arms": [n[2], n[1]], "text": angle_text}
        if angle_value is None:
            angle["style"] = "italic"
        else:
            angle["value"] = angle_value
        els.append(angle)
        for s, (p, q) in ids.items():
            if texts[s] is None:
                continue
            el = {"id": f"side_{p}{q}", "type": "segment", "from": p, "to": q, "text": texts[s]}
            if texts[s] == "x":
                el["style"] = "italic"
            else:
                el["value"] = params["known"] if params["level"] == "side" else params[s]
                if params.get("grid"):  # a leg along the grid lines: counted in squares, not written
                    el = counted(el, params["grid"])
            els.append(el)
        if params.get("grid"):
            size = grid_size(params, (adj, opp))
            return Figure(self.figure_kind, figure_spec(pts, [*grid_elements(params, n[2]), *els], size))
        return Figure(self.figure_kind, figure_spec(pts, els, (2.9, 2.2)))
