"""The mathstress/<task> inspect tasks: same prompts, parsing and scoring; the paired analysis rebuilt from their logs.

Needs the inspect extra (pip install "mathstress[inspect]"); without it these tests skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

inspect_ai = pytest.importorskip("inspect_ai")

from mathstress.tasks import INSPECT_TASKS, samples  # noqa: E402
from synth.cli import app  # noqa: E402
from synth.evaluate import TASKS, evaluate_run, get_model, get_task, load_items, plan  # noqa: E402
from synth.evaluate.inspect_logs import results_from_inspect  # noqa: E402
from tests.evaluate._http import completion, image_digest, send_json, serve  # noqa: E402

API_KEY = "sk-inspect-test-0123456789"


class ByImage:
    """A detect endpoint whose verdict depends only on the page sent: right on even image hashes, wrong on odd."""

    def __init__(self, gold_by_image: dict[str, str]) -> None:
        self.gold = gold_by_image
        self.lock = threading.Lock()
        self.calls = 0

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        with self.lock:
            self.calls += 1
        digest = image_digest(body)
        gold = self.gold[digest]
        label = gold if int(digest[-1], 16) % 2 == 0 else {"correct": "incorrect", "incorrect": "correct"}[gold]
        answer = f"Checked.\nCorrect: {'yes' if label == 'correct' else 'no'}"
        send_json(handler, 200, completion(body["model"], answer, {"prompt_tokens": 9, "completion_tokens": 4,
                                                                  "total_tokens": 13}))


@pytest.fixture()
def by_image(tiny_run: Path) -> ByImage:
    task = get_task("detect")
    return ByImage({hashlib.sha256((tiny_run / i.image).read_bytes()).hexdigest(): task.gold(i)
                    for i in load_items(tiny_run)})


def test_every_mathstress_task_is_an_inspect_task_with_the_same_prompts(tiny_run: Path) -> None:
    assert sorted(INSPECT_TASKS) == sorted(TASKS)
    task = get_task("localize")
    ours = plan(tiny_run, task, load_items(tiny_run, limit=2), input_mode="image")
    theirs = samples("localize", str(tiny_run), 2, "image")
    assert [s.id for s in theirs] == [r.item.id for r in ours]
    for sample, request in zip(theirs, ours):
        text, image = sample.input[0].content
        assert text.text == request.prompt and image.image == str(request.image_path)
        assert sample.target == str(task.gold(request.item))


def test_inspect_logs_rebuild_the_numbers_mathstress_eval_reports_on_the_same_answers(
        tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_image: ByImage) -> None:
    from inspect_ai import eval as inspect_eval

    with serve(by_image, monkeypatch, API_KEY) as url:
        # The Task object, not its name: from a checkout's root a stale mathstress.egg-info hides the entry point.
        [log] = inspect_eval(INSPECT_TASKS["detect"](run=str(tiny_run), limit=2), model="openai/fake-vlm",
                             model_base_url=url, model_args={"responses_api": False}, log_dir=str(tmp_path / "logs"),
                             display="none", max_retries=0)
        assert log.status == "success" and len(log.samples) == 8
        direct = evaluate_run(tiny_run, get_model("openai:fake-vlm", base_url=url, max_retries=0),
                              [get_task("detect")], out_dir=tmp_path / "direct", limit=2)
    rebuilt = results_from_inspect(tmp_path / "logs", out_dir=tmp_path / "from-inspect")
    mine, theirs = direct.results["tasks"]["detect"], rebuilt.results["tasks"]["detect"]
    assert 0 < mine["metrics"]["accuracy"] < 1                  # right and wrong answers both present
    for part in ("metrics", "deltas", "headline", "stability"):
        assert theirs[part] == mine[part], part
    assert theirs["counts"]["answered"] == 8 and theirs["counts"]["prompt_tokens"] == 8 * 9
    assert rebuilt.results["model"]["id"] == "inspect:openai/fake-vlm"
    inspect_score = log.results.scores[0].metrics["accuracy"].value   # inspect's own mean credit agrees
    assert inspect_score == pytest.approx(mine["metrics"]["accuracy"])


def test_inspect_eval_by_name_then_mathstress_report_from_inspect(tiny_run: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 by_image: ByImage) -> None:
    inspect_cli = shutil.which("inspect", path=str(Path(sys.executable).parent))
    if inspect_cli is None:
        pytest.skip("the inspect command is not installed beside this python")
    with serve(by_image, monkeypatch, API_KEY) as url:
        done = subprocess.run([inspect_cli, "eval", "mathstress/detect", "-T", f"run={tiny_run}", "-T", "limit=1",
                               "--model", "openai/fake-vlm", "--model-base-url", url, "-M", "responses_api=false",
                               "--log-dir", "logs",
                               "--max-retries", "0", "--display", "none"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "OPENAI_API_KEY": API_KEY})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = CliRunner().invoke(app, ["report", str(tmp_path / "eval"), "--from-inspect", str(tmp_path / "logs")])
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert results["tasks"]["detect"]["counts"]["answered"] == 4 and results["tasks"]["detect"]["deltas"]
    assert "## detect" in (tmp_path / "eval" / "report.md").read_text()


def test_from_inspect_without_mathstress_logs_names_the_command_to_run(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    result = CliRunner().invoke(app, ["report", "--from-inspect", str(tmp_path / "logs")])
    assert result.exit_code == 2 and "inspect eval mathstress/detect" in result.output
