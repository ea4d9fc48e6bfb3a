"""Bad input to every photo op and to a capture profile gives a named DegradationError, never a crash.

Each case either works correctly (odd-sized images, tiny but valid images, an empty layout for ops
that need none) or raises ``DegradationError`` whose message names the field and says what to do.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

import cv2
import numpy as np
import pytest

from perturb.photo import REGISTRY, degrade, degrade_photo
from perturb.photo.base import DegradationError, NotApplicableError, PageText, ReversePage
from perturb.photo.handwritten import page_text
from perturb.photo.profile import degrade_profile
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.generators import get_family
from synth.records import Box, RenderedPage
from tests.perturb.test_figure_marking import with_figure

OPS = sorted(REGISTRY)
PROFILE = [("background", 1), ("question_marking", 1), ("shadow", 2), ("glare", 1), ("keystone", 1), ("tilt", 1),
           ("jpeg", 1)]
BAD_SEVERITIES = [-1, 4, 1.5, "2", True, None]


@cache
def sheet() -> tuple[np.ndarray, RenderedPage, PageText, np.ndarray]:
    """A 60 dpi MCQ worksheet with a figure, its words, and another page for the reverse side."""
    p = get_family("algebra.linear.two_step").build(np.random.default_rng(1), difficulty="hard",
                                                    question_type="mcq", problem_id="bad1")
    variant = clean_variant(p)
    r = render_page(p, variant, dpi=60)
    img, page = with_figure(r.pixels, r.page, np.random.default_rng(5))
    back = render_page(p, variant, dpi=60, style="printed", seed=9).pixels
    return img, page, page_text(p, variant), back


def run(op: str, image: np.ndarray, page: RenderedPage, severity, seed: int = 0, **kw):
    _, _, text, back = sheet()
    return degrade(image, page, op, severity, np.random.default_rng(seed), text=text,
                   reverse=ReversePage(back, "back"), **kw)


def resized(image: np.ndarray, page: RenderedPage, width: int, height: int) -> tuple[np.ndarray, RenderedPage]:
    """The page scaled to ``width`` px wide (dpi scaled with it), then cut or padded with paper to ``height``."""
    s = width / page.width
    h = round(page.height * s)
    pixels = cv2.resize(image, (width, h), interpolation=cv2.INTER_AREA)
    if height > h:
        pixels = np.concatenate([pixels, np.repeat(pixels[-1:], height - h, axis=0)])
    boxes = tuple(Box(b.kind, b.ref, round(b.x0 * s, 2), round(min(b.y0 * s, height), 2), round(b.x1 * s, 2),
                      round(min(b.y1 * s, height), 2)) for b in page.layout)
    return (np.ascontiguousarray(pixels[:height]),
            replace(page, width=width, height=height, dpi=round(page.dpi * s), layout=boxes))


def assert_valid_output(out: np.ndarray, new_page: RenderedPage) -> None:
    assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3
    assert out.shape[:2] == (new_page.height, new_page.width)
    assert all(0 <= b.x0 <= b.x1 <= new_page.width and 0 <= b.y0 <= b.y1 <= new_page.height
               for b in new_page.layout)


@pytest.mark.parametrize("severity", BAD_SEVERITIES, ids=repr)
@pytest.mark.parametrize("op", OPS)
def test_a_severity_that_is_not_an_integer_0_to_3_is_named(op: str, severity) -> None:
    img, page, _, _ = sheet()
    with pytest.raises(DegradationError, match=re.escape(f"severity must be an integer 0-3, got {severity!r}")):
        run(op, img, page, severity)


@pytest.mark.parametrize("severity", BAD_SEVERITIES, ids=repr)
def test_a_profile_with_a_bad_severity_is_named(severity) -> None:
    img, page, text, _ = sheet()
    with pytest.raises(DegradationError, match=re.escape(f"severity must be an integer 0-3, got {severity!r}")):
        degrade_profile(img, page, [("blur", 1), ("tilt", severity)], np.random.default_rng(0), text=text)


@pytest.mark.parametrize("op", [s for s in OPS if REGISTRY[s].levels != (1, 2, 3)])
def test_a_severity_outside_the_ops_rubric_says_which_it_has(op: str) -> None:
    img, page, _, _ = sheet()
    missing = next(s for s in (1, 2, 3) if s not in REGISTRY[op].levels)
    with pytest.raises(DegradationError, match=f"{op} has severities 0 and .*got {missing}; list only those"):
        run(op, img, page, missing)


def test_an_unknown_op_lists_the_known_ones() -> None:
    img, page, _, _ = sheet()
    with pytest.raises(DegradationError, match=r"unknown degradation 'smudge'; available: \['background'"):
        degrade(img, page, "smudge", 1, np.random.default_rng(0))
    with pytest.raises(DegradationError, match=r"unknown degradation 'smudge'; available: \['background'"):
        degrade_profile(img, page, [("blur", 1), ("smudge", 2)], np.random.default_rng(0))


@cache
def bad_image(kind: str):
    img = sheet()[0]
    return {"gray_hw": lambda: cv2.cvtColor(img, cv2.COLOR_RGB2GRAY),
            "gray_hw1": lambda: cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)[..., None],
            "rgba": lambda: cv2.cvtColor(img, cv2.COLOR_RGB2RGBA),
            "float01": lambda: img.astype(np.float32) / 255.0,
            "uint16": lambda: img.astype(np.uint16) * 257,
            "nested_list": lambda: img[:32, :32].tolist()}[kind]()


BAD_KINDS = ["gray_hw", "gray_hw1", "rgba", "float01", "uint16", "nested_list"]


@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize("op", OPS)
def test_an_image_that_is_not_rgb_uint8_is_named_with_the_conversion(op: str, kind: str) -> None:
    _, page, _, _ = sheet()
    severity = REGISTRY[op].levels[-1]
    with pytest.raises(DegradationError, match=r"^image: degradations take H x W x 3 uint8 RGB images.*convert first"):
        run(op, bad_image(kind), page, severity)


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_profile_refuses_an_image_that_is_not_rgb_uint8(kind: str) -> None:
    _, page, text, _ = sheet()
    with pytest.raises(DegradationError, match=r"^image: degradations take H x W x 3 uint8 RGB images.*convert first"):
        degrade_profile(bad_image(kind), page, PROFILE, np.random.default_rng(0), text=text)


@pytest.mark.parametrize("shape", [(0, 0, 3), (0, 40, 3), (12, 300, 3)])
@pytest.mark.parametrize("op", OPS)
def test_an_empty_or_tiny_image_is_named(op: str, shape: tuple[int, int, int]) -> None:
    _, page, _, _ = sheet()
    with pytest.raises(DegradationError, match=r"^image: too small to degrade .*at least 16 px on each side"):
        run(op, np.zeros(shape, np.uint8), page, REGISTRY[op].levels[0])


def test_a_profile_refuses_an_empty_image() -> None:
    _, page, text, _ = sheet()
    with pytest.raises(DegradationError, match=r"^image: too small to degrade \(0x0 px\)"):
        degrade_profile(np.zeros((0, 0, 3), np.uint8), page, PROFILE, np.random.default_rng(0), text=text)


@pytest.mark.parametrize("op", OPS)
def test_an_odd_sized_image_degrades_at_every_severity_and_replays(op: str) -> None:
    img, page, _, _ = sheet()
    odd, odd_page = resized(img, page, 333, 517)
    for severity in REGISTRY[op].levels:
        out, new_page, rec = run(op, odd, odd_page, severity, seed=severity)
        assert_valid_output(out, new_page)
        assert out.tobytes() != odd.tobytes(), f"{op} severity {severity} left the odd-sized page unchanged"
        if REGISTRY[op].stage != "geometry":
            assert out.shape == odd.shape
        again, again_page, _ = run(op, odd, odd_page, severity, seed=99, params=rec.params)
        assert again.tobytes() == out.tobytes() and again_page == new_page


def test_a_profile_works_on_an_odd_sized_image_and_replays() -> None:
    img, page, text, _ = sheet()
    odd, odd_page = resized(img, page, 333, 517)
    out, new_page, recs = degrade_profile(odd, odd_page, PROFILE, np.random.default_rng(3), text=text)
    assert_valid_output(out, new_page)
    assert [r.subtype for r in recs] == ["question_marking", "keystone", "tilt", "background", "shadow", "glare",
                                         "jpeg"]
    again, again_page, _ = degrade_profile(odd, odd_page, PROFILE, None, params=[r.params for r in recs], text=text)
    assert again.tobytes() == out.tobytes() and again_page == new_page


@pytest.mark.parametrize("op", OPS)
def test_an_empty_layout_either_works_or_is_named_not_applicable(op: str) -> None:
    img, page, _, _ = sheet()
    bare = replace(page, layout=())
    severity = REGISTRY[op].levels[-1]
    if not REGISTRY[op].applies(bare):
        with pytest.raises(NotApplicableError, match=f"^{op} does not apply to this page: it "
                                                     f"{re.escape(REGISTRY[op].requirement)}"):
            run(op, img, bare, severity)
        return
    out, new_page, rec = run(op, img, bare, severity)
    assert_valid_output(out, new_page)
    assert new_page.layout == ()
    assert out.tobytes() != img.tobytes(), f"{op} did nothing on a page without layout boxes"


def test_a_profile_on_an_empty_layout_skips_nothing_silently() -> None:
    img, page, text, _ = sheet()
    bare = replace(page, layout=())
    # question_marking needs question tokens: the profile says so instead of dropping the op.
    with pytest.raises(NotApplicableError, match="^question_marking does not apply"):
        degrade_profile(img, bare, PROFILE, np.random.default_rng(0), text=text)
    layout_free = [s for s in PROFILE if REGISTRY[s[0]].applies(bare)]
    out, new_page, recs = degrade_profile(img, bare, layout_free, np.random.default_rng(0), text=text)
    assert_valid_output(out, new_page)
    assert len(recs) == len(layout_free)


@pytest.mark.parametrize("op", OPS)
def test_degrade_photo_names_bad_input_like_degrade(op: str) -> None:
    img, page, text, _ = sheet()
    with pytest.raises(DegradationError, match=re.escape("severity must be an integer 0-3, got 4")):
        degrade_photo(img, page, op, 4, np.random.default_rng(0), text=text)
    with pytest.raises(DegradationError, match=r"^image: degradations take H x W x 3 uint8 RGB images"):
        degrade_photo(bad_image("rgba"), page, op, REGISTRY[op].levels[0], np.random.default_rng(0), text=text)
    with pytest.raises(DegradationError, match=r"unknown degradation 'smudge'"):
        degrade_photo(img, page, "smudge", 1, np.random.default_rng(0), text=text)


def test_replaying_params_that_lack_a_key_is_named() -> None:
    image, page, _, _ = sheet()
    _, _, record = degrade(image, page, "shadow", 2, np.random.default_rng(0))
    old = {k: v for k, v in record.params.items() if k != "penumbra_near"}  # as recorded before the soft penumbra
    with pytest.raises(DegradationError, match=r"shadow: params lack 'penumbra_near'"):
        degrade(image, page, "shadow", 2, np.random.default_rng(0), params=old)


def test_replaying_a_profile_whose_geometry_params_lack_a_key_is_named() -> None:
    image, page, _, _ = sheet()
    steps = [("tilt", 1), ("jpeg", 1)]
    _, _, records = degrade_profile(image, page, steps, np.random.default_rng(0))
    params = [dict(r.params) for r in records]
    del params[0]["angle_deg"]
    with pytest.raises(DegradationError, match=r"tilt: params lack 'angle_deg'"):
        degrade_profile(image, page, steps, None, params=params)
