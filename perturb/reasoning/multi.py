"""Several errors in one shown solution: a first error of any subtype, then text-level errors stacked on it.

A computational or conceptual error re-derives the whole solution, so it can only come first;
notational and presentation injectors (``Injector.edits_text``) edit the shown lines, so they
can be laid on top. Every added error is checked by the verifier on the combined solution: its
line must be new (not one the earlier errors already made wrong: ``coincides``), the earlier
errors must all still be found (``compensating`` otherwise), and the first error step, the
misdisplayed lines, the presentation faults and the answer must be what the errors together say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from perturb.reasoning.base import INJECTORS, Attempt, Funnel, Skip, inject, plain_math
from synth.generators import get_family
from synth.mathparse import to_text
from synth.records import ErrorLabel, Problem, Step, Variant
from synth.taxonomy import SUBTYPES, projections
from synth.verifier import Verdict, verify


def stackable(subtype: str) -> bool:
    """Whether errors of ``subtype`` can be laid on top of another error (they edit shown lines only)."""
    return bool(getattr(INJECTORS[subtype], "edits_text", False))


def _changed_lines(before: tuple[Step, ...], after: tuple[Step, ...]) -> set[int]:
    n = max(len(before), len(after))
    return {i for i in range(1, n + 1)
            if i > len(before) or i > len(after) or before[i - 1].text != after[i - 1].text}


def _display_steps(labels: Sequence[ErrorLabel]) -> set[int]:
    return {int(label.edit["step"]) for label in labels if label.family == "notational"}


def _disagreement(attempt: Attempt, verdict: Verdict, labels: Sequence[ErrorLabel], changed: set[int]) -> str | None:
    intent = attempt.intent
    earlier = set().union(*(label.error_steps for label in labels))
    if changed & earlier:
        return "coincides"
    found = set(verdict.error_steps)
    if not earlier <= found:
        return "compensating"
    if intent.first_error_step not in found:
        return "no_op"
    if verdict.first_error_step != min(intent.first_error_step, *(label.first_error_step for label in labels)):
        return "first_step_mismatch"
    misdisplayed = {i for i, ok in enumerate(verdict.parses, start=1) if not ok}
    if misdisplayed != _display_steps(labels) | ({intent.display_step} if intent.display_step else set()):
        return "display_mismatch"
    kinds = {label.subtype for label in labels if label.family == "presentation"}
    if {k for k in verdict.presentation if k} != kinds | ({intent.presentation} if intent.presentation else set()):
        return "presentation_mismatch"
    answer_wrong = intent.answer_changed or any(label.answer_changed for label in labels)
    if verdict.answer_correct == answer_wrong:
        return "compensating" if answer_wrong else "answer_mismatch"
    return None


def stack(problem: Problem, variant: Variant, subtype: str, rng: np.random.Generator, *,
          max_attempts: int = 8, funnel: Funnel | None = None) -> Variant | None:
    """``variant`` with one more verified error of ``subtype`` laid on its shown lines, or None."""
    injector = INJECTORS[subtype]
    if not stackable(subtype):
        raise ValueError(f"{subtype} re-derives the solution, so it cannot be stacked on another error; "
                         "stack notational or presentation subtypes instead")
    if variant.error is None:
        raise ValueError("stack needs an error variant to add to; inject the first error with inject()")
    family = get_family(problem.family)
    funnel = funnel if funnel is not None else Funnel()
    name = f"{injector.id}+stacked"
    labels = [variant.error, *variant.errors]
    shown = replace(problem, steps=variant.steps)
    if not injector.applies(family, shown):
        funnel.reject(name, "not_applicable")
        return None
    earlier = set().union(*(label.error_steps for label in labels))
    free = [i for i in range(1, len(variant.steps) + 1) if i not in earlier]
    tries = 0
    # Each free line (not already wrong) is offered once, in a seeded order, as the placement.
    for i in rng.permutation(len(free)):
        if tries == max_attempts:
            break
        attempt = injector.propose(family, shown, rng, free[int(i)])
        if isinstance(attempt, Skip) and attempt.reason.endswith("_at_placement"):
            continue  # nothing of this kind on that line: try the next one
        tries += 1
        funnel.attempted[name] += 1
        if not isinstance(attempt, Attempt):
            funnel.reject(name, getattr(attempt, "reason", "not_an_error"))
            continue
        verdict = verify(problem, attempt.steps, family=family)
        reason = _disagreement(attempt, verdict, labels, _changed_lines(variant.steps, attempt.steps))
        if reason is not None:
            funnel.reject(name, reason)
            continue
        funnel.kept[name] += 1
        intent = attempt.intent
        own = tuple(sorted((set(verdict.error_steps) - earlier) | {intent.first_error_step}))
        shown_answer = to_text(verdict.shown_answer) if verdict.shown_answer is not None else ""
        label = ErrorLabel(
            family=SUBTYPES[subtype].family, subtype=subtype, first_error_step=intent.first_error_step,
            error_steps=own, propagated=intent.propagated, answer_changed=intent.answer_changed,
            shown_answer=shown_answer, explanation=plain_math(intent.explanation), injector=injector.id,
            edit=intent.edit,
            projections=projections(subtype), answer_correct=verdict.answer_fully_correct)
        # Whether the answer is right as asked is a fact of the combined solution: every label says the same.
        labels = [replace(e, answer_correct=verdict.answer_fully_correct) for e in labels]
        ordered = sorted([*labels, label], key=lambda e: e.first_error_step)
        return Variant(kind="error", steps=attempt.steps, shown_answer=shown_answer, is_correct=False,
                       error=ordered[0], errors=tuple(ordered[1:]))
    if not tries:
        funnel.reject(name, "no_free_site")
    return None


def inject_many(problem: Problem, subtypes: Sequence[str], rng: np.random.Generator, *,
                placement: str | int = "any", max_attempts: int = 8, funnel: Funnel | None = None,
                propagate: bool = True) -> Variant | None:
    """A variant with one verified error per entry of ``subtypes`` (the first of any subtype), or None.

    ``error`` holds the error that comes first in the solution, ``errors`` the others in order.
    A superficial first subtype gives its no-error control unchanged (nothing is stacked on it).
    """
    if not subtypes:
        raise ValueError("inject_many needs at least one subtype")
    funnel = funnel if funnel is not None else Funnel()
    variant = inject(problem, subtypes[0], rng, placement=placement, max_attempts=max_attempts, funnel=funnel,
                     propagate=propagate)
    if variant is None or variant.error is None:
        return variant
    for subtype in subtypes[1:]:
        variant = stack(problem, variant, subtype, rng, max_attempts=max_attempts, funnel=funnel)
        if variant is None:
            return None
    return variant


__all__ = ["inject_many", "stack", "stackable"]
