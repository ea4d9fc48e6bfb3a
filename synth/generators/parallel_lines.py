"""Angles at parallel lines cut by a transversal: corresponding, alternate, co-interior, on a line."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._figure import (
    PROTRACTOR_SHARE,
    FigureFamily,
    Quantity,
    degrees_text,
    figure_spec,
    pick,
    protractor,
    vertex_labels,
)
from synth.generators._linear import lin_text, solve_linear
from synth.generators.base import Derivation, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure

# Angle positions at an intersection: 0 upper right, 1 upper left, 2 lower left, 3 lower right.
_PAIRS = {
    "corresponding": [((0, p), (1, p)) for p in range(4)],
    "alternate": [((0, 2), (1, 0)), ((0, 3), (1, 1)), ((0, 0), (1, 2)), ((0, 1), (1, 3))],
    "co_interior": [((0, 2), (1, 1)), ((0, 3), (1, 0))],
    "straight_line": [((i, p), (i, (p + 1) % 4)) for i in range(2) for p in range(4)],
}
_EQUAL = ("corresponding", "alternate")
SECOND_TRANSVERSAL_SHARE = 0.5
# The two transversals cross the midline _SPREAD apart; their runs per unit rise may differ by at most _RUN_GAP,
# so they stay at least 0.6 apart up to the ends of the drawn lines (2.1 above and below the midline).
_SPREAD = 2.8
_RUN_GAP = (_SPREAD - 0.6) / 2.1


def _run(degrees: float) -> float:
    """How far a line at ``degrees`` to the horizontal runs across per unit it rises."""
    return 1.0 / math.tan(math.radians(degrees))


_RELATION_WORDS = {"corresponding": "corresponding angles", "alternate": "alternate angles",
                   "co_interior": "co-interior angles", "straight_line": "angles on a straight line"}


@dataclass(frozen=True)
class _Level:
    relations: tuple[str, ...]  # the angle relations drawn from (uniformly: a repeat weighs one more)
    labels: str  # "x": the unknown angle is x; "x_form": it is an expression in x; "both": so is the given one
    protractor: bool = False  # on a share (PROTRACTOR_SHARE), the given angle measured off a drawn protractor


_LEVELS = {"easy": _Level(("co_interior", "straight_line"), "x"),
           "medium": _Level(("corresponding", "alternate", "co_interior", "straight_line"), "x_form", protractor=True),
           "hard": _Level(("corresponding", "alternate", "co_interior", "alternate"), "both")}


@register
class ParallelLines(FigureFamily):
    """easy: x from co-interior or straight-line angles; medium: an angle written in x; hard: both angles in x.

    On a share of easy and medium problems a second line crosses the parallels with an angle of its own marked.
    """

    id = "geometry.angles.parallel_lines"
    domain = "geometry"
    subdomain = "angles"
    grade_band = "7-8"
    malrules = (
        MalRule("supplementary_as_equal", "theorem_misapplication",
                "treats co-interior (or straight-line) angles as equal instead of adding to 180°"),
        MalRule("equal_as_supplementary", "theorem_misapplication",
                "treats corresponding or alternate angles as adding to 180° instead of equal"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        # On a share of medium problems the given angle is measured with a protractor laid along its
        # parallel line (to the nearest 5°): an interior angle, where the transversal runs on past the
        # tool's rim and the other angle stays clear of it, and phi 45°-85° so the tool stays between the
        # ends of the lines.
        level = _LEVELS[difficulty]
        scale = pick(rng, ("outer", "inner")) if level.protractor and rng.random() < PROTRACTOR_SHARE else None
        relations = level.relations
        while True:
            relation = pick(rng, ("co_interior", "alternate") if scale else relations)
            given_pos, x_pos = pick(rng, _PAIRS[relation][:2] if scale else _PAIRS[relation])
            if rng.integers(2):
                given_pos, x_pos = x_pos, given_pos
            phi = int(rng.integers(9, 18)) * 5 if scale else int(rng.integers(28, 87))
            params: dict[str, Any] = {"relation": relation, "phi": phi, "given_pos": list(given_pos),
                                      "x_pos": list(x_pos)}
            size_x, size_g = self._size(params, x_pos), self._size(params, given_pos)
            if level.labels == "x":
                return {**params, "g": size_g, "x_form": [1, 0], "g_form": None,
                        **self._second_transversal(rng, params, size_g)}
            x = int(rng.integers(5, 41))
            p = int(rng.integers(2, 6))
            q = size_x - p * x
            if not -40 <= q <= 50 or q == 0:
                continue
            if level.labels == "x_form":
                medium = {**params, "g": size_g, "x_form": [p, q], "g_form": None}
                if scale:
                    return {**medium, "protractor": scale}
                return {**medium, **self._second_transversal(rng, params, size_g)}
            p2 = int(rng.integers(1, 6))
            q2 = size_g - p2 * x
            if -40 <= q2 <= 50 and p2 != p:
                return {**params, "g": None, "x_form": [p, q], "g_form": [p2, q2]}

    @staticmethod
    def _second_transversal(rng: np.random.Generator, params: dict[str, Any], g: int) -> dict[str, Any]:
        """On a share of problems a second line crosses the parallels with an angle of its own marked (``h``,
        at the given angle's position on its line), the way a worksheet diagram marks angles for several parts.

        Its direction ``psi`` keeps it clear of the first transversal between the parallels (see ``figure``)
        and its angle at least 10° from both g and 180° − g, so reading it for g gives a visibly other answer.
        """
        if rng.random() >= SECOND_TRANSVERSAL_SHARE:
            return {}
        line, p = params["given_pos"]
        while True:
            psi = int(rng.integers(40, 141))
            h = psi if p in (0, 2) else 180 - psi
            if abs(psi - params["phi"]) < 15 or min(abs(h - g), abs(h - (180 - g))) < 10:
                continue
            if abs(_run(psi) - _run(params["phi"])) <= _RUN_GAP:
                return {"psi": psi, "h": h, "h_pos": [line, p]}

    @staticmethod
    def _size(params: dict[str, Any], pos: tuple[int, int] | list[int]) -> int:
        return params["phi"] if pos[1] in (0, 2) else 180 - params["phi"]

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        if params.get("h") is not None:  # the other line's angle: the answer does not use it, a misread can
            return [Quantity("marked angle", "g", "angle_given", "°"),
                    Quantity("angle on the other line", "h", "angle_h", "°")]
        if params["g"] is not None:
            return [Quantity("marked angle", "g", "protractor" if params.get("protractor") else "angle_given", "°")]
        p, q = params["g_form"]
        return [Quantity("marked angle", "g_form", "angle_given", "°", text=lin_text(p, q))]

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        if params.get("protractor") and params["image_role"] == "required":
            # Measured, not printed: the other scale (180° − g) or the neighbouring 5° tick.
            g = params["g"]
            measured = (Reading("g", "protractor", "misread_scale", (180 - g,)),
                        Reading("g", "protractor", "misread_value", (g - 5, g + 5)))
            return effective_readings(self, params, measured)
        # No misread_relation: the given angle read at a neighbouring position flips equal and supplementary,
        # exactly the supplementary_as_equal / equal_as_supplementary mal-rules' working (one working, one label).
        return super().figure_readings(params)

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        equal = params["relation"] in _EQUAL
        if (mal == "supplementary_as_equal" and equal) or (mal == "equal_as_supplementary" and not equal):
            return None
        if mal:
            equal = not equal
        x_form = tuple(params["x_form"])
        given = (0, params["g"]) if params["g"] is not None else tuple(params["g_form"])
        rule = "mal:" + mal if mal else params["relation"]
        if equal:
            left, right = ([x_form], [given]) if x_form[0] >= given[0] else ([given], [x_form])
            solve_linear(d, left, right, rule)
        else:
            solve_linear(d, [x_form, given], [(0, 180)], rule)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Read off the drawing: the unknown angle has the size its position gets from the direction phi.
        p, q = params["x_form"]
        return sympy.Rational(self._size(params, params["x_pos"]) - q, p)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        if params["x_form"] == [1, 0]:
            return f"x = {E.num_text(answer, decimal=True)}°", rf"x = {E.num_latex(answer, decimal=True)}^\circ"
        return f"x = {E.num_text(answer, decimal=True)}", f"x = {E.num_latex(answer, decimal=True)}"

    def _label(self, form: list[int] | None, g: int | None) -> str:
        if g is not None:
            return degrees_text(g)
        assert form is not None
        p, q = form
        return "x" if (p, q) == (1, 0) else f"({lin_text(p, q)})°"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"given_t": self._label(params["g_form"], params["g"]), "x_t": self._label(params["x_form"], None),
                "relation_t": _RELATION_WORDS[params["relation"]], "find_angle": params["x_form"] == [1, 0],
                **({"two_lines": True, "h_t": degrees_text(params["h"]), "h_line": ("AB", "CD")[params["h_pos"][0]]}
                   if params.get("h") is not None else {"two_lines": False})}

    def _two_transversals(self, params: dict[str, Any]) -> Figure:
        """The parallels crossed by the transversal ST (angles g and x) and a second line UV (angle h at G)."""
        h = 1.1
        d1, d2 = _run(params["phi"]), _run(params["psi"])
        c1, c2 = -_SPREAD / 2, _SPREAD / 2
        pts = {"E": (c1 + h * d1, h), "F": (c1 - h * d1, -h), "G": (c2 + h * d2, h), "H": (c2 - h * d2, -h),
               "S": (c1 + d1 * (h + 1.0), h + 1.0), "T": (c1 - d1 * (h + 1.0), -h - 1.0),
               "U": (c2 + d2 * (h + 1.0), h + 1.0), "V": (c2 - d2 * (h + 1.0), -h - 1.0)}
        left = min(pts[k][0] for k in "EFGH") - 1.3
        right = max(pts[k][0] for k in "EFGH") + 1.3
        pts.update({"A": (left, h), "B": (right, h), "C": (left, -h), "D": (right, -h)})
        # Rays from each crossing, in position order: right, up its transversal, left, down.
        rays = {"E": ("B", "S", "A", "F"), "F": ("D", "E", "C", "T"), "G": ("B", "U", "A", "H"),
                "H": ("D", "G", "C", "V")}
        # The arrows go near the right-hand ends, clear of both crossings and their angle marks.
        arrow_at = round((right - left - 0.5) / (right - left), 4)
        els: list[dict[str, Any]] = [
            {"id": "line_AB", "type": "segment", "from": "A", "to": "B", "arrows": 1, "arrow_at": arrow_at},
            {"id": "line_CD", "type": "segment", "from": "C", "to": "D", "arrows": 1, "arrow_at": arrow_at},
            {"id": "line_ST", "type": "segment", "from": "T", "to": "S"},
            {"id": "line_UV", "type": "segment", "from": "V", "to": "U"},
            *vertex_labels("ABCD"),
        ]
        marks = (("angle_given", "EF", params["given_pos"], degrees_text(params["g"]), params["g"]),
                 ("angle_x", "EF", params["x_pos"], self._label(params["x_form"], None), None),
                 ("angle_h", "GH", params["h_pos"], degrees_text(params["h"]), params["h"]))
        for el_id, at, (line, p), text, value in marks:
            r = rays[at[line]]
            el = {"id": el_id, "type": "angle_mark", "at": at[line], "arms": [r[p], r[(p + 1) % 4]], "text": text,
                  "size": 0.8}
            if value is not None:
                el["value"] = value
            if text == "x":
                el["style"] = "italic"
            els.append(el)
        return Figure(self.figure_kind, figure_spec(pts, els, (4.4, 2.6)))

    def figure(self, params: dict[str, Any]) -> Figure:
        if params.get("h") is not None:
            return self._two_transversals(params)
        phi = math.radians(params["phi"])
        dx = 1.0 / math.tan(phi)  # transversal run per unit rise
        h = 1.5 if params.get("protractor") else 1.1  # half the gap: room for a protractor and the other label
        pts = {"A": (-2.6, h), "B": (2.6, h), "C": (-2.6, -h), "D": (2.6, -h), "E": (h * dx, h),
               "F": (-h * dx, -h), "S": (dx * (h + 1.0), h + 1.0), "T": (-dx * (h + 1.0), -h - 1.0)}
        # Rays from each intersection, in position order: right, up the transversal, left, down.
        rays = {0: ("B", "S", "A", "F"), 1: ("D", "E", "C", "T")}
        centre = {0: "E", 1: "F"}
        els: list[dict[str, Any]] = [
            {"id": "line_AB", "type": "segment", "from": "A", "to": "B", "arrows": 1},
            {"id": "line_CD", "type": "segment", "from": "C", "to": "D", "arrows": 1},
            {"id": "line_ST", "type": "segment", "from": "T", "to": "S"},
            *vertex_labels("ABCD"),
        ]
        for el_id, pos, text in (("angle_given", params["given_pos"], self._label(params["g_form"], params["g"])),
                                 ("angle_x", params["x_pos"], self._label(params["x_form"], None))):
            line, p = pos
            r = rays[line]
            el = {"id": el_id, "type": "angle_mark", "at": centre[line], "arms": [r[p], r[(p + 1) % 4]],
                  "text": text, "size": 0.8}
            if el_id == "angle_given" and params["g"] is not None:
                el["value"] = params["g"]
            if text == "x":
                el["style"] = "italic"
            els.append(el)
        if params.get("protractor"):  # the marked angle is measured: its arc stays, its number goes
            line, p = params["given_pos"]
            r = rays[line]
            horizontal, slanted = (r[p], r[(p + 1) % 4]) if p in (0, 2) else (r[(p + 1) % 4], r[p])
            del els[-2]["text"], els[-2]["value"]  # the protractor holds the true angle; nothing prints it here
            els.insert(0, protractor(centre[line], horizontal, slanted, 1.5, params["protractor"], params["g"]))
            return Figure(self.figure_kind, figure_spec(pts, els, (4.4, 3.8)))
        return Figure(self.figure_kind, figure_spec(pts, els, (3.4, 2.5)))
