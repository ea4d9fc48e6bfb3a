"""Prisms: cuboid volume (some drawn as a stack of cubes), cuboid surface area, triangular prisms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._display import num, step
from synth.generators._figure import (
    UNITS,
    FigureFamily,
    Quantity,
    length_text,
    neighbour_misreads,
    pick,
)
from synth.generators._solid import (
    cubic_unit,
    integral,
    solid_answer,
    solid_spec,
    square_unit,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure

_BOX_VIEW = {"azimuth": -32, "elevation": 22}
# Share of easy cuboid volumes drawn as a stack of equal cubes with a key cube (count, then scale by the key).
_CUBES_SHARE = 0.5
_CUBE_EDGES = (2, 3, 4, 5)
# What each count of cubes is read along: the face whose grid shows it.
_CUBE_COUNTS = (("nl", "cubes_front", "length"), ("nw", "cubes_right", "width"), ("nh", "cubes_front", "height"))


def _edge(el_id: str, a: str, b: str, faces: list[str], text: str | None = None, value: Any = None,
          **kw: Any) -> dict[str, Any]:
    e = {"id": el_id, "type": "segment", "from": a, "to": b, "faces": faces, **kw}
    if text is not None:
        e["text"] = text
        e["value"] = value
    return e


@dataclass(frozen=True)
class _Level:
    shape: str  # "cuboid" or "triangular" (a right-angled triangle's prism)
    ask: str | None  # "volume" (on shares in litres, or built of cubes) or "surface"; None: either, drawn


_LEVELS = {"easy": _Level("cuboid", "volume"), "medium": _Level("cuboid", "surface"),
           "hard": _Level("triangular", None)}


@register
class PrismVolumeSurface(FigureFamily):
    """easy: cuboid volume; medium: cuboid surface area; hard: a triangular prism's volume or surface area."""

    id = "solid.prism.volume_surface"
    domain = "geometry"
    subdomain = "solids"
    grade_band = "6-8"
    figure_kind = "solid"
    malrules = (
        MalRule("surface_faces_once", "formula_misuse", "counts each pair of opposite faces once (no × 2)"),
        MalRule("prism_without_half", "formula_misuse", "uses base × height for the triangular end (no ½)"),
        MalRule("base_area_only", "misinterpret_question", "gives the area of the base, not the volume"),
        MalRule("litre_as_100_cm3", "unit_conversion", "converts cm³ to litres dividing by 100 (1 litre is 1000 cm³)"),
        MalRule("litres_multiplied", "unit_conversion", "multiplies by 1000 to turn cm³ into litres, not divides"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        unit = pick(rng, UNITS)
        if level.shape == "cuboid":
            dims = sorted((int(v) for v in rng.choice(np.arange(2, 16), size=3, replace=False)), reverse=True)
            ask = level.ask
            if ask == "volume" and rng.random() < 0.3:
                ask, unit = "capacity", "cm"  # a box in cm, asked in litres: a conversion step to get right
            if ask == "volume" and rng.random() < _CUBES_SHARE:
                return self._sample_cubes(rng, unit)
            return {"shape": "cuboid", "ask": ask, "l": dims[0], "w": dims[2], "h": dims[1], "unit": unit}
        a, b, c = pick(rng, ((3, 4, 5), (6, 8, 10), (5, 12, 13), (9, 12, 15), (8, 15, 17)))
        if rng.integers(2):
            a, b = b, a
        return {"shape": "triangular", "ask": pick(rng, ("volume", "surface")), "b": a, "h": b, "c": c,
                "l": int(rng.integers(4, 21)), "unit": unit}

    @staticmethod
    def _sample_cubes(rng: np.random.Generator, unit: str) -> dict[str, Any]:
        """A cuboid built from equal cubes: the pupil counts cubes along each edge and scales by the key cube."""
        nl, nh, nw = sorted((int(v) for v in rng.choice(np.arange(2, 9), size=3, replace=False)), reverse=True)
        k = int(pick(rng, _CUBE_EDGES))
        return {"shape": "cuboid", "ask": "volume", "l": nl * k, "w": nw * k, "h": nh * k, "unit": unit,
                "cube": k, "nl": nl, "nw": nw, "nh": nh}

    def counted_in_figure(self, params: dict[str, Any]) -> bool:
        return params.get("cube") is not None  # the counts exist only in the drawing

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """For a stack of cubes: a count along an edge one off (the lines counted, not the cubes), the key
        cube's edge ignored (each cube taken as 1 unit long) or its number misread; otherwise the labelled edges."""
        if params.get("cube") is None:
            return super().figure_readings(params)
        if params["image_role"] != "required":
            return ()
        k = params["cube"]
        readings = [Reading("cube", "key_edge", "misread_scale", (1,)),
                    Reading("cube", "key_edge", "misread_value", tuple(neighbour_misreads(k)))]
        for key, element, _ in _CUBE_COUNTS:
            n = params[key]
            readings.append(Reading(key, element, "miscount", (n - 1, n + 1)))
        return effective_readings(self, params, readings)

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u = params["unit"]
        if params.get("cube") is not None:
            return [Quantity("edge of each cube", "cube", "key_edge", u),
                    *(Quantity(f"cubes along the {name}", key, element) for key, element, name in _CUBE_COUNTS)]
        if params["shape"] == "cuboid":
            return [Quantity("length", "l", "edge_length", u), Quantity("width", "w", "edge_width", u),
                    Quantity("height", "h", "edge_height", u)]
        out = [Quantity("base of the triangle", "b", "edge_base", u), Quantity("height of the triangle", "h",
                                                                                "edge_height", u),
               Quantity("length", "l", "edge_length", u)]
        if params["ask"] == "surface":
            out.append(Quantity("slanted side", "c", "edge_slant", u))
        return out

    def valid(self, params: dict[str, Any]) -> bool:
        if params["shape"] == "triangular":
            return params["c"] ** 2 == params["b"] ** 2 + params["h"] ** 2
        return True

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        shape, ask = params["shape"], params["ask"]
        ok = {"surface_faces_once": shape == "cuboid" and ask == "surface",
              "prism_without_half": shape == "triangular", "base_area_only": ask == "volume",
              "litre_as_100_cm3": ask == "capacity", "litres_multiplied": ask == "capacity"}
        if mal is not None and not ok[mal]:
            return None
        rule = "mal:" + mal if mal else f"{shape}_{ask}"
        if ask == "capacity":
            return self._capacity(params, d, rule, mal)
        if params.get("cube") is not None:
            return self._cubes_volume(params, d, rule, mal)
        if shape == "cuboid" and ask == "volume":
            ln, w, h = params["l"], params["w"], params["h"]
            if mal == "base_area_only":
                step(d, rule, ["*", ln, w])
                a = d.compute(sympy.Integer(ln * w))
                step(d, "multiply", num(a), a)
                return d.steps
            step(d, rule, ["*", ["*", ln, w], h])
            a = d.compute(sympy.Integer(ln * w))
            step(d, "multiply", ["*", num(a), h], a)
            v = d.compute(a * h)
            step(d, "multiply", num(v), v)
            return d.steps
        if shape == "cuboid":
            ln, w, h = params["l"], params["w"], params["h"]
            parts: list[E.Node] = [["*", ln, w], ["*", ln, h], ["*", w, h]]
            twice = mal != "surface_faces_once"

            def total(ps: list[E.Node]) -> E.Node:
                inner = E.sum_of(ps)
                return ["*", 2, ["group", inner]] if twice else inner

            step(d, rule, total(parts))
            for i in range(3):
                v = d.compute(E.sym(parts[i]))
                parts[i] = num(v)
                step(d, "face_area", total(parts), v)
            s = d.compute(sum((E.sym(p) for p in parts), sympy.Integer(0)))
            if twice:
                step(d, "add", ["*", 2, num(s)], s)
                s = d.compute(2 * s)
            step(d, "multiply" if twice else "add", num(s), s)
            return d.steps
        b, h, c, ln = params["b"], params["h"], params["c"], params["l"]
        half: list[E.Node] = [] if mal == "prism_without_half" else [["frac", 1, 2]]
        if ask == "volume":
            tail: list[E.Node] = [] if mal == "base_area_only" else [ln]
            step(d, rule, E.product_of([*half, b, h, *tail]))
            tri = d.compute(E.sym(E.product_of([*half, b, h])))
            step(d, "triangle_area", E.product_of([num(tri), *tail]), tri)
            if tail:
                v = d.compute(tri * ln)
                step(d, "multiply", num(v), v)
            return d.steps
        ends: E.Node = E.product_of([2, *half, b, h])
        sides: E.Node = ["*", ["group", E.sum_of([b, h, c])], ln]
        step(d, rule, ["+", ends, sides])
        e = d.compute(E.sym(ends))
        step(d, "end_areas", ["+", num(e), sides], e)
        p = d.compute(sympy.Integer(b + h + c))
        step(d, "perimeter", ["+", num(e), ["*", num(p), ln]], p)
        r = d.compute(p * ln)
        step(d, "multiply", ["+", num(e), num(r)], r)
        t = d.compute(e + r)
        step(d, "add", num(t), t)
        return d.steps

    @staticmethod
    def _cubes_volume(params: dict[str, Any], d: Derivation, rule: str, mal: str | None) -> list[StepDraft]:
        """``(5 × 2) × (3 × 2) × (4 × 2)``: cubes counted along each edge times the key cube's edge, then multiply.

        With a key edge of 1 (a key ignored) the counts are the lengths: ``5 × 3 × 4``.
        """
        k = params["cube"]
        edges: list[E.Node] = [params[key] if k == 1 else ["group", ["*", params[key], k]]
                               for key, _, _ in _CUBE_COUNTS]
        if mal == "base_area_only":
            edges = edges[:2]
        step(d, rule, E.product_of(edges))
        if k != 1:
            for i in range(len(edges)):
                v = d.compute(E.sym(edges[i]))
                edges[i] = num(v)
                step(d, "edge_from_cubes", E.product_of(edges), v)
        while len(edges) > 1:
            v = d.compute(E.sym(edges[0]) * E.sym(edges[1]))
            edges = [num(v), *edges[2:]]
            step(d, "multiply", E.product_of(edges), v)
        return d.steps

    @staticmethod
    def _capacity(params: dict[str, Any], d: Derivation, rule: str, mal: str | None) -> list[StepDraft]:
        """Volume in cm³, then litres: ``15 × 8 × 11 ÷ 1000`` (a mal-rule uses 100, or multiplies)."""
        ln, w, h = params["l"], params["w"], params["h"]
        op, factor = ("*", 1000) if mal == "litres_multiplied" else ("/", 100 if mal == "litre_as_100_cm3" else 1000)
        step(d, rule, [op, ["*", ["*", ln, w], h], factor])
        a = d.compute(sympy.Integer(ln * w))
        step(d, "multiply", [op, ["*", num(a), h], factor], a)
        v = d.compute(a * h)
        step(d, "multiply", [op, num(v), factor], v)
        litres = d.compute(v * factor if op == "*" else v / factor)
        step(d, "cm3_to_litres", num(litres), litres)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Integrate the cross-section along the length (volume); sum every face's area (surface).
        z = sympy.Symbol("z")
        if params["shape"] == "cuboid":
            ln, w, h = params["l"], params["w"], params["h"]
            if params["ask"] == "capacity":  # 1 litre is a cube of side 10 cm
                return integral(sympy.Rational(ln * w, 100) + 0 * z, z, 0, sympy.Rational(h, 10))
            if params["ask"] == "volume":
                return integral(sympy.Integer(ln * w) + 0 * z, z, 0, h)
            return sympy.Integer(sum(2 * a * b for a, b in ((ln, w), (ln, h), (w, h))))
        b, h, c, ln = params["b"], params["h"], params["c"], params["l"]
        section = sympy.Rational(b * h, 2)
        if params["ask"] == "volume":
            return integral(section + 0 * z, z, 0, ln)
        return 2 * section + sum(sympy.Integer(s * ln) for s in (b, h, c))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u = params["unit"]
        if params["ask"] == "capacity":
            return solid_answer(answer, ("L", r"\mathrm{L}"))
        return solid_answer(answer, cubic_unit(u) if params["ask"] == "volume" else square_unit(u))

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {"facts": [f"{q.name} {length_text(params[q.param], u)}" for q in self.quantities(params)]}

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        if params["shape"] == "cuboid":
            ln, w, h = params["l"], params["w"], params["h"]
            p = {"A": (0, 0, 0), "B": (ln, 0, 0), "C": (ln, h, 0), "D": (0, h, 0),
                 "E": (0, 0, -w), "F": (ln, 0, -w), "G": (ln, h, -w), "H": (0, h, -w)}
            faces = {"face_front": "ABCD", "face_back": "EFGH", "face_bottom": "ABFE", "face_top": "DCGH",
                     "face_left": "AEHD", "face_right": "BFGC"}
            els: list[dict[str, Any]] = [{"id": k, "type": "face", "points": list(v)} for k, v in faces.items()]
            edges = {"AB": ("face_front", "face_bottom"), "BC": ("face_front", "face_right"),
                     "CD": ("face_front", "face_top"), "DA": ("face_front", "face_left"),
                     "EF": ("face_back", "face_bottom"), "FG": ("face_back", "face_right"),
                     "GH": ("face_back", "face_top"), "HE": ("face_back", "face_left"),
                     "AE": ("face_bottom", "face_left"), "BF": ("face_bottom", "face_right"),
                     "CG": ("face_top", "face_right"), "DH": ("face_top", "face_left")}
            named = {"AB": ("edge_length", "l"), "BF": ("edge_width", "w"), "BC": ("edge_height", "h")}
            cubes = params.get("cube") is not None
            for e, fs in edges.items():
                if e in named and not cubes:  # a stack of cubes is measured by counting, not by labels
                    el_id, key = named[e]
                    els.append(_edge(el_id, e[0], e[1], list(fs), length_text(params[key], u), params[key]))
                else:
                    els.append(_edge(named[e][0] if e in named else f"edge_{e}", e[0], e[1], list(fs)))
            if cubes:
                return Figure(self.figure_kind, _cube_stack_spec(params, p, faces, els))
            return Figure(self.figure_kind, solid_spec(p, els, _BOX_VIEW, (3.0, 2.4)))
        b, h, ln = params["b"], params["h"], params["l"]
        p = {"A": (0, 0, 0), "B": (b, 0, 0), "C": (0, h, 0), "D": (0, 0, -ln), "E": (b, 0, -ln), "F": (0, h, -ln)}
        faces = {"face_front": "ABC", "face_back": "DEF", "face_bottom": "ABED", "face_left": "ACFD",
                 "face_slant": "BCFE"}
        els = [{"id": k, "type": "face", "points": list(v)} for k, v in faces.items()]
        edges = {"AB": ("face_front", "face_bottom"), "AC": ("face_front", "face_left"),
                 "BC": ("face_front", "face_slant"), "DE": ("face_back", "face_bottom"),
                 "DF": ("face_back", "face_left"), "EF": ("face_back", "face_slant"),
                 "AD": ("face_bottom", "face_left"), "BE": ("face_bottom", "face_slant"),
                 "CF": ("face_left", "face_slant")}
        named = {"AB": ("edge_base", "b"), "AC": ("edge_height", "h"), "BE": ("edge_length", "l")}
        if params["ask"] == "surface":
            named["BC"] = ("edge_slant", "c")
        for e, fs in edges.items():
            if e in named:
                el_id, key = named[e]
                els.append(_edge(el_id, e[0], e[1], list(fs), length_text(params[key], u), params[key]))
            else:
                els.append(_edge(f"edge_{e}", e[0], e[1], list(fs)))
        els.append({"id": "right_A", "type": "right_angle", "at": "A", "arms": ["B", "C"]})
        return Figure(self.figure_kind, solid_spec(p, els, _BOX_VIEW, (3.0, 2.4)))


def _cube_stack_spec(params: dict[str, Any], points: dict[str, tuple[float, float, float]],
                     faces: dict[str, str], elements: list[dict[str, Any]]) -> dict[str, Any]:
    """The cuboid ruled into cubes on its faces, and one key cube beside it with its edge labelled.

    The key cube stands apart (a gap of one cube) and has no ``face`` elements: its faces are
    tinted polygons, so the cuboid's hidden-face test is not disturbed by its points.
    """
    k, ln, u = params["cube"], params["l"], params["unit"]
    counts = {"cubes_front": ("face_front", params["nl"], params["nh"]),
              "cubes_top": ("face_top", params["nl"], params["nw"]),
              "cubes_right": ("face_right", params["nw"], params["nh"])}
    grids = [{"id": gid, "type": "face_grid", "face": face, "points": list(faces[face]),
              "divisions": [a, b]} for gid, (face, a, b) in counts.items()]
    # Clear of the cuboid's right face on the page (it reaches about 0.63 w further right in this view).
    x0 = ln + 0.7 * params["w"] + k
    key = {"K0": (x0, 0, 0), "K1": (x0 + k, 0, 0), "K2": (x0 + k, k, 0), "K3": (x0, k, 0),
           "K4": (x0, k, -k), "K5": (x0 + k, k, -k), "K6": (x0 + k, 0, -k), "KT": (x0 + k / 2, k, -k)}
    key_els: list[dict[str, Any]] = [
        {"id": "key_front", "type": "polygon", "points": ["K0", "K1", "K2", "K3"], "tint": "side"},
        {"id": "key_top", "type": "polygon", "points": ["K3", "K2", "K5", "K4"], "tint": "top"},
        {"id": "key_right", "type": "polygon", "points": ["K1", "K6", "K5", "K2"], "tint": "side"},
        {"id": "key_edge", "type": "segment", "from": "K0", "to": "K1", "text": length_text(k, u), "value": k,
         "dir": [0, -1]},
        {"id": "key_caption", "type": "text", "at": "KT", "text": "1 cube", "dir": [0, 1]},
    ]
    return solid_spec({**points, **key}, [*elements, *grids, *key_els], _BOX_VIEW, (3.4, 2.4))
