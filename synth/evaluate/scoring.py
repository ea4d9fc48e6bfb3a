"""From a stored response to a score (``score``), and from a task's scores to its summary (``summarize``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synth.evaluate.metrics import Scored, mean_by, worst_case
from synth.evaluate.tasks import Task
from synth.manifest import variant_label
from synth.records import Item


def conditions_of(item: Item) -> tuple[str, ...]:
    """What makes a variant differ from its clean twin, as comparison keys."""
    keys = []
    if item.variant.error is not None:
        keys.append(f"error:{item.variant.error.family}")
    if item.variant.control is not None:
        keys.append(f"superficial:{item.variant.control.subtype}")
    if item.degradations:
        keys.append("degradation:" + "+".join(f"{d.subtype}:{d.severity}" for d in item.degradations))
    return tuple(keys)


def score(task: Task, item: Item, run_index: int, response: str) -> Scored:
    """Parse one stored response and compare it with the item's gold label."""
    gold = task.gold(item)
    pred = task.parse(response)
    if task.credit is not None:
        credit = float(task.credit(item, pred))
        correct = credit >= 1.0
    else:
        correct = pred is not None and pred == gold
        credit = float(correct)
    error = item.variant.error
    return Scored(item.id, item.base_id, variant_label(item), conditions_of(item), run_index, gold, pred,
                  correct, credit, item.problem.family, error.family if error else "", item.problem.image_role)


def summarize(task: Task, scored: Sequence[Scored]) -> dict[str, Any]:
    """The task's metrics over every scored (item, run): ``n`` and ``unparsed``, then each of the task's
    own metrics in order, then the groupings every task reports."""
    if not scored:
        return {"n": 0}
    out: dict[str, Any] = {"n": len(scored), "unparsed": sum(s.pred is None for s in scored)}
    for metric in task.metrics:
        out |= metric(scored)
    out["by_variant"] = mean_by(scored, lambda s: s.variant)
    out["by_family"] = mean_by(scored, lambda s: s.family)
    out["by_error_family"] = mean_by([s for s in scored if s.error_family], lambda s: s.error_family)
    out["worst_case"] = worst_case(scored)
    return out
