"""Rotation: the page photographed sideways or upside down (MathReal's 4-way category)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op
from perturb.photo.geometry import move_boxes
from synth.records import RenderedPage

# MathReal's rotation is a category; severities 1-3 name its three non-upright values.
ROTATION_BY_SEVERITY = {1: "90cw", 2: "90ccw", 3: "180"}
_CV2_CODE = {"90cw": cv2.ROTATE_90_CLOCKWISE, "90ccw": cv2.ROTATE_90_COUNTERCLOCKWISE, "180": cv2.ROTATE_180}
_NP_TURNS = {"upright": 0, "90ccw": 1, "180": 2, "90cw": 3}  # np.rot90 turns counter-clockwise


def _point_map(rotation: str, width: int, height: int):
    def forward(p: np.ndarray) -> np.ndarray:
        x, y = p[:, 0], p[:, 1]
        if rotation == "90cw":
            return np.stack([height - y, x], axis=1)
        if rotation == "90ccw":
            return np.stack([y, width - x], axis=1)
        return np.stack([width - x, height - y], axis=1)

    return forward


class Rotation(Op):
    subtype = "rotation"
    family = "perspective"

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        return {"rotation": ROTATION_BY_SEVERITY[severity]}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        rotation = params["rotation"]
        out = cv2.rotate(image, _CV2_CODE[rotation])
        h, w = out.shape[:2]
        return out, move_boxes(page, _point_map(rotation, page.width, page.height), w, h)

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        # Which quarter turn of the input reproduces the output, compared on thumbnails.
        def thumb(img: np.ndarray) -> np.ndarray:
            return cv2.resize(img, (64, 64), interpolation=cv2.INTER_AREA).astype(np.float32)

        target, small = thumb(after), thumb(before)
        errors = {name: float(np.abs(np.rot90(small, k) - target).mean()) for name, k in _NP_TURNS.items()}
        return {"rotation": min(errors, key=errors.get)}


register(Rotation())
