"""Errors under capture conditions in the report: scores on error variants and clean controls, unphotographed and
photographed, and their interaction with an interval clustered by base problem."""

from __future__ import annotations

from typing import Any

import pytest

from synth.evaluate.metrics import Scored, capture_interaction, paired_deltas
from synth.evaluate.report import render_html, render_report
from synth.evaluate.scoring import summarize
from synth.evaluate.tasks import get_task

BLUR = "degradation:blur:2"


def _fake(n_bases: int = 40) -> list[Scored]:
    """Per base: a clean control (always right), its photo under blur 2 (wrong on every 10th base), one error
    variant (wrong on every 5th base) and its photo (right on 2 bases in 5 only), and a glare photo of the
    clean control alone (no error photo under glare: no row for it)."""
    out = []
    for i in range(n_bases):
        b = f"t-{i:06d}"
        out += [Scored(b, b, "clean", (), 0, "correct", "correct", True),
                Scored(f"{b}-d1", b, "degraded", (BLUR,), 0, "correct", "x", i % 10 != 0, capture=BLUR, source_id=b),
                Scored(f"{b}-d2", b, "degraded", ("degradation:glare:3",), 0, "correct", "x", True,
                       capture="degradation:glare:3", source_id=b),
                Scored(f"{b}-e1", b, "error", ("error:computational",), 0, "incorrect", "x", i % 5 != 0),
                Scored(f"{b}-e1-d1", b, "error", (), 0, "incorrect", "x", i % 5 in (1, 2), capture=BLUR,
                       source_id=f"{b}-e1")]
    return out


def test_interaction_is_the_error_drop_minus_the_clean_drop_per_capture() -> None:
    (row,) = capture_interaction(_fake(), seed=3, n_boot=400)
    assert row["capture"] == BLUR and row["n_bases"] == 40 and not row["small_sample"]
    assert (row["error_unphotographed"], row["error_photographed"]) == (pytest.approx(0.8), pytest.approx(0.4))
    assert (row["clean_unphotographed"], row["clean_photographed"]) == (pytest.approx(1.0), pytest.approx(0.9))
    assert row["error_drop"] == pytest.approx(0.4) and row["clean_drop"] == pytest.approx(0.1)
    assert row["interaction"] == pytest.approx(0.3)
    lo, hi = row["interaction_ci95"]
    assert lo < 0.3 < hi and lo > 0.0     # the capture clearly hurts error finding more
    assert capture_interaction(_fake(), seed=3, n_boot=400) == [row]   # reproducible from its seed


def test_a_capture_that_hurts_both_alike_has_an_interaction_interval_around_zero() -> None:
    scored = [s if s.item_id.endswith("-e1-d1") is False else
              Scored(s.item_id, s.base_id, "error", (), 0, "incorrect", "x", int(s.base_id[-6:]) % 5 != 0
                     and int(s.base_id[-6:]) % 10 != 1, capture=BLUR, source_id=s.source_id)
              for s in _fake()]
    (row,) = capture_interaction(scored, seed=0, n_boot=400)
    lo, hi = row["interaction_ci95"]
    assert lo <= row["interaction"] <= hi and lo < 0.0 < hi


def test_photographed_variants_stay_out_of_the_clean_twin_deltas() -> None:
    deltas = {d["condition"]: d for d in paired_deltas(_fake(), seed=0, n_boot=100)}
    assert deltas[BLUR]["variant_accuracy"] == pytest.approx(0.9)      # clean photos only
    assert deltas["error:computational"]["variant_accuracy"] == pytest.approx(0.8)   # unphotographed errors only
    by_variant = summarize(get_task("detect"), _fake())["by_variant"]
    assert by_variant["error photographed"] == pytest.approx(0.4) and by_variant["error"] == pytest.approx(0.8)


def _results(capture: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {"requests": 200, "answered": 200, "failed": 0, "cached": 0, "called": 200, "prompt_tokens": 0,
              "completion_tokens": 0, "cost": None}
    task = {"settings": {"runs": 1, "input": "image", "limit": None}, "counts": counts, "headline": None,
            "metrics": {"n": 200}, "deltas": [], "capture": capture, "stability": None}
    return {"model": {"id": "fake", "endpoint": None, "params": {}}, "tasks": {"detect": task}}


def test_report_md_and_html_show_the_capture_table_with_its_intervals() -> None:
    (row,) = capture_interaction(_fake(), seed=3, n_boot=400)
    results = _results([row])
    md = render_report(results)
    line = next(x for x in md.splitlines() if x.startswith("| blur 2 |"))
    assert "0.800 → 0.400" in line and "1.000 → 0.900" in line and "+0.300 [" in line and "| 40 |" in line
    html = render_html(results, figs={})
    assert "Errors under capture conditions" in html and "+0.300" in html


def test_a_run_without_photographed_errors_reports_no_capture_table() -> None:
    scored = [s for s in _fake() if not s.item_id.endswith("-e1-d1")]
    assert capture_interaction(scored) == []
    assert "Errors under capture conditions" not in render_report(_results([]))
