"""A phone's lens is focused at one distance: a sheet tipped towards the camera is sharp where the phone focused
and soft towards its far (and near) edge, the more so the steeper the pose; a flat sheet is sharp everywhere."""

from __future__ import annotations

from functools import cache

import cv2
import numpy as np

from perturb.photo import degrade
from perturb.photo.functional.camera import defocus
from perturb.photo.fusion import APERTURE_MM
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.generators import get_family
from tests.perturb.test_photo_ops import pages

LENS = ("aperture_mm", "focus_frac")


def _sharpness(img: np.ndarray, rows: slice) -> float:
    grey = cv2.cvtColor(img[rows], cv2.COLOR_RGB2GRAY)
    return float(cv2.Laplacian(grey, cv2.CV_32F).var())


@cache
def _page_at_150dpi():
    """A worksheet at the photo configs' 150 dpi (a blur's pixels grow with the dpi; at the suite's 60 dpi a
    tipped page's spread mostly stays under what the resampling itself spreads)."""
    p = get_family("algebra.linear.two_step").build(np.random.default_rng(3), difficulty="hard",
                                                    question_type="free", problem_id="dof")
    r = render_page(p, clean_variant(p), dpi=150)
    return r.pixels, r.page


def _without_lens(params: dict) -> dict:
    return {k: v for k, v in params.items() if k not in LENS}


def test_defocus_of_one_sigma_everywhere_is_that_gaussian_and_of_zero_is_the_image() -> None:
    img = (np.random.default_rng(0).random((120, 90, 3)) * 255).astype(np.uint8)
    assert defocus(img, np.zeros((120, 90), np.float32)) is img
    for sigma in (0.6, 1.5, 3.0):
        got = defocus(img, np.full((120, 90), sigma, np.float32)).astype(int)
        want = cv2.GaussianBlur(img, (0, 0), sigma).astype(int)
        # from sigma 1 the level is blurred at half size: the same blur to within a few levels
        assert np.abs(got - want)[10:-10, 10:-10].mean() < (0.5 if sigma < 1 else 4.0), sigma


def test_a_sheet_soft_along_one_side_is_blurred_there_as_a_whole_photo_blur_would_and_sharp_elsewhere() -> None:
    # A page tipped sideways: out of focus in a band of columns at its left edge (with a corner beyond it at the
    # bottom), in focus elsewhere. Odd sizes on purpose (a phone photo 1277 px wide): the half-size levels pad them.
    rng = np.random.default_rng(1)
    img = cv2.GaussianBlur((rng.random((241, 317, 3)) * 255).astype(np.uint8), (0, 0), 0.7)
    sigma = np.zeros((241, 317), np.float32)
    sigma[:, :61] = np.linspace(2.6, 0.0, 61, dtype=np.float32)[None, :]
    sigma[200:, 250:] = 0.8
    got = defocus(img, sigma)
    sharp = sigma < 0.35
    assert np.array_equal(got[sharp], img[sharp])  # the sharp middle is the image, byte for byte
    for sig, rows, cols in ((2.6, slice(20, 220), slice(0, 3)), (0.8, slice(210, 238), slice(260, 314))):
        want = cv2.GaussianBlur(img, (0, 0), float(sig)).astype(int)
        # the band's context is read around it, so at its own sigma it is that blur of the whole photo
        assert np.abs(got[rows, cols].astype(int) - want[rows, cols]).mean() < (1.0 if sig < 1 else 4.0), sig


def test_every_geometric_scene_records_a_lens_and_keeps_it_at_every_severity() -> None:
    img, page = pages()[0]
    for op in ("tilt", "keystone", "paper_warp"):
        for seed in range(4):
            lens = [{k: degrade(img, page, op, s, np.random.default_rng(seed))[2].params[k] for k in LENS}
                    for s in (1, 2, 3)]
            assert lens[0] == lens[1] == lens[2], (op, seed)
            assert APERTURE_MM[0] <= lens[0]["aperture_mm"] <= APERTURE_MM[1]
            assert all(0.4 <= f <= 0.6 for f in lens[0]["focus_frac"])


def test_a_steep_keystone_is_soft_at_its_far_edge_and_a_flat_sheet_is_sharp_everywhere() -> None:
    img, page = _page_at_150dpi()
    softer = 0
    for seed in range(6):
        out, _, rec = degrade(img, page, "keystone", 3, np.random.default_rng(seed))
        if rec.params["short_side"] != "top":
            continue
        sharp, _, _ = degrade(img, page, "keystone", 3, np.random.default_rng(seed), params=_without_lens(rec.params))
        band = slice(0, out.shape[0] // 3)  # the writing is in the page's top third, on the far edge here
        assert _sharpness(out, band) < 0.9 * _sharpness(sharp, band), seed
        softer += 1
    assert softer >= 1  # the seeds include a pose with the far edge on top
    for seed in range(4):  # a turned sheet square to the camera: in focus everywhere, byte for byte
        out, _, rec = degrade(*pages()[seed % 3], "tilt", 3, np.random.default_rng(seed))
        flat, _, _ = degrade(*pages()[seed % 3], "tilt", 3, np.random.default_rng(seed),
                             params=_without_lens(rec.params))
        assert np.array_equal(out, flat), seed


def test_the_far_edge_blurs_more_as_the_keystone_steepens() -> None:
    img, page = _page_at_150dpi()
    for seed in range(4):
        blur = []
        for s in (1, 2, 3):
            out, _, rec = degrade(img, page, "keystone", s, np.random.default_rng(seed))
            sharp, _, _ = degrade(img, page, "keystone", s, np.random.default_rng(seed),
                                  params=_without_lens(rec.params))
            blur.append(float(np.abs(out.astype(int) - sharp.astype(int)).mean()))
        assert blur[0] <= blur[1] <= blur[2] and blur[2] > 0, (seed, blur)


def test_records_made_before_the_lens_replay_in_focus() -> None:
    img, page = _page_at_150dpi()
    out, _, rec = degrade(img, page, "keystone", 3, np.random.default_rng(1))
    old = _without_lens(rec.params)
    again, _, rec2 = degrade(img, page, "keystone", 3, np.random.default_rng(1), params=old)
    assert not any(k in rec2.params for k in LENS)
    assert not np.array_equal(out, again)  # the lens made a difference here, and the old record is without it
