"""JPEG: the phone or a messaging app recompressing the photo."""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.base import Op, Rubric
from perturb.photo.functional.camera import compress, decode, encode
from perturb.photo.measure import psnr
from synth.records import RenderedPage

QUALITY = {1: (55, 80), 2: (25, 45), 3: (6, 15)}


class Jpeg(Op):
    subtype = "jpeg"
    family = "camera"
    rubric = Rubric("quality", QUALITY, "JPEG quality")
    stage = "camera"
    stage_rank = 4
    encodes = True

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        lo, hi = QUALITY[severity]
        return {"quality": int(rng.integers(lo, hi + 1))}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return compress(image, int(params["quality"])), page

    def apply_encoded(self, image: np.ndarray, params: dict[str, Any],
                      page: RenderedPage) -> tuple[np.ndarray, RenderedPage, bytes | None]:
        data = encode(image, int(params["quality"]))
        return decode(data), page, data

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        # Every third row (3 and the codec's 8-row blocks share no factor, so every row of a block is read alike):
        # the same PSNR to a few hundredths of a dB, a third of the work; the rubric grades the quality itself.
        return {"quality": int(params["quality"]), "psnr_db": psnr(before[::3], after[::3])}


register(Jpeg())
