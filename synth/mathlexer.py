"""The tokenizer of synth.mathparse: the vocabulary it accepts (names, commands, operators, Greek), tokens, bounds."""

# synth.mathparse's header states the conventions these tables implement.

from __future__ import annotations

import gc
import math
import re
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy
from sympy.core.relational import Relational


class MathParseError(ValueError):
    """Text that is not math we accept; the message says what and where."""

    def __init__(self, message: str, position: int | None = None) -> None:
        self.reason = message
        self.position = position
        super().__init__(message if position is None else f"{message} at position {position}")



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


class _GcTime(threading.local):
    """CPU seconds this thread has spent in Python's garbage collector (``spent``), kept by ``_count_gc``."""

    started: float | None = None
    spent: float = 0.0


_GC = _GcTime()


def _count_gc(phase: str, info: dict[str, int]) -> None:
    # The collector runs in whichever thread's allocation triggered it, inside that thread's CPU time.
    if phase == "start":
        _GC.started = time.thread_time()
    elif _GC.started is not None:
        _GC.spent += time.thread_time() - _GC.started
        _GC.started = None


if _count_gc not in gc.callbacks:
    gc.callbacks.append(_count_gc)


def _parse_time() -> float:
    """The parsing thread's CPU time, less what the garbage collector took of it."""
    return time.thread_time() - _GC.spent


class _Clock:
    """Cooperative time bound: every lexer step and parser construction calls tick().

    It counts the CPU time of the parsing thread (``time.thread_time``), not wall time: a
    pathological input burns CPU and is still stopped, while a busy machine (other processes,
    other threads, a paused process) can no longer make an ordinary line fail at random and turn
    a clean solution into a flaky verification. Time in the garbage collector is left out: a full
    collection of a big process's heap (0.9 CPU s measured after ten thousand hostile parses, on a
    loaded machine) is the process's cost, and it landed inside an ordinary line's parse.

    The clock is read on the first tick and every ``CHECK_EVERY``-th after it: reading it costs
    more than the step it guards (~0.6 µs), and the bound is still kept to within a few steps.
    """

    CHECK_EVERY = 8

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.deadline = _parse_time() + timeout_s
        self.ticks = -1

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks % self.CHECK_EVERY == 0 and _parse_time() > self.deadline:
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
