"""Model settings reach the request body and the cache key; rpm / tpm hold over a window; --limit is stratified."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.evaluate import ResponseCache, evaluate_run, get_model, get_task, load_items, plan
from synth.evaluate.models import Adapter, Reply, Request
from synth.evaluate.ratelimit import RateLimiter
from synth.evaluate.runner import collect
from tests.evaluate._http import GOOD_ANSWER, completion, send_json, serve, unsupported_parameter

API_KEY = "sk-settings-test-0123456789"


class Recorder:
    """Answers every chat call "Correct: yes" with fixed usage, keeping each body and its arrival time."""

    def __init__(self, usage: dict[str, int] | None = None, refuse: str | None = None) -> None:
        self.usage = usage or {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
        self.refuse = refuse            # a token-limit field name this endpoint rejects with a 400
        self.lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []
        self.arrivals: list[float] = []

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        with self.lock:
            self.bodies.append(body)
            self.arrivals.append(time.monotonic())
        if self.refuse is not None and self.refuse in body:
            return unsupported_parameter(handler, body)
        send_json(handler, 200, completion(body["model"], GOOD_ANSWER, self.usage))


def test_every_setting_reaches_the_request_body_and_the_cache_key(tiny_run: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Recorder()
    with serve(fake, monkeypatch, API_KEY) as url:
        result = CliRunner().invoke(app, [
            "eval", str(tiny_run), "--model", "openai:vlm", "--base-url", url, "--task", "detect", "--limit", "1",
            "--runs", "2", "--temperature", "0.7", "--max-tokens", "77", "--top-p", "0.9", "--seed", "5",
            "--extra-body", '{"top_k": 20, "repetition_penalty": 1.05}', "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert fake.bodies and all(b["temperature"] == 0.7 and b["max_tokens"] == 77 and b["top_p"] == 0.9
                               and b["top_k"] == 20 and b["repetition_penalty"] == 1.05 for b in fake.bodies)
    assert sorted(Counter(b["seed"] for b in fake.bodies)) == [5, 6]     # seed + run index: each run samples anew
    model = json.loads((tmp_path / "results.json").read_text())["model"]
    assert model["params"] == {"temperature": 0.7, "max_tokens": 77, "seed": 5, "top_p": 0.9,
                               "extra_body": {"top_k": 20, "repetition_penalty": 1.05}}
    assert model["request"]["max_tokens"] == 77 and model["request"]["seed"] == "5 + run index"

    base = get_model("openai:vlm", base_url="http://127.0.0.1:9/v1", seed=5)
    keys = {json.dumps(get_model("openai:vlm", base_url="http://127.0.0.1:9/v1", **({"seed": 5} | change)).params,
                       sort_keys=True)
            for change in ({}, {"temperature": 0.5}, {"top_p": 0.5}, {"max_tokens": 9}, {"extra_body": '{"a": 1}'},
                           {"seed": 6})}
    assert len(keys) == 6                                  # each setting changes what the cache is keyed by
    assert base.params == {"temperature": 0.0, "max_tokens": 1024, "seed": 5}   # defaults: old stores still match


def test_an_endpoint_refusing_max_tokens_is_sent_max_completion_tokens(tiny_run: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Recorder(refuse="max_tokens")
    with serve(fake, monkeypatch, API_KEY) as url:
        model = get_model("openai:local-model", base_url=url, max_retries=0, max_tokens=64)
        result = evaluate_run(tiny_run, model, [get_task("detect")], out_dir=tmp_path, limit=1, concurrency=1)
    counts = result.results["tasks"]["detect"]["counts"]
    assert counts["failed"] == 0 and counts["answered"] == 4
    assert "max_tokens" in fake.bodies[0] and all(b.get("max_completion_tokens") == 64 for b in fake.bodies[1:])
    assert len(fake.bodies) == 5                           # one refusal, then every call under the other name
    assert result.results["model"]["request"]["max_completion_tokens"] == 64


def test_o_series_and_gpt5_names_get_max_completion_tokens_and_a_fixed_choice_is_kept() -> None:
    for name, param, sent in (("o3-mini", "auto", "max_completion_tokens"), ("gpt-5-mini", "auto",
                              "max_completion_tokens"), ("gpt-4o-mini", "auto", "max_tokens"),
                              ("gpt-4o-mini", "max_completion_tokens", "max_completion_tokens")):
        model = get_model(f"openai:{name}", base_url="http://127.0.0.1:9/v1", max_tokens=10, max_tokens_param=param)
        assert model.request_fields(0)[sent] == 10, name


@pytest.mark.parametrize("text, message", [
    ("{top_k: 20}", "--extra-body must be a JSON object"),
    ("[1, 2]", "--extra-body must be a JSON object"),
    ('{"messages": []}', "--extra-body may not set messages"),
])
def test_a_bad_extra_body_is_refused_before_any_call(tiny_run: Path, tmp_path: Path, text: str, message: str) -> None:
    result = CliRunner().invoke(app, ["eval", str(tiny_run), "--model", "openai:vlm", "--base-url",
                                      "http://127.0.0.1:9/v1", "--task", "detect", "--extra-body", text,
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "out").exists()


# -- requests and tokens per minute ------------------------------------------------------------------
def _most_in_any_window(times: list[float], weights: list[float], window: float) -> float:
    """The largest total weight of arrivals inside any window of ``window`` seconds (each starting at an arrival)."""
    best, j, total = 0.0, 0, 0.0
    for i in range(len(times)):
        total += weights[i]
        while times[i] - times[j] > window:
            total -= weights[j]
            j += 1
        best = max(best, total)
    return best


def _hammer(tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, calls: int, **limits: float
            ) -> tuple[Recorder, float]:
    """``calls`` text-only detect calls (runs of the tiny run's items) through a limiter, 8 in flight."""
    fake = Recorder()
    items = load_items(tiny_run)
    runs = -(-calls // len(items))
    requests = plan(tiny_run, get_task("detect"), items, runs=runs, input_mode="text")[:calls]
    with serve(fake, monkeypatch, API_KEY) as url:
        model = get_model("openai:vlm", base_url=url, max_retries=0, max_tokens=16)
        start = time.monotonic()

        async def go() -> None:
            with ResponseCache(tmp_path / "cache.sqlite") as cache:
                try:
                    await collect(requests, model, cache, concurrency=8, limiter=RateLimiter(**limits))
                finally:
                    await model.aclose()

        import asyncio

        asyncio.run(go())
        elapsed = time.monotonic() - start
    assert len(fake.bodies) == calls
    return fake, elapsed


def _check_rpm(tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, rpm: float, window: float,
               calls: int) -> None:
    fake, elapsed = _hammer(tiny_run, tmp_path, monkeypatch, calls=calls, rpm=rpm)
    most = _most_in_any_window(fake.arrivals, [1.0] * calls, window)
    assert most <= 1.1 * rpm * window / 60, (most, rpm * window / 60)
    assert elapsed >= (calls - 1) * 60 / rpm * 0.99          # the limiter, not a slow server, set the pace


def _check_tpm(tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, tpm: float, window: float,
               calls: int) -> None:
    fake, _ = _hammer(tiny_run, tmp_path, monkeypatch, calls=calls, tpm=tpm)
    tokens = [60.0] * calls                                  # what the fake reports per call
    most = _most_in_any_window(fake.arrivals, tokens, window)
    assert most <= 1.1 * tpm * window / 60, (most, tpm * window / 60)
    assert fake.arrivals[-1] - fake.arrivals[0] >= (calls - 2) * 60 * 60 / tpm   # settled to the usage reported


def test_rpm_holds_within_10_percent_over_a_3_s_window(tiny_run: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _check_rpm(tiny_run, tmp_path, monkeypatch, rpm=600, window=3.0, calls=45)     # 10 calls a second, 4.4 s


def test_tpm_holds_within_10_percent_over_a_3_s_window(tiny_run: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _check_tpm(tiny_run, tmp_path, monkeypatch, tpm=36_000, window=3.0, calls=45)  # 600 tokens a second


@pytest.mark.slow
def test_rpm_holds_within_10_percent_over_a_30_s_window(tiny_run: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _check_rpm(tiny_run, tmp_path, monkeypatch, rpm=120, window=30.0, calls=75)


@pytest.mark.slow
def test_tpm_holds_within_10_percent_over_a_30_s_window(tiny_run: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _check_tpm(tiny_run, tmp_path, monkeypatch, tpm=7_200, window=30.0, calls=75)


class Stamping(Adapter):
    """Answers at once and notes when each call started (no network between the limiter and the clock)."""

    def __init__(self) -> None:
        self.id = "stamping"
        self.starts: list[tuple[str, float]] = []

    async def respond(self, request: Request) -> Reply:
        self.starts.append((request.task.id, time.monotonic()))
        return Reply(request.task.answer(request.task.gold(request.item)), prompt_tokens=50, completion_tokens=10)


def test_the_limits_hold_across_the_tasks_of_one_evaluation(tiny_run: Path, tmp_path: Path) -> None:
    model = Stamping()
    evaluate_run(tiny_run, model, [get_task("detect"), get_task("localize")], out_dir=tmp_path, limit=1, rpm=300)
    tasks = [task for task, _ in model.starts]
    assert tasks == ["detect"] * 4 + ["localize"] * 4
    starts = [t for _, t in model.starts]
    # 60 / 300 s apart, the switch from detect to localize included: the limiter books each call's start 0.2 s
    # after the one before and a call never starts before its booking, so the k-th starts at least 0.2 k s after
    # the first. (One pair can be nearer than 0.2 s on a loaded machine: a call woken late, the next on time.)
    assert all(t - starts[0] >= 0.2 * k - 0.05 for k, t in enumerate(starts)), [t - starts[0] for t in starts]


def test_a_zero_or_negative_limit_is_refused() -> None:
    from synth.errors import ConfigError

    with pytest.raises(ConfigError, match="--rpm must be a positive number"):
        RateLimiter(rpm=0)


# -- --limit ------------------------------------------------------------------------------------------
def test_limit_takes_whole_base_problems_in_turn_from_each_family(tiny_run: Path) -> None:
    everything = load_items(tiny_run)
    families = {i.problem.family for i in everything}
    picked = load_items(tiny_run, limit=len(families))
    bases = {i.base_id for i in picked}
    assert len(bases) == len(families)
    assert {i.problem.family for i in picked} == families          # one base of each family, not the first two
    assert picked == [i for i in everything if i.base_id in bases]  # every variant of each base, manifest order
