"""Evaluation of models on run folders: tasks, model adapters, a cached runner, metrics and reports.

Layout (each module imports only the ones listed before it; nothing here imports this package):

- ``answers``, ``textdist``: final-answer equivalence and character error rate (pure functions);
- ``metrics``: the ``Scored`` record, metric factories tasks share, paired deltas, bootstrap, kappa;
- ``tasks/``: one module per task, registered in ``TASKS`` (the plugin contract is in its docstring);
- ``scoring``: a stored response -> ``Scored``; a task's scores -> its summary;
- ``cache``: the response store (``cache.sqlite``), which is also the resume point;
- ``ratelimit``: requests and tokens per minute, held across a whole evaluation;
- ``ocr``: reading a page with an OCR engine (optional dependencies, imported when first used);
- ``models/``: one module per adapter family, registered in ``MODELS`` (contract in its docstring);
- ``results``: responses/<task>.jsonl and results.json from the stored responses;
- ``runner``: plan the calls, make them concurrently cache first, write results;
- ``plots``, ``viewer``, ``report``: report.md and report.html from results.json, kappa between evaluations;
- ``inspect_logs``: the same results.json rebuilt from inspect-ai's logs of the ``mathstress/<task>`` tasks.

Everything below is the public surface; ``evaluate_run(run_dir, get_model("random"), [get_task("detect")])``
is what ``mathstress eval`` does. The names are imported when first used, so reading the task and model
registries (``mathstress eval --help``) loads neither matplotlib nor the report.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synth.evaluate.cache import ResponseCache, request_key
    from synth.evaluate.metrics import (
        Metric,
        Scored,
        accuracy,
        classification,
        classification_metrics,
        kappa,
        loose_accuracy,
        paired_deltas,
        worst_case,
    )
    from synth.evaluate.models import MODELS, Adapter, Model, ModelCallError, Reply, Request, get_model, register_model
    from synth.evaluate.ocr import ocr_available
    from synth.evaluate.report import compare_models, render_report, write_report
    from synth.evaluate.runner import Counts, EvalResult, evaluate_run, load_items, plan, result_key
    from synth.evaluate.scoring import score, summarize
    from synth.evaluate.tasks import TASKS, Task, get_task, register_task
    from synth.evaluate.tasks.localize import processbench_f1

_WHERE = {
    "synth.evaluate.cache": ("ResponseCache", "request_key"),
    "synth.evaluate.metrics": ("Metric", "Scored", "accuracy", "classification", "classification_metrics", "kappa",
                               "loose_accuracy", "paired_deltas", "worst_case"),
    "synth.evaluate.models": ("MODELS", "Adapter", "Model", "ModelCallError", "Reply", "Request", "get_model",
                              "register_model"),
    "synth.evaluate.ocr": ("ocr_available",),
    "synth.evaluate.report": ("compare_models", "render_report", "write_report"),
    "synth.evaluate.runner": ("Counts", "EvalResult", "evaluate_run", "load_items", "plan", "result_key"),
    "synth.evaluate.scoring": ("score", "summarize"),
    "synth.evaluate.tasks": ("TASKS", "Task", "get_task", "register_task"),
    "synth.evaluate.tasks.localize": ("processbench_f1",),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "MODELS", "TASKS", "Adapter", "Counts", "EvalResult", "Metric", "Model", "ModelCallError", "Reply", "Request",
    "ResponseCache", "Scored", "Task", "accuracy", "classification", "classification_metrics", "compare_models",
    "evaluate_run", "get_model", "get_task", "kappa", "load_items", "loose_accuracy", "ocr_available",
    "paired_deltas", "plan", "processbench_f1", "register_model", "register_task", "render_report",
    "request_key", "result_key", "score", "summarize", "worst_case", "write_report",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value   # the next read is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
