"""Runs the benchmark-code tests share, and how they get `mathstress eval`'s own answers for the same items."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.evaluate import MODELS, Adapter
from synth.pipeline import run
from tests.conftest import tiny_config

# Text runs: no photos, so the items a text benchmark keeps are all the items `mathstress eval` asks about.
# Both errors change the final answer (MMErroR and ErrorRadar keep only those); step_omission gives
# superficial no-error items (FERMAT's SU class).
TEXT_RUN = {"count": 6, "inject": {"variants_per_base": 2, "subtypes": {
    "intermediate_propagated": 1.0, "final_number": 1.0, "step_omission": 1.0}}, "degrade": {"ops": []}}


@pytest.fixture(scope="session")
def text_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "text"
    run(tiny_config(**TEXT_RUN), out)
    return out


def evaluate(run_dir: Path, task: str, model: str, out: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """`mathstress eval RUN --task TASK --model MODEL --input text`: the task's metrics from results.json and
    its per-item records (pred, gold, correct) from responses/, by item id."""
    result = CliRunner().invoke(app, ["eval", str(run_dir), "--task", task, "--model", model, "--input", "text",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    key = f"{task}@text"
    metrics = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"][key]["metrics"]
    records = [json.loads(line) for line in (out / "responses" / f"{key}.jsonl").read_text().splitlines()]
    return metrics, {r["item_id"]: r for r in records}


class Replay(Adapter):
    """A model that gives each item the response a function of (task, item) says; registered for one test."""

    def __init__(self, answer: Callable[[Any, Any], str], tag: str) -> None:
        self.id = "replay"
        self.params = {"answers": tag}   # part of the cache key
        self._answer = answer

    async def respond(self, request: Any) -> str:
        return self._answer(request.task, request.item)


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[Any, Any], str], str], str]:
    """Register a Replay model under the id `replay` for this test; returns the model id to pass to eval."""
    def install(answer: Callable[[Any, Any], str], tag: str) -> str:
        monkeypatch.setitem(MODELS, "replay", lambda arg="", **_: Replay(answer, tag))
        return "replay"
    return install
