"""Spheres: volume and surface area, some on squared paper, some as balls in a tube."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._display import num, pi_times, step
from synth.generators._figure import (
    GRID_STEPS,
    UNITS,
    FigureFamily,
    Quantity,
    counted,
    grid_elements,
    length_text,
    pick,
    radius_as_diameter,
)
from synth.generators._solid import (
    CURVED_VIEW,
    TRUE_HEIGHT_VIEW,
    ball_radius,
    ball_radius_node,
    cubic_unit,
    integral,
    sample_tube,
    solid_answer,
    solid_spec,
    square_unit,
    tube_quantities,
    tube_readings,
    tube_spec,
    tube_valid,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure

# Directions for a sphere's radius: near the left-right axis, so it never hides behind its own label.
_SPHERE_TURNS = (-35, -25, -15, -5, 5, 15, 25, 35, 155, 165, 175, 185, 195, 205)
# Share of easy and medium spheres drawn on squared paper with a key, heights true to size (as cones are, in
# cone.py): a sphere has one counted length, a smaller space of problems, kept rarer to stay distinct.
_SPHERE_GRID_SHARE = 0.25
# Share of medium sphere volumes asked as a tube of identical balls (tennis balls): the balls are counted, and
# the drawing shows what they touch (the tube's curved side, or both of its ends), which says which printed
# length gives their diameter.
_TUBE_SHARE = 0.4


@dataclass(frozen=True)
class _Level:
    shape: str  # "sphere" (on a share, _SPHERE_GRID_SHARE, on squared paper) or "hemisphere"
    ask: str | None  # "surface" or "volume"; None: either, drawn
    tube: bool = False  # on a share (_TUBE_SHARE), the balls packed in a tube


_LEVELS = {"easy": _Level("sphere", "surface"), "medium": _Level("sphere", "volume", tube=True),
           "hard": _Level("hemisphere", None)}


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
        level = _LEVELS[difficulty]
        unit = pick(rng, UNITS)
        if level.shape == "sphere":
            ask = level.ask
            if level.tube and rng.random() < _TUBE_SHARE:
                return {"shape": "sphere", "ask": "volume", "given": "tube", **sample_tube(rng), "unit": unit}
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

    def counted_in_figure(self, params: dict[str, Any]) -> bool:
        return bool(params.get("grid")) or params["given"] == "tube"  # squares or balls, counted in the drawing

    def valid(self, params: dict[str, Any]) -> bool:
        return params["given"] != "tube" or tube_valid(params)

    def _r(self, params: dict[str, Any]) -> sympy.Rational:
        if params["given"] == "tube":
            return ball_radius(params)
        return sympy.Integer(params["r"]) if params["given"] == "radius" else sympy.Rational(params["d"], 2)

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u = params["unit"]
        if params["given"] == "tube":
            return tube_quantities(u)
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
        return effective_readings(self, params, tube_readings(params))

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
        n, r = params["balls"], ball_radius_node(params)
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
            return params["balls"] * sympy.pi * integral(r**2 - z**2, z, lo, r)
        if params["ask"] == "volume":
            return sympy.pi * integral(r**2 - z**2, z, lo, r)  # π outside: a polynomial over the rationals
        curved = 2 * sympy.pi * r * (r - lo)
        return curved + (sympy.pi * r**2 if params["shape"] == "hemisphere" else 0)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u = params["unit"]
        return solid_answer(answer, cubic_unit(u) if params["ask"] == "volume" else square_unit(u))

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        q = self.quantities(params)[0]
        return {"fact": f"{q.name} {length_text(params[q.param], params['unit'])}", "tube": params["given"] == "tube",
                "grid": params.get("grid")}

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        if params["given"] == "tube":
            return Figure(self.figure_kind, tube_spec(params, float(self._r(params))))
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
                return Figure(self.figure_kind, solid_spec(p, [*grid_elements(params, "O"), *els, counted(radius, k)],
                                                      TRUE_HEIGHT_VIEW, size))
            return Figure(self.figure_kind, solid_spec(p, [*els, radius], CURVED_VIEW, (2.4, 2.4)))
        p["R"] = (r, 0, 0)
        els += [{"id": "dome", "type": "arc", "center": "O", "radius": r, "plane": "screen", "start": 0, "end": 180},
                {"id": "base", "type": "circle", "center": "O", "radius": r}]
        if params["given"] == "radius":
            els.append({"id": "radius", "type": "segment", "from": "O", "to": "R", "text": length_text(params["r"], u),
                        "value": params["r"], "dir": [0, 1]})
        else:
            els.append({"id": "diameter", "type": "segment", "from": "L", "to": "R",
                        "text": length_text(params["d"], u), "value": params["d"], "dir": [0, 1]})
        return Figure(self.figure_kind, solid_spec(p, els, CURVED_VIEW, (2.6, 2.0)))
