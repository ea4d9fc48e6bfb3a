"""``legend``: the key under a drawing on squared paper (``1 square = 2 cm``), in a strip of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures._draw import Rect
from render.figures._scene import Scene
from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import element_name, quantity


class LegendElement(Element, total=False):
    pass  # ``text`` is the key; ``value`` the length one square stands for


def _draw(s: Scene, e: LegendElement) -> Rect:
    """The key centred in the scene's strip under the drawing, so no label or line runs into it."""
    strip = s.strip
    center = ((strip[0] + strip[2]) / 2, (strip[1] + strip[3]) / 2)
    return s.canvas.text(center, str(e["text"]), s.font_px, style=e.get("style", "sans"))


def _describe_group(els: list[LegendElement], spec: Mapping[str, Any]) -> str:
    shown = [q for q in (quantity(e) or element_name(e) for e in els) if q]
    return f"The legend shows {', '.join(shown)}." if shown else "A legend is drawn."


PRIMITIVES.register(Primitive("legend", LegendElement, draw=_draw, layer=3, describe_group=_describe_group))
