"""Work a capture hands to worker threads gives the same bytes as running it on the caller's thread."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from perturb.photo import degrade
from perturb.photo import worker as worker_module
from perturb.photo.profile import degrade_profile
from perturb.photo.worker import in_halves, later
from tests.perturb.test_photo_ops import pages

PHONE = [("tilt", 1), ("keystone", 1), ("paper_warp", 1), ("shadow", 2), ("glare", 2), ("exposure", 1),
         ("blur", 1), ("noise", 2), ("jpeg", 1)]


def test_in_halves_covers_every_row_once_and_splits_by_height_alone() -> None:
    for height in (1, 300, 511, 512, 1754):
        seen: list[slice] = []
        in_halves(seen.append, height)
        rows = sorted(r for s in seen for r in range(s.start, s.stop))
        assert rows == list(range(height))
        on_worker: list[slice] = []
        later(in_halves, on_worker.append, height).result()
        assert sorted((s.start, s.stop) for s in on_worker) == sorted((s.start, s.stop) for s in seen)


def test_a_capture_on_a_worker_thread_matches_one_on_the_callers_thread() -> None:
    # On a worker nothing is handed on (workers never wait for workers): every op runs inline there.
    img, page = pages()[1]
    here = degrade_profile(img, page, PHONE, np.random.default_rng(5))
    there = later(degrade_profile, img, page, PHONE, np.random.default_rng(5)).result()
    assert here[0].tobytes() == there[0].tobytes()
    assert [r.measured for r in here[2]] == [r.measured for r in there[2]]


def test_noise_is_the_same_on_any_thread() -> None:
    # A big page's grain is drawn in two bands, each seeded from the params and its rows; replaying the
    # recorded params reproduces it exactly, whichever thread draws which band.
    img, page = pages()[0]
    big = np.ascontiguousarray(np.tile(img, (2, 1, 1)))
    big_page = replace(page, height=big.shape[0])
    out, _, rec = degrade(big, big_page, "noise", 2, np.random.default_rng(3))
    again = later(lambda: degrade(big, big_page, "noise", 2, np.random.default_rng(9), params=rec.params)).result()[0]
    assert big.shape[0] >= 2 * worker_module._MIN_ROWS and out.tobytes() == again.tobytes()
