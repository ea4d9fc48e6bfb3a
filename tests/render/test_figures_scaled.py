"""Drawing figures read against a key: a stack of coins ruled into its coins, with a key coin beside it."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from render.figures import draw_figure
from synth.generators import get_family


def _coins(n: int, t: int, r: int, given: str = "radius") -> dict:
    size = {"r": r} if given == "radius" else {"d": 2 * r}
    return {"ask": "volume", "given": given, **size, "h": n * t, "unit": "mm", "coin": t, "coins": n,
            "image_role": "required"}


def _dark_runs(column: np.ndarray) -> int:
    dark = column < 128
    return int(np.count_nonzero(dark[1:] & ~dark[:-1]) + dark[0])


@pytest.mark.parametrize("n", [4, 9, 15])
def test_a_stack_is_ruled_into_as_many_coins_as_it_holds(n: int) -> None:
    family = get_family("solid.cylinder.volume_surface")
    figure = family.figure(_coins(n, 2, 12))
    figure = replace(figure, spec={**figure.spec, "draw_only": ["coin_lines"]})
    image = draw_figure(figure, 200)
    (box,) = [b for b in image.boxes if b.ref == "coin_lines"]
    gray = np.asarray(image.pixels)[..., :3].mean(axis=2)
    middle = int((box.x0 + box.x1) / 2)
    # Down the front of the stack: one line between each two coins.
    assert _dark_runs(gray[int(box.y0):int(box.y1) + 1, middle]) == n - 1


def test_the_stack_label_keeps_clear_of_the_key_coin_for_every_sampled_size() -> None:
    family = get_family("solid.cylinder.volume_surface")
    for n, t, r, given in itertools.product((4, 8, 12, 18), (2, 3, 4), (8, 14, 22), ("radius", "diameter")):
        if not r <= n * t <= 4 * r:  # the sampler keeps stacks between one and four radii tall
            continue
        boxes = {b.ref: b for b in draw_figure(family.figure(_coins(n, t, r, given)), 100).boxes}
        label = boxes[given]
        for ref in ("key_caption", "key_edge", "key_top", "key_rim"):
            other = boxes[ref]
            assert label.x1 < other.x0 or other.x1 < label.x0 or label.y1 < other.y0 or other.y1 < label.y0, \
                (n, t, r, given, ref)
