"""Rotation: the page photographed sideways or upside down (MathReal's 4-way category)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.fields import luma
from perturb.photo.fusion import GeometricOp, Warp, moved_page
from perturb.photo.geometry import page_corners
from synth.records import RenderedPage

# MathReal's rotation is a category; severities 1-3 name its three non-upright values.
ROTATION_BY_SEVERITY = {1: "90cw", 2: "90ccw", 3: "180"}
_CV2_CODE = {"90cw": cv2.ROTATE_90_CLOCKWISE, "90ccw": cv2.ROTATE_90_COUNTERCLOCKWISE, "180": cv2.ROTATE_180}
_NP_TURNS = {"upright": 0, "90ccw": 1, "180": 2, "90cw": 3}  # np.rot90 turns counter-clockwise


def _point_map(rotation: str, width: float, height: float):
    """Page -> photo for a quarter-turn photo of a width x height frame (pixel-edge coordinates)."""
    def forward(p: np.ndarray) -> np.ndarray:
        x, y = p[:, 0], p[:, 1]
        if rotation == "90cw":
            return np.stack([height - y, x], axis=1)
        if rotation == "90ccw":
            return np.stack([y, width - x], axis=1)
        return np.stack([width - x, height - y], axis=1)

    return forward


_INVERSE = {"90cw": "90ccw", "90ccw": "90cw", "180": "180"}


class Rotation(GeometricOp):
    subtype = "rotation"
    family = "perspective"
    stage_rank = 4  # how the phone was held: turns the whole frame, last

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        return {"rotation": ROTATION_BY_SEVERITY[severity]}

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        rotation = params["rotation"]
        w, h = (page.height, page.width) if rotation != "180" else (page.width, page.height)
        # Boxes use pixel-edge coordinates (a W-wide page spans 0..W); pixel sampling uses pixel
        # centres (0..W-1), so the remap's maps turn a W-1 by H-1 frame.
        edge = _point_map(rotation, page.width, page.height)
        centre_inv = _point_map(_INVERSE[rotation], w - 1, h - 1)
        fw, fh = page.width - 1, page.height - 1  # pixel-centre frame of the input
        matrix = {"90cw": [[0, -1, fh], [1, 0, 0], [0, 0, 1]], "90ccw": [[0, 1, 0], [-1, 0, fw], [0, 0, 1]],
                  "180": [[-1, 0, fw], [0, -1, fh], [0, 0, 1]]}[rotation]
        return Warp(w, h, edge, centre_inv, matrix=np.array(matrix, np.float64))

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        # A lone quarter turn is an exact pixel permutation; cv2.rotate is faster than a remap.
        return cv2.rotate(image, _CV2_CODE[params["rotation"]]), moved_page(page, [self.warp(params, page)])

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        # Which quarter turn of the input reproduces the output, compared on 64 x 64 grey thumbnails of the
        # centred crop that is a whole number of blocks each way: OpenCV's area resize takes a fast path for
        # integer factors (a non-integer one cost 15-20 ms on an A4 page), and a centred crop turns with
        # the page.
        def thumb(img: np.ndarray) -> np.ndarray:
            gray = luma(img)
            h, w = gray.shape
            fy, fx = max(1, h // 64), max(1, w // 64)
            oy, ox = max(0, (h - 64 * fy) // 2), max(0, (w - 64 * fx) // 2)
            crop = gray[oy:oy + 64 * fy, ox:ox + 64 * fx]
            return cv2.resize(crop, (64, 64), interpolation=cv2.INTER_AREA).astype(np.float32)

        target, small = thumb(after), thumb(before)
        errors = {name: float(np.abs(np.rot90(small, k) - target).mean()) for name, k in _NP_TURNS.items()}
        return {"rotation": min(errors, key=errors.get)}

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        # In a fused chain there is no intermediate image: read the turn off where the top-left corner went.
        tl = warp.forward(page_corners(page)[:1])[0]
        near = {"upright": (0, 0), "90cw": (warp.width, 0), "90ccw": (0, warp.height),
                "180": (warp.width, warp.height)}
        return {"rotation": min(near, key=lambda k: float(np.hypot(*(tl - near[k]))))}


register(Rotation())
