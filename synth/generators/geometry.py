"""Plane geometry with figures: angle sums, Pythagoras, similar triangles, circles, polygons, parallel lines.

Also the shared machinery of every figure family (solids and right-triangle trigonometry use it):

- ``show``: display trees from ``expr`` plus the leaf ``"pi"``, ``["sqrt", a]`` and
  ``["sin" | "cos" | "tan", degrees]``; one tree gives the exact value, the text and the LaTeX.
- ``FigureFamily``: samples the image role into ``params`` (``required``: the numbers live only
  in the figure; ``useful``: the text states them too), derives ``givens`` and
  ``figure_readings`` from a list of ``Quantity`` records, and turns mal-rules into whole
  solutions through the same ``_solve`` that writes the clean one.
- Squared paper (``params["grid"]`` units a square; ``grid_elements``, ``counted``, ``grid_size``,
  ``Quantity.on_grid``): lengths counted in squares and scaled by a printed key, which
  ``FigureFamily.grid_readings`` turns into miscount and misread_scale readings. ``protractor``:
  an angle read off a drawn protractor's two scales instead of printed.

Insufficient items (a needed value in neither text nor figure) are not generated: they have no
verifiable solution steps, and the verifier has no notion of a correct refusal yet.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators.base import (
    Derivation,
    Family,
    MalRule,
    Reading,
    StepDraft,
    effective_readings,
)
from synth.presentation import Vocabulary, label_last, read_line, unit_last
from synth.records import Figure, Given

ROLES = ("required", "useful")
X = sympy.Symbol("x")
UNITS = ("cm", "m", "mm", "in", "ft")

# -- display trees with π, roots and trig -------------------------------------------------------

_PLACEHOLDER = 9_000_000_001  # ints E prints verbatim and no school problem contains
_TRIG = {"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan}
_COEF_TEXT = re.compile(r"(?<![\d/.^])(\d+) × (π|√)")
_COEF_LATEX = re.compile(r"(?<![\d/.{}^])(\d+) \\times (\\pi|\\sqrt)")


def value_of(node: E.Node) -> sympy.Expr:
    """Exact value of a display tree (SymPy, so π and roots stay exact)."""
    if node == "pi":
        return sympy.pi
    if isinstance(node, (int, str)):
        return E.sym(node)
    op, *args = node
    if op == "sqrt":
        return sympy.sqrt(value_of(args[0]))
    if op in _TRIG:
        return _TRIG[op](sympy.pi * value_of(args[0]) / 180)
    return E.combine(op, [value_of(a) for a in args])


def show(node: E.Node) -> tuple[sympy.Expr, str, str]:
    """(value, text, latex) of a tree; π, √ and trig leaves are written by us, the rest by ``expr``."""
    texts: dict[int, tuple[str, str]] = {}

    def swap(n: E.Node) -> E.Node:
        if n == "pi":
            key = _PLACEHOLDER + len(texts)
            texts[key] = ("π", r"\pi")
            return key
        if isinstance(n, list) and n[0] == "sqrt":
            inner = n[1]
            _, t, lt = show(inner)
            t = t if isinstance(inner, int) else f"({t})"
            key = _PLACEHOLDER + len(texts)
            texts[key] = ("√" + t, rf"\sqrt{{{lt}}}")
            return key
        if isinstance(n, list) and n[0] in _TRIG:
            key = _PLACEHOLDER + len(texts)
            texts[key] = (f"{n[0]} {n[1]}°", rf"\{n[0]} {n[1]}^\circ")
            return key
        if isinstance(n, list):
            return [n[0], *(swap(a) for a in n[1:])]
        return n

    plain = swap(node)
    text, latex = E.text(plain), E.latex(plain)
    for key in sorted(texts, reverse=True):
        text, latex = text.replace(str(key), texts[key][0]), latex.replace(str(key), texts[key][1])
    text = _COEF_TEXT.sub(r"\1\2", text)
    latex = _COEF_LATEX.sub(r"\1\2", latex)
    return value_of(node), text, latex


def step(d: Derivation, rule: str, node: E.Node, result: sympy.Basic | None = None) -> None:
    """Append a step whose value, text and LaTeX all come from one tree."""
    v, text, latex = show(node)
    d.add(StepDraft(rule=rule, value=v, text=text, latex=latex, result=result))


def pi_times(coef: sympy.Basic) -> E.Node:
    """``25π``, ``25π/2`` (a rational multiple of π as pupils write it)."""
    f = E.to_fraction(coef)
    if f.denominator == 1:
        return ["*", int(f), "pi"]
    return ["frac", ["*", f.numerator, "pi"], f.denominator]


def surd(n: sympy.Basic) -> E.Node:
    """√n in simplest form: an integer, ``√k`` or ``c√k`` (n a positive integer)."""
    n = int(n)
    c, k = 1, n
    for f in range(int(math.isqrt(n)), 1, -1):
        if n % (f * f) == 0:
            c, k = f, n // (f * f)
            break
    if k == 1:
        return c
    return ["sqrt", k] if c == 1 else ["*", c, ["sqrt", k]]


def square_factor(n: int) -> int:
    """The largest square dividing n (1 when n is square-free)."""
    for f in range(int(math.isqrt(n)), 1, -1):
        if n % (f * f) == 0:
            return f * f
    return 1


def num(v: sympy.Basic) -> E.Node:
    """A leaf for a computed number: integers plainly, terminating decimals as decimals, else a/b."""
    return E.leaf(v, decimal=True)


# -- linear equations in x (angle problems with algebraic labels) ------------------------------


def lin_text(p: int, q: int, latex: bool = False) -> str:
    """``3x + 10``, ``x − 5``, ``2x``, ``40``."""
    minus = "-" if latex else "−"
    if p == 0:
        return str(q).replace("-", minus)
    head = "x" if p == 1 else f"{p}x"
    if q == 0:
        return head
    return f"{head} + {q}" if q > 0 else f"{head} {minus} {-q}"


def lin_sum(forms: list[tuple[int, int]], latex: bool = False) -> str:
    """Forms added up, each with a constant bracketed after the first: ``2x + (x + 20) + 65``."""
    parts = []
    for i, (p, q) in enumerate(forms):
        t = lin_text(p, q, latex)
        if i and p and q:
            t = rf"\left({t}\right)" if latex else f"({t})"
        parts.append(t)
    return " + ".join(parts)


def eq_step(d: Derivation, rule: str, lhs: str, lhs_latex: str, lhs_value: sympy.Expr, rhs: str, rhs_latex: str,
            rhs_value: sympy.Expr, result: sympy.Basic | None = None) -> None:
    d.add(StepDraft(rule=rule, value=sympy.Eq(lhs_value, rhs_value, evaluate=False), text=f"{lhs} = {rhs}",
                    latex=f"{lhs_latex} = {rhs_latex}", result=result))


def solve_linear(d: Derivation, left: list[tuple[int, int]], right: list[tuple[int, int]], first_rule: str) -> None:
    """Write and solve ``sum(left) = sum(right)`` the school way: collect, move, divide.

    Step 1 shows the equation as set up from the figure; x ends on the left with a positive
    coefficient (sides are swapped in the set-up if needed).
    """
    def total(forms: list[tuple[int, int]]) -> sympy.Expr:
        return sum((p * X + q for p, q in forms), sympy.Integer(0))

    eq_step(d, first_rule, lin_sum(left), lin_sum(left, True), total(left),
            lin_sum(right), lin_sum(right, True), total(right))
    p_l, q_l = sum(f[0] for f in left), sum(f[1] for f in left)
    p_r, q_r = sum(f[0] for f in right), sum(f[1] for f in right)
    if lin_sum(left) != lin_text(p_l, q_l) or len(right) > 1:
        q_l = int(d.compute(sympy.Integer(q_l)))
        eq_step(d, "collect_like_terms", lin_text(p_l, q_l), lin_text(p_l, q_l, True), p_l * X + q_l,
                lin_text(p_r, q_r), lin_text(p_r, q_r, True), p_r * X + q_r, sympy.Integer(q_l))
    if p_r:  # x on both sides: move the x terms left and the numbers right
        e_l, e_r = f"{lin_text(p_l, 0)} − {lin_text(p_r, 0)}", rf"{lin_text(p_l, 0)} - {lin_text(p_r, 0)}"
        n_t = f"{q_r} − {q_l}" if q_l >= 0 else f"{q_r} + {-q_l}"
        n_l = f"{q_r} - {q_l}" if q_l >= 0 else f"{q_r} + {-q_l}"
        eq_step(d, "move_terms", e_l, e_r, (p_l - p_r) * X, n_t, n_l, sympy.Integer(q_r - q_l))
        p = int(d.compute(sympy.Integer(p_l - p_r)))
        rhs = d.compute(sympy.Integer(q_r - q_l))
        eq_step(d, "simplify", lin_text(p, 0), lin_text(p, 0, True), p * X, E.num_text(rhs), E.num_latex(rhs),
                rhs, rhs)
    else:
        p = p_l
        if q_l:
            n_t = f"{q_r} − {q_l}" if q_l > 0 else f"{q_r} + {-q_l}"
            n_l = f"{q_r} - {q_l}" if q_l > 0 else f"{q_r} + {-q_l}"
            eq_step(d, "subtract_from_both_sides", lin_text(p, 0), lin_text(p, 0, True), p * X, n_t, n_l,
                    sympy.Integer(q_r - q_l))
        rhs = d.compute(sympy.Integer(q_r - q_l))
        if q_l:
            eq_step(d, "simplify", lin_text(p, 0), lin_text(p, 0, True), p * X, E.num_text(rhs), E.num_latex(rhs),
                    rhs, rhs)
    if p != 1:
        eq_step(d, "divide_both_sides", "x", "x", X, f"{E.num_text(rhs)} ÷ {p}", rf"{E.num_latex(rhs)} \div {p}",
                rhs / p)
        x = d.compute(rhs / p)
        eq_step(d, "divide", "x", "x", X, E.num_text(x), E.num_latex(x), x, x)


# -- the figure-family contract -----------------------------------------------------------------


@dataclass(frozen=True)
class Quantity:
    """A stated value: its name, the ``params`` key holding it, its figure element and unit."""

    name: str
    param: str
    element: str
    unit: str = ""
    text: str | None = None  # the value as stated, when params[param] is not it (an expression)
    on_grid: bool = False  # counted in squares on squared paper (``params["grid"]`` units each), not printed


_LOOKALIKE = {"1": "7", "7": "1", "3": "8", "8": "3", "5": "6", "6": "5", "0": "8", "9": "4", "4": "9", "2": "7"}


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
        alt = s[:i] + _LOOKALIKE[ch] + s[i + 1:]
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
        unit = read_line(self.answer_text(params, self.target(params))[0]).unit
        if unit:  # the solution writes it after its answer, and the verifier checks it there
            params["answer_unit"] = unit
        return params

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        raise NotImplementedError

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


def _min_angle(sides: list[int]) -> float:
    """The smallest angle (degrees) of a triangle with these sides: slivers make unreadable figures."""
    a, b, c = sorted(sides)
    return math.degrees(math.acos((b * b + c * c - a * a) / (2 * b * c)))


def vertex_labels(names: str) -> list[dict[str, Any]]:
    return [{"id": f"label_{n}", "type": "label", "at": n, "text": n} for n in names]


_TRIANGLE_NAMES = ("ABC", "PQR", "XYZ", "DEF", "LMN", "KLM", "RST", "UVW", "GHJ")


def _pick(rng: np.random.Generator, options: tuple[Any, ...] | list[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


def _deg(v: Any) -> str:
    return f"{v}°"


def _len(v: Any, unit: str) -> str:
    return f"{v} {unit}"


def _area_unit(unit: str) -> str:
    return f"{unit}²"


# ============================================================================ angle sum


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
        names = _pick(rng, _TRIANGLE_NAMES)
        if difficulty == "hard" and rng.random() < POLYGON_SHARE:
            return self._sample_polygon(rng)
        if difficulty == "easy":
            if rng.random() < PROTRACTOR_SHARE:
                # Angle a is measured with the protractor drawn on it (to the nearest 5°), b is printed.
                scale = _pick(rng, ("outer", "inner"))
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
        if difficulty == "medium":
            ask = _pick(rng, ("base", "apex"))
            given = int(rng.integers(10, 70)) * 2 if ask == "base" else int(rng.integers(25, 80))
            return {"level": "isosceles", "names": names, "ask": ask, "given_angle": given}
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
            known = [_deg(a) for a in params["known"]]
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
            texts = {n[0]: (_deg(params["a"]), params["a"]), n[1]: (_deg(params["b"]), params["b"]), n[2]: ("x", None)}
        elif level == "isosceles":
            g = params["given_angle"]
            if params["ask"] == "base":
                texts = {n[2]: (_deg(g), g), n[0]: ("x", None)}
            else:
                texts = {n[0]: (_deg(g), g), n[2]: ("x", None)}
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
                el.update({"id": f"angle_{j}", "text": _deg(v), "value": v})
            els.append(el)
        return Figure(self.figure_kind, figure_spec(dict(zip(names, pts)), els, (3.0, 2.6)))


POLYGON_SHARE = 0.4


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


# ============================================================================ Pythagoras

_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29), (9, 40, 41))


@register
class Pythagoras(FigureFamily):
    """easy: hypotenuse from a triple; medium: a leg; hard: a surd answer simplified (√52 = 2√13)."""

    id = "geometry.pythagoras"
    domain = "geometry"
    subdomain = "right_triangles"
    grade_band = "8-9"
    malrules = (
        MalRule("leg_by_adding", "theorem_misapplication", "adds the squares to find a leg instead of subtracting"),
        MalRule("no_square_root", "formula_misuse", "stops at the sum of squares and does not take the square root"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        names, unit, flip = _pick(rng, _TRIANGLE_NAMES), _pick(rng, UNITS), bool(rng.integers(2))
        if difficulty == "easy" and rng.random() < GRID_SHARE:  # legs along the lines of squared paper
            k = _pick(rng, GRID_STEPS)
            a, b, c = (v * k for v in _pick(rng, ((3, 4, 5), (6, 8, 10), (5, 12, 13))))
            if rng.integers(2):
                a, b = b, a
            return {"names": names, "unit": unit, "flip": flip, "find": "hyp", "a": a, "b": b, "c": c, "grid": k}
        if difficulty in ("easy", "medium"):
            a, b, c = _pick(rng, _TRIPLES[:4] if difficulty == "easy" else _TRIPLES)
            k = int(rng.integers(1, 5 if c < 20 else 2))
            a, b, c = a * k, b * k, c * k
            if rng.integers(2):
                a, b = b, a
            return {"names": names, "unit": unit, "flip": flip, "find": "hyp" if difficulty == "easy" else "leg",
                    "a": a, "b": b, "c": c}
        while True:
            find = _pick(rng, ("hyp", "leg"))
            if find == "hyp" and rng.random() < GRID_SHARE:
                k = _pick(rng, GRID_STEPS)
                a, other = int(rng.integers(2, 9)), int(rng.integers(2, 10))
                sq = a * a + other * other
                if math.isqrt(sq) ** 2 != sq:
                    return {"names": names, "unit": unit, "flip": flip, "find": find, "a": a * k, "b": other * k,
                            "c": None, "grid": k}
                continue
            a, other = int(rng.integers(2, 13)), int(rng.integers(2, 16))
            if find == "hyp":
                sq = a * a + other * other
                params = {"a": a, "b": other, "c": None}
            else:
                c = max(a, other) + int(rng.integers(1, 6))
                sq = c * c - a * a
                params = {"a": a, "b": None, "c": c}
            if math.isqrt(sq) ** 2 != sq and square_factor(sq) > 1:
                return {"names": names, "unit": unit, "flip": flip, "find": find, **params}

    def _sides(self, params: dict[str, Any]) -> tuple[float, float, float]:
        a, b, c = params["a"], params["b"], params["c"]
        if b is None:
            b = math.sqrt(c * c - a * a)
        if c is None or params["find"] == "hyp":
            c = math.hypot(a, b)
        return float(a), float(b), float(c)

    def valid(self, params: dict[str, Any]) -> bool:
        return params["find"] == "hyp" or params["c"] > params["a"]

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        n, u = params["names"], params["unit"]
        grid = bool(params.get("grid"))  # only the legs lie along grid lines: a hypotenuse is never counted
        out = [Quantity(f"{n[1]}{n[2]}", "a", f"side_{n[1]}{n[2]}", u, on_grid=grid)]
        if params["find"] == "hyp":
            out.append(Quantity(f"{n[0]}{n[2]}", "b", f"side_{n[0]}{n[2]}", u, on_grid=grid))
        else:
            out.append(Quantity(f"{n[0]}{n[1]}", "c", f"side_{n[0]}{n[1]}", u))
        return out

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """The right angle misplaced: the longer leg taken for the hypotenuse (subtracting squares).

        Which side is which changes what is asked and where each length goes (find, a, b, c together).
        The opposite misread, the hypotenuse taken for a leg, writes exactly the numbers of the
        ``leg_by_adding`` mal-rule; one working must carry one label, so it is left to the mal-rule.
        """
        n, a, b = params["names"], params["a"], params["b"]
        keys = ("find", "a", "b", "c")
        if params["find"] == "leg":
            return ()
        if b > a:  # then a is a leg and b is taken for the hypotenuse
            return (Reading("find", f"side_{n[0]}{n[2]}", "misread_relation", (("leg", a, None, b),), also=keys[1:]),)
        if a > b:
            return (Reading("find", f"side_{n[1]}{n[2]}", "misread_relation", (("leg", b, None, a),), also=keys[1:]),)
        return ()

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        a = params["a"]
        hyp = params["find"] == "hyp"
        if mal == "leg_by_adding" and hyp:
            return None
        other = params["b"] if hyp else params["c"]
        op = "+" if hyp or mal == "leg_by_adding" else "-"
        first, second = (a, other) if hyp else (other, a)
        root = mal != "no_square_root"
        wrap = (lambda n: ["sqrt", n]) if root else (lambda n: n)
        rule = "mal:" + mal if mal else ("pythagoras_hypotenuse" if hyp else "pythagoras_leg")
        step(d, rule, wrap([op, ["pow", first, 2], ["pow", second, 2]]))
        s1 = d.compute(sympy.Integer(first) ** 2)
        step(d, "square", wrap([op, num(s1), ["pow", second, 2]]), s1)
        s2 = d.compute(sympy.Integer(second) ** 2)
        step(d, "square", wrap([op, num(s1), num(s2)]), s2)
        total = d.compute(s1 + s2 if op == "+" else s1 - s2)
        step(d, "add" if op == "+" else "subtract", wrap(num(total)), total)
        if not root:
            return d.steps
        if total > 0 and total.is_Integer and square_factor(int(total)) > 1:
            f = square_factor(int(total))
            if f != total:
                step(d, "square_factor", ["sqrt", ["*", f, int(total) // f]])
            simple = surd(total)
            coef = sympy.Integer(math.isqrt(f))
            result = d.compute(coef)
            if result != coef:  # a slipped coefficient is still written as c√k
                # ``num`` makes the slipped SymPy number a display leaf (value_of cannot read SymPy).
                simple = num(result) if int(total) == f else ["*", num(result), ["sqrt", int(total) // f]]
            step(d, "square_root", simple, result)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Distance formula on coordinates: legs along the axes, hypotenuse between their ends.
        a = sympy.Integer(params["a"])
        if params["find"] == "hyp":
            p, q = sympy.Point(a, 0), sympy.Point(0, params["b"])
            return p.distance(q)
        return sympy.sqrt((params["c"] - a) * (params["c"] + a))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        _, t, lt = show(surd(answer**2))
        return f"{t} {params['unit']}", rf"{lt}\ \mathrm{{{params['unit']}}}"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        n = params["names"]
        return {"right": n[2], "leg1": f"{n[1]}{n[2]}", "leg2": f"{n[0]}{n[2]}", "hyp": f"{n[0]}{n[1]}",
                "tri": n}

    def figure(self, params: dict[str, Any]) -> Figure:
        n, u = params["names"], params["unit"]
        a, b, c = self._sides(params)
        sx = -1.0 if params["flip"] else 1.0
        pts = {n[2]: (0.0, 0.0), n[1]: (0.0, a), n[0]: (sx * b, 0.0)}  # right angle at n[2]
        text = {
            f"{n[1]}{n[2]}": _len(params["a"], u),
            f"{n[0]}{n[2]}": _len(params["b"], u) if params["find"] == "hyp" else "x",
            f"{n[0]}{n[1]}": "x" if params["find"] == "hyp" else _len(params["c"], u),
        }
        value = {f"{n[1]}{n[2]}": params["a"], f"{n[0]}{n[2]}": params["b"], f"{n[0]}{n[1]}": params["c"]}
        els: list[dict[str, Any]] = [{"id": f"triangle_{n}", "type": "polygon", "points": list(n)}, *vertex_labels(n),
                                     {"id": f"right_{n[2]}", "type": "right_angle", "at": n[2], "arms": [n[1], n[0]]}]
        grid = bool(params.get("grid"))
        for side, (p, q) in ((f"{n[1]}{n[2]}", (n[1], n[2])), (f"{n[0]}{n[2]}", (n[0], n[2])),
                             (f"{n[0]}{n[1]}", (n[0], n[1]))):
            el = {"id": f"side_{side}", "type": "segment", "from": p, "to": q, "text": text[side]}
            if text[side] == "x":
                el["style"] = "italic"
            elif value[side] is not None:
                el["value"] = value[side]
                if grid:  # counted in squares, not written
                    el = counted(el, params["grid"])
            els.append(el)
        if grid:
            size = grid_size(params, (b, a))
            return Figure(self.figure_kind, figure_spec(pts, [*grid_elements(params, n[2]), *els], size))
        return Figure(self.figure_kind, figure_spec(pts, els, (2.8, 2.2)))


# ============================================================================ similar triangles


@register
class SimilarTriangles(FigureFamily):
    """easy: whole scale factor; medium: fractional scale factor, either direction; hard: a triangle inside another,
    or (on a share) two meeting at a point, an hourglass with AB ∥ DE."""

    id = "geometry.similar_triangles"
    domain = "geometry"
    subdomain = "similarity"
    grade_band = "8-9"
    malrules = (
        MalRule("additive_scaling", "invalid_inference", "adds the difference between corresponding sides instead "
                "of multiplying by the scale factor"),
        MalRule("inverted_scale_factor", "theorem_misapplication", "multiplies by the scale factor upside down"),
        MalRule("part_for_whole", "invalid_inference", "uses the lower part of the side instead of the whole side"),
    )

    def sample_values(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        unit = _pick(rng, UNITS)
        if difficulty == "hard":
            while True:
                ad, db, de = int(rng.integers(2, 13)), int(rng.integers(1, 10)), int(rng.integers(2, 15))
                bc = sympy.Rational(de * (ad + db), ad)
                if E.is_decimal(E.to_fraction(bc)) and bc.q <= 2 and ad != db:
                    nested = {"level": "nested", "unit": unit, "ad": ad, "db": db, "de": de,
                              "angle": int(rng.integers(50, 75))}
                    # drawn after the nested triangle's values, so the nested problems keep theirs
                    return self._sample_hourglass(rng, unit) if rng.random() < HOURGLASS_SHARE else nested
        names = _pick(rng, (("ABC", "DEF"), ("PQR", "XYZ"), ("ABC", "PQR"), ("LMN", "RST")))
        if difficulty == "easy" and rng.random() < GRID_SHARE:
            return self._sample_grid(rng, unit, names)
        while True:
            small = [int(rng.integers(3, 13)) for _ in range(3)]
            if not (max(small) < sum(small) - max(small) and len(set(small)) == 3 and _min_angle(small) >= 28):
                continue
            if difficulty == "easy":
                k = sympy.Integer(int(rng.integers(2, 4)))
                direction = "up"
            else:
                k = _pick(rng, (sympy.Rational(3, 2), sympy.Rational(5, 2), sympy.Rational(4, 3),
                                sympy.Rational(5, 4), sympy.Rational(5, 3), sympy.Rational(7, 2)))
                direction = _pick(rng, ("up", "down"))
            if any((s * k).q != 1 for s in small):
                continue
            i, j = (int(v) for v in rng.choice(3, size=2, replace=False))
            return {"level": "separate", "unit": unit, "names": list(names), "small": small, "k": str(k),
                    "pair": i, "ask": j, "direction": direction}

    @staticmethod
    def _sample_grid(rng: np.random.Generator, unit: str, names: tuple[str, str]) -> dict[str, Any]:
        """An enlargement on squared paper: two right-angled triangles whose legs run along the grid lines.

        One pair of corresponding legs is counted in squares and scaled by the key; the hypotenuse of
        the small triangle is printed and the large one's is asked (it runs across the squares, so it
        cannot be counted). The three lengths are stored as read (``q_from``, ``q_to``, ``q_known``), so a
        miscount replaces one of them; ``small`` and ``k`` still draw the true figure.

        On a share (``grid_on: small``) only the small triangle is on squared paper and the large one is drawn
        beside it on plain paper: both hypotenuses are printed, the small leg is counted and the large leg
        asked, so the key does not cancel (ignoring it divides the answer by the key).
        """
        g, k = _pick(rng, GRID_STEPS), int(rng.integers(2, 4))
        base, height = (3, 4) if rng.integers(2) else (4, 3)
        small = [base * g, height * g, 5 * g]  # side 0 along the bottom, side 1 up, side 2 the hypotenuse
        i = int(rng.integers(2))
        if rng.random() < SMALL_ON_GRID_SHARE:
            # Only the small triangle on squared paper: its leg i is counted, both hypotenuses printed, and the
            # large triangle's leg i asked (drawn off the grid, so it cannot be counted).
            return {"level": "separate", "unit": unit, "names": list(names), "small": small, "k": str(k),
                    "pair": 2, "ask": i, "direction": "up", "grid": g, "grid_on": "small", "q_from": small[2],
                    "q_to": small[2] * k, "q_known": small[i]}
        return {"level": "separate", "unit": unit, "names": list(names), "small": small, "k": str(k), "pair": i,
                "ask": 2, "direction": "up", "grid": g, "q_from": small[i], "q_to": small[i] * k, "q_known": small[2]}

    @staticmethod
    def _sample_hourglass(rng: np.random.Generator, unit: str) -> dict[str, Any]:
        """Two triangles meeting at C, AB ∥ DE (lines AE and BD cross at C): ABC and EDC are similar, the
        right-hand one turned half a turn, so CE matches AC and CD matches BC. AC, BC and CE are printed; CD asked.

        ``ce_matches`` records the correspondence the figure shows (CE matches AC). The scale factor is 1/2, 2/3,
        4/3, 3/2 or 2, no side is under a third of the longest, and CD and the mirror reading's answer
        (AC × CE ÷ BC) end in at most one half.
        """
        while True:
            ac, bc = int(rng.integers(3, 13)), int(rng.integers(3, 13))
            k = _pick(rng, (sympy.Rational(3, 2), sympy.Integer(2), sympy.Rational(4, 3), sympy.Rational(2, 3),
                            sympy.Rational(1, 2)))
            ce = ac * k
            mirror = sympy.Rational(ac) * ce / bc
            drawn = (ac, bc, ce, bc * k)  # no side under a third of the longest: each has room for its label
            if ac == bc or ce.q != 1 or (bc * k).q > 2 or mirror.q > 2 or max(drawn) > 3 * min(drawn):
                continue
            return {"level": "hourglass", "unit": unit, "ac": ac, "bc": bc, "ce": int(ce), "ce_matches": "AC",
                    "angle": int(rng.integers(45, 76))}

    def _big(self, params: dict[str, Any]) -> list[int]:
        k = sympy.Rational(params["k"])
        return [int(s * k) for s in params["small"]]

    def _known(self, params: dict[str, Any]) -> tuple[int, int, int]:
        """(side with the unknown's partner, its partner, the known side next to the unknown)."""
        if "q_from" in params:  # on squared paper: the lengths as counted and read (a misread replaces one)
            return params["q_from"], params["q_to"], params["q_known"]
        small, big = params["small"], self._big(params)
        i, j = params["pair"], params["ask"]
        if params["direction"] == "up":
            return small[i], big[i], small[j]
        return big[i], small[i], big[j]

    def valid(self, params: dict[str, Any]) -> bool:
        if params["level"] == "nested":
            return params["ad"] > 0 and params["db"] > 0
        if params["level"] == "hourglass":
            return min(params["ac"], params["bc"], params["ce"]) > 0
        return True

    def quantities(self, params: dict[str, Any]) -> list[Quantity]:
        u = params["unit"]
        if params["level"] == "hourglass":
            return [Quantity("AC", "ac", "side_AC", u), Quantity("BC", "bc", "side_BC", u),
                    Quantity("CE", "ce", "side_CE", u)]
        if params["level"] == "nested":
            return [Quantity("AD", "ad", "side_AD", u), Quantity("DB", "db", "side_DB", u),
                    Quantity("DE", "de", "side_DE", u)]
        (s1, s2), i, j = params["names"], params["pair"], params["ask"]
        side = lambda names, k: names[k] + names[(k + 1) % 3]  # noqa: E731
        src, dst = (s1, s2) if params["direction"] == "up" else (s2, s1)
        # On squared paper the corresponding legs are counted; with only the small triangle on it, its leg next
        # to the unknown is (the hypotenuses are printed).
        pair_counted = bool(params.get("grid")) and params.get("grid_on") != "small"
        return [Quantity(side(src, i), "q_from", f"side_{side(src, i)}", u, on_grid=pair_counted),
                Quantity(side(dst, i), "q_to", f"side_{side(dst, i)}", u, on_grid=pair_counted),
                Quantity(side(src, j), "q_known", f"side_{side(src, j)}", u,
                         on_grid=params.get("grid_on") == "small")]

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        return super().givens(self._flat(params))

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        if params["level"] in ("nested", "hourglass") or params.get("grid"):  # on squared paper the lengths read
            return super().figure_readings(params)                            # are stored
        return ()  # the three sides are derived from small/k; a misread has no single parameter to replace

    def joint_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """The hourglass read as a mirror image: the triangle right of C taken as ABC reflected, not turned half a
        turn, so CE (low on the right) is paired with BC (low on the left) and CD with AC, against the arrows
        that make AB ∥ DE (misread_relation: which sides correspond)."""
        if params["level"] != "hourglass":
            return ()
        return (Reading("ce_matches", "side_DE", "misread_relation", ("BC",)),)

    def _sides(self, params: dict[str, Any]) -> dict[str, sympy.Basic]:
        """Every side's name (both ways round) and length: the names a line may carry."""
        if params["level"] == "hourglass":
            lengths = {"AC": params["ac"], "BC": params["bc"], "CE": params["ce"], "CD": self.target(params)}
        elif params["level"] == "nested":
            ad, db, de = params["ad"], params["db"], params["de"]
            lengths = {"AD": ad, "DB": db, "DE": de, "AB": ad + db,
                       "BC": sympy.Rational(de * (ad + db), ad)}
        else:
            lengths = {}
            for names, sides in zip(params["names"], (params["small"], self._big(params))):
                for k in range(3):
                    lengths[names[k] + names[(k + 1) % 3]] = sides[k]
        out = {name: sympy.nsimplify(v) for name, v in lengths.items()}
        return {**out, **{name[::-1]: v for name, v in out.items()}}

    def answer_label(self, params: dict[str, Any]) -> str | None:
        if params["level"] == "hourglass":
            return "CD"
        if params["level"] == "nested":
            return "BC"
        small, big = params["names"]
        names = big if params["direction"] == "up" else small
        j = params["ask"]
        return names[j] + names[(j + 1) % 3]

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        """The sides of the figure by name: a contextual swap names the answer as another side."""
        sides = self._sides(params)
        return Vocabulary(sides, tuple(name.lower() for name in sides))

    def _flat(self, params: dict[str, Any]) -> dict[str, Any]:
        if params["level"] in ("nested", "hourglass"):
            return params
        f, t, kn = self._known(params)
        return {**params, "q_from": f, "q_to": t, "q_known": kn}

    def solve(self, params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        if params["level"] == "hourglass":
            return self._solve_hourglass(params, d, mal)
        if params["level"] == "nested":
            ad, db, de = params["ad"], params["db"], params["de"]
            if mal in ("inverted_scale_factor", "additive_scaling"):
                return None
            whole: E.Node = db if mal == "part_for_whole" else ["group", ["+", ad, db]]
            step(d, "mal:part_for_whole" if mal else "similar_nested", ["*", de, ["group", ["/", whole, ad]]])
            if mal is None:
                ab = d.compute(sympy.Integer(ad + db))
                step(d, "add", ["*", de, ["group", ["/", num(ab), ad]]], ab)
            else:
                ab = sympy.Integer(db)
            k = d.compute(ab / ad)
            step(d, "scale_factor", ["*", de, num(k)], k)
            x = d.compute(de * k)
            step(d, "multiply", num(x), x)
            return d.steps
        if mal == "part_for_whole":
            return None
        return self._scaled(d, *self._known(params), mal, "scale_factor")

    @staticmethod
    def _solve_hourglass(params: dict[str, Any], d: Derivation, mal: str | None) -> list[StepDraft] | None:
        """``CD = BC × (CE / AC)``: CD matches BC as CE matches AC (with ``ce_matches`` BC, a mirror reading, the
        other way round: ``CD = AC × (CE / BC)``)."""
        if mal == "part_for_whole":
            return None
        f, kn = (params["ac"], params["bc"]) if params["ce_matches"] == "AC" else (params["bc"], params["ac"])
        return SimilarTriangles._scaled(d, f, params["ce"], kn, mal, "similar_hourglass")

    @staticmethod
    def _scaled(d: Derivation, f: int, t: int, kn: int, mal: str | None, rule: str) -> list[StepDraft]:
        """``kn × (t / f)``: the known side scaled by the ratio of a matching pair (or a mal-rule's version)."""
        if mal == "additive_scaling":
            step(d, "mal:additive_scaling", ["+", kn, ["group", ["-", t, f]]])
            diff = d.compute(sympy.Integer(t - f))
            step(d, "subtract", ["+", kn, num(diff)], diff)
            x = d.compute(kn + diff)
            step(d, "add", num(x), x)
            return d.steps
        if mal == "inverted_scale_factor":
            f, t = t, f
        step(d, "mal:inverted_scale_factor" if mal else rule, ["*", kn, ["group", ["/", t, f]]])
        k = d.compute(sympy.Rational(t, f))
        step(d, "divide", ["*", kn, num(k)], k)
        x = d.compute(kn * k)
        step(d, "multiply", num(x), x)
        return d.steps

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Equal ratios: x / known = partner ratio, solved for x with SymPy.
        x = sympy.Symbol("x", positive=True)
        if params["level"] == "hourglass":  # the half-turn matches CE with AC and CD with BC
            (sol,) = sympy.solve(sympy.Eq(x / params["bc"], sympy.Rational(params["ce"], params["ac"])), x)
            return sol
        if params["level"] == "nested":
            ratio = sympy.Rational(params["ad"] + params["db"], params["ad"])
            (sol,) = sympy.solve(sympy.Eq(x / params["de"], ratio), x)
            return sol
        f, t, kn = self._known(params)
        (sol,) = sympy.solve(sympy.Eq(x / kn, sympy.Rational(t, f)), x)
        return sol

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return f"{E.num_text(answer, decimal=True)} {params['unit']}", \
            rf"{E.num_latex(answer, decimal=True)}\ \mathrm{{{params['unit']}}}"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        flat = self._flat(params)
        u = params["unit"]
        if params["level"] == "hourglass":
            return {"ac_t": _len(params["ac"], u), "bc_t": _len(params["bc"], u), "ce_t": _len(params["ce"], u)}
        if params["level"] == "nested":
            return {"ad_t": _len(params["ad"], u), "db_t": _len(params["db"], u), "de_t": _len(params["de"], u)}
        q = self.quantities(flat)
        (s1, s2) = params["names"]
        src, dst = (s1, s2) if params["direction"] == "up" else (s2, s1)
        j = params["ask"]
        return {"src": src, "dst": dst, "unknown": dst[j] + dst[(j + 1) % 3],
                "facts": [f"{qq.name} = {_len(flat[qq.param], u)}" for qq in q]}

    def _hourglass_figure(self, params: dict[str, Any]) -> Figure:
        """C in the middle; A up-left and E down-right on one line, B down-left and D up-right on the other; AB and
        DE upright-ish with one arrow each (AB ∥ DE). Drawn to its true lengths: ABC on the left, EDC its
        enlargement (or reduction) turned half a turn about C."""
        u, ac, bc, ce = params["unit"], params["ac"], params["bc"], params["ce"]
        cd = float(self.target(params))
        half = math.radians(params["angle"]) / 2  # the angle ACB, split either side of the horizontal
        ua, ub = (-math.cos(half), math.sin(half)), (-math.cos(half), -math.sin(half))
        pts = {"C": (0.0, 0.0), "A": (ua[0] * ac, ua[1] * ac), "B": (ub[0] * bc, ub[1] * bc),
               "E": (-ua[0] * ce, -ua[1] * ce), "D": (-ub[0] * cd, -ub[1] * cd)}

        def side(a: str, b: str, across: str, v: Any, text: str) -> dict[str, Any]:
            """Side ab labelled outside its triangle (away from the corner ``across`` it)."""
            mid = ((pts[a][0] + pts[b][0]) / 2, (pts[a][1] + pts[b][1]) / 2)
            el = {"id": f"side_{a}{b}", "type": "segment", "from": a, "to": b, "text": text,
                  "dir": [round(mid[0] - pts[across][0], 4), round(mid[1] - pts[across][1], 4)]}
            el.update({"style": "italic"} if v is None else {"value": v})
            return el

        els: list[dict[str, Any]] = [
            side("A", "C", "B", ac, _len(ac, u)), side("B", "C", "A", bc, _len(bc, u)),
            side("C", "E", "D", ce, _len(ce, u)), side("C", "D", "E", None, "x"),
            # both arrows point down the page, the same way, as parallel marks do
            {"id": "side_AB", "type": "segment", "from": "A", "to": "B", "arrows": 1, "arrow_at": 0.5},
            {"id": "side_DE", "type": "segment", "from": "D", "to": "E", "arrows": 1, "arrow_at": 0.5},
            *vertex_labels("ABCDE"),
        ]
        for el, direction in zip(els[-5:], ([-1, 0.3], [-1, -0.3], [0, 1], [1, 0.3], [1, -0.3])):
            el["dir"] = direction
        return Figure(self.figure_kind, figure_spec(pts, els, (3.6, 2.4)))

    def figure(self, params: dict[str, Any]) -> Figure:
        u = params["unit"]
        if params["level"] == "hourglass":
            return self._hourglass_figure(params)
        if params["level"] == "nested":
            ad, db, de = params["ad"], params["db"], params["de"]
            ab = ad + db
            bc = float(self.target(params))
            # A at the top, BC horizontal with its true length, D and E a fraction AD/AB down; DE ∥ BC.
            ang = math.radians(params["angle"])
            b_pt = (-ab * math.cos(ang), -ab * math.sin(ang))
            c_pt = (b_pt[0] + bc, b_pt[1])
            t = ad / ab
            pts = {"A": (0.0, 0.0), "B": b_pt, "C": c_pt, "D": (b_pt[0] * t, b_pt[1] * t),
                   "E": (c_pt[0] * t, c_pt[1] * t)}
            left = [-1, 0.15]
            els = [{"id": "side_AD", "type": "segment", "from": "A", "to": "D", "text": _len(ad, u), "value": ad,
                    "dir": left},
                   {"id": "side_DB", "type": "segment", "from": "D", "to": "B", "text": _len(db, u), "value": db,
                    "dir": left},
                   {"id": "side_AE", "type": "segment", "from": "A", "to": "E"},
                   {"id": "side_EC", "type": "segment", "from": "E", "to": "C"},
                   {"id": "side_DE", "type": "segment", "from": "D", "to": "E", "text": _len(de, u), "value": de,
                    "arrows": 1, "dir": [0, -1]},
                   {"id": "side_BC", "type": "segment", "from": "B", "to": "C", "text": "x", "style": "italic",
                    "arrows": 1, "dir": [0, -1]},
                   *vertex_labels("ABCDE")]
            for el, direction in zip(els[-5:], ([0, 1], [-1, -0.4], [1, -0.4], [-1, 0.2], [1, 0.2])):
                el["dir"] = direction
            return Figure(self.figure_kind, figure_spec(pts, els, (2.6, 2.4)))
        (s1, s2) = params["names"]
        small = params["small"]
        k = float(sympy.Rational(params["k"]))
        # Side k joins vertex k and k+1; the angle at vertex 0 sits between sides 2 and 0.
        angle0 = math.degrees(math.acos((small[0] ** 2 + small[2] ** 2 - small[1] ** 2) / (2 * small[0] * small[2])))
        angle1 = math.degrees(math.acos((small[0] ** 2 + small[1] ** 2 - small[2] ** 2) / (2 * small[0] * small[1])))
        grid = params.get("grid")
        small_only = params.get("grid_on") == "small"
        p1 = tri_points(s1, small[0], angle0, angle1)
        # Off the squared paper the large triangle is drawn at most 1.7 times the small one (not to scale, as
        # worksheets draw it), so the small one, whose squares are counted, stays large enough to count.
        p2 = tri_points(s2, small[0] * (min(k, 1.7) if small_only else k), angle0, angle1)
        if grid:  # every vertex on a grid point: exact lattice corners, two squares apart
            p1 = {n: (float(round(x)), float(round(y))) for n, (x, y) in p1.items()}
            if not small_only:  # off the grid the large triangle keeps its true shape, not lattice corners
                p2 = {n: (float(round(x)), float(round(y))) for n, (x, y) in p2.items()}
            # With the small triangle alone on squared paper, the large one stands clear of the sheet's edge.
            shift = small[0] + (4 * grid if small_only else 2 * grid)
        else:
            shift = small[0] + max(1.5, 0.25 * small[0] * k) - min(0.0, min(x for x, _ in p2.values()))
        pts = {**p1, **{n: (x + shift, y) for n, (x, y) in p2.items()}}
        flat = self._flat(params)
        src, dst = (s1, s2) if params["direction"] == "up" else (s2, s1)
        i, j = params["pair"], params["ask"]
        labels = {(src, i): flat["q_from"], (dst, i): flat["q_to"], (src, j): flat["q_known"], (dst, j): "x"}
        els: list[dict[str, Any]] = []
        for names in (s1, s2):
            els.append({"id": f"triangle_{names}", "type": "polygon", "points": list(names)})
            els += vertex_labels(names)
            for m in range(3):
                a, b = names[m], names[(m + 1) % 3]
                if (names, m) in labels:
                    v = labels[(names, m)]
                    el = {"id": f"side_{a}{b}", "type": "segment", "from": a, "to": b,
                          "text": "x" if v == "x" else _len(v, u)}
                    el.update({"style": "italic"} if v == "x" else {"value": v})
                    c = pts[names[(m + 2) % 3]]
                    mid = ((pts[a][0] + pts[b][0]) / 2, (pts[a][1] + pts[b][1]) / 2)
                    el["dir"] = [round(mid[0] - c[0], 4), round(mid[1] - c[1], 4)]
                    on_paper = names == s1 and m == j if small_only else m == i
                    if grid and on_paper:  # a leg along the grid lines: counted in squares, not written
                        el = counted(el, grid)
                    els.append(el)
            for m, arcs in ((0, 1), (1, 2)):
                v = names[m]
                arms = [names[(m + 1) % 3], names[(m + 2) % 3]]
                if grid and m == 1:  # the right angle between the legs
                    els.append({"id": f"right_{v}", "type": "right_angle", "at": v, "arms": arms})
                    continue
                els.append({"id": f"angle_{v}", "type": "angle_mark", "at": v, "arms": arms, "arcs": arcs,
                            "size": 0.6})
        if grid:
            span = (max(x for x, _ in pts.values()), max(y for _, y in pts.values()))
            paper = grid_elements(params, s1[0])
            if small_only:  # a sheet of squared paper one square beyond the small triangle
                xs, ys = [p1[v][0] for v in s1], [p1[v][1] for v in s1]
                paper[0]["bounds"] = [min(xs) - grid, min(ys) - grid, max(xs) + grid, max(ys) + grid]
            return Figure(self.figure_kind, figure_spec(pts, [*paper, *els], grid_size(params, span)))
        return Figure(self.figure_kind, figure_spec(pts, els, (4.4, 2.3)))


SMALL_ON_GRID_SHARE = 0.5
# Hard problems drawn as an hourglass (AB ∥ DE, crossing at C) instead of a triangle inside another.
HOURGLASS_SHARE = 0.5


# ============================================================================ circle area


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
        unit = _pick(rng, UNITS)
        if difficulty == "easy":
            if rng.random() < 0.3:  # on squared paper (a small space of problems: kept rarer so they stay distinct)
                k = _pick(rng, GRID_STEPS)
                return {"shape": "circle", "given": "radius", "r": int(rng.integers(2, 11)) * k, "unit": unit,
                        "turn": int(rng.integers(4)) * 90, "grid": k}
            return {"shape": "circle", "given": "radius", "r": int(rng.integers(2, 41)), "unit": unit,
                    "turn": int(rng.integers(12)) * 30}
        if difficulty == "medium":
            return {"shape": "circle", "given": "diameter", "d": int(rng.integers(2, 41)) * 2, "unit": unit,
                    "turn": int(rng.integers(-2, 3)) * 15}
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
        return f"{t} {_area_unit(u)}", rf"{lt}\ \mathrm{{{u}}}^2"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {k + "_t": _len(params[k], u) for k in ("r", "R", "d") if k in params}

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
                   {"id": "radius_R", "type": "segment", "from": "O", "to": "P", "text": _len(big, u), "value": big,
                    "dir": [round(-math.sin(t), 3), round(math.cos(t), 3)],
                    "text_at": round((1 + small / big) / 2, 3)},  # in the ring, clear of the inner circle
                   {"id": "radius_r", "type": "segment", "from": "O", "to": "Q", "text": _len(small, u),
                    "value": small, "dir": [round(-math.sin(t), 3), round(math.cos(t), 3)]}]
            return Figure(self.figure_kind, figure_spec(pts, els, (2.4, 2.4)))
        r = params["r"] if params.get("given") == "radius" else params["d"] / 2
        if params["shape"] == "semicircle":
            pts = {"O": (0.0, 0.0), "A": (-r, 0.0), "B": (r, 0.0), "P": (r * 0.6, r * 0.8)}
            els = [{"id": "semicircle", "type": "arc", "center": "O", "radius": r, "start": 0, "end": 180},
                   {"id": "point_O", "type": "point", "at": "O"}]
            if params["given"] == "radius":
                els += [{"id": "diameter", "type": "segment", "from": "A", "to": "B"},
                        {"id": "radius_r", "type": "segment", "from": "O", "to": "P", "text": _len(params["r"], u),
                         "value": params["r"], "dir": [-0.8, 0.6]}]
            else:
                els.append({"id": "diameter_d", "type": "segment", "from": "A", "to": "B",
                            "text": _len(params["d"], u), "value": params["d"], "dir": [0, -1]})
            return Figure(self.figure_kind, figure_spec(pts, els, (2.6, 1.7)))
        if params.get("given") == "radius":
            grid = bool(params.get("grid"))
            t = math.radians((0 if grid else 37) + params["turn"])
            pts = {"O": (0.0, 0.0), "P": (r * math.cos(t), r * math.sin(t))}
            radius = {"id": "radius_r", "type": "segment", "from": "O", "to": "P", "text": _len(params["r"], u),
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
                   {"id": "diameter_d", "type": "segment", "from": "A", "to": "B", "text": _len(params["d"], u),
                    "value": params["d"], "dir": [round(-math.sin(t), 3), round(math.cos(t), 3)], "text_at": 0.5}]
        return Figure(self.figure_kind, figure_spec(pts, els, (2.3, 2.3)))


# ============================================================================ circumference and arcs

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
        unit = _pick(rng, UNITS)
        ask = {"easy": "circumference", "medium": "arc", "hard": "sector_perimeter"}[difficulty]
        if ask == "circumference" and rng.random() < 0.3:
            ask, unit = "wheel", "cm"  # a wheel's radius in cm, the distance it rolls asked in metres
        # On squared paper the centre sits on a grid point and one radius runs along a grid line.
        k = _pick(rng, GRID_STEPS) if ask != "wheel" and rng.random() < GRID_SHARE else None
        while True:
            r = int(rng.integers(2, 7)) * k if k else int(rng.integers(2, 21)) + (15 if ask == "wheel" else 0)
            theta = 360 if ask in ("circumference", "wheel") else _pick(rng, _SECTOR_ANGLES)
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
        return {"r_t": _len(params["r"], params["unit"]), "theta_t": _deg(params["theta"]), "pi": PI_APPROX,
                "cut_out": _cut_out(params)}

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
                                      "text": _len(r, u), "value": r, "dir": out_dir}]
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
                {"id": "angle_O", "type": "angle_mark", "at": "O", "arms": ["A", "B"], "text": _deg(theta),
                 "value": theta}]
        if grid:
            return Figure(self.figure_kind, figure_spec(pts, [*grid_elements(params, "O"), *els],
                                                        grid_size(params, (2 * r, 2 * r))))
        return Figure(self.figure_kind, figure_spec(pts, els, (2.4, 2.2)))


# ============================================================================ polygons


def _triple(rng: np.random.Generator, top: int) -> tuple[int, int, int]:
    a, b, c = _pick(rng, _TRIPLES[:3])
    k = int(rng.integers(1, max(2, top // c + 1)))
    return (a * k, b * k, c * k) if rng.integers(2) else (b * k, a * k, c * k)


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
        unit = _pick(rng, UNITS)
        if difficulty == "easy":
            if rng.integers(2):
                length, width = sorted((int(rng.integers(2, 25)), int(rng.integers(2, 25))), reverse=True)
                if rng.random() < 0.3:  # a rug measured in cm, its area asked in m²: 1 m² is 10 000 cm²
                    return {"shape": "rectangle", "l": 10 * length + 50, "w": 10 * width + 50, "unit": "cm",
                            "ask": "area_m2"}
                if rng.random() < GRID_SHARE:  # drawn on squared paper: sides counted in squares
                    k = _pick(rng, GRID_STEPS)
                    n_l, n_w = sorted((int(rng.integers(3, 11)), int(rng.integers(2, 8))), reverse=True)
                    return {"shape": "rectangle", "l": n_l * k, "w": n_w * k, "unit": unit, "grid": k}
                return {"shape": "rectangle", "l": length, "w": width, "unit": unit}
            if rng.random() < 0.5:  # isosceles: the tick marks, not a label, give the third side
                while True:
                    leg, base = int(rng.integers(4, 20)), int(rng.integers(3, 20))
                    if base != leg and base < 2 * leg - 1 and _min_angle([leg, leg, base]) >= 25:
                        return {"shape": "triangle_perimeter", "a": leg, "b": leg, "c": base, "unit": unit,
                                "isosceles": True}
            while True:
                a, b, c = (int(v) for v in rng.integers(3, 20, size=3))
                if max(a, b, c) < (a + b + c) - max(a, b, c) - 1:
                    return {"shape": "triangle_perimeter", "a": a, "b": b, "c": c, "unit": unit}
        if difficulty == "medium":
            o, h, s = _triple(rng, 40)
            if rng.integers(2):
                return {"shape": "triangle", "b": o + int(rng.integers(2, 12)), "h": h, "o": o, "s": s, "unit": unit}
            top = int(rng.integers(2, 16))
            return {"shape": "trapezium", "a": top, "b": top + o + int(rng.integers(0, 8)), "h": h, "o": o, "s": s,
                    "unit": unit}
        if rng.random() < GRID_SHARE:
            k = _pick(rng, GRID_STEPS)
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
        unit, lunit = (_area_unit(u), rf"\mathrm{{{u}}}^2") if area else (u, rf"\mathrm{{{u}}}")
        return f"{E.num_text(answer, decimal=True)} {unit}", rf"{E.num_latex(answer, decimal=True)}\ {lunit}"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        u = params["unit"]
        return {"facts": [f"{q.name} {_len(params[q.param], u)}" for q in self.quantities(params)],
                "ask": params.get("ask", "")}

    def figure(self, params: dict[str, Any]) -> Figure:
        shape, u = params["shape"], params["unit"]

        grid = bool(params.get("grid"))

        def side(el_id: str, a: str, b: str, key: str, **kw: Any) -> dict[str, Any]:
            el = {"id": el_id, "type": "segment", "from": a, "to": b, "text": _len(params[key], u),
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


# ============================================================================ parallel lines

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
        scale = _pick(rng, ("outer", "inner")) if difficulty == "medium" and rng.random() < PROTRACTOR_SHARE else None
        relations = ("co_interior", "straight_line") if difficulty == "easy" else (
            "corresponding", "alternate", "co_interior", "straight_line" if difficulty == "medium" else "alternate")
        while True:
            relation = _pick(rng, ("co_interior", "alternate") if scale else relations)
            given_pos, x_pos = _pick(rng, _PAIRS[relation][:2] if scale else _PAIRS[relation])
            if rng.integers(2):
                given_pos, x_pos = x_pos, given_pos
            phi = int(rng.integers(9, 18)) * 5 if scale else int(rng.integers(28, 87))
            params: dict[str, Any] = {"relation": relation, "phi": phi, "given_pos": list(given_pos),
                                      "x_pos": list(x_pos)}
            size_x, size_g = self._size(params, x_pos), self._size(params, given_pos)
            if difficulty == "easy":
                return {**params, "g": size_g, "x_form": [1, 0], "g_form": None,
                        **self._second_transversal(rng, params, size_g)}
            x = int(rng.integers(5, 41))
            p = int(rng.integers(2, 6))
            q = size_x - p * x
            if not -40 <= q <= 50 or q == 0:
                continue
            if difficulty == "medium":
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
            return _deg(g)
        assert form is not None
        p, q = form
        return "x" if (p, q) == (1, 0) else f"({lin_text(p, q)})°"

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"given_t": self._label(params["g_form"], params["g"]), "x_t": self._label(params["x_form"], None),
                "relation_t": _RELATION_WORDS[params["relation"]], "find_angle": params["x_form"] == [1, 0],
                **({"two_lines": True, "h_t": _deg(params["h"]), "h_line": ("AB", "CD")[params["h_pos"][0]]}
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
        marks = (("angle_given", "EF", params["given_pos"], _deg(params["g"]), params["g"]),
                 ("angle_x", "EF", params["x_pos"], self._label(params["x_form"], None), None),
                 ("angle_h", "GH", params["h_pos"], _deg(params["h"]), params["h"]))
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
