"""From a stored response to a score (``score``), and from a task's scores to its summary (``summarize``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from synth.evaluate.metrics import MIN_BASES, Scored, headline_interval, mean_by, worst_case
from synth.evaluate.tasks import Task
from synth.manifest import variant_label
from synth.records import Item


def capture_of(item: Item) -> str:
    """A photo's capture condition as a comparison key (``profile:<name>`` or ``degradation:<op>:<severity>``),
    "" for an unphotographed item."""
    if item.profile:   # a named capture profile is one condition, reported under its name
        return f"profile:{item.profile}"
    if item.degradations:
        return "degradation:" + "+".join(f"{d.subtype}:{d.severity}" for d in item.degradations)
    return ""


def conditions_of(item: Item) -> tuple[str, ...]:
    """What makes a variant differ from its clean twin, as comparison keys.

    A photographed error or superficial variant has none: it differs in content and capture at once, and
    is compared with its own unphotographed page and its clean twin by ``capture_interaction`` instead.
    """
    if item.degradations and item.variant.kind != "clean":
        return ()
    keys = []
    if item.variant.error is not None:
        keys.append(f"error:{item.variant.error.family}")
    if item.variant.control is not None:
        keys.append(f"superficial:{item.variant.control.subtype}")
    if item.degradations:
        keys.append(capture_of(item))
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
                  correct, credit, item.problem.family, error.family if error else "", item.problem.image_role,
                  capture_of(item), item.source_id or "")


def summarize(task: Task, scored: Sequence[Scored]) -> dict[str, Any]:
    """The task's metrics over every scored (item, run): ``n`` and ``unparsed``, then each of the task's
    own metrics in order, then the groupings every task reports."""
    if not scored:
        return {"n": 0}
    out: dict[str, Any] = {"n": len(scored), "unparsed": sum(s.pred is None for s in scored)}
    for metric in task.metrics:
        out |= metric(scored)
    groups = {"by_variant": (scored, _variant_group), "by_family": (scored, lambda s: s.family),
              "by_error_family": ([s for s in scored if s.error_family], lambda s: s.error_family)}
    for name, (subset, key) in groups.items():
        out[name] = mean_by(subset, key)
    # Base problems behind each group's number: a group under MIN_BASES is flagged in the report.
    out["bases"] = {name: bases_by(subset, key) for name, (subset, key) in groups.items()}
    out["worst_case"] = worst_case(scored)
    return out


def _variant_group(s: Scored) -> str:
    """The variant, with photographed errors and controls apart from the unphotographed ones."""
    return f"{s.variant} photographed" if s.capture and s.variant != "degraded" else s.variant


def bases_by(scored: Sequence[Scored], key: Callable[[Scored], str]) -> dict[str, int]:
    """How many base problems each group's items come from."""
    bases: dict[str, set[str]] = defaultdict(set)
    for s in scored:
        bases[key(s)].add(s.base_id)
    return {k: len(v) for k, v in sorted(bases.items())}


def headline(task: Task, scored: Sequence[Scored], metrics: dict[str, Any], *, seed: int = 0,
             n_boot: int = 1000) -> dict[str, Any] | None:
    """The task's one number for a leaderboard: its ``headline`` metric with a 95 % interval clustered by base
    problem (None when the task has no scored answers or the metric is undefined)."""
    value = metrics.get(task.headline)
    if not scored or not isinstance(value, (int, float)):
        return None
    metric = next((m for m in task.metrics if task.headline in m(scored)), None)
    interval = None if metric is None else headline_interval(scored, metric, task.headline, seed=seed,
                                                             n_boot=n_boot)
    n_bases = len({s.base_id for s in scored})
    return {"metric": task.headline, "value": float(value), "ci95": None if interval is None else list(interval),
            "higher_is_better": not task.lower_is_better, "n": len(scored), "n_bases": n_bases,
            "small_sample": n_bases < MIN_BASES}
