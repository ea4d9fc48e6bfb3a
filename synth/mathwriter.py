"""The plain-text writer of synth.mathparse: ``to_text`` writes a value as text that ``parse_math`` reads back."""

from __future__ import annotations

import re
from functools import cache, lru_cache

import sympy
from sympy.core.relational import Relational
from sympy.printing.str import StrPrinter

from synth.mathlexer import _LATEX_GREEK, _PLAIN_GREEK

_WRITABLE_FUNCTIONS = {
    sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc, sympy.asin, sympy.acos,
    sympy.atan, sympy.acot, sympy.asec, sympy.acsc, sympy.log, sympy.exp,
}  # fmt: skip
_WRITABLE_TYPES = (
    sympy.Rational, sympy.Float, sympy.Add, sympy.Mul, sympy.Pow, sympy.Abs, sympy.factorial,
    type(sympy.pi), type(sympy.E), type(sympy.I), sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge,
)  # fmt: skip
_WRITABLE_NODES = (*_WRITABLE_TYPES, sympy.Symbol)
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
    node = unwritable(value)
    if node is not None:
        raise ValueError(f"cannot write {type(node).__name__} ({_short(node)}) as parseable text")
    return _TextPrinter().doprint(value)


def unwritable(value: sympy.Basic) -> sympy.Basic | None:
    """The first part of value (in preorder) of a kind to_text cannot write, or None when it has none.

    Symbol names are not checked here (the printer refuses a name it cannot write); the parser
    uses this to refuse what SymPy rewrites into functions it does not read (|e^x| is exp(re(x))).
    """
    for node in sympy.preorder_traversal(value):
        if not writable_kind(node):
            return node
    return None


def writable_kind(node: sympy.Basic) -> bool:
    """Whether to_text can write this kind of node (its arguments aside)."""
    return _writable_type(type(node))


@cache  # a few dozen SymPy classes; the parser asks for each function it builds
def _writable_type(kind: type) -> bool:
    return not issubclass(kind, (sympy.Dummy, sympy.Wild)) and (
        issubclass(kind, _WRITABLE_NODES) or kind in _WRITABLE_FUNCTIONS
    )


def _short(value: sympy.Basic) -> str:
    """value as text for a message, cut to 40 characters."""
    try:
        text = str(value)
    except ValueError:  # Python refuses to print integers beyond sys.get_int_max_str_digits()
        return "a very large number"
    return text if len(text) <= 40 else text[:37] + "..."
