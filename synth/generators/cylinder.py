"""Cylinders: volume and surface area, a stack of coins, the space left in a tube of balls."""

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
    UNITS,
    FigureFamily,
    Quantity,
    length_text,
    neighbour_misreads,
    pick,
    radius_as_diameter,
)
from synth.generators._solid import (
    CURVED_VIEW,
    ball_radius,
    ball_radius_node,
    cubic_unit,
    exact_integral,
    round_solid,
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

# Share of easy and medium cylinder volumes drawn as a stack of identical coins with a key coin (count the
# coins, then scale by the key coin's thickness), and the thicknesses its key may print (mm).
_COINS_SHARE = 0.35
_COIN_THICKNESS = (2, 3, 4)
# Share of hard cylinder problems asking the space left in such a tube (the tube's volume less the balls').
_TUBE_SPACE_SHARE = 0.35


@dataclass(frozen=True)
class _Level:
    ask: str  # "volume" or "surface" (total surface area)
    given: str  # "radius" or "diameter"
    coins: bool = False  # on a share (_COINS_SHARE), a stack of coins counted against a key coin
    tube: bool = False  # on a share (_TUBE_SPACE_SHARE), the space left in a tube of balls


_LEVELS = {"easy": _Level("volume", "radius", coins=True), "medium": _Level("volume", "diameter", coins=True),
           "hard": _Level("surface", "radius", tube=True)}


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
        level = _LEVELS[difficulty]
        unit, h = pick(rng, UNITS), int(rng.integers(2, 31))
        if level.coins and rng.random() < _COINS_SHARE:
            return self._sample_coins(rng, level.given)
        if level.tube and rng.random() < _TUBE_SPACE_SHARE:
            return {"ask": "space", "given": "tube", **sample_tube(rng), "unit": unit}
        if level.given == "diameter":
            return {"ask": level.ask, "given": "diameter", "d": int(rng.integers(2, 21)) * 2, "h": h, "unit": unit}
        return {"ask": level.ask, "given": "radius", "r": int(rng.integers(2, 21)), "h": h, "unit": unit}

    @staticmethod
    def _sample_coins(rng: np.random.Generator, given: str) -> dict[str, Any]:
        """A stack of identical coins (mm): the pupil counts the coins and scales by the key coin's thickness."""
        while True:
            n, t, r = int(rng.integers(4, 19)), int(pick(rng, _COIN_THICKNESS)), int(rng.integers(8, 23))
            # At least as tall as its radius (its length label clears the key coin), at most four times as tall
            # (so each coin stays thick enough on the page to count).
            if r <= n * t <= 4 * r:
                break
        size = {"r": r} if given == "radius" else {"d": 2 * r}
        return {"ask": "volume", "given": given, **size, "h": n * t,
                "unit": "mm", "coin": t, "coins": n}

    def counted_in_figure(self, params: dict[str, Any]) -> bool:
        return params.get("coin") is not None or params["given"] == "tube"  # coins or balls, counted in the drawing

    def valid(self, params: dict[str, Any]) -> bool:
        return params["given"] != "tube" or tube_valid(params)

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u = params["unit"]
        if params["given"] == "tube":
            return tube_quantities(u)
        first = (Quantity("radius", "r", "radius", u) if params["given"] == "radius"
                 else Quantity("diameter", "d", "diameter", u))
        if params.get("coin") is not None:
            return [first, Quantity("thickness of each coin", "coin", "key_edge", u),
                    Quantity("coins in the stack", "coins", "coin_lines")]
        return [first, Quantity("height", "h", "height", u)]

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """For a stack of coins: one coin more or fewer (the lines counted, not the coins), the key coin's
        thickness ignored (each coin taken as 1 mm) or its number misread; and the printed radius or diameter.
        For a tube of balls, the readings of the balls and the tube (see ``tube_readings``)."""
        if params["given"] == "tube":
            return effective_readings(self, params, tube_readings(params))
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
        what they touch, see ``ball_radius_node``), each radius worked out, then each volume, then the difference.

        The family's mal-rules (2πrh for the volume, the diameter for the radius, one end of a surface) are
        about a single printed radius or surface, so none applies here.
        """
        n, w, h = params["balls"], params["tube_d"], params["tube_h"]
        tube_r: E.Node = ["/", w, 2]
        ball_r = ball_radius_node(params)
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
            rho = ball_radius(params)
            tube = exact_integral(sympy.Rational(params["tube_d"], 2) ** 2 + 0 * z, z, 0, params["tube_h"])
            return sympy.pi * (tube - params["balls"] * exact_integral(rho**2 - z**2, z, -rho, rho))
        r = params["r"] if params["given"] == "radius" else sympy.Rational(params["d"], 2)
        # π stays outside the integrals: polynomials over the rationals integrate several times faster.
        if params.get("coin") is not None:  # a stack: the coins counted times one disc of the key coin's thickness
            return sympy.pi * params["coins"] * exact_integral(r**2 + 0 * z, z, 0, params["coin"])
        if params["ask"] == "volume":
            return sympy.pi * exact_integral(r**2 + 0 * z, z, 0, params["h"])
        return 2 * sympy.pi * r**2 + sympy.pi * exact_integral(2 * r + 0 * z, z, 0, params["h"])

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        u = params["unit"]
        return solid_answer(answer, square_unit(u) if params["ask"] == "surface" else cubic_unit(u))

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {"facts": [f"{q.name} {length_text(params[q.param], u)}" for q in self.quantities(params)],
                "coins": params.get("coin") is not None, "tube": params["given"] == "tube"}

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        if params["given"] == "tube":
            return Figure(self.figure_kind, tube_spec(params, float(ball_radius(params))))
        p, els = round_solid(params, cone=False)
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
        return Figure(self.figure_kind, solid_spec(p, els, CURVED_VIEW, (2.6, 2.6)))


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
    return solid_spec({**points, **key}, [*elements, lines, size, *key_els], CURVED_VIEW, (3.6, 2.2))
