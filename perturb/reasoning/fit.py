"""Which error subtypes fit which family: one real injection into a few fixed probe problems per family.

The quota planner (``synth.allocation``) gives a subtype only to families where it fits, and the
subtype sweep (``perturb.reasoning.sweep``) plans only slots it can fill; both ask here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from perturb.reasoning import REGISTRY, inject
from synth.generators import get_family
from synth.seeding import stage_rng

PROBES_PER_CELL = 3
DIFFICULTIES = ("easy", "medium", "hard")  # probe order of subtype_kept


@cache
def _probes(family_id: str, difficulty: str) -> tuple[Any, Any]:
    """The family and a few of its problems, from fixed seeds independent of the run, to test which
    subtypes fit it (the visual injectors memoise each problem's figure readings themselves)."""
    family = get_family(family_id)
    problems = tuple(family.build(stage_rng(k, f"allocation:probe:{family_id}:{difficulty}"), difficulty=difficulty,
                                  question_type="free", problem_id=f"probe-{k}") for k in range(PROBES_PER_CELL))
    return family, problems


@cache
def subtype_kept(family_id: str, subtype: str) -> bool:
    """Whether one real injection of ``subtype`` into a probe problem of ``family_id`` passes the verifier.

    ``applies`` only says an injector finds something to edit; some edits are always refused
    (renaming the variable of a derivative changes what the notation means), and a subtype planned
    there could never be filled. One injection per (family, subtype) tells the two apart; a refused
    one is retried on the first fitting probe of each other difficulty (a subtype may need a longer
    solution), and a refusal costs ``inject``'s resampling, so no more is tried.
    """
    injector = REGISTRY[subtype]
    for difficulty in DIFFICULTIES:
        family, problems = _probes(family_id, difficulty)
        fitting = [k for k, problem in enumerate(problems) if injector.applies(family, problem)]
        if fitting:
            rng = stage_rng(fitting[0], f"allocation:keep:{family_id}:{subtype}:{difficulty}")
            if inject(problems[fitting[0]], subtype, rng) is not None:
                return True
    return False


@cache
def subtype_fit(family_id: str, difficulty: str, subtype: str) -> float:
    """Share of probe problems of ``family_id`` at ``difficulty`` that injector ``subtype`` can act on,
    0 when no injection of it into the family is ever kept (see ``subtype_kept``)."""
    family, problems = _probes(family_id, difficulty)
    share = sum(bool(REGISTRY[subtype].applies(family, p)) for p in problems) / len(problems)
    return share if share and subtype_kept(family_id, subtype) else 0.0
