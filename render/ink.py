"""The ink backend: FreeType glyph masks and anti-aliased strokes drawn as coverage, with the box of every key's ink.

Everything is drawn as coverage into one uint8 "ink" layer, then laid onto the paper in one pass:
glyph masks come from FreeType (via Pillow, cached per font/size/text), strokes from OpenCV's
anti-aliased polylines. Each mark belongs to a box key, and the layer records the pixel extent of
every key's ink, so layout boxes are measured from the ink itself rather than predicted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path

import cv2
import numpy as np
from matplotlib import get_data_path  # DejaVu and STIX ship inside matplotlib's wheel
from PIL import Image, ImageFont

from render.mathlayout import DelimOp


def matplotlib_font(name: str) -> str:
    """The path of a TrueType font that ships with matplotlib (``DejaVuSans.ttf``)."""
    return str(Path(get_data_path()) / "fonts" / "ttf" / name)


SANS = matplotlib_font("DejaVuSans.ttf")
SANS_BOLD = matplotlib_font("DejaVuSans-Bold.ttf")
SANS_ITALIC = matplotlib_font("DejaVuSans-Oblique.ttf")


@cache
def font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, max(4, size))


@lru_cache(maxsize=8192)  # bounded: keys include every word and number drawn, so a long run would grow it
def glyph_mask(path: str, size: int, text: str) -> tuple[np.ndarray, int, int]:
    """Coverage mask of ``text`` and the offset of its top-left from the baseline origin."""
    mask, (dx, dy) = font(path, size).getmask2(text, "L", anchor="ls")
    return np.asarray(Image.Image()._new(mask)), dx, dy


def ink_rows(path: str, size: int, text: str) -> tuple[int, int]:
    """Top and bottom (exclusive) of the ink of ``text`` relative to the baseline (y down); (0, 0) if blank."""
    mask, _, dy = glyph_mask(path, size, text)
    rows = np.flatnonzero(mask.any(axis=1)) if mask.size else np.empty(0, int)
    if rows.size == 0:
        return 0, 0
    return dy + int(rows[0]), dy + int(rows[-1]) + 1


@dataclass(frozen=True)
class InkGlyph:
    """``text`` from the TrueType font at ``path``; ``rotate`` (degrees, counter-clockwise) and ``shear``
    (forward slant as tan of the angle) act about the baseline origin; ``alpha`` is pen pressure."""

    path: str
    text: str
    x: float
    y: float
    size: float
    rotate: float = 0.0
    shear: float = 0.0
    alpha: float = 1.0


@dataclass(frozen=True)
class InkStroke:
    """A pen stroke through ``points`` (page px); a closed shape repeats its first point."""

    points: tuple[tuple[float, float], ...]
    width: float
    alpha: float = 1.0


@dataclass(frozen=True)
class InkRect:
    """A filled axis-aligned rectangle (printed rules and bars)."""

    x0: float
    y0: float
    x1: float
    y1: float
    alpha: float = 1.0


InkMark = InkGlyph | InkStroke | InkRect


class InkLayer:
    """A page-sized coverage layer that remembers, per box key, where its ink landed.

    A mark's key may name several boxes separated by ``|`` (``question_token:3|question_line:1``).
    """

    def __init__(self, height: int, width: int) -> None:
        self.a = np.zeros((height, width), np.uint8)
        self.extent: dict[str, list[int]] = {}

    def _note(self, keys: str, x0: int, y0: int, x1: int, y1: int) -> None:
        for key in keys.split("|"):  # one mark may belong to several boxes: a word and its line
            box = self.extent.get(key)
            if box is None:
                self.extent[key] = [x0, y0, x1, y1]
            else:
                box[0], box[1], box[2], box[3] = min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)

    def _paste(self, key: str, tile: np.ndarray, x: int, y: int, alpha: float) -> None:
        h, w = self.a.shape
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + tile.shape[1], w), min(y + tile.shape[0], h)
        if x0 >= x1 or y0 >= y1:
            return
        part = tile[y0 - y:y1 - y, x0 - x:x1 - x]
        if alpha < 1.0:
            part = (part * alpha).astype(np.uint8)
        rows, cols = np.flatnonzero(part.any(axis=1)), np.flatnonzero(part.any(axis=0))
        if rows.size == 0:
            return
        region = self.a[y0:y1, x0:x1]
        np.maximum(region, part, out=region)
        self._note(key, x0 + int(cols[0]), y0 + int(rows[0]), x0 + int(cols[-1]) + 1, y0 + int(rows[-1]) + 1)

    def draw(self, key: str, mark: InkMark) -> None:
        if isinstance(mark, InkGlyph):
            self._glyph(key, mark)
        elif isinstance(mark, InkStroke):
            self._stroke(key, mark)
        else:
            x0, y0 = int(round(mark.x0)), int(round(mark.y0))
            x1, y1 = max(x0 + 1, int(round(mark.x1))), max(y0 + 1, int(round(mark.y1)))
            self._paste(key, np.full((y1 - y0, x1 - x0), 255, np.uint8), x0, y0, mark.alpha)

    def _glyph(self, key: str, g: InkGlyph) -> None:
        mask, dx, dy = glyph_mask(g.path, int(round(g.size)), g.text)
        if mask.size == 0:
            return
        if g.rotate == 0.0 and g.shear == 0.0:
            self._paste(key, mask, int(round(g.x)) + dx, int(round(g.y)) + dy, g.alpha)
            return
        th = np.deg2rad(g.rotate)
        c, s = np.cos(th), np.sin(th)
        # y grows downwards, so a counter-clockwise turn is [[c, s], [-s, c]]; shear leans tops forward.
        a = np.array([[c, s], [-s, c]]) @ np.array([[1.0, -g.shear], [0.0, 1.0]])
        h, w = mask.shape
        corners = np.array([[dx, dy], [dx + w, dy], [dx, dy + h], [dx + w, dy + h]], float) @ a.T
        lo = np.floor(corners.min(axis=0) + (g.x, g.y)).astype(int) - 1
        hi = np.ceil(corners.max(axis=0) + (g.x, g.y)).astype(int) + 1
        m = np.hstack([a, (a @ (dx, dy) + (g.x, g.y) - lo)[:, None]])
        tile = cv2.warpAffine(mask, m, (int(hi[0] - lo[0]), int(hi[1] - lo[1])), flags=cv2.INTER_LINEAR)
        self._paste(key, tile, int(lo[0]), int(lo[1]), g.alpha)

    def _stroke(self, key: str, s: InkStroke) -> None:
        pts = np.asarray(s.points, float)
        pad = int(np.ceil(s.width)) + 2
        lo = np.floor(pts.min(axis=0)).astype(int) - pad
        hi = np.ceil(pts.max(axis=0)).astype(int) + pad
        tile = np.zeros((int(hi[1] - lo[1]), int(hi[0] - lo[0])), np.uint8)
        shift = 4  # OpenCV draws with 1/16 px precision
        fixed = np.round((pts - lo) * (1 << shift)).astype(np.int32).reshape(-1, 1, 2)
        thick = max(1, int(round(s.width)))
        cv2.polylines(tile, [fixed], False, 255, thickness=thick, lineType=cv2.LINE_AA, shift=shift)
        self._paste(key, tile, int(lo[0]), int(lo[1]), s.alpha)

    def boxes(self) -> dict[str, tuple[int, int, int, int]]:
        return {k: (v[0], v[1], v[2], v[3]) for k, v in self.extent.items()}


def lay_ink(paper: np.ndarray, coverage: np.ndarray, ink_rgb: tuple[int, int, int]) -> np.ndarray:
    """Ink over paper: each pixel moves from the paper colour towards ``ink_rgb`` by its coverage.

    Only inked pixels are touched (a page is mostly blank), which keeps this cheap at high DPI.
    """
    out = paper.copy()
    idx = np.flatnonzero(coverage)
    if idx.size == 0:
        return out
    flat = out.reshape(-1, 3)
    a = coverage.reshape(-1)[idx].astype(np.int32)[:, None]
    under = flat[idx].astype(np.int32)
    flat[idx] = (under + ((np.asarray(ink_rgb, np.int32) - under) * a + 127) // 255).astype(np.uint8)
    return out


def delim_strokes(op: DelimOp, x: float, y: float) -> list[tuple[tuple[float, float], ...]]:
    """Strokes of a stretched delimiter: an elliptic arc for parentheses, polylines for brackets and bars."""
    x0, x1 = x + op.x + op.width * 0.25, x + op.x + op.width * 0.8
    top, bottom = y + op.top, y + op.bottom
    left = op.char in "([{"
    if op.char in "()":
        t = np.linspace(-1.0, 1.0, 17)
        mid, half = (top + bottom) / 2, (bottom - top) / 2
        depth = (x1 - x0) * (1 - np.cos(t * np.pi / 2.6))
        bulge = x0 + depth if left else x1 - depth
        return [tuple(zip(bulge.tolist(), (mid + t * half).tolist()))]
    if op.char in "[]":
        inner, outer = (x1, x0 + 0.1 * op.width) if left else (x0, x1 - 0.1 * op.width)
        return [((inner, top), (outer, top), (outer, bottom), (inner, bottom))]
    if op.char in "{}":
        mid = (top + bottom) / 2
        a, b = (x1, x0) if left else (x0, x1)
        c = (a + b) / 2
        return [((a, top), (c, top + 0.1 * (bottom - top)), (c, mid - 0.05 * (bottom - top)), (b, mid),
                 (c, mid + 0.05 * (bottom - top)), (c, bottom - 0.1 * (bottom - top)), (a, bottom))]
    cx = (x0 + x1) / 2
    return [((cx, top), (cx, bottom))]


# ------------------------------------------------------------------------------------ mark geometry


def mark_bounds(mark: InkMark) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) that contains every pixel :class:`InkLayer` can ink for ``mark``.

    Lets a composer place a line by the ink it will leave, before anything is rasterized.
    """
    if isinstance(mark, InkRect):
        return mark.x0, mark.y0, max(mark.x0 + 1, mark.x1), max(mark.y0 + 1, mark.y1)
    if isinstance(mark, InkStroke):
        pts = np.asarray(mark.points, float)
        reach = max(1, int(round(mark.width))) / 2 + 1.5  # half the pen plus OpenCV's anti-aliased fringe
        lo, hi = np.floor(pts.min(axis=0) - reach), np.ceil(pts.max(axis=0) + reach)
        return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])
    mask, dx, dy = glyph_mask(mark.path, int(round(mark.size)), mark.text)
    h, w = mask.shape
    if mark.rotate == 0.0 and mark.shear == 0.0:
        x, y = int(round(mark.x)) + dx, int(round(mark.y)) + dy
        return float(x), float(y), float(x + w), float(y + h)
    th = np.deg2rad(mark.rotate)
    c, s = np.cos(th), np.sin(th)
    a = np.array([[c, s], [-s, c]]) @ np.array([[1.0, -mark.shear], [0.0, 1.0]])
    corners = np.array([[dx, dy], [dx + w, dy], [dx, dy + h], [dx + w, dy + h]], float) @ a.T
    lo = np.floor(corners.min(axis=0) + (mark.x, mark.y)) - 1
    hi = np.ceil(corners.max(axis=0) + (mark.x, mark.y)) + 1
    return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])


def moved(mark: InkMark, dx: float, dy: float) -> InkMark:
    """``mark`` translated by (dx, dy) page px."""
    if isinstance(mark, InkGlyph):
        return replace(mark, x=mark.x + dx, y=mark.y + dy)
    if isinstance(mark, InkStroke):
        return replace(mark, points=tuple((x + dx, y + dy) for x, y in mark.points))
    return replace(mark, x0=mark.x0 + dx, y0=mark.y0 + dy, x1=mark.x1 + dx, y1=mark.y1 + dy)
