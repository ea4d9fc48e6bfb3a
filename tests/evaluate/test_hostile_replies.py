"""Hostile endpoints: whatever a server sends back, eval stores a failure with its reason and carries on."""

from __future__ import annotations

import asyncio
import functools
import json
import socket
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.errors import ConfigError
from synth.evaluate import ResponseCache, evaluate_run, get_model, get_task
from synth.evaluate.models import Reply, Request
from synth.evaluate.models.offline import RandomGuess
from synth.evaluate.models.openai_chat import MAX_REPLY_BYTES, ReplyRejected, _InflatedSize
from synth.evaluate.runner import EvalResult, failure_limit
from tests.evaluate._http import (
    ReplyFn,
    Scripted,
    choices_null,
    choices_string,
    cost_overflow,
    echo_key,
    echo_key_in_error,
    good,
    gzip_bomb_reply,
    invalid_json,
    lone_surrogate,
    message_string,
    serve,
    trickle,
    unsupported_parameter,
)

API_KEY = "sk-hostile-test-0123456789abcdef"


def always(reply: ReplyFn) -> Scripted:
    return Scripted(lambda n, body: reply)


def run_detect(tiny_run: Path, out: Path, base_url: str, *, limit: int = 1, **options: Any) -> EvalResult:
    # limit=1: one base problem, i.e. its 4 items (clean, one error, blur 1, blur 3)
    options = {"max_retries": 0, "timeout": 10, **options}
    model = get_model("openai:fake-vlm", base_url=base_url, **options)
    return evaluate_run(tiny_run, model, [get_task("detect")], out_dir=out, limit=limit, concurrency=4)


def stored(out: Path) -> list:
    with ResponseCache(out / "cache.sqlite") as cache:
        return list(cache)


def eval_cli(tiny_run: Path, out: Path, base_url: str, *extra: str, limit: int = 1) -> Any:
    return CliRunner().invoke(app, ["eval", str(tiny_run), "--model", "openai:fake-vlm", "--base-url", base_url,
                                    "--task", "detect", "--limit", str(limit), "--max-retries", "0",
                                    "--timeout", "10", "--concurrency", "4", "--out", str(out), *extra])


def strict_load(path: Path) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"{path.name} holds the non-standard JSON constant {name}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


@pytest.mark.parametrize(("reply", "reason"), [
    (invalid_json, "reply is not JSON (JSONDecodeError"),
    (choices_string, "reply 'choices' is a string, expected a list"),
    (choices_null, "reply choices[0] is null, expected an object"),
    (message_string, "reply choices[0].message is a string, expected an object"),
    (lone_surrogate, "reply content is not valid Unicode (lone surrogate U+D83D"),
], ids=["invalid-json", "choices-string", "choices-null", "message-string", "lone-surrogate"])
def test_a_malformed_reply_is_a_stored_failure_with_its_reason(
        reply: ReplyFn, reason: str, tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(always(reply), monkeypatch, API_KEY) as url:
        result = run_detect(tiny_run, tmp_path, url)
    counts = result.results["tasks"]["detect"]["counts"]
    assert counts["failed"] == counts["requests"] == 4
    [(grouped, n)] = result.failures("detect")             # every call, one reason
    assert n == 4 and grouped.startswith(reason)
    rows = stored(tmp_path)
    assert len(rows) == 4 and all(r.status == "error" and r.response is None and r.error == grouped for r in rows)
    assert result.results["tasks"]["detect"]["metrics"]["n"] == 0   # never scored


@pytest.mark.parametrize("headers_too", [False, True], ids=["slow-body", "slow-headers"])
def test_a_reply_trickling_one_byte_a_second_fails_at_the_deadline(
        headers_too: bool, tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Scripted(lambda n, body: trickle(fake.closing, headers_too=headers_too))
    with serve(fake, monkeypatch, API_KEY) as url:
        start = time.monotonic()
        result = run_detect(tiny_run, tmp_path, url, limit=1, deadline=1)   # the whole reply would take minutes
        elapsed = time.monotonic() - start
    assert elapsed < 10, elapsed
    assert result.failures("detect") == [("deadline: no complete reply within 1 s (--deadline)", 4)]


@pytest.mark.parametrize("status", [200, 500])
def test_a_gzip_bomb_stops_at_the_size_cap(status: int, tiny_run: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # 32 MiB of zeros in 32 KB of gzip; as an error body the client reads it itself (after one retry).
    with serve(always(gzip_bomb_reply(status)), monkeypatch, API_KEY) as url:
        result = run_detect(tiny_run, tmp_path, url, limit=1, max_retries=1)
    assert result.failures("detect") == [(f"response larger than {MAX_REPLY_BYTES} bytes (decoded)", 4)]


def test_the_key_is_never_written_even_when_the_server_echoes_it(
        tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(Scripted(lambda n, body: echo_key if n % 2 == 0 else echo_key_in_error), monkeypatch, API_KEY) as url:
        result = run_detect(tiny_run, tmp_path, url)
    counts = result.results["tasks"]["detect"]["counts"]
    assert counts["answered"] == 2 and counts["failed"] == 2
    rows = stored(tmp_path)
    assert all("Bearer [redacted]" in (r.response or r.error) for r in rows)   # the echoes did arrive
    assert all("(base64 [redacted]" in r.error for r in rows if r.status == "error")
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"cache.sqlite", "results.json", "detect.jsonl"}
    for path in written:
        assert API_KEY.encode() not in path.read_bytes(), path


def test_a_cost_of_1e999_leaves_results_json_strict(tiny_run: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(always(cost_overflow), monkeypatch, API_KEY) as url:
        run_detect(tiny_run, tmp_path, url)
    results = strict_load(tmp_path / "results.json")
    counts = results["tasks"]["detect"]["counts"]
    assert counts["answered"] == 4 and counts["cost"] is None
    assert all(r.cost is None for r in stored(tmp_path))


def test_non_finite_numbers_from_any_model_are_written_as_null(tiny_run: Path, tmp_path: Path) -> None:
    class Overpriced(RandomGuess):
        async def respond(self, request: Request) -> Reply:
            return Reply(await super().respond(request), cost=float("inf"))

    evaluate_run(tiny_run, Overpriced(), [get_task("detect")], out_dir=tmp_path, limit=2)
    assert strict_load(tmp_path / "results.json")["tasks"]["detect"]["counts"]["cost"] is None
    for line in (tmp_path / "responses" / "detect.jsonl").read_text().splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(name))


def test_server_down_exits_4_with_the_reasons_counted(tiny_run: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with socket.socket() as closed:   # bound but never listening: every connection is refused
        closed.bind(("127.0.0.1", 0))
        result = eval_cli(tiny_run, tmp_path, f"http://127.0.0.1:{closed.getsockname()[1]}/v1")
    assert result.exit_code == 4, result.output
    assert "4 x connection failed" in result.output
    assert "4 of 4 detect calls failed" in result.output and "re-run the same command" in result.output
    assert strict_load(tmp_path / "results.json")["tasks"]["detect"]["counts"]["failed"] == 4


def test_an_unsupported_parameter_exits_4_and_names_it(tiny_run: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(always(unsupported_parameter), monkeypatch, API_KEY) as url:
        result = eval_cli(tiny_run, tmp_path, url)
    assert result.exit_code == 4, result.output
    assert "4 x HTTP 400: Unsupported parameter: 'max_tokens' is not supported with this model." in result.output
    failures = strict_load(tmp_path / "results.json")["tasks"]["detect"]["failures"]
    assert failures == [{"reason": "HTTP 400: Unsupported parameter: 'max_tokens' is not supported with this "
                                   "model.", "count": 4}]


def test_one_bad_reply_among_good_ones_keeps_the_good_ones_and_exits_per_threshold(
        tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def choose(n: int, body: dict) -> ReplyFn:
        # The first call gets broken JSON at once, and so does every later call (which can only be that
        # item, re-called); the others answer 0.3 s later, so they are in flight when the bad one fails.
        return invalid_json if n == 0 or n >= 4 else functools.partial(good, delay=0.3)

    fake = Scripted(choose)
    with serve(fake, monkeypatch, API_KEY) as url:
        first = eval_cli(tiny_run, tmp_path, url)
        assert first.exit_code == 4, first.output
        t = strict_load(tmp_path / "results.json")["tasks"]["detect"]
        assert (t["counts"]["answered"], t["counts"]["failed"], t["metrics"]["n"]) == (3, 1, 3)
        assert sorted(r.status for r in stored(tmp_path)) == ["error", "ok", "ok", "ok"]
        assert "1 x reply is not JSON" in first.output

        calls = fake.calls
        tolerant = eval_cli(tiny_run, tmp_path, url, "--fail-on-error", "2")
        assert tolerant.exit_code == 0, tolerant.output
        assert fake.calls == calls + 1                      # only the stored failure was called again
        assert eval_cli(tiny_run, tmp_path, url, "--fail-on-error", "0.5").exit_code == 0   # 1 < 2 of 4
        assert eval_cli(tiny_run, tmp_path, url, "--fail-on-error", "0.25").exit_code == 4  # 1 >= 1 of 4


def test_a_rerun_retries_stored_failures_and_never_scores_them(
        tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Scripted(lambda n, body: choices_null if n == 0 else good)
    with serve(fake, monkeypatch, API_KEY) as url:
        first = eval_cli(tiny_run, tmp_path, url)
        assert first.exit_code == 4, first.output
        [failure] = [r for r in stored(tmp_path) if r.status == "error"]
        assert failure.response is None

        kept = eval_cli(tiny_run, tmp_path, url, "--no-retry-errors")
        assert kept.exit_code == 4 and fake.calls == 4     # scored from the store; the failure is still a failure

        again = eval_cli(tiny_run, tmp_path, url)
        assert again.exit_code == 0, again.output
        assert fake.calls == 5
    counts = strict_load(tmp_path / "results.json")["tasks"]["detect"]["counts"]
    assert (counts["answered"], counts["failed"], counts["called"], counts["cached"]) == (4, 0, 1, 3)


def test_fail_on_error_reads_like_inspect_ai() -> None:
    assert failure_limit(0.1, 50) == pytest.approx(5)      # below 1: a proportion of the task's calls
    assert failure_limit(1, 50) == 1 and failure_limit(3, 50) == 3   # from 1: a count
    for bad in (-1, float("inf"), float("nan")):
        with pytest.raises(ConfigError, match="--fail-on-error"):
            failure_limit(bad, 50)


def test_a_bug_in_one_call_lets_the_calls_in_flight_finish_and_be_stored(tiny_run: Path, tmp_path: Path) -> None:
    class OneBug(RandomGuess):
        async def respond(self, request: Request) -> str:
            if request.item.id == first_id:
                await asyncio.sleep(0.05)   # the other three calls are in flight by now
                raise RuntimeError("bug in an adapter")
            await asyncio.sleep(0.3)
            return await super().respond(request)

    from synth.evaluate import load_items

    first_id = load_items(tiny_run, limit=1)[0].id
    with pytest.raises(RuntimeError, match="bug in an adapter"):
        evaluate_run(tiny_run, OneBug(), [get_task("detect")], out_dir=tmp_path, limit=1, concurrency=4)
    rows = stored(tmp_path)
    assert len(rows) == 3 and all(r.status == "ok" for r in rows)


@pytest.mark.parametrize(("encoding", "wbits"), [("gzip", zlib.MAX_WBITS | 16), ("deflate", zlib.MAX_WBITS),
                                                 ("deflate", -zlib.MAX_WBITS)], ids=["gzip", "deflate", "raw-deflate"])
def test_the_size_cap_counts_decoded_bytes_in_every_encoding_the_client_decodes(encoding: str, wbits: int) -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    data = packer.compress(bytes(5000)) + packer.flush()
    chunks = [data[i:i + 7] for i in range(0, len(data), 7)]
    exact = _InflatedSize(encoding, 5000)
    for chunk in chunks:
        exact.feed(chunk)
    assert exact.size == 5000
    small = _InflatedSize(encoding, 4999)
    with pytest.raises(ReplyRejected, match="response larger than 4999 bytes"):
        for chunk in chunks:
            small.feed(chunk)


def test_an_encoding_we_did_not_ask_for_is_refused() -> None:
    with pytest.raises(ReplyRejected, match="content-encoding br"):
        _InflatedSize("br", 1 << 20).feed(b"\x0b\x02\x80hello\x03")
