"""Figure primitives, one module each: how an element ``type`` is drawn, described and marked.

A figure spec's ``elements`` are dicts with an ``id`` and a ``type`` (see :mod:`render.figures`).
The ``type`` names a :class:`Primitive`, registered once by the module of that name in this package
and found by discovery, so adding a primitive is adding one module::

    # render/figures/primitives/star.py
    class StarElement(Element, total=False):
        at: str  # the named point it sits on

    def _draw(s: Scene, e: StarElement) -> Rect: ...
    def _describe(e: StarElement, spec: Mapping[str, Any]) -> str: return "A star is drawn."

    PRIMITIVES.register(Primitive("star", StarElement, draw=_draw, describe=_describe, marks=("circle",)))

The entry holds everything the layers above need:

- ``schema``: a ``TypedDict`` of the element's fields (every key a family may write on it);
- ``draw``: its drawer on a named-point :class:`~render.figures._scene.Scene` (plane geometry, solids),
  returning the box of the ink it made; ``layer`` orders drawing (fills, lines, marks, text) and
  ``extent`` is the world box it reaches beyond its points, which the figure must fit;
- ``describe``: one sentence of the figure description for one element, or ``describe_group``: one
  sentence for all elements of the type together (ticks, gridlines, labels), with ``alone`` picking the
  elements still described one by one; ``named_by_label``: a chart label with the same ``index``
  names it;
- ``marks``: the pen marks a student puts on it (``perturb.photo.figure_marking``), in order of
  preference; none for primitives nobody marks (gridlines, ticks).

Figure kinds drawn in a frame of their own (bar, line and pie charts, tables, coordinate grids,
number lines, clocks, object arrays) place these primitives in that frame themselves; they still
describe and mark them through this registry.
"""

# No ``from __future__ import annotations`` here: TypedDict reads ``Required`` only from evaluated annotations.
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Required, TypedDict

from synth.registry import Registry

if TYPE_CHECKING:
    from render.figures._draw import Point, Rect
    from render.figures._scene import Scene


class Element(TypedDict, total=False):
    """The fields any element may carry; a primitive's schema adds its own."""

    id: Required[str]  # unique within the figure: "side_AB", "bar_3"
    type: Required[str]  # the primitive: "segment", "bar"
    text: str | None  # printed beside it; a description reads it before ``value``
    value: Any  # the true value it shows
    unit: str
    hidden: bool  # drawn without its value (a "?")
    shown: bool  # false: its value is not shown
    present: bool  # false: not drawn and not described (an empty place in an array)
    label: str
    name: str
    index: int  # a chart category: a label with the same index names it
    dir: list[float]  # the side its text goes on, [dx, dy] with y up
    style: str  # the font of its text: sans, italic (unknowns such as x), serif
    category: bool  # set by the description: the element took its name from a category label


Phrase = Callable[[Any, Mapping[str, Any]], str]
GroupPhrase = Callable[[list[Any], Mapping[str, Any]], str]
SceneDrawer = Callable[["Scene", Any], "Rect"]
Extent = Callable[[Mapping[str, "Point"], Any], "Rect"]


@dataclass(frozen=True)
class Primitive:
    """One element type: its schema, its drawer, its description and the marks a pen puts on it."""

    id: str
    schema: type
    draw: SceneDrawer | None = None
    layer: float = 1.0
    extent: Extent | None = None
    describe: Phrase | None = None
    describe_group: GroupPhrase | None = None
    alone: Callable[[Any], bool] | None = None
    named_by_label: bool = False
    marks: tuple[str, ...] = ()

    def fields(self) -> frozenset[str]:
        """Every key an element of this type may carry."""
        return frozenset(self.schema.__required_keys__ | self.schema.__optional_keys__)  # type: ignore[attr-defined]


PRIMITIVES: Registry[Primitive] = Registry("figure primitive", discover=__name__,
                                           hint="one module per primitive in render/figures/primitives/")


def marks_for(element_type: str) -> tuple[str, ...]:
    """The pen marks that fit an element type, most fitting first; none for a type nobody marks or knows."""
    primitive = PRIMITIVES.get(element_type)
    return primitive.marks if primitive is not None else ()
