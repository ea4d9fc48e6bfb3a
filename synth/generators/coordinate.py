"""Coordinate geometry on a grid: slope from two points, the line through them, intercepts, reading a graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import mal_chain, rational, reduce_steps, safe_divisor, sample_role
from synth.generators._figure import pick
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure, Given

X, Y = sympy.Symbol("x"), sympy.Symbol("y")


# ---------------------------------------------------------------- the grid figure

def grid_figure(points: Mapping[str, Sequence[int]], scale: int, *, show_coords: bool = False,
                segment: tuple[str, str] | None = None, extend: bool = False,
                coeffs: Sequence[Fraction] | None = None, window: Sequence[int] | None = None,
                step_triangle: bool = False, y_scale: int | None = None) -> Figure:
    """A square grid with axes, labelled points, and optionally segment/line AB or the graph of a polynomial.

    ``window`` ([x lo, x hi, y lo, y hi]) fixes the visible range; otherwise it spans the points and the origin.
    ``y_scale`` makes the y axis count in other steps than the x axis (each square still square on the page).
    ``step_triangle`` draws the dashed run and rise legs (``step_run``, ``step_rise``) from the segment's first
    point to its second, for counting squares.
    """
    y_scale = scale if y_scale is None else y_scale
    xs = [p[0] for p in points.values()] + [0]
    ys = [p[1] for p in points.values()] + [0]
    lo_x, hi_x = _span(min(xs), max(xs), scale)
    lo_y, hi_y = _span(min(ys), max(ys), y_scale)
    if window is not None:
        lo_x, hi_x, lo_y, hi_y = window
    # Labels sit on the side of a point away from the line through it.
    rising = segment is not None and (points[segment[1]][1] - points[segment[0]][1]) * (
        points[segment[1]][0] - points[segment[0]][0]) > 0
    elements: list[dict[str, Any]] = [
        {"id": "grid", "type": "gridline"},
        {"id": "axis_x", "type": "axis", "label": "x"}, {"id": "axis_y", "type": "axis", "label": "y"},
        {"id": "ticks_x", "type": "tick"}, {"id": "ticks_y", "type": "tick"},
    ]
    if coeffs is not None:
        elements.append({"id": "curve_f", "type": "curve", "coeffs": [str(c) for c in coeffs], "text": "y = f(x)"})
    if segment is not None:
        a, b = segment
        elements.append({"id": f"segment_{a}{b}", "type": "segment", "from": list(points[a]), "to": list(points[b]),
                         "extend": extend})
        if step_triangle:  # across from the first point to below/above the second, then up or down to it
            # (right after the grid lines, so the axes and their numbers are drawn over the dashes)
            corner = [points[b][0], points[a][1]]
            elements[1:1] = [{"id": "step_run", "type": "step", "from": list(points[a]), "to": corner},
                             {"id": "step_rise", "type": "step", "from": corner, "to": list(points[b])}]
    for name, (x, y) in points.items():
        elements.append({"id": f"point_{name}", "type": "point", "x": x, "y": y, "text": name,
                         "show_coords": show_coords, "label_side": "left" if rising else "right"})
    cells = max((hi_x - lo_x) / scale, (hi_y - lo_y) / y_scale)
    label_step = scale * (1 if cells <= 14 else 2)
    unit_in = min(0.26, 3.4 / cells)
    size = [round((hi_x - lo_x) / scale * unit_in + 0.5, 2), round((hi_y - lo_y) / y_scale * unit_in + 0.5, 2)]
    spec = {"size_in": size, "x_range": [lo_x, hi_x], "y_range": [lo_y, hi_y], "grid_step": scale,
            "label_step": label_step, "elements": elements}
    if y_scale != scale:
        spec.update({"y_grid_step": y_scale, "y_label_step": y_scale * (1 if cells <= 14 else 2)})
    return Figure("coordinate_grid", spec)


def _span(lo: int, hi: int, scale: int) -> tuple[int, int]:
    lo = (min(lo, 0) // scale - 1) * scale
    hi = (-(-max(hi, 0) // scale) + 1) * scale
    while (hi - lo) // scale < 6:
        lo, hi = lo - scale, hi + scale
    return lo, hi


def _point_readings(params: dict[str, Any], names: Sequence[str], grid: Figure) -> list[Reading]:
    """A neighbouring grid line in x or in y; on a scaled grid, the number of squares instead of the value;
    the axis number of the nearest numbered line when the point's own line carries none; x and y swapped."""
    spec = grid.spec
    scale = spec["grid_step"]
    # (lines numbered every, first line, last line) across and up; the window's edge lines carry no number
    axes = ((spec["label_step"], *spec["x_range"]), (spec.get("y_label_step", spec["label_step"]), *spec["y_range"]))

    def printed(w: int, axis: int) -> bool:
        step, lo, hi = axes[axis]
        return w % step == 0 and lo < w < hi

    out = []
    for name in names:
        x, y = params[name]
        moves = [[x + scale, y], [x - scale, y], [x, y + scale], [x, y - scale]]
        # off a numbered line, the number of the line beside it is taken for the point's own
        numbered = [m for m, v, w, axis in zip(moves, (x, x, y, y), (x + scale, x - scale, y + scale, y - scale),
                                               (0, 0, 1, 1))
                    if v % axes[axis][0] and printed(w, axis)]
        # a neighbouring line misread is the value kind unless it is that numbered line (one working, one label)
        out.append(Reading(name, f"point_{name}", "misread_value", tuple(m for m in moves if m not in numbered)))
        if scale > 1:
            out.append(Reading(name, f"point_{name}", "misread_scale", ([x // scale, y // scale],)))
        out.append(Reading(name, f"point_{name}", "misread_label", tuple(numbered)))
        if x != y:
            out.append(Reading(name, f"point_{name}", "misread_relation", ([y, x],)))
    return out


def _step_counts(rng: np.random.Generator, a: Sequence[int], b: Sequence[int], scale: int, role: str,
                 *, offered: bool) -> dict[str, int]:
    """On a share of the problems whose figure is required, the step from A to B is drawn and its squares
    counted (``rise`` up or down, ``run`` across) instead of reading both points' coordinates.

    Both axes share one scale, so squares over squares is the gradient whatever a square stands for.
    """
    if not offered or role != "required" or rng.random() >= _STEPS_SHARE:
        return {}
    return {"rise": abs(b[1] - a[1]) // scale, "run": abs(b[0] - a[0]) // scale}


def _gradient_node(params: dict[str, Any], *, flip: bool = False, mixed: bool = False,
                   divide: bool = False) -> E.Node:
    """rise/run from the counted squares (negative when the line falls to the right), else from coordinates.

    ``divide`` writes the counts as ``rise ÷ run`` (a fraction of two counts may already be in lowest terms,
    leaving the working nothing to do before the next operation).
    """
    a, b = params["A"], params["B"]
    if params.get("rise") is None:
        return _slope_node(a, b, flip=flip, mixed=mixed)
    rise = params["rise"] if (b[1] - a[1]) * (b[0] - a[0]) > 0 else -params["rise"]
    top, bottom = (params["run"], rise) if flip else (rise, params["run"])
    return ["/", top, bottom] if divide else ["frac", top, bottom]


def _count_readings(params: dict[str, Any]) -> list[Reading]:
    """Squares of the step triangle counted one too many or too few (the grid lines counted, not the gaps)."""
    if params.get("rise") is None:
        return []
    return [Reading(key, f"step_{key}", "miscount", tuple(n for n in (params[key] - 1, params[key] + 1) if n > 0))
            for key in ("rise", "run")]


def _two_points(rng: np.random.Generator, lo: int, hi: int, scale: int, *,
                integer_slope: bool) -> tuple[list[int], ...]:
    while True:
        x1, y1, x2, y2 = (int(rng.integers(lo, hi + 1)) * scale for _ in range(4))
        dx, dy = x2 - x1, y2 - y1
        if dy == 0 or abs(dx) == abs(dy) or not safe_divisor(dx) or not safe_divisor(dy) or 0 in (x1, y1):
            continue
        if integer_slope and dy % dx:
            continue
        if not integer_slope and Fraction(dy, dx).denominator == 1:
            continue
        return [x1, y1], [x2, y2]


def _coords(p: Sequence[int]) -> str:
    return "(" + ", ".join(E.num_text(v) for v in p) + ")"


def _slope_node(a: Sequence[int], b: Sequence[int], *, flip: bool = False, mixed: bool = False) -> E.Node:
    rise: E.Node = ["-", b[1], a[1]]
    run: E.Node = ["-", a[0], b[0]] if mixed else ["-", b[0], a[0]]
    return ["frac", run, rise] if flip else ["frac", rise, run]


def _role_givens(params: dict[str, Any], names: Sequence[str]) -> tuple[Given, ...]:
    useful = params["image_role"] == "useful"
    return tuple(Given(f"{name}{axis}", str(params[name][i]), "text" if useful else f"figure:point_{name}")
                 for name in names for i, axis in enumerate("xy"))


# ---------------------------------------------------------------- slope

_LEVELS = {"easy": (0, 12, 1, True), "medium": (-8, 8, 1, False), "hard": (-8, 8, 2, False)}
_STEPS_SHARE = 0.5
# Shared by the gradient and the line-through-two-points families.
# Share of graphs drawn twice as steep on a y axis counting in 2s (its squares are 2 units tall).
_Y_IN_TWOS_SHARE = 0.35
_RUN_OVER_RISE = MalRule("run_over_rise", "formula_misuse", "divides the change in x by the change in y")


@register
class SlopeTwoPoints(Family):
    """Gradient of the line through two grid points; hard also asks for the perpendicular gradient."""

    id = "coordinate.slope.two_points"
    domain = "coordinate_geometry"
    subdomain = "lines"
    grade_band = "8-10"
    figure_kind = "coordinate_grid"
    image_roles = ("required", "useful")
    malrules = (
        _RUN_OVER_RISE,
        MalRule("mixed_order_subtraction", "formula_misuse", "subtracts the y values one way and the x values the "
                "other way, flipping the sign"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        lo, hi, scale, integer = _LEVELS[difficulty]
        a, b = _two_points(rng, lo, hi, scale, integer_slope=integer)
        role = sample_role(rng)
        # Counting is offered where the working has steps to count into (−1 ÷ rise/run); a bare rise/run is
        # already in lowest terms or one division away.
        return {"A": a, "B": b, "scale": scale, "ask": "perpendicular" if difficulty == "hard" else "slope",
                "image_role": role, **_step_counts(rng, a, b, scale, role, offered=difficulty == "hard")}

    def _tree(self, params: dict[str, Any], **how: bool) -> E.Node:
        slope = _gradient_node(params, divide=True, **how)
        return ["/", -1, ["group", slope]] if params["ask"] == "perpendicular" else slope

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="gradient_formula")
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        (x1, y1), (x2, y2) = params["A"], params["B"]
        m = Fraction(y1 - y2, x1 - x2)  # the other order gives the same gradient
        return rational(-1 / m if params["ask"] == "perpendicular" else m)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "run_over_rise":
            return mal_chain(self, params, self._tree(params, flip=True), "gradient_formula")
        if rule == "mixed_order_subtraction" and params.get("rise") is None:  # counted squares: no subtraction
            return mal_chain(self, params, self._tree(params, mixed=True), "gradient_formula")
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        return grid_figure({"A": params["A"], "B": params["B"]}, params["scale"], segment=("A", "B"), extend=True,
                           step_triangle=params.get("rise") is not None)

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        return _role_givens(params, "AB")

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        readings = _point_readings(params, "AB", self.figure(params)) + _count_readings(params)
        return effective_readings(self, params, readings)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "a_text": _coords(params["A"]), "b_text": _coords(params["B"])}


# ---------------------------------------------------------------- the line through two points

def _coef(m: Fraction, *, latex: bool) -> str:
    """The coefficient of x as pupils write it: x, −x, 3x, (2/3)x."""
    if m == 1:
        return ""
    if m == -1:
        return "-" if latex else "−"
    if m.denominator == 1:
        return E.num_latex(m) if latex else E.num_text(m)
    if latex:
        return ("-" if m < 0 else "") + rf"\frac{{{abs(m.numerator)}}}{{{m.denominator}}}"
    return ("−" if m < 0 else "") + f"({abs(m.numerator)}/{m.denominator})"


def _terms(first: str, constants: Sequence[Fraction | E.Node], *, latex: bool) -> str:
    """``first`` followed by signed constants; a constant may be a display node (``["frac", 156, 13]``)."""
    out = first
    for const in constants:
        c = E.value(const) if isinstance(const, list) else Fraction(const)
        if c == 0:
            continue
        node = ([const[0], abs(const[1]), const[2]] if isinstance(const, list) else E.leaf(abs(c)))
        body = E.latex(node) if latex else E.text(node)
        sign = ("+" if c > 0 else "-") if latex else ("+" if c > 0 else "−")
        out = f"{out} {sign} {body}" if out else (body if c > 0 else f"{sign}{body}")
    return out or "0"


def _linear(m: Fraction, constants: Sequence[Fraction | E.Node], *, latex: bool) -> str:
    return _terms(f"{_coef(m, latex=latex)}x" if m != 0 else "", constants, latex=latex)


def _shift(var: str, a: int, *, latex: bool) -> str:
    """``x − 1`` or ``x + 3``: what ``var − a`` looks like once the sign is tidied."""
    return _terms(var, [Fraction(-a)], latex=latex)


@register
class LineThroughPoints(Family):
    """The equation y = mx + c of the line through two grid points (point-gradient form, then tidy)."""

    id = "coordinate.line.through_points"
    domain = "coordinate_geometry"
    subdomain = "lines"
    grade_band = "8-10"
    figure_kind = "coordinate_grid"
    image_roles = ("required", "useful")
    malrules = (
        _RUN_OVER_RISE,
        MalRule("intercept_is_y1", "invalid_assumption", "takes the y-coordinate of the first point as the "
                "y-intercept"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        lo, hi, scale, integer = _LEVELS[difficulty]
        a, b = _two_points(rng, lo, hi, scale, integer_slope=integer)
        role = sample_role(rng)
        return {"A": a, "B": b, "scale": scale, "image_role": role,
                **_step_counts(rng, a, b, scale, role, offered=scale == 1)}

    def _slope(self, params: dict[str, Any], flip: bool = False) -> E.Node:
        return _gradient_node(params, flip=flip)

    def _point_gradient(self, d: Derivation, params: dict[str, Any], slope: E.Node) -> Fraction:
        """Steps ``y − y1 = m × (x − x1)`` until m is one number; returns m (as computed, slips included)."""
        x1, y1 = params["A"]
        lhs_t, lhs_l = _shift("y", y1, latex=False), _shift("y", y1, latex=True)
        bracket_t, bracket_l = _shift("x", x1, latex=False), _shift("x", x1, latex=True)
        result: sympy.Basic | None = None
        while True:
            m_value = E.value(slope)
            value = sympy.Eq(Y - y1, rational(m_value) * (X - x1), evaluate=False)
            if _is_number(slope):
                text = f"{lhs_t} = {_coef(m_value, latex=False) or '1'}({bracket_t})"
                latex = rf"{lhs_l} = {_coef(m_value, latex=True) or '1'}\left({bracket_l}\right)"
            else:
                text = f"{lhs_t} = {E.text(slope)} × ({bracket_t})"
                latex = rf"{lhs_l} = {E.latex(slope)} \times \left({bracket_l}\right)"
            rule = "point_gradient_form" if result is None else "simplify_gradient"
            d.add(StepDraft(rule=rule, value=value, text=text, latex=latex, result=result))
            if _is_number(slope):
                return m_value
            slope, result = _reduce_once(d, slope)

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        m = self._point_gradient(d, params, self._slope(params))
        self._finish(d, params, m)
        return d.steps

    def _finish(self, d: Derivation, params: dict[str, Any], m: Fraction) -> None:
        x1, y1 = params["A"]
        mx1 = E.to_fraction(d.compute(rational(m * x1)))
        self._eq(d, "expand_bracket", Y - y1, m, [-mx1], lhs_text=_shift("y", y1, latex=False),
                 lhs_latex=_shift("y", y1, latex=True), result=mx1)
        self._eq(d, "rearrange", Y, m, [-mx1, Fraction(y1)])
        if mx1.denominator != 1:  # write y1 over the same denominator before adding
            q = mx1.denominator
            self._eq(d, "common_denominator", Y, m, [-mx1, ["frac", y1 * q, q]])
        c = E.to_fraction(d.compute(rational(y1 - mx1)))
        self._eq(d, "collect_constants", Y, m, [c], result=c)

    @staticmethod
    def _eq(d: Derivation, rule: str, lhs: sympy.Expr, m: Fraction, constants: Sequence[Fraction | E.Node], *,
            lhs_text: str = "y", lhs_latex: str = "y", result: Fraction | None = None) -> None:
        total = sum((E.value(c) if isinstance(c, list) else Fraction(c) for c in constants), Fraction(0))
        value = sympy.Eq(lhs, rational(m) * X + rational(total),
                         evaluate=False)
        d.add(StepDraft(rule=rule, value=value, text=f"{lhs_text} = {_linear(m, constants, latex=False)}",
                        latex=f"{lhs_latex} = {_linear(m, constants, latex=True)}",
                        result=None if result is None else rational(result)))

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        m, c = self._m_c(params)
        return sympy.Eq(Y, rational(m) * X + rational(c), evaluate=False)

    @staticmethod
    def _m_c(params: dict[str, Any]) -> tuple[Fraction, Fraction]:
        (x1, y1), (x2, y2) = params["A"], params["B"]
        return Fraction(y2 - y1, x2 - x1), Fraction(x2 * y1 - x1 * y2, x2 - x1)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Cramer's rule on the two conditions m*x + c = y (not the point-gradient chain).
        (x1, y1), (x2, y2) = params["A"], params["B"]
        det = x1 - x2
        m, c = Fraction(y1 - y2, det), Fraction(x1 * y2 - x2 * y1, det)
        return rational(m) * X + rational(c)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        m, c = self._m_c(params)
        return f"y = {_linear(m, [c], latex=False)}", f"y = {_linear(m, [c], latex=True)}"

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        d = Derivation()
        if rule == "run_over_rise":
            m = self._point_gradient(d, params, self._slope(params, flip=True))
            self._finish(d, params, m)
            return d.steps
        if rule == "intercept_is_y1":
            m = self._point_gradient(d, params, self._slope(params))
            self._eq(d, "substitute_intercept", Y, m, [Fraction(params["A"][1])])
            return d.steps
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        return grid_figure({"A": params["A"], "B": params["B"]}, params["scale"], segment=("A", "B"), extend=True,
                           step_triangle=params.get("rise") is not None)

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        return _role_givens(params, "AB")

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        readings = _point_readings(params, "AB", self.figure(params)) + _count_readings(params)
        return effective_readings(self, params, readings)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "a_text": _coords(params["A"]), "b_text": _coords(params["B"])}


def _is_number(node: E.Node) -> bool:
    return not isinstance(node, list) or (node[0] == "frac" and all(isinstance(a, int) for a in node[1:])
                                          and node[2] > 1 and Fraction(node[1], node[2]).denominator == node[2])


def _reduce_once(d: Derivation, node: E.Node) -> tuple[E.Node, sympy.Basic]:
    """One operation of the gradient fraction (numerator, then denominator, then simplify) and its result."""
    op, top, bottom = node
    if not _is_number(top):  # a slipped result may itself be a fraction: that counts as done
        result = d.compute(E.sym(top))
        return [op, E.leaf(result), bottom], result
    if not _is_number(bottom):
        result = d.compute(E.sym(bottom))
        return [op, top, E.leaf(result)], result
    result = d.compute(E.sym(node))
    return E.leaf(result), result


# ---------------------------------------------------------------- intercepts

# Share of intercept grids numbered on every other line only (as much squared paper is): a point off a
# numbered line is then read by its neighbour's number, and that number can be taken for the point's own.
_EVERY_OTHER_SHARE = 0.4


def _numbered_every(fig: Figure, lines: int) -> Figure:
    """``fig`` (both axes in the same steps) with its axes numbered on every ``lines``-th grid line, or as
    sparsely as they already were."""
    if lines == 1:
        return fig
    return Figure(fig.kind, {**fig.spec, "label_step": max(fig.spec["label_step"], fig.spec["grid_step"] * lines)})


@register
class Intercepts(Family):
    """Where line AB (drawn between two grid points) crosses an axis: put x = 0 or y = 0 in point-gradient form."""

    id = "coordinate.intercepts"
    domain = "coordinate_geometry"
    subdomain = "lines"
    grade_band = "8-10"
    figure_kind = "coordinate_grid"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("mixed_order_subtraction", "formula_misuse", "subtracts the y values one way and the x values the "
                "other way, flipping the sign of the gradient"),
        MalRule("wrong_axis", "misinterpret_question", "sets the wrong coordinate to zero and finds the other "
                "intercept"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        lo, hi, scale, integer = _LEVELS[difficulty]
        while True:
            a, b = _two_points(rng, lo + (1 if difficulty == "easy" else 0), hi, scale, integer_slope=integer)
            m = Fraction(b[1] - a[1], b[0] - a[0])
            x0 = a[0] - a[1] / m
            c = a[1] - m * a[0]
            if x0 != c and x0 != 0 and E.is_decimal(x0) and E.is_decimal(c):
                role = sample_role(rng)
                params = {"A": a, "B": b, "scale": scale, "ask": "x" if difficulty == "hard" else "y",
                          "image_role": role, **_step_counts(rng, a, b, scale, role, offered=scale == 1)}
                if rng.random() < _EVERY_OTHER_SHARE:  # squared paper numbered on every other line
                    params["numbered"] = 2
                return params

    def _tree(self, params: dict[str, Any], *, ask: str | None = None, mixed: bool = False) -> E.Node:
        x1, y1 = params["A"]
        slope = _gradient_node(params, mixed=mixed)
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

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        return _role_givens(params, "AB")

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        readings = _point_readings(params, "AB", self.figure(params)) + _count_readings(params)
        return effective_readings(self, params, readings)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "a_text": _coords(params["A"]), "b_text": _coords(params["B"]),
                "axis": "y" if params["ask"] == "y" else "x"}


# ---------------------------------------------------------------- reading a graph

# Share of graphs (y axis in 1s) whose y axis has a line every 1 but a number every 5: a value between two
# numbers is counted in lines from the nearest one.
_IN_FIVES_SHARE = 0.35


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
        n = 3 if difficulty == "hard" else 2
        while True:
            if difficulty == "hard":
                a, h, k = int(pick(rng, (1, -1))), int(rng.integers(-3, 4)), int(rng.integers(-4, 5))
                coeffs = [a, -2 * a * h, a * h * h + k]
            else:
                m = int(pick(rng, (1, 2, 3, -1, -2))) if difficulty == "easy" else int(pick(rng, (-3, -2, -1, 2, 3)))
                coeffs = [0, m, int(rng.integers(-4, 5))]
            xs = sorted(int(v) for v in rng.choice(np.arange(-5, 6), size=n, replace=False))
            ys = [coeffs[0] * x * x + coeffs[1] * x + coeffs[2] for x in xs]
            ks = [int(pick(rng, (2, 3)))] + [int(pick(rng, (1, -1, 2, -2) if difficulty != "easy" else (1,)))
                                             for _ in range(n - 1)]
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
    out = f"{_coef(a, latex=False)}x^2" if a else ""
    if b:
        body = f"{_coef(abs(b), latex=False)}x"
        out = f"{out} {'+' if b > 0 else '−'} {body}" if out else f"{_coef(b, latex=False)}x"
    return _terms(out, [c], latex=False)
