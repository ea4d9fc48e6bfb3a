"""Evaluation of models on run folders: tasks, model adapters, cached runner, metrics and reports."""

from synth.evaluate import ocr as _ocr  # noqa: F401  (registers ocr-verifier and tesseract-verifier)
from synth.evaluate.cache import ResponseCache, request_key
from synth.evaluate.metrics import (
    Scored,
    classification_metrics,
    kappa,
    paired_deltas,
    processbench_f1,
    summarize,
    worst_case,
)
from synth.evaluate.models import MODELS, Model, ModelCallError, Reply, Request, get_model, register_model
from synth.evaluate.ocr import ocr_available
from synth.evaluate.report import compare_models, render_report, write_report
from synth.evaluate.runner import Counts, EvalResult, evaluate_run, load_items, plan, result_key
from synth.evaluate.tasks import TASKS, Task, get_task, register_task

__all__ = [
    "MODELS", "TASKS", "Counts", "EvalResult", "Model", "ModelCallError", "Reply", "Request", "ResponseCache",
    "Scored", "Task", "classification_metrics", "compare_models", "evaluate_run", "get_model", "get_task", "kappa",
    "load_items", "ocr_available", "paired_deltas", "plan", "processbench_f1", "register_model", "register_task",
    "render_report", "request_key", "result_key", "summarize", "worst_case", "write_report",
]
