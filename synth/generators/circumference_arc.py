"""Circumference, arc length and sector perimeter, including a circle with a slice cut out."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._display import num, step
from synth.generators._figure import (
    GRID_SHARE,
    GRID_STEPS,
    UNITS,
    FigureFamily,
    Quantity,
    counted,
    degrees_text,
    figure_spec,
    grid_elements,
    grid_size,
    length_text,
    pick,
    radius_as_diameter,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft
from synth.records import Figure

_SECTOR_ANGLES = (30, 40, 45, 60, 72, 80, 90, 120, 135, 144, 150, 160)
PI_APPROX = "3.14"
CUT_OUT_SHARE = 0.5


def _cut_out(params: dict[str, Any]) -> bool:
    """Whether the figure is a circle with a slice cut out: ``angle_of`` says what the marked angle belongs to
    (the slice; a misread takes it as the drawn sector's own angle)."""
    return params.get("angle_of") == "slice"


@register
class CircumferenceArc(FigureFamily):
    """easy: circumference; medium: arc length of a sector; hard: perimeter of a sector (on a share, of the rest of
    a circle with a slice cut out, the slice's angle marked). Uses π ≈ 3.14."""

    id = "geometry.circle.circumference_arc"
    domain = "geometry"
    subdomain = "circles"
    grade_band = "7-8"
    malrules = (
        MalRule("circumference_with_radius", "formula_misuse", "uses π × r for the circumference (drops the 2)"),
        MalRule("arc_as_whole_circle", "misinterpret_question", "gives the whole circumference, not the arc"),
        MalRule("sector_perimeter_arc_only", "misinterpret_question", "leaves the two radii out of the perimeter"),
        MalRule("metre_as_1000_cm", "unit_conversion", "converts centimetres to metres dividing by 1000, not 100"),
        MalRule("metres_multiplied", "unit_conversion", "multiplies by 100 to turn centimetres into metres"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        unit = pick(rng, UNITS)
        ask = {"easy": "circumference", "medium": "arc", "hard": "sector_perimeter"}[difficulty]
        if ask == "circumference" and rng.random() < 0.3:
            ask, unit = "wheel", "cm"  # a wheel's radius in cm, the distance it rolls asked in metres
        # On squared paper the centre sits on a grid point and one radius runs along a grid line.
        k = pick(rng, GRID_STEPS) if ask != "wheel" and rng.random() < GRID_SHARE else None
        while True:
            r = int(rng.integers(2, 7)) * k if k else int(rng.integers(2, 21)) + (15 if ask == "wheel" else 0)
            theta = 360 if ask in ("circumference", "wheel") else pick(rng, _SECTOR_ANGLES)
            if (self._arc({"r": r, "theta": theta}) * 100).q == 1:  # answers to the hundredth
                if k:
                    return {"ask": ask, "given": "radius", "r": r, "theta": theta, "unit": unit,
                            "turn": int(rng.integers(4)) * 90, "grid": k}
                out = {"ask": ask, "given": "radius", "r": r, "theta": theta, "unit": unit,
                       "turn": int(rng.integers(-30, 31))}
                # A share of sectors is the rest of a circle once a slice is cut out: the slice's angle is marked.
                if theta != 360 and rng.random() < CUT_OUT_SHARE:
                    out["angle_of"] = "slice"
                return out

    @staticmethod
    def _arc(params: dict[str, Any]) -> sympy.Rational:
        return CircumferenceArc._turn(params) * 2 * E.sym(PI_APPROX) * CircumferenceArc._radius(params)

    @staticmethod
    def _turn(params: dict[str, Any]) -> sympy.Rational:
        """The share of a full turn the drawn arc makes: what the marked angle leaves when a slice is cut out."""
        theta = params["theta"]
        return sympy.Rational(360 - theta if _cut_out(params) else theta, 360)

    @staticmethod
    def _radius(params: dict[str, Any]) -> sympy.Rational:
        """The radius the working uses: half the length when it is (taken for) a diameter."""
        return sympy.Rational(params["d"], 2) if params.get("given") == "diameter" else sympy.Integer(params["r"])

    def valid(self, params: dict[str, Any]) -> bool:
        return 0 < params["theta"] <= 360

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        # The angle marked in the gap of a circle with a slice cut out, read as the angle of the shape left
        # (the mark taken on the other side of its arms): the slice's arc is worked instead of the rest.
        if _cut_out(params):
            return (Reading("angle_of", "angle_O", "misread_relation", ("sector",)),)
        # Only a whole circle: a sector's two straight edges both run from the centre, plainly radii; and
        # only a labelled radius (on squared paper it is counted, with no label to take for a diameter).
        if params["ask"] not in ("circumference", "wheel") or params.get("grid"):
            return ()
        return radius_as_diameter(params, "radius_OA")

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        out = [Quantity("radius", "r", "radius_OA", params["unit"], on_grid=bool(params.get("grid")))]
        if params["ask"] not in ("circumference", "wheel"):
            out.append(Quantity("angle at the centre", "theta", "angle_O", "°"))
        return out

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        ask, r, theta = params["ask"], params["r"], params["theta"]
        if mal == "arc_as_whole_circle" and ask in ("circumference", "wheel"):
            return None
        if mal == "sector_perimeter_arc_only" and ask != "sector_perimeter":
            return None
        if mal in ("metre_as_1000_cm", "metres_multiplied") and ask != "wheel":
            return None
        two: list[E.Node] = [] if mal == "circumference_with_radius" else [2]
        part = ask not in ("circumference", "wheel") and mal != "arc_as_whole_circle"
        radii = ask == "sector_perimeter" and mal != "sector_perimeter_arc_only"
        # cm to m for a wheel: ÷ 100 (a mal-rule divides by 1000 or multiplies by 100)
        op, per_m = ("*", 100) if mal == "metres_multiplied" else ("/", 1000 if mal == "metre_as_1000_cm" else 100)

        # The radius as written: a length taken for a diameter is halved first, (15 ÷ 2).
        diameter = params.get("given") == "diameter"
        radius: list[E.Node] = [["group", ["/", params["d"], 2]] if diameter else r]
        rv: sympy.Basic = sympy.Integer(r)

        def whole(arc: E.Node) -> E.Node:
            if ask == "wheel":
                return [op, arc, per_m]
            return ["+", arc, ["*", 2, radius[0]]] if radii else arc

        cut = _cut_out(params)  # the arc left is 360° − theta: worked out first
        frac: list[E.Node] = [["frac", ["-", 360, theta] if cut else theta, 360]] if part else []
        rule = "mal:" + mal if mal else ask
        step(d, rule, whole(E.product_of([*frac, *two, PI_APPROX, radius[0]])))
        if part and cut:
            left = d.compute(sympy.Integer(360 - theta))
            frac = [["frac", num(left), 360]]
            step(d, "subtract", whole(E.product_of([*frac, *two, PI_APPROX, radius[0]])), left)
            theta = left
        if part:
            f = d.compute(sympy.Rational(theta, 360))
            frac = [E.leaf(f)]
            step(d, "simplify_fraction", whole(E.product_of([*frac, *two, PI_APPROX, radius[0]])), f)
        if diameter:
            rv = d.compute(sympy.Rational(params["d"], 2))
            radius[0] = num(rv)
            step(d, "halve_diameter", whole(E.product_of([*frac, *two, PI_APPROX, radius[0]])), rv)
        factor = E.sym(PI_APPROX)
        if two:
            factor = d.compute(2 * factor)
            step(d, "multiply", whole(E.product_of([*frac, num(factor), radius[0]])), factor)
        length = d.compute(factor * rv)
        step(d, "multiply", whole(E.product_of([*frac, num(length)])), length)
        if part:
            length = d.compute(E.sym(frac[0]) * length)
            step(d, "multiply", whole(num(length)), length)
        if radii:
            twice = d.compute(2 * rv)
            step(d, "double_radius", ["+", num(length), num(twice)], twice)
            total = d.compute(length + twice)
            step(d, "add", num(total), total)
        if ask == "wheel":
            metres = d.compute(length * per_m if op == "*" else length / per_m)
            step(d, "cm_to_m", num(metres), metres)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Arc = diameter × π scaled by the turn; perimeter adds the two radii; 1 m is 100 cm.
        turn = sympy.Rational(params["theta"], 360)
        if _cut_out(params):
            turn = 1 - turn
        across = sympy.Integer(params["d"]) if params.get("given") == "diameter" else 2 * sympy.Integer(params["r"])
        arc = turn * E.sym(PI_APPROX) * across
        if params["ask"] == "wheel":
            return arc / 100
        return arc + across if params["ask"] == "sector_perimeter" else arc

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u = "m" if params["ask"] == "wheel" else params["unit"]
        return f"{E.num_text(answer, decimal=True)} {u}", rf"{E.num_latex(answer, decimal=True)}\ \mathrm{{{u}}}"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"r_t": length_text(params["r"], params["unit"]), "theta_t": degrees_text(params["theta"]),
                "pi": PI_APPROX, "cut_out": _cut_out(params)}

    def figure(self, params: dict[str, Any]) -> Figure:
        r, theta, turn = params["r"], params["theta"], params["turn"]
        u = params["unit"]
        whole_circle = params["ask"] in ("circumference", "wheel")
        grid = bool(params.get("grid"))
        if grid:  # radius OA along a grid line (turn is a multiple of 90°)
            start = turn
        else:
            start = 90 - theta / 2 + turn if not whole_circle else 25 + turn
        a0, a1 = math.radians(start), math.radians(start + theta)
        pts = {"O": (0.0, 0.0), "A": (r * math.cos(a0), r * math.sin(a0)), "B": (r * math.cos(a1), r * math.sin(a1))}
        mid = math.radians(start - 90)
        out_dir = [round(math.cos(mid), 3), round(math.sin(mid), 3)]
        back = math.radians(start + theta / 2 + (180 if not whole_circle else 150))
        els: list[dict[str, Any]] = [{"id": "point_O", "type": "point", "at": "O"},
                                     {"id": "label_O", "type": "label", "at": "O", "text": "O",
                                      "dir": [round(math.cos(back), 3), round(math.sin(back), 3)]},
                                     {"id": "radius_OA", "type": "segment", "from": "O", "to": "A",
                                      "text": length_text(r, u), "value": r, "dir": out_dir}]
        if grid:  # counted along its grid line, not written
            els[2] = counted(els[2], params["grid"])
        if whole_circle:
            els.insert(0, {"id": "circle", "type": "circle", "center": "O", "radius": r})
            els[3]["dir"] = [round(-math.sin(a0), 3), round(math.cos(a0), 3)]
            # The letter O goes opposite the radius (between grid lines on squared paper).
            lean = math.radians(-45 if grid else 0)
            els[2]["dir"] = [round(math.sin(a0 + lean), 3), round(-math.cos(a0 + lean), 3)]
            if grid:
                return Figure(self.figure_kind, figure_spec({"O": pts["O"], "A": pts["A"]},
                                                            [*grid_elements(params, "O"), *els],
                                                            grid_size(params, (2 * r, 2 * r))))
            return Figure(self.figure_kind, figure_spec({"O": pts["O"], "A": pts["A"]}, els, (2.3, 2.3)))
        # Cut out, the arc drawn is the rest of the circle, and the marked angle sits in the empty slice.
        arc = (start + theta, start + 360) if _cut_out(params) else (start, start + theta)
        els += [{"id": "radius_OB", "type": "segment", "from": "O", "to": "B"},
                {"id": "arc_AB", "type": "arc", "center": "O", "radius": r, "start": round(arc[0], 3),
                 "end": round(arc[1], 3)},
                {"id": "angle_O", "type": "angle_mark", "at": "O", "arms": ["A", "B"], "text": degrees_text(theta),
                 "value": theta}]
        if grid:
            return Figure(self.figure_kind, figure_spec(pts, [*grid_elements(params, "O"), *els],
                                                        grid_size(params, (2 * r, 2 * r))))
        return Figure(self.figure_kind, figure_spec(pts, els, (2.4, 2.2)))
