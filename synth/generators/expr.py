"""Small displayed-arithmetic trees: exact values, plain text and LaTeX written the way pupils write.

A node is a leaf or a list ``[op, *args]`` (JSON friendly, so it can live in params):

- leaves: ``int``; ``str`` for a decimal as written (``"2.40"`` keeps its trailing zero);
- ``["+", a, b]``, ``["-", a, b]``, ``["*", a, b]``, ``["/", a, b]`` (``÷``);
- ``["frac", a, b]`` a fraction bar, ``["pct", a]`` ``a%``, ``["pow", a, n]``, ``["group", a]``
  explicit brackets a pupil writes even where precedence would not need them.

SymPy's printer never sees these: it reorders terms and would undo the very step being shown.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import sympy

from synth.generators.base import Derivation, StepDraft

Node = Any
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "frac": 2, "pct": 4, "pow": 3, "group": 5}
_TEXT = {"+": "+", "-": "−", "*": "×", "/": "÷"}
_LATEX = {"+": "+", "-": "-", "*": r"\times", "/": r"\div"}


def value(node: Node) -> Fraction:
    """Exact value of a displayed tree."""
    if type(node) is list:  # the same value as the general path below, with ints kept as ints inside
        out = _exact(node)
        return out if type(out) is Fraction else Fraction(out)
    return _value(node)


# Written decimals ("2.40") parsed once: Fraction(str) is the slow part of evaluating a data family's tree.
_DECIMALS: dict[str, Fraction] = {}


def _exact(node: Node) -> int | Fraction:
    """``value(node)`` as an int where it is a whole number built from ints by + − × (exact either way), else the
    Fraction; every other case is ``value``'s own code."""
    t = type(node)
    if t is int:
        return node
    if t is str:
        hit = _DECIMALS.get(node)
        if hit is None:
            hit = Fraction(node)
            if len(_DECIMALS) > 4096:
                _DECIMALS.clear()
            _DECIMALS[node] = hit
        return hit
    if t is list and len(node) == 2 and node[0] == "group":
        return _exact(node[1])
    if t is not list or len(node) != 3 or type(node[0]) is not str or node[0] not in _INT_SAFE:
        return _value(node)
    op, a, b = node
    x, y = _exact(a), _exact(b)
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    # "/" and "frac": Fraction division, as value() does it (int / int would be a float)
    return (x if type(x) is Fraction else Fraction(x)) / (y if type(y) is Fraction else Fraction(y))


_INT_SAFE = frozenset(("+", "-", "*", "/", "frac"))


def _value(node: Node) -> Fraction:
    if isinstance(node, bool):
        raise TypeError("booleans are not numbers here")
    if isinstance(node, int):
        return Fraction(node)
    if isinstance(node, str):
        return Fraction(node)
    op, *args = node
    vals = [value(a) for a in args]
    if op == "pow":
        return vals[0] ** int(vals[1])
    return combine(op, vals)


def combine(op: str, vals: list[Any]) -> Any:
    """The arithmetic of a display operator over evaluated operands (Fractions, or SymPy values)."""
    if op == "+":
        return vals[0] + vals[1]
    if op == "-":
        return vals[0] - vals[1]
    if op == "*":
        return vals[0] * vals[1]
    if op in ("/", "frac"):
        return vals[0] / vals[1]
    if op == "pct":
        return vals[0] / 100
    if op == "pow":
        return vals[0] ** vals[1]
    if op == "group":
        return vals[0]
    raise ValueError(f"unknown display operator {op!r}")


def sym(node: Node) -> sympy.Rational:
    v = value(node)
    return sympy.Rational(v.numerator, v.denominator)


def to_fraction(v: sympy.Basic | Fraction | int) -> Fraction:
    if isinstance(v, Fraction):
        return v
    r = sympy.Rational(v)
    return Fraction(int(r.p), int(r.q))


def is_decimal(v: Fraction) -> bool:
    d = v.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def decimal_text(v: Fraction) -> str:
    """A terminating fraction as a plain decimal (``Fraction(5, 2)`` -> ``"2.5"``)."""
    if not is_decimal(v):
        raise ValueError(f"{v} has no terminating decimal")
    sign = "-" if v < 0 else ""
    v = abs(v)
    places = 0
    while (v * 10**places).denominator != 1:
        places += 1
    scaled = int(v * 10**places)
    if places == 0:
        return f"{sign}{scaled}"
    digits = str(scaled).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def leaf(v: sympy.Basic | Fraction | int, *, decimal: bool = False) -> Node:
    """A leaf (or a fraction node) showing v: an int, a decimal if asked and possible, else a/b."""
    f = to_fraction(v)
    if f.denominator == 1:
        return int(f)
    if decimal and is_decimal(f):
        return decimal_text(f)
    return ["frac", f.numerator, f.denominator]


def _is_leaf(node: Node) -> bool:
    return not isinstance(node, list)


def _negative_leaf(node: Node) -> bool:
    return _is_leaf(node) and _leaf_value(node) < 0


def _leaf_value(node: Node) -> int | Fraction:
    """``value(node)`` of a leaf, for comparing with 0 (an int leaf is its own value)."""
    t = type(node)
    return node if t is int else _exact(node) if t is str else value(node)


def _leaf_text(node: Node, minus: str) -> str:
    if isinstance(node, str):
        return node.replace("-", minus)
    return str(node).replace("-", minus)


def _write(node: Node, latex: bool, leftmost: bool = True) -> str:
    if not isinstance(node, list):  # a leaf: _leaf_text inlined (the hot path of every displayed tree)
        body = (node if isinstance(node, str) else str(node)).replace("-", "-" if latex else "−")
        return body if leftmost or _leaf_value(node) >= 0 else _paren(body, latex)
    op, *args = node
    if op == "group":
        return _paren(_write(args[0], latex, True), latex)
    if op == "pct":
        inner = _write(args[0], latex, leftmost)
        return inner + (r"\%" if latex else "%")
    if op == "frac":
        num, den = args
        if latex:
            body = rf"\frac{{{_write(num, True)}}}{{{_write(den, True)}}}"
            neg = _negative_leaf(num)
            return _paren(body, True) if neg and not leftmost else body
        # each side written once, bracketed or not (the same text as writing it both ways and keeping one)
        if not _is_leaf(num) or (_negative_leaf(num) and not leftmost):
            n_txt = _paren(_write(num, False, True), False)
        else:
            n_txt = _write(num, False, leftmost)
        if not _is_leaf(den) or _negative_leaf(den):
            d_txt = _paren(_write(den, False, True), False)
        else:
            d_txt = _write(den, False, False)
        return f"{n_txt}/{d_txt}"
    if op == "pow":
        base, exp = args
        b_txt = _write(base, latex, True)
        if not _is_leaf(base) or _negative_leaf(base) or isinstance(base, str):
            b_txt = _paren(b_txt, latex)
        e_txt = _write(exp, latex, True)
        return f"{b_txt}^{{{e_txt}}}" if latex else f"{b_txt}^{e_txt}"
    a, b = args
    if isinstance(a, list) and _PREC[a[0]] < _PREC[op]:
        left = _paren(_write(a, latex, True), latex)
    else:
        left = _write(a, latex, leftmost)
    if isinstance(b, list) and (_PREC[b[0]] < _PREC[op] or (_PREC[b[0]] == _PREC[op] and b[0] != "frac")
                                or (b[0] == "frac" and op == "/" and not latex)):
        right = _paren(_write(b, latex, True), latex)
    else:
        right = _write(b, latex, False)
    ops = _LATEX if latex else _TEXT
    return f"{left} {ops[op]} {right}"


def _write_both(node: Node, leftmost: bool = True) -> tuple[str, str]:
    """``(_write(node, False, leftmost), _write(node, True, leftmost))`` in one walk where the two agree on the
    brackets (numbers, ``group`` and the four operators); elsewhere each is written on its own."""
    if not isinstance(node, list):
        body = node if isinstance(node, str) else str(node)
        if leftmost or _leaf_value(node) >= 0:
            return body.replace("-", "−"), body
        return f"({body.replace('-', '−')})", rf"\left({body}\right)"
    op = node[0]
    if op == "group" and len(node) >= 2:
        t, la = _write_both(node[1], True)
        return f"({t})", rf"\left({la}\right)"
    if len(node) != 3 or op not in _TEXT:
        return _write(node, False, leftmost), _write(node, True, leftmost)
    a, b = node[1], node[2]
    if isinstance(a, list) and _PREC[a[0]] < _PREC[op]:
        t, la = _write_both(a, True)
        left = f"({t})", rf"\left({la}\right)"
    else:
        left = _write_both(a, leftmost)
    if isinstance(b, list):
        same = _PREC[b[0]] < _PREC[op] or (_PREC[b[0]] == _PREC[op] and b[0] != "frac")
        text_paren, latex_paren = same or (b[0] == "frac" and op == "/"), same
    else:
        text_paren = latex_paren = False
    if text_paren and latex_paren:
        t, la = _write_both(b, True)
        right = f"({t})", rf"\left({la}\right)"
    elif not text_paren and not latex_paren:
        right = _write_both(b, False)
    else:  # a fraction after ÷: bracketed in text, not in LaTeX
        right = (_paren(_write(b, False, True), False) if text_paren else _write(b, False, False),
                 _paren(_write(b, True, True), True) if latex_paren else _write(b, True, False))
    return f"{left[0]} {_TEXT[op]} {right[0]}", f"{left[1]} {_LATEX[op]} {right[1]}"


def text_and_latex(node: Node) -> tuple[str, str]:
    """``(text(node), latex(node))``, written in one walk."""
    return _write_both(node)


def _paren(body: str, latex: bool) -> str:
    return rf"\left({body}\right)" if latex else f"({body})"


def text(node: Node) -> str:
    """Plain text that ``synth.mathparse.parse_math`` reads back to ``value(node)``."""
    return _write(node, False)


def latex(node: Node) -> str:
    return _write(node, True)


def num_text(v: sympy.Basic | Fraction | int, *, decimal: bool = False) -> str:
    return text(leaf(v, decimal=decimal))


def num_latex(v: sympy.Basic | Fraction | int, *, decimal: bool = False) -> str:
    return latex(leaf(v, decimal=decimal))


def sum_of(terms: list[Node]) -> Node:
    """Left-associated ``t1 + t2 + ...`` (a single term stays as it is)."""
    out = terms[0]
    for t in terms[1:]:
        out = ["+", out, t]
    return out


def product_of(factors: list[Node]) -> Node:
    """Left-associated ``f1 × f2 × ...``."""
    out = factors[0]
    for f in factors[1:]:
        out = ["*", out, f]
    return out


def add_step(d: Derivation, rule: str, node: Node, result: sympy.Basic | None = None) -> None:
    """Append a step whose value, text and LaTeX all come from one display tree."""
    d.add(StepDraft(rule=rule, value=sym(node), text=text(node), latex=latex(node), result=result))


def dec(v: sympy.Basic | Fraction) -> Node:
    """A leaf written as a decimal (money, measures)."""
    return leaf(v, decimal=True)
