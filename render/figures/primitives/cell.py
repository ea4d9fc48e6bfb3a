"""``cell``: one cell of a table (or of a stem-and-leaf diagram); a table is described row by row."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES, Element, Primitive
from render.figures.primitives._phrasing import hidden, quantity


class CellElement(Element, total=False):
    row: int
    col: int
    column: int
    header: bool  # bold, on a tinted ground
    align: str  # "left", "right" or centred (a stem-and-leaf's leaves sit against the stem)


def _describe_group(cells: list[CellElement], spec: Mapping[str, Any]) -> str:
    """A table, row by row (the way MathReal's OCR rules read tables).

    A stem-and-leaf diagram (``spec["style"] == "stem_leaf"``) says "(empty)" where a row has no cell in a
    column: a side with no leaves on that stem, which only its place in the row tells apart from the other side.
    """
    ruled = spec.get("style") == "stem_leaf"
    rows: dict[Any, list[CellElement]] = {}
    for cell in cells:
        rows.setdefault(cell.get("row", 0), []).append(cell)
    columns = sorted({c.get("col") for c in cells if isinstance(c.get("col"), int)}) if ruled else []
    lines = []
    for r, row in rows.items():
        ordered = sorted(row, key=lambda c: (c.get("col", c.get("column", 0)) or 0))
        values = [quantity(c) or ("?" if hidden(c) else "(empty)") for c in ordered]
        if columns:
            drawn = {c.get("col"): v for c, v in zip(ordered, values)}
            values = [drawn.get(col, "(empty)") for col in columns]
        label = f"row {int(r) + 1}" if isinstance(r, int) else f"row {r}"
        lines.append(f"{label}: {', '.join(values)}")
    return f"A table with {len(rows)} rows: " + "; ".join(lines) + "."


PRIMITIVES.register(Primitive("cell", CellElement, describe_group=_describe_group, marks=("scribble", "circle")))
