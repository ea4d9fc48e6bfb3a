"""The shared machinery of every figure family (plane geometry, solids, right-triangle trigonometry).

- ``FigureFamily``: samples the image role into ``params`` (``required``: the numbers live only
  in the figure; ``useful``: the text states them too), derives ``givens`` and
  ``figure_readings`` from a list of ``Quantity`` records, and turns mal-rules into whole
  solutions through the same ``solve`` that writes the clean one.
- Squared paper (``params["grid"]`` units a square; ``grid_elements``, ``counted``, ``grid_size``,
  ``Quantity.on_grid``): lengths counted in squares and scaled by a printed key, which
  ``FigureFamily.grid_readings`` turns into miscount and misread_scale readings. ``protractor``:
  an angle read off a drawn protractor's two scales instead of printed.
- Small pieces the families share: triangle layouts (``tri_points``, ``tri_by_angles``), labels and
  the way values are written (``degrees_text``, ``length_text``, ``area_unit``), ``pick`` and
  ``neighbour_misreads`` (the data families use these two as well).

Insufficient items (a needed value in neither text nor figure) are not generated: they have no
verifiable solution steps, and the verifier has no notion of a correct refusal yet.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from synth.generators.base import Derivation, Family, Reading, StepDraft, effective_readings
from synth.presentation import label_last, read_line, unit_last
from synth.records import Given

ROLES = ("required", "useful")
UNITS = ("cm", "m", "mm", "in", "ft")
TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29), (9, 40, 41))  # Pythagorean, smallest first


@dataclass(frozen=True)
class Quantity:
    """A stated value: its name, the ``params`` key holding it, its figure element and unit."""

    name: str
    param: str
    element: str
    unit: str = ""
    text: str | None = None  # the value as stated, when params[param] is not it (an expression)
    on_grid: bool = False  # counted in squares on squared paper (``params["grid"]`` units each), not printed


LOOKALIKE = {"1": "7", "7": "1", "3": "8", "8": "3", "5": "6", "6": "5", "0": "8", "9": "4", "4": "9", "2": "7"}


def radius_as_diameter(params: dict[str, Any], element: str) -> tuple[Reading, ...]:
    """The labelled radius taken for a diameter (it is drawn from the centre, read as going across).

    What is given and its length change together, so it is one misread of two parameters. The
    opposite slip (a diameter used as the radius) is left to the families' ``diameter_as_radius``
    mal-rule, which already writes that exact solution.
    """
    if params.get("given") != "radius":
        return ()
    return (Reading("given", element, "misread_label", (("diameter", params["r"]),), also=("d",)),)


# Squared paper: on a share of problems the lengths are not printed but drawn on a grid whose key
# says what one square is worth, so a solver counts squares and multiplies by the key.
GRID_STEPS = (2, 3, 5, 10)
GRID_SHARE = 0.5


def grid_elements(params: dict[str, Any], origin: str) -> list[dict[str, Any]]:
    """The squared paper (lines through point ``origin``) and its key, for a figure with ``params["grid"]``."""
    k, unit = params["grid"], params["unit"]
    return [{"id": "grid", "type": "gridline", "origin": origin, "step": k},
            {"id": "grid_key", "type": "legend", "text": f"1 square = {k} {unit}", "value": k}]


def counted(element: dict[str, Any], k: int) -> dict[str, Any]:
    """A length element as drawn on squared paper: no printed text, and its number of ``squares``
    instead of a ``value`` (which a figure description would read out as a printed label)."""
    out = {key: v for key, v in element.items() if key not in ("text", "value", "style", "text_at")}
    return {**out, "squares": element["value"] // k}


def grid_size(params: dict[str, Any], span: tuple[float, float]) -> tuple[float, float]:
    """Figure size (inches) giving squares of at most 0.3 in (about squared paper's 5-8 mm) over ``span``.

    ``span`` is the drawing's width and height in length units; the extra inches leave room for
    vertex letters around the drawing and the key under it.
    """
    across, up = span[0] / params["grid"], span[1] / params["grid"]
    square = min(0.3, 2.4 / max(across, 1), 1.9 / max(up, 1))
    return (round(max(2.2, across * square + 0.9), 2), round(up * square + 1.0, 2))


# A protractor laid on one angle: the angle is read off its scale instead of printed (misread_scale:
# the other of its two scales).
PROTRACTOR_SHARE = 0.5


def protractor(vertex: str, base: str, side: str, radius: float, scale: str, value: int) -> dict[str, Any]:
    """A protractor centred on ``vertex``, its straight edge along ``vertex``-``base``, on ``side``'s side.

    ``scale`` (outer or inner) is the scale whose 0 lies on the ``base`` arm: the one to read.
    ``radius`` is in the figure's length units; ``value`` is the true angle it shows.
    """
    if scale not in ("outer", "inner"):
        raise ValueError(f"protractor scale must be 'outer' or 'inner', got {scale!r}")
    return {"id": "protractor", "type": "object", "name": "protractor", "at": vertex, "base": base, "side": side,
            "radius": round(radius, 4), "scale": scale, "value": value}


def neighbour_misreads(v: int) -> list[int]:
    """Values a glance could turn v into: swapped digits, one look-alike digit (3/8, 1/7, 5/6)."""
    s = str(v)
    out = []
    if len(s) == 2 and s[0] != s[1] and s[1] != "0":
        out.append(int(s[::-1]))
    for i, ch in enumerate(s):
        alt = s[:i] + LOOKALIKE[ch] + s[i + 1:]
        if not alt.startswith("0"):
            out.append(int(alt))
    return [m for m in dict.fromkeys(out) if m != v and m > 0][:3]


class FigureFamily(Family):
    """A family whose problem comes with a figure; the image role is sampled into ``params``."""

    figure_kind = "plane_geometry"
    image_roles = ROLES

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        params = self.sample_values(rng, difficulty)
        params["image_role"] = ROLES[int(rng.integers(len(ROLES)))]
        if self.counted_in_figure(params):
            params["image_role"] = "required"
        unit = read_line(self.answer_text(params, self.target(params))[0]).unit
        if unit:  # the solution writes it after its answer, and the verifier checks it there
            params["answer_unit"] = unit
        return params

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        raise NotImplementedError

    def counted_in_figure(self, params: dict[str, Any]) -> bool:
        """Whether a given exists only in the drawing (squares, coins, balls to count), so the figure is required."""
        return False

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        """The numbers the problem gives, each drawn in the figure."""
        raise NotImplementedError

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        """The worked solution; with ``mal`` the one a student applying that mal-rule writes (None: n/a)."""
        raise NotImplementedError

    def valid(self, params: dict[str, Any]) -> bool:
        """Whether params describe a drawable figure (used to keep misreads plausible)."""
        return True

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        steps = self.solve(params, Derivation(overrides), None)
        assert steps is not None
        return self._written(params, steps)

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        known = [m.id for m in self.malrules]
        if rule not in known:
            raise KeyError(f"{self.id} has no mal-rule {rule!r}; known: {known}")
        steps = self.solve(params, Derivation(), rule)
        if not steps or self.answer_of(steps[-1].value) == self.target(params):
            return None
        return self._written(params, steps)

    def answer_label(self, params: dict[str, Any]) -> str | None:
        """The name a pupil writes before the answer (``RP = 27 mm``), or None for a bare answer."""
        return None

    def _written(self, params: dict[str, Any], steps: list[StepDraft]) -> list[StepDraft]:
        """The last line as a pupil writes it: the answer's name before it, its unit after it."""
        if params.get("answer_unit"):
            steps = unit_last(steps, params["answer_unit"])
        label = self.answer_label(params)
        return label_last(steps, label) if label else steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return self.derive(params)[0].value

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        in_figure = params["image_role"] == "required"
        return tuple(Given(q.name, q.text if q.text is not None else str(params[q.param]),
                           f"figure:{q.element}" if in_figure else "text", q.unit)
                     for q in self.quantities(params))

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """Misreads of the values that live only in the figure (none when the text states them)."""
        if params["image_role"] != "required":
            return ()
        quantities = self.quantities(params)
        out = []
        for q in quantities:
            v = params[q.param]
            if not isinstance(v, int) or q.on_grid:  # no printed number to misread: see grid_readings
                continue
            swapped = [params[o.param] for o in quantities if o.unit == q.unit and o.param != q.param
                       and isinstance(params[o.param], int) and not o.on_grid]
            for kind, cands in (("misread_value", neighbour_misreads(v)), ("misread_label", swapped)):
                keep = tuple(m for m in dict.fromkeys(cands) if m != v)
                if keep:
                    out.append(Reading(q.param, q.element, kind, keep))
        # one pass over all of them keeps the misreads that change the answer, and a working two readings
        # write keeps the first one's label
        return effective_readings(self, params, (*out, *self.grid_readings(params, quantities),
                                                 *self.joint_readings(params)))

    def grid_readings(self, params: dict[str, Any], quantities: list[Quantity]) -> tuple[Reading, ...]:
        """Misreads of lengths counted on squared paper (``Quantity.on_grid``; key ``params["grid"]``).

        miscount: one square more or fewer along a side (counting grid lines instead of squares, or
        losing one); misread_scale: the key ignored, every counted length taken as its number of
        squares (1 square = 1 unit), which changes the key and all counted lengths together.
        """
        k = params.get("grid")
        squares = [q for q in quantities if q.on_grid and isinstance(params[q.param], int)]
        if not k or not squares:
            return ()
        out = []
        for q in squares:
            v = params[q.param]
            keep = tuple(m for m in (v - k, v + k) if m > 0)
            if keep:
                out.append(Reading(q.param, q.element, "miscount", keep))
        keys = tuple(dict.fromkeys(q.param for q in squares))
        if k != 1:
            unscaled = Reading("grid", "grid_key", "misread_scale", ((1, *(params[key] // k for key in keys)),),
                               also=keys)
            out.append(unscaled)
        return tuple(out)

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """Misreads that change several parameters at once (see ``Reading.also``); unfiltered, none by default."""
        return ()

    def unit_of(self, params: dict[str, Any]) -> str:
        return params.get("unit", "")

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "given": params["image_role"] == "useful", **self.context(params)}

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}


def figure_spec(points: dict[str, tuple[float, float]], elements: list[dict[str, Any]],
                size: tuple[float, float] = (3.0, 2.2), **extra: Any) -> dict[str, Any]:
    return {"size_in": list(size), "points": {k: [round(float(x), 4), round(float(y), 4)]
                                              for k, (x, y) in points.items()},
            "elements": elements, **extra}


def tri_points(names: str, base: float, angle_a: float, angle_b: float) -> dict[str, tuple[float, float]]:
    """A triangle with ``names[0]`` at the origin, ``names[1]`` on the x axis, angles in degrees."""
    a, b = math.radians(angle_a), math.radians(angle_b)
    t = base * math.sin(b) / math.sin(a + b)
    return {names[0]: (0.0, 0.0), names[1]: (base, 0.0), names[2]: (t * math.cos(a), t * math.sin(a))}


def tri_by_angles(names: str, angles: tuple[float, float, float]) -> dict[str, tuple[float, float]]:
    """A triangle with these angles (degrees), its longest side horizontal at the bottom.

    Resting on the longest side keeps the drawing wide rather than a tall sliver, which is how
    a worksheet draws it and leaves room for the angle labels at the base.
    """
    top = max(range(3), key=lambda i: (angles[i], -i))
    i, j = (k for k in range(3) if k != top)
    pts = tri_points(names[i] + names[j] + names[top], 4.0, angles[i], angles[j])
    return pts


def min_angle(sides: list[int]) -> float:
    """The smallest angle (degrees) of a triangle with these sides: slivers make unreadable figures."""
    a, b, c = sorted(sides)
    return math.degrees(math.acos((b * b + c * c - a * a) / (2 * b * c)))


def vertex_labels(names: str) -> list[dict[str, Any]]:
    return [{"id": f"label_{n}", "type": "label", "at": n, "text": n} for n in names]


TRIANGLE_NAMES = ("ABC", "PQR", "XYZ", "DEF", "LMN", "KLM", "RST", "UVW", "GHJ")


def pick(rng: np.random.Generator, options: tuple[Any, ...] | list[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


def degrees_text(v: Any) -> str:
    return f"{v}°"


def length_text(v: Any, unit: str) -> str:
    return f"{v} {unit}"


def area_unit(unit: str) -> str:
    return f"{unit}²"
