"""Acceptance: `mathstress eval` against a local server that faults on ~30 % of requests, then a re-run.

Every request ends answered or stored as a failure, the scores count only answers, and the second
run makes zero HTTP calls.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.evaluate import load_items

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
            return _send(handler, 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
        if kind == "500":
            return _send(handler, 500, {"error": {"message": "boom"}})
        if kind == "drop":
            handler.close_connection = True
            return None
        prompt = body["messages"][0]["content"][0]["text"]
        if "Problem Statement:" in prompt:
            answer = json.dumps({"solution": {"isSolvable": True, "steps": [], "answer": {"value": "5"}}})
        else:
            answer = "Checked every step.\nCorrect: yes"
        return _send(handler, 200, {
            "id": "cmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120, "cost": COST_PER_CALL}})


def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


@pytest.fixture()
def faulty_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, FaultyVLM]]:
    fake = FaultyVLM()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            fake.handle(self)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", fake
    finally:
        server.shutdown()
        server.server_close()


def test_faulty_endpoint_run_ends_scored_or_failed_and_reruns_with_zero_calls(
        tiny_run: Path, tmp_path: Path, faulty_server: tuple[str, FaultyVLM]) -> None:
    base_url, fake = faulty_server
    command = ["eval", str(tiny_run), "--model", "openai:fake-vlm", "--base-url", base_url, "--task", "detect,solvable",
               "--max-retries", "1", "--timeout", "10", "--concurrency", "16", "--out", str(tmp_path)]
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
