"""Shared drawing utilities for figure drawers: a supersampled canvas that reports the ink box of every mark.

Coordinates are final-image pixels (y down). Everything is drawn at ``scale`` times the size
and box-filtered down once, which gives anti-aliased lines and text at Pillow speed. Every
drawing call returns the box ``(x0, y0, x1, y1)`` that contains the ink it made, so drawers
can emit one ``Box`` per primitive without measuring pixels afterwards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from render.ink import matplotlib_font

INK = (25, 25, 30)
PAPER = (255, 255, 255)
FONT_FILES = {"sans": "DejaVuSans.ttf", "italic": "DejaVuSerif-Italic.ttf", "serif": "DejaVuSerif.ttf"}

Point = tuple[float, float]
Rect = tuple[float, float, float, float]


@cache
def font(style: str, size_px: int) -> ImageFont.FreeTypeFont:
    """A DejaVu font (shipped with matplotlib) at a pixel size; ``style`` is sans, italic or serif."""
    try:
        name = FONT_FILES[style]
    except KeyError:
        raise ValueError(f"font style must be one of {sorted(FONT_FILES)}, got {style!r}") from None
    return ImageFont.truetype(matplotlib_font(name), max(1, size_px))


def union(rects: Sequence[Rect]) -> Rect:
    """The smallest box holding all ``rects``."""
    if not rects:
        raise ValueError("union of no boxes")
    return (min(r[0] for r in rects), min(r[1] for r in rects), max(r[2] for r in rects), max(r[3] for r in rects))


def points_box(points: Sequence[Point], pad: float) -> Rect:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)


def ellipse_points(center: Point, rx: float, ry: float, start_deg: float, end_deg: float,
                   step_deg: float = 4.0) -> list[Point]:
    """Points on an axis-aligned ellipse from ``start_deg`` to ``end_deg`` (counter-clockwise on screen)."""
    n = max(2, math.ceil(abs(end_deg - start_deg) / step_deg) + 1)
    cx, cy = center
    out = []
    for i in range(n):
        t = math.radians(start_deg + (end_deg - start_deg) * i / (n - 1))
        out.append((cx + rx * math.cos(t), cy - ry * math.sin(t)))
    return out


def dash_runs(points: Sequence[Point], on: float, off: float) -> list[list[Point]]:
    """Split a polyline into the visible runs of an ``on``/``off`` dash pattern (lengths in px)."""
    runs: list[list[Point]] = []
    drawing, left = True, on
    current: list[Point] = [points[0]]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        seg = math.hypot(x1 - x0, y1 - y0)
        pos = 0.0
        while seg - pos > left:
            pos += left
            t = pos / seg
            p = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)
            if drawing:
                current.append(p)
                runs.append(current)
            else:
                current = [p]
            drawing = not drawing
            left = on if drawing else off
        left -= seg - pos
        if drawing:
            current.append((x1, y1))
    if drawing and len(current) > 1:
        runs.append(current)
    return [r for r in runs if len(r) > 1]


class Canvas:
    """An RGB canvas drawn at ``scale`` times its size; ``pixels()`` downsamples once."""

    def __init__(self, width: int, height: int, *, scale: int = 2, background: tuple[int, int, int] = PAPER) -> None:
        if width < 1 or height < 1:
            raise ValueError(f"canvas size must be positive, got {width}x{height}")
        self.width, self.height, self.scale = width, height, scale
        self.image = Image.new("RGB", (width * scale, height * scale), background)
        self.draw = ImageDraw.Draw(self.image)

    def _s(self, points: Sequence[Point]) -> list[Point]:
        s = self.scale
        return [(x * s, y * s) for x, y in points]

    def polyline(self, points: Sequence[Point], *, width: float = 1.0, dash: tuple[float, float] | None = None,
                 color: tuple[int, int, int] = INK, closed: bool = False) -> Rect:
        """A line through ``points`` (dashed when ``dash=(on, off)`` px); returns its ink box."""
        pts = list(points) + ([points[0]] if closed else [])
        w = max(1, round(width * self.scale))
        runs = dash_runs(pts, dash[0], dash[1]) if dash else [pts]
        for run in runs:
            self.draw.line(self._s(run), fill=color, width=w, joint="curve")
        return points_box(pts, width / 2 + 1.5)

    def polygon_fill(self, points: Sequence[Point], color: tuple[int, int, int]) -> Rect:
        self.draw.polygon(self._s(points), fill=color)
        return points_box(points, 1.5)

    def dot(self, center: Point, radius: float, color: tuple[int, int, int] = INK) -> Rect:
        x, y = center
        s = self.scale
        self.draw.ellipse([(x - radius) * s, (y - radius) * s, (x + radius) * s, (y + radius) * s], fill=color)
        return (x - radius - 1.5, y - radius - 1.5, x + radius + 1.5, y + radius + 1.5)

    def text_size(self, text: str, size_px: int, style: str = "sans") -> tuple[float, float]:
        """Width and height of the ink of ``text`` in final pixels."""
        x0, y0, x1, y1 = self.draw.textbbox((0, 0), text, font=font(style, size_px * self.scale), anchor="mm")
        return (x1 - x0) / self.scale, (y1 - y0) / self.scale

    def text(self, center: Point, text: str, size_px: int, *, style: str = "sans",
             color: tuple[int, int, int] = INK) -> Rect:
        """``text`` centred on ``center``; returns its ink box."""
        fnt = font(style, size_px * self.scale)
        xy = (center[0] * self.scale, center[1] * self.scale)
        self.draw.text(xy, text, font=fnt, fill=color, anchor="mm")
        x0, y0, x1, y1 = self.draw.textbbox(xy, text, font=fnt, anchor="mm")
        s = self.scale
        return (x0 / s - 1.5, y0 / s - 1.5, x1 / s + 1.5, y1 / s + 1.5)

    def label(self, anchor: Point, direction: Point, text: str, size_px: int, *, gap: float,
              style: str = "sans", color: tuple[int, int, int] = INK) -> Rect:
        """``text`` placed just outside ``anchor`` along ``direction`` (a unit vector), ``gap`` px clear of it.

        The offset grows with the text's extent along the direction, so long labels such as
        ``12.5 cm`` do not run into the line they name whichever side they sit on.
        """
        w, h = self.text_size(text, size_px, style)
        dx, dy = direction
        norm = math.hypot(dx, dy) or 1.0
        dx, dy = dx / norm, dy / norm
        reach = abs(dx) * w / 2 + abs(dy) * h / 2
        center = (anchor[0] + dx * (gap + reach), anchor[1] + dy * (gap + reach))
        return self.text(center, text, size_px, style=style, color=color)

    def pixels(self) -> np.ndarray:
        """The finished image, H x W x 3 uint8, box-filtered down from the supersampled canvas."""
        small = self.image.resize((self.width, self.height), Image.Resampling.BOX)
        return np.asarray(small, dtype=np.uint8).copy()


def clip(rect: Rect, width: int, height: int) -> Rect:
    """A box limited to the image."""
    return (max(0.0, rect[0]), max(0.0, rect[1]), min(float(width), rect[2]), min(float(height), rect[3]))
