"""Circle area from a radius or a diameter, in terms of π."""

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
    area_unit,
    counted,
    figure_spec,
    grid_elements,
    grid_size,
    length_text,
    pick,
    radius_as_diameter,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure

# What each difficulty draws: a circle from its radius (on a share on squared paper), from its diameter, or a
# composite shape (an annulus, or a semicircle from either length).
_LEVELS = {"easy": "radius", "medium": "diameter", "hard": "composite"}
_GRID_SHARE = 0.3  # of easy circles: a small space of problems, kept rarer so they stay distinct


@register
class CircleArea(FigureFamily):
    """easy: radius given; medium: diameter given; hard: a ring (annulus) or a semicircle. Answers exact in π."""

    id = "geometry.circle.area"
    domain = "geometry"
    subdomain = "circles"
    grade_band = "7-8"
    malrules = (
        MalRule("area_as_circumference", "formula_misuse", "uses 2πr (the circumference) for the area"),
        MalRule("diameter_as_radius", "formula_misuse", "squares the diameter instead of the radius"),
        MalRule("subtract_radii_first", "invalid_inference", "subtracts the radii before squaring (π(R − r)²)"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        unit = pick(rng, UNITS)
        samplers = {"radius": self._sample_radius, "diameter": self._sample_diameter,
                    "composite": self._sample_composite}
        return samplers[_LEVELS[difficulty]](rng, unit)

    @staticmethod
    def _sample_radius(rng: np.random.Generator, unit: str) -> dict[str, Any]:
        if rng.random() < _GRID_SHARE:  # on squared paper
            k = pick(rng, GRID_STEPS)
            return {"shape": "circle", "given": "radius", "r": int(rng.integers(2, 11)) * k, "unit": unit,
                    "turn": int(rng.integers(4)) * 90, "grid": k}
        return {"shape": "circle", "given": "radius", "r": int(rng.integers(2, 41)), "unit": unit,
                "turn": int(rng.integers(12)) * 30}

    @staticmethod
    def _sample_diameter(rng: np.random.Generator, unit: str) -> dict[str, Any]:
        return {"shape": "circle", "given": "diameter", "d": int(rng.integers(2, 41)) * 2, "unit": unit,
                "turn": int(rng.integers(-2, 3)) * 15}

    @staticmethod
    def _sample_composite(rng: np.random.Generator, unit: str) -> dict[str, Any]:
        if rng.integers(2):
            big = int(rng.integers(5, 31))
            return {"shape": "annulus", "R": big, "r": int(rng.integers(2, big - 1)), "unit": unit,
                    "turn": int(rng.integers(12)) * 30}
        if rng.integers(2):
            return {"shape": "semicircle", "given": "radius", "r": int(rng.integers(3, 41)), "unit": unit}
        return {"shape": "semicircle", "given": "diameter", "d": int(rng.integers(3, 41)) * 2, "unit": unit}

    def valid(self, params: dict[str, Any]) -> bool:
        return params["shape"] != "annulus" or params["R"] > params["r"]

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u = params["unit"]
        if params["shape"] == "annulus":
            return [Quantity("outer radius", "R", "radius_R", u), Quantity("inner radius", "r", "radius_r", u)]
        if params.get("given") == "radius":
            return [Quantity("radius", "r", "radius_r", u, on_grid=bool(params.get("grid")))]
        return [Quantity("diameter", "d", "diameter_d", u)]

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        if params.get("grid"):  # on squared paper the radius is counted, not labelled: no label to misread
            return ()
        return radius_as_diameter(params, "radius_r")

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        out = super().figure_readings(params)
        if params["image_role"] != "required" or params["shape"] != "annulus":
            return out
        # The outer radius is labelled where it crosses the shaded ring, so its length is taken for the
        # ring's width (inner circle to outer): the outer radius becomes R + r.
        return effective_readings(self, params, (*out, Reading("R", "radius_R", "misread_relation",
                                                               (params["R"] + params["r"],))))

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        shape = params["shape"]
        if mal == "subtract_radii_first" and shape != "annulus":
            return None
        if mal == "diameter_as_radius" and params.get("given") != "diameter":
            return None
        rule = "mal:" + mal if mal else "circle_area"
        if shape == "annulus":
            big, small = params["R"], params["r"]
            if mal == "area_as_circumference":
                return self._rings_as_circumference(d, big, small)
            if mal == "subtract_radii_first":
                step(d, rule, ["*", "pi", ["pow", ["group", ["-", big, small]], 2]])
                diff = d.compute(sympy.Integer(big - small))
                step(d, "subtract", ["*", "pi", ["pow", num(diff), 2]], diff)
                sq = d.compute(diff**2)
                step(d, "square", pi_times(sq), sq)
                return d.steps
            step(d, "annulus_area", ["-", ["*", "pi", ["pow", big, 2]], ["*", "pi", ["pow", small, 2]]])
            s1 = d.compute(sympy.Integer(big) ** 2)
            step(d, "square", ["-", pi_times(s1), ["*", "pi", ["pow", small, 2]]], s1)
            s2 = d.compute(sympy.Integer(small) ** 2)
            step(d, "square", ["-", pi_times(s1), pi_times(s2)], s2)
            area = d.compute(s1 - s2)
            step(d, "subtract", pi_times(area), area)
            return d.steps
        half = shape == "semicircle"
        lead: list[E.Node] = [["frac", 1, 2]] if half else []
        if params.get("given") == "radius":
            r: E.Node = params["r"]
        elif mal == "diameter_as_radius":
            r = params["d"]
        else:
            r = ["/", params["d"], 2]
        if mal == "area_as_circumference":
            step(d, rule, E.product_of([*lead, 2, "pi", r]))
            if isinstance(r, list):
                rv = d.compute(sympy.Integer(params["d"]) / 2)
                step(d, "halve_diameter", E.product_of([*lead, 2, "pi", num(rv)]), rv)
            else:
                rv = sympy.Integer(r)
            c = d.compute(2 * rv * (sympy.Rational(1, 2) if half else 1))
            step(d, "multiply", pi_times(c), c)
            return d.steps
        step(d, rule, E.product_of([*lead, "pi", ["pow", r, 2]]))
        if isinstance(r, list):
            rv = d.compute(sympy.Integer(params["d"]) / 2)
            step(d, "halve_diameter", E.product_of([*lead, "pi", ["pow", num(rv), 2]]), rv)
        else:
            rv = sympy.Integer(r)
        sq = d.compute(rv**2)
        if half:
            step(d, "square", E.product_of([*lead, "pi", num(sq)]), sq)
            area = d.compute(sq / 2)
        else:
            step(d, "square", ["*", "pi", num(sq)], sq)
            # Writing π × 676 as 676π copies the number again: the final number a pupil can slip on.
            area = d.compute(sq)
        step(d, "halve" if half else "simplify", pi_times(area), area)
        return d.steps

    def _rings_as_circumference(self, d: Derivation, big: int, small: int) -> list[StepDraft]:
        step(d, "mal:area_as_circumference", ["-", E.product_of([2, "pi", big]), E.product_of([2, "pi", small])])
        c1 = d.compute(sympy.Integer(2 * big))
        step(d, "multiply", ["-", pi_times(c1), E.product_of([2, "pi", small])], c1)
        c2 = d.compute(sympy.Integer(2 * small))
        step(d, "multiply", ["-", pi_times(c1), pi_times(c2)], c2)
        c = d.compute(c1 - c2)
        step(d, "subtract", pi_times(c), c)
        return d.steps

    _ring_antiderivative = sympy.Poly(2 * sympy.Symbol("rho"), sympy.Symbol("rho")).integrate()

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Integrate the circumference of thin rings: area = ∫ 2πρ dρ (a different route from πr²).
        # π stays outside and the polynomial 2ρ is integrated term by term, once: sympy.integrate took 4-7 ms a call.
        anti = self._ring_antiderivative
        if params["shape"] == "annulus":
            return sympy.pi * (anti.eval(params["R"]) - anti.eval(params["r"]))
        r = params["r"] if params.get("given") == "radius" else sympy.Rational(params["d"], 2)
        full = sympy.pi * (anti.eval(r) - anti.eval(0))
        return full / 2 if params["shape"] == "semicircle" else full

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        _, t, lt = show(pi_times(answer / sympy.pi))
        u = params["unit"]
        return f"{t} {area_unit(u)}", rf"{lt}\ \mathrm{{{u}}}^2"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {k + "_t": length_text(params[k], u) for k in ("r", "R", "d") if k in params}

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        shade = [228, 228, 228]
        if params["shape"] == "annulus":
            big, small = params["R"], params["r"]
            t = math.radians(45 + params["turn"])
            pts = {"O": (0.0, 0.0), "P": (big * math.cos(t), big * math.sin(t)),
                   "Q": (-small * math.cos(t), -small * math.sin(t))}
            els = [{"id": "circle_outer", "type": "circle", "center": "O", "radius": big, "fill": shade},
                   {"id": "circle_inner", "type": "circle", "center": "O", "radius": small, "fill": [255, 255, 255]},
                   {"id": "point_O", "type": "point", "at": "O"},
                   {"id": "radius_R", "type": "segment", "from": "O", "to": "P", "text": length_text(big, u),
                    "value": big,
                    "dir": [round(-math.sin(t), 3), round(math.cos(t), 3)],
                    "text_at": round((1 + small / big) / 2, 3)},  # in the ring, clear of the inner circle
                   {"id": "radius_r", "type": "segment", "from": "O", "to": "Q", "text": length_text(small, u),
                    "value": small, "dir": [round(-math.sin(t), 3), round(math.cos(t), 3)]}]
            return Figure(self.figure_kind, figure_spec(pts, els, (2.4, 2.4)))
        r = params["r"] if params.get("given") == "radius" else params["d"] / 2
        if params["shape"] == "semicircle":
            pts = {"O": (0.0, 0.0), "A": (-r, 0.0), "B": (r, 0.0), "P": (r * 0.6, r * 0.8)}
            els = [{"id": "semicircle", "type": "arc", "center": "O", "radius": r, "start": 0, "end": 180},
                   {"id": "point_O", "type": "point", "at": "O"}]
            if params["given"] == "radius":
                els += [{"id": "diameter", "type": "segment", "from": "A", "to": "B"},
                        {"id": "radius_r", "type": "segment", "from": "O", "to": "P",
                         "text": length_text(params["r"], u), "value": params["r"], "dir": [-0.8, 0.6]}]
            else:
                els.append({"id": "diameter_d", "type": "segment", "from": "A", "to": "B",
                            "text": length_text(params["d"], u), "value": params["d"], "dir": [0, -1]})
            return Figure(self.figure_kind, figure_spec(pts, els, (2.6, 1.7)))
        if params.get("given") == "radius":
            grid = bool(params.get("grid"))
            t = math.radians((0 if grid else 37) + params["turn"])
            pts = {"O": (0.0, 0.0), "P": (r * math.cos(t), r * math.sin(t))}
            radius = {"id": "radius_r", "type": "segment", "from": "O", "to": "P", "text": length_text(params["r"], u),
                      "value": params["r"], "dir": [round(-math.sin(t), 3), round(math.cos(t), 3)]}
            if grid:  # the radius is counted along its grid line from the centre
                radius = counted(radius, params["grid"])
            # The letter O sits in the corner between the radius and the next grid line, not on either.
            back = t + math.radians(225 if grid else 180)
            els = [{"id": "circle", "type": "circle", "center": "O", "radius": r},
                   {"id": "point_O", "type": "point", "at": "O"},
                   {"id": "label_O", "type": "label", "at": "O", "text": "O",
                    "dir": [round(math.cos(back), 3), round(math.sin(back), 3)]},
                   radius]
            if grid:
                return Figure(self.figure_kind, figure_spec(pts, [*grid_elements(params, "O"), *els],
                                                            grid_size(params, (2 * r, 2 * r))))
        else:
            t = math.radians(params["turn"])
            pts = {"O": (0.0, 0.0), "A": (-r * math.cos(t), -r * math.sin(t)), "B": (r * math.cos(t), r * math.sin(t))}
            els = [{"id": "circle", "type": "circle", "center": "O", "radius": r},
                   {"id": "point_O", "type": "point", "at": "O"},
                   {"id": "diameter_d", "type": "segment", "from": "A", "to": "B", "text": length_text(params["d"], u),
                    "value": params["d"], "dir": [round(-math.sin(t), 3), round(math.cos(t), 3)], "text_at": 0.5}]
        return Figure(self.figure_kind, figure_spec(pts, els, (2.3, 2.3)))
