"""Figure descriptions written from the figure spec: MathReal's ground-truth "DG" text, one sentence per element.

The description says what is *drawn*, so it reads values the way the figure shows them: an element's
``text`` (what is printed next to it) wins over its ``value``, and an element marked ``hidden`` (or
printed as "?") is described without its value. Each element is phrased by its primitive
(:mod:`render.figures.primitives`, one module per ``type``); unknown types get a plain fallback, and
repetitive primitives (ticks, grid lines, labels, objects) are summarised in one sentence instead of
one each. Same spec, same text: nothing here is random.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from render.figures.primitives import PRIMITIVES
from render.figures.primitives._phrasing import Element, article, element_name, fmt, generic, hidden, quantity
from synth.records import Figure

KEY_BLOCK = "key block"  # not an element type: the elements of a tinted key drawn beside a solid
FIGURE_NOUNS = ("chart", "line", "grid", "clock", "diagram", "array", "plot", "graph", "table", "net", "figure")


def _key_prefixes(elements: list[Element]) -> tuple[str, ...]:
    """Id prefixes (``key_``) of tinted polygons: a key cube's faces, whose caption and edge share the prefix."""
    found = [str(e.get("id", "")).split("_")[0] + "_" for e in elements
             if e.get("type") == "polygon" and e.get("tint") and "_" in str(e.get("id", ""))]
    return tuple(dict.fromkeys(found))


def _key_block(els: list[Element]) -> str:
    """Tinted polygons drawn apart from the solid (a key cube), with their caption and marked edge."""
    captions = [fmt(e["text"]) for e in els if e.get("type") == "text" and e.get("text") and not hidden(e)]
    edges = [q for q in (quantity(e) for e in els if e.get("type") == "segment") if q]
    # The caption says what the key shows ("1 cube", "1 coin"); a coin is a flat disc, not a block.
    coin = any("coin" in c for c in captions)
    text = f"A key beside the solid shows {'a single coin' if coin else 'a small shaded block'}"
    if captions:
        text += f" labelled “{captions[0]}”"
    if edges:
        text += f"{',' if captions else ''} with its {'thickness' if coin else 'edge'} marked {edges[0]}"
    return text + "."


def _named_by_label(el: Element) -> bool:
    primitive = PRIMITIVES.get(str(el.get("type", "")))
    return primitive is not None and primitive.named_by_label


def describe_elements(elements: list[Element], spec: Mapping[str, Any] | None = None) -> list[str]:
    """One sentence per element (grouped types: one per group, at the position of the first).

    Elements marked ``present: false`` are not drawn and are not described. A bar, point or
    sector that shares an ``index`` with a label takes that label as its name (chart categories).
    ``spec`` (the figure spec holding the elements) supplies what the figure states once for all of
    them: the picture a pictogram key shows, the grid's steps, which gridlines carry numbers.
    """
    spec = spec or {}
    key_prefixes = _key_prefixes(elements)
    drawn = [el for el in elements if el.get("present", True) is not False]
    names = {el["index"]: el["text"] for el in drawn
             if el.get("type") == "label" and el.get("index") is not None and el.get("text")}
    groups: dict[str, list[Element]] = {}
    order: list[tuple[str, Element | None]] = []
    for el in drawn:
        kind = str(el.get("type", ""))
        if key_prefixes and str(el.get("id", "")).startswith(key_prefixes):
            kind = KEY_BLOCK
        primitive = None if kind == KEY_BLOCK else PRIMITIVES.get(kind)
        if kind == "label" and el.get("index") in names and any(
                o.get("index") == el["index"] and _named_by_label(o) for o in drawn):
            continue  # said with the bar, point or sector it names
        if primitive is not None and primitive.named_by_label and el.get("index") in names \
                and not element_name(el):
            el = {**el, "label": names[el["index"]], "category": True}
        grouped = primitive is not None and primitive.describe_group is not None \
            and not (primitive.alone is not None and primitive.alone(el))
        if kind == KEY_BLOCK or grouped:
            if kind not in groups:
                groups[kind] = []
                order.append((kind, None))
            groups[kind].append(el)
        else:
            order.append((kind, el))
    sentences = [_group(kind, groups[kind], spec) if el is None else _sentence(kind, el, spec) for kind, el in order]
    return [s for s in sentences if s]


def _group(kind: str, els: list[Element], spec: Mapping[str, Any]) -> str:
    if kind == KEY_BLOCK:
        return _key_block(els)
    return PRIMITIVES[kind].describe_group(els, spec)  # type: ignore[misc]


def _sentence(kind: str, el: Element, spec: Mapping[str, Any]) -> str:
    primitive = PRIMITIVES.get(kind)
    if primitive is None or primitive.describe is None:
        return generic(el)
    return primitive.describe(el, spec)


def describe_figure(figure: Figure | Mapping[str, Any] | None) -> str | None:
    """A plain-English description of a figure from its spec, or None when there is no figure.

    >>> describe_figure(Figure("bar_chart", {"elements": [{"id": "bar_1", "type": "bar", "label": "Mon", "value": 4}]}))
    'The figure is a bar chart. The bar for Mon has height 4.'
    """
    if figure is None:
        return None
    kind, spec = (figure.kind, figure.spec) if isinstance(figure, Figure) else (figure["kind"], figure["spec"])
    elements = spec.get("elements")
    if not isinstance(elements, list):
        raise ValueError(f"figure {kind!r}: spec['elements'] must be a list of element dicts, got "
                         f"{type(elements).__name__}; see render.figures for the element contract")
    words = str(kind).replace("_", " ")
    noun = words if words.split()[-1] in FIGURE_NOUNS else f"{words} diagram"
    if isinstance(spec.get("noun"), str) and spec["noun"]:  # a kind drawn in a named form (a stem-and-leaf table)
        noun = spec["noun"]
    sentences = [f"The figure is {article(noun)} {noun}."]
    if isinstance(spec.get("title"), str) and spec["title"]:  # a table's spec says only whether it has one (a flag)
        sentences.append(f"Its title is “{spec['title']}”.")
    sentences += describe_elements([e for e in elements if isinstance(e, Mapping)], spec)
    return " ".join(sentences)
