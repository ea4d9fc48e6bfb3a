"""What the solid families share: 3-D figure specs and views, exact volumes by integration, answers in π, and
the tube of identical balls that cylinder and sphere problems both draw.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators._display import num, pi_times, show
from synth.generators._figure import (
    Quantity,
    length_text,
    neighbour_misreads,
)
from synth.generators.base import Reading
from synth.polynomials import definite_integral

CURVED_VIEW = {"azimuth": 0, "elevation": 18}
TRUE_HEIGHT_VIEW = {**CURVED_VIEW, "true_heights": True}


def integral(expr: sympy.Expr, z: sympy.Symbol, lo: sympy.Basic, hi: sympy.Basic) -> sympy.Expr:
    """∫ expr dz from lo to hi for a polynomial in z (term by term: fast and exact, unlike integrate())."""
    anti = sympy.Poly(sympy.expand(expr), z).integrate().as_expr()
    return sympy.expand(anti.subs(z, hi) - anti.subs(z, lo))


def exact_integral(expr: sympy.Expr, z: sympy.Symbol, lo: sympy.Basic, hi: sympy.Basic) -> sympy.Expr:
    """`integral` on exact numbers (synth.polynomials) when the integrand and limits allow, as they do for school
    solids (square roots included); the same value at about a sixteenth of the cost. `integral` otherwise."""
    exact = definite_integral(expr, z, lo, hi)
    return integral(expr, z, lo, hi) if exact is None else exact


def solid_spec(points3d: dict[str, tuple[float, float, float]], elements: list[dict[str, Any]], view: dict[str, Any],
          size: tuple[float, float] = (2.8, 2.4)) -> dict[str, Any]:
    return {"size_in": list(size), "view": dict(view),
            "points3d": {k: [round(float(c), 4) for c in v] for k, v in points3d.items()}, "elements": elements}


def cubic_unit(u: str) -> tuple[str, str]:
    return f"{u}³", rf"\mathrm{{{u}}}^3"


def square_unit(u: str) -> tuple[str, str]:
    return f"{u}²", rf"\mathrm{{{u}}}^2"


def solid_answer(answer: sympy.Basic, unit: tuple[str, str]) -> tuple[str, str]:
    coef = sympy.simplify(answer / sympy.pi) if answer.has(sympy.pi) else None
    if coef is not None and not coef.is_Rational:
        # plain nsimplify can "find" radicals such as 2**(59/285) in a long rational; keep it rational
        coef = sympy.nsimplify(coef, rational=True)
    node = pi_times(coef) if coef is not None else num(answer)
    _, text, latex = show(node)
    return f"{text} {unit[0]}", rf"{latex}\ {unit[1]}"


def round_solid(params: dict[str, Any], *, cone: bool) -> tuple[dict[str, tuple[float, float, float]],
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


def sample_tube(rng: np.random.Generator) -> dict[str, Any]:
    """3-6 equal balls stacked in a tube, each touching the next. Either they touch its curved side and stop
    short of the lid (by a quarter to under half a ball), or they touch both ends and the tube is wider (by a
    quarter to under half a ball): the drawing shows which, and so which printed length gives their size."""
    n, r = int(rng.integers(3, 7)), int(rng.integers(2, 11))
    spare = int(rng.integers(math.ceil(r / 2), r))
    if rng.integers(2):
        return {"balls": n, "touches": "sides", "tube_d": 2 * r, "tube_h": 2 * n * r + spare}
    return {"balls": n, "touches": "ends", "tube_d": 2 * r + spare, "tube_h": 2 * n * r}


def tube_valid(params: dict[str, Any]) -> bool:
    # Not whether the balls fit: a misread of what they touch gives balls a little too big for the tube,
    # which the pupil does not check.
    return params["balls"] >= 1 and params["tube_d"] > 0 and params["tube_h"] > 0


def ball_radius(params: dict[str, Any]) -> sympy.Rational:
    """Half the tube's width (the balls touch its curved side) or its height over 2 × balls (both ends)."""
    if params["touches"] == "sides":
        return sympy.Rational(params["tube_d"], 2)
    return sympy.Rational(params["tube_h"], 2 * params["balls"])


def ball_radius_node(params: dict[str, Any]) -> E.Node:
    """The ball's radius as written: ``(12 ÷ 2)`` or ``(40 ÷ (2 × 4))``."""
    if params["touches"] == "sides":
        return ["/", params["tube_d"], 2]
    return ["/", params["tube_h"], ["*", 2, params["balls"]]]


def tube_quantities(unit: str) -> list[Quantity]:
    return [Quantity("width of the tube", "tube_d", "tube_diameter", unit),
            Quantity("height of the tube", "tube_h", "tube_height", unit),
            Quantity("balls in the tube", "balls", "balls")]


def tube_readings(params: dict[str, Any]) -> list[Reading]:
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


def tube_spec(params: dict[str, Any], r: float) -> dict[str, Any]:
    """A tube (an upright cylinder drawn with true heights) holding its balls, its width and height labelled.

    The balls are drawn touching what they touch: the curved side (a gap above the top ball) or the base
    and the lid's centre (a gap beside them); which one is what the pupil must see.
    """
    u = params["unit"]
    p, els = round_solid({"r": params["tube_d"] / 2, "h": params["tube_h"]}, cone=False)
    els = [e for e in els if e["id"] != "point_T"]  # no centre dot on the lid: it would read as a contact mark
    els += [{"id": "balls", "type": "ball_stack", "base": "O", "radius": round(r, 4), "count": params["balls"],
             "touches": params["touches"]},
            # The width is written level with the lid, left of its rim (above the lid it would sit on the ellipse's
            # far half), the height on the right.
            {"id": "tube_diameter", "type": "segment", "from": "R1", "to": "L1",
             "text": length_text(params["tube_d"], u), "value": params["tube_d"], "dir": [-1, 0], "text_at": 1.0},
            {"id": "tube_height", "type": "segment", "from": "R0", "to": "R1", "text": length_text(params["tube_h"], u),
             "value": params["tube_h"], "dir": [1, 0]}]
    return solid_spec(p, els, TRUE_HEIGHT_VIEW, (2.2, 3.0))
