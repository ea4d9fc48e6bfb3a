"""Restricted LaTeX and keyboard math parsed into a box tree; nothing is ever evaluated.

The subset is what school steps use: ``\\frac{}{}``, ``^{}``/``_{}``, ``\\sqrt{}``, ``\\left( \\right)``,
``\\times \\div \\pm \\cdot``, relations, ``^\\circ``, ``\\sin \\cos \\tan``, ``\\text{}``/``\\mathrm{}``,
Greek letters and ``\\pi``. Unknown commands raise :class:`TypesetError`. The tree is laid out by
:mod:`render.mathlayout` and inked by :mod:`render.ink`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def _bracketed(text: str, i: int) -> tuple[str, int] | None:
    """What the bracket opening at ``text[i]`` holds and the index after its match, or None when it never closes."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1:j], j + 1
    return None


def _operand(text: str, i: int) -> tuple[Row, int] | None:
    """The exponent or radicand starting at ``i``: ``(…)`` (brackets dropped), a signed number or a letter."""
    if i >= len(text):
        return None
    if text[i] == "(":
        if (found := _bracketed(text, i)) is None:
            return None
        inner, end = found
        return (_inline_row(inner) if inner else None), end  # type: ignore[return-value]
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


# ------------------------------------------------------------------------------------ plain math in sentence steps
# A sentence step ("So 180 − 88 = 92°.") holds its math in plain syntax, the grammar of ``Step.text``:
# ``×`` ``÷`` ``−``, ``a^(n + 1)``, ``3/4``, ``√(x + 1)``. The whole claim has its LaTeX (``Step.latex``);
# any other fragment is typeset from its plain text here: numbers upright, single letters italic,
# operators spaced as in LaTeX, numeric fractions stacked, powers raised, roots drawn. Nothing is
# evaluated, and anything not recognised is set as it is written, so a fragment never fails to render.

PLAIN_KINDS = {"+": "bin", "-": "bin", "−": "bin", "×": "bin", "÷": "bin", "±": "bin", "·": "bin", "∗": "bin",
               "=": "rel", "<": "rel", ">": "rel", "≤": "rel", "≥": "rel", "≠": "rel", "≈": "rel", ":": "rel",
               "→": "rel", "⇒": "rel", "(": "open", "[": "open", ")": "close", "]": "close", ",": "punct",
               ";": "punct"}  # fmt: skip
UNIT_GAP_EM = 0.17  # a thin space between a number and its unit (12 cm), as \, in LaTeX
_WORD = re.compile(r"[^\W\d_]+")


def _plain_operand(text: str, i: int) -> tuple[Row, int] | None:
    """An exponent or radicand at ``i``: ``(…)`` (brackets dropped), a signed number or a letter."""
    if i >= len(text):
        return None
    if text[i] == "(":
        if (found := _bracketed(text, i)) is None:
            return None
        inner, end = found
        return (_plain_row(inner), end) if inner.strip() else None
    sign = text[i] if text[i] in _OPERAND_SIGNS else ""
    m = _NUMBER.match(text, i + len(sign))
    if m:
        return Row((Sym("−" + m.group() if sign else m.group(), "ord"),)), m.end()
    if not sign and text[i].isalpha():
        return Row((Sym(text[i], "var"),)), i + 1
    return None


def _plain_row(text: str) -> Row:
    items: list[Node] = []
    gap = False  # a space since the last item: kept between two operands (12 cm, 1 5/7)
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            gap = bool(items)
            i += 1
            continue
        node: Node | None = None
        if c.isdigit() and (frac := _fraction_at(text, i)):
            node = Frac(Row((Sym(frac.group(1), "ord"),)), Row((Sym(frac.group(2), "ord"),)))
            i = frac.end()
        elif c.isdigit():
            m = _NUMBER.match(text, i)
            node, i = Sym(m.group(), "ord"), m.end()  # type: ignore[union-attr]
        elif c == "√" and (found := _plain_operand(text, i + 1)):
            node, i = Sqrt(found[0]), found[1]
            den = re.match(r"/(\d+)(?![\w(]|\.\d)", text[i:])
            if den:  # √2/2: the root over a number, as a stacked fraction
                node, i = Frac(Row((node,)), Row((Sym(den.group(1), "ord"),))), i + den.end()
        elif c == "^" and items and (found := _plain_operand(text, i + 1)):
            base = items.pop()
            items.append(Script(base, found[0], None))
            i, gap = found[1], False
            continue
        elif c.isalpha():
            word = _WORD.match(text, i).group()  # type: ignore[union-attr]
            after_unit = len(items) > 1 and items[-1] == Sym("/", "ord") and _is_unit(items[-2])
            if len(word) == 1 and not after_unit:  # a unit's denominator (km/h) stays upright
                node = Sym(word, "var")
            elif word in FUNCTIONS:
                node = Sym(word, "op")
            else:  # a unit or a word inside the claim (cm, km, cups): upright, as \text{}
                node = Sym(word, "text")
            i += len(word)
        else:
            node = Sym(CHAR_MAP.get(c, c) if c != "-" else "−", PLAIN_KINDS.get(c, "ord"))
            i += 1
        if gap and _operand_like(items[-1]) and _operand_like(node):
            items.append(Space(MIXED_NUMBER_GAP_EM if isinstance(node, Frac) else UNIT_GAP_EM))
        items.append(node)
        gap = False
    return Row(tuple(items))


def _is_unit(node: Node) -> bool:
    return isinstance(node, Sym) and node.kind == "text" or isinstance(node, Script) and _is_unit(node.base)


def _operand_like(node: Node) -> bool:
    return not (isinstance(node, Sym) and node.kind in ("bin", "rel", "open", "close", "punct"))


def parse_plain(text: str) -> Row:
    """A math fragment in plain syntax (``180 − 88 = 92°``, ``a^(3 × 3)``, ``3/4``) as a box tree.

    >>> parse_plain("x^2 = 9").items[1]
    Sym(text='=', kind='rel')
    """
    if len(text) > MAX_LATEX_CHARS:
        raise TypesetError(f"math fragment is {len(text)} characters; the limit is {MAX_LATEX_CHARS}")
    return _plain_row(text)
