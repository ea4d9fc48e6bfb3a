"""The desk under a photographed sheet is drawn on coarse texels (a twelfth of the photo's resolution): its detail
must look like a camera's view of the desk at that resolution, never like point samples of finer detail (which
drew a wood desk as rows of dark dots, issue 20 item 9)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from perturb.photo.functional.desk import _clutter, desk_texture
from perturb.photo.fusion import sample_desk

N, SUPER = 48, 8  # texels each way, and the supersampling of the reference


def _render(params: dict, texel: float, step: int = 1) -> np.ndarray:
    xs = (np.arange(N * step, dtype=np.float32) + 0.5) * texel / step
    x, y = np.meshgrid(xs, xs)
    return desk_texture(params, x, y, texel / step)


def _speckle(image: np.ndarray) -> float:
    return float(cv2.Laplacian(image.mean(-1), cv2.CV_32F).std())


@pytest.mark.parametrize("kind", ["wood", "fabric", "laminate"])
@pytest.mark.parametrize("seed", [3, 17])
@pytest.mark.parametrize("texel", [0.016, 0.03])  # a sheet filling the frame, and one small in a desk scene
def test_a_coarse_desk_is_the_fine_desk_as_a_camera_averages_it(kind: str, seed: int, texel: float) -> None:
    params = {"desk_kind": kind, "desk_rgb": [150, 110, 70], "desk_seed": seed, "desk_grain_angle_deg": 12.0}
    coarse = _render(params, texel)
    # What a camera records on those texels: the desk drawn eight times finer, each texel's area averaged.
    seen = cv2.resize(_render(params, texel, SUPER), (N, N), interpolation=cv2.INTER_AREA)
    assert float(np.abs(coarse - seen).mean()) < 4.0  # grey levels: the same colours in the same places
    # No aliasing: no more texel-to-texel speckle than the averaged view has (point samples of grain lines, weave
    # or specks finer than a texel had 2.5-10x more).
    assert _speckle(coarse) <= 1.15 * _speckle(seen) + 1.0


def test_fine_texels_keep_the_detail() -> None:
    """Close up (texels well under the grain's size) the wood's grain and joints and the laminate's specks are
    drawn, not faded: the fading is for detail the texels cannot hold, not a blur of every desk."""
    for kind in ("wood", "laminate"):
        params = {"desk_kind": kind, "desk_rgb": [150, 110, 70], "desk_seed": 5, "desk_grain_angle_deg": 0.0}
        assert _speckle(_render(params, 0.002)) > 2 * _speckle(_render(params, 0.016))


def test_a_thing_left_on_the_desk_has_smooth_edges() -> None:
    """The notebook's outline is anti-aliased on the texels (OpenCV fills a float image's polygon without it, and
    its edge was a staircase of texels). On a grey desk a texel is the notebook's blue, the grey desk (maybe in its
    shadow), or, on the outline, a blend of the two, which is neither."""
    params = {**sample_desk(np.random.default_rng(4)), "clutter": "notebook"}
    tex = np.full((300, 400, 3), 128.0, np.float32)
    to_tex = np.diag([0.25, 0.25, 1.0])  # a 1600 x 1200 frame on texels a quarter of its pixels
    _clutter(params, tex, to_tex, (1600, 1200), 0.01)
    grey = np.ptp(tex, axis=-1) < 1e-3
    blue = np.isclose(tex, tex[~grey][np.argmax(np.ptp(tex[~grey], axis=-1))], atol=1e-3).all(axis=-1)
    blended = ~grey & ~blue
    assert blue.sum() > 1000  # the notebook is in the picture
    assert blended.sum() > np.sqrt(blue.sum())  # a good part of its outline (a square's is 4 sqrt(area))
