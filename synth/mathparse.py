"""Whitelist parsing of untrusted math text into SymPy values, the plain-text writer, and equivalence."""

# Safety model (DESIGN.md section 9): text is tokenized and parsed by hand, and every value is
# built from SymPy constructors. No string ever reaches eval, exec, sympify or parse_expr.
# Work is bounded by limits on length, nesting, literal digits and exponent size, by a cap on
# the size of every number built, and by a cooperative time check in the lexer and parser.
#
# Conventions worth knowing (each chosen for school answers):
# - `25%` is 25/100; `3.25` is exactly 13/4; `1,234` is 1234 only with groups of three digits.
# - Implicit multiplication binds like `*`: `1/2x` is x/2, `x^2y` is x**2*y, `2 3` is an error.
# - A run of letters reads as known names (sin, pi, theta, ...) and single-letter variables,
#   at most three in a row (`xyz`); longer runs, units (`cm`) and words (`and`) are errors.
# - `e` is Euler's number, `i` and `I` are ordinary variables; plain `lambda` is refused
#   (write `\lambda` or `λ`); plain `Pi` is the constant pi.
# - `log` and `ln` are natural logs; `log_10(x)`, `log_{2} 8` and `log2(x)` give a base.
# - Functions take parentheses or a following product: `sin 2x` is sin(2x), `√2x` is sqrt(2)*x.
# - `sin^2 x` is sin(x)**2 and `sin^{-1} x` is asin(x).
# - The degree sign is dropped (`30°` is 30), except inside trig arguments, where it converts
#   to radians (`sin 30°` is 1/2).
# - One relation at most: `x = 5` is Eq(x, 5) built unevaluated, so `2+2=5` stays a relation.
#   Chained relations (`a < b < c`) are errors. `!=` is "not equal", so write `5! = 120`.
# - `\text{...}` is refused (units and words cannot be checked); `\boxed{...}` is unwrapped.

from __future__ import annotations

import math
import re
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypedDict, TypeVar, Unpack

import sympy
from sympy.core.relational import Relational
from sympy.printing.str import StrPrinter

from synth._bounded import call as _bounded_call

__all__ = [
    "MathParseError",
    "ParseLimits",
    "equivalent",
    "parse_math",
    "parse_number",
    "to_text",
    "try_parse",
]

T = TypeVar("T")


class MathParseError(ValueError):
    """Text that is not math we accept; the message says what and where."""

    def __init__(self, message: str, position: int | None = None) -> None:
        self.reason = message
        self.position = position
        super().__init__(message if position is None else f"{message} at position {position}")


class ParseLimits(TypedDict, total=False):
    """Keyword limits shared by parse_math, parse_number and try_parse."""

    max_length: int
    max_depth: int
    max_exponent: int
    max_digits: int
    timeout_s: float  # CPU seconds of the parsing thread, so machine load does not trip it


# Largest number (in decimal digits) any construction may produce: big enough for school work,
# fast for sympy's integer arithmetic, and below Python's int-to-str limit (4300 digits) so
# every parsed value can be printed.
_MAX_RESULT_DIGITS = 4_000
_MAX_RESULT_BITS = int(_MAX_RESULT_DIGITS / math.log10(2))
_MAX_FACTORIAL = 1000
# More single letters in a row than this is a word, not a product of variables.
_MAX_LETTER_RUN = 3

_DIGITS = "0123456789"
_MINUS_SIGNS = "-\u2212\u2013\u2010"  # hyphen-minus, minus sign, en dash, hyphen

# Plain-text function names -> canonical names (the keys of _SYMPY_FUNCTIONS, plus roots).
_FUNCTION_NAMES = {
    "sqrt": "sqrt", "cbrt": "cbrt", "abs": "abs", "exp": "exp", "ln": "log", "log": "log",
    "sin": "sin", "cos": "cos", "tan": "tan", "cot": "cot", "sec": "sec", "csc": "csc",
    "asin": "asin", "acos": "acos", "atan": "atan", "acot": "acot", "asec": "asec",
    "acsc": "acsc", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arccot": "acot",
    "arcsec": "asec", "arccsc": "acsc",
}  # fmt: skip
_SYMPY_FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "abs": sympy.Abs, "log": sympy.log,
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan,
    "cot": sympy.cot, "sec": sympy.sec, "csc": sympy.csc,
    "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan,
    "acot": sympy.acot, "asec": sympy.asec, "acsc": sympy.acsc,
}  # fmt: skip
_INVERSE_TRIG = {"sin": "asin", "cos": "acos", "tan": "atan", "cot": "acot", "sec": "asec", "csc": "acsc"}
_TRIG = frozenset(_INVERSE_TRIG)

_GREEK_LOWER = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
    "sigma tau upsilon phi chi psi omega"
).split()
# Only the capitals that do not look like Latin letters have their own LaTeX command.
_GREEK_UPPER = "Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split()
# `lambda` is a Python keyword and `omicron` reads as o; pi is a constant, not a symbol.
_PLAIN_GREEK = frozenset(_GREEK_LOWER + _GREEK_UPPER) - {"lambda", "omicron", "pi", "Pi"}
_LATEX_GREEK = frozenset(_GREEK_LOWER + _GREEK_UPPER) - {"pi"}
_LATEX_GREEK_VARIANTS = {"varepsilon": "epsilon", "vartheta": "theta", "varphi": "phi",
                         "varrho": "rho", "varsigma": "sigma", "varpi": "pi"}  # fmt: skip


def _unicode_greek() -> dict[str, str]:
    """Map Greek code points to the symbol names LaTeX would use (λ -> 'lambda')."""
    table: dict[str, str] = {}
    for code in range(0x391, 0x3CA):
        parts = unicodedata.name(chr(code), "").split()
        if len(parts) != 4 or parts[0] != "GREEK" or parts[2] != "LETTER":
            continue
        name = "lambda" if parts[3] == "LAMDA" else parts[3].lower()
        if parts[1] == "CAPITAL":
            name = name.capitalize()
            if name not in _GREEK_UPPER:
                continue  # capital Alpha, Beta, ... would be mistaken for Latin letters
        if name in _GREEK_LOWER or name in _GREEK_UPPER:
            table[chr(code)] = name
    table.update({"\u03d5": "phi", "\u03d1": "theta", "\u03f5": "epsilon"})
    return table


_UNICODE_GREEK = _unicode_greek()

# Names a letter run may contain, matched longest first: kind and value of the token.
_WORD_NAMES: dict[str, tuple[str, Any]] = {
    **{name: ("func", canonical) for name, canonical in _FUNCTION_NAMES.items()},
    **{name: ("sym", name) for name in _PLAIN_GREEK},
    "pi": ("const", sympy.pi),
    "Pi": ("const", sympy.pi),
    "PI": ("const", sympy.pi),
}
# Names that would otherwise silently become a product of letters (cosh -> cos(h)).
_UNSUPPORTED_NAMES = frozenset(
    "sinh cosh tanh coth sech csch arsinh arcosh artanh max min gcd lcm mod floor ceil sgn "
    "sign lim sum int det deg rad lg".split()
)
_MAX_NAME = max(map(len, [*_WORD_NAMES, *_UNSUPPORTED_NAMES]))
# Whole runs that read as a product of letters but are really words or units.
_REFUSED_WORDS = {
    "lambda": "'lambda' is not accepted in plain text; write \\lambda or λ for the Greek letter",
    **{
        word: f"{word!r} looks like a unit; units are not supported"
        for word in "cm mm km kg mg ml hr hrs ft yd lb lbs oz mph kph".split()
    },
    **{
        word: f"{word!r} is a word, not math"
        for word in "and or not is if def del for try the yes no one two six ten sine cosine".split()
    },
}

# LaTeX commands with a fixed token: name -> (kind, value).
_LATEX_TOKENS: dict[str, tuple[str, Any]] = {
    **{name: ("frac", None) for name in ("frac", "dfrac", "tfrac", "cfrac")},
    "boxed": ("boxed", None),
    **{name: ("op", "*") for name in ("cdot", "times", "ast")},
    "div": ("op", "/"),
    **{name: ("rel", "<=") for name in ("le", "leq", "leqslant")},
    **{name: ("rel", ">=") for name in ("ge", "geq", "geqslant")},
    **{name: ("rel", "!=") for name in ("ne", "neq")},
    "lt": ("rel", "<"),
    "gt": ("rel", ">"),
    "pi": ("const", sympy.pi),
    "degree": ("deg", None),
    **{name: ("bar", "|") for name in ("vert", "lvert", "rvert", "mid")},
    **{name: ("func", _FUNCTION_NAMES[name]) for name in
       ("sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "ln", "log", "exp")},
    **{name: ("sym", name) for name in _LATEX_GREEK},
    **{name: ("sym", base) for name, base in _LATEX_GREEK_VARIANTS.items() if base != "pi"},
    "varpi": ("const", sympy.pi),
}  # fmt: skip
# Commands that only affect layout.
_LATEX_IGNORED = frozenset(
    ", ; : ! ( ) [ ] quad qquad displaystyle textstyle left right big Big bigl bigr Bigl Bigr".split()
) | {" "}
_LATEX_WORDS = frozenset("text mathrm textrm mbox operatorname mathbf textbf mathit".split())

# Operator spellings, longest first so `**` wins over `*` and `<=` over `<`.
_OPERATORS: list[tuple[str, str, str]] = sorted(
    [
        ("**", "op", "^"), ("^", "op", "^"), ("+", "op", "+"),
        *((sign, "op", "-") for sign in _MINUS_SIGNS),
        ("*", "op", "*"), ("\u00d7", "op", "*"), ("\u00b7", "op", "*"), ("\u22c5", "op", "*"),
        ("\u2219", "op", "*"), ("/", "op", "/"), ("\u00f7", "op", "/"), ("\u2215", "op", "/"),
        ("!", "op", "!"), ("%", "op", "%"),
        ("==", "rel", "="), ("=", "rel", "="), ("!=", "rel", "!="), ("\u2260", "rel", "!="),
        ("<=", "rel", "<="), ("\u2264", "rel", "<="), ("\u2a7d", "rel", "<="), ("<", "rel", "<"),
        (">=", "rel", ">="), ("\u2265", "rel", ">="), ("\u2a7e", "rel", ">="), (">", "rel", ">"),
    ],
    key=lambda entry: -len(entry[0]),
)  # fmt: skip
# The same spellings grouped by first character, in the same order: the lexer tries only those
# that can match, with the same result as trying them all.
_OPERATORS_BY_FIRST = {first: [entry for entry in _OPERATORS if entry[0][0] == first]
                       for first in dict.fromkeys(entry[0][0] for entry in _OPERATORS)}
_BRACKETS = {"(": ")", "[": "]", "{": "}"}
_SUPERSCRIPTS = {
    **{ch: str(d) for d, ch in enumerate("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")},
    "\u207b": "-",
    "\u207a": "+",
}
_RELATIONS: dict[str, type[Relational]] = {
    "=": sympy.Eq, "!=": sympy.Ne, "<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge,
}  # fmt: skip
_UNDEFINED = (sympy.zoo, sympy.nan, sympy.oo, -sympy.oo)
_UNDEFINED_IDS = frozenset(map(id, _UNDEFINED))  # identity, as in make(): the values live as long as the module
_COMMAND = re.compile(r"\\([A-Za-z]+|.)", re.DOTALL)
_SUBSCRIPT_BRACED = re.compile(r"\{\s*([A-Za-z0-9]+)\s*\}")
_DEGREE_AFTER_CARET = re.compile(r"\s*(\{\s*\\circ\s*\}|\\circ(?![A-Za-z]))")


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # num sym const func op rel open close bar deg sup frac boxed eof
    pos: int
    text: str
    value: Any = None
    base: sympy.Expr | None = None  # log base from `log_2` or `log10(`
    latex: bool = False  # \sqrt, which may take an index: \sqrt[3]{x}


@dataclass(frozen=True, slots=True)
class _Limits:
    max_length: int
    max_depth: int
    max_exponent: int
    max_digits: int
    timeout_s: float


class _Clock:
    """Cooperative time bound: every lexer step and parser construction calls tick().

    It counts the CPU time of the parsing thread (``time.thread_time``), not wall time: a
    pathological input burns CPU and is still stopped, while a busy machine (other processes,
    other threads, a paused process) can no longer make an ordinary line fail at random and turn
    a clean solution into a flaky verification.

    The clock is read on the first tick and every ``CHECK_EVERY``-th after it: reading it costs
    more than the step it guards (~0.6 µs), and the bound is still kept to within a few steps.
    """

    CHECK_EVERY = 8

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.deadline = time.thread_time() + timeout_s
        self.ticks = -1

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks % self.CHECK_EVERY == 0 and time.thread_time() > self.deadline:
            raise MathParseError(f"CPU time limit of {self.timeout_s} s exceeded (raise timeout_s for longer input)")


class _Lexer:
    def __init__(self, text: str, end: int, limits: _Limits, clock: _Clock) -> None:
        self.text = text
        self.end = end
        self.limits = limits
        self.clock = clock
        self.i = 0
        self.out: list[_Token] = []

    def tokens(self) -> list[_Token]:
        while self.i < self.end:
            self.clock.tick()
            ch = self.text[self.i]
            if ch.isspace() or ch in "$~":
                self.i += 1
            elif ch == "\\":
                self._command()
            elif ch in _DIGITS or (ch == "." and self._char(self.i + 1) in _DIGITS):
                self._number()
            elif ch.isascii() and ch.isalpha():
                self._word()
            elif ch in _UNICODE_GREEK:
                self.i += 1
                if ch == "\u03c0":
                    self._named("const", sympy.pi, self.i - 1, ch)
                else:
                    self._named("sym", _UNICODE_GREEK[ch], self.i - 1, ch)
            elif ch in _SUPERSCRIPTS:
                self._superscript()
            else:
                self._symbol_char(ch)
        self.out.append(_Token("eof", self.end, "end of input"))
        return self.out

    def _char(self, index: int) -> str:
        # A sentinel, not "", because `"" in "0123456789"` is True.
        return self.text[index] if index < self.end else "\x00"

    def _emit(self, kind: str, start: int, value: Any = None) -> None:
        self.out.append(_Token(kind, start, self.text[start : self.i], value))

    def _symbol_char(self, ch: str) -> None:
        start = self.i
        if ch in _BRACKETS:
            self.i += 1
            self._emit("open", start, ch)
        elif ch in ")]}":
            self.i += 1
            self._emit("close", start, ch)
        elif ch == "|":
            self.i += 1
            self._emit("bar", start, "|")
        elif ch == "\u00b0":
            self.i += 1
            self._emit("deg", start)
        elif ch in "\u221a\u221b":
            self.i += 1
            self._emit("func", start, "sqrt" if ch == "\u221a" else "cbrt")
        else:
            for spelling, kind, value in _OPERATORS_BY_FIRST.get(ch, ()):
                if self.text.startswith(spelling, start, self.end):
                    self.i += len(spelling)
                    if value == "^" and self._degree_after_caret():
                        self._emit("deg", start)
                    else:
                        self._emit(kind, start, value)
                    return
            if ch == ",":
                raise MathParseError("unexpected ',' (lists and decimal commas are not supported)", start)
            raise MathParseError(f"unexpected character {ch!r}", start)

    def _degree_after_caret(self) -> bool:
        """Consume `\\circ` or `{\\circ}` after a caret: the LaTeX degree sign."""
        match = _DEGREE_AFTER_CARET.match(self.text, self.i, self.end)
        if match is None:
            return False
        self.i = match.end()
        return True

    def _command(self) -> None:
        start = self.i
        match = _COMMAND.match(self.text, start, self.end)
        if match is None:
            raise MathParseError("lone backslash", start)
        name = match.group(1)
        self.i = match.end()
        if name in _LATEX_IGNORED:
            if name in ("left", "right") and self._char(self.i) == ".":
                self.i += 1  # \left. and \right. are invisible delimiters
            return
        if name in ("{", "}"):
            self._emit("open" if name == "{" else "close", start, name)
        elif name == "%":
            self._emit("op", start, "%")
        elif name == "sqrt":
            self._named("func", "sqrt", start, latex=True)
        elif name in _LATEX_TOKENS:
            kind, value = _LATEX_TOKENS[name]
            if kind in ("sym", "const", "func"):
                self._named(kind, value, start)
            else:
                self._emit(kind, start, value)
        elif name in _LATEX_WORDS:
            raise MathParseError(f"\\{name}{{...}} is not supported (remove words and units)", start)
        elif name == "circ":
            raise MathParseError("\\circ is only understood as a degree sign, as ^\\circ", start)
        else:
            raise MathParseError(f"unsupported LaTeX command \\{name}", start)

    def _digits(self) -> str:
        start = self.i
        while self.i < self.end and self.text[self.i] in _DIGITS:
            self.i += 1
        return self.text[start : self.i]

    def _number(self) -> None:
        start = self.i
        whole = self._digits()
        while self._char(self.i) == ",":
            group = self.text[self.i + 1 : min(self.i + 4, self.end)]
            is_group = len(group) == 3 and all(c in _DIGITS for c in group) and self._char(self.i + 4) not in _DIGITS
            # The leading group has 1-3 digits; "1234,567" and "1,23" are ambiguous.
            if not is_group or (len(whole) > 3 and "," not in self.text[start : self.i]):
                raise MathParseError("ambiguous comma in number (thousands need groups of exactly 3 digits)", self.i)
            whole += group
            self.i += 4
        fraction = ""
        if self._char(self.i) == ".":
            self.i += 1
            fraction = self._digits()
            if not fraction:
                raise MathParseError("decimal point must be followed by digits", self.i - 1)
        digit_count = len(whole) + len(fraction)
        if digit_count > self.limits.max_digits:
            raise MathParseError(
                f"number has {digit_count} digits; the limit is max_digits={self.limits.max_digits}", start
            )
        exponent = self._scientific_exponent()
        value = sympy.Rational(int(whole + fraction or "0"), 10 ** len(fraction))
        if exponent:
            value = value * sympy.Rational(10) ** exponent
        self._emit("num", start, value)

    def _scientific_exponent(self) -> int:
        """Read `e3`, `E-3`, `e+12` after a mantissa; 0 when there is none (then `2e` is 2*e)."""
        if self._char(self.i) not in "eE":
            return 0
        j = self.i + 1
        sign = 1
        if self._char(j) in "+" + _MINUS_SIGNS:
            sign = 1 if self._char(j) == "+" else -1
            j += 1
        if self._char(j) not in _DIGITS:
            return 0
        at = self.i
        self.i = j
        digits = self._digits()
        # Compare lengths first so a thousand-digit exponent is never converted to an int; the
        # result cap holds even when a caller raises max_exponent.
        limit = min(self.limits.max_exponent, _MAX_RESULT_DIGITS)
        if len(digits.lstrip("0")) > len(str(limit)) or int(digits) > limit:
            raise MathParseError(f"scientific exponent exceeds the limit of {limit}", at)
        return sign * int(digits)

    def _superscript(self) -> None:
        start = self.i
        chars = []
        while self.i < self.end and self.text[self.i] in _SUPERSCRIPTS:
            chars.append(_SUPERSCRIPTS[self.text[self.i]])
            self.i += 1
        raw = "".join(chars)
        sign = -1 if raw.startswith("-") else 1
        digits = raw.lstrip("+-")
        if not digits or not digits.isdigit() or len(raw) - len(digits) > 1:
            raise MathParseError("superscript must be digits with an optional sign", start)
        if len(digits) > self.limits.max_digits:
            raise MathParseError(f"superscript has more than max_digits={self.limits.max_digits} digits", start)
        self._emit("sup", start, sympy.Integer(sign * int(digits)))

    def _word(self) -> None:
        start = self.i
        while self.i < self.end and self.text[self.i].isascii() and self.text[self.i].isalpha():
            self.i += 1
        word = self.text[start : self.i]
        refusal = _REFUSED_WORDS.get(word) or _REFUSED_WORDS.get(word.lower())
        if refusal:
            raise MathParseError(refusal, start)
        run_end = self.i
        items: list[tuple[int, str, str, Any]] = []  # offset, text, kind, value
        k = 0
        singles = 0
        while k < len(word):
            name = next(
                (
                    word[k : k + n]
                    for n in range(min(_MAX_NAME, len(word) - k), 1, -1)
                    if word[k : k + n] in _WORD_NAMES or word[k : k + n] in _UNSUPPORTED_NAMES
                ),
                None,
            )
            if name in _UNSUPPORTED_NAMES:
                raise MathParseError(f"{name!r} is not a supported function", start + k)
            if name is None:
                letter = word[k]
                singles += 1
                if singles > _MAX_LETTER_RUN:
                    raise MathParseError(
                        f"unknown word {word!r} (variables are single letters, at most "
                        f"{_MAX_LETTER_RUN} in a row)",
                        start,
                    )
                items.append((k, letter, *(("const", sympy.E) if letter == "e" else ("sym", letter))))
                k += 1
            else:
                singles = 0
                items.append((k, name, *_WORD_NAMES[name]))
                k += len(name)
        for index, (offset, text, kind, value) in enumerate(items):
            if index == len(items) - 1:
                self.i = run_end
                self._named(kind, value, start + offset)
            else:
                self.out.append(_Token(kind, start + offset, text, value))

    def _named(self, kind: str, value: Any, start: int, text: str | None = None, latex: bool = False) -> None:
        """Emit a symbol, constant or function, reading a subscript or log base after it."""
        subscript = self._subscript()
        if subscript is None and kind == "func" and value == "log":
            subscript = self._log_digits_base()
        base: sympy.Expr | None = None
        if subscript is not None:
            if kind == "func" and value == "log":
                if subscript.isdigit():
                    base = sympy.Integer(int(subscript))
                else:
                    base = sympy.E if subscript == "e" else sympy.Symbol(subscript)
            elif kind == "func":
                raise MathParseError(f"function {value} cannot take a subscript", start)
            else:
                root = value if kind == "sym" else ("pi" if value is sympy.pi else "e")
                kind, value = "sym", f"{root}_{subscript}"
        token_text = text if text is not None else self.text[start : self.i]
        self.out.append(_Token(kind, start, token_text, value, base, latex))

    def _subscript(self) -> str | None:
        if self._char(self.i) != "_":
            return None
        at = self.i
        self.i += 1
        ch = self._char(self.i)
        if ch == "{":
            match = _SUBSCRIPT_BRACED.match(self.text, self.i, self.end)
            if match is None:
                raise MathParseError("subscript in braces must be letters or digits", at)
            self.i = match.end()
            text = match.group(1)
        elif ch in _DIGITS:
            text = self._digits()
        elif ch.isascii() and ch.isalpha():
            self.i += 1
            text = ch
        else:
            raise MathParseError("subscript must be letters or digits", at)
        if len(text) > self.limits.max_digits:
            raise MathParseError("subscript is too long", at)
        return text

    def _log_digits_base(self) -> str | None:
        """`log2(x)` and `log10(x)` name a base; `log 2` (with a space) is still log of 2."""
        j = self.i
        while j < self.end and self.text[j] in _DIGITS:
            j += 1
        if j == self.i or self._char(j) != "(" or j - self.i > self.limits.max_digits:
            return None
        digits = self.text[self.i : j]
        self.i = j
        return digits


class _Parser:
    def __init__(self, tokens: list[_Token], limits: _Limits, clock: _Clock) -> None:
        self.toks = tokens
        self.k = 0
        self.limits = limits
        self.clock = clock
        self.depth = 0
        # True while directly inside |...|, where a bar closes instead of opening a factor.
        self.in_bars: list[bool] = [False]
        self.trig_args = 0

    # -- token helpers -------------------------------------------------------------------
    @property
    def tok(self) -> _Token:
        return self.toks[self.k]

    def advance(self) -> _Token:
        self.clock.tick()
        token = self.toks[self.k]
        if token.kind != "eof":
            self.k += 1
        return token

    def at_op(self, *values: str) -> bool:
        return self.tok.kind == "op" and self.tok.value in values

    def unexpected(self, expected: str) -> MathParseError:
        token = self.tok
        found = "end of input" if token.kind == "eof" else repr(token.text)
        return MathParseError(f"expected {expected}, found {found}", token.pos)

    @contextmanager
    def nested(self, pos: int) -> Iterator[None]:
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise MathParseError(f"nesting deeper than max_depth={self.limits.max_depth}", pos)
        try:
            yield
        finally:
            self.depth -= 1

    # -- guarded construction ------------------------------------------------------------
    def make(self, pos: int, build: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self.clock.tick()
        try:
            value = build(*args, **kwargs)
        except MathParseError:
            raise
        except Exception as exc:  # sympy raises many types on odd input; callers get one type
            raise MathParseError(f"cannot build this expression ({type(exc).__name__}: {exc})", pos) from exc
        # sympy flattens Add and Mul, so a new number or undefined value is a direct argument.
        for part in (value, *value.args):
            if id(part) in _UNDEFINED_IDS:  # singletons: identity is exact, == costs a sympify
                raise MathParseError("expression is undefined (division by zero or similar)", pos)
            if isinstance(part, sympy.Rational) and max(abs(part.p), part.q).bit_length() > _MAX_RESULT_BITS:
                raise MathParseError(f"number with more than {_MAX_RESULT_DIGITS} digits", pos)
        return value

    def power(self, base: sympy.Expr, exponent: sympy.Expr, pos: int) -> sympy.Expr:
        """Build base**exponent, refusing anything sympy would turn into a huge number."""
        if exponent.is_number:
            size = _magnitude(exponent)
            if size > self.limits.max_exponent:
                raise MathParseError(
                    f"exponent {_short(exponent)} exceeds the limit max_exponent={self.limits.max_exponent}", pos
                )
            # sympy expands rational powers eagerly, also through products ((10^60 x)^1000).
            if size * _decimal_scale(base) > _MAX_RESULT_DIGITS:
                raise MathParseError(f"power would have more than {_MAX_RESULT_DIGITS} digits", pos)
        return self.make(pos, sympy.Pow, base, exponent)

    def root(self, radicand: sympy.Expr, index: int, pos: int) -> sympy.Expr:
        # School roots of negative numbers are real for odd index: cbrt(-8) = -2.
        if index % 2 == 1 and radicand.is_number and radicand.is_negative:
            return self.make(pos, sympy.Mul, -1, self.power(-radicand, sympy.Rational(1, index), pos))
        return self.power(radicand, sympy.Rational(1, index), pos)

    def apply(self, name: str, arg: sympy.Expr, pos: int, base: sympy.Expr | None = None) -> sympy.Expr:
        if name == "sqrt":
            return self.root(arg, 2, pos)
        if name == "cbrt":
            return self.root(arg, 3, pos)
        if name == "exp":
            # exp(1000000*ln 3) would become 3**1000000; route through the power check.
            return self.power(sympy.E, arg, pos)
        if name == "log" and base is not None:
            return self.make(pos, sympy.log, arg, base)
        return self.make(pos, _SYMPY_FUNCTIONS[name], arg)

    def factorial(self, value: sympy.Expr, pos: int) -> sympy.Expr:
        if isinstance(value, sympy.Integer):
            if not 0 <= int(value) <= _MAX_FACTORIAL:
                raise MathParseError(f"factorial is only allowed for integers 0 to {_MAX_FACTORIAL}", pos)
            # math.factorial is ~100x faster than sympy's, which matters for `1000!*1000!*...`.
            return self.make(pos, sympy.Integer, math.factorial(int(value)))
        return self.make(pos, sympy.factorial, value)

    def product(self, factors: list[sympy.Expr], pos: int) -> sympy.Expr:
        # Refuse before multiplying: the check in make() would only see the finished product.
        bits = sum(_coefficient_bits(factor) for factor in factors)
        if bits > _MAX_RESULT_BITS + len(factors):
            raise MathParseError(f"product would have more than {_MAX_RESULT_DIGITS} digits", pos)
        return self.make(pos, sympy.Mul, *factors)

    # -- grammar -------------------------------------------------------------------------
    def parse(self) -> sympy.Basic:
        if self.tok.kind == "boxed":
            # \boxed{x = 5} as the whole answer may hold a relation; elsewhere it is a group.
            start = self.k
            self.advance()
            value = self.braced(self.relation)
            if self.tok.kind == "eof":
                return value
            if isinstance(value, Relational):
                raise self.unexpected("end of input after a boxed relation")
            self.k = start
        value = self.relation()
        if self.tok.kind != "eof":
            raise self.unexpected("an operator or end of input")
        return value

    def relation(self) -> sympy.Basic:
        left = self.expression()
        if self.tok.kind != "rel":
            return left
        op = self.advance()
        right = self.expression()
        if self.tok.kind == "rel":
            raise MathParseError("chained relations such as a < b < c are not supported", self.tok.pos)
        return self.make(op.pos, _RELATIONS[op.value], left, right, evaluate=False)

    def expression(self) -> sympy.Expr:
        pos = self.tok.pos
        terms = [self.term()]
        while self.at_op("+", "-"):
            op = self.advance()
            term = self.term()
            terms.append(term if op.value == "+" else self.make(op.pos, sympy.Mul, -1, term))
        return terms[0] if len(terms) == 1 else self.make(pos, sympy.Add, *terms)

    def term(self) -> sympy.Expr:
        pos = self.tok.pos
        factors = [self.unary()]
        while True:
            if self.at_op("*"):
                self.advance()
                factors.append(self.unary())
            elif self.at_op("/"):
                op = self.advance()
                factors.append(self.power(self.unary(), sympy.Integer(-1), op.pos))
            elif self.starts_implicit_factor():
                factors.append(self.power_expr())
            elif self.tok.kind == "num":
                raise MathParseError("missing operator before number", self.tok.pos)
            else:
                break
        return factors[0] if len(factors) == 1 else self.product(factors, pos)

    def starts_implicit_factor(self) -> bool:
        kind = self.tok.kind
        if kind == "bar":
            return not self.in_bars[-1]
        return kind in ("sym", "const", "func", "open", "frac", "boxed")

    def unary(self) -> sympy.Expr:
        if self.at_op("+", "-"):
            op = self.advance()
            with self.nested(op.pos):
                operand = self.unary()
            return operand if op.value == "+" else self.make(op.pos, sympy.Mul, -1, operand)
        return self.power_expr()

    def power_expr(self) -> sympy.Expr:
        base = self.postfix()
        if not self.at_op("^"):
            return base
        op = self.advance()
        with self.nested(op.pos):
            exponent = self.exponent()
        return self.power(base, exponent, op.pos)

    def exponent(self) -> sympy.Expr:
        """Right-associative exponent that may carry a sign: 2^-3, 9^9^9."""
        if self.at_op("+", "-"):
            op = self.advance()
            with self.nested(op.pos):
                operand = self.exponent()
            return operand if op.value == "+" else self.make(op.pos, sympy.Mul, -1, operand)
        with self.nested(self.tok.pos):
            return self.power_expr()

    def postfix(self) -> sympy.Expr:
        value = self.primary()
        while True:
            token = self.tok
            if self.at_op("!"):
                self.advance()
                value = self.factorial(value, token.pos)
            elif self.at_op("%"):
                self.advance()
                value = self.make(token.pos, sympy.Mul, value, sympy.Rational(1, 100))
            elif token.kind == "deg":
                self.advance()
                if self.trig_args:
                    value = self.make(token.pos, sympy.Mul, value, sympy.pi / 180)
            elif token.kind == "sup":
                self.advance()
                value = self.power(value, token.value, token.pos)
            else:
                return value

    def primary(self) -> sympy.Expr:
        token = self.tok
        kind = token.kind
        if kind == "num" or kind == "const":
            self.advance()
            return token.value
        if kind == "sym":
            self.advance()
            return sympy.Symbol(token.value)
        if kind == "open":
            return self.group()
        if kind == "bar":
            return self.bars()
        if kind == "func":
            return self.function()
        if kind == "frac":
            self.advance()
            numerator = self.frac_argument()
            denominator = self.frac_argument()
            return self.make(
                token.pos, sympy.Mul, numerator, self.power(denominator, sympy.Integer(-1), token.pos)
            )
        if kind == "boxed":
            self.advance()
            return self.braced(self.expression)
        raise self.unexpected("a number, variable, function or '('")

    def enclosed(self, parse_inner: Callable[[], T], closing_kind: str, closing: str, in_bars: bool = False) -> T:
        """Parse an opening token, the inner part and its matching closing token."""
        opening = self.advance()
        with self.nested(opening.pos):
            self.in_bars.append(in_bars)
            inner = parse_inner()
            self.in_bars.pop()
        if self.tok.kind != closing_kind or self.tok.value != closing:
            raise self.unexpected(f"{closing!r} to match {opening.text!r} at position {opening.pos}")
        self.advance()
        return inner

    def group(self) -> sympy.Expr:
        return self.enclosed(self.expression, "close", _BRACKETS[self.tok.value])

    def braced(self, parse_inner: Callable[[], T]) -> T:
        if self.tok.kind != "open" or self.tok.value != "{":
            raise self.unexpected("'{'")
        return self.enclosed(parse_inner, "close", "}")

    def bars(self) -> sympy.Expr:
        pos = self.tok.pos
        return self.make(pos, sympy.Abs, self.enclosed(self.expression, "bar", "|", in_bars=True))

    def frac_argument(self) -> sympy.Expr:
        token = self.tok
        if token.kind == "open":
            return self.group()
        if token.kind == "num" and token.text.isascii() and token.text.isdigit():
            # \frac12 means \frac{1}{2}: an unbraced argument is one character.
            if len(token.text) > 1:
                first = _Token("num", token.pos, token.text[0], sympy.Integer(int(token.text[0])))
                rest = _Token("num", token.pos + 1, token.text[1:], sympy.Integer(int(token.text[1:])))
                self.toks[self.k : self.k + 1] = [first, rest]
            return self.advance().value
        if token.kind in ("sym", "const"):
            return self.primary()
        raise self.unexpected("a braced argument of \\frac")

    def function(self) -> sympy.Expr:
        token = self.advance()
        name: str = token.value
        pos = token.pos
        power: sympy.Expr | None = None
        if self.at_op("^") and name not in ("sqrt", "cbrt"):
            op = self.advance()
            with self.nested(op.pos):
                power = self.exponent()
            if power == -1 and name in _INVERSE_TRIG:
                name, power = _INVERSE_TRIG[name], None
        index = 2 if name == "sqrt" else 3 if name == "cbrt" else 0
        if token.latex and self.tok.kind == "open" and self.tok.value == "[":
            index = self.root_index()
        is_trig = int(name in _TRIG)
        with self.nested(pos):
            self.trig_args += is_trig
            try:
                arg = self.function_argument(name)
            finally:
                self.trig_args -= is_trig
        value = self.root(arg, index, pos) if index else self.apply(name, arg, pos, token.base)
        return value if power is None else self.power(value, power, pos)

    def root_index(self) -> int:
        opening = self.tok
        index = self.group()
        if not (index.is_Integer and 1 <= index <= self.limits.max_exponent):
            raise MathParseError(
                f"root index must be an integer from 1 to {self.limits.max_exponent}", opening.pos
            )
        return int(index)

    def function_argument(self, name: str) -> sympy.Expr:
        if self.tok.kind == "open":
            return self.group()
        if name in ("sqrt", "cbrt"):
            # √2x is sqrt(2)*x: a root without brackets takes one operand.
            return self.unary()
        return self.implicit_argument(name)

    def implicit_argument(self, name: str) -> sympy.Expr:
        """`sin 2x` is sin(2x); the product stops at operators and at the next function."""
        if self.at_op("+", "-"):
            op = self.advance()
            with self.nested(op.pos):
                operand = self.implicit_argument(name)
            return operand if op.value == "+" else self.make(op.pos, sympy.Mul, -1, operand)
        if self.tok.kind not in ("num", "sym", "const", "func", "open", "frac", "bar", "boxed"):
            raise self.unexpected(f"an argument for {name}")
        pos = self.tok.pos
        factors = [self.power_expr()]
        while self.tok.kind != "func" and self.starts_implicit_factor():
            factors.append(self.power_expr())
        return factors[0] if len(factors) == 1 else self.product(factors, pos)


def _magnitude(number: sympy.Expr) -> float:
    """|number| as a float, infinite when it cannot be bounded cheaply."""
    try:
        if isinstance(number, sympy.Rational):
            return abs(number.p) / number.q
        return abs(complex(number.evalf(15)))
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        return math.inf


def _coefficient_bits(value: sympy.Expr) -> int:
    coefficient = value.as_coeff_Mul()[0]
    if not isinstance(coefficient, sympy.Rational):
        return 0
    return max(abs(coefficient.p), coefficient.q).bit_length()


def _decimal_scale(base: sympy.Expr) -> float:
    """Decimal digits of the largest rational inside base: how fast its powers grow."""
    bits = max((max(abs(r.p), r.q).bit_length() for r in base.atoms(sympy.Rational)), default=0)
    return bits * math.log10(2)


def _short(value: sympy.Basic) -> str:
    try:
        text = str(value)
    except ValueError:  # Python refuses to print integers beyond sys.get_int_max_str_digits()
        return "a very large number"
    return text if len(text) <= 40 else text[:37] + "..."


def _limits(max_length: int, max_depth: int, max_exponent: int, max_digits: int, timeout_s: float) -> _Limits:
    for name, value in (
        ("max_length", max_length), ("max_depth", max_depth),
        ("max_exponent", max_exponent), ("max_digits", max_digits), ("timeout_s", timeout_s),
    ):  # fmt: skip
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value}")
    return _Limits(max_length, max_depth, max_exponent, max_digits, timeout_s)


def _content_end(text: str) -> int:
    """End of the meaningful text: trailing spaces, `$` and one sentence period dropped."""
    end = len(text.rstrip().rstrip("$").rstrip())
    if end and text[end - 1] == ".":
        end = len(text[: end - 1].rstrip())
    return end


def parse_math(
    text: str,
    *,
    max_length: int = 2000,
    max_depth: int = 40,
    max_exponent: int = 1000,
    max_digits: int = 60,
    timeout_s: float = 1.0,
) -> sympy.Basic:
    """Parse untrusted math text (plain or light LaTeX) into a SymPy expression or relation.

    >>> parse_math(r"x = \\frac{3}{4}")
    Eq(x, 3/4)
    """
    limits = _limits(max_length, max_depth, max_exponent, max_digits, timeout_s)
    if not isinstance(text, str):
        raise TypeError(f"parse_math expects str, got {type(text).__name__}")
    if len(text) > max_length:
        raise MathParseError(f"input is {len(text)} characters; the limit is max_length={max_length}")
    return _parse_within(text, limits)


@lru_cache(maxsize=16384)
def _parse_within(text: str, limits: _Limits) -> sympy.Basic:
    """The parse itself, cached: the verifier reads the same lines again for every variant of a problem.

    Safe to share: the result depends only on (text, limits) and SymPy values are immutable.
    Refusals raise and are not cached.
    """
    clock = _Clock(limits.timeout_s)
    end = _content_end(text)
    tokens = _Lexer(text, end, limits, clock).tokens()
    if tokens[0].kind == "eof":
        raise MathParseError("empty input")
    try:
        return _Parser(tokens, limits, clock).parse()
    except RecursionError as exc:  # only reachable when a caller raises max_depth very high
        raise MathParseError("input is nested too deeply for Python's stack") from exc


def try_parse(text: str, **limits: Unpack[ParseLimits]) -> sympy.Basic | None:
    """parse_math, but None instead of MathParseError."""
    try:
        return parse_math(text, **limits)
    except MathParseError:
        return None


def parse_number(text: str, **limits: Unpack[ParseLimits]) -> sympy.Expr:
    """Parse text that must be a number without variables: `3/4`, `0.75`, `2\\sqrt{2}`, `75%`.

    Exact irrational numbers (sqrt(2), pi/2) are numbers too; use `.is_Rational` to demand more.
    """
    value = parse_math(text, **limits)
    if isinstance(value, Relational) or not isinstance(value, sympy.Expr):
        raise MathParseError("expected a number, found a relation")
    if value.free_symbols:
        names = ", ".join(sorted(str(s) for s in value.free_symbols))
        raise MathParseError(f"expected a number, found variables {names}")
    return value


# -- writing --------------------------------------------------------------------------------
_WRITABLE_FUNCTIONS = {
    sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc, sympy.asin, sympy.acos,
    sympy.atan, sympy.acot, sympy.asec, sympy.acsc, sympy.log, sympy.exp,
}  # fmt: skip
_WRITABLE_TYPES = (
    sympy.Rational, sympy.Float, sympy.Add, sympy.Mul, sympy.Pow, sympy.Abs, sympy.factorial,
    type(sympy.pi), type(sympy.E), type(sympy.I), sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge,
)  # fmt: skip
_GREEK_ALTERNATION = "|".join(sorted(_LATEX_GREEK | {"pi"}, key=len, reverse=True))
_WRITABLE_SYMBOL = re.compile(rf"(?P<base>[A-Za-z]|{_GREEK_ALTERNATION})(?:_(?P<sub>[A-Za-z0-9]+))?")
_REL_TEXT = {"==": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _TextPrinter(StrPrinter):
    """sympy's str printer with `^`, `e`, `abs`, `n!` and `lhs = rhs`, which parse_math reads."""

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        # Sub-expressions were already printed by this printer, so the only `**` left is ours.
        return super()._print_Pow(expr, rational).replace("**", "^")

    def _print_Exp1(self, expr: sympy.Basic) -> str:
        return "e"

    def _print_ImaginaryUnit(self, expr: sympy.Basic) -> str:
        return "sqrt(-1)"

    def _print_Abs(self, expr: sympy.Abs) -> str:
        return f"abs({self._print(expr.args[0])})"

    def _print_factorial(self, expr: sympy.factorial) -> str:
        arg = expr.args[0]
        inner = self._print(arg)
        return f"{inner}!" if arg.is_Symbol or (arg.is_Integer and arg >= 0) else f"({inner})!"

    def _print_Relational(self, expr: Relational) -> str:
        return f"{self._print(expr.lhs)} {_REL_TEXT[expr.rel_op]} {self._print(expr.rhs)}"

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        match = _WRITABLE_SYMBOL.fullmatch(expr.name)
        if match is None or (match["sub"] is None and match["base"] in ("e", "pi")):
            raise ValueError(f"symbol {expr.name!r} cannot be written as text that parse_math reads back")
        base = match["base"]
        if len(base) > 1 and base not in _PLAIN_GREEK:
            base = "\\" + base
        sub = match["sub"]
        if sub is None:
            return base
        return f"{base}_{sub}" if sub.isdigit() or len(sub) == 1 else f"{base}_{{{sub}}}"


def to_text(value: sympy.Basic) -> str:
    """Write value as plain text that parse_math reads back to an equal value.

    >>> to_text(sympy.Eq(sympy.Symbol("x"), sympy.Rational(3, 4)))
    'x = 3/4'

    Floats are written as decimals and read back as exact rationals. sympy may combine a
    parsed value past the default limits (x^1000*x^2 is x^1002, 10^70 has 71 digits); such
    values read back with larger max_exponent or max_digits.
    """
    if isinstance(value, sympy.Basic):
        return _text_of(value)
    return _write(value)


# SymPy equality is structural and typed (Float(2.0) != Integer(2) since 1.13), so equal keys print alike.
@lru_cache(maxsize=16384)
def _text_of(value: sympy.Basic) -> str:
    return _write(value)


def _write(value: sympy.Basic) -> str:
    for node in sympy.preorder_traversal(value):
        if isinstance(node, (sympy.Dummy, sympy.Wild)) or not (
            isinstance(node, (*_WRITABLE_TYPES, sympy.Symbol)) or type(node) in _WRITABLE_FUNCTIONS
        ):
            raise ValueError(f"cannot write {type(node).__name__} ({_short(node)}) as parseable text")
    return _TextPrinter().doprint(value)


# -- equivalence ----------------------------------------------------------------------------
# Comparisons that cannot blow up run here; SymPy's simplify, solvers and evalf run in
# synth._bounded's worker process, which is killed when its budget is spent (issue 16).
# Values with more nodes than this skip the in-process checks: building a - b stays cheap.
_INLINE_MAX_NODES = 400


def _bounded(fn: Callable[..., bool], *args: Any, seconds: float) -> bool:
    """fn(*args) in the worker process; False when it raises or does not finish within its budget."""
    return _bounded_call(fn, *args, cpu_s=seconds) is True


def _small(*values: sympy.Basic, limit: int = _INLINE_MAX_NODES) -> bool:
    """Whether the values have at most limit nodes together (stops counting at the limit)."""
    seen = 0
    for value in values:
        for _ in sympy.preorder_traversal(value):
            seen += 1
            if seen > limit:
                return False
    return True


# Awkward rationals for probing: unlikely roots or poles of school expressions.
_PROBE_TOLERANCE = sympy.Rational(1, 10**12)
_PROBES = [sympy.Rational(p, q) for p, q in ((7, 13), (-11, 17), (19, 23), (-5, 29), (31, 37), (3, 41))]


def _clearly_differ(a: sympy.Expr, b: sympy.Expr) -> bool:
    """True when a and b differ at some probe point: a cheap exit before simplify."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    for shift in range(2):
        point = {s: _PROBES[(i + 3 * shift) % len(_PROBES)] for i, s in enumerate(symbols)}
        try:
            av, bv = a.xreplace(point), b.xreplace(point)
            if av.is_Rational and bv.is_Rational:
                if av != bv:
                    return True
                continue
            fa, fb = av.evalf(30), bv.evalf(30)
            if not (fa.is_number and fb.is_number and fa.is_finite and fb.is_finite):
                continue
            if bool(abs(fa - fb) > _PROBE_TOLERANCE * (1 + abs(fa) + abs(fb))):
                return True
        except (TypeError, ValueError, ArithmeticError):
            continue  # a pole or an unevaluable point proves nothing
    return False


def _equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    difference = a - b
    if difference == 0:
        return True
    if difference.is_Rational or _clearly_differ(a, b):
        return False
    return sympy.simplify(difference) == 0


def _ratio_is_constant(a: sympy.Expr, b: sympy.Expr, positive: bool) -> bool:
    if b == 0:
        return False
    ratio = sympy.simplify(a / b)
    if ratio.free_symbols or not ratio.is_number or ratio.is_zero is not False or not ratio.is_finite:
        return False
    return bool(ratio.is_positive) if positive else True


def _same_roots(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Two polynomial equations in one variable with the same solution set (over C)."""
    symbols = a.free_symbols | b.free_symbols
    if len(symbols) != 1:
        return False
    (symbol,) = symbols
    if not (a.is_polynomial(symbol) and b.is_polynomial(symbol)):
        return False
    pa, pb = sympy.Poly(a, symbol), sympy.Poly(b, symbol)
    if not (1 <= pa.degree() <= 100 and 1 <= pb.degree() <= 100):
        return False
    # Equal root sets <=> equal square-free parts, up to a constant factor.
    return bool(pa.sqf_part().monic() == pb.sqf_part().monic())


def _relation_kind(rel: Relational) -> str:
    """`=`, `!=`, `<` or `<=`: what the relation says of its difference (see _relation_form)."""
    if isinstance(rel, sympy.Eq):
        return "="
    if isinstance(rel, sympy.Ne):
        return "!="
    return "<" if isinstance(rel, (sympy.Lt, sympy.Gt)) else "<="


def _relation_form(rel: Relational) -> tuple[str, sympy.Expr]:
    """(kind, d) with the relation meaning `d = 0`, `d != 0`, `d > 0` or `d >= 0`."""
    kind, lhs, rhs = _relation_kind(rel), rel.lhs, rel.rhs
    if kind in ("=", "!=") or isinstance(rel, (sympy.Gt, sympy.Ge)):
        return kind, lhs - rhs
    return kind, rhs - lhs


def _relations_equivalent(a: Relational, b: Relational) -> bool:
    kind_a, da = _relation_form(a)
    kind_b, db = _relation_form(b)
    if kind_a != kind_b:
        return False
    if _equal(da, db):
        return True
    if kind_a in ("=", "!="):
        return _equal(da, -db) or _ratio_is_constant(da, db, positive=False) or _same_roots(da, db)
    return _ratio_is_constant(da, db, positive=True)


def _numbers_close(a: sympy.Expr, b: sympy.Expr, tol: float) -> bool:
    fa, fb = a.evalf(30), b.evalf(30)
    if not (fa.is_finite and fb.is_finite):
        return False
    gap = abs(fa - fb)
    return bool(gap <= tol * abs(fa) or gap <= tol * abs(fb))


def _unify_symbols(a: sympy.Basic, b: sympy.Basic) -> tuple[sympy.Basic, sympy.Basic]:
    """Let parsed plain symbols match same-named symbols that carry assumptions."""
    in_a = {s.name: s for s in a.free_symbols if isinstance(s, sympy.Symbol)}
    in_b = {s.name: s for s in b.free_symbols if isinstance(s, sympy.Symbol)}
    to_a: dict[sympy.Basic, sympy.Basic] = {}
    to_b: dict[sympy.Basic, sympy.Basic] = {}
    for name in in_a.keys() & in_b.keys():
        sa, sb = in_a[name], in_b[name]
        if sa == sb:
            continue
        if sa == sympy.Symbol(name):
            to_a[sa] = sb
        elif sb == sympy.Symbol(name):
            to_b[sb] = sa
    return a.xreplace(to_a), b.xreplace(to_b)


def equivalent(a: sympy.Basic, b: sympy.Basic, *, tol: float = 0, timeout_s: float = 2.0) -> bool:
    """Whether two parsed values say the same thing; False when undecided within timeout_s.

    Expressions are equal when their difference simplifies to 0. Relations of the same kind
    are equal when their sides' differences agree up to sign (or a constant factor, positive
    for inequalities), or, for one-variable polynomial equations, when the solution sets
    agree. With tol > 0, numbers compare by relative tolerance.

    Cheap exact checks run in the calling process; SymPy's simplification runs in a worker
    process (``synth._bounded``) that is killed once it has used ``timeout_s`` CPU seconds, or
    ``2 * timeout_s + 0.5`` wall seconds on a starved machine, so nothing keeps running after
    the answer. The first call in a process starts the worker (about 0.5 s, not counted in
    timeout_s); a call after a timeout starts a fresh one.

    >>> x = sympy.Symbol("x")
    >>> equivalent(parse_math("2(x+1)"), 2 * x + 2)
    True
    """
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    if not (isinstance(a, sympy.Basic) and isinstance(b, sympy.Basic)):
        raise TypeError("equivalent compares sympy values; parse text with parse_math first")
    a, b = _unify_symbols(a, b)
    if a == b:
        return True
    if isinstance(a, Relational) or isinstance(b, Relational):
        if not (isinstance(a, Relational) and isinstance(b, Relational)):
            return False
        if _relation_kind(a) != _relation_kind(b):
            return False
        return _bounded(_relations_equivalent, a, b, seconds=timeout_s)
    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)):
        return False
    if tol > 0 and a.is_number and b.is_number:
        if a.is_Rational and b.is_Rational:  # exact: evalf is one division each
            return _numbers_close(a, b, tol)
        return _bounded(_numbers_close, a, b, tol, seconds=timeout_s)
    if _small(a, b):  # _equal's first two exits, which need no simplification
        difference = a - b
        if difference == 0:
            return True
        if difference.is_Rational:
            return False
    return _bounded(_equal, a, b, seconds=timeout_s)
