"""report.html with plots, kappa between models, worst-case accuracy and the with/without-image protocol."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.evaluate import evaluate_run, get_model, get_task, kappa, load_items, worst_case
from synth.evaluate.metrics import Scored
from synth.evaluate.models import Adapter, Request
from synth.evaluate.plots import severity_series
from synth.evaluate.tasks.solvable import REFUSED, solvability_rates

PNG = b"\x89PNG\r\n\x1a\n"


def _scored(item: str, base: str, correct: bool, run: int = 0, pred: object = "x") -> Scored:
    return Scored(item, base, "clean" if item == base else "error", (), run, "g", pred, correct)


def test_worst_case_counts_a_base_only_when_every_item_is_right() -> None:
    scored = [_scored("b1", "b1", True), _scored("b1-e1", "b1", True), _scored("b1-d1", "b1", True),
              _scored("b2", "b2", True), _scored("b2-e1", "b2", False)]
    assert worst_case(scored) == {"n_bases": 2, "accuracy": 0.5, "mean_items_per_base": 2.5}


def test_worst_case_takes_the_majority_over_runs_first() -> None:
    scored = [_scored("b1", "b1", ok, run=i) for i, ok in enumerate((True, True, False))]
    assert worst_case(scored)["accuracy"] == 1.0


def test_kappa_is_one_for_identical_judgements_and_zero_for_chance_agreement() -> None:
    a = {"i1": True, "i2": False, "i3": True, "i4": False}
    assert kappa(a, dict(a))["kappa"] == 1.0
    k = kappa(a, {"i1": True, "i2": True, "i3": False, "i4": False, "only-b": True})
    assert k["n"] == 4 and k["kappa"] == 0.0 and k["agreement"] == 0.5
    assert k["contingency"] == {"both_right": 1, "only_a": 1, "only_b": 1, "both_wrong": 1}


def test_solvability_rates_split_refusals_wrong_guesses_and_lucky_answers() -> None:
    scored = [_scored("a", "a", False, pred=REFUSED), _scored("b", "b", False, pred="7"),
              _scored("c", "c", True, pred="5"), _scored("d", "d", False, pred=None)]
    rates = solvability_rates(scored)
    assert (rates["refusal_rate"], rates["guess_wrong_rate"], rates["lucky_correct_rate"], rates["unparsed_rate"]) \
        == (0.25, 0.25, 0.25, 0.25)


def _delta(detail: str, variant: float, kind: str = "degradation", n: int = 4) -> dict:
    return {"kind": kind, "detail": detail, "n_bases": n, "clean_accuracy": 1.0, "variant_accuracy": variant,
            "delta": variant - 1.0, "ci95": [variant - 1.25, variant - 0.75], "clean_ci95": [1.0, 1.0],
            "variant_ci95": [variant - 0.25, min(variant + 0.25, 1.0)], "small_sample": n < 30}


def test_severity_series_starts_at_the_clean_twins_and_keeps_accuracy_and_delta_intervals_apart() -> None:
    deltas = [_delta("blur:3", 0.5), _delta("blur:1", 1.0), _delta("blur:1+jpeg:2", 0.0)]
    (blur,) = severity_series(deltas).values()
    assert [(p.x, p.accuracy, p.delta) for p in blur] == [(0, 1.0, None), (1, 1.0, 0.0), (3, 0.5, -0.5)]
    assert blur[2].accuracy_ci == (0.25, 0.75)          # accuracy's own interval, around the accuracy ...
    assert blur[2].delta_ci == (-0.75, -0.25)           # ... and the delta's, around the delta (below 0 is fine)
    assert all(p.small for p in blur)                   # 4 base problems: flagged


def test_capture_profiles_are_points_under_their_names() -> None:
    series = severity_series([_delta("blur:2", 0.5), _delta("desk_lamp_tilted", 0.25, kind="profile", n=40)])
    (lamp,) = series["profile:desk_lamp_tilted"]
    assert lamp.accuracy == 0.25 and lamp.delta == -0.75 and not lamp.small


def test_the_severity_plot_dodges_subtypes_that_share_a_severity(monkeypatch: pytest.MonkeyPatch) -> None:
    from synth.evaluate import plots

    xs: list[float] = []
    real = plots._errorbar
    monkeypatch.setattr(plots, "_errorbar", lambda ax, x, *a, **k: (xs.append(x), real(ax, x, *a, **k)))
    png = plots.severity_plot([_delta("blur:2", 0.5), _delta("tilt:2", 0.75),
                               _delta("desk_lamp_tilted", 0.25, kind="profile")], "t")
    assert png is not None and png[:4] == b"\x89PNG"
    at_two = sorted({x for x in xs if 1.5 < x < 2.5})
    assert len(at_two) == 2 and at_two[1] - at_two[0] >= 0.2   # blur and tilt side by side, not on top


class WithoutImageRefuses(Adapter):
    """A fake model for the Seeing Is Solving protocol: answers right with the image, refuses without it."""

    id = "fake-solver"

    async def respond(self, request: Request) -> str:
        label = request.item.problem.answer_value if request.image_path is not None else REFUSED
        return request.task.answer(label)


def test_with_and_without_image_are_separate_results_with_refusal_rates(tiny_run: Path, tmp_path: Path) -> None:
    task = get_task("solvable")
    evaluate_run(tiny_run, WithoutImageRefuses(), [task], out_dir=tmp_path)
    both = evaluate_run(tiny_run, WithoutImageRefuses(), [task], out_dir=tmp_path, input_mode="text")
    with_image, without = both.results["tasks"]["solvable"], both.results["tasks"]["solvable@text"]
    assert with_image["metrics"]["accuracy"] == 1.0 and with_image["metrics"]["refusal_rate"] == 0.0
    assert without["metrics"]["refusal_rate"] == 1.0 and without["metrics"]["lucky_correct_rate"] == 0.0
    roles = {item.problem.image_role for item in load_items(tiny_run)}
    assert set(without["metrics"]["by_image_role"]) == roles
    prompts = [json.loads(x) for x in (tmp_path / "responses" / "solvable@text.jsonl").open()]
    assert len(prompts) == len(load_items(tiny_run))


def _images(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)]


@pytest.mark.slow   # ten plots and two evaluations: 7-9 s on the shared machine
def test_report_writes_html_with_plots_and_kappa_against_another_model(tiny_run: Path, tmp_path: Path) -> None:
    tasks = [get_task("detect"), get_task("localize")]
    evaluate_run(tiny_run, get_model("text-verifier"), tasks, out_dir=tmp_path / "tv")
    evaluate_run(tiny_run, get_model("random", seed=1), tasks, out_dir=tmp_path / "rnd", runs=3)
    result = CliRunner().invoke(app, ["report", str(tmp_path / "tv"), "--compare", str(tmp_path / "rnd")])
    assert result.exit_code == 0, result.output

    html = (tmp_path / "tv" / "report.html").read_text()
    images = _images(html)
    # detect and localize each: accuracy vs severity (tiny_run has blur 1 and 3), confusion (detect), family bars.
    assert len(images) == 5 and all(png.startswith(PNG) for png in images)
    assert html.count("<figcaption>Top: accuracy per degradation subtype and severity") == 2  # one per task
    assert html.count("<figcaption>Confusion matrix (rows gold") == 1
    results = json.loads((tmp_path / "tv" / "results.json").read_text())
    comparisons = {c["task"]: c for c in results["comparisons"]}
    assert set(comparisons) == {"detect", "localize"}
    assert comparisons["detect"]["model_b"] == "random" and comparisons["detect"]["n"] == len(load_items(tiny_run))
    assert comparisons["detect"]["kappa"] == pytest.approx(0.0, abs=0.5)   # the upper bound vs chance
    md = (tmp_path / "tv" / "report.md").read_text()
    assert "## Agreement with other models" in md and "worst-case accuracy" in md

    # The same results give the same report bytes (plots included).
    first = (tmp_path / "tv" / "report.html").read_bytes()
    CliRunner().invoke(app, ["report", str(tmp_path / "tv"), "--compare", str(tmp_path / "rnd")])
    assert (tmp_path / "tv" / "report.html").read_bytes() == first


def test_report_escapes_strings_from_results(tiny_run: Path, tmp_path: Path) -> None:
    evaluate_run(tiny_run, get_model("majority"), [get_task("detect")], out_dir=tmp_path)
    path = tmp_path / "results.json"
    results = json.loads(path.read_text())
    results["model"]["id"] = "<script>alert(1)</script>"
    path.write_text(json.dumps(results))
    records = (tmp_path / "responses" / "detect.jsonl").read_text().splitlines()
    hostile = json.loads(records[0]) | {"response": "</script><script>alert(2)</script><!--", "prompt": "<b>x</b>"}
    (tmp_path / "responses" / "detect.jsonl").write_text("\n".join([json.dumps(hostile), *records[1:]]) + "\n")
    assert CliRunner().invoke(app, ["report", str(tmp_path)]).exit_code == 0
    html = (tmp_path / "report.html").read_text()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert "alert(2)" in html and "<script>alert(2)" not in html and "<!--" not in html   # inert inside the JSON
    assert html.count("<script") == 2                     # the viewer's data and its code, nothing else
    assert _images(html) and all(png.startswith(PNG) for png in _images(html))   # figures are embedded


def test_compare_refuses_an_evaluation_of_another_run(tiny_run: Path, tmp_path: Path) -> None:
    evaluate_run(tiny_run, get_model("majority"), [get_task("detect")], out_dir=tmp_path / "a")
    evaluate_run(tiny_run, get_model("majority"), [get_task("detect")], out_dir=tmp_path / "b")
    other = json.loads((tmp_path / "b" / "results.json").read_text())
    other["manifest_sha256"] = "0" * 64
    (tmp_path / "b" / "results.json").write_text(json.dumps(other))
    result = CliRunner().invoke(app, ["report", str(tmp_path / "a"), "--compare", str(tmp_path / "b")])
    assert result.exit_code == 2 and "different run folder" in result.output


@pytest.mark.parametrize("field", ["metric", "count", "runs"])
def test_report_escapes_every_value_from_results(tiny_run: Path, tmp_path: Path, field: str) -> None:
    # Only names were escaped: a metric, a count or a setting in a hand-edited results.json was raw HTML.
    evaluate_run(tiny_run, get_model("majority"), [get_task("detect")], out_dir=tmp_path)
    path = tmp_path / "results.json"
    results = json.loads(path.read_text())
    task = results["tasks"]["detect"]
    hostile = "<img src=x onerror=alert(3)>"
    if field == "metric":
        task["metrics"]["accuracy"] = hostile
    elif field == "count":
        task["counts"]["requests"] = hostile
    else:
        task["settings"]["runs"] = hostile
    path.write_text(json.dumps(results))
    assert CliRunner().invoke(app, ["report", str(tmp_path)]).exit_code == 0
    html = (tmp_path / "report.html").read_text()
    assert "<img src=x" not in html and "&lt;img src=x" in html


def test_a_comparison_with_nothing_in_common_renders_and_is_not_saved_broken(tiny_run: Path, tmp_path: Path) -> None:
    # kappa over no shared items had no contingency: report.html raised UndefinedError after results.json had saved
    # the comparison, so every later report of the folder failed too.
    evaluate_run(tiny_run, get_model("majority"), [get_task("detect")], out_dir=tmp_path / "a")
    evaluate_run(tiny_run, get_model("random", seed=2), [get_task("detect")], out_dir=tmp_path / "b")
    for f in (tmp_path / "b" / "responses").iterdir():
        f.unlink()
    result = CliRunner().invoke(app, ["report", str(tmp_path / "a"), "--compare", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert CliRunner().invoke(app, ["report", str(tmp_path / "a")]).exit_code == 0


@pytest.mark.parametrize("edit", ["task_without_metrics", "response_without_item", "model_is_a_string"])
def test_report_on_a_hand_edited_evaluation_is_one_line_exit_2(tiny_run: Path, tmp_path: Path, edit: str) -> None:
    evaluate_run(tiny_run, get_model("majority"), [get_task("detect")], out_dir=tmp_path)
    path = tmp_path / "results.json"
    results = json.loads(path.read_text())
    if edit == "task_without_metrics":
        results["tasks"]["detect"] = {"counts": results["tasks"]["detect"]["counts"]}
    elif edit == "model_is_a_string":
        results["model"] = "x"
    else:
        with (tmp_path / "responses" / "detect.jsonl").open("a") as fh:
            fh.write("{}\n")
    path.write_text(json.dumps(results))
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "re-run the same `mathstress eval`" in " ".join(result.output.split()) or "is not" in result.output
