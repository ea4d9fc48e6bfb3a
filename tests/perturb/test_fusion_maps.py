"""The fused map's accuracy, the paper_warp inverse, shading on the sheet and low-passing a shrinking chain."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import perturb.photo.functional.geometric as fusion
import perturb.photo.functional.geometric as paper_warp
from perturb.photo import REGISTRY
from perturb.photo.functional.lighting import Light
from synth.records import RenderedPage

A4 = RenderedPage("printed", "f", "plain", "black", 150, 1240, 1754)


def _chain(seed: int, steps: list[tuple[str, int]]) -> list[fusion.Warp]:
    rng = np.random.default_rng(seed)
    warps, current, outline = [], A4, fusion.page_outline(A4)
    for subtype, severity in steps:
        op = REGISTRY[subtype]
        params = op.sample_in_chain(rng, severity, current, outline)
        warp = op.warp(params, current)
        warps.append(warp)
        outline = warp.forward(outline)
        current = fusion.move_boxes(current, warp.forward, warp.width, warp.height)
    return warps


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_the_paper_warp_inverse_undoes_the_forward_map_on_and_off_the_sheet(severity: int) -> None:
    xs, ys = np.meshgrid(np.linspace(-300, 1540, 60), np.linspace(-300, 2050, 80))
    q = np.stack([xs.ravel(), ys.ravel()], 1)
    for seed in range(8):
        params = REGISTRY["paper_warp"].sample_params(np.random.default_rng(seed), severity, A4)
        forward = paper_warp.forward_map(params, A4)[0]
        p = paper_warp.inverse_map(params, A4)(q)
        assert np.abs(forward(p) - q).max() < 5e-3, (seed, params["kind"])


@pytest.mark.parametrize("severity", [1, 3])
def test_the_composed_map_stays_within_a_fraction_of_a_pixel_of_a_fine_reference(severity: int) -> None:
    for seed in range(4):
        warps = _chain(seed, [("paper_warp", severity), ("keystone", severity), ("tilt", severity)])
        w, h = warps[-1].width, warps[-1].height
        map_x, map_y = fusion.chain_maps(warps, 1.0, w, h, src_size=(A4.width, A4.height))
        src = fusion._walk_nodes(warps, 1.0, w, h, 4)
        ref_x, ref_y = (fusion._upsample_nodes(src[..., k], w, h, 4) for k in (0, 1))
        on_sheet = (ref_x >= 0) & (ref_x <= A4.width - 1) & (ref_y >= 0) & (ref_y <= A4.height - 1)
        error = np.maximum(np.abs(map_x - ref_x), np.abs(map_y - ref_y))[on_sheet]
        assert np.percentile(error, 99.9) < 0.2, seed


def test_shading_the_flat_sheet_matches_shading_the_photo() -> None:
    """A bent sheet's light lit on the page before the remap equals lighting each photo pixel afterwards, and
    the scene's even light (mottle off) changes nothing."""
    page = np.full((A4.height, A4.width, 3), 240, np.uint8)
    for seed in range(12):
        warp = _chain(seed, [("paper_warp", 3)])[0]
        if warp.shade is not None and np.ptp(warp.shade(fusion.page_outline(A4))) > 0.05:
            break
    even = {"level": 1.0, "gradient": [0.0, 0.0], "falloff": 0.0, "centre_frac": [0.5, 0.5], "tint": [1.0, 1.0, 1.0],
            "mottle": 0.0, "mottle_seed": 0}
    light = Light(fusion.sheet_light(A4, [warp], A4.height, A4.width, 1.0, even))
    photo = light.apply(fusion.remap_chain(page, A4, [warp], None))
    xs, ys = np.meshgrid(np.arange(200, 1000, 37.0), np.arange(200, 1500, 41.0))
    q = np.stack([xs.ravel(), ys.ravel()], 1)
    expected = np.clip(240 * warp.shade(warp.inverse(q)), 0, 255)
    got = photo[ys.astype(int).ravel(), xs.astype(int).ravel(), 0].astype(float)
    assert np.abs(got - expected).max() <= 3


def test_a_chain_that_shrinks_the_sheet_low_passes_it_first(monkeypatch: pytest.MonkeyPatch) -> None:
    page = np.full((A4.height, A4.width, 3), 255, np.uint8)
    page[:, 600:601] = 0  # a one-pixel stroke
    warps = _chain(1, [("tilt", 3)])
    assert fusion.print_scale(A4, warps) < fusion.MINIFY_BLUR_BELOW
    # Low-passing first keeps the thin stroke's darkness even along its length: bilinear sampling
    # alone makes it flicker between black and nearly gone.
    spreads = []
    for blur_below in (0.0, fusion.MINIFY_BLUR_BELOW):
        monkeypatch.setattr(fusion, "MINIFY_BLUR_BELOW", blur_below)
        photo = cv2.cvtColor(fusion.remap_chain(page, A4, warps, None), cv2.COLOR_RGB2GRAY)
        rows = range(photo.shape[0] // 3, 2 * photo.shape[0] // 3, 7)
        spreads.append(np.ptp([int(photo[r].min()) for r in rows]))
    assert spreads[1] < spreads[0]
