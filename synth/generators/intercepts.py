"""The intercepts of a line through two grid points."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import mal_chain, rational, reduce_steps, sample_role
from synth.generators._grid import (
    POINT_LEVELS,
    TwoPointFamily,
    gradient_node,
    grid_figure,
    step_counts,
    two_points,
)
from synth.generators.base import Derivation, MalRule, StepDraft
from synth.records import Figure

# Share of intercept grids numbered on every other line only (as much squared paper is): a point off a
# numbered line is then read by its neighbour's number, and that number can be taken for the point's own.
_EVERY_OTHER_SHARE = 0.4


def _numbered_every(fig: Figure, lines: int) -> Figure:
    """``fig`` (both axes in the same steps) with its axes numbered on every ``lines``-th grid line, or as
    sparsely as they already were."""
    if lines == 1:
        return fig
    return Figure(fig.kind, {**fig.spec, "label_step": max(fig.spec["label_step"], fig.spec["grid_step"] * lines)})


# The intercept asked, and how far above the shared lowest coordinate (POINT_LEVELS) the points start (easy
# points keep off the axes).
_LEVELS = {"easy": ("y", 1), "medium": ("y", 0), "hard": ("x", 0)}


@register
class Intercepts(TwoPointFamily):
    """Where line AB (drawn between two grid points) crosses an axis: put x = 0 or y = 0 in point-gradient form."""

    id = "coordinate.intercepts"
    domain = "coordinate_geometry"
    subdomain = "lines"
    grade_band = "8-10"
    malrules = (
        MalRule("mixed_order_subtraction", "formula_misuse", "subtracts the y values one way and the x values the "
                "other way, flipping the sign of the gradient"),
        MalRule("wrong_axis", "misinterpret_question", "sets the wrong coordinate to zero and finds the other "
                "intercept"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        lo, hi, scale, integer = POINT_LEVELS[difficulty]
        ask, raise_low = _LEVELS[difficulty]
        while True:
            a, b = two_points(rng, lo + raise_low, hi, scale, integer_slope=integer)
            m = Fraction(b[1] - a[1], b[0] - a[0])
            x0 = a[0] - a[1] / m
            c = a[1] - m * a[0]
            if x0 != c and x0 != 0 and E.is_decimal(x0) and E.is_decimal(c):
                role = sample_role(rng)
                params = {"A": a, "B": b, "scale": scale, "ask": ask,
                          "image_role": role, **step_counts(rng, a, b, scale, role, offered=scale == 1)}
                if rng.random() < _EVERY_OTHER_SHARE:  # squared paper numbered on every other line
                    params["numbered"] = 2
                return params

    def _tree(self, params: dict[str, Any], *, ask: str | None = None, mixed: bool = False) -> E.Node:
        x1, y1 = params["A"]
        slope = gradient_node(params, mixed=mixed)
        if (ask or params["ask"]) == "y":  # c = y1 − m × x1
            return ["-", y1, ["*", slope, x1]]
        return ["+", x1, ["/", ["group", ["-", 0, y1]], ["group", slope]]]  # x = x1 + (0 − y1) ÷ m

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="substitute_zero", decimal=True, lhs=params["ask"])
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Eq(sympy.Symbol(params["ask"]), E.sym(self._tree(params)), evaluate=False)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        (x1, y1), (x2, y2) = params["A"], params["B"]
        # Solve a*x + b*y = k (the line through both points) with the other coordinate 0.
        a, b = y2 - y1, x1 - x2
        k = a * x1 + b * y1
        return rational(Fraction(k, b) if params["ask"] == "y" else Fraction(k, a))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        v = self.target(params)
        return f"{params['ask']} = {E.num_text(v, decimal=True)}", f"{params['ask']} = {E.num_latex(v, decimal=True)}"

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "mixed_order_subtraction" and params.get("rise") is None:  # counted squares: no subtraction
            return mal_chain(self, params, self._tree(params, mixed=True), "substitute_zero", decimal=True,
                             lhs=params["ask"])
        if rule == "wrong_axis":
            other = "x" if params["ask"] == "y" else "y"
            return mal_chain(self, params, self._tree(params, ask=other), "substitute_zero", decimal=True,
                             lhs=params["ask"])
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        fig = grid_figure({"A": params["A"], "B": params["B"]}, params["scale"], segment=("A", "B"),
                          step_triangle=params.get("rise") is not None)
        return _numbered_every(fig, params.get("numbered", 1))

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**super().question_context(params), "axis": "y" if params["ask"] == "y" else "x"}
