"""Computational slips: a number computed wrongly at one step, carried forward or not."""

from __future__ import annotations

import numpy as np
import sympy

from perturb.reasoning import register
from perturb.reasoning.base import Attempt, Injector, Intent, Skip, choose_step
from perturb.reasoning.slips import COMMON_SLIPS, apply_slip
from synth.generators.base import Family, finalize, format_number
from synth.records import Problem


def _computed_steps(family: Family, problem: Problem) -> list[tuple[int, sympy.Basic]]:
    drafts = family.derive(problem.params)
    return [(i, d.result) for i, d in enumerate(drafts, start=1) if d.result is not None]


class _Slip(Injector):
    """Shared machinery: slip the number computed at step k, then replay or splice."""

    propagate: bool = True
    last_only: bool = False
    exclude_last: bool = False
    slip_kinds: tuple[str, ...] = COMMON_SLIPS

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        computed = _computed_steps(family, problem)
        n_steps = len(problem.steps)
        if self.last_only:
            computed = [c for c in computed if c[0] == n_steps]
        elif self.exclude_last:
            computed = [c for c in computed if c[0] < n_steps]
        k = choose_step([i for i, _ in computed], rng, "any" if self.last_only else placement)
        if k is None:
            return Skip("no_step_at_placement")
        true = dict(computed)[k]
        slipped = apply_slip(sympy.Rational(true), rng, self.slip_kinds)
        if slipped is None:
            return Skip("no_slip_fits")
        kind, wrong = slipped
        drafts = family.derive(problem.params, {k: wrong})
        replay = finalize(drafts)
        if self.propagate:
            steps = replay
            shown = format_number(family.answer_of(drafts[-1].value))
            tail = f"the error carries through to the final answer {shown}"
        else:  # non-propagated: only step k shows the slip; the student carries on correctly
            steps = problem.steps[: k - 1] + (replay[k - 1],) + problem.steps[k:]
            tail = "later steps continue from the correct value, so the final answer is still right"
        explanation = (f"Step {k} computes {format_number(wrong)} where {format_number(true)} is correct "
                       f"({kind.replace('_', ' ')}); {tail}.")
        edit = {"step": k, "field": "result", "from": str(true), "to": str(wrong), "slip": kind,
                "magnitude": str(wrong - true)}
        return Attempt(steps, Intent(first_error_step=k, propagated=self.propagate or k == n_steps,
                                     answer_changed=self.propagate, explanation=explanation, edit=edit))


class FinalNumber(_Slip):
    subtype = "final_number"
    last_only = True


class IntermediatePropagated(_Slip):
    subtype = "intermediate_propagated"
    exclude_last = True


class IntermediateCorrected(_Slip):
    subtype = "intermediate_corrected"
    exclude_last = True
    propagate = False


class SignError(_Slip):
    """A sign lost or flipped in one computed result, carried forward."""

    subtype = "sign_error"
    slip_kinds = ("sign_slip",)


for _cls in (FinalNumber, IntermediatePropagated, IntermediateCorrected, SignError):
    register(_cls())
