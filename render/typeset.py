"""Printed math, and the one import for typesetting: restricted LaTeX laid out and inked in a TrueType math font.

The work is split by stage, each its own module: :mod:`render.latex` parses the whitelisted LaTeX
subset (and keyboard math in prose) into a box tree, :mod:`render.mathlayout` places the tree in
pixels for any :class:`Face`, and :mod:`render.ink` rasterizes glyphs and strokes into a coverage
layer that measures every box from its ink. This module holds the printed face and re-exports the
names page composers and degradation ops use, so ``from render.typeset import parse, layout`` keeps
working; the handwriting face lives in :mod:`render.handwriting`.
"""

from __future__ import annotations

from render.ink import (
    SANS,
    SANS_BOLD,
    SANS_ITALIC,
    InkGlyph,
    InkLayer,
    InkMark,
    InkRect,
    InkStroke,
    delim_strokes,
    font,
    glyph_mask,
    ink_rows,
    lay_ink,
    mark_bounds,
    moved,
)
from render.latex import (
    Fenced,
    Frac,
    Node,
    Row,
    Script,
    Space,
    Sqrt,
    Sym,
    TypesetError,
    parse,
    parse_inline,
    parse_plain,
    reading,
)
from render.mathlayout import (
    DelimOp,
    Face,
    GlyphOp,
    Laid,
    Op,
    PathOp,
    RuleOp,
    break_points,
    layout,
    layout_lines,
    reading_rows,
)

__all__ = [
    "SANS", "SANS_BOLD", "SANS_ITALIC", "DelimOp", "Face", "Fenced", "Frac", "GlyphOp", "InkGlyph", "InkLayer",
    "InkMark", "InkRect", "InkStroke", "Laid", "Node", "Op", "PathOp", "PrintedFace", "Row", "RuleOp", "Script",
    "Space", "Sqrt", "Sym", "TypesetError", "break_points", "delim_strokes", "font", "glyph_mask", "ink_rows",
    "lay_ink", "layout", "layout_lines", "mark_bounds", "moved", "parse", "parse_inline", "parse_plain", "reading",
    "reading_rows",
]  # fmt: skip


class PrintedFace:
    """DejaVu Sans (upright) with DejaVu Sans Oblique for variables: matplotlib's default math look."""

    def __init__(self) -> None:
        self._ref = 200
        self._cache: dict[tuple[str, str], tuple[float, float, float]] = {}
        top, bottom = ink_rows(SANS, self._ref, "−")
        self.axis = -(top + bottom) / 2 / self._ref
        self.rule = max(0.05, (bottom - top) / self._ref)

    def path(self, kind: str) -> str:
        return SANS_ITALIC if kind == "var" else SANS

    def metrics(self, text: str, kind: str) -> tuple[float, float, float]:
        key = (text, kind)
        if key not in self._cache:
            path = self.path(kind)
            top, bottom = ink_rows(path, self._ref, text)
            self._cache[key] = (font(path, self._ref).getlength(text) / self._ref, max(0.0, -top / self._ref),
                                max(0.0, bottom / self._ref))
        return self._cache[key]

    def marks(self, ops: tuple[Op, ...], x: float, y: float) -> list[InkMark]:
        """Printed ink for laid-out ops placed with their origin at (x, y)."""
        out: list[InkMark] = []
        for op in ops:
            if isinstance(op, GlyphOp):
                if op.text.strip():
                    out.append(InkGlyph(self.path(op.kind), op.text, x + op.x, y + op.y, op.size))
            elif isinstance(op, RuleOp):
                half = op.thickness / 2
                out.append(InkRect(x + op.x0, y + op.y - half, x + op.x1, y + op.y + half))
            elif isinstance(op, PathOp):
                out.append(InkStroke(tuple((x + px, y + py) for px, py in op.points), op.thickness))
            else:
                out.extend(self._delim(op, x, y))
        return out

    def _delim(self, op: DelimOp, x: float, y: float) -> list[InkMark]:
        return [InkStroke(pts, op.thickness * 0.9) for pts in delim_strokes(op, x, y)]
