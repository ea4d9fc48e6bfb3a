"""Evaluation of models on run folders: tasks, model adapters, a cached runner, metrics and reports.

Layout (each module imports only the ones listed before it; nothing here imports this package):

- ``answers``, ``textdist``: final-answer equivalence and character error rate (pure functions);
- ``metrics``: the ``Scored`` record, metric factories tasks share, paired deltas, bootstrap, kappa;
- ``tasks/``: one module per task, registered in ``TASKS`` (the plugin contract is in its docstring);
- ``scoring``: a stored response -> ``Scored``; a task's scores -> its summary;
- ``cache``: the response store (``cache.sqlite``), which is also the resume point;
- ``ocr``: reading a page with an OCR engine (optional dependencies, imported when first used);
- ``models/``: one module per adapter family, registered in ``MODELS`` (contract in its docstring);
- ``results``: responses/<task>.jsonl and results.json from the stored responses;
- ``runner``: plan the calls, make them concurrently cache first, write results;
- ``plots``, ``report``: report.md and report.html from results.json, kappa between evaluations.

Everything below is the public surface; ``evaluate_run(run_dir, get_model("random"), [get_task("detect")])``
is what ``mathstress eval`` does.
"""

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
from synth.evaluate.models import (
    MODELS,
    Adapter,
    Model,
    ModelCallError,
    Reply,
    Request,
    get_model,
    register_model,
)
from synth.evaluate.ocr import ocr_available
from synth.evaluate.report import compare_models, render_report, write_report
from synth.evaluate.runner import Counts, EvalResult, evaluate_run, load_items, plan, result_key
from synth.evaluate.scoring import score, summarize
from synth.evaluate.tasks import TASKS, Task, get_task, register_task
from synth.evaluate.tasks.localize import processbench_f1

__all__ = [
    "MODELS", "TASKS", "Adapter", "Counts", "EvalResult", "Metric", "Model", "ModelCallError", "Reply", "Request",
    "ResponseCache", "Scored", "Task", "accuracy", "classification", "classification_metrics", "compare_models",
    "evaluate_run", "get_model", "get_task", "kappa", "load_items", "loose_accuracy", "ocr_available",
    "paired_deltas", "plan", "processbench_f1", "register_model", "register_task", "render_report",
    "request_key", "result_key", "score", "summarize", "worst_case", "write_report",
]
