"""Evaluation of models on run folders: tasks, model adapters, cached runner, metrics and reports."""

from synth.evaluate.cache import ResponseCache, request_key
from synth.evaluate.metrics import Scored, classification_metrics, paired_deltas, processbench_f1, summarize
from synth.evaluate.models import MODELS, Model, ModelCallError, Request, get_model, register_model
from synth.evaluate.report import render_report, write_report
from synth.evaluate.runner import Counts, EvalResult, evaluate_run, load_items, plan
from synth.evaluate.tasks import TASKS, Task, get_task, register_task

__all__ = [
    "MODELS", "TASKS", "Counts", "EvalResult", "Model", "ModelCallError", "Request", "ResponseCache", "Scored",
    "Task", "classification_metrics", "evaluate_run", "get_model", "get_task", "load_items", "paired_deltas",
    "plan", "processbench_f1", "register_model", "register_task", "render_report", "request_key", "summarize",
    "write_report",
]
