"""Conceptual errors from the families' mal-rule catalogues, one injector per subtype (and unit_conversion)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from perturb.reasoning import register
from perturb.reasoning.base import Attempt, Injector, Skip, first_changed_step, replay_attempt
from perturb.reasoning.conventions import dressed, drifts, unlike_family, without_repeats
from synth.generators import REGISTRY as FAMILIES
from synth.generators.base import Family, MalRule, StepDraft
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
    # v2: the variant ends in the family's answer forms (resampled otherwise) with the answer line's label and
    # unit, a repeated line kept once; a rule whose working shows no form its clean twin lacks is preferred
    version = 2

    def __init__(self, subtype: str) -> None:
        self.subtype = subtype

    def rules(self, family: Family) -> list[MalRule]:
        return [r for r in family.malrules if r.subtype == self.subtype]

    def applies(self, family: Family, problem: Problem) -> bool:
        """Some rule of this subtype has its preconditions met by this problem (derive_mal is deterministic)."""
        for rule in self.rules(family):
            try:
                if family.derive_mal(problem.params, rule.id):
                    return True
            except (ArithmeticError, ValueError, TypeError, KeyError):
                continue
        return False

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        rules = self.rules(family)
        reason = "rule_does_not_apply"
        fallback: Attempt | Skip | None = None  # a rule whose working shows a form its clean twin lacks
        for i in rng.permutation(len(rules)):
            rule = rules[int(i)]
            try:
                drafts = family.derive_mal(problem.params, rule.id)
            except (ArithmeticError, ValueError, TypeError, KeyError):
                reason = "mal_rule_failed"  # a family's bug: counted in the funnel, never kept
                continue
            if not drafts:
                continue
            drafts = dressed(without_repeats(drafts), problem.steps[-1].text)
            k = mal_step(drafts, problem)
            if k is None:
                reason = "no_visible_change"
                continue
            if not placed(k, len(problem.steps), placement):
                reason = "no_step_at_placement"
                continue
            if same_value(family.answer_of(drafts[-1].value), family.target(problem.params)):
                reason = "same_answer"  # the rule happens to give the right answer here
                continue
            if unlike_family(problem.family, drafts[-1].text, clean_text=problem.steps[-1].text):
                reason = "unlike_family_form"  # 1352/3 sweets where every answer is whole: a cue, not a slip
                continue
            clean = problem.steps[k - 1].text if k <= len(problem.steps) else ""
            attempt = replay_attempt(family, problem, drafts, k, rule.explanation,
                                     {"rule": rule.id, "from": clean, "to": drafts[k - 1].text})
            if not drifts(drafts, problem.steps):
                return attempt
            fallback = fallback or attempt
        return fallback or Skip(reason)


for _subtype in (*CONCEPTUAL, "unit_conversion"):
    register(MalRuleInjector(_subtype))
