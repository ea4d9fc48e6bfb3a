"""Figures drawn from a problem's figure spec: one drawer per ``Figure.kind``, a box per primitive.

The contract every figure family and the page composer share:

- ``Figure.spec`` holds the *true* values (side lengths, angles, bar heights, clock time, ...)
  and an ``"elements"`` list. Each element is a dict with at least ``"id"`` (unique within the
  figure, e.g. ``"side_AB"``, ``"bar_3"``, ``"label_A"``) and ``"type"`` (the primitive it is:
  ``"segment"``, ``"label"``, ``"bar"``, ...), plus the fields its primitive declares (``"value"``,
  ``"text"``, coordinates). Each type is one module of :mod:`render.figures.primitives`, holding its
  field schema, its drawer, its description and the pen marks a student may put on it.
  A ``Given`` whose value lives in the figure has ``source == "figure:<element id>"``.
- ``spec["size_in"] = [width, height]`` is the figure's size on the page in inches.
- A drawer turns the spec into an RGB image at a DPI (white or transparent-looking paper
  background is fine: the page composer multiplies it onto the paper) and returns one ``Box``
  per primitive it drew, with ``kind = "figure_<type>"`` and ``ref = <element id>``, in the
  figure's own pixel coordinates. The composer offsets them onto the page.
- Drawers are deterministic: the same spec and DPI give the same bytes. They never read
  randomness; everything random was sampled into the spec by the family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from synth.records import Box, Figure


@dataclass(frozen=True)
class FigureImage:
    pixels: np.ndarray  # H x W x 3 uint8 RGB
    boxes: tuple[Box, ...]


Drawer = Callable[[Figure, int], FigureImage]
DRAWERS: dict[str, Drawer] = {}


def drawer(kind: str) -> Callable[[Drawer], Drawer]:
    """Register the function that draws figures of ``kind``."""

    def wrap(fn: Drawer) -> Drawer:
        if kind in DRAWERS:
            raise ValueError(f"figure kind {kind!r} has two drawers")
        DRAWERS[kind] = fn
        return fn

    return wrap


def draw_figure(figure: Figure, dpi: int) -> FigureImage:
    _load()
    try:
        fn = DRAWERS[figure.kind]
    except KeyError:
        raise KeyError(f"no drawer for figure kind {figure.kind!r}; known: {sorted(DRAWERS)}") from None
    return fn(figure, dpi)


def _load() -> None:
    """Import the drawer modules (they register themselves)."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
