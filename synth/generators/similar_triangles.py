"""Similar triangles: a side from the scale factor, a triangle inside another, an hourglass."""

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
    GRID_SHARE,
    GRID_STEPS,
    UNITS,
    FigureFamily,
    Quantity,
    counted,
    figure_spec,
    grid_elements,
    grid_size,
    length_text,
    min_angle,
    pick,
    tri_points,
    vertex_labels,
)
from synth.generators.base import Derivation, MalRule, Reading, StepDraft
from synth.presentation import Vocabulary
from synth.records import Figure, Given

SMALL_ON_GRID_SHARE = 0.5
# Hard problems drawn as an hourglass (AB ∥ DE, crossing at C) instead of a triangle inside another.
HOURGLASS_SHARE = 0.5


@dataclass(frozen=True)
class _Level:
    kind: str  # "separate": two triangles apart; "nested": one inside the other (or, on a share, an hourglass)
    whole_factor: tuple[int, int] | None = None  # a whole scale factor up, drawn from lo..hi
    fractions: tuple[sympy.Rational, ...] = ()  # else a fractional factor from these, up or down
    grid: bool = False  # on a share (GRID_SHARE), an enlargement on squared paper


_FRACTIONS = tuple(sympy.Rational(p, q) for p, q in ((3, 2), (5, 2), (4, 3), (5, 4), (5, 3), (7, 2)))
_LEVELS = {"easy": _Level("separate", whole_factor=(2, 3), grid=True),
           "medium": _Level("separate", fractions=_FRACTIONS), "hard": _Level("nested")}


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
        level = _LEVELS[difficulty]
        unit = pick(rng, UNITS)
        if level.kind == "nested":
            return self._sample_nested(rng, unit)
        names = pick(rng, (("ABC", "DEF"), ("PQR", "XYZ"), ("ABC", "PQR"), ("LMN", "RST")))
        if level.grid and rng.random() < GRID_SHARE:
            return self._sample_grid(rng, unit, names)
        while True:
            small = [int(rng.integers(3, 13)) for _ in range(3)]
            if not (max(small) < sum(small) - max(small) and len(set(small)) == 3 and min_angle(small) >= 28):
                continue
            if level.whole_factor:
                lo, hi = level.whole_factor
                k = sympy.Integer(int(rng.integers(lo, hi + 1)))
                direction = "up"
            else:
                k = pick(rng, level.fractions)
                direction = pick(rng, ("up", "down"))
            if any((s * k).q != 1 for s in small):
                continue
            i, j = (int(v) for v in rng.choice(3, size=2, replace=False))
            return {"level": "separate", "unit": unit, "names": list(names), "small": small, "k": str(k),
                    "pair": i, "ask": j, "direction": direction}

    def _sample_nested(self, rng: np.random.Generator, unit: str) -> dict[str, Any]:
        """A triangle inside another, or on a share (HOURGLASS_SHARE) two meeting at a point (an hourglass)."""
        while True:
            ad, db, de = int(rng.integers(2, 13)), int(rng.integers(1, 10)), int(rng.integers(2, 15))
            bc = sympy.Rational(de * (ad + db), ad)
            if E.is_decimal(E.to_fraction(bc)) and bc.q <= 2 and ad != db:
                nested = {"level": "nested", "unit": unit, "ad": ad, "db": db, "de": de,
                          "angle": int(rng.integers(50, 75))}
                # drawn after the nested triangle's values, so the nested problems keep theirs
                return self._sample_hourglass(rng, unit) if rng.random() < HOURGLASS_SHARE else nested

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
        g, k = pick(rng, GRID_STEPS), int(rng.integers(2, 4))
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
            k = pick(rng, (sympy.Rational(3, 2), sympy.Integer(2), sympy.Rational(4, 3), sympy.Rational(2, 3),
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
            return {"ac_t": length_text(params["ac"], u), "bc_t": length_text(params["bc"], u),
                    "ce_t": length_text(params["ce"], u)}
        if params["level"] == "nested":
            return {"ad_t": length_text(params["ad"], u), "db_t": length_text(params["db"], u),
                    "de_t": length_text(params["de"], u)}
        q = self.quantities(flat)
        (s1, s2) = params["names"]
        src, dst = (s1, s2) if params["direction"] == "up" else (s2, s1)
        j = params["ask"]
        return {"src": src, "dst": dst, "unknown": dst[j] + dst[(j + 1) % 3],
                "facts": [f"{qq.name} = {length_text(flat[qq.param], u)}" for qq in q]}

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
            side("A", "C", "B", ac, length_text(ac, u)), side("B", "C", "A", bc, length_text(bc, u)),
            side("C", "E", "D", ce, length_text(ce, u)), side("C", "D", "E", None, "x"),
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
            els = [{"id": "side_AD", "type": "segment", "from": "A", "to": "D", "text": length_text(ad, u), "value": ad,
                    "dir": left},
                   {"id": "side_DB", "type": "segment", "from": "D", "to": "B", "text": length_text(db, u), "value": db,
                    "dir": left},
                   {"id": "side_AE", "type": "segment", "from": "A", "to": "E"},
                   {"id": "side_EC", "type": "segment", "from": "E", "to": "C"},
                   {"id": "side_DE", "type": "segment", "from": "D", "to": "E", "text": length_text(de, u), "value": de,
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
                          "text": "x" if v == "x" else length_text(v, u)}
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
