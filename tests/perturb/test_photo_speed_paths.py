"""The fast paths of a capture give the photo the slow, obvious computation gives (issue 20's speed work)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from perturb.photo.functional.camera import add_noise, grain_band
from perturb.photo.functional.geometric import lay_on_desk
from perturb.photo.functional.lighting import Light, bloom, bloom_rows, wrap
from perturb.photo.measure import every


def _page(h: int = 600, w: int = 400) -> np.ndarray:
    rng = np.random.default_rng(1)
    img = np.full((h, w, 3), 232, np.uint8)
    img[100:110, 50:350] = 30  # a line of print
    return np.clip(img.astype(np.int16) + rng.integers(-3, 4, img.shape), 0, 255).astype(np.uint8)


def test_an_exposure_grained_band_by_band_in_the_light_pass_is_the_same_photo_as_graining_it_after() -> None:
    img = _page()
    gain = np.random.default_rng(2).uniform(0.8, 1.0, (8, 6, 3)).astype(np.float32)
    light = Light(gain, np.full((8, 6), 0.02, np.float32))
    curve = np.clip(np.arange(256) * 0.8 + 10, 0, 255).astype(np.uint8)
    table = np.linspace(1.0, 6.0, 256).astype(np.float32)
    params = {"chroma_frac": 0.0, "noise_seed": 77}
    fused = light.apply(img, curve, then=grain_band(params, table))
    assert np.array_equal(fused, add_noise(light.apply(img, curve), params, table))
    assert not np.array_equal(fused, light.apply(img, curve))  # it did add grain


@pytest.mark.parametrize("chroma", [0.0, 0.3])
def test_grain_is_unbiased_and_as_strong_as_its_table_says(chroma: float) -> None:
    flat = np.full((800, 600, 3), 128, np.uint8)
    table = np.full(256, 6.0, np.float32)
    out = add_noise(flat, {"chroma_frac": chroma, "noise_seed": 5}, table).astype(np.float64) - 128
    assert abs(out.mean()) < 0.1  # the 128 offsets of the byte planes cancel
    assert 5.2 < out.std() < 6.8
    colour_spread = (out - out.mean(axis=2, keepdims=True)).std()
    assert (colour_spread > 0.5) == (chroma > 0)  # colour blotches only when asked for


def test_the_desk_shows_where_the_sheet_is_not_and_blends_at_its_edge() -> None:
    warped = np.zeros((4, 3, 4), np.uint8)
    warped[:, 0] = (200, 180, 160, 255)  # sheet
    warped[:, 1] = (100, 90, 80, 128)  # the sheet's anti-aliased edge (premultiplied)
    desk = np.full((4, 3, 3), (60, 120, 30), np.uint8)
    out = lay_on_desk(warped, desk)
    assert (out[:, 0] == (200, 180, 160)).all()
    assert (out[:, 2] == (60, 120, 30)).all()
    expected = np.round(np.array([100, 90, 80]) + (255 - 128) / 255 * np.array([60, 120, 30]))
    assert (out[:, 1] == expected).all()


def test_wrap_folds_like_mod() -> None:
    x = np.random.default_rng(3).uniform(-500, 500, 10_000).astype(np.float32)
    for period in (1.0, 2.0, 64.0, 0.37):
        folded = wrap(x, period)
        assert folded.dtype == np.float32
        assert folded.min() >= 0 and folded.max() <= period
        assert np.allclose(np.cos(2 * np.pi * folded / period), np.cos(2 * np.pi * np.mod(x, period) / period),
                           atol=1e-3)


@pytest.mark.parametrize("shape", [(600, 400), (601, 403), (602, 405), (603, 406)])
def test_every_reads_the_same_pixels_as_a_strided_copy(shape: tuple[int, int]) -> None:
    img = np.random.default_rng(4).integers(0, 256, (*shape, 3), np.uint8)
    h, w = shape
    for step, offset in ((4, 0), (4, 2), (2, 0), (3, 1)):
        strided = img[offset::step, offset::step][:h // step, :w // step]
        assert np.array_equal(every(img, step, offset), strided)


def test_an_over_exposure_bloomed_band_by_band_in_the_light_pass_is_the_photo_bloomed_then_lit() -> None:
    img = _page()
    params = {"kind": "over", "bloom": 0.3, "bloom_px": 3.0}
    # The obvious computation: the whole photo bloomed (its brightness spread at half size), then lit.
    small = cv2.cvtColor(cv2.resize(img, (200, 300), interpolation=cv2.INTER_AREA), cv2.COLOR_RGB2GRAY)
    spread = cv2.cvtColor(cv2.resize(cv2.GaussianBlur(small, (0, 0), 1.5), (400, 600)), cv2.COLOR_GRAY2RGB)
    bloomed = cv2.max(img, cv2.addWeighted(img, 0.7, spread, 0.3, 0.0))
    light = Light(np.random.default_rng(2).uniform(0.8, 1.0, (8, 6)).astype(np.float32))
    curve = np.clip(np.arange(256) * 1.2, 0, 255).astype(np.uint8)
    fused = light.apply(img, curve, source=bloom_rows(img, params))
    assert np.array_equal(fused, light.apply(bloomed, curve))
    assert np.array_equal(bloom(img, params), bloomed)
    assert bloom_rows(img, {**params, "kind": "under"}) is None


def test_an_exposure_measured_on_the_levels_it_aimed_at_records_what_measuring_afresh_records() -> None:
    from perturb.photo import REGISTRY
    from perturb.photo.base import strip_private
    from synth.records import Box, RenderedPage

    img = _page()
    page = RenderedPage(style="printed", font="f", paper="plain", ink="black", dpi=150, width=400, height=600,
                        layout=(Box("step", "l0", 40.0, 90.0, 360.0, 120.0),))
    op = REGISTRY["exposure"]
    for seed in range(4):
        params = op.sample_in_photo(np.random.default_rng(seed), 2, page, img)
        assert "_seen" in params and "_seen" not in strip_private(params)
        after, _ = op.apply(img, params, page)
        assert op.measure(img, after, params, page) == op.measure(img, after, strip_private(params), page)


def test_colour_noise_upsampled_beside_the_luminance_grain_is_the_grain_made_band_by_band() -> None:
    from perturb.photo.functional import camera

    img = _page(700, 500)
    params = {"sigma_paper": 5.0, "chroma_frac": 0.3, "noise_seed": 11}
    out = add_noise(img, params)
    # The obvious computation: the blotches upsampled first, then each of in_halves's bands grained in turn.
    table = (5.0 * np.sqrt(0.3 + 0.7 * np.arange(256, dtype=np.float32) / camera.NOISE_PAPER)).astype(np.float32)
    grabbed: list[np.ndarray] = []
    upsample = camera._upsample_colour
    camera._upsample_colour = lambda *a: grabbed.append(upsample(*a)) or grabbed[-1]
    try:
        add_noise(img, params)
    finally:
        camera._upsample_colour = upsample
    slow = np.empty_like(img)
    for rows in (slice(0, 350), slice(350, 700)):
        camera._grain(img, table, grabbed[0], slow, rows, 11, float(np.sqrt(1 - 0.3**2)))
    assert np.array_equal(out, slow)


def test_text_ink_on_bytes_marks_exactly_what_the_float32_comparison_marks() -> None:
    from perturb.photo.measure import text_ink

    gray = np.repeat(np.arange(256, dtype=np.uint8), 256).reshape(256, 256)  # every (grey, paper) pair
    paper = np.ascontiguousarray(gray.T)
    ink = text_ink(gray, paper)
    assert ink.dtype == bool and np.array_equal(ink, gray.astype(np.float32) < 0.7 * paper.astype(np.float32))
    page = _page()[..., 0]
    assert np.array_equal(text_ink(page), page.astype(np.float32) < 0.7 * cv2.dilate(page, np.ones((9, 9), np.uint8)))


def test_a_tall_photo_laid_on_its_desk_half_by_half_is_the_one_pass_blend() -> None:
    rng = np.random.default_rng(8)
    warped = rng.integers(0, 256, (601, 37, 4), np.uint8)
    desk = rng.integers(0, 256, (601, 37, 3), np.uint8)
    uncovered = cv2.cvtColor(cv2.bitwise_not(cv2.extractChannel(warped, 3)), cv2.COLOR_GRAY2RGB)
    expected = cv2.add(cv2.cvtColor(warped, cv2.COLOR_RGBA2RGB), cv2.multiply(desk, uncovered, scale=1 / 255))
    assert np.array_equal(lay_on_desk(warped, desk), expected)


@pytest.mark.parametrize("height", [512, 601, 1031])
def test_a_blur_kernel_convolved_in_halves_is_one_filter2d_pass(height: int) -> None:
    from perturb.photo.functional.camera import DIRECT_TAPS, convolve, disk_kernel, line_kernel

    img = cv2.GaussianBlur(np.random.default_rng(height).integers(0, 256, (height, 90, 3), np.uint8), (0, 0), 1.0)
    kernels = [disk_kernel(r) for r in (1.2, 2.4, 3.3, 5.0)] + [line_kernel(n, a) for n, a in ((2.1, 33), (4.1, 77),
                                                                                              (8.3, 10), (12, 45))]
    assert max(k.size for k in kernels) > DIRECT_TAPS  # the largest goes through OpenCV whole
    for kernel in kernels:
        assert np.array_equal(convolve(img, kernel), cv2.filter2D(img, -1, kernel, borderType=cv2.BORDER_REFLECT))


def test_the_percentile_of_bytes_from_their_histogram_is_numpys() -> None:
    from perturb.photo.measure import percentile_u8

    rng = np.random.default_rng(9)
    for k in range(300):
        lo = int(rng.integers(0, 256))
        values = rng.integers(lo, int(rng.integers(lo, 256)) + 1, (int(rng.integers(1, 40)), 1 + k % 13), np.uint8)
        for q in (0, 37.3, 50, 90, 95, 99.9, 100):
            assert percentile_u8(values, q) == float(np.percentile(values.astype(np.float32), q))


def test_colour_blotches_upsample_unbiased_within_a_level_of_the_exact_bilinear_kernel() -> None:
    from perturb.photo.functional import camera

    blotches = np.random.default_rng(10).integers(100, 157, (150, 101, 3), np.uint8)
    up = camera._upsample_colour(blotches, 407, 601).astype(np.int16)
    exact = cv2.resize(blotches, (407, 601), interpolation=cv2.INTER_LINEAR_EXACT).astype(np.int16)
    assert np.abs(up - exact).max() <= 1 and abs(float((up - exact).mean())) < 0.01


def test_measures_held_back_until_the_jpeg_are_the_records_measured_as_each_op_applied(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from perturb.photo import worker
    from perturb.photo.profile import degrade_profile
    from synth.records import Box, RenderedPage

    img = _page(640, 480)
    page = RenderedPage(style="printed", font="f", paper="plain", ink="black", dpi=150, width=480, height=640,
                        layout=(Box("step", "l0", 50.0, 100.0, 350.0, 110.0),))
    steps = [("shadow", 1), ("glare", 1), ("exposure", 1), ("blur", 2), ("noise", 1), ("jpeg", 1)]
    held = degrade_profile(img, page, steps, np.random.default_rng(4))
    monkeypatch.setattr(worker.Deferred, "__call__", lambda self, work: worker.later(work))
    at_once = degrade_profile(img, page, steps, np.random.default_rng(4))
    assert np.array_equal(held[0], at_once[0])
    assert [(r.subtype, r.params, r.measured) for r in held[2]] == [(r.subtype, r.params, r.measured)
                                                                    for r in at_once[2]]
    assert [r.subtype for r in held[2]] == ["shadow", "glare", "exposure", "blur", "noise", "jpeg"]
