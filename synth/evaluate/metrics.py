"""Shared statistics: the Scored record, metric factories tasks compose, paired deltas with a clustered
bootstrap, run stability and Cohen's kappa between models.

The classification numbers are scikit-learn's (``sklearn.metrics``), imported inside the functions that use
them: importing sklearn costs seconds, and every task module imports this one (``mathstress eval --help`` reads
the task registry without it).

A metric is a function of the scored answers returning named numbers (``Metric``); a task lists the
ones it reports (``Task.metrics``). The factories here are the ones several tasks share; a metric
only one task reports lives in that task's module.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

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
    credit: float | None = None  # partial credit in [0, 1] (loose accuracy, 1 - CER); None means float(correct)
    family: str = ""             # the problem family (generator id)
    error_family: str = ""       # the injected error's family, "" for no-error items
    image_role: str = ""
    capture: str = ""            # a photo's capture condition ("degradation:blur:2", "profile:desk"); "" if none
    source_id: str = ""          # a photo's unphotographed page (manifest source_id); "" if not a photo

    def __post_init__(self) -> None:
        if self.credit is None:
            object.__setattr__(self, "credit", float(self.correct))


Metric = Callable[[Sequence[Scored]], dict[str, Any]]


# -- shared metric factories ----------------------------------------------------------------
def predictions(scored: Sequence[Scored]) -> tuple[list[Any], list[Any]]:
    """Gold labels and predictions, an unparseable answer being its own (always wrong) class."""
    gold = [s.gold for s in scored]
    pred = [s.pred if s.pred is not None else UNPARSED for s in scored]
    return gold, pred


def _quiet_sklearn() -> Any:
    """A context in which sklearn.metrics skips its parameter checks (ours are typed) and does not warn about
    classes seen only in the predictions ("<unparsed>"), which our callers expect."""
    import warnings
    from contextlib import ExitStack

    import sklearn

    stack = ExitStack()
    stack.enter_context(sklearn.config_context(skip_parameter_validation=True))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def _codes(gold: Sequence[Any], pred: Sequence[Any], labels: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """Gold and predictions as small integers (labels first, anything else after): sklearn's label checks on
    Python strings cost more than the metric itself, and the numbers do not depend on the encoding."""
    index = {label: i for i, label in enumerate(labels)}
    for value in (*gold, *pred):
        index.setdefault(value, len(index))
    return (np.fromiter((index[g] for g in gold), dtype=np.int64, count=len(gold)),
            np.fromiter((index[p] for p in pred), dtype=np.int64, count=len(pred)), len(labels))


def confusion_counts(gold: Sequence[Any], pred: Sequence[Any], labels: Sequence[Any]) -> np.ndarray:
    """Counts of (gold, predicted) pairs over ``labels`` (rows gold, columns predicted); pairs with a
    label outside ``labels`` are left out, as ``sklearn.metrics.confusion_matrix`` does."""
    g, p, n = _codes(gold, pred, labels)
    return _confusion(g, p, n)[:n, :n]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.zeros_like(num, dtype=float), where=den > 0)


def _scores(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 and support of the first ``k`` labels of a confusion matrix, as
    ``precision_recall_fscore_support(..., zero_division=0)`` computes them from the same counts."""
    tp = np.diag(matrix)[:k].astype(float)
    predicted, support = matrix.sum(axis=0)[:k].astype(float), matrix.sum(axis=1)[:k].astype(float)
    return _ratio(tp, predicted), _ratio(tp, support), _ratio(2 * tp, predicted + support), support.astype(int)


def precision_recall_f1(gold: Sequence[Any], pred: Sequence[Any],
                        labels: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per label: precision, recall, F1 and support (0 where undefined, scikit-learn's zero_division=0)."""
    g, p, n = _codes(gold, pred, labels)
    return _scores(_confusion(g, p, n), n)


def _confusion(g: np.ndarray, p: np.ndarray, size: int) -> np.ndarray:
    """sklearn's confusion matrix over every code seen (one call: its input checks cost more than the counting,
    and every number below is read from this matrix, as sklearn's own precision/recall functions do)."""
    from sklearn.metrics import confusion_matrix

    n = max(size, int(max(g.max(initial=-1), p.max(initial=-1))) + 1)
    if n == 0 or len(g) == 0:
        return np.zeros((n, n), dtype=np.int64)
    with _quiet_sklearn():
        return confusion_matrix(g, p, labels=np.arange(n)).astype(np.int64)


def classification_metrics(gold: Sequence[Any], pred: Sequence[Any], labels: Sequence[Any]) -> dict[str, Any]:
    """Accuracy, balanced accuracy, macro P/R/F1 over ``labels``, and the confusion matrix (rows = gold)."""
    gold, pred = [str(g) for g in gold], [str(p) for p in pred]
    labels = [str(x) for x in labels]
    extra = sorted(set(pred) - set(labels))
    shown = labels + extra
    every = shown + sorted(set(gold) - set(shown))   # gold-only classes count in balanced accuracy, not in the table
    g, p, _ = _codes(gold, pred, every)
    full = _confusion(g, p, len(every))   # labels never seen are zero rows and columns
    prec, rec, f1, support = _scores(full, len(every))
    present = [i for i in range(len(labels)) if support[i] > 0]
    # Balanced accuracy: mean recall over the gold classes (a prediction-only class such as "<unparsed>" has none),
    # as sklearn's balanced_accuracy_score.
    seen = sorted((i for i in range(len(every)) if support[i] > 0), key=lambda i: every[i])   # sklearn's order
    return {
        "n": len(gold),
        "accuracy": float(np.trace(full) / len(gold)) if gold else 0.0,
        "balanced_accuracy": float(np.mean(rec[seen])) if len(seen) > 1 else None,
        "macro_precision": float(np.mean(prec[present])) if present else 0.0,
        "macro_recall": float(np.mean(rec[present])) if present else 0.0,
        "macro_f1": float(np.mean(f1[present])) if present else 0.0,
        "confusion": {"labels": shown, "matrix": full[:len(shown), :len(shown)].tolist()},
    }


def per_class_metrics(gold: Sequence[Any], pred: Sequence[Any], labels: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Precision, recall, F1 and support per gold label (ErrorRadar reports all three per category)."""
    g, p = [str(x) for x in gold], [str(x) for x in pred]
    labels = [str(x) for x in labels]
    prec, rec, f1, support = precision_recall_f1(g, p, labels)
    return {label: {"precision": float(prec[i]), "recall": float(rec[i]), "f1": float(f1[i]),
                    "support": int(support[i])} for i, label in enumerate(labels)}


def classification(labels: Sequence[Hashable] | None = None, *, per_class: bool = False) -> Metric:
    """Closed tasks: ``classification_metrics`` over ``labels`` (None: the gold labels seen, sorted), and
    with ``per_class`` the P/R/F1 of each label under ``per_class``."""
    def metric(scored: Sequence[Scored]) -> dict[str, Any]:
        gold, pred = predictions(scored)
        names = labels or sorted({str(g) for g in gold})
        out = classification_metrics(gold, pred, names)
        if per_class:
            out["per_class"] = per_class_metrics(gold, pred, names)
        return out
    return metric


def accuracy() -> Metric:
    """Share of answers scored right (strict: full credit only)."""
    def metric(scored: Sequence[Scored]) -> dict[str, Any]:
        return {"accuracy": float(np.mean([s.correct for s in scored]))}
    return metric


def loose_accuracy() -> Metric:
    """Mean partial credit (MathReal's loose accuracy: matched parts over parts)."""
    def metric(scored: Sequence[Scored]) -> dict[str, Any]:
        return {"loose_accuracy": float(np.mean([s.credit for s in scored]))}
    return metric


def mean_by(scored: Sequence[Scored], key: Callable[[Scored], str]) -> dict[str, float]:
    """Mean credit per group (credit is the 0/1 score for closed tasks)."""
    groups: dict[str, list[float]] = defaultdict(list)
    for s in scored:
        groups[key(s)].append(s.credit)
    return {k: float(np.mean(v)) for k, v in sorted(groups.items())}


def worst_case(scored: Sequence[Scored]) -> dict[str, Any]:
    """DynaMath worst-case accuracy: a base problem counts only if every item derived from it is right.

    Runs are averaged per item first, so an item is "right" on the majority of its runs
    (ties count wrong). Variant items of a base are its clean control, its errors, its
    superficial controls and its degraded photos.
    """
    per_item: dict[str, list[float]] = defaultdict(list)
    base_of: dict[str, str] = {}
    for s in scored:
        per_item[s.item_id].append(float(s.correct))
        base_of[s.item_id] = s.base_id
    bases: dict[str, list[bool]] = defaultdict(list)
    for item_id, values in per_item.items():
        bases[base_of[item_id]].append(float(np.mean(values)) > 0.5)
    if not bases:
        return {"n_bases": 0}
    return {"n_bases": len(bases), "accuracy": float(np.mean([all(v) for v in bases.values()])),
            "mean_items_per_base": float(np.mean([len(v) for v in bases.values()]))}


# -- paired deltas --------------------------------------------------------------------------
def _stable_seed(seed: int, name: str) -> list[int]:
    return [seed, int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")]


# Fewer base problems than this and an interval says little: 4 bases give intervals spanning 0-1, and 3 bases
# that all agree give [0, 0]. Such cells are flagged ("small_sample") wherever they are reported.
MIN_BASES = 30


def _bootstrap_means(values: Sequence[np.ndarray], *, seed: int, n_boot: int, name: str) -> list[tuple[float, float]]:
    """Percentile 95 % CI of the mean of each array, all resampled with the same picks of base problems."""
    rng = np.random.default_rng(_stable_seed(seed, name))
    n = len(values[0])
    picks = rng.integers(0, n, size=(n_boot, n))
    out = []
    for v in values:
        lo, hi = np.percentile(v[picks].mean(axis=1), [2.5, 97.5])
        out.append((float(lo), float(hi)))
    return out


def bootstrap_delta(clean: np.ndarray, variant: np.ndarray, *, seed: int, n_boot: int = 2000,
                    name: str = "") -> tuple[float, float]:
    """Percentile 95 % CI of mean(variant - clean), resampling base problems (clusters) with replacement.

    ``clean[i]`` and ``variant[i]`` are base problem i's mean scores; the generator is seeded
    from (seed, name) so every condition's interval is reproducible on its own.
    """
    return bootstrap_mean(variant - clean, seed=seed, n_boot=n_boot, name=name)


def bootstrap_mean(values: np.ndarray, *, seed: int = 0, n_boot: int = 2000, name: str = "") -> tuple[float, float]:
    """Percentile 95 % CI of mean(values), resampling its entries (clusters: base problems, pages) with replacement;
    seeded from (seed, name) as ``bootstrap_delta``."""
    return _bootstrap_means([np.asarray(values, np.float64)], seed=seed, n_boot=n_boot, name=name)[0]


def paired_deltas(scored: Sequence[Scored], *, seed: int = 0, n_boot: int = 2000) -> list[dict[str, Any]]:
    """Accuracy (mean credit) change clean -> variant per condition, on the base problems that have both.

    Scores are averaged over runs (and over a base's several variants of one condition) before
    pairing, so each base problem is one cluster. Each row has the delta's interval (``ci95``) and the
    clean and variant accuracies' own intervals (``clean_ci95``, ``variant_ci95``), all from the same
    resampled bases, and ``small_sample`` when fewer than ``MIN_BASES`` bases are paired.
    """
    clean: dict[str, list[float]] = defaultdict(list)
    by_cond: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in scored:
        if s.variant == "clean":
            clean[s.base_id].append(s.credit)
        for cond in s.conditions:
            by_cond[cond][s.base_id].append(s.credit)
    rows = []
    for cond in sorted(by_cond):
        bases = sorted(b for b in by_cond[cond] if b in clean)
        if not bases:
            continue
        c = np.array([np.mean(clean[b]) for b in bases])
        v = np.array([np.mean(by_cond[cond][b]) for b in bases])
        delta_ci, clean_ci, variant_ci = _bootstrap_means([v - c, c, v], seed=seed, n_boot=n_boot, name=cond)
        kind, _, rest = cond.partition(":")
        rows.append({"condition": cond, "kind": kind, "detail": rest, "n_bases": len(bases),
                     "clean_accuracy": float(c.mean()), "variant_accuracy": float(v.mean()),
                     "delta": float((v - c).mean()), "ci95": list(delta_ci), "clean_ci95": list(clean_ci),
                     "variant_ci95": list(variant_ci), "small_sample": len(bases) < MIN_BASES})
    return rows


def _pair_means(scored: Sequence[Scored], kind: str, capture: str) -> tuple[dict[str, float], dict[str, float]]:
    """Per base: mean credit of its ``kind`` pages unphotographed, and of their photos under ``capture``, over the
    pages photographed under it (a page the capture could not act on is left out of both)."""
    photo_kind = "degraded" if kind == "clean" else kind
    photos: dict[str, list[float]] = defaultdict(list)
    sources: set[str] = set()
    for s in scored:
        if s.capture == capture and s.variant == photo_kind:
            photos[s.base_id].append(s.credit)
            sources.add(s.source_id)
    plain: dict[str, list[float]] = defaultdict(list)
    for s in scored:
        if not s.capture and s.variant == kind and s.item_id in sources:
            plain[s.base_id].append(s.credit)
    bases = photos.keys() & plain.keys()
    return ({b: float(np.mean(plain[b])) for b in bases}, {b: float(np.mean(photos[b])) for b in bases})


def capture_interaction(scored: Sequence[Scored], *, seed: int = 0, n_boot: int = 2000) -> list[dict[str, Any]]:
    """Errors under capture conditions: per capture, the score on error variants and on clean controls, each
    unphotographed and photographed under it, and the interaction of capture and content.

    ``error_drop`` is how much the capture lowers the score on error variants (finding the error, or where it
    is), ``clean_drop`` how much it lowers the score on the clean controls (recognising a correct solution),
    both against the same pages unphotographed; ``interaction = error_drop - clean_drop`` is > 0 when the
    capture hurts error finding more than it hurts recognising a correct solution. Every number is a mean
    over the base problems that have all four (runs and a base's several variants averaged first), and each
    interval resamples those bases (one cluster each) with the same picks. Photos come from
    ``degrade.apply_to`` including error (see ``source_id`` and ``capture_twin`` in the manifest).
    """
    rows = []
    for cap in sorted({s.capture for s in scored if s.capture}):
        e0, ec = _pair_means(scored, "error", cap)
        c0, cc = _pair_means(scored, "clean", cap)
        bases = sorted(e0.keys() & c0.keys())
        if not bases:
            continue
        v = {name: np.array([m[b] for b in bases]) for name, m in (("e0", e0), ("ec", ec), ("c0", c0), ("cc", cc))}
        error_drop, clean_drop = v["e0"] - v["ec"], v["c0"] - v["cc"]
        interaction = error_drop - clean_drop
        cis = _bootstrap_means([v["ec"], v["cc"], error_drop, clean_drop, interaction], seed=seed, n_boot=n_boot,
                               name=f"capture:{cap}")
        kind, _, rest = cap.partition(":")
        rows.append({"capture": cap, "kind": kind, "detail": rest, "n_bases": len(bases),
                     "error_unphotographed": float(v["e0"].mean()), "error_photographed": float(v["ec"].mean()),
                     "clean_unphotographed": float(v["c0"].mean()), "clean_photographed": float(v["cc"].mean()),
                     "error_drop": float(error_drop.mean()), "clean_drop": float(clean_drop.mean()),
                     "interaction": float(interaction.mean()),
                     "error_photographed_ci95": list(cis[0]), "clean_photographed_ci95": list(cis[1]),
                     "error_drop_ci95": list(cis[2]), "clean_drop_ci95": list(cis[3]),
                     "interaction_ci95": list(cis[4]), "small_sample": len(bases) < MIN_BASES})
    return rows


def headline_interval(scored: Sequence[Scored], metric: Metric, key: str, *, seed: int = 0,
                      n_boot: int = 1000) -> tuple[float, float] | None:
    """Percentile 95 % CI of ``metric(scored)[key]``, resampling base problems with replacement (every item
    and run of a picked base comes along); None when the metric is undefined on too many resamples."""
    by_base: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        by_base[s.base_id].append(s)
    groups = [by_base[b] for b in sorted(by_base)]
    if not groups:
        return None
    rng = np.random.default_rng(_stable_seed(seed, f"headline:{key}"))
    values = []
    for picks in rng.integers(0, len(groups), size=(n_boot, len(groups))):
        value = metric([s for i in picks for s in groups[i]]).get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
            values.append(float(value))
    if len(values) < 0.9 * n_boot:   # e.g. balanced accuracy on resamples holding one class only
        return None
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


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


# -- agreement between models -----------------------------------------------------------------
def majority_correct(records: Sequence[dict[str, Any]]) -> dict[str, bool]:
    """Item id -> right on the majority of its answered runs (ties wrong), from response records."""
    runs: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        if r.get("status") == "ok" and "correct" in r:
            runs[r["item_id"]].append(bool(r["correct"]))
    return {item: float(np.mean(v)) > 0.5 for item, v in runs.items()}


def kappa(a: dict[str, bool], b: dict[str, bool]) -> dict[str, Any]:
    """Cohen's kappa on two models' item-level correctness, over the items both answered.

    Seeing Is Solving reports it on majority-correct labels with the 2x2 contingency counts;
    kappa is None when it is undefined (both models constant and equal).
    """
    items = sorted(a.keys() & b.keys())
    if not items:
        return {"n": 0, "kappa": None, "agreement": None, "contingency": None}
    x, y = [a[i] for i in items], [b[i] for i in items]
    both = {"both_right": sum(p and q for p, q in zip(x, y)), "only_a": sum(p and not q for p, q in zip(x, y)),
            "only_b": sum(q and not p for p, q in zip(x, y)), "both_wrong": sum(not (p or q) for p, q in zip(x, y))}
    expected = float(np.mean(x) * np.mean(y) + (1 - np.mean(x)) * (1 - np.mean(y)))
    value = None
    if expected < 1.0:   # both models constant and equal: kappa is 0/0 (sklearn says nan and warns)
        from sklearn.metrics import cohen_kappa_score

        with _quiet_sklearn():
            value = float(cohen_kappa_score(np.array(x, dtype=np.int64), np.array(y, dtype=np.int64)))
    return {"n": len(items), "kappa": value,
            "agreement": float(np.mean([p == q for p, q in zip(x, y)])), "contingency": both}
