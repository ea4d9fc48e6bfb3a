"""``text``: words written in the figure: a chart's or a table's title, a caption, a key under a table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import fmt, hidden


class TextElement(Element, total=False):
    at: str  # the named point it is centred on (``"bottom"`` in a table: a key line under it)


def _draw(s: Scene, e: TextElement) -> Rect:
    at = s.p(e["at"])
    return s.write(at, s.away(at, e, (0.0, 0.0)), e)


def _describe(el: TextElement, spec: Mapping[str, Any]) -> str:
    text = el.get("text")
    if text and el.get("id") == "title" and not hidden(el):
        return f"Its title is “{fmt(text)}”."
    return f"The text “{fmt(text)}” is written in the figure." if text and not hidden(el) else "Some text is drawn."


PRIMITIVES.register(Primitive("text", TextElement, draw=_draw, layer=3, describe=_describe, marks=("circle",)))
