"""Pixels of images we did not make, as the photo ops take them (8-bit)."""

from __future__ import annotations

import numpy as np
from PIL import Image


def eight_bit_grey(image: Image.Image) -> Image.Image:
    """A 16-bit, 32-bit or floating-point grey image as 8-bit grey, its range scaled, not clipped: PIL's convert
    clips every value over 255 to white (a 16-bit scan's clean control came out 99.5 % white). 16-bit modes span
    0-65535; a 32-bit integer image is taken as 8-bit when its values fit (as convert took it), as 16-bit when
    they fit that, else scaled by its own maximum; a float image spans 0-1 when it fits, else is taken as 8-bit."""
    a = np.nan_to_num(np.asarray(image, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    top = float(a.max(initial=0.0))
    if image.mode.startswith("I;16"):
        a = a / 257.0
    elif image.mode == "I":
        a = a if top <= 255 else a / (257.0 if top <= 65535 else top / 255.0)
    elif top <= 1.0:
        a = a * 255.0
    return Image.fromarray(np.clip(np.rint(a), 0, 255).astype(np.uint8), "L")
