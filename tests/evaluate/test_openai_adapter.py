"""The openai adapter against a real local HTTP server that rate-limits, fails and drops connections."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from synth.errors import ConfigError
from synth.evaluate import evaluate_run, get_model, get_task, load_items
from tests.evaluate._http import completion, send_json, serve

API_KEY = "sk-test-not-a-secret"


class FakeVLM:
    """Answers /v1/chat/completions from a table keyed by the sha256 of the image sent.

    Faults by image: the first attempt of every third image gets 429 (Retry-After: 0), of the
    next a 500 and then a dropped connection; the rest succeed at once.
    """

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.lock = threading.Lock()
        self.http_calls = 0
        self.attempts: dict[str, int] = {}
        self.images_ok = 0
        self.bad_auth = 0
        self.faults = {"429": 0, "500": 0, "drop": 0}

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        with self.lock:
            self.http_calls += 1
            if handler.headers.get("Authorization") != f"Bearer {API_KEY}":
                self.bad_auth += 1
            parts = body["messages"][0]["content"]
            url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
            assert url.startswith("data:image/png;base64,")
            png = base64.b64decode(url.split(",", 1)[1])
            assert png[:8] == b"\x89PNG\r\n\x1a\n"
            digest = hashlib.sha256(png).hexdigest()
            attempt = self.attempts[digest] = self.attempts.get(digest, 0) + 1
            kind = int(digest[:4], 16) % 3
            if kind == 0 and attempt == 1:
                self.faults["429"] += 1
                return send_json(handler, 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
            if kind == 1 and attempt == 1:
                self.faults["500"] += 1
                return send_json(handler, 500, {"error": {"message": "boom"}})
            if kind == 1 and attempt == 2:
                self.faults["drop"] += 1
                handler.close_connection = True  # no status line at all: the client sees a disconnect
                return None
            self.images_ok += 1
            answer = self.answers[digest]
        send_json(handler, 200, completion(body["model"], answer,
                                           {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}))


@pytest.fixture()
def fake_server(tiny_run: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, FakeVLM]]:
    # Deterministic fake answers: right for images whose hash ends in an even digit, wrong otherwise.
    task = get_task("detect")
    answers = {}
    for item in load_items(tiny_run):
        digest = hashlib.sha256((tiny_run / item.image).read_bytes()).hexdigest()
        gold = task.gold(item)
        flip = {"correct": "incorrect", "incorrect": "correct"}
        label = gold if int(digest[-1], 16) % 2 == 0 else flip[gold]
        answers[digest] = f"Looking at each step...\nCorrect: {'yes' if label == 'correct' else 'no'}"
    fake = FakeVLM(answers)
    with serve(fake, monkeypatch, API_KEY) as url:
        yield url, fake


def test_every_item_completes_through_429_500_and_drops_and_reruns_from_cache(
        tiny_run: Path, tmp_path: Path, fake_server: tuple[str, FakeVLM]) -> None:
    base_url, fake = fake_server
    model = get_model("openai:fake-vlm", base_url=base_url, max_retries=4, timeout=10)
    first = evaluate_run(tiny_run, model, [get_task("detect")], out_dir=tmp_path, concurrency=4)
    n_items = len(load_items(tiny_run))
    counts = first.results["tasks"]["detect"]["counts"]
    assert counts == {"requests": n_items, "answered": n_items, "failed": 0, "cached": 0, "called": n_items,
                      "prompt_tokens": 10 * n_items, "completion_tokens": 3 * n_items, "cost": None}
    assert min(fake.faults.values()) > 0, fake.faults       # every fault kind was exercised
    assert fake.images_ok == n_items and fake.bad_auth == 0
    records = [json.loads(x) for x in (tmp_path / "responses" / "detect.jsonl").open()]
    assert all(r["status"] == "ok" for r in records)
    expected = sum(int(r["response"].endswith("yes") == (r["gold"] == "correct")) for r in records) / n_items
    assert first.results["tasks"]["detect"]["metrics"]["accuracy"] == pytest.approx(expected)

    calls = fake.http_calls
    again = evaluate_run(tiny_run, get_model("openai:fake-vlm", base_url=base_url), [get_task("detect")],
                         out_dir=tmp_path)
    assert fake.http_calls == calls                          # zero HTTP calls: all from the cache
    assert again.results["tasks"]["detect"]["counts"]["cached"] == n_items
    assert again.results["tasks"]["detect"]["metrics"] == first.results["tasks"]["detect"]["metrics"]
    for path in tmp_path.rglob("*"):                         # the key is never written anywhere
        if path.is_file():
            assert API_KEY.encode() not in path.read_bytes()


def test_failures_are_stored_not_scored_and_retried_on_request(
        tiny_run: Path, tmp_path: Path, fake_server: tuple[str, FakeVLM]) -> None:
    base_url, fake = fake_server
    no_retry = get_model("openai:fake-vlm", base_url=base_url, max_retries=0, timeout=10)
    first = evaluate_run(tiny_run, no_retry, [get_task("detect")], out_dir=tmp_path, concurrency=4)
    c = first.results["tasks"]["detect"]["counts"]
    assert c["failed"] > 0 and c["answered"] + c["failed"] == c["requests"]
    assert first.results["tasks"]["detect"]["metrics"]["n"] == c["answered"]   # failures are not scored
    records = [json.loads(x) for x in (tmp_path / "responses" / "detect.jsonl").open()]
    assert all("correct" not in r for r in records if r["status"] == "error")

    calls = fake.http_calls
    plain_rerun = evaluate_run(tiny_run, no_retry, [get_task("detect")], out_dir=tmp_path)
    assert fake.http_calls == calls and plain_rerun.results["tasks"]["detect"]["counts"]["failed"] == c["failed"]

    retried = evaluate_run(tiny_run, get_model("openai:fake-vlm", base_url=base_url, max_retries=4, timeout=10),
                           [get_task("detect")], out_dir=tmp_path, retry_errors=True)
    rc = retried.results["tasks"]["detect"]["counts"]
    assert rc["failed"] == 0 and rc["called"] == c["failed"]


def test_cost_comes_from_the_endpoint_or_from_the_users_prices() -> None:
    from types import SimpleNamespace

    priced = get_model("openai:m", base_url="http://127.0.0.1:9/v1", price_in=1.0, price_out=2.0)
    reply = priced._with_usage("ok", SimpleNamespace(prompt_tokens=1000, completion_tokens=500))
    assert (reply.prompt_tokens, reply.completion_tokens, reply.cost) == (1000, 500, pytest.approx(0.002))
    reported = priced._with_usage("ok", SimpleNamespace(prompt_tokens=1000, completion_tokens=500, cost=0.5))
    assert reported.cost == 0.5                                   # what the endpoint charged wins
    unpriced = get_model("openai:m", base_url="http://127.0.0.1:9/v1")
    assert unpriced._with_usage("ok", SimpleNamespace(prompt_tokens=10, completion_tokens=5)).cost is None


def test_an_endpoints_absurd_usage_counts_are_unknown_not_a_crash(tmp_path: Path) -> None:
    # A 400-digit prompt_tokens raised OverflowError in the cost (float) and in the cache's SQLite INSERT.
    from types import SimpleNamespace

    from synth.evaluate.cache import ResponseCache

    priced = get_model("openai:m", base_url="http://127.0.0.1:9/v1", price_in=1.0, price_out=2.0)
    huge = 10 ** 400
    reply = priced._with_usage("ok", SimpleNamespace(prompt_tokens=huge, completion_tokens=5, cost=huge))
    assert (reply.prompt_tokens, reply.completion_tokens, reply.cost) == (None, 5, None)
    assert priced._with_usage("ok", {"prompt_tokens": 2**63, "completion_tokens": 1}).prompt_tokens is None
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put_ok("k", model="m", endpoint="e", task="detect", item_id="i", run_index=0, response=reply.text,
                 truncated=False, latency_s=0.1, prompt_tokens=reply.prompt_tokens,
                 completion_tokens=reply.completion_tokens, cost=reply.cost)
    assert cache.get("k") is not None


def test_half_a_price_is_a_config_error() -> None:
    from synth.errors import ConfigError

    with pytest.raises(ConfigError, match="--price-in and --price-out"):
        get_model("openai:m", base_url="http://127.0.0.1:9/v1", price_in=1.0)


def test_a_store_written_before_usage_columns_opens_and_reads(tmp_path: Path) -> None:
    import sqlite3

    from synth.evaluate import ResponseCache

    db = sqlite3.connect(tmp_path / "cache.sqlite")
    db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, endpoint TEXT NOT NULL,"
               " task TEXT NOT NULL, item_id TEXT NOT NULL, run_index INTEGER NOT NULL, status TEXT NOT NULL,"
               " response TEXT, error TEXT, truncated INTEGER NOT NULL DEFAULT 0, latency_s REAL,"
               " attempts INTEGER NOT NULL DEFAULT 1, created_at REAL NOT NULL)")
    db.execute("INSERT INTO responses VALUES ('k', 'm', 'e', 'detect', 'i', 0, 'ok', 'Correct: yes', NULL, 0,"
               " 0.1, 1, 0)")
    db.commit()
    db.close()
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        stored = cache.get("k")
        assert stored is not None and stored.response == "Correct: yes" and stored.cost is None
        cache.put_ok("k2", model="m", endpoint="e", task="detect", item_id="j", run_index=0, response="x",
                     truncated=False, latency_s=0.1, prompt_tokens=3, completion_tokens=1, cost=0.01)
        assert cache.get("k2").cost == 0.01


@pytest.mark.parametrize("url", ["notaurl", "ftp://host/v1", "localhost:8000/v1", "http://"])
def test_a_base_url_that_is_not_http_is_refused_before_any_call(url: str) -> None:
    # Before: every call failed "unsupported protocol" and eval ended in exit 4, as if the endpoint had failed.
    with pytest.raises(ConfigError, match="is not an http\\(s\\) URL"):
        get_model("openai:m", base_url=url)
