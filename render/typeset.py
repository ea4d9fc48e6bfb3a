"""Restricted-LaTeX math: a whitelist parser into a box tree, and one layout engine for every glyph backend.

The subset is what school steps use: ``\\frac{}{}``, ``^{}``/``_{}``, ``\\sqrt{}``, ``\\left( \\right)``,
``\\times \\div \\pm \\cdot``, relations, ``^\\circ``, ``\\sin \\cos \\tan``, ``\\text{}``/``\\mathrm{}``,
Greek letters and ``\\pi``. Nothing is evaluated: unknown commands raise :class:`TypesetError`.
Layout works in pixels for a given font size and asks a :class:`Face` for glyph metrics, so the
printed backend (a TrueType math font) and the handwriting backend (handwriting fonts plus
hand-drawn strokes) share fractions, scripts and radicals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
from PIL import Image, ImageFont

MAX_LATEX_CHARS = 2000
MAX_DEPTH = 24

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "theta": "θ",
    "lambda": "λ", "mu": "μ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ",
    "omega": "ω", "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω", "Theta": "Θ", "Pi": "Π", "Phi": "Φ",
}  # fmt: skip
BIN_CMDS = {"times": "×", "div": "÷", "pm": "±", "mp": "∓", "cdot": "·"}
REL_CMDS = {"le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠", "approx": "≈",
            "Rightarrow": "⇒", "to": "→", "equiv": "≡"}
ORD_CMDS = {"circ": "°", "infty": "∞", "%": "%", "{": "{", "}": "}", "ldots": "…", "cdots": "⋯", "prime": "′",
            "$": "$", "#": "#", "&": "&", "_": "_", "degree": "°"}
FUNCTIONS = ("sin", "cos", "tan", "log", "ln", "exp", "sec", "csc", "cot", "min", "max")
SPACES = {",": 0.17, ":": 0.22, ";": 0.28, " ": 0.28, "quad": 1.0, "qquad": 2.0, "!": -0.17}
TEXT_CMDS = ("text", "mathrm", "textrm", "operatorname", "mathit", "textit")
DELIMS = {"(": "(", ")": ")", "[": "[", "]": "]", "|": "|", ".": "", "\\{": "{", "\\}": "}",
          "\\lbrace": "{", "\\rbrace": "}", "\\vert": "|"}
CHAR_KINDS = {"+": "bin", "-": "bin", "*": "bin", "=": "rel", "<": "rel", ">": "rel", ":": "rel",
              "(": "open", "[": "open", ")": "close", "]": "close", ",": "punct", ";": "punct"}
CHAR_MAP = {"-": "−", "*": "∗", "'": "′"}


class TypesetError(ValueError):
    """The LaTeX uses something outside the supported school-math subset, or is malformed."""


# ------------------------------------------------------------------------------------ box tree


@dataclass(frozen=True)
class Sym:
    """One glyph (or a function name / text run); ``kind`` drives spacing: ord, var, bin, rel, open, close,
    punct, op (function name), text."""

    text: str
    kind: str


@dataclass(frozen=True)
class Row:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Frac:
    num: Row
    den: Row


@dataclass(frozen=True)
class Script:
    base: Node
    sup: Row | None
    sub: Row | None


@dataclass(frozen=True)
class Sqrt:
    body: Row


@dataclass(frozen=True)
class Fenced:
    left: str
    body: Row
    right: str


@dataclass(frozen=True)
class Space:
    em: float


Node = Sym | Row | Frac | Script | Sqrt | Fenced | Space


# ------------------------------------------------------------------------------------ parser


def _tokens(latex: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(latex):
        c = latex[i]
        if c == "\\":
            j = i + 1
            while j < len(latex) and latex[j].isalpha():
                j += 1
            if j == i + 1:  # a control symbol: \, \% \{ \\ ...
                j = min(i + 2, len(latex))
            out.append(latex[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return out


class _Parser:
    def __init__(self, latex: str) -> None:
        if len(latex) > MAX_LATEX_CHARS:
            raise TypesetError(f"LaTeX is {len(latex)} characters; the limit is {MAX_LATEX_CHARS}")
        self.latex = latex
        self.toks = _tokens(latex)
        self.i = 0
        self.depth = 0

    def fail(self, why: str) -> TypesetError:
        return TypesetError(f"cannot typeset {self.latex!r}: {why}")

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise self.fail("it ends too early (an unclosed group or a command without its argument)")
        self.i += 1
        return tok

    def skip_spaces(self) -> None:
        while self.peek() is not None and self.peek().isspace():  # type: ignore[union-attr]
            self.i += 1

    def row(self, stop: tuple[str, ...] = ()) -> Row:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nesting is deeper than {MAX_DEPTH}")
        items: list[Node] = []
        while True:
            self.skip_spaces()
            tok = self.peek()
            if tok is None or tok in stop:
                break
            if tok == "}":
                raise self.fail("a '}' has no matching '{'")
            if tok in ("^", "_"):
                base = items.pop() if items else Sym("", "ord")
                items.extend(self.scripts(base))
                continue
            items.extend(self.atom())
        self.depth -= 1
        return Row(tuple(items))

    def scripts(self, base: Node) -> list[Node]:
        sup = sub = None
        while self.peek() in ("^", "_"):
            which = self.take()
            arg = self.argument()
            if which == "^":
                if sup is not None:
                    raise self.fail("a double superscript (x^a^b); add braces")
                sup = arg
            else:
                sub = arg
            self.skip_spaces()
        if sub is None and sup is not None and sup.items == (Sym("°", "ord"),):
            return [base, Sym("°", "ord")]  # 45^\circ: the degree sign is its own raised glyph
        return [Script(base, sup, sub)]

    def argument(self) -> Row:
        """A braced group or a single token (``x^2``, ``\\frac12``)."""
        self.skip_spaces()
        tok = self.peek()
        if tok == "{":
            self.take()
            body = self.row(stop=("}",))
            if self.peek() != "}":
                raise self.fail("a '{' is never closed")
            self.take()
            return body
        if tok is None:
            raise self.fail("a command is missing its argument")
        nodes = self.atom()
        return Row(tuple(nodes))

    def raw_group(self) -> str:
        self.skip_spaces()
        if self.take() != "{":
            raise self.fail("\\text and \\mathrm need a braced argument")
        depth, out = 1, []
        while True:
            tok = self.take()
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth == 0:
                    return "".join(out)
            out.append(ORD_CMDS.get(tok[1:], tok[1:]) if tok.startswith("\\") and len(tok) == 2 else tok)

    def delimiter(self) -> str:
        self.skip_spaces()
        tok = self.take()
        if tok not in DELIMS:
            raise self.fail(f"{tok!r} is not a delimiter \\left/\\right accept; use one of ( ) [ ] | .")
        return DELIMS[tok]

    def atom(self) -> list[Node]:
        tok = self.take()
        if tok == "{":
            body = self.row(stop=("}",))
            if self.peek() != "}":
                raise self.fail("a '{' is never closed")
            self.take()
            return [body]
        if not tok.startswith("\\"):
            if tok.isalpha():
                return [Sym(tok, "var")]
            return [Sym(CHAR_MAP.get(tok, tok), CHAR_KINDS.get(tok, "ord"))]
        name = tok[1:]
        if name in ("frac", "dfrac", "tfrac"):
            return [Frac(self.argument(), self.argument())]
        if name == "sqrt":
            if self.peek() == "[":
                raise self.fail("\\sqrt[n]{} (an n-th root) is not supported; write x^{1/n}")
            return [Sqrt(self.argument())]
        if name == "left":
            left = self.delimiter()
            body = self.row(stop=("\\right",))
            if self.peek() != "\\right":
                raise self.fail("a \\left has no matching \\right")
            self.take()
            return [Fenced(left, body, self.delimiter())]
        if name == "right":
            raise self.fail("a \\right has no matching \\left")
        if name in TEXT_CMDS:
            text = self.raw_group()
            return [Sym(text, "op" if name == "operatorname" else "text")]
        if name in FUNCTIONS:
            return [Sym(name, "op")]
        if name in BIN_CMDS:
            return [Sym(BIN_CMDS[name], "bin")]
        if name in REL_CMDS:
            return [Sym(REL_CMDS[name], "rel")]
        if name in GREEK:
            return [Sym(GREEK[name], "var")]
        if name in ORD_CMDS:
            return [Sym(ORD_CMDS[name], "ord")]
        if name in SPACES:
            return [Space(SPACES[name])]
        raise self.fail(f"unsupported command {tok}; supported are \\frac \\sqrt ^ _ \\left \\right "
                        "\\times \\div \\pm \\cdot \\le \\ge \\neq \\circ \\sin \\cos \\tan \\text \\mathrm,"
                        " Greek letters and spaces")


def parse(latex: str) -> Row:
    """Parse restricted LaTeX into a box tree (never evaluates anything)."""
    p = _Parser(latex)
    row = p.row()
    if p.peek() is not None:
        raise p.fail(f"unexpected {p.peek()!r}")
    return row


def reading(node: Node) -> str:
    """The glyphs in reading order (numerator before denominator), without spaces: an OCR reference."""
    if isinstance(node, Sym):
        return node.text.replace(" ", "")
    if isinstance(node, Row):
        return "".join(reading(n) for n in node.items)
    if isinstance(node, Frac):
        return reading(node.num) + reading(node.den)
    if isinstance(node, Script):
        return reading(node.base) + (reading(node.sup) if node.sup else "") + (reading(node.sub) if node.sub else "")
    if isinstance(node, Sqrt):
        return "√" + reading(node.body)
    if isinstance(node, Fenced):
        return node.left + reading(node.body) + node.right
    return ""


# ------------------------------------------------------------------------------------ inline math in prose
# Question text is prose with math written the way a keyboard allows (``3a^9``, ``t^(−1)``, ``3/4``,
# ``√2/2``). A word-level scanner turns those spots into box-tree nodes; nothing is evaluated and
# anything it does not recognise stays literal text, so a question never fails to render.

INLINE_FUNCTIONS = ("sin", "cos", "tan")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# A number over a whole number, not glued to letters or brackets on either side (``m/s`` and
# ``(x+1)/(x−1)`` stay inline: a school question writes unit rates and long quotients that way).
_NUMERIC_FRACTION = re.compile(r"(\d+(?:\.\d+)?)/(\d+)(?![\w(]|\.\d)")
_OPERAND_SIGNS = ("−", "-", "+")
MIXED_NUMBER_GAP_EM = 0.12


def _fraction_at(text: str, i: int) -> re.Match[str] | None:
    if i > 0 and (text[i - 1].isalnum() or text[i - 1] in ")./"):
        return None
    return _NUMERIC_FRACTION.match(text, i)


def _operand(text: str, i: int) -> tuple[Row, int] | None:
    """The exponent or radicand starting at ``i``: ``(…)`` (brackets dropped), a signed number or a letter."""
    if i >= len(text):
        return None
    if text[i] == "(":
        depth = 0
        for j in range(i, len(text)):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                inner = text[i + 1:j]
                return (_inline_row(inner) if inner else None), j + 1  # type: ignore[return-value]
        return None
    sign = text[i] if text[i] in _OPERAND_SIGNS else ""
    m = _NUMBER.match(text, i + len(sign))
    if m:
        return Row((Sym(CHAR_MAP.get(sign, sign) + m.group(), "text"),)), m.end()
    if not sign and text[i].isalpha():
        return Row((Sym(text[i], "text"),)), i + 1
    return None


def _split_base(plain: list[str]) -> Sym:
    """Take the base of a ``^`` off the end of a pending text run: a function name or one character."""
    run = "".join(plain)
    for name in INLINE_FUNCTIONS:
        if run.endswith(name) and not run[:-len(name)][-1:].isalpha():
            del plain[-len(name):]
            return Sym(name, "text")
    return Sym(plain.pop(), "text")


def _inline_row(text: str) -> Row:
    items: list[Node] = []
    plain: list[str] = []

    def flush() -> None:
        if plain:
            items.append(Sym("".join(plain), "text"))
            plain.clear()

    i = 0
    while i < len(text):
        c = text[i]
        frac = _fraction_at(text, i) if c.isdigit() else None
        if frac:
            flush()
            items.append(Frac(Row((Sym(frac.group(1), "text"),)), Row((Sym(frac.group(2), "text"),))))
            i = frac.end()
            continue
        if c == " ":
            flush()
            items.append(Space(MIXED_NUMBER_GAP_EM))
            i += 1
            continue
        if c == "√" and (found := _operand(text, i + 1)) and found[0] is not None:
            flush()
            node: Node = Sqrt(found[0])
            i = found[1]
            den = re.match(r"/(\d+)(?![\w(]|\.\d)", text[i:])
            if den:  # √2/2: the root over a number, as a stacked fraction
                node = Frac(Row((node,)), Row((Sym(den.group(1), "text"),)))
                i += den.end()
            items.append(node)
            continue
        if c == "^" and (plain or items) and (found := _operand(text, i + 1)) and found[0] is not None:
            base = _split_base(plain) if plain else items.pop()
            flush()
            items.append(Script(base, found[0], None))
            i = found[1]
            continue
        plain.append(c)
        i += 1
    flush()
    return Row(tuple(items))


def parse_inline(text: str) -> Row | None:
    """Keyboard math in one question token as a box tree, or None when it holds none (plain text).

    Handles exponents (``3a^9``, ``t^(−1)``, ``tan^2``), numeric fractions (``3/4``, a mixed number
    ``1 5/7``) and roots (``√2``, ``√2/2``); letters stay upright, like the prose around them.
    """
    if len(text) > MAX_LATEX_CHARS:
        raise TypesetError(f"question token is {len(text)} characters; the limit is {MAX_LATEX_CHARS}")
    if "^" not in text and "√" not in text and "/" not in text:
        return None
    row = _inline_row(text)
    if all(isinstance(n, Sym) for n in row.items):
        return None
    return row


# ------------------------------------------------------------------------------------ layout


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


# ------------------------------------------------------------------------------------ ink backend
# Everything is drawn as coverage into one uint8 "ink" layer, then laid onto the paper in one pass:
# glyph masks come from FreeType (via Pillow, cached per font/size/text), strokes from OpenCV's
# anti-aliased polylines. Each mark belongs to a box key, and the layer records the pixel extent of
# every key's ink, so layout boxes are measured from the ink itself rather than predicted.


def _matplotlib_font(name: str) -> str:
    from matplotlib import get_data_path  # DejaVu and STIX ship inside matplotlib's wheel

    return str(Path(get_data_path()) / "fonts" / "ttf" / name)


SANS = _matplotlib_font("DejaVuSans.ttf")
SANS_BOLD = _matplotlib_font("DejaVuSans-Bold.ttf")
SANS_ITALIC = _matplotlib_font("DejaVuSans-Oblique.ttf")


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


# ------------------------------------------------------------------------------------ printed face


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
