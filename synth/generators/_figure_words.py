"""Figure elements and relations in plain words, as a teacher names them (never by internal ids).

Shared by the visual misread injectors (perturb.reasoning.visual: their explanations) and the solution styles
(synth.chains: their reading steps), so both name an element alike.
"""

from __future__ import annotations

from typing import Any

from synth.records import Problem

# Relations: how a pupil would say what they took (the parameter's value in words).
RELATION_WORDS = {
    "hyp": "the hypotenuse", "leg": "a shorter side", "radius": "a radius", "diameter": "a diameter",
    "percent": "percentages", "degrees": "angles in degrees", "base": "a base angle", "apex": "the apex angle",
    "sides": "the sides of the tube", "ends": "the ends of the tube",
}

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def ordinal(i: int) -> str:
    return _ORDINALS[i] if 0 <= i < len(_ORDINALS) else f"number {i + 1}"


def _elements(problem: Problem) -> dict[str, dict[str, Any]]:
    spec = problem.figure.spec if problem.figure is not None else {}
    return {str(e.get("id")): e for e in spec.get("elements", []) if isinstance(e, dict) and e.get("id")}


_PLAIN_ELEMENTS = {
    "axis": "the marks on the number line", "curve_f": "the graph of f", "ticks_y": "the numbers on the y-axis",
    "step_rise": "the rise between the two points", "step_run": "the run between the two points",
    "angle_given": "the marked angle", "angle_h": "the angle on the other line", "protractor": "the protractor",
    "grid_key": "the key for the squares", "key": "the picture key", "title": "the table's title",
    "diameter": "the diameter", "radius": "the radius", "height": "the height", "slant": "the slant height",
    "key_edge": "the edge in the key", "tube_diameter": "the tube's width", "tube_height": "the tube's height",
    "coin_lines": "the coins in the stack", "balls": "the balls in the tube", "cubes_front": "the cubes on the front",
    "cubes_right": "the cubes on the side", "polygon": "the corners of the polygon", "edge_length": "the length",
    "edge_width": "the width", "edge_height": "the height", "radius_R": "the outer radius",
    "diameter_d": "the diameter",
}


def element_words(problem: Problem, element: str) -> str:
    """A figure element as a teacher names it: ``cell_2_1`` -> "the cell in row 2, column 1 (...)",
    ``bar_0`` -> "the bar for Ana", ``hand_hour_1`` -> "the hour hand of the first clock".

    Words come from the element's own drawn labels where it has them; an element id never reaches the text.
    """
    els = _elements(problem)
    el = els.get(element, {})
    parts = element.split("_")
    if element == "radius_r":
        return "the inner radius" if "radius_R" in els else "the radius"
    if element in _PLAIN_ELEMENTS:
        return _PLAIN_ELEMENTS[element]
    head, rest = parts[0], parts[1:]
    if head == "hand" and len(rest) == 2 and rest[1].isdigit():
        return f"the {rest[0]} hand of the {ordinal(int(rest[1]) - 1)} clock"
    if head == "cell" and len(rest) == 2 and all(x.isdigit() for x in rest):
        r, c = int(rest[0]), int(rest[1])
        row = str(els.get(f"cell_{r}_0", {}).get("text") or "")
        col = str(els.get(f"cell_0_{c}", {}).get("text") or "")
        if r == 0:
            return f"the column headed “{col}”" if col else f"column {c}"
        if c == 0:
            return f"the row headed “{row}”" if row else f"row {r}"
        named = ", ".join(f"“{w}”" for w in (row, col) if w)
        return f"the cell in row {r}, column {c}" + (f" ({named})" if named else "")
    if head in ("bar", "point", "label", "wedge") and rest and rest[0].isdigit():
        i = int(rest[0])
        name = str(els.get(f"label_{i}", {}).get("text") or el.get("text") or "")
        noun = {"bar": "the bar", "point": "the point", "label": "the label", "wedge": "the sector"}[head]
        if head == "label":
            return f"the label “{name}”" if name else f"the {ordinal(i)} label"
        return f"{noun} for {name}" if name else f"the {ordinal(i)} {noun.split()[-1]}"
    if head == "equal" and rest[:1] == ["mark"]:
        return "the equal-angle mark"
    if head == "tick" and rest:
        if el.get("type") == "tick_mark":  # equal-length marks on a side
            return f"the equal-length marks on side {rest[0]}"
        return f"the mark labelled {el['text']}" if el.get("text") else "a mark on the number line"
    if head in ("tray", "label") and rest:
        label = str(els.get(f"label_{rest[0]}", {}).get("text") or "")
        return label or f"group {rest[0]}"
    if head == "object" and len(rest) == 3:
        group = str(els.get(f"label_{rest[0]}", {}).get("text") or f"group {rest[0]}")
        return f"the place in row {int(rest[1]) + 1}, column {int(rest[2]) + 1} of {group}"
    if head == "angle" and rest:
        at = el.get("at") or rest[0]
        return f"the angle at {at}"
    if head in ("side", "height", "radius", "diameter") and rest:
        return f"{head} {rest[0]}"
    if head == "point" and rest:
        return f"point {rest[0]}"
    return " ".join(parts)
