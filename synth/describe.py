"""Figure descriptions written from the figure spec: MathReal's ground-truth "DG" text, one sentence per element.

The description says what is *drawn*, so it reads values the way the figure shows them: an element's
``text`` (what is printed next to it) wins over its ``value``, and an element marked ``hidden`` (or
printed as "?") is described without its value. It is generic over the element contract of
``render.figures`` (``id``, ``type`` and values); every primitive type has a phrasing, unknown
types get a plain fallback, and repetitive primitives (ticks, grid lines, labels, objects) are
summarised in one sentence instead of one each. Same spec, same text: nothing here is random.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from synth.records import Figure

Element = Mapping[str, Any]

# Types summarised as a group (in the order of their first element) rather than one sentence each.
GROUPED = ("label", "tick", "tick_mark", "gridline", "object", "legend")


def _fmt(value: Any) -> str:
    """Numbers the way a worksheet prints them: 5, 2.5, -3 (no 5.0), lists joined by commas."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}" if not value.is_integer() else str(int(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _hidden(el: Element) -> bool:
    return bool(el.get("hidden")) or el.get("shown") is False or str(el.get("text", "")).strip() == "?"


def _structural(el: Element) -> str:
    """The points an element joins (AB, ABC), when its spec names them."""
    for key in ("vertices", "points", "ends", "endpoints"):
        if isinstance(el.get(key), (list, tuple)) and el[key] and all(isinstance(v, str) for v in el[key]):
            return "".join(el[key])
    if isinstance(el.get("from"), str) and isinstance(el.get("to"), str):
        return el["from"] + el["to"]
    return ""


def _name(el: Element) -> str:
    """What the element is called: the points it joins, else its name, else its label."""
    found = _structural(el)
    if found:
        return found
    keys = ("name", "label", "at", "text") if el.get("type") == "point" else ("name", "label")
    for key in keys:
        if el.get(key) not in (None, "") and isinstance(el[key], (str, int, float)):
            return _fmt(el[key])
    return ""


def _quantity(el: Element) -> str:
    """The value as drawn: printed text, else a label that is not the name, else value and unit."""
    if _hidden(el):
        return ""
    name = _name(el)
    for key in ("text", "label"):
        if el.get(key) not in (None, "") and _fmt(el[key]) != name:
            return _fmt(el[key])
    if el.get("value") is None:
        return ""
    unit = str(el.get("unit", ""))
    sep = "" if unit in ("", "°", "%") else " "
    return f"{_fmt(el['value'])}{sep}{unit}"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _named(kind: str, el: Element) -> str:
    name = _name(el)
    return f"{kind} {name}" if name else f"{_article(kind)} {kind}"


def _xy(value: Any) -> str:
    return f"({_fmt(value[0])}, {_fmt(value[1])})"


def _with(base: str, el: Element, verb: str) -> str:
    q = _quantity(el)
    if q:
        return f"{base} {verb} {q}."
    if _hidden(el) and (el.get("value") is not None or el.get("text")):
        return f"{base} is marked with a question mark (its value is not shown)."
    return f"{base} is drawn."


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _point(el: Element) -> str:
    base = _cap(_named("point", el))
    if "x" in el and "y" in el and not _hidden(el):
        return f"{base} is at ({_fmt(el['x'])}, {_fmt(el['y'])})."
    if el.get("value") is not None and not _hidden(el):
        where = f"The point at {_name(el)}" if el.get("category") else base
        return f"{where} has value {_fmt(el['value'])}{el.get('unit', '')}."
    return f"{base} is marked."


def _segment(el: Element) -> str:
    ends = el.get("from"), el.get("to")
    if all(isinstance(e, (list, tuple)) and len(e) == 2 for e in ends):
        what = "A line is drawn through" if el.get("extend") else "A segment is drawn from"
        return f"{what} {_xy(ends[0])} {'and' if el.get('extend') else 'to'} {_xy(ends[1])}."
    if isinstance(el.get("squares"), int) and not el.get("text") and not _hidden(el):
        # A side on squared paper: its length is counted in squares (and scaled by the grid's key).
        return f"{_cap(_named('segment', el))} runs along {_plural(el['squares'], 'grid square')}."
    return _with(_cap(_named("segment", el)), el, "is labelled")


def _angle_name(el: Element) -> str:
    """Angle DFE from vertex F and arms D, E; else "the angle at F"; else its name."""
    vertex, arms = el.get("vertex", el.get("at")), el.get("arms")
    if isinstance(vertex, str) and isinstance(arms, (list, tuple)) and len(arms) == 2 \
            and all(isinstance(a, str) for a in arms):
        return f"Angle {arms[0]}{vertex}{arms[1]}"
    if isinstance(vertex, str):
        return f"The angle at {vertex}"
    return _cap(_named("angle", el))


def _angle(el: Element) -> str:
    return _with(_angle_name(el), el, "is marked")


def _right_angle(el: Element) -> str:
    name = _angle_name(el)
    return f"{name} is marked as a right angle." if not name.startswith("An ") else "A right angle is marked."


def _circle(el: Element) -> str:
    # ``radius`` is the size it is drawn at, not a printed number: a radius or diameter the pupil reads is
    # its own labelled segment (on squared paper, a segment counted in squares), described with that segment.
    base = _cap(_named("circle", el))
    if el.get("centre") or el.get("center"):
        base += f" with centre {el.get('centre') or el.get('center')}"
    return _with(base, el, "is labelled")


def _arc(el: Element) -> str:
    """An arc; one drawn the long way round its centre (a circle with a slice cut out) says so, since the angle
    marked between its radii is then the empty slice's, not the arc's."""
    start, end, centre = el.get("start"), el.get("end"), el.get("center") or el.get("centre")
    if isinstance(start, (int, float)) and isinstance(end, (int, float)) and end - start > 180 and centre:
        return f"An arc about centre {centre} is drawn the long way round, more than half a circle."
    return _with(_cap(_named("arc", el)), el, "is labelled")


SHAPES = ("triangle", "rectangle", "square", "quadrilateral", "parallelogram", "trapezium", "rhombus", "kite",
          "pentagon", "hexagon")


def _polygon(el: Element) -> str:
    prefix = str(el.get("id", "")).split("_")[0]
    shape = el.get("shape") or (prefix if prefix in SHAPES else "polygon")
    return _with(_cap(_named(str(shape), el)), el, "is labelled")


def _axis(el: Element) -> str:
    name = _name(el) or str(el.get("axis", ""))
    direction = {"axis_x": "horizontal", "axis_y": "vertical"}.get(str(el.get("id")))
    if name in ("x", "y"):
        base = f"The {name}-axis"
    elif name:
        base = f"The {direction} axis, labelled {name}," if direction else f"The {name} axis"
    else:
        base = "An axis"
    parts = []
    if el.get("min") is not None and el.get("max") is not None:
        parts.append(f"runs from {_fmt(el['min'])} to {_fmt(el['max'])}")
    if el.get("step") is not None:
        parts.append(f"in steps of {_fmt(el['step'])}")
    if el.get("title"):
        parts.append(f"and is titled “{el['title']}”")
    return f"{base} {' '.join(parts)}." if parts else f"{base} is drawn."


def _curve(el: Element) -> str:
    formula = el.get("expression") or el.get("equation") or el.get("text")
    base = _cap(_named("curve", el))
    if isinstance(el.get("values"), (list, tuple)) and not _hidden(el):
        return f"A line joins the values {_fmt(el['values'])}."
    return f"{base} shows {formula}." if formula and not _hidden(el) else f"{base} is drawn."


def _bar(el: Element) -> str:
    name = _name(el)
    base = f"The bar for {name}" if name else "A bar"
    return _with(base, el, "has height")


def _wedge(el: Element) -> str:
    name = _name(el) or str(el.get("text") or "")
    base = f"The sector for {name}" if name else "A sector"
    if el.get("angle") is not None and el.get("show_angle", True) and not _hidden(el):
        return f"{base} has angle {_fmt(el['angle'])}°."
    if el.get("value_text") and not _hidden(el):  # a percent chart prints the share, not the angle
        return f"{base} is labelled {_fmt(el['value_text'])}."
    return _with(base, {**el, "text": None}, "is") if name else f"{base} is drawn."


def _cell(el: Element) -> str:
    where = []
    if el.get("row") is not None:
        where.append(f"row {_fmt(el['row'])}")
    if el.get("col", el.get("column")) is not None:
        where.append(f"column {_fmt(el.get('col', el.get('column')))}")
    base = f"The table cell in {', '.join(where)}" if where else _cap(_named("table cell", el))
    return _with(base, el, "reads")


def _face(el: Element) -> str:
    if el.get("hour") is not None and el.get("minute") is not None and not _hidden(el):
        return f"A clock face shows {int(el['hour'])}:{int(el['minute']):02d}."
    return _with(_cap(_named("face", el)), el, "is labelled")


def _hand(el: Element) -> str:
    if el.get("hour") is not None and el.get("minute") is not None:
        return ""  # its clock face already states the time it shows
    name = _name(el) or str(el.get("hand", ""))
    base = f"The {name} hand" if name else "A clock hand"
    return _with(base, el, "points to")


def _text(el: Element) -> str:
    text = el.get("text")
    if text and el.get("id") == "title" and not _hidden(el):
        return f"Its title is “{_fmt(text)}”."
    return f"The text “{_fmt(text)}” is written in the figure." if text and not _hidden(el) else "Some text is drawn."


def _generic(el: Element) -> str:
    kind = str(el.get("type", "element")).replace("_", " ")
    return _with(_cap(_named(kind, el)), el, "is labelled")


def _face_grid(el: Element) -> str:
    """A face ruled into cubes: the counts along its two edges are what a pupil reads off the drawing."""
    points, divisions = el.get("points"), el.get("divisions")
    if not (isinstance(points, (list, tuple)) and len(points) == 4 and isinstance(divisions, (list, tuple))
            and len(divisions) == 2):
        return _generic(el)
    side = str(el.get("face", "")).removeprefix("face_").replace("_", " ")
    where = f" ({side})" if side and side != str(el.get("face", "")) else ""
    m, n = (_fmt(d) for d in divisions)
    p0, p1, p3 = (str(points[i]) for i in (0, 1, 3))
    return f"Face {''.join(map(str, points))}{where} is ruled into {m} × {n} squares, {m} along {p0}{p1} and " \
           f"{n} along {p0}{p3}."


def _disc_lines(el: Element) -> str:
    """A cylinder ruled into equal discs (a stack of coins): the count is what a pupil reads off the drawing."""
    count = el.get("count")
    if not isinstance(count, int) or _hidden(el):
        return _generic(el)
    return f"The cylinder is ruled into {count} equal discs stacked one on another."


def _ball_stack(el: Element) -> str:
    """Equal balls stacked in a tube: how many there are and what they touch, which says which of the tube's
    printed lengths gives their diameter (the pupil counts them and reads the contacts off the drawing)."""
    count, touches = el.get("count"), el.get("touches")
    if not isinstance(count, int) or touches not in ("sides", "ends") or _hidden(el):
        return _generic(el)
    where = ("the tube's curved side, and the top ball stops short of the lid" if touches == "sides"
             else "the tube's base and its lid, with a gap between the balls and the curved side")
    return f"{_plural(count, 'equal ball')} are stacked up the tube, each touching the next; they touch {where}."


def _protractor(el: Element) -> str:
    """A protractor laid on an angle: where it sits and what its two scales show where the measured arm
    crosses them (both, since which one to read is the pupil's call). No angle is printed on the figure."""
    at, base, side, value = el.get("at"), el.get("base"), el.get("side"), el.get("value")
    if not all(isinstance(v, str) for v in (at, base, side)) or el.get("scale") not in ("outer", "inner"):
        return "A protractor is drawn."
    text = (f"A protractor is laid on angle {base}{at}{side}, centred on {at} with its straight edge along {at}{base}; "
            f"its two scales run from 0 to 180 in opposite directions, the {el['scale']} one from 0 on arm {at}{base}.")
    if isinstance(value, (int, float)) and not _hidden(el):
        outer = value if el["scale"] == "outer" else 180 - value
        text += f" Arm {at}{side} crosses the outer scale at {_fmt(outer)} and the inner scale at {_fmt(180 - outer)}."
    return text


def _plural(n: float, word: str) -> str:
    return f"{_fmt(n)} {word}{'' if n == 1 else 's'}"


def _pictogram_key(el: Element, spec: Mapping[str, Any]) -> str:
    """``= 3 stars`` under a star: each drawn picture stands for that many (the scale a pupil must apply)."""
    text = str(el.get("text") or "").strip()
    if not text or _hidden(el):
        return "A key is drawn under the picture."
    if not text.startswith("="):
        return f"A key under the picture reads “{text}”."
    shape = spec.get("shape")
    picture = f"each {shape} drawn" if isinstance(shape, str) and shape else "each picture"
    return f"A key under the picture says {picture} stands for {text[1:].strip()}."


def _leg(start: Any, end: Any, spec: Mapping[str, Any]) -> str:
    """One leg of a step: across or up/down, with the squares it spans when the grid step is known."""
    (xa, ya), (xb, yb) = start, end
    if ya == yb and xa != xb:
        size, step, way = abs(xb - xa), spec.get("grid_step"), "across"
    elif xa == xb and ya != yb:
        size, step, way = abs(yb - ya), spec.get("y_grid_step", spec.get("grid_step")), "up" if yb > ya else "down"
    else:
        return f"to {_xy(end)}"
    if isinstance(step, (int, float)) and step > 0 and (size / step).is_integer():
        return f"{way} {_plural(size / step, 'square')} to {_xy(end)}"
    return f"{way} to {_xy(end)}"


def _steps(els: list[Element], spec: Mapping[str, Any]) -> str:
    """A gradient's step triangle as one path: from the first point across, then up or down to the second."""
    legs = [e for e in els if all(isinstance(e.get(k), (list, tuple)) and len(e[k]) == 2
                                  and all(isinstance(v, (int, float)) for v in e[k]) for k in ("from", "to"))]
    if not legs:
        return "A dashed step is drawn." if len(els) == 1 else f"{len(els)} dashed steps are drawn."
    if any(list(a["to"]) != list(b["from"]) for a, b in zip(legs, legs[1:])):  # not one path: each on its own
        return " ".join(f"A dashed step is drawn from {_xy(e['from'])} {_leg(e['from'], e['to'], spec)}."
                        for e in legs)
    path = ", then ".join(_leg(e["from"], e["to"], spec) for e in legs)
    return f"A dashed step is drawn from {_xy(legs[0]['from'])} {path}."


def _key_block(els: list[Element]) -> str:
    """Tinted polygons drawn apart from the solid (a key cube), with their caption and marked edge."""
    captions = [_fmt(e["text"]) for e in els if e.get("type") == "text" and e.get("text") and not _hidden(e)]
    edges = [q for q in (_quantity(e) for e in els if e.get("type") == "segment") if q]
    # The caption says what the key shows ("1 cube", "1 coin"); a coin is a flat disc, not a block.
    coin = any("coin" in c for c in captions)
    text = f"A key beside the solid shows {'a single coin' if coin else 'a small shaded block'}"
    if captions:
        text += f" labelled “{captions[0]}”"
    if edges:
        text += f"{',' if captions else ''} with its {'thickness' if coin else 'edge'} marked {edges[0]}"
    return text + "."


def _numbering(spec: Mapping[str, Any]) -> str:
    """How the axes are numbered, where the y axis counts in other steps than the x axis, a coordinate grid
    numbers only some of its lines, or a chart leaves several gridlines between two numbers (which a reader
    must count; one unnumbered line is the halfway mark).

    Empty otherwise (then the ticks keep their plain sentence).
    """
    # a coordinate grid whose y axis counts in other steps, or that numbers only some of its lines
    if "y_grid_step" in spec or "y_label_step" in spec or spec.get("label_step", spec.get("grid_step")) != \
            spec.get("grid_step"):
        gx, lx = spec.get("grid_step"), spec.get("label_step", spec.get("grid_step"))
        gy, ly = spec.get("y_grid_step", gx), spec.get("y_label_step", lx)
        if None in (gx, lx, gy, ly):
            return ""
        return (f"Each grid square is {_fmt(gx)} across and {_fmt(gy)} up: the x-axis is numbered every "
                f"{_fmt(lx)} and the y-axis every {_fmt(ly)}.")
    every, step, top = spec.get("label_every"), spec.get("y_step"), spec.get("y_max")
    if not all(isinstance(v, (int, float)) for v in (every, step, top)) or every <= 2 or step <= 0:
        return ""
    numbered = [k * step for k in range(int(top // step + 1e-9) + 1) if k % every == 0]
    return (f"The vertical axis is numbered {_fmt(numbered)}, with a gridline every {_fmt(step)} "
            "(the lines between the numbers carry no number).")


PHRASES: dict[str, Callable[[Element], str]] = {
    "point": _point, "segment": _segment, "angle_mark": _angle, "right_angle": _right_angle,
    "circle": _circle, "arc": _arc,
    "polygon": _polygon, "face": _face,
    "axis": _axis, "curve": _curve, "bar": _bar, "wedge": _wedge, "cell": _cell, "hand": _hand, "text": _text,
    "face_grid": _face_grid, "disc_lines": _disc_lines, "protractor": _protractor, "ball_stack": _ball_stack,
}


def _group(kind: str, els: list[Element], spec: Mapping[str, Any]) -> str:
    """One sentence for a run of repetitive primitives (``spec``: how the figure numbers its axes)."""
    shown = [q for q in (_quantity(e) or _name(e) for e in els) if q]
    n = len(els)
    if kind == "label":
        texts = [t for t in (_fmt(e.get("text") or e.get("label") or "") for e in els if not _hidden(e)) if t]
        if not texts:
            return f"{n} labels are drawn."
        return f"The label {texts[0]} is written on the figure." if len(texts) == 1 else \
            f"The labels {', '.join(texts)} are written on the figure."
    if kind == "tick" and not shown and _numbering(spec):
        return _numbering(spec)
    if kind == "step":
        return _steps(els, spec)
    if kind == KEY_BLOCK:
        return _key_block(els)
    if kind == "tick":
        return f"The axis ticks are labelled {', '.join(shown)}." if shown else "Axis ticks are drawn."
    if kind == "tick_mark":
        names = [_name(e) for e in els if _name(e)]
        where = f" on {', '.join(names)}" if names else ""
        return f"Tick marks{where} show equal lengths."
    if kind == "gridline":
        return "A grid is drawn." if n == 1 else f"A grid of {n} lines is drawn."
    if kind == "legend":
        return f"The legend shows {', '.join(shown)}." if shown else "A legend is drawn."
    if kind == "cell":
        return _table(els, ruled=spec.get("style") == "stem_leaf")
    if kind == "equal_mark":
        return _equal_marks(els)
    if kind == "object" and _objects_by_group(els, spec):
        return _objects_by_group(els, spec)
    counts = Counter(_name(e) or "object" for e in els)
    if list(counts) == ["object"]:
        return f"There {'is 1 object' if n == 1 else f'are {n} objects'} drawn."
    parts = [f"{c} {name}{'' if c == 1 or name.endswith('s') else 's'}" for name, c in counts.items()]
    return f"There {'is' if n == 1 else 'are'} {n} object{'' if n == 1 else 's'} drawn: {', '.join(parts)}."


def _objects_by_group(els: list[Element], spec: Mapping[str, Any]) -> str:
    """Objects drawn in several labelled groups (trays A and B): how many in each, since a question may ask
    about one of them. Empty unless every object has a group and every group a label."""
    counts = Counter(e.get("group") for e in els)
    names = {e.get("group"): _fmt(e["text"]) for e in spec.get("elements", ()) if isinstance(e, Mapping)
             and e.get("type") == "label" and e.get("group") is not None and e.get("text") and not _hidden(e)}
    if len(counts) < 2 or not set(counts) <= set(names):
        return ""
    parts = [f"{c} in {names[g]}" for g, c in counts.items()]
    return f"There are {len(els)} objects drawn: {', '.join(parts[:-1])} and {parts[-1]}."


def _table(cells: list[Element], *, ruled: bool = False) -> str:
    """A table, row by row (the way MathReal's OCR rules read tables).

    ``ruled`` (a stem-and-leaf diagram) says "(empty)" where a row has no cell in a column: a side with no
    leaves on that stem, which only its place in the row tells apart from the other side.
    """
    rows: dict[Any, list[Element]] = {}
    for cell in cells:
        rows.setdefault(cell.get("row", 0), []).append(cell)
    columns = sorted({c.get("col") for c in cells if isinstance(c.get("col"), int)}) if ruled else []
    lines = []
    for r, row in rows.items():
        ordered = sorted(row, key=lambda c: (c.get("col", c.get("column", 0)) or 0))
        values = [_quantity(c) or ("?" if _hidden(c) else "(empty)") for c in ordered]
        if columns:
            drawn = {c.get("col"): v for c, v in zip(ordered, values)}
            values = [drawn.get(col, "(empty)") for col in columns]
        label = f"row {int(r) + 1}" if isinstance(r, int) else f"row {r}"
        lines.append(f"{label}: {', '.join(values)}")
    return f"A table with {len(rows)} rows: " + "; ".join(lines) + "."


GROUPED = (*GROUPED, "cell", "step", "equal_mark")


def _equal_marks(els: list[Element]) -> str:
    """Equal-angle marks (an arc with ticks at a pie chart's centre): the sectors sharing a mark are equal."""
    by_mark: dict[Any, list[str]] = {}
    for e in els:
        by_mark.setdefault(e.get("ticks", 1), []).append(str(e.get("sector") or e.get("id")))
    parts = []
    for ticks, names in by_mark.items():
        mark = f"an arc with {_plural(ticks, 'tick')}" if isinstance(ticks, int) else "an arc"
        if len(names) == 1:
            parts.append(f"The sector for {names[0]} carries an angle mark at the centre ({mark}).")
        else:
            listed = ", ".join(names[:-1]) + f" and {names[-1]}"
            parts.append(f"The sectors for {listed} carry the same angle mark at the centre ({mark}): their angles "
                         "are equal.")
    return " ".join(parts)


KEY_BLOCK = "key block"  # not an element type: the elements of a tinted key drawn beside a solid


def _key_prefixes(elements: list[Element]) -> tuple[str, ...]:
    """Id prefixes (``key_``) of tinted polygons: a key cube's faces, whose caption and edge share the prefix."""
    found = [str(e.get("id", "")).split("_")[0] + "_" for e in elements
             if e.get("type") == "polygon" and e.get("tint") and "_" in str(e.get("id", ""))]
    return tuple(dict.fromkeys(found))


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
        if kind == "object" and el.get("name") == "protractor":
            kind = "protractor"  # a measuring tool laid on the figure, not one of a group of objects
        if kind == "label" and el.get("index") in names and any(
                o.get("index") == el["index"] and o.get("type") in ("bar", "point", "wedge") for o in drawn):
            continue  # said with the bar, point or sector it names
        if kind in ("bar", "point", "wedge") and el.get("index") in names and not _name(el):
            el = {**el, "label": names[el["index"]], "category": True}
        if kind in (*GROUPED, KEY_BLOCK):
            if kind not in groups:
                groups[kind] = []
                order.append((kind, None))
            groups[kind].append(el)
        else:
            order.append((kind, el))
    sentences = [_group(kind, groups[kind], spec) if el is None
                 else _pictogram_key(el, spec) if kind == "key" else PHRASES.get(kind, _generic)(el)
                 for kind, el in order]
    return [s for s in sentences if s]


FIGURE_NOUNS = ("chart", "line", "grid", "clock", "diagram", "array", "plot", "graph", "table", "net", "figure")


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
    sentences = [f"The figure is {_article(noun)} {noun}."]
    if isinstance(spec.get("title"), str) and spec["title"]:  # a table's spec says only whether it has one (a flag)
        sentences.append(f"Its title is “{spec['title']}”.")
    sentences += describe_elements([e for e in elements if isinstance(e, Mapping)], spec)
    return " ".join(sentences)
