"""Handwriting: writers sampled from an rng, jitter that grows with messiness, hand-drawn missing symbols."""

from __future__ import annotations

import numpy as np
import pytest

from render.handwriting import (
    NEATNESS,
    Hand,
    HandFace,
    font_path,
    sample_line,
    sample_writer,
    stroked,
    write,
)
from render.typeset import GlyphOp, InkGlyph, InkStroke, layout, parse


def _writer(font: str = "kalam", neatness: int = 1, seed: int = 0):
    return sample_writer(np.random.default_rng(seed), neatness=neatness, fonts=(font,))


def test_writer_is_a_function_of_its_rng() -> None:
    a = sample_writer(np.random.default_rng(4), neatness=2)
    b = sample_writer(np.random.default_rng(4), neatness=2)
    others = {sample_writer(np.random.default_rng(s), neatness=2) for s in range(12)}
    assert a == b
    assert len({w.font for w in others}) >= 3 and len({w.ink for w in others}) >= 2


def test_unknown_writer_font_names_the_choices() -> None:
    with pytest.raises(ValueError, match="kalam"):
        sample_writer(np.random.default_rng(0), fonts=("comic_sans",))
    with pytest.raises(ValueError, match="neatness"):
        sample_writer(np.random.default_rng(0), neatness=4)


@pytest.mark.parametrize(("font", "char"), [("shadows_into_light", "≤"), ("caveat", "π"), ("indie_flower", "√"),
                                            ("kalam", "θ"), ("caveat", "α")])
def test_symbols_a_font_lacks_are_drawn_as_pen_strokes(font: str, char: str) -> None:
    writer = _writer(font)
    assert stroked(font_path(font), char)
    hand = Hand(writer, np.random.default_rng(0))
    laid = layout(parse(f"x {char} 2" if char != "√" else "x √ 2"), hand.face, 30.0)
    marks = hand.marks(laid.ops, 10.0, 50.0, 30.0, sample_line(np.random.default_rng(0), writer))
    glyph_texts = {m.text for m in marks if isinstance(m, InkGlyph)}
    assert char not in glyph_texts
    assert any(isinstance(m, InkStroke) for m in marks)


def test_symbols_a_font_has_come_from_the_font() -> None:
    assert not stroked(font_path("kalam"), "≤")
    assert not stroked(font_path("caveat"), "×")


def _displacement(neatness: int) -> float:
    writer = _writer("caveat", neatness)
    hand = Hand(writer, np.random.default_rng(1))
    laid = layout(parse("12345678 + 98765432 = 111111110"), hand.face, 30.0)
    flat = sample_line(np.random.default_rng(1), writer)
    flat = type(flat)(0.0, flat.wavelength, 0.0, 0.0)
    marks = [m for m in hand.marks(laid.ops, 0.0, 0.0, 30.0, flat) if isinstance(m, InkGlyph)]
    nominal = [o for o in laid.ops if isinstance(o, GlyphOp) and o.text.strip()]
    # every glyph of this line is a single character, so marks and ops pair up in order
    return float(np.mean([abs(m.y - o.y) + abs(m.rotate) for m, o in zip(marks, nominal)]))


def test_messier_hands_stray_further_from_the_layout() -> None:
    d1, d2, d3 = (_displacement(n) for n in (1, 2, 3))
    assert d1 < d2 < d3
    assert NEATNESS[1].cross_out == 0.0 < NEATNESS[3].cross_out


def test_digits_have_the_same_height_in_every_writer_font() -> None:
    medians, tallest = [], []
    for f in ("kalam", "caveat", "indie_flower", "shadows_into_light"):
        heights = [HandFace(_writer(f)).metrics(d, "ord")[1] for d in "0123456789"]
        medians.append(float(np.median(heights)))
        tallest.append(max(heights))
    assert max(medians) - min(medians) < 0.03
    # fonts with a small 0 and tall 4-9 must not write every other digit a third bigger than the rest
    assert max(tallest) < 0.9


def test_write_puts_new_ink_only_inside_the_returned_box() -> None:
    blank = np.full((200, 500, 3), 250, np.uint8)
    writer = _writer("indie_flower", 2)
    out, boxes = write(blank, r"x = \frac{3}{4} + \sqrt{2}", x=20, y=120, writer=writer,
                       rng=np.random.default_rng(3), size=40, latex=True, key="answer")
    x0, y0, x1, y1 = boxes["answer"]
    changed = np.argwhere((out != blank).any(axis=2))
    assert len(changed) > 200
    assert changed[:, 0].min() >= y0 and changed[:, 0].max() < y1
    assert changed[:, 1].min() >= x0 and changed[:, 1].max() < x1
    again, _ = write(blank, r"x = \frac{3}{4} + \sqrt{2}", x=20, y=120, writer=writer,
                     rng=np.random.default_rng(3), size=40, latex=True, key="answer")
    assert np.array_equal(out, again)
