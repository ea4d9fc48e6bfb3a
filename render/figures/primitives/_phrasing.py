"""Words the primitives' descriptions share: numbers as printed, what an element is called, its value as drawn.

A description says what is *drawn*: an element's ``text`` (printed next to it) wins over its
``value``, and an element marked ``hidden`` (or printed as "?") is described without its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Element = Mapping[str, Any]


def fmt(value: Any) -> str:
    """Numbers the way a worksheet prints them: 5, 2.5, -3 (no 5.0), lists joined by commas."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}" if not value.is_integer() else str(int(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v) for v in value)
    return str(value)


def hidden(el: Element) -> bool:
    return bool(el.get("hidden")) or el.get("shown") is False or str(el.get("text", "")).strip() == "?"


def _structural(el: Element) -> str:
    """The points an element joins (AB, ABC), when its spec names them."""
    for key in ("vertices", "points", "ends", "endpoints"):
        if isinstance(el.get(key), (list, tuple)) and el[key] and all(isinstance(v, str) for v in el[key]):
            return "".join(el[key])
    if isinstance(el.get("from"), str) and isinstance(el.get("to"), str):
        return el["from"] + el["to"]
    return ""


def element_name(el: Element) -> str:
    """What the element is called: the points it joins, else its name, else its label."""
    found = _structural(el)
    if found:
        return found
    keys = ("name", "label", "at", "text") if el.get("type") == "point" else ("name", "label")
    for key in keys:
        if el.get(key) not in (None, "") and isinstance(el[key], (str, int, float)):
            return fmt(el[key])
    return ""


def quantity(el: Element) -> str:
    """The value as drawn: printed text, else a label that is not the name, else value and unit."""
    if hidden(el):
        return ""
    name = element_name(el)
    for key in ("text", "label"):
        if el.get(key) not in (None, "") and fmt(el[key]) != name:
            return fmt(el[key])
    if el.get("value") is None:
        return ""
    unit = str(el.get("unit", ""))
    sep = "" if unit in ("", "°", "%") else " "
    return f"{fmt(el['value'])}{sep}{unit}"


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def named(kind: str, el: Element) -> str:
    name = element_name(el)
    return f"{kind} {name}" if name else f"{article(kind)} {kind}"


def xy(value: Any) -> str:
    return f"({fmt(value[0])}, {fmt(value[1])})"


def with_value(base: str, el: Element, verb: str) -> str:
    """``base`` and the value it shows (``Side AB is labelled 5 cm.``), or that it is drawn or hidden."""
    q = quantity(el)
    if q:
        return f"{base} {verb} {q}."
    if hidden(el) and (el.get("value") is not None or el.get("text")):
        return f"{base} is marked with a question mark (its value is not shown)."
    return f"{base} is drawn."


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def plural(n: float, word: str) -> str:
    return f"{fmt(n)} {word}{'' if n == 1 else 's'}"


def generic(el: Element) -> str:
    """The sentence for a type without a phrase of its own: its name and value."""
    kind = str(el.get("type", "element")).replace("_", " ")
    return with_value(cap(named(kind, el)), el, "is labelled")


def angle_name(el: Element) -> str:
    """Angle DFE from vertex F and arms D, E; else "the angle at F"; else its name."""
    vertex, arms = el.get("vertex", el.get("at")), el.get("arms")
    if isinstance(vertex, str) and isinstance(arms, (list, tuple)) and len(arms) == 2 \
            and all(isinstance(a, str) for a in arms):
        return f"Angle {arms[0]}{vertex}{arms[1]}"
    if isinstance(vertex, str):
        return f"The angle at {vertex}"
    return cap(named("angle", el))
