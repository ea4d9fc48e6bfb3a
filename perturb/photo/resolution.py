"""Resolution: a low-resolution capture (or a thumbnail re-sent), scaled back up to the page size.

The output keeps the input's size so layout boxes stay valid and ops compose; the lost detail is
what the op models.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.base import Op, Rubric
from perturb.photo.functional.camera import resample, small_size
from perturb.photo.measure import psnr
from synth.records import RenderedPage

# Linear scale of the capture relative to the page's own resolution.
BINS = {1: (0.5, 0.8), 2: (0.3, 0.5), 3: (0.15, 0.3)}
_TARGET = {1: (0.55, 0.75), 2: (0.33, 0.47), 3: (0.18, 0.28)}


class Resolution(Op):
    subtype = "resolution"
    family = "camera"
    rubric = Rubric("scale", BINS, "captured at", "% of the page's resolution")
    stage = "camera"
    stage_rank = 2

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        return {"scale": round(float(rng.uniform(*_TARGET[severity])), 4),
                "upscale": str(rng.choice(["linear", "cubic"]))}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        return resample(image, params), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        h, w = before.shape[:2]
        sw, _ = small_size(params, w, h)
        return {"scale": round(sw / w, 4), "effective_dpi": round(page.dpi * sw / w, 1),
                "psnr_db": psnr(before, after)}


register(Resolution())
