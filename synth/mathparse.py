"""Whitelist parsing of untrusted math text into SymPy values; to_text and equivalent are re-exported here.

The parts live in their own modules: synth.mathlexer (vocabulary, tokens, bounds), synth.mathwriter
(to_text) and synth.equivalence (equivalent). Import the public names from this module.
"""

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TypedDict, TypeVar, Unpack

import sympy
from sympy.core.relational import Relational

from synth.equivalence import equivalent
from synth.mathlexer import (
    _BRACKETS,
    _INVERSE_TRIG,
    _MAX_FACTORIAL,
    _MAX_RESULT_BITS,
    _MAX_RESULT_DIGITS,
    _RELATIONS,
    _SYMPY_FUNCTIONS,
    _TRIG,
    _UNDEFINED_IDS,
    MathParseError,
    _Clock,
    _Lexer,
    _Limits,
    _Token,
)
from synth.mathwriter import _short, to_text, unwritable, writable_kind

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


class ParseLimits(TypedDict, total=False):
    """Keyword limits shared by parse_math, parse_number and try_parse."""

    max_length: int
    max_depth: int
    max_exponent: int
    max_digits: int
    timeout_s: float  # CPU seconds of the parsing thread, so machine load does not trip it


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

    def make_writable(self, pos: int, build: Callable[..., sympy.Expr], *args: sympy.Expr) -> sympy.Expr:
        """make(), refusing what SymPy rewrites into something to_text cannot write (|e^x| is exp(re(x)))."""
        value = self.make(pos, build, *args)
        if writable_kind(value) and all(any(part is arg for arg in args) for part in value.args):
            return value  # the only new node is value itself (E^x is exp(x), 3^-1 is 1/3): nothing to walk
        node = unwritable(value)
        if node is not None:
            raise MathParseError(f"SymPy turns this into {_short(value)}; {type(node).__name__}() is not accepted", pos)
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
        return self.make_writable(pos, sympy.Pow, base, exponent)

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
            return self.make_writable(pos, sympy.log, arg, base)
        return self.make_writable(pos, _SYMPY_FUNCTIONS[name], arg)

    def factorial(self, value: sympy.Expr, pos: int) -> sympy.Expr:
        if isinstance(value, sympy.Integer):
            if not 0 <= int(value) <= _MAX_FACTORIAL:
                raise MathParseError(f"factorial is only allowed for integers 0 to {_MAX_FACTORIAL}", pos)
            # math.factorial is ~100x faster than sympy's, which matters for `1000!*1000!*...`.
            return self.make(pos, sympy.Integer, math.factorial(int(value)))
        return self.make_writable(pos, sympy.factorial, value)

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
        return self.make_writable(pos, sympy.Abs, self.enclosed(self.expression, "bar", "|", in_bars=True))

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
