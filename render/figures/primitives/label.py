"""``label``: a vertex letter beside its point, or a category name under a bar, a clock or a group of objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import fmt, hidden


class LabelElement(Element, total=False):
    at: str  # the named point it names (written outside the figure, away from its centre)
    slot: int  # in a clock figure: the clock it names
    group: int  # in an object array: the group it names


def _draw(s: Scene, e: LabelElement) -> Rect:
    at = s.p(e["at"])
    return s.write(at, s.away(at, e), e)


def _describe_group(els: list[LabelElement], spec: Mapping[str, Any]) -> str:
    texts = [t for t in (fmt(e.get("text") or e.get("label") or "") for e in els if not hidden(e)) if t]
    if not texts:
        return f"{len(els)} labels are drawn."
    return f"The label {texts[0]} is written on the figure." if len(texts) == 1 else \
        f"The labels {', '.join(texts)} are written on the figure."


PRIMITIVES.register(Primitive("label", LabelElement, draw=_draw, layer=3, describe_group=_describe_group,
                              marks=("circle",)))
