"""A value read off the graph of a polynomial drawn on a grid."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import mal_chain, reduce_steps, sample_role
from synth.generators._figure import pick
from synth.generators._grid import (
    coef_text,
    grid_figure,
    terms_text,
)
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure, Given

# Share of graphs drawn twice as steep on a y axis counting in 2s (its squares are 2 units tall).
_Y_IN_TWOS_SHARE = 0.35
# Share of graphs (y axis in 1s) whose y axis has a line every 1 but a number every 5: a value between two
# numbers is counted in lines from the nearest one.
_IN_FIVES_SHARE = 0.35


@dataclass(frozen=True)
class _Level:
    points: int  # values read off the graph
    gradients: tuple[int, ...] | None  # a line's gradient is drawn from these; None: a parabola
    multipliers: tuple[int, ...]  # what each value after the first is multiplied by when combined


_LEVELS = {"easy": _Level(2, (1, 2, 3, -1, -2), (1,)), "medium": _Level(2, (-3, -2, -1, 2, 3), (1, -1, 2, -2)),
           "hard": _Level(3, None, (1, -1, 2, -2))}


@register
class GraphReadValue(Family):
    """Read f at two or three x values off a plotted line (easy, medium) or parabola (hard) and combine them."""

    id = "coordinate.graph.read_value"
    domain = "coordinate_geometry"
    subdomain = "functions"
    grade_band = "7-10"
    figure_kind = "coordinate_grid"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("x_for_y", "misinterpret_question", "uses the x value itself instead of reading f(x) off the graph"),
        MalRule("scales_input", "formula_misuse", "works out f(k × a) instead of k × f(a)"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        n = level.points
        while True:
            if level.gradients is None:
                a, h, k = int(pick(rng, (1, -1))), int(rng.integers(-3, 4)), int(rng.integers(-4, 5))
                coeffs = [a, -2 * a * h, a * h * h + k]
            else:
                m = int(pick(rng, level.gradients))
                coeffs = [0, m, int(rng.integers(-4, 5))]
            xs = sorted(int(v) for v in rng.choice(np.arange(-5, 6), size=n, replace=False))
            ys = [coeffs[0] * x * x + coeffs[1] * x + coeffs[2] for x in xs]
            ks = [int(pick(rng, (2, 3)))] + [int(pick(rng, level.multipliers)) for _ in range(n - 1)]
            if max(map(abs, ys)) > 9 or len(set(ys)) < n or set(ys) & (set(xs) | set(map(abs, ks))):
                continue
            if 0 in xs or abs(coeffs[2]) > 9:
                continue
            params = {"coeffs": coeffs, "xs": xs, "ys": ys, "ks": ks, "image_role": sample_role(rng)}
            if rng.random() < _Y_IN_TWOS_SHARE:  # the same graph twice as steep, on a y axis counting in 2s
                doubled = [2 * y for y in ys]
                if not set(doubled) & (set(xs) | set(map(abs, ks))):
                    params.update({"coeffs": [2 * c for c in coeffs], "ys": doubled, "y_step": 2})
            if "y_step" not in params and rng.random() < _IN_FIVES_SHARE:  # lines every 1, numbers every 5
                params["y_numbered"] = 5
            return params

    @staticmethod
    def _tree(ks: Sequence[int], ys: Sequence[int]) -> E.Node:
        node: E.Node = ["*", ks[0], ys[0]]
        for k, y in zip(ks[1:], ys[1:]):
            term: E.Node = y if abs(k) == 1 else ["*", abs(k), y]
            node = ["+" if k > 0 else "-", node, term]
        return node

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params["ks"], params["ys"]), first_rule="read_values")
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params["ks"], params["ys"]))

    def _f(self, params: dict[str, Any], x: int) -> int:
        a, b, c = params["coeffs"]
        return a * x * x + b * x + c

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(sum(k * self._f(params, x) for k, x in zip(params["ks"], params["xs"])))

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        ks, xs = params["ks"], params["xs"]
        if rule == "x_for_y":
            return mal_chain(self, params, self._tree(ks, [xs[0], *params["ys"][1:]]), "read_values")
        if rule == "scales_input":
            wrong = self._f(params, ks[0] * xs[0])
            if wrong == ks[0] * params["ys"][0]:
                return None
            return mal_chain(self, params, self._tree([1, *ks[1:]], [wrong, *params["ys"][1:]]), "read_values")
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        points = {f"P{i}": [x, y] for i, (x, y) in enumerate(zip(params["xs"], params["ys"]))}
        ys, step = params["ys"], params.get("y_step", 1)
        window = [-6, 6, min(-2, min(ys) // step - 2) * step, max(3, max(ys) // step + 2) * step]
        every = params.get("y_numbered", 1)
        if every > 1:  # a numbered line above and below 0, and no multiple of 5 left unnumbered at an edge
            lo, hi = min(window[2], -every - 1), max(window[3], every + 1)
            window[2:] = [lo - (lo % every == 0), hi + (hi % every == 0)]
        fig = grid_figure(points, 1, coeffs=[Fraction(c) for c in params["coeffs"]], window=window, y_scale=step)
        # The grid spans the marked values; the plotted curve, not the points, carries them.
        elements = [e for e in fig.spec["elements"] if e["type"] != "point"]
        spec = {**fig.spec, "elements": elements}
        if every > 1:
            spec.update({"y_grid_step": step, "y_label_step": step * every})
        return Figure(fig.kind, spec)

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        src = "text" if params["image_role"] == "useful" else "figure:curve_f"
        return tuple(Given(f"f({x})", str(y), src) for x, y in zip(params["xs"], params["ys"]))

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        ys, xs, step = params["ys"], params["xs"], params.get("y_step", 1)
        spec = self.figure(params).spec
        numbered = spec.get("y_label_step", spec["label_step"])
        out = []
        if step > 1:  # every square up the y axis taken as 1, so each value read is the number of squares
            out.append(Reading("ys", "ticks_y", "misread_scale", ([y // step for y in ys],)))
        for i, x in enumerate(xs):
            out.append(Reading("ys", "curve_f", "misread_label", (  # the number of the next grid line along taken
                [*ys[:i], self._f(params, x + 1), *ys[i + 1:]],)))
            # axes swapped: finds x on the y axis and reads across to the curve and down
            swapped = [t for t in range(-6, 7) if self._f(params, t) == x and t != ys[i]]
            out.append(Reading("ys", "curve_f", "misread_relation", tuple([*ys[:i], t, *ys[i + 1:]] for t in swapped)))
            # The grid line above or below: its number read, or (off a numbered line, where the value is
            # counted from the nearest number) one line too many or too few counted on to an unnumbered line.
            near = {w: [*ys[:i], w, *ys[i + 1:]] for w in (ys[i] + step, ys[i] - step)}
            counted = [w for w in near if ys[i] % numbered and w % numbered]
            out.append(Reading("ys", "ticks_y", "miscount", tuple(near[w] for w in counted)))
            out.append(Reading("ys", "curve_f", "misread_value", tuple(v for w, v in near.items() if w not in counted)))
        return effective_readings(self, params, out)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        parts = []
        for j, (k, x) in enumerate(zip(params["ks"], params["xs"])):
            coef = "" if abs(k) == 1 else str(abs(k))
            sign = ("" if k > 0 else "−") if j == 0 else (" + " if k > 0 else " − ")
            parts.append(f"{sign}{coef}f({x})".replace("(-", "(−"))
        formula = _poly_text([Fraction(v) for v in params["coeffs"]])
        return {**params, "combo": "".join(parts), "formula": formula}


def _poly_text(coeffs: Sequence[Fraction]) -> str:
    """``x^2 − 2x + 3`` from [a, b, c] (zero terms left out)."""
    a, b, c = coeffs
    out = f"{coef_text(a, latex=False)}x^2" if a else ""
    if b:
        body = f"{coef_text(abs(b), latex=False)}x"
        out = f"{out} {'+' if b > 0 else '−'} {body}" if out else f"{coef_text(b, latex=False)}x"
    return terms_text(out, [c], latex=False)
