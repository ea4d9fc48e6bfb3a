"""Counting objects drawn in rows and columns with gaps, in groups or trays, or as a pictogram with a key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._data import mal_chain, rational, reduce_steps, sample_role
from synth.generators._figure import neighbour_misreads, pick
from synth.generators.base import Derivation, Family, MalRule, Reading, StepDraft, effective_readings
from synth.records import Figure, Given

_KEY_VALUES = (2, 3, 4, 5)  # what one picture stands for in a pictogram's key


def _uneven_share(params: dict[str, Any], pictures: int, per: int) -> bool:
    """Whether ``pictures`` objects worth ``per`` each cannot be shared out whole (a pupil would notice)."""
    return "share" in params and pictures * per % params["share"] != 0


# Share of two-tray pictures whose question asks about one tray only ("How many eggs are in tray B?").
_ONE_TRAY_SHARE = 0.35


def _asked(params: dict[str, Any]) -> list[dict[str, Any]]:
    """The groups the working counts: all of them, or the one tray the question names (``ask``: "A" or "B").

    ``counted`` (sampled equal to ``ask``) is the tray whose objects are counted for it: the other one when
    the tray labels are misread. The question keeps naming ``ask``.
    """
    groups = params["groups"]
    if params.get("ask") is None:
        return groups
    return [groups["AB".index(params["counted"])]]


def _present(groups: list[dict[str, Any]]) -> int:
    return sum(g["rows"] * g["cols"] - len(g["missing"]) for g in groups)


_SHAPES = ("apple", "star", "dot", "egg")
_FLAT = ("sticker sheet", "board")  # objects sit on these, and in the others
_CONTAINERS = {"apple": ("apples", "crate"), "star": ("stars", "sticker sheet"), "dot": ("counters", "board"),
               "egg": ("eggs", "tray")}


@dataclass(frozen=True)
class _Level:
    groups: int  # arrays drawn (two: in two trays, on a share only one of them asked)
    pictogram: bool  # on a share (_PICTOGRAM_SHARE), each object stands for a number given by a key
    shared_out: bool  # the count is then shared out equally


_LEVELS = {"easy": _Level(1, pictogram=False, shared_out=False), "medium": _Level(2, pictogram=True, shared_out=False),
           "hard": _Level(2, pictogram=True, shared_out=True)}
_PICTOGRAM_SHARE = 0.5


@register
class CountingObjects(Family):
    """Objects in rows and columns with gaps: rows × columns − missing (medium: two groups; hard: shared out).

    Half of the medium and hard pictures are pictograms: a key under the picture says how many
    each drawn object stands for (``per``), as in school pictograms, so the count is multiplied by it.
    """

    id = "commonsense.counting.objects"
    domain = "commonsense"
    subdomain = "counting"
    grade_band = "2-4"
    figure_kind = "object_array"
    image_roles = ("required", "useful")
    malrules = (
        MalRule("ignore_missing", "invalid_assumption", "counts the array as if it were full"),
        MalRule("add_rows_and_columns", "formula_misuse", "adds the number of rows and columns instead of "
                "multiplying"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        level = _LEVELS[difficulty]
        groups_n = level.groups
        shape = str(pick(rng, _SHAPES))
        while True:
            groups = []
            for _ in range(groups_n):
                rows, cols = int(rng.integers(2, 6)), int(rng.integers(3, 8))
                k = int(rng.integers(1, min(6, rows * cols // 3) + 1))
                cells = sorted(int(c) for c in rng.choice(rows * cols, size=k, replace=False))
                groups.append({"rows": rows, "cols": cols, "missing": cells})
            params = {"shape": shape, "groups": groups, "image_role": sample_role(rng)}
            if level.pictogram and rng.random() < _PICTOGRAM_SHARE:
                params["per"] = int(pick(rng, _KEY_VALUES))
            if groups_n == 2 and rng.random() < _ONE_TRAY_SHARE:
                params["ask"] = params["counted"] = str(pick(rng, ("A", "B")))
                if _present(groups[:1]) == _present(groups[1:]):
                    continue  # the other tray holds as many: nothing tells the two apart
            if level.shared_out:
                total = params.get("per", 1) * _present(_asked(params))
                sharers = [s for s in (2, 3, 4, 5, 6) if total % s == 0]
                if not sharers:
                    continue
                params["share"] = int(pick(rng, sharers))
            return params

    def _tree(self, params: dict[str, Any], *, full: bool = False, add: bool = False) -> E.Node:
        terms: list[E.Node] = []
        for g in _asked(params):
            array: E.Node = ["+" if add else "*", g["rows"], g["cols"]]
            if add:
                array = ["group", array]
            terms.append(array if full else ["-", array, len(g["missing"])] if len(terms) == 0 else
                         ["group", ["-", array, len(g["missing"])]])
        node = terms[0]
        for t in terms[1:]:
            node = ["+", node, t]
        if params.get("per", 1) != 1:  # the pictures counted, then each worth what the key says
            node = ["*", ["group", node], params["per"]]
        if "share" in params:
            node = ["/", ["group", node], params["share"]]
        return node

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        reduce_steps(d, self._tree(params), first_rule="rows_times_columns")
        return d.steps

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Count the objects that are there, one by one.
        present = sum(1 for g in _asked(params) for cell in range(g["rows"] * g["cols"]) if cell not in g["missing"])
        return rational(Fraction(present * params.get("per", 1), params.get("share", 1)))

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "ignore_missing":
            if _uneven_share(params, sum(g["rows"] * g["cols"] for g in _asked(params)), params.get("per", 1)):
                return None  # a pupil would notice the share is not whole
            return mal_chain(self, params, self._tree(params, full=True), "rows_times_columns")
        if rule == "add_rows_and_columns":
            if any(g["rows"] + g["cols"] == g["rows"] * g["cols"] for g in _asked(params)):
                return None
            tree = self._tree(params, add=True)
            if "share" in params and E.value(tree).denominator != 1:
                return None
            return mal_chain(self, params, tree, "rows_times_columns")
        return None

    def figure(self, params: dict[str, Any]) -> Figure:
        noun, container = _CONTAINERS[params["shape"]]
        elements: list[dict[str, Any]] = []
        for gi, g in enumerate(params["groups"]):
            name = "AB"[gi]
            elements.append({"id": f"tray_{name}", "type": "polygon", "group": gi})
            elements.append({"id": f"label_{name}", "type": "label", "group": gi,
                             "text": f"{container.capitalize()} {name}" if len(params["groups"]) > 1 else
                             container.capitalize()})
            for cell in range(g["rows"] * g["cols"]):
                r, c = divmod(cell, g["cols"])
                elements.append({"id": f"object_{name}_{r}_{c}", "type": "object", "group": gi, "row": r, "col": c,
                                 "present": cell not in g["missing"]})
        widest = max(g["cols"] for g in params["groups"])
        tallest = max(g["rows"] for g in params["groups"])
        n = len(params["groups"])
        width = round(min(5.6, n * (widest * 0.36 + 0.35)), 2)
        height = tallest * 0.36 + 0.6
        spec: dict[str, Any] = {"shape": params["shape"], "groups": [[g["rows"], g["cols"]] for g in params["groups"]]}
        if "per" in params:  # the pictogram's key, under the picture: "<object> = 3 apples"
            elements.append({"id": "key", "type": "key", "text": f"= {params['per']} {noun}"})
            spec["key"] = True
            height += 0.36  # the key's row (26 pt) under the objects, which keep their size
            width = max(width, 1.6)
        return Figure("object_array", {"size_in": [width, round(height, 2)], **spec, "elements": elements})

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        useful = params["image_role"] == "useful"
        out = []
        for gi, g in enumerate(params["groups"]):
            name = "AB"[gi]
            for key in ("rows", "cols"):
                out.append(Given(f"{key} {name}", str(g[key]), "text" if useful else f"figure:tray_{name}"))
            first_gap = divmod(g["missing"][0], g["cols"])
            out.append(Given(f"missing {name}", str(len(g["missing"])), "text" if useful else
                             f"figure:object_{name}_{first_gap[0]}_{first_gap[1]}"))
        if "per" in params:
            out.append(Given("each picture stands for", str(params["per"]), "text" if useful else "figure:key"))
        if "share" in params:
            out.append(Given("people sharing", str(params["share"]), "text"))
        return tuple(out)

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        groups = params["groups"]
        out = []
        for gi, g in enumerate(groups):
            name = "AB"[gi]
            for key, kind in (("rows", "miscount"), ("cols", "miscount")):
                wrong = []
                for delta in (1, -1):
                    changed = dict(g, **{key: g[key] + delta})
                    size = changed["rows"] * changed["cols"]
                    if changed[key] >= 1 and all(c < size for c in g["missing"]):
                        wrong.append([changed if j == gi else h for j, h in enumerate(groups)])
                out.append(Reading("groups", f"tray_{name}", kind, tuple(wrong)))
            spare = [c for c in range(g["rows"] * g["cols"]) if c not in g["missing"]]
            fewer = dict(g, missing=g["missing"][1:])
            more = dict(g, missing=sorted([*g["missing"], spare[0]])) if spare else None
            options = [fewer] + ([more] if more else [])
            r, c = divmod(g["missing"][0], g["cols"])
            out.append(Reading("groups", f"object_{name}_{r}_{c}", "miscount",
                               tuple([o if j == gi else h for j, h in enumerate(groups)] for o in options)))
        if params.get("ask") is not None:  # the tray named in the question taken for the other one
            other = "B" if params["ask"] == "A" else "A"
            if not _uneven_share(params, _present(_asked({**params, "counted": other})), params.get("per", 1)):
                out.append(Reading("counted", f"label_{params['ask']}", "misread_label", (other,)))
        if "per" in params:
            pictures = _present(_asked(params))

            def whole(per: int) -> bool:
                return not _uneven_share(params, pictures, per)

            # the key overlooked: every picture counted as one; the key's digit misread (3/8, 5/6)
            out.append(Reading("per", "key", "misread_scale", tuple(v for v in (1,) if whole(v))))
            out.append(Reading("per", "key", "misread_value", tuple(
                v for v in neighbour_misreads(params["per"]) if whole(v))))
        return effective_readings(self, params, out)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        noun, container = _CONTAINERS[params["shape"]]
        g, ask = params["groups"], params.get("ask")
        desc = " and ".join(f"{x['rows']} rows of {x['cols']} with {len(x['missing'])} missing" +
                            ("" if ask is None else f" {'on' if container in _FLAT else 'in'} {container} {name}")
                            for name, x in zip("AB", g))
        if "per" in params:
            desc += f", each picture standing for {params['per']} {noun}"
        return {**params, "noun": noun, "container": container, "two": len(g) == 2, "desc": desc,
                "share": params.get("share"), "ask": ask,
                "asked": None if ask is None else f"{'on' if container in _FLAT else 'in'} {container} {ask}"}
