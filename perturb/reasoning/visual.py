"""Visual-perception errors: a value read wrongly off the figure, carried through (the image stays true)."""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.reasoning import register
from perturb.reasoning.base import Attempt, Injector, Skip, first_changed_step, replay_attempt
from synth.generators.base import Family, Reading, StepDraft
from synth.records import Problem

VISUAL = ("misread_value", "misread_label", "misread_scale", "miscount", "misread_relation")


def derive_with(family: Family, problem: Problem, param: str, value: Any) -> list[StepDraft] | Skip:
    """The clean solution re-derived with one parameter replaced, or a Skip if the family cannot."""
    params = {**problem.params, param: value}
    try:
        return family.derive(params)
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
        return Skip("derive_failed")


class Misread(Injector):
    """Solve with ``params[reading.param]`` replaced by one of the reading's plausible misreads."""

    splices = True

    def __init__(self, subtype: str) -> None:
        self.subtype = subtype

    def readings(self, family: Family, problem: Problem) -> list[Reading]:
        return [r for r in family.figure_readings(problem.params) if r.kind == self.subtype and r.misreads]

    def applies(self, family: Family, problem: Problem) -> bool:
        return problem.figure is not None and bool(self.readings(family, problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        readings = self.readings(family, problem)
        if not readings:
            return Skip("no_reading")
        reading = readings[int(rng.integers(len(readings)))]
        wrong = reading.misreads[int(rng.integers(len(reading.misreads)))]
        true = problem.params[reading.param]
        if wrong == true:
            return Skip("misread_equals_truth")
        drafts = derive_with(family, problem, reading.param, wrong)
        if isinstance(drafts, Skip):
            return drafts
        k = first_changed_step(drafts, problem.steps)
        explanation = (f"reads {reading.element} in the figure as {_show(wrong)} instead of {_show(true)}; "
                       "the solution is worked correctly from the misread value")
        edit = {"param": reading.param, "element": reading.element, "from": true, "to": wrong}
        return replay_attempt(family, problem, drafts, k, explanation, edit)


def _show(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


for _subtype in VISUAL:
    register(Misread(_subtype))
