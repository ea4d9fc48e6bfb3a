"""The probability of two events from counts: and, or, without replacement."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from synth.generators import expr as E
from synth.generators import register
from synth.generators._bags import BAGS, bag, listing, probability_steps
from synth.generators._data import mal_chain, rational
from synth.generators.base import Derivation, Family, MalRule, StepDraft
from synth.presentation import Vocabulary, form_request, label_last

# the question (two bags: "and" or "or"; one bag without replacement) and the most of one colour in a bag
_LEVELS = {"easy": ("and", 9), "medium": ("or", 12), "hard": ("without_replacement", 12)}


@register
class CompoundProbability(Family):
    """Two events. easy: independent draws from two bags, A and B; medium: A or B (inclusion–exclusion);
    hard: two draws from one bag without replacement (both one colour, or one of each in either order).
    """

    id = "probability.compound"
    domain = "probability"
    subdomain = "probability"
    grade_band = "8-10"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("or_adds_overlap_twice", "formula_misuse",
                "adds P(A) and P(B) for overlapping events without taking away P(A and B)"),
        MalRule("dependent_as_independent", "invalid_assumption",
                "multiplies the probabilities of the two draws as if the first item had been put back"),
        MalRule("and_adds_probabilities", "formula_misuse",
                "adds the probabilities of two independent events when both must happen"),
        MalRule("one_order_only", "misinterpret_question",
                "counts only one order (first red then blue) for 'one of each colour'"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        mode, high = _LEVELS[difficulty]
        if mode != "without_replacement":
            bags = [bag(rng, 2 + int(rng.integers(2)), 1, high) for _ in range(2)]
            picks = [int(rng.integers(len(c))) for c, _ in bags]
            return {"mode": mode,
                    "bags": [[c, n] for c, n in bags], "picks": picks,
                    "bag": int(rng.integers(len(BAGS))), "replace": True, "answer_form": "fraction"}
        colours, counts = bag(rng, 2 + int(rng.integers(2)), 2, high)
        ask = "same" if rng.random() < 0.5 else "each"
        first, second = (int(i) for i in rng.permutation(len(colours))[:2])
        return {"mode": ask, "bags": [[colours, counts]], "picks": [first, second if ask == "each" else first],
                "bag": int(rng.integers(len(BAGS))), "replace": False, "answer_form": "fraction"}

    def _p(self, params: dict[str, Any], which: int) -> E.Node:
        _, counts = params["bags"][which]
        return ["frac", counts[params["picks"][which]], sum(counts)]

    def _tree(self, params: dict[str, Any], mal: str | None = None) -> E.Node:
        mode = params["mode"]
        if mode == "and":
            pa, pb = self._p(params, 0), self._p(params, 1)
            return ["+", pa, pb] if mal == "and_adds_probabilities" else ["*", pa, pb]
        if mode == "or":
            pa, pb = self._p(params, 0), self._p(params, 1)
            both: E.Node = ["*", pa, pb]
            return ["+", pa, pb] if mal == "or_adds_overlap_twice" else ["-", ["+", pa, pb], both]
        _, counts = params["bags"][0]
        n = sum(counts)
        put_back = mal == "dependent_as_independent"
        i, j = params["picks"]
        first = ["frac", counts[i], n]
        if mode == "same":
            return ["*", first, ["frac", counts[i] - (0 if put_back else 1), n - (0 if put_back else 1)]]
        one = ["*", first, ["frac", counts[j], n - (0 if put_back else 1)]]
        if mal == "one_order_only":
            return one
        other = ["*", ["frac", counts[j], n], ["frac", counts[i], n - (0 if put_back else 1)]]
        return ["+", one, other]

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        probability_steps(d, self._tree(params))
        return label_last(d.steps, self._event(params)) if d.steps else d.steps

    def _event(self, params: dict[str, Any]) -> str:
        """``P(red and blue)``, ``P(red or blue)``, ``P(both red)``: the event as a pupil labels it."""
        first, second = self._names(params)
        if params["mode"] == "same":
            return f"P(both {first})"
        return f"P({first} {'or' if params['mode'] == 'or' else 'and'} {second})"

    @staticmethod
    def _names(params: dict[str, Any]) -> list[str]:
        return [params["bags"][min(k, len(params["bags"]) - 1)][0][p] for k, p in enumerate(params["picks"])]

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        """The same event for every other choice of colours: a contextual swap names one of those."""
        bags = params["bags"]
        if params["mode"] == "same":
            picks = [[i, i] for i in range(len(bags[0][0]))]
        elif params["mode"] == "each":
            picks = [[i, j] for i in range(len(bags[0][0])) for j in range(len(bags[0][0])) if i != j]
        else:
            picks = [[i, j] for i in range(len(bags[0][0])) for j in range(len(bags[1][0]))]
        labels = {self._event({**params, "picks": p}): self.initial({**params, "picks": p}) for p in picks}
        return Vocabulary(labels, tuple(dict.fromkeys(c for colours, _ in bags for c in colours)))

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        mode = params["mode"]
        applies = {"or_adds_overlap_twice": mode == "or", "and_adds_probabilities": mode == "and",
                   "dependent_as_independent": mode in ("same", "each"), "one_order_only": mode == "each"}
        if not applies.get(rule, False):
            return None
        return mal_chain(self, params, self._tree(params, rule), "mal:" + rule)

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Count equally likely outcomes: every pair of items (ordered; distinct items when not replaced).
        bags = [[i for i, n in enumerate(counts) for _ in range(n)] for _, counts in params["bags"]]
        first, second = (bags[0], bags[1]) if len(bags) == 2 else (bags[0], bags[0])
        a, b = params["picks"]
        hits = total = 0
        for x, item_x in enumerate(first):
            for y, item_y in enumerate(second):
                if not params["replace"] and x == y:
                    continue
                total += 1
                mode = params["mode"]
                if mode == "and" or mode == "same":
                    hits += item_x == a and item_y == b
                elif mode == "or":
                    hits += item_x == a or item_y == b
                else:
                    hits += {item_x, item_y} == {a, b}
        return rational(Fraction(hits, total))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer), E.num_latex(answer)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        container, things = BAGS[params["bag"]]
        bags = [listing(c, n) for c, n in params["bags"]]
        names = self._names(params)
        return {**params, "container": container, "things": things, "thing": things[:-1], "listings": bags,
                "first": names[0], "second": names[1], "form_request": form_request(params["answer_form"])}
