"""Areas and perimeters of rectangles, triangles, trapezia and compound shapes."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._display import num, step
from synth.generators._figure import (
    GRID_SHARE,
    GRID_STEPS,
    TRIPLES,
    UNITS,
    FigureFamily,
    Quantity,
    area_unit,
    counted,
    figure_spec,
    grid_elements,
    grid_size,
    length_text,
    min_angle,
    neighbour_misreads,
    pick,
    tri_points,
    vertex_labels,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure


def _triple(rng: np.random.Generator, top: int) -> tuple[int, int, int]:
    a, b, c = pick(rng, TRIPLES[:3])
    k = int(rng.integers(1, max(2, top // c + 1)))
    return (a * k, b * k, c * k) if rng.integers(2) else (b * k, a * k, c * k)


# What each difficulty draws: a rectangle's area or a triangle's perimeter, a triangle's or trapezium's area from
# slanted sides, or an L-shape's area.
_LEVELS = {"easy": "rectangle_or_perimeter", "medium": "slanted", "hard": "l_shape"}


@register
class PolygonAreaPerimeter(FigureFamily):
    """easy: perimeters; medium: triangle or trapezium area (a slant side given too); hard: an L-shaped area."""

    id = "geometry.polygon.area_perimeter"
    domain = "geometry"
    subdomain = "mensuration"
    grade_band = "5-7"
    malrules = (
        MalRule("area_without_half", "formula_misuse", "leaves out the ½ in the area formula"),
        MalRule("slant_for_height", "invalid_assumption", "uses the slanted side as the perpendicular height"),
        MalRule("perimeter_two_sides", "formula_misuse", "adds one length and one width instead of all four sides"),
        MalRule("composite_overlap", "invalid_inference", "counts the corner of the L-shape twice"),
        MalRule("square_metre_as_100_cm2", "unit_conversion", "converts cm² to m² dividing by 100, not 10 000"),
        MalRule("square_metres_multiplied", "unit_conversion", "multiplies by 10 000 to turn cm² into m²"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        unit = pick(rng, UNITS)
        samplers = {"rectangle_or_perimeter": self._sample_rectangle_or_perimeter, "slanted": self._sample_slanted,
                    "l_shape": self._sample_l_shape}
        return samplers[_LEVELS[difficulty]](rng, unit)

    @staticmethod
    def _sample_rectangle_or_perimeter(rng: np.random.Generator, unit: str) -> dict[str, Any]:
        if rng.integers(2):
            length, width = sorted((int(rng.integers(2, 25)), int(rng.integers(2, 25))), reverse=True)
            if rng.random() < 0.3:  # a rug measured in cm, its area asked in m²: 1 m² is 10 000 cm²
                return {"shape": "rectangle", "l": 10 * length + 50, "w": 10 * width + 50, "unit": "cm",
                        "ask": "area_m2"}
            if rng.random() < GRID_SHARE:  # drawn on squared paper: sides counted in squares
                k = pick(rng, GRID_STEPS)
                n_l, n_w = sorted((int(rng.integers(3, 11)), int(rng.integers(2, 8))), reverse=True)
                return {"shape": "rectangle", "l": n_l * k, "w": n_w * k, "unit": unit, "grid": k}
            return {"shape": "rectangle", "l": length, "w": width, "unit": unit}
        if rng.random() < 0.5:  # isosceles: the tick marks, not a label, give the third side
            while True:
                leg, base = int(rng.integers(4, 20)), int(rng.integers(3, 20))
                if base != leg and base < 2 * leg - 1 and min_angle([leg, leg, base]) >= 25:
                    return {"shape": "triangle_perimeter", "a": leg, "b": leg, "c": base, "unit": unit,
                            "isosceles": True}
        while True:
            a, b, c = (int(v) for v in rng.integers(3, 20, size=3))
            if max(a, b, c) < (a + b + c) - max(a, b, c) - 1:
                return {"shape": "triangle_perimeter", "a": a, "b": b, "c": c, "unit": unit}

    @staticmethod
    def _sample_slanted(rng: np.random.Generator, unit: str) -> dict[str, Any]:
        o, h, s = _triple(rng, 40)
        if rng.integers(2):
            return {"shape": "triangle", "b": o + int(rng.integers(2, 12)), "h": h, "o": o, "s": s, "unit": unit}
        top = int(rng.integers(2, 16))
        return {"shape": "trapezium", "a": top, "b": top + o + int(rng.integers(0, 8)), "h": h, "o": o, "s": s,
                "unit": unit}

    @staticmethod
    def _sample_l_shape(rng: np.random.Generator, unit: str) -> dict[str, Any]:
        if rng.random() < GRID_SHARE:
            k = pick(rng, GRID_STEPS)
            width, height = int(rng.integers(5, 11)), int(rng.integers(5, 9))
            return {"shape": "l_shape", "W": width * k, "H": height * k, "a": int(rng.integers(2, width - 1)) * k,
                    "c": int(rng.integers(2, height - 1)) * k, "unit": unit, "grid": k}
        width, height = int(rng.integers(6, 20)), int(rng.integers(6, 20))
        return {"shape": "l_shape", "W": width, "H": height, "a": int(rng.integers(2, width - 2)),
                "c": int(rng.integers(2, height - 2)), "unit": unit}

    def valid(self, params: dict[str, Any]) -> bool:
        shape = params["shape"]
        if shape == "triangle_perimeter":
            a, b, c = params["a"], params["b"], params["c"]
            return max(a, b, c) < a + b + c - max(a, b, c)
        if shape == "l_shape":
            return params["a"] < params["W"] and params["c"] < params["H"]
        if shape in ("triangle", "trapezium"):
            return params["s"] > params["h"]
        return True

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        stated = self._quantities(params)
        return [replace(q, on_grid=True) for q in stated] if params.get("grid") else stated

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        if params["image_role"] != "required" or not params.get("isosceles"):
            return super().figure_readings(params)
        # Isosceles: BC's label also gives CA (equal tick marks), so a misread of it changes both sides.
        leg, base = params["a"], params["c"]
        readings = (
            Reading("a", "side_BC", "misread_value", tuple((m, m) for m in neighbour_misreads(leg)), also=("b",)),
            Reading("c", "side_AB", "misread_value", tuple(neighbour_misreads(base))),
            # The tick marks read as pairing CA with the base AB rather than with BC. (Base and leg swapped
            # would be a label misread, but the perimeter adds the same three lengths: one answer, two labels.)
            Reading("b", "tick_CA", "misread_relation", (base,)),
        )
        return effective_readings(self, params, readings)

    def _quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u = params["unit"]
        return {
            "rectangle": [Quantity("length", "l", "side_AB", u), Quantity("width", "w", "side_BC", u)],
            "triangle_perimeter": [Quantity("AB", "c", "side_AB", u), Quantity("BC", "a", "side_BC", u),
                                   Quantity("CA", "b", "side_CA", u)],
            "triangle": [Quantity("base", "b", "side_AB", u), Quantity("height", "h", "height_CH", u),
                         Quantity("slanted side", "s", "side_CA", u)],
            "trapezium": [Quantity("top side", "a", "side_DC", u), Quantity("bottom side", "b", "side_AB", u),
                          Quantity("height", "h", "height_DH", u), Quantity("slanted side", "s", "side_AD", u)],
            "l_shape": [Quantity("total width", "W", "side_AB", u), Quantity("total height", "H", "side_FA", u),
                        Quantity("top width", "a", "side_EF", u), Quantity("right height", "c", "side_BC", u)],
        }[params["shape"]]

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        shape = params["shape"]
        kind = "rug" if params.get("ask") == "area_m2" else shape  # a rectangle's area asked in m²
        applies = {"area_without_half": ("triangle", "trapezium"), "slant_for_height": ("triangle", "trapezium"),
                   "perimeter_two_sides": ("rectangle",), "composite_overlap": ("l_shape",),
                   "square_metre_as_100_cm2": ("rug",), "square_metres_multiplied": ("rug",)}
        if mal is not None and kind not in applies[mal]:
            return None
        rule = "mal:" + mal if mal else shape
        if params.get("ask") == "area_m2":
            return self._area_in_square_metres(params, d, rule, mal)
        if shape == "rectangle":
            length, width = params["l"], params["w"]
            if mal:
                step(d, rule, ["+", length, width])
                s = d.compute(sympy.Integer(length + width))
                step(d, "add", num(s), s)
                return d.steps
            step(d, "rectangle_perimeter", ["*", 2, ["group", ["+", length, width]]])
            s = d.compute(sympy.Integer(length + width))
            step(d, "add", ["*", 2, num(s)], s)
            p = d.compute(2 * s)
            step(d, "multiply", num(p), p)
            return d.steps
        if shape == "triangle_perimeter":
            a, b, c = params["c"], params["a"], params["b"]
            step(d, "triangle_perimeter", ["+", ["+", a, b], c])
            s = d.compute(sympy.Integer(a + b))
            step(d, "add", ["+", num(s), c], s)
            p = d.compute(s + c)
            step(d, "add", num(p), p)
            return d.steps
        if shape in ("triangle", "trapezium"):
            h = params["s"] if mal == "slant_for_height" else params["h"]
            half: list[E.Node] = [] if mal == "area_without_half" else [["frac", 1, 2]]
            if shape == "triangle":
                base: E.Node = params["b"]
            else:
                base = ["group", ["+", params["a"], params["b"]]]
            step(d, rule, E.product_of([*half, base, h]))
            if shape == "trapezium":
                s = d.compute(sympy.Integer(params["a"] + params["b"]))
                base = num(s)
                step(d, "add", E.product_of([*half, base, h]), s)
            if half:
                m = d.compute(E.sym(base) / 2)
                step(d, "halve", ["*", num(m), h], m)
            else:
                m = E.sym(base)
            area = d.compute(m * h)
            step(d, "multiply", num(area), area)
            return d.steps
        big_w, big_h, a, c = params["W"], params["H"], params["a"], params["c"]
        rest: E.Node = big_w if mal else ["group", ["-", big_w, a]]
        step(d, rule, ["+", ["*", a, big_h], ["*", rest, c]])
        left = d.compute(sympy.Integer(a * big_h))
        step(d, "multiply", ["+", num(left), ["*", rest, c]], left)
        if not mal:
            w = d.compute(sympy.Integer(big_w - a))
            rest = num(w)
            step(d, "subtract", ["+", num(left), ["*", rest, c]], w)
        right = d.compute(E.sym(rest) * c)
        step(d, "multiply", ["+", num(left), num(right)], right)
        total = d.compute(left + right)
        step(d, "add", num(total), total)
        return d.steps

    @staticmethod
    def _area_in_square_metres(params: dict[str, Any], d: Derivation, rule: str,
                               mal: str | None) -> list[StepDraft]:
        """``240 × 150 ÷ 10000``: the area in cm², then m² (a mal-rule divides by 100, or multiplies)."""
        length, width = params["l"], params["w"]
        op, factor = ("*", 10000) if mal == "square_metres_multiplied" else \
            ("/", 100 if mal == "square_metre_as_100_cm2" else 10000)
        step(d, rule if mal else "rectangle_area", [op, ["*", length, width], factor])
        a = d.compute(sympy.Integer(length * width))
        step(d, "multiply", [op, num(a), factor], a)
        m2 = d.compute(a * factor if op == "*" else a / factor)
        step(d, "cm2_to_m2", num(m2), m2)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Shoelace formula over the drawn vertices (area), or the sum of the side lengths (perimeter).
        shape = params["shape"]
        if params.get("ask") == "area_m2":  # the sides in metres first, then multiply
            return sympy.Rational(params["l"], 100) * sympy.Rational(params["w"], 100)
        if shape == "rectangle":
            return sympy.Integer(2 * params["l"] + 2 * params["w"])
        if shape == "triangle_perimeter":
            return sympy.Integer(params["a"] + params["b"] + params["c"])
        pts = self._vertices(params)
        twice = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]))
        return abs(sympy.Rational(twice, 2))

    def _vertices(self, params: dict[str, Any]) -> list[tuple[int, int]]:
        shape = params["shape"]
        if shape == "triangle":
            return [(0, 0), (params["b"], 0), (params["o"], params["h"])]
        if shape == "trapezium":
            return [(0, 0), (params["b"], 0), (params["o"] + params["a"], params["h"]), (params["o"], params["h"])]
        w, h, a, c = params["W"], params["H"], params["a"], params["c"]
        return [(0, 0), (w, 0), (w, c), (a, c), (a, h), (0, h)]

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u = "m" if params.get("ask") == "area_m2" else params["unit"]
        area = params["shape"] not in ("rectangle", "triangle_perimeter") or params.get("ask") == "area_m2"
        unit, lunit = (area_unit(u), rf"\mathrm{{{u}}}^2") if area else (u, rf"\mathrm{{{u}}}")
        return f"{E.num_text(answer, decimal=True)} {unit}", rf"{E.num_latex(answer, decimal=True)}\ {lunit}"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {"facts": [f"{q.name} {length_text(params[q.param], u)}" for q in self.quantities(params)],
                "ask": params.get("ask", "")}

    def figure(self, params: dict[str, Any]) -> Figure:
        shape, u = params["shape"], params["unit"]

        grid = bool(params.get("grid"))

        def side(el_id: str, a: str, b: str, key: str, **kw: Any) -> dict[str, Any]:
            el = {"id": el_id, "type": "segment", "from": a, "to": b, "text": length_text(params[key], u),
                  "value": params[key], **kw}
            return counted(el, params["grid"]) if grid else el  # on squared paper the length is counted

        if shape == "rectangle":
            length, width = params["l"], params["w"]
            pts = {"A": (0, 0), "B": (length, 0), "C": (length, width), "D": (0, width)}
            els = [{"id": "rectangle_ABCD", "type": "polygon", "points": list("ABCD")},
                   side("side_AB", "A", "B", "l"), side("side_BC", "B", "C", "w")]
            if grid:  # the grid shows the right angles; its key gives the lengths
                size = grid_size(params, (length, width))
                return Figure(self.figure_kind, figure_spec(pts, [*grid_elements(params, "A"), *els], size))
            els += [{"id": f"right_{v}", "type": "right_angle", "at": v, "arms": arms}
                    for v, arms in (("A", ["B", "D"]), ("B", ["C", "A"]), ("C", ["D", "B"]), ("D", ["A", "C"]))]
            return Figure(self.figure_kind, figure_spec(pts, els, (2.8, 2.0)))
        if shape == "triangle_perimeter":
            a, b, c = params["a"], params["b"], params["c"]
            ang_a = math.degrees(math.acos((b * b + c * c - a * a) / (2 * b * c)))
            ang_b = math.degrees(math.acos((a * a + c * c - b * b) / (2 * a * c)))
            pts = tri_points("ABC", c, ang_a, ang_b)
            els = [{"id": "triangle_ABC", "type": "polygon", "points": list("ABC")}, *vertex_labels("ABC"),
                   side("side_AB", "A", "B", "c"), side("side_BC", "B", "C", "a"), side("side_CA", "C", "A", "b")]
            if params.get("isosceles"):  # CA is known from its tick mark matching BC's, not from a label
                del els[-1]["text"], els[-1]["value"]
                els[-2]["text_at"] = 0.68  # BC's label clear of its tick mark at the middle
                els += [{"id": "tick_BC", "type": "tick_mark", "on": ["B", "C"], "count": 1},
                        {"id": "tick_CA", "type": "tick_mark", "on": ["C", "A"], "count": 1}]
            return Figure(self.figure_kind, figure_spec(pts, els, (2.8, 2.1)))
        if shape in ("triangle", "trapezium"):
            verts = self._vertices(params)
            names = "ABC" if shape == "triangle" else "ABCD"
            pts = dict(zip(names, verts))
            top = "C" if shape == "triangle" else "D"
            pts["H"] = (params["o"], 0)
            els = [{"id": f"{shape}_{names}", "type": "polygon", "points": list(names)},
                   side("side_AB", "A", "B", "b"),
                   {**side(f"height_{top}H", top, "H", "h", dashed=True, width=0.8), "dir": [1, 0]},
                   {"id": "right_H", "type": "right_angle", "at": "H", "arms": [top, "B"]}]
            if shape == "triangle":
                els.append(side("side_CA", "C", "A", "s"))
            else:
                els += [side("side_DC", "D", "C", "a"), side("side_AD", "A", "D", "s")]
            return Figure(self.figure_kind, figure_spec(pts, els, (2.9, 2.1)))
        verts = self._vertices(params)
        pts = dict(zip("ABCDEF", verts))
        els = [{"id": "l_shape_ABCDEF", "type": "polygon", "points": list("ABCDEF")},
               side("side_AB", "A", "B", "W"), side("side_BC", "B", "C", "c"),
               side("side_EF", "E", "F", "a"), side("side_FA", "F", "A", "H")]
        if grid:
            size = grid_size(params, (params["W"], params["H"]))
            return Figure(self.figure_kind, figure_spec(pts, [*grid_elements(params, "A"), *els], size))
        return Figure(self.figure_kind, figure_spec(pts, els, (2.8, 2.4)))
