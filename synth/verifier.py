"""The verifier as callers above the generators use it: ``synth.verification`` with the family looked up by id.

The checks themselves live in ``synth.verification`` (core layer, no generator imports); this module
only adds the family registry, so ``verify(problem, steps)`` works without a family at hand. Code in
the core and generator layers imports ``synth.verification`` and passes the family.
"""

from __future__ import annotations

from collections.abc import Sequence

from synth import verification
from synth.generators import get_family
from synth.records import Problem, Step
from synth.verification import (
    DECLARE_RULE,
    REMARK,
    REMARK_RULE,
    SolutionFamily,
    Verdict,
    Worked,
    equal_answers,
    is_true_statement,
    parse_both,
    parse_either,
    parse_step,
    same_value,
    worked,
)


def verify(problem: Problem, steps: Sequence[Step], *, family: SolutionFamily | None = None,
           context: Worked | None = None) -> Verdict:
    """``synth.verification.verify``; without ``family``, the registered family of ``problem.family``."""
    if family is None:
        family = context.family if context is not None else get_family(problem.family)
    return verification.verify(problem, steps, family=family, context=context)


__all__ = ["DECLARE_RULE", "REMARK", "REMARK_RULE",
           "SolutionFamily", "Verdict", "Worked", "equal_answers", "is_true_statement", "parse_both",
           "parse_either", "parse_step", "same_value", "verify", "worked"]
