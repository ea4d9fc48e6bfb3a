"""Solids with figures: prism, cylinder, cone and sphere volumes and surface areas (exact in π)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._display import num, pi_times, show, step
from synth.generators._figure import (
    GRID_STEPS,
    UNITS,
    FigureFamily,
    Quantity,
    counted,
    grid_elements,
    length_text,
    neighbour_misreads,
    pick,
    radius_as_diameter,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft, effective_readings
from synth.polynomials import definite_integral
from synth.records import Figure

_CURVED_VIEW = {"azimuth": 0, "elevation": 18}
# Directions for a sphere's radius: near the left-right axis, so it never hides behind its own label.
_SPHERE_TURNS = (-35, -25, -15, -5, 5, 15, 25, 35, 155, 165, 175, 185, 195, 205)
_BOX_VIEW = {"azimuth": -32, "elevation": 22}
# Share of easy cuboid volumes drawn as a stack of equal cubes with a key cube (count, then scale by the key).
_CUBES_SHARE = 0.5
_CUBE_EDGES = (2, 3, 4, 5)
# Share of easy and medium cylinder volumes drawn as a stack of identical coins with a key coin (count the
# coins, then scale by the key coin's thickness), and the thicknesses its key may print (mm).
_COINS_SHARE = 0.35
_COIN_THICKNESS = (2, 3, 4)
# What each count of cubes is read along: the face whose grid shows it.
_CUBE_COUNTS = (("nl", "cubes_front", "length"), ("nw", "cubes_right", "width"), ("nh", "cubes_front", "height"))
# Share of easy cones and of easy and medium spheres drawn on squared paper with a key (lengths counted in
# squares, then scaled by the key). The solid is drawn with its heights true to size (a textbook sketch, not a
# photograph) so the radius and the height run along grid lines.
_GRID_SHARE = 0.35
_TRUE_HEIGHT_VIEW = {**_CURVED_VIEW, "true_heights": True}
_SPHERE_GRID_SHARE = 0.25  # a sphere has one counted length: a smaller space of problems, kept rarer to stay distinct
# Share of medium sphere volumes asked as a tube of identical balls (tennis balls): the balls are counted, and
# the drawing shows what they touch (the tube's curved side, or both of its ends), which says which printed
# length gives their diameter.
_TUBE_SHARE = 0.4
# Share of hard cylinder problems asking the space left in such a tube (the tube's volume less the balls').
_TUBE_SPACE_SHARE = 0.35


def _integral(expr: sympy.Expr, z: sympy.Symbol, lo: sympy.Basic, hi: sympy.Basic) -> sympy.Expr:
    """∫ expr dz from lo to hi for a polynomial in z (term by term: fast and exact, unlike integrate())."""
    anti = sympy.Poly(sympy.expand(expr), z).integrate().as_expr()
    return sympy.expand(anti.subs(z, hi) - anti.subs(z, lo))


def _exact_integral(expr: sympy.Expr, z: sympy.Symbol, lo: sympy.Basic, hi: sympy.Basic) -> sympy.Expr:
    """`_integral` on exact numbers (synth.polynomials) when the integrand and limits allow, as they do for school
    solids (square roots included); the same value at about a sixteenth of the cost. `_integral` otherwise."""
    exact = definite_integral(expr, z, lo, hi)
    return _integral(expr, z, lo, hi) if exact is None else exact


def _spec(points3d: dict[str, tuple[float, float, float]], elements: list[dict[str, Any]], view: dict[str, Any],
          size: tuple[float, float] = (2.8, 2.4)) -> dict[str, Any]:
    return {"size_in": list(size), "view": dict(view),
            "points3d": {k: [round(float(c), 4) for c in v] for k, v in points3d.items()}, "elements": elements}


def _volume_unit(u: str) -> tuple[str, str]:
    return f"{u}³", rf"\mathrm{{{u}}}^3"


def _area_unit(u: str) -> tuple[str, str]:
    return f"{u}²", rf"\mathrm{{{u}}}^2"


def _answer(answer: sympy.Basic, unit: tuple[str, str]) -> tuple[str, str]:
    coef = sympy.simplify(answer / sympy.pi) if answer.has(sympy.pi) else None
    if coef is not None and not coef.is_Rational:
        # plain nsimplify can "find" radicals such as 2**(59/285) in a long rational; keep it rational
        coef = sympy.nsimplify(coef, rational=True)
    node = pi_times(coef) if coef is not None else num(answer)
    _, text, latex = show(node)
    return f"{text} {unit[0]}", rf"{latex}\ {unit[1]}"


def _edge(el_id: str, a: str, b: str, faces: list[str], text: str | None = None, value: Any = None,
          **kw: Any) -> dict[str, Any]:
    e = {"id": el_id, "type": "segment", "from": a, "to": b, "faces": faces, **kw}
    if text is not None:
        e["text"] = text
        e["value"] = value
    return e


# ============================================================================ prisms


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
        unit = pick(rng, UNITS)
        if difficulty in ("easy", "medium"):
            dims = sorted((int(v) for v in rng.choice(np.arange(2, 16), size=3, replace=False)), reverse=True)
            ask = "volume" if difficulty == "easy" else "surface"
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

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        params = super().sample(rng, difficulty)
        if params.get("cube") is not None:  # the counts exist only in the drawing, so the figure is required
            params["image_role"] = "required"
        return params

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
                return _integral(sympy.Rational(ln * w, 100) + 0 * z, z, 0, sympy.Rational(h, 10))
            if params["ask"] == "volume":
                return _integral(sympy.Integer(ln * w) + 0 * z, z, 0, h)
            return sympy.Integer(sum(2 * a * b for a, b in ((ln, w), (ln, h), (w, h))))
        b, h, c, ln = params["b"], params["h"], params["c"], params["l"]
        section = sympy.Rational(b * h, 2)
        if params["ask"] == "volume":
            return _integral(section + 0 * z, z, 0, ln)
        return 2 * section + sum(sympy.Integer(s * ln) for s in (b, h, c))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u = params["unit"]
        if params["ask"] == "capacity":
            return _answer(answer, ("L", r"\mathrm{L}"))
        return _answer(answer, _volume_unit(u) if params["ask"] == "volume" else _area_unit(u))

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
            return Figure(self.figure_kind, _spec(p, els, _BOX_VIEW, (3.0, 2.4)))
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
        return Figure(self.figure_kind, _spec(p, els, _BOX_VIEW, (3.0, 2.4)))


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
    return _spec({**points, **key}, [*elements, *grids, *key_els], _BOX_VIEW, (3.4, 2.4))


# ============================================================================ curved solids


def _round_solid(params: dict[str, Any], *, cone: bool) -> tuple[dict[str, tuple[float, float, float]],
                                                                  list[dict[str, Any]]]:
    """Points and elements shared by the cylinder and the cone (axis vertical)."""
    r = params["r"] if params.get("given", "radius") == "radius" else params["d"] / 2
    h = params["h"] if params.get("h") is not None else math.sqrt(params["slant"] ** 2 - r * r)
    p = {"O": (0, 0, 0), "L0": (-r, 0, 0), "R0": (r, 0, 0), "T": (0, h, 0), "L1": (-r, h, 0), "R1": (r, h, 0)}
    els: list[dict[str, Any]] = [{"id": "base", "type": "circle", "center": "O", "radius": r, "hidden_back": True}]
    if cone:
        els += [{"id": "side_left", "type": "segment", "from": "T", "to": "L0"},
                {"id": "side_right", "type": "segment", "from": "T", "to": "R0"},
                {"id": "point_O", "type": "point", "at": "O"}]
    else:
        els += [{"id": "top", "type": "circle", "center": "T", "radius": r},
                {"id": "side_left", "type": "segment", "from": "L0", "to": "L1"},
                {"id": "side_right", "type": "segment", "from": "R0", "to": "R1"},
                {"id": "point_T", "type": "point", "at": "T"}]
    return p, els


@register
class CylinderVolumeSurface(FigureFamily):
    """easy: volume from the radius; medium: volume from the diameter (either, on a share, a stack of coins);
    hard: total surface area, or the space left in a tube of balls. Exact in π."""

    id = "solid.cylinder.volume_surface"
    domain = "geometry"
    subdomain = "solids"
    grade_band = "8-9"
    figure_kind = "solid"
    malrules = (
        MalRule("volume_with_circumference", "formula_misuse", "uses 2πrh (the curved surface) for the volume"),
        MalRule("diameter_as_radius", "formula_misuse", "uses the diameter where the radius belongs"),
        MalRule("surface_one_end", "misinterpret_question", "counts only one circular end in the surface area"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        unit, h = pick(rng, UNITS), int(rng.integers(2, 31))
        if difficulty in ("easy", "medium") and rng.random() < _COINS_SHARE:
            return self._sample_coins(rng, difficulty)
        if difficulty == "hard" and rng.random() < _TUBE_SPACE_SHARE:
            return {"ask": "space", "given": "tube", **_sample_tube(rng), "unit": unit}
        if difficulty == "medium":
            return {"ask": "volume", "given": "diameter", "d": int(rng.integers(2, 21)) * 2, "h": h, "unit": unit}
        return {"ask": "volume" if difficulty == "easy" else "surface", "given": "radius",
                "r": int(rng.integers(2, 21)), "h": h, "unit": unit}

    @staticmethod
    def _sample_coins(rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        """A stack of identical coins (mm): the pupil counts the coins and scales by the key coin's thickness."""
        while True:
            n, t, r = int(rng.integers(4, 19)), int(pick(rng, _COIN_THICKNESS)), int(rng.integers(8, 23))
            # At least as tall as its radius (its length label clears the key coin), at most four times as tall
            # (so each coin stays thick enough on the page to count).
            if r <= n * t <= 4 * r:
                break
        size = {"r": r} if difficulty == "easy" else {"d": 2 * r}
        return {"ask": "volume", "given": "radius" if difficulty == "easy" else "diameter", **size, "h": n * t,
                "unit": "mm", "coin": t, "coins": n}

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        params = super().sample(rng, difficulty)
        if params.get("coin") is not None or params["given"] == "tube":  # counted in the drawing: required
            params["image_role"] = "required"
        return params

    def valid(self, params: dict[str, Any]) -> bool:
        return params["given"] != "tube" or _tube_valid(params)

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u = params["unit"]
        if params["given"] == "tube":
            return _tube_quantities(u)
        first = (Quantity("radius", "r", "radius", u) if params["given"] == "radius"
                 else Quantity("diameter", "d", "diameter", u))
        if params.get("coin") is not None:
            return [first, Quantity("thickness of each coin", "coin", "key_edge", u),
                    Quantity("coins in the stack", "coins", "coin_lines")]
        return [first, Quantity("height", "h", "height", u)]

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """For a stack of coins: one coin more or fewer (the lines counted, not the coins), the key coin's
        thickness ignored (each coin taken as 1 mm) or its number misread; and the printed radius or diameter.
        For a tube of balls, the readings of the balls and the tube (see ``_tube_readings``)."""
        if params["given"] == "tube":
            return effective_readings(self, params, _tube_readings(params))
        if params.get("coin") is None:
            return super().figure_readings(params)
        t, n = params["coin"], params["coins"]
        size = "r" if params["given"] == "radius" else "d"
        readings = [Reading("coin", "key_edge", "misread_scale", (1,)),
                    Reading("coin", "key_edge", "misread_value", tuple(neighbour_misreads(t))),
                    Reading("coins", "coin_lines", "miscount", (n - 1, n + 1)),
                    Reading(size, "radius" if size == "r" else "diameter", "misread_value",
                            tuple(neighbour_misreads(params[size]))),
                    *radius_as_diameter(params, "radius")]
        return effective_readings(self, params, readings)

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        return radius_as_diameter(params, "radius")

    @staticmethod
    def _height(params: dict[str, Any]) -> E.Node:
        """The height as written: ``h``, or for a stack ``(8 × 2)``: coins counted times the key coin's thickness
        (just the count when the key is read as 1)."""
        if params.get("coin") is None:
            return params["h"]
        n, t = params["coins"], params["coin"]
        return n if t == 1 else ["group", ["*", n, t]]

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        ask = params["ask"]
        ok = {"volume_with_circumference": ask == "volume", "diameter_as_radius": params["given"] == "diameter",
              "surface_one_end": ask == "surface"}
        if mal is not None and not ok[mal]:
            return None
        rule = "mal:" + mal if mal else f"cylinder_{ask}"
        if ask == "space":
            return self._tube_space(params, d, rule)
        h = self._height(params)
        if params["given"] == "radius":
            r: E.Node = params["r"]
        else:
            r = params["d"] if mal == "diameter_as_radius" else ["/", params["d"], 2]
        if ask == "volume":
            if mal == "volume_with_circumference":
                step(d, rule, E.product_of([2, "pi", r, h]))
                c = d.compute(2 * E.sym(r) * E.sym(h))
                step(d, "multiply", pi_times(c), c)
                return d.steps
            step(d, rule, E.product_of(["pi", ["pow", r, 2], h]))
            if isinstance(r, list):
                rv = d.compute(E.sym(r))
                r = num(rv)
                step(d, "halve_diameter", E.product_of(["pi", ["pow", r, 2], h]), rv)
            if isinstance(h, list):  # a stack: its height from the coins counted
                hv = d.compute(E.sym(h))
                h = num(hv)
                step(d, "height_from_coins", E.product_of(["pi", ["pow", r, 2], h]), hv)
            sq = d.compute(E.sym(r) ** 2)
            step(d, "square", E.product_of(["pi", num(sq), h]), sq)
            v = d.compute(sq * E.sym(h))
            step(d, "multiply", pi_times(v), v)
            return d.steps
        ends_k = 1 if mal == "surface_one_end" else 2
        ends: E.Node = E.product_of([ends_k, "pi", ["pow", r, 2]]) if ends_k == 2 else ["*", "pi", ["pow", r, 2]]
        side: E.Node = E.product_of([2, "pi", r, h])
        step(d, rule, ["+", ends, side])
        sq = d.compute(E.sym(r) ** 2)
        ends = E.product_of([ends_k, "pi", num(sq)]) if ends_k == 2 else ["*", "pi", num(sq)]
        step(d, "square", ["+", ends, side], sq)
        e = d.compute(ends_k * sq)
        step(d, "end_areas", ["+", pi_times(e), side], e)
        s = d.compute(2 * E.sym(r) * h)
        step(d, "curved_surface", ["+", pi_times(e), pi_times(s)], s)
        t = d.compute(e + s)
        step(d, "add", pi_times(t), t)
        return d.steps

    @staticmethod
    def _tube_space(params: dict[str, Any], d: Derivation, rule: str) -> list[StepDraft]:
        """``π × (6 ÷ 2)^2 × 26 − 4 × 4/3 × π × (6 ÷ 2)^3``: the tube's volume less the balls' (their radius from
        what they touch, see ``_ball_radius_node``), each radius worked out, then each volume, then the difference.

        The family's mal-rules (2πrh for the volume, the diameter for the radius, one end of a surface) are
        about a single printed radius or surface, so none applies here.
        """
        n, w, h = params["balls"], params["tube_d"], params["tube_h"]
        tube_r: E.Node = ["/", w, 2]
        ball_r = _ball_radius_node(params)
        sides = params["touches"] == "sides"  # then one radius serves both, as a pupil writes it

        def shown(tube: E.Node, balls: E.Node) -> E.Node:
            return ["-", tube, balls]

        def tube_of(r: E.Node) -> E.Node:
            return E.product_of(["pi", ["pow", r, 2], h])

        def balls_of(r: E.Node, power: int = 3) -> E.Node:
            return E.product_of([n, ["frac", 4, 3], "pi", ["pow", r, power]])

        step(d, rule, shown(tube_of(tube_r), balls_of(ball_r)))
        tr = d.compute(sympy.Rational(w, 2))
        tube_r = num(tr)
        if sides:
            ball_r = tube_r
        step(d, "halve_diameter", shown(tube_of(tube_r), balls_of(ball_r)), tr)
        if not sides:
            br = d.compute(E.sym(ball_r))
            ball_r = num(br)
            step(d, "radius_from_tube", shown(tube_of(tube_r), balls_of(ball_r)), br)
        br = E.sym(ball_r)
        sq = d.compute(tr**2)
        tube: E.Node = E.product_of(["pi", num(sq), h])
        step(d, "square", shown(tube, balls_of(ball_r)), sq)
        tv = d.compute(sq * h)
        tube = pi_times(tv)
        step(d, "multiply", shown(tube, balls_of(ball_r)), tv)
        cube = d.compute(br**3)
        step(d, "cube", shown(tube, E.product_of([n, ["frac", 4, 3], "pi", num(cube)])), cube)
        one = d.compute(sympy.Rational(4, 3) * cube)
        step(d, "multiply", shown(tube, E.product_of([n, num(one), "pi"])), one)
        bv = d.compute(n * one)
        step(d, "multiply", shown(tube, pi_times(bv)), bv)
        left = d.compute(tv - bv)
        step(d, "subtract", pi_times(left), left)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Integrate discs (volume) or rings of circumference (surface) along the axis.
        z = sympy.Symbol("z")
        if params["given"] == "tube":  # the tube's discs, less each ball's discs π(ρ² − z²)
            rho = _ball_radius(params)
            tube = _exact_integral(sympy.Rational(params["tube_d"], 2) ** 2 + 0 * z, z, 0, params["tube_h"])
            return sympy.pi * (tube - params["balls"] * _exact_integral(rho**2 - z**2, z, -rho, rho))
        r = params["r"] if params["given"] == "radius" else sympy.Rational(params["d"], 2)
        # π stays outside the integrals: polynomials over the rationals integrate several times faster.
        if params.get("coin") is not None:  # a stack: the coins counted times one disc of the key coin's thickness
            return sympy.pi * params["coins"] * _exact_integral(r**2 + 0 * z, z, 0, params["coin"])
        if params["ask"] == "volume":
            return sympy.pi * _exact_integral(r**2 + 0 * z, z, 0, params["h"])
        return 2 * sympy.pi * r**2 + sympy.pi * _exact_integral(2 * r + 0 * z, z, 0, params["h"])

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u = params["unit"]
        return _answer(answer, _area_unit(u) if params["ask"] == "surface" else _volume_unit(u))

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {"facts": [f"{q.name} {length_text(params[q.param], u)}" for q in self.quantities(params)],
                "coins": params.get("coin") is not None, "tube": params["given"] == "tube"}

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        if params["given"] == "tube":
            return Figure(self.figure_kind, _tube_spec(params, float(_ball_radius(params))))
        p, els = _round_solid(params, cone=False)
        if params.get("coin") is not None:
            return Figure(self.figure_kind, _coin_stack_spec(params, p, els))
        if params["given"] == "radius":
            els.append({"id": "radius", "type": "segment", "from": "T", "to": "R1", "text": length_text(params["r"], u),
                        "value": params["r"], "dir": [0, 1]})
        else:
            els.append({"id": "diameter", "type": "segment", "from": "L1", "to": "R1",
                        "text": length_text(params["d"], u), "value": params["d"], "dir": [0, 1]})
        els.append({"id": "height", "type": "segment", "from": "R0", "to": "R1", "text": length_text(params["h"], u),
                    "value": params["h"], "dir": [1, 0]})
        return Figure(self.figure_kind, _spec(p, els, _CURVED_VIEW, (2.6, 2.6)))


def _coin_stack_spec(params: dict[str, Any], points: dict[str, tuple[float, float, float]],
                     elements: list[dict[str, Any]]) -> dict[str, Any]:
    """The cylinder ruled into its coins, its radius or diameter labelled, and one key coin beside it with its
    thickness labelled (no height is printed: it is the coins counted times the key).

    The key coin's faces are tinted polygons (its top ellipse and its rim band), like the key cube's.
    """
    t, u = params["coin"], params["unit"]
    r = params["r"] if params["given"] == "radius" else params["d"] / 2
    # The length is written just past the rim, level with the top: a stack drawn beside its key coin is too
    # narrow for the label to sit on the top face without crossing its back edge.
    if params["given"] == "radius":
        size = {"id": "radius", "type": "segment", "from": "T", "to": "R1", "text": length_text(params["r"], u),
                "value": params["r"], "dir": [1, 0], "text_at": 1.0}
    else:
        size = {"id": "diameter", "type": "segment", "from": "L1", "to": "R1", "text": length_text(params["d"], u),
                "value": params["d"], "dir": [1, 0], "text_at": 1.0}
    lines = {"id": "coin_lines", "type": "disc_lines", "center": "O", "top": "T", "radius": r,
             "count": params["coins"]}
    x0 = 2.6 * r  # the key coin's centre: clear of the stack by 0.6 r
    ring = [(x0 + r * math.cos(math.radians(a)), math.sin(math.radians(a)) * r) for a in range(0, 360, 15)]
    key = {f"KT{i}": (x, t, z) for i, (x, z) in enumerate(ring)}
    key.update({f"KB{i}": (x, 0, z) for i, (x, z) in enumerate(ring) if z >= -1e-9})  # the rim's near half
    front = [i for i, (_, z) in enumerate(ring) if z >= -1e-9]  # 0..180 degrees: x from right to left
    key.update({"KC": (x0, 0, r)})  # the caption goes under the coin, clear of the stack's label
    key_els: list[dict[str, Any]] = [
        {"id": "key_rim", "type": "polygon", "points": [f"KB{i}" for i in front] + [f"KT{i}" for i in front[::-1]],
         "tint": "side"},
        {"id": "key_top", "type": "polygon", "points": [f"KT{i}" for i in range(len(ring))], "tint": "top"},
        {"id": "key_edge", "type": "segment", "from": "KB0", "to": "KT0", "text": length_text(t, u), "value": t,
         "dir": [1, 0]},
        {"id": "key_caption", "type": "text", "at": "KC", "text": "1 coin", "dir": [0, -1]},
    ]
    return _spec({**points, **key}, [*elements, lines, size, *key_els], _CURVED_VIEW, (3.6, 2.2))


@register
class ConeVolume(FigureFamily):
    """easy: radius and height (on a share, counted on squared paper with a key); medium: diameter and height;
    hard: radius and slant height (Pythagoras first)."""

    id = "solid.cone.volume"
    domain = "geometry"
    subdomain = "solids"
    grade_band = "8-10"
    figure_kind = "solid"
    malrules = (
        MalRule("cone_without_third", "formula_misuse", "forgets the ⅓ (uses the cylinder's volume)"),
        MalRule("slant_as_height", "invalid_assumption", "uses the slant height as the perpendicular height"),
        MalRule("diameter_as_radius", "formula_misuse", "uses the diameter where the radius belongs"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        unit = pick(rng, UNITS)
        if difficulty == "hard":
            r, h, slant = pick(rng, ((3, 4, 5), (6, 8, 10), (5, 12, 13), (9, 12, 15), (8, 15, 17), (12, 16, 20),
                                      (4, 3, 5), (8, 6, 10), (12, 5, 13), (12, 9, 15), (15, 8, 17)))
            k = int(rng.integers(1, 11))
            if rng.integers(2):
                return {"given": "diameter", "d": 2 * r * k, "h": None, "slant": slant * k, "unit": unit}
            return {"given": "radius", "r": r * k, "h": None, "slant": slant * k, "unit": unit}
        h = int(rng.integers(2, 31))
        if difficulty == "medium":
            return {"given": "diameter", "d": int(rng.integers(2, 21)) * 2, "h": h, "slant": None, "unit": unit}
        if rng.random() < _GRID_SHARE:
            # On squared paper: 2-6 squares of radius, a height of 3-9 squares and taller than the radius.
            k, nr = int(pick(rng, GRID_STEPS)), int(rng.integers(2, 7))
            nh = int(rng.integers(max(3, nr), 10))
            return {"given": "radius", "r": nr * k, "h": nh * k, "slant": None, "unit": unit, "grid": k}
        return {"given": "radius", "r": int(rng.integers(2, 21)), "h": h, "slant": None, "unit": unit}

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        params = super().sample(rng, difficulty)
        if params.get("grid"):  # the lengths exist only as squares in the drawing, so the figure is required
            params["image_role"] = "required"
        return params

    def valid(self, params: dict[str, Any]) -> bool:
        r = params["r"] if params["given"] == "radius" else params["d"] / 2
        return params["slant"] is None or params["slant"] > r

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u, grid = params["unit"], bool(params.get("grid"))
        first = (Quantity("radius", "r", "radius", u, on_grid=grid) if params["given"] == "radius"
                 else Quantity("diameter", "d", "diameter", u))
        second = (Quantity("height", "h", "height", u, on_grid=grid) if params["slant"] is None
                  else Quantity("slant height", "slant", "slant", u))
        return [first, second]

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """The radius taken for a diameter. (The slant edge taken for the height would write exactly the
        numbers of the ``slant_as_height`` mal-rule; one working must carry one label, so it is left to it.)
        On squared paper the radius is counted, not labelled: no label to take for a diameter."""
        if params.get("grid"):
            return ()
        return radius_as_diameter(params, "radius")

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        ok = {"cone_without_third": True, "slant_as_height": params["slant"] is not None,
              "diameter_as_radius": params["given"] == "diameter"}
        if mal is not None and not ok[mal]:
            return None
        rule = "mal:" + mal if mal else "cone_volume"
        third: list[E.Node] = [] if mal == "cone_without_third" else [["frac", 1, 3]]
        if params["given"] == "radius":
            r: E.Node = params["r"]
        else:
            r = params["d"] if mal == "diameter_as_radius" else ["/", params["d"], 2]
        slant = params["slant"]
        if slant is None or mal == "slant_as_height":
            h: E.Node = params["h"] if slant is None else slant
        else:
            h = ["sqrt", ["-", ["pow", slant, 2], ["pow", r, 2]]]

        def shown() -> E.Node:
            return E.product_of([*third, "pi", ["pow", r, 2], h])

        step(d, rule, shown())
        if isinstance(h, list):
            s1 = d.compute(sympy.Integer(slant) ** 2)
            h = ["sqrt", ["-", num(s1), ["pow", r, 2]]]
            step(d, "square", shown(), s1)
            s2 = d.compute(value_of_leaf(r) ** 2)
            h = ["sqrt", ["-", num(s1), num(s2)]]
            step(d, "square", shown(), s2)
            diff = d.compute(s1 - s2)
            h = ["sqrt", num(diff)]
            step(d, "subtract", shown(), diff)
            root = sympy.sqrt(diff)
            if not root.is_Rational:
                return d.steps
            hv = d.compute(root)
            h = num(hv)
            step(d, "square_root", shown(), hv)
        if isinstance(r, list):
            rv = d.compute(E.sym(r))
            r = num(rv)
            step(d, "halve_diameter", shown(), rv)
        sq = d.compute(E.sym(r) ** 2)
        step(d, "square", E.product_of([*third, "pi", num(sq), h]), sq)
        prod = d.compute(sq * value_of_leaf(h))
        step(d, "multiply", E.product_of([*third, "pi", num(prod)]) if third else pi_times(prod), prod)
        if third:
            v = d.compute(prod / 3)
            step(d, "divide_by_3", pi_times(v), v)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Stack discs whose radius shrinks linearly to the apex: ∫ π (r(1 − z/h))² dz.
        z = sympy.Symbol("z")
        r = params["r"] if params["given"] == "radius" else sympy.Rational(params["d"], 2)
        h = params["h"] if params["slant"] is None else sympy.sqrt(params["slant"] ** 2 - r**2)
        return sympy.pi * _exact_integral((r * (1 - z / h)) ** 2, z, 0, h)  # π outside: a polynomial

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return _answer(answer, _volume_unit(params["unit"]))

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {"facts": [f"{q.name} {length_text(params[q.param], u)}" for q in self.quantities(params)],
                "grid": params.get("grid")}

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        p, els = _round_solid(params, cone=True)
        if params.get("grid"):
            return Figure(self.figure_kind, _cone_on_grid_spec(params, p, els))
        if params["given"] == "radius":
            els.append({"id": "radius", "type": "segment", "from": "O", "to": "R0", "text": length_text(params["r"], u),
                        "value": params["r"], "dir": [0, -1]})
        else:
            els.append({"id": "diameter", "type": "segment", "from": "L0", "to": "R0",
                        "text": length_text(params["d"], u), "value": params["d"], "dir": [0, -1], "dashed": False})
        height = {"id": "height", "type": "segment", "from": "T", "to": "O", "dashed": True, "width": 0.8}
        if params["slant"] is None:
            height.update({"text": length_text(params["h"], u), "value": params["h"], "dir": [1, 0], "text_at": 0.4})
        else:
            els.append({"id": "slant", "type": "segment", "from": "T", "to": "R0",
                        "text": length_text(params["slant"], u), "value": params["slant"]})
        els += [height, {"id": "right_O", "type": "right_angle", "at": "O", "arms": ["T", "R0"]}]
        return Figure(self.figure_kind, _spec(p, els, _CURVED_VIEW, (2.6, 2.6)))


def _cone_on_grid_spec(params: dict[str, Any], points: dict[str, tuple[float, float, float]],
                       elements: list[dict[str, Any]]) -> dict[str, Any]:
    """A cone on squared paper: its radius and height run along grid lines from the centre of its base
    and are counted in squares (no length printed); the key under the drawing says what a square is."""
    k = params["grid"]
    radius = counted({"id": "radius", "type": "segment", "from": "O", "to": "R0", "value": params["r"]}, k)
    height = counted({"id": "height", "type": "segment", "from": "T", "to": "O", "dashed": True, "width": 0.8,
                      "value": params["h"]}, k)
    right = {"id": "right_O", "type": "right_angle", "at": "O", "arms": ["T", "R0"]}
    across, up = 2 * params["r"] / k, params["h"] / k
    square = min(0.28, 2.2 / across, 2.1 / up)  # inches per square: about squared paper's 5-7 mm
    size = (round(max(2.2, across * square + 1.0), 2), round(up * square + 1.1, 2))
    return _spec(points, [*grid_elements(params, "O"), *elements, radius, height, right], _TRUE_HEIGHT_VIEW, size)


def value_of_leaf(node: E.Node) -> sympy.Basic:
    """The number a displayed leaf stands for (a root leaf keeps its exact value)."""
    return show(node)[0]


@register
class SphereVolumeSurface(FigureFamily):
    """easy: surface area; medium: volume (on a share, of the balls packed in a tube); hard: a hemisphere's
    volume or total surface area. Easy and medium spheres are on a share drawn on squared paper with a key."""

    id = "solid.sphere.volume_surface"
    domain = "geometry"
    subdomain = "solids"
    grade_band = "9-10"
    figure_kind = "solid"
    malrules = (
        MalRule("sphere_surface_as_circle", "incorrect_fact", "uses πr² (a circle's area) for the sphere's surface"),
        MalRule("volume_with_r_squared", "formula_misuse", "squares the radius in the volume instead of cubing it"),
        MalRule("hemisphere_without_base", "misinterpret_question", "leaves the flat circular face out"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        unit = pick(rng, UNITS)
        if difficulty in ("easy", "medium"):
            ask = "surface" if difficulty == "easy" else "volume"
            if ask == "volume" and rng.random() < _TUBE_SHARE:
                return {"shape": "sphere", "ask": "volume", "given": "tube", **_sample_tube(rng), "unit": unit}
            if rng.random() < _SPHERE_GRID_SHARE:
                # On squared paper: the radius runs 2-8 squares along a grid line from the centre.
                k = int(pick(rng, GRID_STEPS))
                return {"shape": "sphere", "ask": ask, "given": "radius", "r": int(rng.integers(2, 9)) * k,
                        "unit": unit, "turn": pick(rng, (0, 180)), "grid": k}
            return {"shape": "sphere", "ask": ask, "given": "radius", "r": int(rng.integers(2, 31)),
                    "unit": unit, "turn": pick(rng, _SPHERE_TURNS)}
        ask = pick(rng, ("volume", "surface"))
        if rng.integers(2):
            return {"shape": "hemisphere", "ask": ask, "given": "radius", "r": int(rng.integers(2, 81)),
                    "unit": unit}
        return {"shape": "hemisphere", "ask": ask, "given": "diameter", "d": int(rng.integers(2, 81)) * 2,
                "unit": unit}

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        params = super().sample(rng, difficulty)
        if params.get("grid") or params["given"] == "tube":  # counted in the drawing, so the figure is required
            params["image_role"] = "required"
        return params

    def valid(self, params: dict[str, Any]) -> bool:
        return params["given"] != "tube" or _tube_valid(params)

    def _r(self, params: dict[str, Any]) -> sympy.Rational:
        if params["given"] == "tube":
            return _ball_radius(params)
        return sympy.Integer(params["r"]) if params["given"] == "radius" else sympy.Rational(params["d"], 2)

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u = params["unit"]
        if params["given"] == "tube":
            return _tube_quantities(u)
        if params["given"] == "radius":
            return [Quantity("radius", "r", "radius", u, on_grid=bool(params.get("grid")))]
        return [Quantity("diameter", "d", "diameter", u)]

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        if params.get("grid"):  # on squared paper the radius is counted, not labelled: no label to misread
            return ()
        return radius_as_diameter(params, "radius")

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """For a tube of balls: what the balls touch misread (the sides taken for both ends, so the height is
        shared among the balls' diameters, or the other way round), one ball more or fewer, a printed length
        misread or the two labels swapped; otherwise the labelled or counted radius."""
        if params["given"] != "tube":
            return super().figure_readings(params)
        return effective_readings(self, params, _tube_readings(params))

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        ask, shape = params["ask"], params["shape"]
        ok = {"sphere_surface_as_circle": ask == "surface" and shape == "sphere",
              "volume_with_r_squared": ask == "volume", "hemisphere_without_base": shape == "hemisphere"
              and ask == "surface"}
        if mal is not None and not ok[mal]:
            return None
        rule = "mal:" + mal if mal else f"{shape}_{ask}"
        if params["given"] == "tube":
            return self._tube_volume(params, d, rule, mal)
        r: E.Node = params["r"] if params["given"] == "radius" else ["/", params["d"], 2]
        if ask == "volume":
            lead: list[E.Node] = [["frac", 1, 2], ["frac", 4, 3]] if shape == "hemisphere" else [["frac", 4, 3]]
            power = 2 if mal == "volume_with_r_squared" else 3
            step(d, rule, E.product_of([*lead, "pi", ["pow", r, power]]))
            if isinstance(r, list):
                rv = d.compute(E.sym(r))
                r = num(rv)
                step(d, "halve_diameter", E.product_of([*lead, "pi", ["pow", r, power]]), rv)
            cube = d.compute(E.sym(r) ** power)
            step(d, "cube" if power == 3 else "square", E.product_of([*lead, "pi", num(cube)]), cube)
            if len(lead) == 2:
                k = d.compute(sympy.Rational(2, 3))
                lead = [E.leaf(k)]
                step(d, "multiply_fractions", E.product_of([*lead, "pi", num(cube)]), k)
            v = d.compute(E.sym(lead[0]) * cube)
            step(d, "multiply", pi_times(v), v)
            return d.steps
        if shape == "sphere":
            four: list[E.Node] = [] if mal == "sphere_surface_as_circle" else [4]
            step(d, rule, E.product_of([*four, "pi", ["pow", r, 2]]))
            sq = d.compute(E.sym(r) ** 2)
            if four:
                step(d, "square", E.product_of([4, "pi", num(sq)]), sq)
                s = d.compute(4 * sq)
            else:
                s = sq
                step(d, "square", ["*", "pi", num(sq)], sq)
            step(d, "multiply" if four else "simplify", pi_times(s), s if four else None)
            return d.steps
        base = mal != "hemisphere_without_base"
        curved: E.Node = E.product_of([2, "pi", ["pow", r, 2]])
        flat: E.Node = ["*", "pi", ["pow", r, 2]]

        def shown(c: E.Node, f: E.Node) -> E.Node:
            return ["+", c, f] if base else c

        step(d, rule, shown(curved, flat))
        rv = E.sym(r)
        if isinstance(r, list):
            rv = d.compute(rv)
            r = num(rv)
            curved, flat = E.product_of([2, "pi", ["pow", r, 2]]), ["*", "pi", ["pow", r, 2]]
            step(d, "halve_diameter", shown(curved, flat), rv)
        sq = d.compute(rv**2)
        curved, flat = E.product_of([2, "pi", num(sq)]), pi_times(sq)
        step(d, "square", shown(curved, flat), sq)
        c = d.compute(2 * sq)
        step(d, "multiply", shown(pi_times(c), flat), c)
        if base:
            t = d.compute(c + sq)
            step(d, "add", pi_times(t), t)
        return d.steps

    @staticmethod
    def _tube_volume(params: dict[str, Any], d: Derivation, rule: str, mal: str | None) -> list[StepDraft]:
        """``4 × 4/3 × π × (12 ÷ 2)^3``: the balls counted times one ball's volume. Its radius is half the tube's
        width when the balls touch the curved side, or the height shared among the balls' diameters,
        ``(40 ÷ (2 × 4))``, when they touch both ends."""
        n, r = params["balls"], _ball_radius_node(params)
        power = 2 if mal == "volume_with_r_squared" else 3

        def shown(radius_term: E.Node) -> E.Node:
            return E.product_of([n, ["frac", 4, 3], "pi", radius_term])

        step(d, rule, shown(["pow", r, power]))
        rv = d.compute(E.sym(r))
        step(d, "radius_from_tube", shown(["pow", num(rv), power]), rv)
        pw = d.compute(rv**power)
        step(d, "cube" if power == 3 else "square", shown(num(pw)), pw)
        one = d.compute(sympy.Rational(4, 3) * pw)
        step(d, "multiply", E.product_of([n, num(one), "pi"]), one)
        total = d.compute(n * one)
        step(d, "multiply", pi_times(total), total)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Volume: integrate disc areas π(r² − z²); surface: Archimedes' hat-box, a zone of height H has
        # the area 2πr·H of the cylinder around it (so neither route is the 4πr² or 4/3πr³ formula).
        r, z = self._r(params), sympy.Symbol("z")
        lo = 0 if params["shape"] == "hemisphere" else -r
        if params["given"] == "tube":  # one ball's discs, once per ball
            return params["balls"] * sympy.pi * _integral(r**2 - z**2, z, lo, r)
        if params["ask"] == "volume":
            return sympy.pi * _integral(r**2 - z**2, z, lo, r)  # π outside: a polynomial over the rationals
        curved = 2 * sympy.pi * r * (r - lo)
        return curved + (sympy.pi * r**2 if params["shape"] == "hemisphere" else 0)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u = params["unit"]
        return _answer(answer, _volume_unit(u) if params["ask"] == "volume" else _area_unit(u))

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        q = self.quantities(params)[0]
        return {"fact": f"{q.name} {length_text(params[q.param], params['unit'])}", "tube": params["given"] == "tube",
                "grid": params.get("grid")}

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        if params["given"] == "tube":
            return Figure(self.figure_kind, _tube_spec(params, float(self._r(params))))
        r = float(self._r(params))
        t = math.radians(params.get("turn", 0))
        p = {"O": (0, 0, 0), "R": (r * math.cos(t), 0, r * math.sin(t)), "L": (-r, 0, 0)}
        els: list[dict[str, Any]] = [{"id": "point_O", "type": "point", "at": "O"}]
        if params["shape"] == "sphere":
            radius = {"id": "radius", "type": "segment", "from": "O", "to": "R", "text": length_text(params["r"], u),
                      "value": params["r"], "dir": [0, 1]}
            els += [{"id": "outline", "type": "circle", "center": "O", "radius": r, "plane": "screen"},
                    {"id": "equator", "type": "circle", "center": "O", "radius": r, "hidden_back": True}]
            if params.get("grid"):  # the radius runs along a grid line and is counted in squares
                k = params["grid"]
                square = min(0.28, 2.0 / (2 * r / k))
                size = (round(max(2.2, 2 * r / k * square + 1.0), 2), round(2 * r / k * square + 1.1, 2))
                return Figure(self.figure_kind, _spec(p, [*grid_elements(params, "O"), *els, counted(radius, k)],
                                                      _TRUE_HEIGHT_VIEW, size))
            return Figure(self.figure_kind, _spec(p, [*els, radius], _CURVED_VIEW, (2.4, 2.4)))
        p["R"] = (r, 0, 0)
        els += [{"id": "dome", "type": "arc", "center": "O", "radius": r, "plane": "screen", "start": 0, "end": 180},
                {"id": "base", "type": "circle", "center": "O", "radius": r}]
        if params["given"] == "radius":
            els.append({"id": "radius", "type": "segment", "from": "O", "to": "R", "text": length_text(params["r"], u),
                        "value": params["r"], "dir": [0, 1]})
        else:
            els.append({"id": "diameter", "type": "segment", "from": "L", "to": "R",
                        "text": length_text(params["d"], u), "value": params["d"], "dir": [0, 1]})
        return Figure(self.figure_kind, _spec(p, els, _CURVED_VIEW, (2.6, 2.0)))


# ---------------------------------------------------------------------------- balls packed in a tube (shared)


def _sample_tube(rng: np.random.Generator) -> dict[str, Any]:
    """3-6 equal balls stacked in a tube, each touching the next. Either they touch its curved side and stop
    short of the lid (by a quarter to under half a ball), or they touch both ends and the tube is wider (by a
    quarter to under half a ball): the drawing shows which, and so which printed length gives their size."""
    n, r = int(rng.integers(3, 7)), int(rng.integers(2, 11))
    spare = int(rng.integers(math.ceil(r / 2), r))
    if rng.integers(2):
        return {"balls": n, "touches": "sides", "tube_d": 2 * r, "tube_h": 2 * n * r + spare}
    return {"balls": n, "touches": "ends", "tube_d": 2 * r + spare, "tube_h": 2 * n * r}


def _tube_valid(params: dict[str, Any]) -> bool:
    # Not whether the balls fit: a misread of what they touch gives balls a little too big for the tube,
    # which the pupil does not check.
    return params["balls"] >= 1 and params["tube_d"] > 0 and params["tube_h"] > 0


def _ball_radius(params: dict[str, Any]) -> sympy.Rational:
    """Half the tube's width (the balls touch its curved side) or its height over 2 × balls (both ends)."""
    if params["touches"] == "sides":
        return sympy.Rational(params["tube_d"], 2)
    return sympy.Rational(params["tube_h"], 2 * params["balls"])


def _ball_radius_node(params: dict[str, Any]) -> E.Node:
    """The ball's radius as written: ``(12 ÷ 2)`` or ``(40 ÷ (2 × 4))``."""
    if params["touches"] == "sides":
        return ["/", params["tube_d"], 2]
    return ["/", params["tube_h"], ["*", 2, params["balls"]]]


def _tube_quantities(unit: str) -> list[Quantity]:
    return [Quantity("width of the tube", "tube_d", "tube_diameter", unit),
            Quantity("height of the tube", "tube_h", "tube_height", unit),
            Quantity("balls in the tube", "balls", "balls")]


def _tube_readings(params: dict[str, Any]) -> list[Reading]:
    """What the balls touch misread (the curved side taken for both ends, so the height is shared among the
    balls' diameters, or the other way round), one ball more or fewer, a printed length misread, or the width
    and height labels swapped. Unfiltered: pass them through ``effective_readings``."""
    n, w, h = params["balls"], params["tube_d"], params["tube_h"]
    other = "ends" if params["touches"] == "sides" else "sides"
    return [Reading("touches", "balls", "misread_relation", (other,)),
            Reading("balls", "balls", "miscount", tuple(m for m in (n - 1, n + 1) if m >= 1)),
            Reading("tube_d", "tube_diameter", "misread_value", tuple(neighbour_misreads(w))),
            Reading("tube_h", "tube_height", "misread_value", tuple(neighbour_misreads(h))),
            Reading("tube_d", "tube_diameter", "misread_label", ((h, w),), also=("tube_h",))]


def _tube_spec(params: dict[str, Any], r: float) -> dict[str, Any]:
    """A tube (an upright cylinder drawn with true heights) holding its balls, its width and height labelled.

    The balls are drawn touching what they touch: the curved side (a gap above the top ball) or the base
    and the lid's centre (a gap beside them); which one is what the pupil must see.
    """
    u = params["unit"]
    p, els = _round_solid({"r": params["tube_d"] / 2, "h": params["tube_h"]}, cone=False)
    els = [e for e in els if e["id"] != "point_T"]  # no centre dot on the lid: it would read as a contact mark
    els += [{"id": "balls", "type": "ball_stack", "base": "O", "radius": round(r, 4), "count": params["balls"],
             "touches": params["touches"]},
            # The width is written level with the lid, left of its rim (above the lid it would sit on the ellipse's
            # far half), the height on the right.
            {"id": "tube_diameter", "type": "segment", "from": "R1", "to": "L1",
             "text": length_text(params["tube_d"], u), "value": params["tube_d"], "dir": [-1, 0], "text_at": 1.0},
            {"id": "tube_height", "type": "segment", "from": "R0", "to": "R1", "text": length_text(params["tube_h"], u),
             "value": params["tube_h"], "dir": [1, 0]}]
    return _spec(p, els, _TRUE_HEIGHT_VIEW, (2.2, 3.0))
