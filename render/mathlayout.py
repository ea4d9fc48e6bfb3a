"""Math layout: a box tree placed in pixels for one font size, as glyph, rule, path and delimiter ops.

Layout asks a :class:`Face` for glyph metrics, so the printed backend (a TrueType math font) and the
handwriting backend (handwriting fonts plus hand-drawn strokes) share fractions, scripts and radicals.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from render.latex import Fenced, Frac, Node, Row, Script, Space, Sqrt, Sym


class Face(Protocol):
    """Glyph metrics in em units (multiply by the size in px): advance, ascent above and descent below
    the baseline. ``axis`` is the height of the fraction bar / minus sign above the baseline."""

    axis: float
    rule: float

    def metrics(self, text: str, kind: str) -> tuple[float, float, float]: ...


@dataclass(frozen=True)
class GlyphOp:
    text: str
    kind: str  # the Sym kind; backends pick upright or italic from it
    x: float
    y: float  # baseline, y grows downwards
    size: float
    line: float = 0.0  # baseline of the text row it is read with (a superscript reads with its base)


@dataclass(frozen=True)
class RuleOp:
    """A horizontal bar (fraction bar) centred on ``y``."""

    x0: float
    x1: float
    y: float
    thickness: float


@dataclass(frozen=True)
class PathOp:
    """An open polyline (the radical sign)."""

    points: tuple[tuple[float, float], ...]
    thickness: float
    line: float = 0.0  # baseline of the row the radical's body sits on


@dataclass(frozen=True)
class DelimOp:
    """A stretched delimiter spanning ``top``..``bottom`` in a box of width ``width``."""

    char: str
    x: float
    top: float
    bottom: float
    width: float
    thickness: float
    line: float = 0.0


Op = GlyphOp | RuleOp | PathOp | DelimOp


@dataclass(frozen=True)
class Laid:
    width: float
    ascent: float
    descent: float
    ops: tuple[Op, ...]

    def shifted(self, dx: float, dy: float) -> tuple[Op, ...]:
        return tuple(_shift(op, dx, dy) for op in self.ops)


def _shift(op: Op, dx: float, dy: float) -> Op:
    if isinstance(op, GlyphOp):
        return GlyphOp(op.text, op.kind, op.x + dx, op.y + dy, op.size, op.line + dy)
    if isinstance(op, RuleOp):
        return RuleOp(op.x0 + dx, op.x1 + dx, op.y + dy, op.thickness)
    if isinstance(op, PathOp):
        return PathOp(tuple((x + dx, y + dy) for x, y in op.points), op.thickness, op.line + dy)
    return DelimOp(op.char, op.x + dx, op.top + dy, op.bottom + dy, op.width, op.thickness, op.line + dy)


SCRIPT_SCALE = 0.7
FRAC_SCALE = 0.9  # display-style fractions at the top level: full-size digits read better, as on paper
BIN_SPACE, REL_SPACE, PUNCT_SPACE, OP_SPACE = 0.22, 0.28, 0.17, 0.17


def _spacing(items: tuple[Node, ...], level: int) -> list[tuple[float, float]]:
    """Space (em) before and after each item, TeX-like: binary operators are unary at a row's start."""
    out = []
    prev_kind = None
    scale = max(0.5, 1.0 - 0.25 * level)  # numerators keep most of their spacing; exponents less
    for n, node in enumerate(items):
        kind = node.kind if isinstance(node, Sym) else "ord"
        before = after = 0.0
        if kind == "bin" and prev_kind not in (None, "bin", "rel", "open", "punct", "op"):
            before = after = BIN_SPACE * scale
        elif kind == "bin":
            kind = "ord"  # unary minus / plus
        elif kind == "rel":
            before = after = REL_SPACE * scale
        elif kind == "punct":
            after = PUNCT_SPACE * scale
        elif kind == "op":
            nxt = items[n + 1] if n + 1 < len(items) else None
            if not (isinstance(nxt, Sym) and nxt.kind == "open") and not isinstance(nxt, Fenced):
                after = OP_SPACE
        elif kind == "text":
            before = after = 0.0
        out.append((before, after))
        prev_kind = kind
    return out


def layout(node: Node, face: Face, size: float, level: int = 0) -> Laid:
    """Place ``node`` at size ``size`` px; the origin is the left end of the baseline."""
    if isinstance(node, Sym):
        adv, asc, desc = face.metrics(node.text, node.kind)
        return Laid(adv * size, asc * size, desc * size, (GlyphOp(node.text, node.kind, 0.0, 0.0, size),))
    if isinstance(node, Space):
        return Laid(node.em * size, 0.0, 0.0, ())
    if isinstance(node, Row):
        return _row(node.items, face, size, level)
    if isinstance(node, Frac):
        return _frac(node, face, size, level)
    if isinstance(node, Script):
        return _script(node, face, size, level)
    if isinstance(node, Sqrt):
        return _sqrt(node, face, size, level)
    return _fenced(node, face, size, level)


def _row(items: tuple[Node, ...], face: Face, size: float, level: int) -> Laid:
    x, asc, desc, ops = 0.0, 0.0, 0.0, []
    if not items:
        _, asc_x, _ = face.metrics("x", "var")
        return Laid(0.0, asc_x * size, 0.0, ())
    for node, (before, after) in zip(items, _spacing(items, level)):
        x += before * size
        part = layout(node, face, size, level)
        ops.extend(part.shifted(x, 0.0))
        x += part.width + after * size
        asc, desc = max(asc, part.ascent), max(desc, part.descent)
    return Laid(x, asc, desc, tuple(ops))


def _frac(node: Frac, face: Face, size: float, level: int) -> Laid:
    inner = size * (FRAC_SCALE if level == 0 else SCRIPT_SCALE)
    num = layout(node.num, face, inner, level + 1)
    den = layout(node.den, face, inner, level + 1)
    pad, gap, t = 0.12 * size, 0.16 * size, max(1.0, face.rule * size)
    width = max(num.width, den.width) + 2 * pad
    bar = -face.axis * size
    num_base = bar - gap - t / 2 - num.descent
    den_base = bar + gap + t / 2 + den.ascent
    ops = [RuleOp(0.0, width, bar, t), *num.shifted((width - num.width) / 2, num_base),
           *den.shifted((width - den.width) / 2, den_base)]
    return Laid(width + 0.08 * size, -(num_base - num.ascent), den_base + den.descent, tuple(ops))


def _script(node: Script, face: Face, size: float, level: int) -> Laid:
    base = layout(node.base, face, size, level)
    small = size * SCRIPT_SCALE
    ops = list(base.ops)
    width, asc, desc = base.width, base.ascent, base.descent
    script_w = 0.0
    if node.sup is not None:
        sup = layout(node.sup, face, small, level + 1)
        shift = max(0.42 * size, base.ascent - 0.55 * sup.ascent)
        ops.extend(_reads_with_base(sup.shifted(base.width + 0.04 * size, -shift), shift))
        script_w = sup.width + 0.04 * size
        asc = max(asc, shift + sup.ascent)
    if node.sub is not None:
        sub = layout(node.sub, face, small, level + 1)
        shift = max(0.2 * size, sub.ascent - 0.6 * size)
        ops.extend(_reads_with_base(sub.shifted(base.width + 0.02 * size, shift), -shift))
        script_w = max(script_w, sub.width + 0.02 * size)
        desc = max(desc, shift + sub.descent)
    return Laid(width + script_w + 0.05 * size, asc, desc, tuple(ops))


def _reads_with_base(ops: tuple[Op, ...], dy: float) -> list[Op]:
    return [replace(o, line=o.line + dy) if isinstance(o, GlyphOp | PathOp | DelimOp) else o for o in ops]


def reading_rows(ops: tuple[Op, ...]) -> str:
    """The symbols row by row (numerators, main row, denominators), left to right: what a line OCR reads.

    Radicals read as ``√`` and stretched delimiters as their character, at their left edge.
    """
    signs: list[tuple[float, float, float, str]] = []  # (line, x, size, text)
    for o in ops:
        if isinstance(o, GlyphOp) and o.text.strip():
            signs.append((o.line, o.x, o.size, o.text.replace(" ", "")))
        elif isinstance(o, PathOp):
            signs.append((o.line, o.points[0][0], max(y for _, y in o.points) - min(y for _, y in o.points), "√"))
        elif isinstance(o, DelimOp) and o.char:
            signs.append((o.line, o.x, o.bottom - o.top, o.char))
    signs.sort(key=lambda s: s[0])
    rows: list[list[tuple[float, float, float, str]]] = []
    for s in signs:
        if rows and s[0] - rows[-1][0][0] < 0.3 * s[2]:
            rows[-1].append(s)
        else:
            rows.append([s])
    return "".join(s[3] for row in rows for s in sorted(row, key=lambda s: s[1]))


def _sqrt(node: Sqrt, face: Face, size: float, level: int) -> Laid:
    body = layout(node.body, face, size, level)
    t = max(1.0, face.rule * size)
    top = -(body.ascent + 0.14 * size)
    bottom = body.descent + 0.04 * size
    hook = 0.62 * size
    mid = -face.axis * size
    pts = ((0.0, mid + 0.02 * size), (0.12 * size, mid - 0.06 * size), (0.3 * size, bottom),
           (0.55 * size, top), (hook + body.width + 0.08 * size, top))
    ops = (PathOp(pts, t), *body.shifted(hook, 0.0))
    return Laid(hook + body.width + 0.16 * size, -top + t, bottom + t, ops)


def _fenced(node: Fenced, face: Face, size: float, level: int) -> Laid:
    body = layout(node.body, face, size, level)
    _, p_asc, p_desc = face.metrics("(", "open")
    tall = body.ascent + body.descent > 1.4 * (p_asc + p_desc) * size  # exponents alone keep plain parens
    ops: list[Op] = []
    x = 0.0
    asc, desc = body.ascent, body.descent
    for which, char in (("left", node.left), ("right", node.right)):
        if which == "right":
            ops.extend(body.shifted(x, 0.0))
            x += body.width
        if not char:
            continue
        if tall:
            w = 0.38 * size
            top, bottom = -(body.ascent + 0.08 * size), body.descent + 0.08 * size
            ops.append(DelimOp(char, x, top, bottom, w, max(1.0, face.rule * size)))
            asc, desc = max(asc, -top), max(desc, bottom)
            x += w
        else:
            part = layout(Sym(char, "open" if which == "left" else "close"), face, size, level)
            ops.extend(part.shifted(x, 0.0))
            asc, desc = max(asc, part.ascent), max(desc, part.descent)
            x += part.width
    return Laid(x, asc, desc, tuple(ops))


def break_points(row: Row) -> list[int]:
    """Indices of top-level items a long line may break before: relations and binary operators."""
    return [n for n, item in enumerate(row.items)
            if n > 0 and isinstance(item, Sym) and item.kind in ("rel", "bin")]


def layout_lines(row: Row, face: Face, size: float, max_width: float, indent_em: float = 1.5) -> list[Laid]:
    """Lay out ``row``; if it is wider than ``max_width``, break it before top-level operators."""
    whole = layout(row, face, size)
    if whole.width <= max_width:
        return [whole]
    cuts = [0, *break_points(row), len(row.items)]
    lines: list[Laid] = []
    start = 0
    limit = max_width
    while start < len(row.items):
        end = None
        for c in cuts:
            if c <= start:
                continue
            if _row(row.items[start:c], face, size, 0).width <= limit or end is None:
                end = c
            else:
                break
        assert end is not None  # cuts always ends with len(items) > start
        lines.append(_row(row.items[start:end], face, size, 0))
        start = end
        limit = max_width - indent_em * size
    return lines
