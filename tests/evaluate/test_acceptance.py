"""Acceptance: `mathstress eval` against a local server that faults on ~30 % of requests, then a re-run.

Every request ends answered or stored as a failure, the scores count only answers, and the second
run makes zero HTTP calls.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.evaluate import load_items
from tests.evaluate._http import completion, send_json, serve

COST_PER_CALL = 0.002


class FaultyVLM:
    """Faults chosen by the request body's hash: 30 % of requests fault on their first attempt, and
    two thirds of those (20 % of all) fault on every attempt. Faults rotate 429 / 500 / dropped."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.http_calls = 0
        self.answered = 0
        self.attempts: dict[str, int] = {}
        self.faults = {"429": 0, "500": 0, "drop": 0}

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.rfile.read(int(handler.headers["Content-Length"]))
        body = json.loads(raw)
        digest = hashlib.sha256(raw).hexdigest()
        with self.lock:
            self.http_calls += 1
            attempt = self.attempts[digest] = self.attempts.get(digest, 0) + 1
            bucket = int(digest[:8], 16) % 10
            if bucket < 2 or (bucket == 2 and attempt == 1):
                kind = ("429", "500", "drop")[(int(digest[8:12], 16) + attempt) % 3]
                self.faults[kind] += 1
            else:
                kind = None
                self.answered += 1
        if kind == "429":
            return send_json(handler, 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
        if kind == "500":
            return send_json(handler, 500, {"error": {"message": "boom"}})
        if kind == "drop":
            handler.close_connection = True
            return None
        prompt = body["messages"][0]["content"][0]["text"]
        if "Problem Statement:" in prompt:
            answer = json.dumps({"solution": {"isSolvable": True, "steps": [], "answer": {"value": "5"}}})
        else:
            answer = "Checked every step.\nCorrect: yes"
        return send_json(handler, 200, completion(body["model"], answer, {
            "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120, "cost": COST_PER_CALL}))


@pytest.fixture()
def faulty_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, FaultyVLM]]:
    fake = FaultyVLM()
    with serve(fake, monkeypatch, "sk-test-not-a-secret") as url:
        yield url, fake


def test_faulty_endpoint_run_ends_scored_or_failed_and_reruns_with_zero_calls(
        tiny_run: Path, tmp_path: Path, faulty_server: tuple[str, FaultyVLM]) -> None:
    base_url, fake = faulty_server
    command = ["eval", str(tiny_run), "--model", "openai:fake-vlm", "--base-url", base_url, "--task", "detect,solvable",
               "--max-retries", "1", "--timeout", "10", "--concurrency", "16", "--out", str(tmp_path),
               "--fail-on-error", "1000", "--no-retry-errors"]   # failures tolerated here, and kept on the re-run
    first = CliRunner().invoke(app, command)
    assert first.exit_code == 0, first.output
    assert min(fake.faults.values()) > 0, fake.faults
    assert sum(fake.faults.values()) / fake.http_calls > 0.2           # the endpoint really was unreliable

    n_items = len(load_items(tiny_run))
    results = json.loads((tmp_path / "results.json").read_text())
    for task in ("detect", "solvable"):
        t = results["tasks"][task]
        c = t["counts"]
        assert c["requests"] == n_items and c["answered"] + c["failed"] == n_items
        assert c["failed"] > 0 and c["answered"] > 0
        assert t["metrics"]["n"] == c["answered"]                        # failures are never scored
        assert c["cost"] == pytest.approx(COST_PER_CALL * c["answered"])  # the endpoint's own cost, summed
        records = [json.loads(x) for x in (tmp_path / "responses" / f"{task}.jsonl").open()]
        assert len(records) == n_items and {r["item_id"] for r in records} == {i.id for i in load_items(tiny_run)}
        assert all(("correct" in r) == (r["status"] == "ok") for r in records)
    assert sum(results["tasks"][t]["counts"]["answered"] for t in ("detect", "solvable")) == fake.answered

    calls = fake.http_calls
    second = CliRunner().invoke(app, command)
    assert second.exit_code == 0, second.output
    assert fake.http_calls == calls                                      # zero calls: answers and failures stored
    again = json.loads((tmp_path / "results.json").read_text())
    for task in ("detect", "solvable"):
        assert again["tasks"][task]["counts"]["cached"] == n_items
        assert again["tasks"][task]["metrics"] == results["tasks"][task]["metrics"]
