"""Scores from stored responses, task metrics (scikit-learn), paired clean->variant deltas (clustered bootstrap)."""

from __future__ import annotations

import hashlib
import warnings
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    precision_recall_fscore_support,
)

from synth.evaluate.tasks import NO_ERROR, Task
from synth.manifest import variant_label
from synth.records import Item

UNPARSED = "<unparsed>"


@dataclass(frozen=True)
class Scored:
    """One answered (item, run): the gold label, the parsed prediction (None = unparseable), and a 0/1 score."""

    item_id: str
    base_id: str
    variant: str             # clean, error, superficial, degraded
    conditions: tuple[str, ...]  # e.g. ("degradation:blur:2",), ("error:computational",); () for clean
    run_index: int
    gold: Hashable
    pred: Hashable | None
    correct: bool


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
    return Scored(item.id, item.base_id, variant_label(item), conditions_of(item), run_index, gold, pred,
                  pred is not None and pred == gold)


# -- task metrics ---------------------------------------------------------------------------
def _as_predictions(scored: Sequence[Scored]) -> tuple[list[Any], list[Any]]:
    # An unparseable answer is its own (always wrong) class, so it counts against the model.
    gold = [s.gold for s in scored]
    pred = [s.pred if s.pred is not None else UNPARSED for s in scored]
    return gold, pred


def classification_metrics(gold: Sequence[Any], pred: Sequence[Any], labels: Sequence[Any]) -> dict[str, Any]:
    """Accuracy, balanced accuracy, macro P/R/F1 over ``labels``, and the confusion matrix (rows = gold)."""
    gold, pred = [str(g) for g in gold], [str(p) for p in pred]
    labels = [str(x) for x in labels]
    present = [x for x in labels if x in set(gold)]
    extra = sorted(set(pred) - set(labels))
    p, r, f, _ = precision_recall_fscore_support(gold, pred, labels=present, average="macro", zero_division=0)
    with warnings.catch_warnings():
        # "<unparsed>" is a prediction class that gold never has; that is the point.
        warnings.filterwarnings("ignore", message="y_pred contains classes not in y_true")
        balanced = float(balanced_accuracy_score(gold, pred)) if len(set(gold)) > 1 else None
    return {
        "n": len(gold),
        "accuracy": float(accuracy_score(gold, pred)),
        "balanced_accuracy": balanced,
        "macro_precision": float(p), "macro_recall": float(r), "macro_f1": float(f),
        "confusion": {"labels": labels + extra,
                      "matrix": confusion_matrix(gold, pred, labels=labels + extra).tolist()},
    }


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


def summarize(task: Task, scored: Sequence[Scored]) -> dict[str, Any]:
    """The task's headline metrics over every scored (item, run)."""
    if not scored:
        return {"n": 0}
    gold, pred = _as_predictions(scored)
    out: dict[str, Any] = {"n": len(scored), "unparsed": sum(s.pred is None for s in scored)}
    if task.metric == "binary":
        # Detection's positive class is "incorrect" (an error is present).
        m = classification_metrics(gold, pred, task.labels or ())
        p, r, f, _ = precision_recall_fscore_support([str(g) for g in gold], [str(x) for x in pred],
                                                     labels=["incorrect"], average=None, zero_division=0)
        out |= m | {"error_precision": float(p[0]), "error_recall": float(r[0]), "error_f1": float(f[0])}
    elif task.metric == "localize":
        out["accuracy"] = float(accuracy_score([str(g) for g in gold], [str(x) for x in pred]))
        out |= processbench_f1([s.gold for s in scored], [s.pred for s in scored])
    elif task.metric == "multiclass":
        out |= classification_metrics(gold, pred, task.labels or sorted({str(g) for g in gold}))
    else:
        raise ValueError(f"task {task.id} has unknown metric kind {task.metric!r}")
    out["by_variant"] = {v: float(np.mean([s.correct for s in scored if s.variant == v]))
                         for v in sorted({s.variant for s in scored})}
    return out


# -- paired deltas --------------------------------------------------------------------------
def _stable_seed(seed: int, name: str) -> list[int]:
    return [seed, int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")]


def bootstrap_delta(clean: np.ndarray, variant: np.ndarray, *, seed: int, n_boot: int = 2000,
                    name: str = "") -> tuple[float, float]:
    """Percentile 95 % CI of mean(variant - clean), resampling base problems (clusters) with replacement.

    ``clean[i]`` and ``variant[i]`` are base problem i's mean scores; the generator is seeded
    from (seed, name) so every condition's interval is reproducible on its own.
    """
    rng = np.random.default_rng(_stable_seed(seed, name))
    diffs = variant - clean
    picks = rng.integers(0, len(diffs), size=(n_boot, len(diffs)))
    means = diffs[picks].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def paired_deltas(scored: Sequence[Scored], *, seed: int = 0, n_boot: int = 2000) -> list[dict[str, Any]]:
    """Accuracy change clean -> variant per condition, on the base problems that have both.

    Scores are averaged over runs (and over a base's several variants of one condition) before
    pairing, so each base problem is one cluster.
    """
    clean: dict[str, list[float]] = defaultdict(list)
    by_cond: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in scored:
        if s.variant == "clean":
            clean[s.base_id].append(float(s.correct))
        for cond in s.conditions:
            by_cond[cond][s.base_id].append(float(s.correct))
    rows = []
    for cond in sorted(by_cond):
        bases = sorted(b for b in by_cond[cond] if b in clean)
        if not bases:
            continue
        c = np.array([np.mean(clean[b]) for b in bases])
        v = np.array([np.mean(by_cond[cond][b]) for b in bases])
        lo, hi = bootstrap_delta(c, v, seed=seed, n_boot=n_boot, name=cond)
        kind, _, rest = cond.partition(":")
        rows.append({"condition": cond, "kind": kind, "detail": rest, "n_bases": len(bases),
                     "clean_accuracy": float(c.mean()), "variant_accuracy": float(v.mean()),
                     "delta": float((v - c).mean()), "ci95": [lo, hi]})
    return rows


def run_stability(scored: Sequence[Scored]) -> dict[str, Any] | None:
    """With several runs: mean accuracy, majority-vote accuracy, and the share of items all runs agree on."""
    runs: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        runs[s.item_id].append(s)
    if not runs or max(len(v) for v in runs.values()) < 2:
        return None
    per_item = list(runs.values())
    return {
        "expected_accuracy": float(np.mean([np.mean([s.correct for s in v]) for v in per_item])),
        "majority_accuracy": float(np.mean([np.mean([s.correct for s in v]) > 0.5 for v in per_item])),
        "consistency": float(np.mean([len({str(s.pred) for s in v}) == 1 for v in per_item])),
    }
