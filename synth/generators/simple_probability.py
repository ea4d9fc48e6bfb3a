"""The probability of one event from counts: favourable over total, complements."""

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
from synth.generators.base import BLANK, Derivation, Family, MalRule, StepDraft
from synth.presentation import Vocabulary, form_request, label_last


def _frac_of(top: E.Node, counts: list[int]) -> E.Node:
    """``top/(c1 + c2 + …)``: the total is added up in the working, as a pupil does."""
    return ["frac", top, E.sum_of(list(counts))]


@register
class SimpleProbability(Family):
    """One item from a bag. easy: P(colour); medium: P(not colour); hard: P(neither of two colours).

    The working writes favourable/total with the total added up, then the complement when asked.
    """

    id = "probability.simple"
    domain = "probability"
    subdomain = "probability"
    grade_band = "6-8"
    question_types = ("free", "mcq", "fill")
    malrules = (
        MalRule("odds_not_probability", "formula_misuse",
                "divides the favourable count by the unfavourable count (odds) instead of by the total"),
        MalRule("complement_forgotten", "misinterpret_question",
                "gives the probability of the event itself when the question asks for it not happening"),
        MalRule("colours_equally_likely", "invalid_assumption",
                "treats every colour as equally likely, whatever the counts: favourable colours / number of colours"),
    )

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        n_colours, high = {"easy": (3, 9), "medium": (3, 12), "hard": (4, 15)}[difficulty]
        colours, counts = bag(rng, n_colours, 1, high)
        ask = {"easy": "event", "medium": "not", "hard": "neither"}[difficulty]
        chosen = sorted(int(i) for i in rng.permutation(n_colours)[: 2 if ask == "neither" else 1])
        return {"bag": int(rng.integers(len(BAGS))), "colours": colours, "counts": counts, "ask": ask,
                "chosen": chosen, "answer_form": "fraction"}

    def _tree(self, params: dict[str, Any], *, odds: bool = False, complement: bool = True) -> E.Node:
        counts, chosen = params["counts"], params["chosen"]
        favourable = [counts[i] for i in chosen]
        top = E.sum_of(favourable)
        others = [c for i, c in enumerate(counts) if i not in chosen]
        p = ["frac", top, E.sum_of(others)] if odds else _frac_of(top, counts)
        return ["-", 1, p] if params["ask"] != "event" and complement else p

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        d = Derivation(overrides)
        probability_steps(d, self._tree(params))
        return label_last(d.steps, f"P({self._event(params)})") if d.steps else d.steps

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        """P(event) for every colour (or ordered pair of colours) in the bag: a contextual swap names another."""
        n = len(params["colours"])
        picks = [[i, j] for i in range(n) for j in range(n) if i != j] if params["ask"] == "neither" else \
            [[i] for i in range(n)]
        labels = {f"P({self._event({**params, 'chosen': c})})": self.initial({**params, "chosen": c}) for c in picks}
        return Vocabulary(labels, tuple(params["colours"]))

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        if rule == "odds_not_probability":
            return mal_chain(self, params, self._tree(params, odds=True), "mal:odds_not_probability")
        if rule == "complement_forgotten" and params["ask"] != "event":
            return mal_chain(self, params, self._tree(params, complement=False), "mal:complement_forgotten")
        if rule == "colours_equally_likely":
            p: E.Node = ["frac", len(params["chosen"]), len(params["counts"])]
            tree = ["-", 1, p] if params["ask"] != "event" else p
            return mal_chain(self, params, tree, "mal:colours_equally_likely")
        return None

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return E.sym(self._tree(params))

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        # Count the outcomes one by one: every item in the bag that satisfies the event.
        items = [i for i, n in enumerate(params["counts"]) for _ in range(n)]
        hits = sum(1 for i in items if (i in params["chosen"]) == (params["ask"] == "event"))
        return rational(Fraction(hits, len(items)))

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return E.num_text(answer), E.num_latex(answer)

    def fill_stem(self, params: dict[str, Any]) -> str:
        return f"P({self._event(params)}) = {BLANK}"

    def _event(self, params: dict[str, Any]) -> str:
        names = [params["colours"][i] for i in params["chosen"]]
        if params["ask"] == "event":
            return names[0]
        if params["ask"] == "not":
            return f"not {names[0]}"
        return f"neither {names[0]} nor {names[1]}"

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        container, things = BAGS[params["bag"]]
        names = [params["colours"][i] for i in params["chosen"]]
        return {**params, "container": container, "things": things, "thing": things[:-1],
                "listing": listing(params["colours"], params["counts"]), "event": self._event(params),
                "first": names[0], "second": names[-1], "form_request": form_request(params["answer_form"])}
