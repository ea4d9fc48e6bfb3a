"""Fused geometry: a chain of geometric ops is one remap that matches applying them one by one."""

from __future__ import annotations

import numpy as np
import pytest

from perturb.photo.profile import degrade_profile
from tests.perturb.test_photo_ops import _ink_only, pages

CHAINS = [[("paper_warp", 2), ("keystone", 1), ("tilt", 1)],
          [("keystone", 2), ("tilt", 2), ("background", 2)],
          [("tilt", 1), ("background", 1), ("rotation", 1)]]


@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: "+".join(s for s, _ in c))
def test_fused_chain_matches_the_ops_applied_one_after_another(chain) -> None:
    img, page = pages()[0]
    fused, fpage, recs = degrade_profile(img, page, chain, np.random.default_rng(4))
    params = [r.params for r in recs]
    seq, spage, srecs = degrade_profile(img, page, chain, None, params=params, fuse=False)
    assert fused.shape == seq.shape and (fpage.width, fpage.height) == (spage.width, spage.height)
    # The sheet: where a white and a black input give different outputs (the desk is the same for both).
    white, _, _ = degrade_profile(np.full_like(img, 255), page, chain, None, params=params)
    black, _, _ = degrade_profile(np.zeros_like(img), page, chain, None, params=params)
    sheet = (white.astype(int) - black).min(axis=2) > 150
    # One interpolation instead of several: on the sheet the two agree except for resampling at strokes.
    diff = np.abs(fused.astype(int) - seq.astype(int)).max(axis=2)[sheet]
    # (The first chain's portrait sheet in a landscape frame is 26 % of the photo: the camera frames the flat sheet.)
    assert sheet.mean() > 0.2 and np.median(diff) <= 2 and (diff > 60).mean() < 0.01
    assert [r.measured for r in recs] == [r.measured for r in srecs]


@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: "+".join(s for s, _ in c))
def test_boxes_moved_through_the_composed_map_hold_their_ink(chain) -> None:
    img, page = pages()[1]
    _, new_page, recs = degrade_profile(img, page, chain, np.random.default_rng(2))
    params = [r.params for r in recs]
    for ref in ("1", "2"):
        paper, one = _ink_only(img, page, ref)
        blank_out, _, _ = degrade_profile(paper, page, chain, None, params=params)
        ink_out, _, _ = degrade_profile(one, page, chain, None, params=params)
        ink = (blank_out.astype(int) - ink_out.astype(int)).sum(axis=2) > 90
        box = next(b for b in new_page.layout if b.kind == "step" and b.ref == ref)
        inside = np.zeros_like(ink)
        y0, x0 = max(0, int(box.y0) - 1), max(0, int(box.x0) - 1)
        inside[y0:int(np.ceil(box.y1)) + 2, x0:int(np.ceil(box.x1)) + 2] = True
        assert ink.sum() > 10 and (ink & ~inside).sum() <= 0.01 * ink.sum()


def test_composed_boxes_are_tighter_than_boxes_moved_op_by_op() -> None:
    img, page = pages()[2]
    chain = [("tilt", 2), ("background", 1)]
    _, fused_page, recs = degrade_profile(img, page, chain, np.random.default_rng(1))
    _, seq_page, _ = degrade_profile(img, page, chain, None, params=[r.params for r in recs], fuse=False)

    def area(p):
        return sum((b.x1 - b.x0) * (b.y1 - b.y0) for b in p.layout if b.kind == "step")

    assert area(fused_page) < area(seq_page)


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_fused_lighting_matches_the_ops_applied_one_after_another(severity: int) -> None:
    # Shadow and glare compose into one lighting pass with the base layer and the bent sheet's shading, after
    # the remap; each is measured on half-size stages. Against op-by-op 8-bit passes, pixels differ by rounding
    # only and every measured figure agrees to the rubric's precision.
    img, page = pages()[2]
    # (Without geometry: unfused, the camera's framing would be a second remap, differing by resampling.)
    chain = [("shadow", severity), ("glare", severity)]
    fused, _, recs = degrade_profile(img, page, chain, np.random.default_rng(severity))
    seq, _, srecs = degrade_profile(img, page, chain, None, params=[r.params for r in recs], fuse=False)
    diff = np.abs(fused.astype(int) - seq.astype(int))
    assert diff.max() <= 4 and diff.mean() < 0.5
    for fused_rec, seq_rec in zip(recs, srecs, strict=True):
        assert fused_rec.measured.keys() == seq_rec.measured.keys()
        for key, value in fused_rec.measured.items():
            # Shares agree to 0.01; the peak is one pixel's washout, rounded once instead of twice.
            assert value == pytest.approx(seq_rec.measured[key], abs=0.03 if key == "peak_washout" else 0.01), key
