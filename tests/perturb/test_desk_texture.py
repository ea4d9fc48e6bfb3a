"""The desk under a photographed sheet is drawn on coarse texels (a twelfth of the photo's resolution): its detail
must look like a camera's view of the desk at that resolution, never like point samples of finer detail (which
drew a wood desk as rows of dark dots, issue 20 item 9)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from perturb.photo.functional.desk import _clutter, desk_photo, desk_texture
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


def test_planks_meet_along_a_line_not_a_staircase() -> None:
    """A texel straddling the joint of two planks shows both (each by its share of the texel), so the joint is a
    straight line once the desk is warped up to the photo; point-sampled, each such texel took one plank's shade
    and the joint was a sawtooth of texels (seen along a wood desk's planks at 150 dpi)."""
    texel, angle, seed = 0.08, 12.0, 5  # coarse: the joint's dark line (0.5 mm, spread over a texel) is faint
    params = {"desk_kind": "wood", "desk_rgb": [150, 110, 70], "desk_seed": seed, "desk_grain_angle_deg": angle}
    plank_w = float(np.random.default_rng(seed).uniform(0.22, 0.5))  # the texture's first draw for wood
    a = np.deg2rad(angle)
    normal = np.array([-np.sin(a), np.cos(a)])  # the direction across the planks (v grows along it)
    xs = (np.arange(4 * N, dtype=np.float32) + 0.5) * texel
    x, y = np.meshgrid(xs, xs)
    v = y * np.cos(a) - x * np.sin(a)
    d = v - np.round(v / plank_w) * plank_w  # signed distance to the nearest joint
    centre = np.abs(d) < texel / 4  # texels the joint crosses near their middle
    tex = desk_texture(params, x, y, texel)

    def shifted(k: float) -> np.ndarray:  # the same texels moved across the joint, to k texels from it
        off = (k * texel - d[centre])[:, None] * normal
        return desk_texture(params, x[centre] + off[:, 0], y[centre] + off[:, 1], texel).mean(-1)

    here, below, above = tex[centre].mean(-1), shifted(-1.0), shifted(1.0)
    step = np.abs(above - below)
    strong = step > 6.0  # grey levels: planks whose shades differ clearly
    assert strong.sum() > 20
    # The share of the way from one plank's shade to the other's: about half on the joint, never one plank alone.
    share = (here - below)[strong] / (above - below)[strong]
    one_plank = (share < 0.15) | (share > 0.85)
    assert one_plank.mean() < 0.2


def test_a_thing_left_on_the_desk_has_a_sharp_smooth_edge() -> None:
    """The notebook lies on the desk in the sheet's plane, so its outline is drawn at the photo's resolution:
    anti-aliased (a blend of notebook and desk along it) and a pixel or two wide, as sharp as the sheet's edge. Drawn
    into the desk's texels (a twelfth of the photo's resolution), its edge was a blur a dozen pixels wide."""
    params = {**sample_desk(np.random.default_rng(4)), "desk_kind": "laminate", "desk_rgb": [128, 128, 128],
              "clutter": "notebook"}
    h, w, page_w = 1600, 1200, 1100
    photo = desk_photo(params, h, w, np.eye(3), page_w).astype(np.float32)
    box, colour = _clutter(params, np.eye(3), (w, h), page_w)
    blue = (photo[..., 2] - photo[..., 0]) / (colour[2] - colour[0])  # 0 on the grey desk, 1 on the notebook
    inside = blue > 0.95
    blended = (blue > 0.1) & (blue < 0.9)
    perimeter = float(np.linalg.norm(np.roll(box, 1, axis=0) - box, axis=1).sum())
    assert inside.sum() > 10_000  # the notebook is in the picture
    # Every pixel its outline crosses is a blend (on a frame's edge the outline is cut: the perimeter bounds it),
    # and the blends are a band about a pixel wide, not a dozen.
    assert 0 < blended.sum() < 2.0 * perimeter
    assert blended.sum() > 0.2 * min(perimeter, 2 * (h + w))
