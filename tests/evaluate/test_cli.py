"""`mathstress eval` and `mathstress report` on a finished run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from synth.cli import app


def test_eval_then_report_writes_results_and_markdown(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "tv"
    result = CliRunner().invoke(app, ["eval", str(tiny_run), "--model", "text-verifier", "--task", "detect,localize",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["tasks"]["detect"]["metrics"]["balanced_accuracy"] == 1.0
    assert (out / "cache.sqlite").is_file() and (out / "responses" / "localize.jsonl").is_file()

    again = CliRunner().invoke(app, ["eval", str(tiny_run), "--model", "text-verifier", "--task", "detect",
                                     "--out", str(out)])
    assert again.exit_code == 0 and json.loads((out / "results.json").read_text())["tasks"].keys() == {
        "detect", "localize"}                                # tasks accumulate in one results.json

    report = CliRunner().invoke(app, ["report", str(out)])
    assert report.exit_code == 0, report.output
    text = (out / "report.md").read_text()
    assert "## detect" in text and "## localize" in text and "degradation:blur:3" in text


def test_eval_rejects_unknown_task_with_exit_code_2(tiny_run: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", str(tiny_run), "--model", "random", "--task", "telepathy",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown task" in result.output


def test_report_without_results_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "results.json" in result.output


def test_reading_the_task_and_model_registries_loads_no_plotting_and_no_sklearn() -> None:
    # What `mathstress eval --help` reads: it took 11 s on a loaded machine when it pulled in the report stack.
    code = ("import sys; from synth.evaluate import MODELS, TASKS; list(TASKS); list(MODELS); "
            "print(sorted(m for m in ('matplotlib', 'sklearn', 'synth.evaluate.report', 'synth.evaluate.plots') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
