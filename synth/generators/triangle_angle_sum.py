"""Angle sums: the missing angle of a triangle (two given, isosceles, in x) or of a pentagon or hexagon."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._display import num, step
from synth.generators._figure import (
    PROTRACTOR_SHARE,
    TRIANGLE_NAMES,
    FigureFamily,
    Quantity,
    degrees_text,
    figure_spec,
    pick,
    protractor,
    tri_by_angles,
    tri_points,
    vertex_labels,
)
from synth.generators._linear import lin_text, solve_linear
from synth.generators.base import Derivation, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure

POLYGON_SHARE = 0.4


@dataclass(frozen=True)
class _Level:
    kind: str  # params["level"]: two_angles, isosceles, or algebra (every angle an expression in x)
    protractor_share: float = 0.0  # share whose angle a is measured off a drawn protractor (0: none, nothing drawn)
    polygon_share: float = 0.0  # share asked as the last angle of a pentagon or hexagon instead (0: none)


_LEVELS = {"easy": _Level("two_angles", protractor_share=PROTRACTOR_SHARE), "medium": _Level("isosceles"),
           "hard": _Level("algebra", polygon_share=POLYGON_SHARE)}


@register
class TriangleAngleSum(FigureFamily):
    """easy: two angles given; medium: isosceles (one angle and the equal-side marks); hard: angles in x, or the
    last angle of a pentagon or hexagon whose sides are counted off the drawing."""

    id = "geometry.triangle.angle_sum"
    domain = "geometry"
    subdomain = "angles"
    grade_band = "6-8"
    malrules = (
        MalRule("angle_sum_360", "incorrect_fact", "uses 360° as the angle sum of a triangle"),
        MalRule("isosceles_not_shared", "formula_misuse",
                "does not share the remaining angle between the two equal base angles"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        names = pick(rng, TRIANGLE_NAMES)
        if level.polygon_share and rng.random() < level.polygon_share:
            return self._sample_polygon(rng)
        samplers = {"two_angles": self._sample_two_angles, "isosceles": self._sample_isosceles,
                    "algebra": self._sample_algebra}
        return samplers[level.kind](rng, names, level)

    @staticmethod
    def _sample_two_angles(rng: np.random.Generator, names: str, level: _Level) -> dict[str, Any]:
        if level.protractor_share and rng.random() < level.protractor_share:
            # Angle a is measured with the protractor drawn on it (to the nearest 5°), b is printed.
            scale = pick(rng, ("outer", "inner"))
            while True:
                a, b = int(rng.integers(8, 23)) * 5, int(rng.integers(25, 106))
                # The measured arm must run well past the protractor's rim (drawn half the base wide).
                arm = math.sin(math.radians(b)) / math.sin(math.radians(a + b))
                # ... and the triangle stays low, so the protractor is drawn large enough to read.
                low = arm * math.sin(math.radians(a)) <= 0.8
                if 180 - a - b >= 20 and a > b and arm >= 0.6 and low:
                    return {"level": "two_angles", "names": names, "a": a, "b": b, "protractor": scale}
        while True:
            a, b = int(rng.integers(25, 111)), int(rng.integers(25, 111))
            if 180 - a - b >= 20:
                return {"level": "two_angles", "names": names, "a": a, "b": b}

    @staticmethod
    def _sample_isosceles(rng: np.random.Generator, names: str, level: _Level) -> dict[str, Any]:
        ask = pick(rng, ("base", "apex"))
        given = int(rng.integers(10, 70)) * 2 if ask == "base" else int(rng.integers(25, 80))
        return {"level": "isosceles", "names": names, "ask": ask, "given_angle": given}

    @staticmethod
    def _sample_algebra(rng: np.random.Generator, names: str, level: _Level) -> dict[str, Any]:
        while True:
            x = int(rng.integers(8, 40))
            forms = [[int(rng.integers(1, 5)), int(rng.integers(-4, 7)) * 5] for _ in range(2)]
            p3 = int(rng.integers(1, 5))
            q3 = 180 - x * (forms[0][0] + forms[1][0] + p3) - forms[0][1] - forms[1][1]
            forms.append([p3, q3])
            # A bare "x" angle would make the unknown itself a given the question states ("find x").
            distinct = len({tuple(f) for f in forms}) == 3 and [1, 0] not in forms
            # Angles of 35°-110°: a flatter triangle has no room inside for three labels like (3x − 10)°.
            if -40 <= q3 <= 60 and all(35 <= p * x + q <= 110 for p, q in forms) and distinct:
                return {"level": "algebra", "names": names, "forms": forms}

    @staticmethod
    def _sample_polygon(rng: np.random.Generator) -> dict[str, Any]:
        """A convex pentagon or hexagon with every angle but x printed, its corners not lettered.

        How many sides it has is counted off the drawing (the text does not name the shape), which is
        where a pupil going round the corners counts the first one again. Angles are whole multiples of
        5° between 85° and 165°, and the shape must close with sides of similar lengths (see
        ``polygon_points``), so it looks like a worksheet's irregular polygon, not a sliver.
        """
        while True:
            n = int(rng.integers(5, 7))
            mean = 180 * (n - 2) / n
            known = [int(rng.integers(-4, 5)) * 5 + 5 * round(mean / 5) for _ in range(n - 1)]
            x = 180 * (n - 2) - sum(known)
            at = int(rng.integers(n))
            if not 85 <= x <= 165 or x in known or len(set(known)) < n - 2:
                continue
            angles = [*known[:at], x, *known[at:]]
            if polygon_points(angles) is not None:
                return {"level": "polygon", "sides": n, "known": known, "x_at": at}

    def angles(self, params: dict[str, Any]) -> tuple[float, ...]:
        """True angles at the vertices (degrees), for drawing."""
        if params["level"] == "polygon":
            known, at = params["known"], params["x_at"]
            return tuple(float(v) for v in (*known[:at], self.target(params), *known[at:]))
        if params["level"] == "two_angles":
            return params["a"], params["b"], 180 - params["a"] - params["b"]
        if params["level"] == "isosceles":
            g = params["given_angle"]
            base = (180 - g) / 2 if params["ask"] == "base" else g
            return base, base, 180 - 2 * base
        x = self.target(params)
        return tuple(float(p * x + q) for p, q in params["forms"])  # type: ignore[return-value]

    def valid(self, params: dict[str, Any]) -> bool:
        if params["level"] == "polygon":  # the angle a (mis)counted polygon leaves for x, reflex or not
            return 0 < self._polygon_x(params) < 360
        a = self.angles(params)
        return all(v > 0 for v in a)

    @staticmethod
    def _polygon_x(params: dict[str, Any]) -> sympy.Integer:
        """x as the working finds it: the angle sum of a polygon with ``sides`` sides less the printed angles."""
        return sympy.Integer(180 * (params["sides"] - 2) - sum(params["known"]))

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        if params.get("protractor") and params["image_role"] == "required":
            return self._protractor_readings(params)
        if params["level"] == "polygon":
            if params["image_role"] != "required":
                return ()
            # The corners counted round the drawing: the first one counted again at the end (one side more).
            # One fewer leaves x negative, which valid() rules out.
            n = params["sides"]
            return effective_readings(self, params, (Reading("sides", "polygon", "miscount", (n + 1, n - 1)),))
        out = list(super().figure_readings(params))
        if params["image_role"] == "required" and params["level"] == "isosceles":
            # The equal-side marks read as meeting at another vertex: the given apex taken for a base angle.
            other = "apex" if params["ask"] == "base" else "base"
            out.append(Reading("ask", f"tick_{params['names'][0]}{params['names'][2]}", "misread_relation", (other,)))
        return effective_readings(self, params, out)

    def _protractor_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """Angle a read off the protractor, angle b printed.

        misread_scale: a read on the protractor's other scale (the one whose 0 is not on the arm the
        angle starts from), 180° − a; misread_value: the neighbouring 5° tick. Angle b keeps its
        printed-number misreads; swapping b with a reading from a scale is no label misread.
        """
        a = params["a"]
        printed = [r for r in super().figure_readings(params) if r.param == "b" and r.kind == "misread_value"]
        measured = (Reading("a", "protractor", "misread_scale", (180 - a,)),
                    Reading("a", "protractor", "misread_value", (a - 5, a + 5)))
        return effective_readings(self, params, (*printed, *measured))

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        if params["level"] == "polygon":
            return [Quantity("number of sides", "sides", "polygon", ""),
                    *(Quantity(f"angle {i + 1}", "known", f"angle_{i + 1}", "°", text=str(v))
                      for i, v in enumerate(params["known"]))]
        n = params["names"]
        if params["level"] == "two_angles":
            first = "protractor" if params.get("protractor") else f"angle_{n[0]}"
            return [Quantity(f"angle {n[0]}", "a", first, "°"), Quantity(f"angle {n[1]}", "b", f"angle_{n[1]}", "°")]
        if params["level"] == "isosceles":
            at = n[0] if params["ask"] == "apex" else n[2]
            return [Quantity(f"angle {at}", "given_angle", f"angle_{at}", "°")]
        return [Quantity(f"angle {v}", "forms", f"angle_{v}", "°", text=f"{lin_text(p, q)}")
                for v, (p, q) in zip(n, params["forms"])]

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        total = 360 if mal == "angle_sum_360" else 180
        level = params["level"]
        if mal == "isosceles_not_shared" and level != "isosceles":
            return None
        if level == "polygon":
            return None if mal else self._polygon_steps(params, d)
        if level == "two_angles":
            a, b = params["a"], params["b"]
            step(d, "angle_sum" if total == 180 else "mal:angle_sum_360", ["-", total, ["group", ["+", a, b]]])
            s = d.compute(sympy.Integer(a + b))
            step(d, "add", ["-", total, num(s)], s)
            c = d.compute(total - s)
            step(d, "subtract", num(c), c)
            return d.steps
        if level == "isosceles":
            g = params["given_angle"]
            share = mal != "isosceles_not_shared"
            rule = "mal:" + mal if mal else "isosceles_base_angles"
            if params["ask"] == "base":
                node = ["/", ["group", ["-", total, g]], 2] if share else ["-", total, g]
                step(d, rule, node)
                rest = d.compute(sympy.Integer(total - g))
                if share:
                    step(d, "subtract", ["/", num(rest), 2], rest)
                    ans = d.compute(rest / 2)
                    step(d, "halve", num(ans), ans)
                else:
                    step(d, "subtract", num(rest), rest)
                return d.steps
            node = ["-", total, ["*", 2, g]] if share else ["-", total, g]
            step(d, rule, node)
            if share:
                two = d.compute(sympy.Integer(2 * g))
                step(d, "double", ["-", total, num(two)], two)
                ans = d.compute(total - two)
            else:
                ans = d.compute(sympy.Integer(total - g))
            step(d, "subtract", num(ans), ans)
            return d.steps
        forms = [tuple(f) for f in params["forms"]]
        solve_linear(d, forms, [(0, total)], "angle_sum" if total == 180 else "mal:angle_sum_360")
        return d.steps

    @staticmethod
    def _polygon_steps(params: dict[str, Any], d: Derivation) -> list[StepDraft]:
        """x = (n − 2) × 180 − (the printed angles), worked left to right."""
        n, known = params["sides"], params["known"]
        printed: E.Node = ["group", E.sum_of(list(known))]
        step(d, "polygon_angle_sum", ["-", ["*", ["group", ["-", n, 2]], 180], printed])
        m = d.compute(sympy.Integer(n - 2))
        step(d, "subtract", ["-", ["*", num(m), 180], printed], m)
        total = d.compute(m * 180)
        step(d, "multiply", ["-", num(total), printed], total)
        given = d.compute(sympy.Integer(sum(known)))
        step(d, "add", ["-", num(total), num(given)], given)
        x = d.compute(total - given)
        step(d, "subtract", num(x), x)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # The exterior-angle route: the unknown angle is 180° minus the sum of the others.
        if params["level"] == "polygon":  # exterior angles add to 360°, whatever the number of sides
            turned = sum(180 - sympy.Integer(a) for a in params["known"])
            return 180 - (360 - turned)
        if params["level"] == "two_angles":
            return sympy.Integer(180) - params["a"] - params["b"]
        if params["level"] == "isosceles":
            g = params["given_angle"]
            return sympy.Rational(180 - g, 2) if params["ask"] == "base" else sympy.Integer(180 - 2 * g)
        p = sum(f[0] for f in params["forms"])
        q = sum(f[1] for f in params["forms"])
        return sympy.Rational(180 - q, p)

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        if params["level"] == "algebra":
            return f"x = {E.num_text(answer)}", f"x = {E.num_latex(answer)}"
        return f"{E.num_text(answer, decimal=True)}°", rf"{E.num_latex(answer, decimal=True)}^\circ"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        if params["level"] == "polygon":
            known = [degrees_text(a) for a in params["known"]]
            name = {5: "pentagon", 6: "hexagon"}.get(params["sides"], "polygon")
            return {"shape": f"{name} ({params['sides']} sides)",
                    "angles_t": ", ".join(known[:-1]) + " and " + known[-1],
                    "others": {4: "Four", 5: "Five"}.get(len(known), str(len(known)))}
        n = params["names"]
        ctx: dict[str, Any] = {"tri": n, "v1": n[0], "v2": n[1], "v3": n[2]}
        if params["level"] == "algebra":
            ctx["exprs"] = [lin_text(p, q) for p, q in params["forms"]]
        if params["level"] == "isosceles":
            ctx["apex"] = n[2]
        return ctx

    def figure(self, params: dict[str, Any]) -> Figure:
        if params["level"] == "polygon":
            return self._polygon_figure(params)
        n = params["names"]
        angles = self.angles(params)
        # Isosceles triangles stand on their base (apex up), the way the equal sides are usually shown.
        pts = tri_points(n, 4.0, angles[0], angles[1]) if params["level"] == "isosceles" else tri_by_angles(n, angles)
        els: list[dict[str, Any]] = [{"id": f"triangle_{n}", "type": "polygon", "points": list(n)}]
        els += vertex_labels(n)
        arms = {n[0]: [n[1], n[2]], n[1]: [n[2], n[0]], n[2]: [n[0], n[1]]}
        level = params["level"]
        if level == "two_angles":
            texts = {n[0]: (degrees_text(params["a"]), params["a"]), n[1]: (degrees_text(params["b"]), params["b"]),
                     n[2]: ("x", None)}
        elif level == "isosceles":
            g = params["given_angle"]
            if params["ask"] == "base":
                texts = {n[2]: (degrees_text(g), g), n[0]: ("x", None)}
            else:
                texts = {n[0]: (degrees_text(g), g), n[2]: ("x", None)}
            # The apex is the third vertex; the equal sides meet there.
            els.append({"id": f"tick_{n[0]}{n[2]}", "type": "tick_mark", "on": [n[0], n[2]], "count": 1})
            els.append({"id": f"tick_{n[1]}{n[2]}", "type": "tick_mark", "on": [n[1], n[2]], "count": 1})
        else:
            texts = {v: (f"({lin_text(p, q)})°" if q else f"{lin_text(p, q)}°", None)
                     for v, (p, q) in zip(n, params["forms"])}
        if params.get("protractor"):  # angle a is measured, not printed
            del texts[n[0]]
        for v, (text, value) in texts.items():
            el = {"id": f"angle_{v}", "type": "angle_mark", "at": v, "arms": arms[v], "text": text}
            if text == "x" or value is None:
                el["style"] = "italic" if text == "x" else "sans"
            if value is not None:
                el["value"] = value
            els.append(el)
        if params.get("protractor"):
            # Resting on its base with the measured corner at the left, the way a protractor is laid on.
            pts = tri_points(n, 4.0, angles[0], angles[1])
            els.insert(0, protractor(n[0], n[1], n[2], 1.8, params["protractor"], params["a"]))
            return Figure(self.figure_kind, figure_spec(pts, els, (4.2, 2.9)))
        size = (3.4, 2.5) if level == "algebra" else (2.8, 2.0)
        return Figure(self.figure_kind, figure_spec(pts, els, size))

    def _polygon_figure(self, params: dict[str, Any]) -> Figure:
        angles = self.angles(params)
        pts = polygon_points(angles)
        assert pts is not None, "sampled polygons close"
        names = [f"P{i + 1}" for i in range(len(pts))]
        els: list[dict[str, Any]] = [{"id": "polygon", "type": "polygon", "points": names, "sides": len(names)}]
        known = iter(enumerate(params["known"], start=1))  # angle_1, angle_2, ...: the printed angles in order
        for i, name in enumerate(names):
            el = {"type": "angle_mark", "at": name, "arms": [names[i - 1], names[(i + 1) % len(names)]]}
            if i == params["x_at"]:
                el.update({"id": "angle_x", "text": "x", "style": "italic"})
            else:
                j, v = next(known)
                el.update({"id": f"angle_{j}", "text": degrees_text(v), "value": v})
            els.append(el)
        return Figure(self.figure_kind, figure_spec(dict(zip(names, pts)), els, (3.0, 2.6)))



def polygon_points(angles: tuple[float, ...] | list[float]) -> list[tuple[float, float]] | None:
    """Corners of a convex polygon with these interior angles (degrees, counter-clockwise from the bottom-left
    corner), its first side along the bottom; None when it closes only with sides far from equal.

    All sides but the last two have length 1 and the last two are solved for, so the shape follows from the
    angles alone (the figure needs no stored coordinates); a sampler rejects angles that need a side under
    0.55 or over 1.6.
    """
    n = len(angles)
    heading, x, y = 0.0, 0.0, 0.0
    pts = [(0.0, 0.0)]
    for i in range(n - 2):
        x, y = x + math.cos(heading), y + math.sin(heading)
        pts.append((x, y))
        heading += math.radians(180 - angles[i + 1])
    h2 = heading + math.radians(180 - angles[n - 1])
    # Sides n-2 and n-1 along ``heading`` and ``h2`` bring the walk back to the start: solve for their lengths.
    det = math.cos(heading) * math.sin(h2) - math.sin(heading) * math.cos(h2)
    if abs(det) < 1e-9:
        return None
    a = (-x * math.sin(h2) + y * math.cos(h2)) / det
    b = (x * math.sin(heading) - y * math.cos(heading)) / det
    if not (0.55 <= a <= 1.6 and 0.55 <= b <= 1.6):
        return None
    pts.append((x + a * math.cos(heading), y + a * math.sin(heading)))
    return pts
