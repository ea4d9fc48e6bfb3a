"""Everyday figures: a number line with equal divisions, analogue clocks, arrays of objects with gaps."""

from __future__ import annotations

import math
from typing import Any

from render.figures import FigureImage, drawer
from render.figures.charts import INK, SOFT, Canvas
from render.figures.primitives.hand import HandElement
from synth.records import Figure

# ---------------------------------------------------------------- number line


@drawer("number_line")
def draw_number_line(figure: Figure, dpi: int) -> FigureImage:
    spec = figure.spec
    cv = Canvas(spec, dpi)
    n = spec["divisions"]
    left, right = cv.pt(18), cv.W - cv.pt(18)
    y = cv.H * 0.5

    def x_at(i: float) -> float:
        return left + (right - left) * i / n

    for el in spec["elements"]:
        with cv.element(el):
            if el["type"] == "axis":
                cv.line([(left - cv.pt(10), y), (right + cv.pt(8), y)], 1.1)
                cv.arrow((right + cv.pt(13), y), (1, 0), 5)
                cv.arrow((left - cv.pt(15), y), (-1, 0), 5)
            elif el["type"] == "tick":
                labelled = el.get("text") is not None
                half = cv.pt(6 if labelled else 4)
                x = x_at(el["index"])
                cv.line([(x, y - half), (x, y + half)], 1.0)
                if labelled:
                    cv.text((x, y + half + cv.pt(2)), el["text"].replace("-", "−"), 9, "mt")
            elif el["type"] == "point":
                x = x_at(el["index"])
                tip = y - cv.pt(7)
                cv.line([(x, tip - cv.pt(12)), (x, tip - cv.pt(3))], 1.1, (170, 30, 30))
                cv.arrow((x, tip), (0, 1), 4.5, (170, 30, 30))
                cv.text((x, tip - cv.pt(13)), el["text"], 9, "mb", fill=(170, 30, 30), bold=True)
            else:
                raise ValueError(f"number_line cannot draw element type {el['type']!r} ({el['id']})")
    return cv.finish()


# ---------------------------------------------------------------- clocks


def _clock_frame(cv: Canvas, spec: dict[str, Any], slot: int) -> tuple[float, float, float]:
    faces = spec.get("faces", 1)
    width = cv.W / faces
    r = min(width, cv.H - cv.pt(16)) / 2 - cv.pt(5)
    return width * (slot + 0.5), (cv.H - cv.pt(16)) / 2 + cv.pt(2), r


@drawer("clock")
def draw_clock(figure: Figure, dpi: int) -> FigureImage:
    spec = figure.spec
    cv = Canvas(spec, dpi)
    for el in spec["elements"]:
        cx, cy, r = _clock_frame(cv, spec, el["slot"])
        with cv.element(el):
            if el["type"] == "face":
                _face(cv, cx, cy, r)
            elif el["type"] == "hand":
                _hand(cv, cx, cy, r, el)
            elif el["type"] == "label":
                cv.text((cx, cy + r + cv.pt(5)), el["text"], 8.5, "mt")
            else:
                raise ValueError(f"clock cannot draw element type {el['type']!r} ({el['id']})")
    return cv.finish()


def _face(cv: Canvas, cx: float, cy: float, r: float) -> None:
    cv.ellipse(cx, cy, r, fill=(252, 252, 248), outline=INK, width_pt=1.6)
    for minute in range(60):
        a = math.radians(90 - minute * 6)
        inner = r * (0.86 if minute % 5 == 0 else 0.92)
        outer = r * 0.97
        cv.line([(cx + inner * math.cos(a), cy - inner * math.sin(a)),
                 (cx + outer * math.cos(a), cy - outer * math.sin(a))], 1.0 if minute % 5 == 0 else 0.5)
    size = max(5.5, r / cv.pt(1) * 0.15)
    for hour in range(1, 13):
        a = math.radians(90 - hour * 30)
        cv.text((cx + r * 0.74 * math.cos(a), cy - r * 0.74 * math.sin(a)), str(hour), size, "mm")
    cv.ellipse(cx, cy, cv.pt(1.8), fill=INK, outline=None)


def _hand(cv: Canvas, cx: float, cy: float, r: float, el: HandElement) -> None:
    hour, minute = el["hour"], el["minute"]
    if el["hand"] == "minute":
        angle, length, width = minute * 6, r * 0.84, 1.3
    else:
        angle, length, width = (hour % 12) * 30 + minute * 0.5, r * 0.52, 2.8
    a = math.radians(90 - angle)
    tip = (cx + length * math.cos(a), cy - length * math.sin(a))
    tail = (cx - r * 0.08 * math.cos(a), cy + r * 0.08 * math.sin(a))
    cv.line([tail, tip], width)


# ---------------------------------------------------------------- object arrays


_KEY_HEIGHT_PT = 26  # room under the picture for a pictogram key


def _array_frame(cv: Canvas, spec: dict[str, Any], group: int) -> tuple[float, float, float]:
    """Top-left corner and cell size of one group, groups side by side, same cell size."""
    groups = spec["groups"]
    gap = cv.pt(14)
    top = cv.pt(16)
    bottom = cv.pt(6 + (_KEY_HEIGHT_PT if spec.get("key") else 0))
    cell = min((cv.W - gap * (len(groups) + 1)) / sum(c for _, c in groups),
               (cv.H - top - bottom) / max(r for r, _ in groups))
    widths = [c * cell for _, c in groups]
    left = (cv.W - sum(widths) - gap * (len(groups) - 1)) / 2 + sum(widths[:group]) + gap * group
    return left, top, cell


@drawer("object_array")
def draw_object_array(figure: Figure, dpi: int) -> FigureImage:
    spec = figure.spec
    cv = Canvas(spec, dpi)
    for el in spec["elements"]:
        if el["type"] == "key":
            with cv.element(el):
                _key(cv, spec, el["text"])
            continue
        left, top, cell = _array_frame(cv, spec, el["group"])
        rows, cols = spec["groups"][el["group"]]
        with cv.element(el):
            if el["type"] == "polygon":
                pad = cell * 0.08
                cv.rect(left - pad, top - pad, left + cols * cell + pad, top + rows * cell + pad,
                        fill=None, outline=SOFT, width_pt=1.2, radius=cell * 0.25)
            elif el["type"] == "label":
                cv.text((left + cols * cell / 2, top - cell * 0.1 - cv.pt(3)), el["text"], 8.5, "mb")
            elif el["type"] == "object":
                cx, cy = left + (el["col"] + 0.5) * cell, top + (el["row"] + 0.5) * cell
                if el["present"]:
                    _SHAPES[spec["shape"]](cv, cx, cy, cell * 0.36)
                else:
                    _empty(cv, cx, cy, cell * 0.36)
            else:
                raise ValueError(f"object_array cannot draw element type {el['type']!r} ({el['id']})")
    return cv.finish()


def _key(cv: Canvas, spec: dict[str, Any], text: str) -> None:
    """The pictogram key centred under the picture: ``Key:``, one object as drawn, then ``= 3 apples``, in a box."""
    _, _, cell = _array_frame(cv, spec, 0)
    r = min(cell * 0.36, cv.pt(7))
    cy = cv.H - cv.pt(_KEY_HEIGHT_PT - 6) / 2 - cv.pt(3)
    head_w, _ = cv.text_size("Key:", 9, bold=True)
    text_w, _ = cv.text_size(text, 9)
    width = head_w + cv.pt(5) + 2 * r + cv.pt(4) + text_w
    x0 = (cv.W - width) / 2
    cv.rect(x0 - cv.pt(5), cy - r - cv.pt(4), x0 + width + cv.pt(5), cy + r + cv.pt(4), fill=None, outline=SOFT,
            width_pt=0.8)
    cv.text((x0, cy), "Key:", 9, "lm", bold=True)
    x = x0 + head_w + cv.pt(5)
    _SHAPES[spec["shape"]](cv, x + r, cy, r)
    cv.text((x + 2 * r + cv.pt(4), cy), text, 9, "lm")


def _empty(cv: Canvas, cx: float, cy: float, r: float) -> None:
    """An empty place: a dashed ring, like the hollow in an egg box."""
    for k in range(12):
        a0, a1 = math.radians(k * 30), math.radians(k * 30 + 16)
        cv.line([(cx + r * math.cos(a0), cy + r * math.sin(a0)), (cx + r * math.cos(a1), cy + r * math.sin(a1))],
                0.8, SOFT)


def _apple(cv: Canvas, cx: float, cy: float, r: float) -> None:
    cv.ellipse(cx - r * 0.28, cy + r * 0.1, r * 0.62, fill=(205, 45, 40), outline=(120, 20, 20), width_pt=0.7,
               ry=r * 0.78)
    cv.ellipse(cx + r * 0.28, cy + r * 0.1, r * 0.62, fill=(205, 45, 40), outline=(120, 20, 20), width_pt=0.7,
               ry=r * 0.78)
    cv.ellipse(cx, cy + r * 0.12, r * 0.5, fill=(205, 45, 40), outline=None, ry=r * 0.7)
    cv.line([(cx, cy - r * 0.55), (cx + r * 0.12, cy - r * 0.95)], 1.0, (90, 60, 30))
    cv.polygon([(cx + r * 0.1, cy - r * 0.75), (cx + r * 0.6, cy - r * 0.95), (cx + r * 0.25, cy - r * 0.6)],
               fill=(60, 140, 60))


def _star(cv: Canvas, cx: float, cy: float, r: float) -> None:
    pts = []
    for k in range(10):
        rad = r if k % 2 == 0 else r * 0.45
        a = math.radians(90 + k * 36)
        pts.append((cx + rad * math.cos(a), cy - rad * math.sin(a)))
    cv.polygon(pts, fill=(240, 190, 40), outline=(150, 110, 20), width_pt=0.7)


def _dot(cv: Canvas, cx: float, cy: float, r: float) -> None:
    cv.ellipse(cx, cy, r * 0.8, fill=(50, 90, 170), outline=(20, 40, 90), width_pt=0.7)


def _egg(cv: Canvas, cx: float, cy: float, r: float) -> None:
    cv.ellipse(cx, cy, r * 0.72, fill=(245, 230, 205), outline=(140, 110, 80), width_pt=0.8, ry=r * 0.92)


_SHAPES = {"apple": _apple, "star": _star, "dot": _dot, "egg": _egg}
