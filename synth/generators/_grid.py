"""What the coordinate families share: the grid figure, two sampled points and their misreads, gradients, equations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from synth.generators import expr as E
from synth.generators._data import safe_divisor
from synth.generators.base import Family, MalRule, Reading, effective_readings
from synth.records import Figure, Given


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


def point_readings(params: dict[str, Any], names: Sequence[str], grid: Figure) -> list[Reading]:
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


def step_counts(rng: np.random.Generator, a: Sequence[int], b: Sequence[int], scale: int, role: str,
                 *, offered: bool) -> dict[str, int]:
    """On a share of the problems whose figure is required, the step from A to B is drawn and its squares
    counted (``rise`` up or down, ``run`` across) instead of reading both points' coordinates.

    Both axes share one scale, so squares over squares is the gradient whatever a square stands for.
    """
    if not offered or role != "required" or rng.random() >= _STEPS_SHARE:
        return {}
    # ``falls``: the drawn line falls to the right, so the counted gradient is negative. Kept apart from the
    # points: a solver who misreads a point's coordinates still counts the drawn triangle and sees which way the
    # drawn line goes (the sign from a misread point made a working no reading gives).
    return {"rise": abs(b[1] - a[1]) // scale, "run": abs(b[0] - a[0]) // scale,
            "falls": (b[1] - a[1]) * (b[0] - a[0]) < 0}


def gradient_node(params: dict[str, Any], *, flip: bool = False, mixed: bool = False,
                   divide: bool = False) -> E.Node:
    """rise/run from the counted squares (negative when the line falls to the right), else from coordinates.

    ``divide`` writes the counts as ``rise ÷ run`` (a fraction of two counts may already be in lowest terms,
    leaving the working nothing to do before the next operation).
    """
    a, b = params["A"], params["B"]
    if params.get("rise") is None:
        return _slope_node(a, b, flip=flip, mixed=mixed)
    falls = params["falls"] if "falls" in params else (b[1] - a[1]) * (b[0] - a[0]) <= 0  # rows before round 21
    rise = -params["rise"] if falls else params["rise"]
    top, bottom = (params["run"], rise) if flip else (rise, params["run"])
    return ["/", top, bottom] if divide else ["frac", top, bottom]


def count_readings(params: dict[str, Any]) -> list[Reading]:
    """Squares of the step triangle counted one too many or too few (the grid lines counted, not the gaps)."""
    if params.get("rise") is None:
        return []
    return [Reading(key, f"step_{key}", "miscount", tuple(n for n in (params[key] - 1, params[key] + 1) if n > 0))
            for key in ("rise", "run")]


def two_points(rng: np.random.Generator, lo: int, hi: int, scale: int, *,
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


def coords_text(p: Sequence[int]) -> str:
    return "(" + ", ".join(E.num_text(v) for v in p) + ")"


def _slope_node(a: Sequence[int], b: Sequence[int], *, flip: bool = False, mixed: bool = False) -> E.Node:
    rise: E.Node = ["-", b[1], a[1]]
    run: E.Node = ["-", a[0], b[0]] if mixed else ["-", b[0], a[0]]
    return ["frac", run, rise] if flip else ["frac", rise, run]


def role_givens(params: dict[str, Any], names: Sequence[str]) -> tuple[Given, ...]:
    useful = params["image_role"] == "useful"
    return tuple(Given(f"{name}{axis}", str(params[name][i]), "text" if useful else f"figure:point_{name}")
                 for name in names for i, axis in enumerate("xy"))


# The two points' levels (gradient, line through the points, intercepts): coordinate range lo..hi, grid scale,
# whether the gradient must be a whole number.
POINT_LEVELS = {"easy": (0, 12, 1, True), "medium": (-8, 8, 1, False), "hard": (-8, 8, 2, False)}
_STEPS_SHARE = 0.5
# Shared by the gradient and the line-through-two-points families.
RUN_OVER_RISE = MalRule("run_over_rise", "formula_misuse", "divides the change in x by the change in y")


def coef_text(m: Fraction, *, latex: bool) -> str:
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


def terms_text(first: str, constants: Sequence[Fraction | E.Node], *, latex: bool) -> str:
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


class TwoPointFamily(Family):
    """A family about the line through two grid points A and B: the grid with segment AB (extended, with the
    step triangle where the rise and run are counted), their coordinates as givens, readings and question text."""

    figure_kind = "coordinate_grid"
    image_roles = ("required", "useful")

    def figure(self, params: dict[str, Any]) -> Figure:
        return grid_figure({"A": params["A"], "B": params["B"]}, params["scale"], segment=("A", "B"), extend=True,
                           step_triangle=params.get("rise") is not None)

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        return role_givens(params, "AB")

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        readings = point_readings(params, "AB", self.figure(params)) + count_readings(params)
        return effective_readings(self, params, readings)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "a_text": coords_text(params["A"]), "b_text": coords_text(params["B"])}
