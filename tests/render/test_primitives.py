"""Figure primitives: one module per element type holds its drawer, its description and its pen marks."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import render.figures.primitives as primitives_package
from perturb.photo import REGISTRY as PHOTO_OPS
from render.describe import describe_figure
from render.figures import draw_figure
from render.figures.primitives import PRIMITIVES
from synth.generators import REGISTRY as FAMILIES
from synth.generators import get_family
from synth.generators.base import DIFFICULTIES
from synth.records import Box, Figure, RenderedPage

STAR_MODULE = '''
"""``star_mark``: a red five-pointed star on a named point (a toy primitive)."""

import math

from render.figures._draw import Rect
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive


class StarElement(Element, total=False):
    at: str


def _draw(s: Scene, e: StarElement) -> Rect:
    x, y = s.p(e["at"])
    r = 0.15 * s.dpi
    pts = [(x + (r if k % 2 == 0 else r / 2.5) * math.cos(math.radians(90 + 36 * k)),
            y - (r if k % 2 == 0 else r / 2.5) * math.sin(math.radians(90 + 36 * k))) for k in range(10)]
    return s.canvas.polygon_fill(pts, (210, 20, 20))


def _describe(e: StarElement, spec) -> str:
    return f"A star marks point {e['at']}."


PRIMITIVES.register(Primitive("star_mark", StarElement, draw=_draw, layer=2, describe=_describe, marks=("circle",)))
'''

STARRED = Figure("plane_geometry", {
    "size_in": [2.0, 1.6],
    "points": {"A": [0, 0], "B": [4, 0], "C": [0, 3]},
    "elements": [{"id": "triangle", "type": "polygon", "points": ["A", "B", "C"]},
                 {"id": "star_C", "type": "star_mark", "at": "C"}],
})


@pytest.fixture
def star_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A primitive module dropped into the primitives package's search path, found by discovery alone."""
    (tmp_path / "star_mark.py").write_text(textwrap.dedent(STAR_MODULE))
    monkeypatch.setattr(primitives_package, "__path__", [*primitives_package.__path__, str(tmp_path)])
    monkeypatch.setattr(PRIMITIVES, "_discovered", False)  # look through the package again, as a new process would
    assert "star_mark" in PRIMITIVES
    yield "star_mark"
    del PRIMITIVES["star_mark"]
    sys.modules.pop(f"{primitives_package.__name__}.star_mark", None)


def test_a_primitive_added_as_one_module_is_drawn_described_and_marked(star_module: str) -> None:
    drawn = draw_figure(STARRED, 100)
    (star,) = [b for b in drawn.boxes if b.ref == "star_C"]
    assert star.kind == "figure_star_mark"
    red = (drawn.pixels[..., 0] > 150) & (drawn.pixels[..., 1] < 110) & (drawn.pixels[..., 2] < 110)
    ys, xs = np.nonzero(red)
    assert len(xs) > 20  # the star is drawn
    assert star.x0 <= xs.min() and xs.max() < star.x1 and star.y0 <= ys.min() and ys.max() < star.y1

    assert describe_figure(STARRED).endswith("A star marks point C.")

    page = RenderedPage(style="printed", font="DejaVu Sans", paper="plain", ink="black", dpi=100, width=400,
                        height=400, layout=(Box(star.kind, star.ref, star.x0 + 50, star.y0 + 50, star.x1 + 50,
                                                star.y1 + 50),))
    params = PHOTO_OPS["figure_marking"].sample_params(np.random.default_rng(0), 1, page)
    assert [(m["kind"], m["element"]) for m in params["marks"]] == [("circle", "figure_star_mark:star_C")]


def test_an_element_of_an_unregistered_type_is_refused_naming_the_element() -> None:
    figure = Figure("plane_geometry", {**STARRED.spec, "elements": [STARRED.spec["elements"][1]]})
    with pytest.raises(ValueError, match=r"'star_C' has type 'star_mark'"):
        draw_figure(figure, 100)


def _family_figures() -> Iterator[tuple[str, Figure]]:
    for family_id in FAMILIES:
        family = get_family(family_id)
        for seed in range(6):
            figure = family.figure(family.sample(np.random.default_rng(seed), DIFFICULTIES[seed % 3]))
            if figure is None:
                break
            yield family_id, figure


def test_every_element_a_family_draws_is_a_registered_primitive_that_declares_its_fields() -> None:
    seen, undeclared = set(), {}
    for family_id, figure in _family_figures():
        for element in figure.spec["elements"]:
            assert element["type"] in PRIMITIVES, f"{family_id}: no primitive module for {element['type']!r}"
            seen.add(element["type"])
            extra = set(element) - PRIMITIVES[element["type"]].fields()
            if extra:
                undeclared[element["type"]] = sorted(extra)
    assert undeclared == {}, "declare these fields in the primitive's schema (render/figures/primitives/<type>.py)"
    assert len(seen) > 20  # the families' figures use most primitives, so the check reads real specs
