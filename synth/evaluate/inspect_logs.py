"""An evaluation folder rebuilt from inspect-ai's logs of the ``mathstress/<task>`` tasks (the ``inspect`` extra).

Each log's samples are matched to the run folder's items (the ``run``, ``limit`` and ``input`` task arguments
recorded in the log), the completion text is scored by the task's own parser, exactly as a stored response of
``mathstress eval`` is, and results.json and responses/<task>.jsonl are written by the same code. So
``mathstress report`` over the rebuilt folder gives the paired deltas, clustered intervals and worst case
that inspect's own log viewer does not compute. An errored sample is a failed call: stored, never scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.errors import ConfigError, RunError
from synth.evaluate.results import check_eval_dir, mark_eval_dir, score_outcomes, write_results
from synth.evaluate.runner import Counts, EvalResult, Outcome, load_items, model_slug, plan, result_key
from synth.evaluate.tasks import get_task

INSPECT_EXTRA_HINT = 'pip install "mathstress[inspect]"'
TASK_PREFIX = "mathstress/"


@dataclass
class InspectModel:
    """The model of a set of inspect logs, as results.json records a model."""

    id: str
    endpoint: str
    params: dict[str, Any]
    logs: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        return {"inspect_logs": self.logs}


def _read_logs(log_dir: Path) -> list[Any]:
    if not log_dir.is_dir():  # said first: a mistyped folder is not fixed by installing the extra
        raise RunError(f"--from-inspect {log_dir}: no such folder")
    try:
        from inspect_ai.log import list_eval_logs, read_eval_log
    except ImportError:
        raise ConfigError(f"--from-inspect reads inspect-ai's logs, which needs the inspect extra: "
                          f"{INSPECT_EXTRA_HINT}") from None
    logs = [read_eval_log(info) for info in list_eval_logs(str(log_dir), recursive=True)]
    ours = [log for log in logs if _task_id(log) is not None]
    if not ours:
        raise RunError(f"--from-inspect {log_dir}: no logs of mathstress tasks there (run e.g. `inspect eval "
                       f"mathstress/detect -T run=RUN --model ...` with --log-dir {log_dir})")
    return ours


def _task_id(log: Any) -> str | None:
    """The mathstress task a log ran: recorded in the task's metadata (the registry name says mathstress/<task>
    only when inspect found the task through the entry point, not when it was given the Task object)."""
    recorded = (log.eval.metadata or {}).get("mathstress_task")
    if isinstance(recorded, str) and recorded:
        return recorded
    name = str(log.eval.task)
    return name[len(TASK_PREFIX):] if name.startswith(TASK_PREFIX) else None


def _args(log: Any) -> dict[str, Any]:
    """run, limit and input of the log's task: what the task recorded, else the arguments inspect recorded."""
    return {**(log.eval.task_args or {}), **{k: v for k, v in (log.eval.metadata or {}).items()
                                             if k in ("run", "limit", "input")}}


def _newest_per_task(logs: Sequence[Any]) -> list[Any]:
    """One log per (task, input mode): the newest (a re-run replaces an earlier attempt)."""
    newest: dict[tuple[str, str], Any] = {}
    for log in sorted(logs, key=lambda log: str(log.eval.created)):
        newest[(str(_task_id(log)), str(_args(log).get("input", "image")))] = log
    return [newest[k] for k in sorted(newest)]


def _usage(sample: Any) -> tuple[int, int]:
    usage = getattr(sample, "model_usage", None) or {}
    return (sum(int(u.input_tokens or 0) for u in usage.values()),
            sum(int(u.output_tokens or 0) for u in usage.values()))


def results_from_inspect(log_dir: str | Path, *, out_dir: str | Path | None = None, run_dir: str | Path | None = None,
                         seed: int = 0, n_boot: int = 2000) -> EvalResult:
    """Write results.json and responses/<task>.jsonl for the mathstress tasks logged in ``log_dir``.

    ``run_dir`` overrides the run folder recorded in the logs (a run moved since); the evaluation folder is
    ``out_dir``, by default RUN/eval/inspect-<model>.
    """
    logs = _newest_per_task(_read_logs(Path(log_dir)))
    models = sorted({str(log.eval.model) for log in logs})
    if len(models) > 1:
        raise ConfigError(f"--from-inspect {log_dir} holds logs of several models ({', '.join(models)}); "
                          "give a folder with one model's logs (inspect's --log-dir)")
    runs = sorted({str(run_dir or _args(log).get("run", "")) for log in logs})
    if len(runs) != 1 or not runs[0]:
        raise ConfigError(f"--from-inspect {log_dir}: the logs evaluate {len(runs)} run folders ({', '.join(runs)}); "
                          "give one run (--run RUN) or one run's logs")
    run = Path(runs[0])
    first = logs[0]
    config = first.plan.config.model_dump(exclude_none=True) if first.plan and first.plan.config else {}
    model = InspectModel(id=f"inspect:{models[0]}", endpoint=str(first.eval.model_base_url or "inspect"),
                         params=config, logs=[str(log.location) for log in logs])
    out = Path(out_dir) if out_dir is not None else run / "eval" / model_slug(f"inspect-{models[0]}")
    scored_by_task: dict[str, Any] = {}
    counts: dict[str, Counts] = {}
    epochs = 1
    limits, modes = set(), set()
    for log in logs:
        args = _args(log)
        task = get_task(str(_task_id(log)))
        input_mode = str(args.get("input", "image"))
        limit = args.get("limit")
        limits.add(limit)
        modes.add(input_mode)
        items = load_items(run, limit=limit)
        samples = log.samples or []
        epochs = max([epochs, *(int(s.epoch) for s in samples)])
        requests = {(r.item.id, r.run_index): r
                    for r in plan(run, task, items, runs=max([1, *(int(s.epoch) for s in samples)]),
                                  input_mode=input_mode)}   # type: ignore[arg-type]
        outcomes, failed, used_in, used_out = [], 0, 0, 0
        for sample in samples:
            request = requests.get((str(sample.id), int(sample.epoch) - 1))
            if request is None:
                raise RunError(f"{log.location}: sample {sample.id} is not an item of {run} (limit {limit}); was the "
                               "run regenerated since? give the run the logs were made on (--run)")
            text = sample.output.completion if sample.output is not None else ""
            prompt_tokens, completion_tokens = _usage(sample)
            used_in, used_out = used_in + prompt_tokens, used_out + completion_tokens
            if sample.error is not None or not (text or "").strip():
                reason = sample.error.message if sample.error is not None else "empty response"
                outcomes.append(Outcome(request, "", "error", None, " ".join(str(reason).split())[:2000],
                                        cached=False))
                failed += 1
            else:
                outcomes.append(Outcome(request, "", "ok", text, None, cached=False, prompt_tokens=prompt_tokens,
                                        completion_tokens=completion_tokens))
        key = result_key(task, input_mode)   # type: ignore[arg-type]
        counts[key] = Counts(total=len(outcomes), done=len(outcomes), cached=0, failed=failed, called=len(outcomes),
                             prompt_tokens=used_in, completion_tokens=used_out)
        scored_by_task[key] = (task, *score_outcomes(task, outcomes))
    limit_setting = limits.pop() if len(limits) == 1 else sorted(limits, key=str)
    settings = {"runs": epochs, "limit": limit_setting, "input": ", ".join(sorted(modes)), "seed": seed,
                "n_boot": n_boot, "rpm": None, "tpm": None, "source": "inspect logs"}
    mark_eval_dir(check_eval_dir(out))
    results = write_results(out, run_dir=run, model=model, scored_by_task=scored_by_task, counts=counts,
                            settings=settings, seed=seed, n_boot=n_boot)
    return EvalResult(out, results, counts)
