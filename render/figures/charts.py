"""Bar, line and pie charts and tables drawn with Pillow, plus the small ink canvas the data figures share.

Figures are drawn at twice the target resolution and halved (anti-aliasing without matplotlib's
150 ms per figure). Every element is drawn between ``begin`` and ``end`` so its box is the union
of what it inked, padded by the stroke and one output pixel.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from render.figures import FigureImage, drawer
from render.figures.primitives import Element
from render.figures.primitives.equal_mark import EqualMarkElement
from render.figures.primitives.wedge import WedgeElement
from synth.records import Box, Figure

SS = 2  # supersampling factor
INK = (25, 25, 30)
GRID = (200, 208, 220)
SOFT = (120, 120, 128)
FILLS = ((120, 160, 210), (235, 160, 110), (140, 195, 140), (225, 200, 100), (190, 150, 200), (150, 200, 205),
         (215, 140, 150))


@cache
def font(px: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu Sans from matplotlib's data folder (found without importing matplotlib, which costs ~0.5 s)."""
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(_font_dir() / name), max(6, px))


@cache
def _font_dir() -> Path:
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("figures need the DejaVu fonts that ship with matplotlib; pip install matplotlib")
    return Path(next(iter(spec.submodule_search_locations))) / "mpl-data" / "fonts" / "ttf"


class Canvas:
    """A supersampled RGB canvas that records one box per figure element."""

    def __init__(self, spec: dict[str, Any], dpi: int) -> None:
        w_in, h_in = spec["size_in"]
        self.dpi = dpi
        self.w, self.h = max(8, round(w_in * dpi)), max(8, round(h_in * dpi))
        self.img = Image.new("RGB", (self.w * SS, self.h * SS), (255, 255, 255))
        self.draw = ImageDraw.Draw(self.img)
        self.boxes: list[Box] = []
        self._ink: list[float] | None = None

    @property
    def W(self) -> int:  # noqa: N802 - canvas width in supersampled pixels
        return self.w * SS

    @property
    def H(self) -> int:  # noqa: N802
        return self.h * SS

    def pt(self, points: float) -> float:
        """A length in typographic points as supersampled pixels."""
        return points * self.dpi / 72 * SS

    def _grow(self, x0: float, y0: float, x1: float, y1: float) -> None:
        if self._ink is None:
            return
        ink = self._ink
        ink[0], ink[1] = min(ink[0], x0), min(ink[1], y0)
        ink[2], ink[3] = max(ink[2], x1), max(ink[3], y1)

    @contextmanager
    def element(self, el: Element) -> Iterator[None]:
        self._ink = [math.inf, math.inf, -math.inf, -math.inf]
        yield
        x0, y0, x1, y1 = self._ink
        self._ink = None
        if x0 > x1:
            return
        box = (max(0, math.floor(x0 / SS) - 1), max(0, math.floor(y0 / SS) - 1),
               min(self.w, math.ceil(x1 / SS) + 1), min(self.h, math.ceil(y1 / SS) + 1))
        self.boxes.append(Box(kind=f"figure_{el['type']}", ref=el["id"], x0=box[0], y0=box[1], x1=box[2], y1=box[3]))

    # -- primitives (every one grows the current element's box by what it inks)

    def line(self, pts: Sequence[tuple[float, float]], width_pt: float = 1.0, fill: tuple[int, ...] = INK) -> None:
        width = max(1, round(self.pt(width_pt)))
        self.draw.line([tuple(p) for p in pts], fill=fill, width=width, joint="curve")
        pad = width / 2 + 1
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        self._grow(min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)

    def polygon(self, pts: Sequence[tuple[float, float]], fill: tuple[int, ...] | None = INK,
                outline: tuple[int, ...] | None = None, width_pt: float = 0.0) -> None:
        width = max(1, round(self.pt(width_pt))) if outline else 0
        self.draw.polygon([tuple(p) for p in pts], fill=fill, outline=outline, width=width)
        pad = width + 1
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        self._grow(min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: tuple[int, ...] | None = None,
             outline: tuple[int, ...] | None = INK, width_pt: float = 0.8, radius: float = 0) -> None:
        width = max(1, round(self.pt(width_pt))) if outline else 0
        box = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
        self.draw.rounded_rectangle(box, radius=radius, fill=fill, outline=outline, width=width)
        self._grow(box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1)

    def ellipse(self, cx: float, cy: float, r: float, fill: tuple[int, ...] | None = None,
                outline: tuple[int, ...] | None = INK, width_pt: float = 1.0, ry: float | None = None) -> None:
        ry = r if ry is None else ry
        width = max(1, round(self.pt(width_pt))) if outline else 0
        self.draw.ellipse((cx - r, cy - ry, cx + r, cy + ry), fill=fill, outline=outline, width=width)
        self._grow(cx - r - 1, cy - ry - 1, cx + r + 1, cy + ry + 1)

    def text(self, xy: tuple[float, float], text: str, size_pt: float = 8.0, anchor: str = "mm",
             fill: tuple[int, ...] = INK, bold: bool = False, angle: float = 0) -> tuple[float, float, float, float]:
        fnt = font(round(self.pt(size_pt)), bold)
        if angle:
            return self._rotated_text(xy, text, fnt, fill, angle)
        self.draw.text(xy, text, font=fnt, fill=fill, anchor=anchor)
        box = self.draw.textbbox(xy, text, font=fnt, anchor=anchor)
        self._grow(box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1)
        return box

    def _rotated_text(self, xy: tuple[float, float], text: str, fnt: ImageFont.FreeTypeFont,
                      fill: tuple[int, ...], angle: float) -> tuple[float, float, float, float]:
        x0, y0, x1, y1 = fnt.getbbox(text)
        layer = Image.new("L", (x1 + 4, y1 + 4), 0)
        ImageDraw.Draw(layer).text((2, 2), text, font=fnt, fill=255)
        layer = layer.rotate(angle, expand=True)
        px, py = round(xy[0] - layer.width / 2), round(xy[1] - layer.height / 2)
        self.img.paste(Image.new("RGB", layer.size, fill), (px, py), layer)
        bbox = layer.getbbox() or (0, 0, 0, 0)
        box = (px + bbox[0], py + bbox[1], px + bbox[2], py + bbox[3])
        self._grow(box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1)
        return box

    def text_size(self, text: str, size_pt: float = 8.0, bold: bool = False) -> tuple[float, float]:
        x0, y0, x1, y1 = font(round(self.pt(size_pt)), bold).getbbox(text)
        return x1 - x0, y1 - y0

    def arrow(self, tip: tuple[float, float], direction: tuple[float, float], size_pt: float = 5.0,
              fill: tuple[int, ...] = INK) -> None:
        dx, dy = direction
        norm = math.hypot(dx, dy) or 1.0
        ux, uy = dx / norm, dy / norm
        s = self.pt(size_pt)
        back = (tip[0] - ux * s, tip[1] - uy * s)
        left = (back[0] - uy * s * 0.45, back[1] + ux * s * 0.45)
        right = (back[0] + uy * s * 0.45, back[1] - ux * s * 0.45)
        self.polygon([tip, left, right], fill=fill)

    def finish(self) -> FigureImage:
        small = self.img.reduce(SS)
        return FigureImage(np.asarray(small, dtype=np.uint8).copy(), tuple(self.boxes))


def nice_number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


# ---------------------------------------------------------------- bar and line charts


class _Axes:
    """Plot area of a vertical-value chart: categories along x, a value scale up y."""

    def __init__(self, cv: Canvas, spec: dict[str, Any], n: int) -> None:
        self.cv, self.spec, self.n = cv, spec, n
        self.y_max, self.y_step = spec["y_max"], spec["y_step"]
        label_w, _ = cv.text_size(nice_number(self.y_max), 7.5)
        self.left = cv.pt(24) + label_w
        self.right = cv.W - cv.pt(10)
        self.top = cv.pt(22)
        self.bottom = cv.H - cv.pt(30)

    def y(self, v: float) -> float:
        return self.bottom - (self.bottom - self.top) * v / self.y_max

    def x(self, i: float) -> float:
        slot = (self.right - self.left) / self.n
        return self.left + slot * (i + 0.5)

    @property
    def slot(self) -> float:
        return (self.right - self.left) / self.n

    def draw(self, el: Element) -> bool:
        cv, kind = self.cv, el["type"]
        if kind == "gridline":
            v = self.y_step
            while v <= self.y_max + 1e-9:
                cv.line([(self.left, self.y(v)), (self.right, self.y(v))], 0.5, GRID)
                v += self.y_step
        elif kind == "axis" and el["id"] == "axis_x":
            cv.line([(self.left, self.bottom), (self.right + cv.pt(4), self.bottom)], 1.0)
            cv.text(((self.left + self.right) / 2, cv.H - cv.pt(4)), el.get("label", ""), 8, "ms")
        elif kind == "axis":
            cv.line([(self.left, self.bottom), (self.left, self.top - cv.pt(8))], 1.0)
            cv.arrow((self.left, self.top - cv.pt(12)), (0, -1))
            cv.text((cv.pt(7), (self.top + self.bottom) / 2), el.get("label", ""), 8, angle=90)
        elif kind == "tick":
            v, every = 0, self.spec.get("label_every", 1) * self.y_step
            while v <= self.y_max + 1e-9:
                cv.line([(self.left - cv.pt(3), self.y(v)), (self.left, self.y(v))], 0.8)
                if round(v / every, 6).is_integer():
                    cv.text((self.left - cv.pt(5), self.y(v)), nice_number(v), 7.5, "rm")
                v += self.y_step
        elif kind == "label":
            cv.text((self.x(el["index"]), self.bottom + cv.pt(5)), el["text"], 7.5, "mt")
        elif kind == "text":
            cv.text((cv.W / 2, cv.pt(4)), el["text"], 9, "mt", bold=True)
        else:
            return False
        return True


@drawer("bar_chart")
def draw_bar_chart(figure: Figure, dpi: int) -> FigureImage:
    spec = figure.spec
    cv = Canvas(spec, dpi)
    axes = _Axes(cv, spec, spec["n_bars"])
    for el in spec["elements"]:
        with cv.element(el):
            if el["type"] == "bar":
                half = axes.slot * 0.3
                x = axes.x(el["index"])
                cv.rect(x - half, axes.y(el["value"]), x + half, axes.bottom, fill=FILLS[0], outline=INK, width_pt=0.8)
            elif not axes.draw(el):
                raise ValueError(f"bar_chart cannot draw element type {el['type']!r} ({el['id']})")
    return cv.finish()


@drawer("line_chart")
def draw_line_chart(figure: Figure, dpi: int) -> FigureImage:
    spec = figure.spec
    cv = Canvas(spec, dpi)
    axes = _Axes(cv, spec, spec["n_points"])
    for el in spec["elements"]:
        with cv.element(el):
            if el["type"] == "curve":
                cv.line([(axes.x(i), axes.y(v)) for i, v in enumerate(el["values"])], 1.3, (40, 80, 150))
            elif el["type"] == "point":
                r = cv.pt(2.2)
                cv.ellipse(axes.x(el["index"]), axes.y(el["value"]), r, fill=(40, 80, 150), outline=None)
            elif el["type"] == "gridline":
                axes.draw(el)
                for i in range(axes.n):  # vertical guides help read across
                    cv.line([(axes.x(i), axes.top), (axes.x(i), axes.bottom)], 0.5, GRID)
            elif not axes.draw(el):
                raise ValueError(f"line_chart cannot draw element type {el['type']!r} ({el['id']})")
    return cv.finish()


# ---------------------------------------------------------------- pie chart


@drawer("pie_chart")
def draw_pie_chart(figure: Figure, dpi: int) -> FigureImage:
    spec = figure.spec
    cv = Canvas(spec, dpi)
    title_h = cv.pt(16)
    cx, cy = cv.W / 2, (cv.H + title_h) / 2
    r = min(cv.W, cv.H - title_h) / 2 - cv.pt(6)
    for el in spec["elements"]:
        with cv.element(el):
            if el["type"] == "wedge":
                _wedge(cv, el, cx, cy, r, el["start_deg"])
            elif el["type"] == "equal_mark":
                _equal_mark(cv, el, cx, cy, r)
            elif el["type"] == "text":
                cv.text((cv.W / 2, cv.pt(3)), el["text"], 9, "mt", bold=True)
            else:
                raise ValueError(f"pie_chart cannot draw element type {el['type']!r} ({el['id']})")
    return cv.finish()


def _wedge(cv: Canvas, el: WedgeElement, cx: float, cy: float, r: float, a0: float) -> None:
    a1 = a0 - el["angle"]
    steps = max(2, int(el["angle"] / 3))
    arc = [(cx + r * math.cos(math.radians(a0 - (a0 - a1) * t / steps)),
            cy - r * math.sin(math.radians(a0 - (a0 - a1) * t / steps))) for t in range(steps + 1)]
    cv.polygon([(cx, cy), *arc], fill=FILLS[el["index"] % len(FILLS)])
    cv.line([(cx, cy), *arc, (cx, cy)], 0.9)
    mid = math.radians((a0 + a1) / 2)
    inside = 0.6 if el["angle"] >= 50 else 0.72
    tx, ty = cx + r * inside * math.cos(mid), cy - r * inside * math.sin(mid)
    label = el["text"]
    size = 7.5 if el["angle"] >= 40 else 6.5
    # the angle, or on a percent chart the percentage, printed under the name (neither on the unknown sector)
    value = f"{el['angle']}°" if el.get("show_angle", True) else el.get("value_text")
    if value:
        cv.text((tx, ty - cv.pt(4.5)), label, size, "mm")
        cv.text((tx, ty + cv.pt(4.5)), value, size, "mm")
    else:
        cv.text((tx, ty), label, size, "mm")


def _equal_mark(cv: Canvas, el: EqualMarkElement, cx: float, cy: float, r: float) -> None:
    """The geometry mark for equal angles: an arc across the sector's corner at the centre, crossed by as many
    short ticks as the mark's number (sectors with the same mark have equal angles)."""
    a0, a1 = el["start_deg"], el["start_deg"] - el["angle"]
    # small, as angle arcs are drawn, but clear of the corner where the sector lines meet
    rr = r * (0.2 if el["angle"] >= 60 else 0.26)
    steps = max(3, int(el["angle"] / 3))
    cv.line([(cx + rr * math.cos(math.radians(a0 - (a0 - a1) * t / steps)),
              cy - rr * math.sin(math.radians(a0 - (a0 - a1) * t / steps))) for t in range(steps + 1)], 0.9)
    ticks = int(el.get("ticks", 1))
    half = cv.pt(3.2)
    for k in range(ticks):
        mid = math.radians((a0 + a1) / 2 + (k - (ticks - 1) / 2) * min(8.0, el["angle"] / (ticks + 2)))
        ux, uy = math.cos(mid), -math.sin(mid)
        cv.line([(cx + (rr - half) * ux, cy + (rr - half) * uy), (cx + (rr + half) * ux, cy + (rr + half) * uy)], 0.9)


# ---------------------------------------------------------------- table


@drawer("table")
def draw_table(figure: Figure, dpi: int) -> FigureImage:
    spec = figure.spec
    cv = Canvas(spec, dpi)
    rows = spec["rows"]
    has_title = spec.get("title", False)  # from the spec, so one cell drawn alone sits where it does in full
    pad = cv.pt(6)
    bold = {(r, c) for r in range(len(rows)) for c in range(len(rows[0])) if r == 0 or (c == 0 and len(rows[0]) > 2)}
    widths = [max(cv.text_size(row[c] or "M", 8, (r, c) in bold)[0] for r, row in enumerate(rows)) + 2 * pad
              for c in range(len(rows[0]))]
    top = cv.pt(18) if has_title else cv.pt(3)
    bottom = cv.pt(18) if spec.get("key") else cv.pt(3)  # room for a key line under the table
    ruled = spec.get("style") == "stem_leaf"  # rules either side of the stem column, no boxes
    row_h = (cv.H - top - bottom) / len(rows)
    total = sum(widths)
    scale = min(1.0, (cv.W - cv.pt(6)) / total)
    widths = [w * scale for w in widths]
    left = (cv.W - sum(widths)) / 2
    xs = [left + sum(widths[:i]) for i in range(len(widths) + 1)]
    for el in spec["elements"]:
        with cv.element(el):
            if el["type"] == "cell":
                r, c = el["row"], el["col"]
                y0 = top + r * row_h
                fill = (232, 236, 244) if el.get("header") and el["text"] else None
                if ruled and c == 1 and r > 0:
                    for x in (xs[1], xs[2]):
                        cv.line([(x, y0), (x, y0 + row_h)], 0.9)
                elif not ruled and (el["text"] or r > 0 or c > 0):
                    cv.rect(xs[c], y0, xs[c + 1], y0 + row_h, fill=fill, outline=INK, width_pt=0.8)
                if el["text"]:
                    align = el.get("align", "centre")  # a stem-and-leaf's leaves sit against the stem
                    x = {"right": xs[c + 1] - pad, "left": xs[c] + pad}.get(align, (xs[c] + xs[c + 1]) / 2)
                    anchor = {"right": "rm", "left": "lm"}.get(align, "mm")
                    cv.text((x, y0 + row_h / 2), el["text"], 8, anchor, bold=bool(el.get("header")))
            elif el["type"] == "text" and el.get("at") == "bottom":
                cv.text((cv.W / 2, cv.H - cv.pt(3)), el["text"], 7.5, "mb")
            elif el["type"] == "text":
                cv.text((cv.W / 2, cv.pt(3)), el["text"], 9, "mt", bold=True)
            else:
                raise ValueError(f"table cannot draw element type {el['type']!r} ({el['id']})")
    return cv.finish()
