"""``key``: a pictogram's key (``= 3 stars`` beside one picture): the scale a pupil applies to the count."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import hidden


class KeyElement(Element, total=False):
    pass  # ``text``: what one picture stands for ("= 3 apples"); the picture is the spec's ``shape``


def _describe(el: KeyElement, spec: Mapping[str, Any]) -> str:
    """``= 3 stars`` under a star: each drawn picture stands for that many (the scale a pupil must apply)."""
    text = str(el.get("text") or "").strip()
    if not text or hidden(el):
        return "A key is drawn under the picture."
    if not text.startswith("="):
        return f"A key under the picture reads “{text}”."
    shape = spec.get("shape")
    picture = f"each {shape} drawn" if isinstance(shape, str) and shape else "each picture"
    return f"A key under the picture says {picture} stands for {text[1:].strip()}."


PRIMITIVES.register(Primitive("key", KeyElement, describe=_describe))
