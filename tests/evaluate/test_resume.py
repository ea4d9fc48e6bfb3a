"""Kill and resume: a re-run calls only what is missing, and ends where an uninterrupted run ends."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from synth.evaluate import evaluate_run, get_task, load_items
from synth.evaluate.models import ModelCallError, Request
from synth.evaluate.models.offline import RandomGuess


class CountingRandom(RandomGuess):
    """The random baseline, counting calls and optionally 'crashing' after a number of them."""

    def __init__(self, *, crash_after: int | None = None, exc: Callable[[], BaseException] = RuntimeError) -> None:
        super().__init__(seed=3)
        self.calls: list[str] = []
        self.crash_after = crash_after
        self.exc = exc

    async def respond(self, request: Request) -> str:
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise self.exc()
        self.calls.append(request.item.id)
        return await super().respond(request)


def _task_results(result) -> dict:
    return {t: {k: v for k, v in r.items() if k not in ("counts", "settings")}
            for t, r in result.results["tasks"].items()}


TASKS = [get_task("detect"), get_task("localize")]


def test_resume_after_limit_calls_only_the_missing_items(tiny_run: Path, tmp_path: Path) -> None:
    n = len(load_items(tiny_run))
    first = len(load_items(tiny_run, limit=3))          # three base problems, each with all its items
    assert 0 < first < n
    half = CountingRandom()
    evaluate_run(tiny_run, half, TASKS, out_dir=tmp_path / "resumed", limit=3)
    assert len(half.calls) == 2 * first
    rest = CountingRandom()
    resumed = evaluate_run(tiny_run, rest, TASKS, out_dir=tmp_path / "resumed")
    assert len(rest.calls) == 2 * (n - first)
    assert set(rest.calls).isdisjoint(half.calls)

    straight = evaluate_run(tiny_run, CountingRandom(), TASKS, out_dir=tmp_path / "straight")
    assert _task_results(resumed) == _task_results(straight)


def test_resume_after_a_crash_mid_run(tiny_run: Path, tmp_path: Path) -> None:
    n = len(load_items(tiny_run))
    # An unexpected exception stands in for a kill (a KeyboardInterrupt inside an asyncio task
    # trips a CPython 3.11 bug under pytest); either way the loop dies after 7 stored answers.
    crashing = CountingRandom(crash_after=7, exc=RuntimeError)
    with pytest.raises(RuntimeError):
        evaluate_run(tiny_run, crashing, [get_task("detect")], out_dir=tmp_path / "r", concurrency=1)
    assert len(crashing.calls) == 7
    rest = CountingRandom()
    resumed = evaluate_run(tiny_run, rest, [get_task("detect")], out_dir=tmp_path / "r")
    assert len(rest.calls) == n - 7
    assert resumed.results["tasks"]["detect"]["counts"]["cached"] == 7
    straight = evaluate_run(tiny_run, CountingRandom(), [get_task("detect")], out_dir=tmp_path / "s")
    assert _task_results(resumed) == _task_results(straight)


def test_runs_are_distinct_cache_entries(tiny_run: Path, tmp_path: Path) -> None:
    one = CountingRandom()
    evaluate_run(tiny_run, one, [get_task("detect")], out_dir=tmp_path, runs=1, limit=1)   # one base: 4 items
    more = CountingRandom()
    result = evaluate_run(tiny_run, more, [get_task("detect")], out_dir=tmp_path, runs=3, limit=1)
    assert len(one.calls) == 4 and len(more.calls) == 8
    assert result.results["tasks"]["detect"]["stability"] is not None


def test_concurrency_limit_is_respected(tiny_run: Path, tmp_path: Path) -> None:
    import asyncio

    class Slow(RandomGuess):
        in_flight = 0
        peak = 0

        async def respond(self, request: Request) -> str:
            Slow.in_flight += 1
            Slow.peak = max(Slow.peak, Slow.in_flight)
            await asyncio.sleep(0.01)
            Slow.in_flight -= 1
            return await super().respond(request)

    start = time.perf_counter()
    evaluate_run(tiny_run, Slow(), [get_task("detect")], out_dir=tmp_path, concurrency=3)
    assert Slow.peak == 3
    assert time.perf_counter() - start < 10


def test_a_model_error_is_a_failure_not_an_answer(tiny_run: Path, tmp_path: Path) -> None:
    failing = CountingRandom(crash_after=0, exc=lambda: ModelCallError("quota"))
    result = evaluate_run(tiny_run, failing, [get_task("detect")], out_dir=tmp_path, limit=1)
    c = result.results["tasks"]["detect"]["counts"]
    assert c["failed"] == 4 and result.results["tasks"]["detect"]["metrics"] == {"n": 0}
    records = [json.loads(x) for x in (tmp_path / "responses" / "detect.jsonl").open()]
    assert [r["error"] for r in records] == ["quota"] * 4
