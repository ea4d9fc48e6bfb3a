"""`mathstress eval` and `mathstress report` on a finished run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
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
    assert "## detect" in text and "## localize" in text and "| blur 3 |" in text


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


def _fits(text: str, width: int = 80) -> bool:
    return all(len(line.rstrip()) <= width for line in text.splitlines()) and "…" not in text


def test_eval_table_is_readable_at_80_columns_and_json_is_the_same_summary(tiny_run: Path, tmp_path: Path) -> None:
    args = ["eval", str(tiny_run), "--model", "random", "--task", "detect,localize,categorize-errorradar",
            "--out", str(tmp_path)]
    table = CliRunner().invoke(app, args, terminal_width=80)
    assert table.exit_code == 0, table.output
    block = table.output[table.output.index("random on"):table.output.index("wrote ")]
    assert _fits(block) and "categorize-errorradar" in block and "bal. acc" in block
    as_json = CliRunner().invoke(app, [*args, "--json"])
    summary = json.loads(as_json.stdout)
    results = json.loads((tmp_path / "results.json").read_text())
    assert summary["tasks"]["detect"]["headline"] == results["tasks"]["detect"]["headline"]
    assert summary["tasks"]["localize"]["counts"]["cached"] == summary["tasks"]["localize"]["counts"]["requests"]


def test_an_evaluation_with_another_limit_merged_into_the_folder_is_flagged(tiny_run: Path, tmp_path: Path) -> None:
    # README's order (a whole-run eval, then a --limit 8 one into the same eval folder) left detect on 8 bases
    # beside localize on all of them in one results.json, with nothing saying so.
    base = ["eval", str(tiny_run), "--model", "random", "--out", str(tmp_path)]
    assert CliRunner().invoke(app, [*base, "--task", "detect,localize"]).exit_code == 0
    mixed = CliRunner().invoke(app, [*base, "--task", "detect", "--limit", "1"], terminal_width=200)
    assert mixed.exit_code == 0, mixed.output
    assert "warning:" in mixed.output and "detect --limit 1" in mixed.output
    assert "localize the whole run" in mixed.output
    summary = json.loads((tmp_path / "results.json").read_text())["summary"]["tasks"]
    assert summary["detect"]["limit"] == 1 and summary["localize"]["limit"] is None


def test_report_recomputes_cost_from_the_stored_usage_at_the_given_prices(tiny_run: Path, tmp_path: Path) -> None:
    from synth.evaluate import evaluate_run, get_task
    from synth.evaluate.models import Reply
    from synth.evaluate.models.offline import RandomGuess

    class Metered(RandomGuess):
        async def respond(self, request):  # noqa: ANN001, ANN201
            return Reply(await super().respond(request), prompt_tokens=1000, completion_tokens=100)

    evaluate_run(tiny_run, Metered(), [get_task("detect")], out_dir=tmp_path, limit=1)
    assert json.loads((tmp_path / "results.json").read_text())["tasks"]["detect"]["counts"]["cost"] is None
    result = CliRunner().invoke(app, ["report", str(tmp_path), "--price-in", "2.5", "--price-out", "10"])
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["tasks"]["detect"]["counts"]["cost"] == pytest.approx(4 * (1000 * 2.5 + 100 * 10) / 1e6)
    assert results["prices"] == {"in_per_million": 2.5, "out_per_million": 10.0}
    assert "$0.0140" in (tmp_path / "report.md").read_text()
    half = CliRunner().invoke(app, ["report", str(tmp_path), "--price-in", "2.5"])
    assert half.exit_code == 2 and "--price-out" in half.output


def test_a_task_no_item_holds_is_left_out_and_said_so(tmp_path: Path) -> None:
    # A run of clean pages has no error to categorize: that task is left out (results.json skipped_tasks, a note)
    # while detect is measured; asked alone, it is refused and nothing is written.
    from synth.pipeline import run
    from tests.conftest import tiny_config

    clean = tmp_path / "clean"
    run(tiny_config(count=2, inject={"variants_per_base": 0, "subtypes": {"final_number": 1.0}}), clean)
    result = CliRunner().invoke(app, ["eval", str(clean), "--model", "random", "--task", "detect,categorize",
                                      "--out", str(tmp_path / "ev")])
    assert result.exit_code == 0, result.output
    assert "note: the categorize task was left out: it applies to none of" in " ".join(result.output.split())
    data = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert set(data["tasks"]) == {"detect"} and data["skipped_tasks"]["categorize"].startswith("applies to none")
    alone = CliRunner().invoke(app, ["eval", str(clean), "--model", "random", "--task", "categorize",
                                     "--out", str(tmp_path / "ev2")])
    assert alone.exit_code == 2 and "the categorize task applies to none of" in " ".join(alone.output.split())
    assert not (tmp_path / "ev2").exists()


def test_report_from_inspect_on_a_missing_folder_says_it_is_missing(tmp_path: Path) -> None:
    # It said the inspect extra was needed (when not installed) before saying the folder does not exist.
    result = CliRunner().invoke(app, ["report", "--from-inspect", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "no such folder" in result.output
