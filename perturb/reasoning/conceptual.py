"""Conceptual errors from the families' mal-rule catalogues, one injector per subtype (and unit_conversion)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection

import numpy as np

from perturb.reasoning import register
from perturb.reasoning.base import (
    DUPLICATE,
    Attempt,
    Injector,
    ShownKey,
    Skip,
    first_changed_step,
    replay_attempt,
    shown_key,
)
from perturb.reasoning.conventions import dressed, drifts, unlike_family, without_repeats
from synth.generators import REGISTRY as FAMILIES
from synth.generators.base import Family, MalRule, StepDraft, derive_mal_memo
from synth.records import Problem
from synth.verifier import same_value

CONCEPTUAL = ("formula_misuse", "theorem_misapplication", "incorrect_fact", "invalid_assumption",
              "invalid_inference", "misinterpret_question")


def malrule_counts() -> Counter[str]:
    """How many mal-rules the registered families' catalogues hold, by subtype (``Family.malrules``)."""
    return Counter(rule.subtype for family_id in FAMILIES for rule in FAMILIES[family_id].malrules)


def mal_step(drafts: list[StepDraft], problem: Problem) -> int | None:
    """Where the mal-rule is used: the line its family tagged ``mal:<id>``, else the first changed line."""
    tagged = [i for i, d in enumerate(drafts, start=1) if d.rule.startswith("mal:")]
    return tagged[0] if tagged else first_changed_step(drafts, problem.steps)


def placed(k: int, n_steps: int, placement: str | int) -> bool:
    """Whether a mal-rule that errs at line ``k`` of ``n_steps`` fits the requested placement."""
    if isinstance(placement, int):
        return k == placement
    if placement == "any" or n_steps < 3:
        return True
    third = (k - 1) * 3 // n_steps  # 0, 1, 2 for the first, middle and last third
    return third == {"early": 0, "middle": 1, "late": 2}[placement]


class MalRuleInjector(Injector):
    """Apply one of the family's mal-rules of this subtype: the student's whole solution, carried through."""

    splices = True
    avoids = True
    # v2: the variant ends in the family's answer forms (resampled otherwise) with the answer line's label and
    # unit, a repeated line kept once; a rule whose working shows no form its clean twin lacks is preferred
    # v3: a rule whose working a sibling variant of the base already shows is passed over (``avoid``), and a base
    # where every rule's working is taken is not offered (``novel``): no duplicates proposed again and again
    version = 3

    def __init__(self, subtype: str) -> None:
        self.subtype = subtype

    def rules(self, family: Family) -> list[MalRule]:
        return [r for r in family.malrules if r.subtype == self.subtype]

    def applies(self, family: Family, problem: Problem) -> bool:
        """Some rule of this subtype has its preconditions met by this problem (derive_mal is deterministic)."""
        for rule in self.rules(family):
            try:
                if derive_mal_memo(family, problem.params, rule.id):
                    return True
            except (ArithmeticError, ValueError, TypeError, KeyError):
                continue
        return False

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int, avoid: Collection[ShownKey] = ()) -> Attempt | Skip:
        """A rule's working (rules in a random order): the first whose working shows no form its clean twin
        lacks, else the first that fits at all. A working that reads like one in ``avoid`` (a sibling variant
        of the same base already shows it) is passed over: a rule proposed twice is a duplicate, not a new error.
        """
        reason = "rule_does_not_apply"
        fallback: Attempt | None = None  # a rule whose working shows a form its clean twin lacks
        for i in rng.permutation(len(self.rules(family))):
            attempt = self._attempt(family, problem, self.rules(family)[int(i)], placement)
            if isinstance(attempt, Skip):
                reason = attempt.reason if attempt.reason != "empty" else reason
                continue
            if avoid and shown_key(attempt.steps) in avoid:
                reason = DUPLICATE
                continue
            if not drifts(attempt.steps, problem.steps):
                return attempt
            fallback = fallback or attempt
        return fallback or Skip(reason)

    def novel(self, family: Family, problem: Problem, placement: str | int, avoid: Collection[ShownKey]) -> bool:
        """Whether some rule gives a working none of ``avoid`` reads like (the rules are deterministic)."""
        return any(not isinstance(a, Skip) and shown_key(a.steps) not in avoid
                   for a in (self._attempt(family, problem, rule, placement) for rule in self.rules(family)))

    def _attempt(self, family: Family, problem: Problem, rule: MalRule, placement: str | int) -> Attempt | Skip:
        """``rule``'s working for ``problem``, or why it does not fit (same answer, unlike the family's forms)."""
        try:
            drafts = derive_mal_memo(family, problem.params, rule.id)
        except (ArithmeticError, ValueError, TypeError, KeyError):
            return Skip("mal_rule_failed")  # a family's bug: counted in the funnel, never kept
        if not drafts:
            return Skip("empty")
        drafts = dressed(without_repeats(drafts), problem.steps[-1].text)
        k = mal_step(drafts, problem)
        if k is None:
            return Skip("no_visible_change")
        if not placed(k, len(problem.steps), placement):
            return Skip("no_step_at_placement")
        if same_value(family.answer_of(drafts[-1].value), family.target(problem.params)):
            return Skip("same_answer")  # the rule happens to give the right answer here
        if unlike_family(problem.family, drafts[-1].text, clean_text=problem.steps[-1].text):
            return Skip("unlike_family_form")  # 1352/3 sweets where every answer is whole: a cue, not a slip
        clean = problem.steps[k - 1].text if k <= len(problem.steps) else ""
        return replay_attempt(family, problem, drafts, k, rule.explanation,
                              {"rule": rule.id, "from": clean, "to": drafts[k - 1].text})


for _subtype in (*CONCEPTUAL, "unit_conversion"):
    register(MalRuleInjector(_subtype))
