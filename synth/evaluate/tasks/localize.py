"""localize (ErrorRadar STEP / ProcessBench): the first wrong step, or -1. Accuracy and ProcessBench F1."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from synth.evaluate.metrics import Metric, Scored, predictions
from synth.evaluate.tasks import Task, register_task, shows_solution
from synth.evaluate.tasks._parsing import normalized_lines

NO_ERROR = -1
# A step number must stand alone: `9^9^9`, `3.5` and `12345` are not step numbers.
_STEP_VALUE = r"(-1|[0-9]{1,4}|none|no error|n/a|na)(?![0-9a-z^*/(]|[.,][0-9])"
_LOCALIZE_KEYED = re.compile(rf"(?<![a-z])(?:first )?error(?: step)? ?[:=] ?(?:step ?)?{_STEP_VALUE}")
_LOCALIZE_BARE = re.compile(r"(?:step ?)?(-1|[0-9]{1,4})|(?:there is )?(no error|none|all steps are correct)")


def parse_localize(response: str) -> int | None:
    """The first wrong step (1-based), -1 for "no error", or None.

    >>> parse_localize("The slip is in step 3.\\nError Step: Step 3")
    3
    """
    lines = normalized_lines(response)
    value: str | None = None
    for line in reversed(lines):
        found = _LOCALIZE_KEYED.findall(line)
        if found:
            value = found[-1]
            break
    if value is None and lines:
        m = _LOCALIZE_BARE.fullmatch(lines[-1].rstrip(".!"))
        if m:
            value = m.group(1) or m.group(2)
    if value is None:
        return None
    if not value[-1].isdigit():
        return NO_ERROR
    step = int(value)
    return step if step == NO_ERROR or step >= 1 else None


def processbench_f1(gold: Sequence[int], pred: Sequence[int | None]) -> dict[str, Any]:
    """ProcessBench: harmonic mean of exact-step accuracy on error items and accuracy on no-error items."""
    err = [p == g for g, p in zip(gold, pred) if g != NO_ERROR]
    ok = [p == g for g, p in zip(gold, pred) if g == NO_ERROR]
    acc_err = float(np.mean(err)) if err else None
    acc_ok = float(np.mean(ok)) if ok else None
    f1 = None
    if acc_err is not None and acc_ok is not None:
        f1 = 0.0 if acc_err + acc_ok == 0 else 2 * acc_err * acc_ok / (acc_err + acc_ok)
    return {"accuracy_error_items": acc_err, "accuracy_no_error_items": acc_ok, "f1": f1,
            "n_error_items": len(err), "n_no_error_items": len(ok)}


def step_metrics() -> Metric:
    """Exact-step accuracy over every item, then ProcessBench's split by error / no-error items and its F1."""
    def metric(scored: Sequence[Scored]) -> dict[str, Any]:
        gold, pred = predictions(scored)
        out = {"accuracy": float(np.mean([str(g) == str(x) for g, x in zip(gold, pred)]))}
        return out | processbench_f1([s.gold for s in scored], [s.pred for s in scored])
    return metric


register_task(Task(
    id="localize", summary="the first wrong step, or -1 (accuracy, ProcessBench F1)",
    applies=shows_solution, needs="a shown worked solution (a `degrade` output of your own images has none)",
    template="eval/localize.j2",
    gold=lambda item: item.variant.error.first_error_step if item.variant.error else NO_ERROR,
    parse=parse_localize,
    answer=lambda label: "Error Step: -1" if label == NO_ERROR else f"Error Step: Step {label}",
    choices=lambda item: (NO_ERROR, *range(1, len(item.variant.steps) + 1)),
    metrics=(step_metrics(),),
    headline="f1",
))
