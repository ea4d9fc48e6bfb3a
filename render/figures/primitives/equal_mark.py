"""``equal_mark``: an arc with ticks at a pie chart's centre; sectors carrying the same mark have equal angles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import plural


class EqualMarkElement(Element, total=False):
    sector: str  # the name of the sector it marks
    ticks: int  # sectors with the same number of ticks are equal
    angle: float  # the sector's angle and start, degrees (where the mark is drawn)
    start_deg: float


def _describe_group(els: list[EqualMarkElement], spec: Mapping[str, Any]) -> str:
    by_mark: dict[Any, list[str]] = {}
    for e in els:
        by_mark.setdefault(e.get("ticks", 1), []).append(str(e.get("sector") or e.get("id")))
    parts = []
    for ticks, names in by_mark.items():
        mark = f"an arc with {plural(ticks, 'tick')}" if isinstance(ticks, int) else "an arc"
        if len(names) == 1:
            parts.append(f"The sector for {names[0]} carries an angle mark at the centre ({mark}).")
        else:
            listed = ", ".join(names[:-1]) + f" and {names[-1]}"
            parts.append(f"The sectors for {listed} carry the same angle mark at the centre ({mark}): their angles "
                         "are equal.")
    return " ".join(parts)


PRIMITIVES.register(Primitive("equal_mark", EqualMarkElement, describe_group=_describe_group))
