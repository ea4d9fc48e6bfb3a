"""Metrics agree with scikit-learn and with hand-computed cases; the bootstrap is reproducible from its seed."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
)

from synth.evaluate.metrics import (
    Scored,
    bootstrap_delta,
    bootstrap_mean,
    classification_metrics,
    kappa,
    paired_deltas,
    per_class_metrics,
    run_stability,
)
from synth.evaluate.tasks.localize import processbench_f1


def _s(item: str, base: str, variant: str, correct: bool, conditions: tuple[str, ...] = (), run: int = 0) -> Scored:
    return Scored(item, base, variant, conditions, run, "g", "g" if correct else "x", correct)


def test_classification_metrics_match_sklearn_on_random_labels() -> None:
    rng = np.random.default_rng(3)
    labels = ["a", "b", "c"]
    gold = list(rng.choice(labels, 200))
    pred = list(rng.choice(labels, 200))
    m = classification_metrics(gold, pred, labels)
    assert m["accuracy"] == pytest.approx(accuracy_score(gold, pred))
    assert m["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(gold, pred))
    assert m["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))
    assert np.sum(m["confusion"]["matrix"]) == 200


@pytest.mark.parametrize("seed", range(6))
def test_every_classification_number_equals_sklearn_with_unparsed_and_missing_classes(seed: int) -> None:
    # Our numpy counts replace sklearn (whose import cost seconds on every `mathstress eval --help`).
    rng = np.random.default_rng(seed)
    labels = ["a", "b", "c", "d"]
    gold = list(rng.choice(labels[:3], 60))                 # "d" never occurs in gold
    pred = list(rng.choice(labels + ["<unparsed>"], 60))    # an unparsed class that gold never has
    m = classification_metrics(gold, pred, labels)
    present = sorted(set(gold))
    p, r, f, _ = precision_recall_fscore_support(gold, pred, labels=present, average="macro", zero_division=0)
    assert (m["macro_precision"], m["macro_recall"], m["macro_f1"]) == (pytest.approx(p), pytest.approx(r),
                                                                         pytest.approx(f))
    assert m["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(gold, pred))
    assert m["confusion"]["matrix"] == confusion_matrix(gold, pred, labels=m["confusion"]["labels"]).tolist()
    per = per_class_metrics(gold, pred, labels)
    ps, rs, fs, support = precision_recall_fscore_support(gold, pred, labels=labels, average=None, zero_division=0)
    for i, label in enumerate(labels):
        assert per[label] == {"precision": pytest.approx(ps[i]), "recall": pytest.approx(rs[i]),
                              "f1": pytest.approx(fs[i]), "support": int(support[i])}
    a = {f"i{k}": bool(x) for k, x in enumerate(rng.random(40) < 0.6)}
    b = {f"i{k}": bool(x) for k, x in enumerate(rng.random(40) < 0.5)}
    assert kappa(a, b)["kappa"] == pytest.approx(cohen_kappa_score(list(a.values()), list(b.values())))


def test_balanced_accuracy_by_hand() -> None:
    # 8 correct items (6 right), 2 error items (1 right): (6/8 + 1/2) / 2 = 0.625.
    gold = ["correct"] * 8 + ["incorrect"] * 2
    pred = ["correct"] * 6 + ["incorrect"] * 2 + ["incorrect", "correct"]
    m = classification_metrics(gold, pred, ["correct", "incorrect"])
    assert m["balanced_accuracy"] == pytest.approx(0.625)
    assert m["accuracy"] == pytest.approx(0.7)
    assert m["confusion"]["matrix"] == [[6, 2], [1, 1]]


def test_unparsed_answers_count_as_wrong_in_every_metric() -> None:
    m = classification_metrics(["correct", "incorrect"], ["correct", "<unparsed>"], ["correct", "incorrect"])
    assert m["accuracy"] == 0.5
    assert m["balanced_accuracy"] == 0.5
    assert m["confusion"]["labels"][-1] == "<unparsed>"


def test_processbench_f1_is_harmonic_mean_of_error_and_no_error_accuracy() -> None:
    gold = [2, 3, 1, 4, -1, -1, -1, -1]
    pred = [2, 3, 2, None, -1, -1, -1, 3]       # error items 2/4, no-error items 3/4
    m = processbench_f1(gold, pred)
    assert m["accuracy_error_items"] == 0.5 and m["accuracy_no_error_items"] == 0.75
    assert m["f1"] == pytest.approx(2 * 0.5 * 0.75 / 1.25)


def test_processbench_f1_is_zero_when_one_side_is_always_wrong() -> None:
    assert processbench_f1([1, -1], [-1, -1])["f1"] == 0.0


def test_bootstrap_is_reproducible_from_its_seed_and_changes_with_it() -> None:
    rng = np.random.default_rng(0)
    clean, variant = rng.random(30), rng.random(30)
    a = bootstrap_delta(clean, variant, seed=7, name="blur:2")
    assert a == bootstrap_delta(clean, variant, seed=7, name="blur:2")
    assert a != bootstrap_delta(clean, variant, seed=8, name="blur:2")
    assert a[0] <= float(np.mean(variant - clean)) <= a[1]


def test_paired_delta_pairs_each_variant_with_its_own_clean_twin() -> None:
    scored = [
        _s("b1", "b1", "clean", True), _s("b1-d", "b1", "degraded", False, ("degradation:blur:3",)),
        _s("b2", "b2", "clean", True), _s("b2-d", "b2", "degraded", True, ("degradation:blur:3",)),
        _s("b3", "b3", "clean", False), _s("b3-d", "b3", "degraded", False, ("degradation:blur:3",)),
        _s("b4-d", "b4", "degraded", False, ("degradation:blur:3",)),   # no clean twin: not paired
    ]
    (row,) = paired_deltas(scored, seed=1, n_boot=500)
    assert row["n_bases"] == 3
    assert row["clean_accuracy"] == pytest.approx(2 / 3)
    assert row["variant_accuracy"] == pytest.approx(1 / 3)
    assert row["delta"] == pytest.approx(-1 / 3)
    assert row["ci95"][0] <= row["delta"] <= row["ci95"][1]
    assert paired_deltas(scored, seed=1, n_boot=500) == [row]


def test_a_base_is_one_cluster_however_many_runs_it_has() -> None:
    scored = [_s("b1", "b1", "clean", True, run=r) for r in range(5)]
    scored += [_s("b1-e", "b1", "error", r < 2, ("error:computational",), run=r) for r in range(5)]
    (row,) = paired_deltas(scored, seed=0, n_boot=100)
    assert row["n_bases"] == 1 and row["delta"] == pytest.approx(-0.6)
    assert row["ci95"] == [pytest.approx(-0.6), pytest.approx(-0.6)]


def test_run_stability_counts_agreement_across_runs() -> None:
    scored = [_s("a", "a", "clean", True, run=0), _s("a", "a", "clean", True, run=1),
              _s("b", "b", "clean", True, run=0), _s("b", "b", "clean", False, run=1)]
    st = run_stability(scored)
    assert st == {"expected_accuracy": 0.75, "majority_accuracy": 0.5, "consistency": 0.5}
    assert run_stability(scored[:1]) is None


def test_bootstrap_mean_holds_the_mean_and_is_reproducible_per_name() -> None:
    values = np.array([0.0, 1 / 3, 2 / 3, 1.0] * 6)
    lo, hi = bootstrap_mean(values, name="a")
    assert lo < values.mean() < hi
    assert bootstrap_mean(values, name="a") == (lo, hi)
    assert bootstrap_mean(np.full(24, 0.75), name="b") == (0.75, 0.75)  # every page alike: no spread
