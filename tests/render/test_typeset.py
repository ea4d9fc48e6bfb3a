"""Restricted-LaTeX typesetting: a whitelist parser and a layout where fractions, scripts and roots are real."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from render.typeset import (
    GlyphOp,
    PathOp,
    PrintedFace,
    RuleOp,
    Sym,
    TypesetError,
    layout,
    layout_lines,
    parse,
    parse_inline,
    reading,
    reading_rows,
)
from synth.generators import REGISTRY, get_family

FACE = PrintedFace()


def _glyph(ops, text: str) -> GlyphOp:
    return next(o for o in ops if isinstance(o, GlyphOp) and o.text == text)


def test_every_generator_step_and_answer_parses() -> None:
    checked = 0
    for fid in sorted(REGISTRY):
        family = get_family(fid)
        for seed in range(3):
            for difficulty in ("easy", "medium", "hard"):
                for qtype in family.question_types:
                    try:  # a generator that cannot build is its own test's concern, not the typesetter's
                        problem = family.build(np.random.default_rng(seed), difficulty=difficulty,
                                               question_type=qtype, problem_id="t")
                    except Exception:  # noqa: BLE001
                        continue
                    for step in problem.steps:
                        parse(step.latex)
                        checked += 1
                    parse(problem.answer_latex)
    assert checked > 100


def test_unknown_command_is_rejected_naming_it() -> None:
    with pytest.raises(TypesetError, match=r"\\input"):
        parse(r"1 + \input{secret}")


@pytest.mark.parametrize("bad", [r"\frac{1}{2", r"x^{2", r"\left( x", r"x \right)", r"}", r"x^2^3"])
def test_malformed_latex_fails_with_a_typeset_error(bad: str) -> None:
    with pytest.raises(TypesetError, match="cannot typeset"):
        parse(bad)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"x2{}^_\\()+-=/ .", "\\frac", "\\sqrt", "\\left(", "\\right)", "\\times"]),
                max_size=40).map("".join))
def test_any_input_parses_or_raises_typeset_error_only(text: str) -> None:
    try:
        row = parse(text)
    except TypesetError:
        return
    layout(row, FACE, 20.0)


def test_fraction_puts_numerator_over_bar_over_denominator() -> None:
    laid = layout(parse(r"\frac{13}{2}"), FACE, 30.0)
    bar = next(o for o in laid.ops if isinstance(o, RuleOp))
    num, den = _glyph(laid.ops, "1"), _glyph(laid.ops, "2")
    assert num.y < bar.y < den.y - den.size * 0.5
    assert bar.x1 - bar.x0 >= FACE.metrics("13", "ord")[0] * num.size


def test_superscript_is_raised_and_smaller_than_its_base() -> None:
    laid = layout(parse(r"m^{16}"), FACE, 30.0)
    base, sup = _glyph(laid.ops, "m"), _glyph(laid.ops, "6")
    assert sup.y < base.y - 0.3 * base.size
    assert sup.size < 0.8 * base.size
    assert sup.x > base.x


def test_radical_overbar_spans_its_body() -> None:
    laid = layout(parse(r"\sqrt{b^2 - 4ac}"), FACE, 30.0)
    path = next(o for o in laid.ops if isinstance(o, PathOp))
    last = max(o.x for o in laid.ops if isinstance(o, GlyphOp))
    assert path.points[-1][0] >= last
    assert path.points[-1][1] < min(o.y - o.size * 0.6 for o in laid.ops if isinstance(o, GlyphOp))


def test_degree_sign_is_a_plain_glyph_not_a_superscript() -> None:
    row = parse(r"\cos 60^\circ")
    assert row.items[-1] == Sym("°", "ord")


def test_reading_orders_numerator_before_denominator() -> None:
    assert reading(parse(r"t = \frac{-8}{4}")) == "t=−84"
    assert reading_rows(layout(parse(r"\frac{1}{2} + \frac{3}{4}"), FACE, 20.0).ops) == "13+24"


def test_long_line_breaks_before_operators_and_every_piece_fits() -> None:
    row = parse(r"-9 \times 6u^{9 - 1} - 7 \times 2u^{7 - 1} - 4 \times u^{4 - 1} + 1 \times 2u^{-1 - 1} + 9")
    whole = layout(row, FACE, 30.0).width
    lines = layout_lines(row, FACE, 30.0, whole * 0.45)
    assert len(lines) >= 3
    assert all(line.width <= whole * 0.45 for line in lines)
    assert sum(len([o for o in line.ops if isinstance(o, GlyphOp)]) for line in lines) == len(
        [o for o in layout(row, FACE, 30.0).ops if isinstance(o, GlyphOp)])


@pytest.mark.parametrize(("word", "read"), [
    ("3a^9", "3a9"), ("t^(−1)", "t−1"), ("(4p^2)^3", "(4p2)3"), ("tan^2", "tan2"), ("6/7", "67"),
    ("1 5/7", "157"), ("√2/2", "√22"), ("x^2,", "x2,"), ("2^(1/2)", "212"),
])
def test_keyboard_math_in_a_question_word_becomes_scripts_fractions_and_roots(word: str, read: str) -> None:
    row = parse_inline(word)
    assert row is not None and reading(row) == read
    assert not any(isinstance(n, Sym) and "^" in n.text for n in row.items)


@pytest.mark.parametrize("word", ["Simplify", "m/s", "km/h", "45°", "1/2.5", "a^", "^2", "(x+1)/(x−1)", "y/x"])
def test_prose_units_and_unfinished_math_stay_literal(word: str) -> None:
    row = parse_inline(word)
    assert row is None or all(isinstance(n, Sym) for n in row.items)


def test_inline_exponent_is_raised_and_fraction_is_stacked() -> None:
    laid = layout(parse_inline("3a^9"), FACE, 30.0)
    a, nine = _glyph(laid.ops, "a"), _glyph(laid.ops, "9")
    assert nine.y < a.y - 0.3 * a.size and nine.size < 0.8 * a.size
    frac = layout(parse_inline("3/4"), FACE, 30.0)
    bar = next(o for o in frac.ops if isinstance(o, RuleOp))
    assert _glyph(frac.ops, "3").y < bar.y < _glyph(frac.ops, "4").y


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab12^/√()−.- ", max_size=30))
def test_any_question_word_lays_out_without_error(text: str) -> None:
    row = parse_inline(text)
    if row is not None:
        layout(row, FACE, 20.0)
