"""Resolution: a low-resolution capture (or a thumbnail re-sent), scaled back up to the page size.

The output keeps the input's size so layout boxes stay valid and ops compose; the lost detail is
what the op models.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op
from perturb.photo.fields import psnr
from synth.records import RenderedPage

# Linear scale of the capture relative to the page's own resolution.
BINS = {1: (0.5, 0.8), 2: (0.3, 0.5), 3: (0.15, 0.3)}
_TARGET = {1: (0.55, 0.75), 2: (0.33, 0.47), 3: (0.18, 0.28)}


def _small_size(params: dict[str, Any], width: int, height: int) -> tuple[int, int]:
    s = float(params["scale"])
    return max(8, round(width * s)), max(8, round(height * s))


class Resolution(Op):
    subtype = "resolution"
    family = "camera"
    stage = "camera"
    stage_rank = 2

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        return {"scale": round(float(rng.uniform(*_TARGET[severity])), 4),
                "upscale": str(rng.choice(["linear", "cubic"]))}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        h, w = image.shape[:2]
        small = cv2.resize(image, _small_size(params, w, h), interpolation=cv2.INTER_AREA)
        up = cv2.INTER_CUBIC if params["upscale"] == "cubic" else cv2.INTER_LINEAR
        return cv2.resize(small, (w, h), interpolation=up), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        h, w = before.shape[:2]
        sw, _ = _small_size(params, w, h)
        return {"scale": round(sw / w, 4), "effective_dpi": round(page.dpi * sw / w, 1),
                "psnr_db": psnr(before, after)}


register(Resolution())
