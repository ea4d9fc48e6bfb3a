"""Coordinate grids: squared paper, x and y axes with arrows and numbered ticks, points, lines and graphs."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from render.figures import FigureImage, drawer
from render.figures._draw import dash_runs
from render.figures.charts import GRID, INK, Canvas, nice_number
from render.figures.primitives.axis import AxisElement
from render.figures.primitives.curve import CurveElement
from render.figures.primitives.gridline import GridlineElement
from render.figures.primitives.point import PointElement
from render.figures.primitives.segment import SegmentElement
from render.figures.primitives.step import StepElement
from render.figures.primitives.tick import TickElement
from synth.records import Figure

CURVE = (30, 70, 160)


class _Grid:
    """Maps grid units to canvas pixels; every grid square is square on the page.

    The y axis may count in other steps than the x axis (``y_grid_step``, ``y_label_step``: a y axis
    in 2s beside an x axis in 1s); then a y unit is drawn shorter than an x unit.
    """

    def __init__(self, cv: Canvas, spec: dict[str, Any]) -> None:
        self.cv = cv
        (self.x0, self.x1), (self.y0, self.y1) = spec["x_range"], spec["y_range"]
        self.step, self.label_step = spec["grid_step"], spec["label_step"]
        self.ystep = spec.get("y_grid_step", self.step)
        self.ylabel_step = spec.get("y_label_step", self.label_step)
        margin = cv.pt(14)
        ratio = self.step / self.ystep  # y units per x unit on the page
        unit = min((cv.W - 2 * margin) / (self.x1 - self.x0), (cv.H - 2 * margin) / ((self.y1 - self.y0) * ratio))
        self.unit, self.yunit = unit, unit * ratio
        self.left = (cv.W - unit * (self.x1 - self.x0)) / 2
        self.top = (cv.H - self.yunit * (self.y1 - self.y0)) / 2

    def px(self, x: float, y: float) -> tuple[float, float]:
        return self.left + (x - self.x0) * self.unit, self.top + (self.y1 - y) * self.yunit

    def values(self, lo: int, hi: int) -> range:
        return range(lo, hi + 1, self.step)

    def yvalues(self, lo: int, hi: int) -> range:
        return range(lo, hi + 1, self.ystep)


@drawer("coordinate_grid")
def draw_coordinate_grid(figure: Figure, dpi: int) -> FigureImage:
    spec = figure.spec
    cv = Canvas(spec, dpi)
    g = _Grid(cv, spec)
    for el in spec["elements"]:
        with cv.element(el):
            if el["type"] not in _DRAW:
                raise ValueError(f"coordinate_grid cannot draw element type {el['type']!r} ({el['id']})")
            _DRAW[el["type"]](cv, g, el)
    return cv.finish()


def _gridlines(cv: Canvas, g: _Grid, el: GridlineElement) -> None:
    for x in g.values(g.x0, g.x1):
        cv.line([g.px(x, g.y0), g.px(x, g.y1)], 0.5, GRID)
    for y in g.yvalues(g.y0, g.y1):
        cv.line([g.px(g.x0, y), g.px(g.x1, y)], 0.5, GRID)


def _axis(cv: Canvas, g: _Grid, el: AxisElement) -> None:
    over = cv.pt(9)
    if el["id"] == "axis_x":
        (xa, ya), (xb, _) = g.px(g.x0, 0), g.px(g.x1, 0)
        cv.line([(xa - over / 2, ya), (xb + over - cv.pt(3), ya)], 1.1)
        cv.arrow((xb + over, ya), (1, 0), 5)
        cv.text((xb + over, ya - cv.pt(4)), el.get("label", "x"), 9, "rb")
    else:
        (xa, ya), (_, yb) = g.px(0, g.y0), g.px(0, g.y1)
        cv.line([(xa, ya + over / 2), (xa, yb - over + cv.pt(3))], 1.1)
        cv.arrow((xa, yb - over), (0, -1), 5)
        cv.text((xa + cv.pt(5), yb - over), el.get("label", "y"), 9, "lt")


def _ticks(cv: Canvas, g: _Grid, el: TickElement) -> None:
    size = 6.5 if g.unit < cv.pt(14) else 7.5
    t = cv.pt(2.5)
    if el["id"] == "ticks_x":
        for x in g.values(g.x0, g.x1):
            if x == 0 or x in (g.x0, g.x1):
                continue
            px, py = g.px(x, 0)
            cv.line([(px, py - t), (px, py + t)], 0.8)
            if x % g.label_step == 0:
                cv.text((px, py + t + cv.pt(1)), nice_number(x).replace("-", "−"), size, "mt")
    else:
        for y in g.yvalues(g.y0, g.y1):
            if y in (g.y0, g.y1):
                continue
            px, py = g.px(0, y)
            if y != 0:
                cv.line([(px - t, py), (px + t, py)], 0.8)
            if y % g.ylabel_step == 0:  # 0 once, at the origin's corner
                cv.text((px - t - cv.pt(1), py + (cv.pt(1) if y else cv.pt(2))),
                        nice_number(y).replace("-", "−"), size, "rt" if y == 0 else "rm")


def _point(cv: Canvas, g: _Grid, el: PointElement) -> None:
    x, y = g.px(el["x"], el["y"])
    cv.ellipse(x, y, cv.pt(2.2), fill=INK, outline=None)
    label = el.get("text", "")
    if el.get("show_coords"):
        label += f"({el['x']}, {el['y']})".replace("-", "−")
    if label:
        if el.get("label_side") == "left":
            cv.text((x - cv.pt(4), y - cv.pt(3)), label, 8.5, "rb", bold=True)
        else:
            cv.text((x + cv.pt(4), y - cv.pt(3)), label, 8.5, "lb", bold=True)


def _segment(cv: Canvas, g: _Grid, el: SegmentElement) -> None:
    (xa, ya), (xb, yb) = el["from"], el["to"]
    if el.get("extend"):
        pts = _clip_line(g, Fraction(xa), Fraction(ya), Fraction(xb), Fraction(yb))
        cv.line([g.px(*p) for p in pts], 1.2, CURVE)
    else:
        cv.line([g.px(xa, ya), g.px(xb, yb)], 1.2, CURVE)


def _step(cv: Canvas, g: _Grid, el: StepElement) -> None:
    """One leg of a gradient's step triangle (the run or the rise), dashed along a grid line."""
    for run in dash_runs([g.px(*el["from"]), g.px(*el["to"])], cv.pt(3), cv.pt(2)):
        cv.line(run, 1.1, INK)


def _clip_line(g: _Grid, xa: Fraction, ya: Fraction, xb: Fraction, yb: Fraction) -> list[tuple[float, float]]:
    """The part of line AB inside the grid window."""
    pts = []
    dx, dy = xb - xa, yb - ya
    for x in (g.x0, g.x1):
        if dx:
            y = ya + dy * (x - xa) / dx
            if g.y0 <= y <= g.y1:
                pts.append((float(x), float(y)))
    for y in (g.y0, g.y1):
        if dy:
            x = xa + dx * (y - ya) / dy
            if g.x0 <= x <= g.x1:
                pts.append((float(x), float(y)))
    pts = sorted(set(pts))
    return [pts[0], pts[-1]] if len(pts) >= 2 else [(float(xa), float(ya)), (float(xb), float(yb))]


def _curve(cv: Canvas, g: _Grid, el: CurveElement) -> None:
    a, b, c = (float(Fraction(v)) for v in el["coeffs"])
    n = 160
    runs: list[list[tuple[float, float]]] = [[]]
    for i in range(n + 1):
        x = g.x0 + (g.x1 - g.x0) * i / n
        y = a * x * x + b * x + c
        if g.y0 <= y <= g.y1:
            runs[-1].append(g.px(x, y))
        elif runs[-1]:
            runs.append([])
    for run in runs:
        if len(run) >= 2:
            cv.line(run, 1.4, CURVE)
    label = el.get("text")
    inside = [r for r in runs if len(r) >= 2]
    if label and inside:
        # Beside the curve's end farthest from the y-axis, on the side that stays inside the figure.
        axis_x = g.px(0, 0)[0]
        ends = [r[0] for r in inside] + [r[-1] for r in inside]
        end = max(ends, key=lambda p: abs(p[0] - axis_x))
        right_side = end[0] > axis_x
        x = end[0] - cv.pt(4) if right_side else end[0] + cv.pt(4)
        y = min(max(end[1], cv.pt(12)), cv.H - cv.pt(4))
        cv.text((x, y), label, 8, "rm" if right_side else "lm", fill=CURVE)


_DRAW = {"gridline": _gridlines, "axis": _axis, "tick": _ticks, "point": _point, "segment": _segment,
         "curve": _curve, "step": _step}
