"""The pictogram key of an object array: under the picture, clear of it, showing the object it explains."""

from __future__ import annotations

import numpy as np
import pytest

from render.figures import draw_figure
from synth.generators import get_family

DPI = 100
# A colour each shape is filled with (see render/figures/commonsense.py).
FILL = {"apple": (205, 45, 40), "star": (240, 190, 40), "dot": (50, 90, 170), "egg": (245, 230, 205)}


def _keyed_params(shape: str, groups: list[dict]) -> dict:
    return {"shape": shape, "groups": groups, "image_role": "required", "per": 3}


@pytest.mark.parametrize("shape", sorted(FILL))
@pytest.mark.parametrize("groups", [
    [{"rows": 2, "cols": 3, "missing": [1]}],
    [{"rows": 5, "cols": 7, "missing": [0, 9]}, {"rows": 3, "cols": 3, "missing": [4]}],
])
def test_key_sits_below_the_objects_and_shows_the_same_object(shape: str, groups: list[dict]) -> None:
    figure = get_family("commonsense.counting.objects").figure(_keyed_params(shape, groups))
    image = draw_figure(figure, DPI)
    boxes = {b.ref: b for b in image.boxes}
    key = boxes["key"]
    others = [b for ref, b in boxes.items() if ref != "key"]
    assert key.y0 > max(b.y1 for b in others)  # below the trays and their labels, overlapping none
    assert 0 <= key.x0 and key.x1 <= image.pixels.shape[1] and key.y1 <= image.pixels.shape[0]
    inside = image.pixels[key.y0:key.y1, key.x0:key.x1].reshape(-1, 3).astype(int)
    assert (np.abs(inside - FILL[shape]).sum(axis=1) < 30).any()  # the object itself is drawn in the key


def test_arrays_without_a_key_keep_their_layout() -> None:
    family = get_family("commonsense.counting.objects")
    groups = [{"rows": 5, "cols": 7, "missing": [2]}]  # a wide array: its height sets the object size
    plain = draw_figure(family.figure({"shape": "dot", "groups": groups, "image_role": "required"}), DPI)
    keyed = draw_figure(family.figure(_keyed_params("dot", groups)), DPI)
    assert "key" not in {b.ref for b in plain.boxes}
    assert keyed.pixels.shape[0] > plain.pixels.shape[0]  # the key adds room below rather than shrinking the objects
    size = {name: next((b.x1 - b.x0, b.y1 - b.y0) for b in image.boxes if b.ref == "object_A_0_0")
            for name, image in (("plain", plain), ("keyed", keyed))}
    assert size["keyed"] >= size["plain"]
