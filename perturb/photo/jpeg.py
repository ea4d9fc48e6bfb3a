"""JPEG: the phone or a messaging app recompressing the photo."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import DegradationError, Op
from perturb.photo.fields import psnr
from synth.records import RenderedPage

QUALITY = {1: (55, 80), 2: (25, 45), 3: (6, 15)}


def encode(image: np.ndarray, quality: int) -> bytes:
    """The JPEG file of an RGB image at ``quality`` (OpenCV's encoder: deterministic)."""
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(image, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise DegradationError(f"jpeg: OpenCV could not encode at quality {quality}")
    return buf.tobytes()


# OpenCV >= 4.11 decodes straight to RGB (libjpeg's own output order, no second pass over the image).
_READ_RGB = getattr(cv2, "IMREAD_COLOR_RGB", None)


def decode(data: bytes) -> np.ndarray:
    buf = np.frombuffer(data, np.uint8)
    if _READ_RGB is not None:
        return cv2.imdecode(buf, _READ_RGB)
    return cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def compress(image: np.ndarray, quality: int) -> np.ndarray:
    return decode(encode(image, quality))


class Jpeg(Op):
    subtype = "jpeg"
    family = "camera"
    stage = "camera"
    stage_rank = 4

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
        return {"quality": int(params["quality"]), "psnr_db": psnr(before, after)}


register(Jpeg())
