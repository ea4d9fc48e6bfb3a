"""Visual-perception errors: a value read wrongly off the figure, carried through (the image stays true)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from perturb.reasoning import register
from perturb.reasoning.base import Attempt, Injector, Skip, first_changed_step, replay_attempt
from synth.generators.base import Family, Reading, StepDraft
from synth.records import Problem

VISUAL = ("misread_value", "misread_label", "misread_scale", "miscount", "misread_relation")


def derive_with(family: Family, problem: Problem, changes: dict[str, Any]) -> list[StepDraft] | Skip:
    """The clean solution re-derived with some parameters replaced, or a Skip if the family cannot."""
    try:
        return family.derive({**problem.params, **changes})
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
        return Skip("derive_failed")


# The five visual injectors ask for one problem's readings in turn (and again to propose), and a family
# checks each misread by re-deriving the solution: remember the last problems' readings.
_READINGS: OrderedDict[int, tuple[Problem, tuple[Reading, ...]]] = OrderedDict()
_READINGS_KEPT = 32


def figure_readings(family: Family, problem: Problem) -> tuple[Reading, ...]:
    """``family.figure_readings(problem.params)``, memoised for the most recent problems (by identity)."""
    hit = _READINGS.get(id(problem))
    if hit is not None and hit[0] is problem:
        return hit[1]
    readings = tuple(family.figure_readings(problem.params))
    _READINGS[id(problem)] = (problem, readings)
    while len(_READINGS) > _READINGS_KEPT:
        _READINGS.popitem(last=False)
    return readings


class Misread(Injector):
    """Solve with the reading's parameters replaced by one of its plausible misreads (the figure stays true)."""

    # v2: misreads may replace several parameters (Reading.also), misreads whose working is exactly a
    # mal-rule's are left to the mal-rule, the families offer more readings than v1 did, and a table whose
    # rows each lost a value is explained as left out when counting.
    version = 2
    splices = True

    def __init__(self, subtype: str) -> None:
        self.subtype = subtype

    def readings(self, family: Family, problem: Problem) -> list[Reading]:
        return [r for r in figure_readings(family, problem) if r.kind == self.subtype and r.misreads]

    def applies(self, family: Family, problem: Problem) -> bool:
        return problem.figure is not None and bool(self.readings(family, problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        readings = self.readings(family, problem)
        if not readings:
            return Skip("no_reading")
        reading = readings[int(rng.integers(len(readings)))]
        wrong = reading.misreads[int(rng.integers(len(reading.misreads)))]
        try:
            changes = reading.changes(wrong)
        except ValueError:
            return Skip("malformed_misread")
        # Only the keys the misread really changes are recorded (a swap may keep one of them).
        changed = [{"param": key, "from": problem.params.get(key), "to": value}
                   for key, value in changes.items() if problem.params.get(key) != value]
        if not changed:
            return Skip("misread_equals_truth")
        drafts = derive_with(family, problem, changes)
        if isinstance(drafts, Skip):
            return drafts
        k = first_changed_step(drafts, problem.steps)
        true, shown = problem.params.get(reading.param), changes[reading.param]
        if _shortened(changed):  # an element missed when counting (a bar, a table row or column): fewer values
            explanation = (f"leaves {reading.element} out when counting what the figure shows{_rows_note(changed)}, "
                           f"taking {_pairs(changed, 'to')} instead of {_pairs(changed, 'from')}; "
                           "the solution is worked correctly from the miscount")
        elif reading.also:  # several values taken together (hands swapped, radius taken for a diameter)
            explanation = (f"misreads {reading.element} in the figure, taking "
                           f"{_pairs(changed, 'to')} instead of {_pairs(changed, 'from')}; "
                           "the solution is worked correctly from the misreading")
        elif isinstance(true, str):  # a relation read wrongly (which angle pair, which side is the hypotenuse)
            explanation = (f"misreads {reading.element} in the figure, taking {reading.param} as {shown} instead of "
                           f"{true}; the solution is worked correctly from the misreading")
        else:
            explanation = (f"reads {reading.element} in the figure as {_show(shown)} instead of {_show(true)}; "
                           "the solution is worked correctly from the misread value")
        edit = {"param": reading.param, "element": reading.element, "from": true, "to": shown, "changes": changed}
        return replay_attempt(family, problem, drafts, k, explanation, edit)


def _shortened(changed: list[dict[str, Any]]) -> bool:
    """Whether a misread leaves values out: some list came back shorter, or (a table) some of its rows did."""
    return any(_fewer(c["from"], c["to"]) for c in changed)


def _fewer(true: Any, shown: Any) -> bool:
    """``shown`` has items left out of ``true``: a shorter list, or as many items of which some lists have
    items left out and the rest are as drawn (a table's rows, a column or a cell missed)."""
    if not (isinstance(true, (list, tuple)) and isinstance(shown, (list, tuple))):
        return False
    if len(shown) < len(true):
        return True
    pairs = list(zip(true, shown))
    return len(shown) == len(true) and any(_fewer(t, s) for t, s in pairs) \
        and all(_fewer(t, s) or t == s for t, s in pairs)


def _rows_note(changed: list[dict[str, Any]]) -> str:
    """`` (the last entry of every row)`` when a table's rows each lost their last value: the column missed."""
    for c in changed:
        true, shown = c["from"], c["to"]
        if isinstance(true, (list, tuple)) and isinstance(shown, (list, tuple)) and len(true) == len(shown) > 0 \
                and all(isinstance(t, (list, tuple)) and isinstance(v, (list, tuple)) and len(t) > 0
                        and list(v) == list(t[:-1]) for t, v in zip(true, shown)):
            return " (the last entry of every row)"
    return ""


def _pairs(changed: list[dict[str, Any]], side: str) -> str:
    """``given = diameter, d = 7``; a key with no value on this side (None) is left out of the sentence."""
    def one(v: Any) -> str:
        return f"[{_show(v)}]" if isinstance(v, (list, tuple)) else str(v)

    return ", ".join(f"{c['param']} = {one(c[side])}" for c in changed if c[side] is not None)


def _show(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


for _subtype in VISUAL:
    register(Misread(_subtype))
