"""The blur op: identity at severity 0, replayable, graded by sigma, and strict about input."""

from __future__ import annotations

import numpy as np
import pytest

from perturb.photo import degrade
from perturb.photo.base import DegradationError
from perturb.photo.blur import SIGMA_AT_150
from synth.records import RenderedPage

PAGE = RenderedPage(style="printed", font="f", paper="plain", ink="black", dpi=100, width=200, height=120)


def _page_image() -> np.ndarray:
    rng = np.random.default_rng(0)
    img = np.full((120, 200, 3), 245, np.uint8)
    img[20:100:8, 10:190] = rng.integers(0, 60, (10, 180, 3), dtype=np.uint8)
    return img


def test_severity_zero_returns_identical_bytes() -> None:
    img = _page_image()
    out, page, record = degrade(img, PAGE, "blur", 0, np.random.default_rng(1))
    assert out.tobytes() == img.tobytes() and page == PAGE and record.severity == 0


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_sigma_lands_in_the_severity_bin(severity: int) -> None:
    lo, hi = SIGMA_AT_150[severity]
    for seed in range(50):
        _, _, rec = degrade(_page_image(), PAGE, "blur", severity, np.random.default_rng(seed))
        assert lo <= rec.measured["sigma_at_150dpi"] <= hi
        assert rec.measured["sigma_px"] == pytest.approx(rec.measured["sigma_at_150dpi"] * PAGE.dpi / 150, rel=1e-3)


def test_harm_grows_with_severity() -> None:
    ratios = [degrade(_page_image(), PAGE, "blur", s, np.random.default_rng(5))[2].measured["sharpness_ratio"]
              for s in (1, 2, 3)]
    assert ratios[0] > ratios[1] > ratios[2]


def test_replaying_recorded_params_reproduces_the_bytes() -> None:
    img = _page_image()
    out, _, rec = degrade(img, PAGE, "blur", 2, np.random.default_rng(9))
    again, _, _ = degrade(img, PAGE, "blur", 2, np.random.default_rng(123), params=rec.params)
    assert again.tobytes() == out.tobytes()


@pytest.mark.parametrize("bad", [np.zeros((50, 50), np.uint8), np.zeros((50, 50, 4), np.uint8),
                                 np.zeros((50, 50, 3), np.float32), np.zeros((4, 4, 3), np.uint8)])
def test_bad_images_are_rejected_with_a_named_error(bad: np.ndarray) -> None:
    with pytest.raises(DegradationError, match="image"):
        degrade(bad, PAGE, "blur", 1, np.random.default_rng(0))


def test_bad_severity_and_unknown_op_are_named() -> None:
    with pytest.raises(DegradationError, match="severity"):
        degrade(_page_image(), PAGE, "blur", 7, np.random.default_rng(0))
    with pytest.raises(DegradationError, match="unknown degradation"):
        degrade(_page_image(), PAGE, "smudge", 1, np.random.default_rng(0))
