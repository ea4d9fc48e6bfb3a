"""Cones: volume from the radius and the height or the slant height, some drawn on squared paper."""

from __future__ import annotations

from dataclasses import dataclass
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
    pick,
    radius_as_diameter,
)
from synth.generators._solid import (
    CURVED_VIEW,
    TRUE_HEIGHT_VIEW,
    cubic_unit,
    exact_integral,
    round_solid,
    solid_answer,
    solid_spec,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft
from synth.records import Figure

# Share of easy cones drawn on squared paper with a key (lengths counted in squares, then scaled by the key).
# The solid is drawn with its heights true to size (a textbook sketch, not a photograph) so the radius and the
# height run along grid lines.
_GRID_SHARE = 0.35


@dataclass(frozen=True)
class _Level:
    given: str  # "radius", "diameter", or "either" (drawn)
    slant: bool = False  # the slant height is given instead of the height (Pythagoras first)
    grid: bool = False  # on a share (_GRID_SHARE), drawn on squared paper


_LEVELS = {"easy": _Level("radius", grid=True), "medium": _Level("diameter"), "hard": _Level("either", slant=True)}


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
        level = _LEVELS[difficulty]
        unit = pick(rng, UNITS)
        if level.slant:
            r, h, slant = pick(rng, ((3, 4, 5), (6, 8, 10), (5, 12, 13), (9, 12, 15), (8, 15, 17), (12, 16, 20),
                                      (4, 3, 5), (8, 6, 10), (12, 5, 13), (12, 9, 15), (15, 8, 17)))
            k = int(rng.integers(1, 11))
            if rng.integers(2):
                return {"given": "diameter", "d": 2 * r * k, "h": None, "slant": slant * k, "unit": unit}
            return {"given": "radius", "r": r * k, "h": None, "slant": slant * k, "unit": unit}
        h = int(rng.integers(2, 31))
        if level.given == "diameter":
            return {"given": "diameter", "d": int(rng.integers(2, 21)) * 2, "h": h, "slant": None, "unit": unit}
        if level.grid and rng.random() < _GRID_SHARE:
            # On squared paper: 2-6 squares of radius, a height of 3-9 squares and taller than the radius.
            k, nr = int(pick(rng, GRID_STEPS)), int(rng.integers(2, 7))
            nh = int(rng.integers(max(3, nr), 10))
            return {"given": "radius", "r": nr * k, "h": nh * k, "slant": None, "unit": unit, "grid": k}
        return {"given": "radius", "r": int(rng.integers(2, 21)), "h": h, "slant": None, "unit": unit}

    def counted_in_figure(self, params: dict[str, Any]) -> bool:
        return bool(params.get("grid"))  # the lengths exist only as squares in the drawing

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
        return sympy.pi * exact_integral((r * (1 - z / h)) ** 2, z, 0, h)  # π outside: a polynomial

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return solid_answer(answer, cubic_unit(params["unit"]))

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {"facts": [f"{q.name} {length_text(params[q.param], u)}" for q in self.quantities(params)],
                "grid": params.get("grid")}

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        p, els = round_solid(params, cone=True)
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
        return Figure(self.figure_kind, solid_spec(p, els, CURVED_VIEW, (2.6, 2.6)))


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
    return solid_spec(points, [*grid_elements(params, "O"), *elements, radius, height, right], TRUE_HEIGHT_VIEW, size)


def value_of_leaf(node: E.Node) -> sympy.Basic:
    """The number a displayed leaf stands for (a root leaf keeps its exact value)."""
    return show(node)[0]
