"""Plans model calls for a run folder and makes them concurrently, cache first; failures are stored, not scored."""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from synth.errors import ConfigError, EvalFailuresError, RunError
from synth.evaluate.cache import CACHE_FILE, ResponseCache, request_key
from synth.evaluate.models import MAX_RESPONSE_CHARS, Model, ModelCallError, Reply, Request
from synth.evaluate.ratelimit import RateLimiter, guess_tokens
from synth.evaluate.results import check_eval_dir, mark_eval_dir, score_outcomes, write_results
from synth.evaluate.tasks import Task, prompt_for
from synth.manifest import ROW_FAULTS, edited_row, from_row, read_manifest
from synth.records import Item
from synth.rundir import require_not_in_use

InputMode = Literal["image", "text"]
_SURROGATES = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Outcome:
    request: Request
    key: str
    status: str           # "ok" or "error"
    response: str | None
    error: str | None
    cached: bool
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None


@dataclass(frozen=True)
class Counts:
    """Progress so far: done = answered + failed; cached = served from the store without a call.

    ``cost`` (US dollars) sums the answers used, cached or new, that carry one; None when none do.
    """

    total: int
    done: int
    cached: int
    failed: int
    called: int
    cost: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


ProgressFn = Callable[[Counts], None]


def load_items(run_dir: str | Path, *, limit: int | None = None) -> list[Item]:
    """The run's items in manifest order; with ``limit``, only those of ``limit`` base problems (each with
    all its variants, so every comparison stays paired), taken in turn from each problem family."""
    path = Path(run_dir) / "manifest.jsonl"
    if not path.is_file():
        require_not_in_use(run_dir, "evaluate it")
        raise RunError(f"{run_dir} has no manifest.jsonl; generate a run first (mathstress generate)")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}")
    rows = list(read_manifest(run_dir))
    numbered = list(enumerate(rows, start=1))
    items = []
    try:
        if limit is not None:
            chosen = stratified_bases(rows, limit)
            numbered = [(n, row) for n, row in numbered if row["base_id"] in chosen]
        for _, row in numbered:
            items.append(from_row(row))
    except ROW_FAULTS as exc:
        at = f"row {numbered[len(items)][0]}" if len(items) < len(numbered) else "a row"
        edited = edited_row(run_dir, f"{path} {at}", exc)
        if edited is None:
            raise
        raise edited from None
    return items


def stratified_bases(rows: Sequence[dict], n: int) -> set[str]:
    """``n`` base ids, one from each family in turn (families and bases in manifest order), so a small
    evaluation covers every family instead of the first few."""
    by_family: dict[str, list[str]] = {}
    seen: set[str] = set()
    for row in rows:
        if row["base_id"] not in seen:
            seen.add(row["base_id"])
            by_family.setdefault(str(row.get("family", "")), []).append(row["base_id"])
    queues = list(by_family.values())
    chosen: set[str] = set()
    depth = 0
    while len(chosen) < n and any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and len(chosen) < n:
                chosen.add(queue[depth])
        depth += 1
    return chosen


def _image_of(run_dir: Path, item: Item) -> Path | None:
    if item.image is None:
        return None
    root = run_dir.resolve()
    path = (root / item.image).resolve()
    if not path.is_relative_to(root):  # manifest paths are data, and must stay inside the run folder
        raise RunError(f"item {item.id}: image path {item.image!r} leaves the run folder")
    if not path.is_file():
        raise RunError(f"item {item.id}: image {item.image} is missing from {run_dir}")
    return path


def plan(run_dir: str | Path, task: Task, items: Sequence[Item], *, runs: int = 1,
         input_mode: InputMode = "image") -> list[Request]:
    """One request per (item the task applies to, run index), in manifest order."""
    if runs < 1:
        raise ConfigError(f"--runs must be >= 1, got {runs}")
    if input_mode not in ("image", "text"):
        raise ConfigError(f"input mode must be image or text, got {input_mode!r}")
    if task.needs_image and input_mode != "image":
        raise ConfigError(f"the {task.id} task reads the page image; run it with --input image")
    run_dir = Path(run_dir)
    hashes: dict[Path, str] = {}
    requests = []
    for item in items:
        if not task.applies(item):
            continue
        image = _image_of(run_dir, item) if input_mode == "image" else None
        digest = None
        if image is not None:
            if image not in hashes:
                hashes[image] = hashlib.sha256(image.read_bytes()).hexdigest()
            digest = hashes[image]
        prompt = prompt_for(task, item, with_image=image is not None, with_steps=image is None)
        for run_index in range(runs):
            requests.append(Request(task, item, prompt, image, digest, run_index))
    return requests


def _storable(model: Model) -> Callable[[str], str]:
    """What is stored of a model's text: lone surrogates replaced (SQLite and JSON need valid UTF-8), and
    the model's secrets scrubbed (``Model.scrub``: the openai adapter removes its API key)."""
    def storable(text: str) -> str:
        return model.scrub(_SURROGATES.sub("\ufffd", text))

    return storable


def bound_response(text: str) -> tuple[str, bool]:
    """Keep the head and the tail of an over-long response (the verdict is usually at the end)."""
    if len(text) <= MAX_RESPONSE_CHARS:
        return text, False
    head = MAX_RESPONSE_CHARS // 8
    return text[:head] + "\n[...]\n" + text[-(MAX_RESPONSE_CHARS - head):], True


async def collect(requests: Sequence[Request], model: Model, cache: ResponseCache, *, concurrency: int = 8,
                  retry_errors: bool = False, progress: ProgressFn | None = None,
                  limiter: RateLimiter | None = None) -> list[Outcome]:
    """Answer every request: stored answers are reused, the rest are called with at most
    ``concurrency`` in flight (and no faster than ``limiter`` allows) and stored as each arrives.
    Stored failures are called again only with ``retry_errors``."""
    if concurrency < 1:
        raise ConfigError(f"--concurrency must be >= 1, got {concurrency}")
    limiter = limiter if limiter is not None and limiter.active else None
    max_tokens = model.params.get("max_tokens") if isinstance(model.params.get("max_tokens"), int) else None
    total = len(requests)
    outcomes: list[Outcome | None] = [None] * total
    state = {"done": 0, "cached": 0, "failed": 0, "called": 0, "prompt_tokens": 0, "completion_tokens": 0}
    spent: list[float] = []

    def add_usage(o: Outcome) -> None:
        state["prompt_tokens"] += o.prompt_tokens or 0
        state["completion_tokens"] += o.completion_tokens or 0
        if o.cost is not None:
            spent.append(o.cost)

    def report() -> None:
        if progress is not None:
            progress(Counts(total, state["done"], state["cached"], state["failed"], state["called"],
                            float(sum(spent)) if spent else None, state["prompt_tokens"], state["completion_tokens"]))

    keys = [request_key(model=model.id, endpoint=model.endpoint, prompt=r.prompt, image_sha256=r.image_sha256,
                        params=model.params, run_index=r.run_index, item_id=r.item.id) for r in requests]
    pending: list[int] = []
    for i, (req, key) in enumerate(zip(requests, keys)):
        stored = cache.get(key)
        if stored is None or (stored.status == "error" and retry_errors):
            pending.append(i)
            continue
        outcomes[i] = Outcome(req, key, stored.status, stored.response, stored.error, cached=True,
                              prompt_tokens=stored.prompt_tokens, completion_tokens=stored.completion_tokens,
                              cost=stored.cost)
        add_usage(outcomes[i])
        state["done"] += 1
        state["cached"] += 1
        state["failed"] += stored.status == "error"
    report()

    gate = asyncio.Semaphore(concurrency)
    meta_of = {}
    crashed: list[Exception] = []
    storable = _storable(model)

    async def call(i: int) -> None:
        req, key = requests[i], keys[i]
        meta = meta_of.setdefault(i, {"model": model.id, "endpoint": model.endpoint, "task": req.task.id,
                                      "item_id": req.item.id, "run_index": req.run_index, "prompt": req.prompt})
        async with gate:
            if crashed:   # a sibling hit a bug: start nothing new, let the calls in flight finish and be stored
                return
            charged = 0
            if limiter is not None:
                guess = guess_tokens(req.prompt, image=req.image_path is not None, max_tokens=max_tokens)
                charged = await limiter.acquire(req.task.id, guess)
            state["called"] += 1
            start = time.perf_counter()
            used: int | None = None
            try:
                try:
                    answer = await model.respond(req)
                    reply = answer if isinstance(answer, Reply) else Reply(answer)
                    if reply.prompt_tokens is not None and reply.completion_tokens is not None:
                        used = reply.prompt_tokens + reply.completion_tokens
                    text = reply.text
                    if not isinstance(text, str) or not text.strip():
                        raise ModelCallError("empty response")
                except ModelCallError as exc:
                    latency = time.perf_counter() - start
                    error = storable(str(exc))
                    cache.put_error(key, error=error, latency_s=latency, **meta)
                    outcomes[i] = Outcome(req, key, "error", None, error, cached=False)
                    state["failed"] += 1
                else:
                    latency = time.perf_counter() - start
                    text, truncated = bound_response(storable(text))
                    usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                             "cost": reply.cost}
                    cache.put_ok(key, response=text, truncated=truncated, latency_s=latency, **usage, **meta)
                    outcomes[i] = Outcome(req, key, "ok", text, None, cached=False, **usage)
                    add_usage(outcomes[i])
            except Exception as exc:   # not a model failure but a fault of ours: re-raised once siblings are stored
                crashed.append(exc)
                return
            finally:
                if limiter is not None:
                    limiter.settle(req.task.id, charged, used)
        state["done"] += 1
        report()

    await asyncio.gather(*(call(i) for i in pending))
    if crashed:
        raise crashed[0]
    return [o for o in outcomes if o is not None]


# -- one evaluation, end to end -------------------------------------------------------------
def model_slug(model_id: str) -> str:
    """A folder name for a model id: `openai:gpt-4o-mini` -> `openai-gpt-4o-mini`."""
    slug = "".join(c if c.isalnum() or c in "._-" else "-" for c in model_id).strip(".-")
    return slug[:80] or "model"


def result_key(task: Task, input_mode: InputMode) -> str:
    """The task's name in results.json: `detect` with the page image, `detect@text` without it."""
    return task.id if input_mode == "image" else f"{task.id}@{input_mode}"


def default_out_dir(run_dir: str | Path, model_id: str) -> Path:
    return Path(run_dir) / "eval" / model_slug(model_id)


@dataclass(frozen=True)
class EvalResult:
    out_dir: Path
    results: dict
    counts: dict[str, Counts]   # per result key (see result_key)
    skipped: dict[str, str] = field(default_factory=dict)  # result key -> why the task was left out

    def failures(self, key: str) -> list[tuple[str, int]]:
        """(reason, count) of the task's failed calls, most frequent first (as in results.json)."""
        return [(f["reason"], f["count"]) for f in self.results["tasks"][key].get("failures", [])]


def failure_limit(fail_on_error: float, total: int) -> float:
    """How many failed calls fail a task, as inspect-ai reads --fail-on-error: a proportion of the
    task's calls when below 1, a count from 1 up."""
    if not 0 <= fail_on_error < float("inf"):
        raise ConfigError(f"--fail-on-error must be a proportion (0-1) or a count (>= 1), got {fail_on_error}")
    return fail_on_error * total if fail_on_error < 1 else fail_on_error


def check_failures(result: EvalResult, *, fail_on_error: float = 1) -> None:
    """Raise EvalFailuresError when a task's failed calls reach ``fail_on_error`` (see failure_limit);
    the default, 1, fails on any call left failed. results.json and the stored reasons are already written."""
    over = []
    for key, c in result.counts.items():
        limit = failure_limit(fail_on_error, c.total)
        if c.failed and c.failed >= limit:
            reasons = result.failures(key)
            top = f"; most often {reasons[0][1]} x {reasons[0][0]}" if reasons else ""
            over.append(f"{c.failed} of {c.total} {key} calls failed{top}")
    if over:
        raise EvalFailuresError(f"{'; '.join(over)} (--fail-on-error {fail_on_error:g}); reasons are stored in "
                                f"{result.out_dir / CACHE_FILE}; re-run the same command to retry them")


def evaluate_run(run_dir: str | Path, model: Model, tasks: Sequence[Task], *, out_dir: str | Path | None = None,
                 runs: int = 1, concurrency: int = 8, retry_errors: bool = False, limit: int | None = None,
                 input_mode: InputMode = "image", seed: int = 0, n_boot: int = 2000, rpm: float | None = None,
                 tpm: float | None = None, progress: Callable[[str, Counts], None] | None = None) -> EvalResult:
    """Call ``model`` on a run folder for each task, store every response, score and write results.json.

    Re-running the same call is resume: stored answers are reused and only missing ones are
    requested. Scores are always recomputed from the stored responses. ``limit`` takes that many base
    problems (with all their variants) in turn from each family; ``rpm`` and ``tpm`` bound the calls and
    tokens per minute over the whole evaluation, every task included.
    """
    run_dir = Path(run_dir)
    out = Path(out_dir) if out_dir is not None else default_out_dir(run_dir, model.id)
    limiter = RateLimiter(rpm=rpm, tpm=tpm)
    items = load_items(run_dir, limit=limit)
    check_eval_dir(out)
    counts: dict[str, Counts] = {}
    scored_by_task = {}
    planned = []
    # A task that applies to no item (it needs what none holds: a solution, an answer, an error) is left out and
    # said so, where scoring nothing reported counts with no metric, as if the task had been measured; when that
    # is every task asked for, nothing is done.
    skipped: dict[str, str] = {}
    for task in tasks:   # plan and prepare every task first, so a task the model cannot answer fails fast
        requests = plan(run_dir, task, items, runs=runs, input_mode=input_mode)
        if not requests:
            skipped[result_key(task, input_mode)] = (f"applies to none of the {len(items)} items: it needs "
                                                     f"{task.needs}")
            continue
        model.prepare(task, [r.item for r in requests if r.run_index == 0], workdir=out)
        planned.append((task, requests))
    if not planned:
        raise ConfigError("; ".join(f"the {key} task {why}" for key, why in skipped.items())
                          + f" ({run_dir}); choose other tasks (`mathstress eval --help` lists them)")
    with ResponseCache(mark_eval_dir(out) / CACHE_FILE) as cache:
        for task, requests in planned:
            key = result_key(task, input_mode)
            last: list[Counts] = []

            def update(c: Counts, key: str = key, last: list[Counts] = last) -> None:
                last[:] = [c]
                if progress is not None:
                    progress(key, c)

            outcomes = asyncio.run(_collect_and_close(requests, model, cache, concurrency, retry_errors, update,
                                                      limiter))
            counts[key] = last[-1] if last else Counts(0, 0, 0, 0, 0)
            scored_by_task[key] = (task, *score_outcomes(task, outcomes))
    results = write_results(out, run_dir=run_dir, model=model, scored_by_task=scored_by_task, counts=counts,
                            settings={"runs": runs, "limit": limit, "input": input_mode, "seed": seed,
                                      "n_boot": n_boot, "rpm": rpm, "tpm": tpm}, seed=seed, n_boot=n_boot,
                            skipped=skipped)
    return EvalResult(out, results, counts, skipped)


async def _collect_and_close(requests: Sequence[Request], model: Model, cache: ResponseCache, concurrency: int,
                             retry_errors: bool, progress: ProgressFn, limiter: RateLimiter) -> list[Outcome]:
    try:
        return await collect(requests, model, cache, concurrency=concurrency, retry_errors=retry_errors,
                             progress=progress, limiter=limiter)
    finally:
        await model.aclose()
