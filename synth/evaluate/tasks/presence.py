"""presence (MMErroR EPD): "no error", or the error's type; credit needs presence and the right type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synth.evaluate.metrics import UNPARSED, Metric, Scored, classification, classification_metrics, predictions
from synth.evaluate.tasks import Task, register_task, shows_solution
from synth.evaluate.tasks._parsing import label_parser
from synth.evaluate.tasks.categorize_mmerror import mmerror_of, type_phrases
from synth.vocab import MMERROR, MMERROR_LETTERS, NO_ERROR_LABEL

LABELS = (NO_ERROR_LABEL, *MMERROR_LETTERS)
_TYPES = type_phrases()
_PHRASES = {"no error": NO_ERROR_LABEL, "no error present": NO_ERROR_LABEL} | {
    f"error present{sep}{p}": label for p, label in _TYPES.items() for sep in (" ", ", ", " - ", ": ")
} | _TYPES


def presence_metrics(gold: Sequence[Any], pred: Sequence[Any]) -> dict[str, Any]:
    """MMErroR EPD read as binary presence (any type counts as "error"), so false alarms are visible."""
    g = ["error" if str(x) != NO_ERROR_LABEL else "no_error" for x in gold]
    p = ["error" if str(x) not in (NO_ERROR_LABEL, UNPARSED) else str(x) for x in pred]
    return classification_metrics(g, p, ["no_error", "error"])


def presence() -> Metric:
    """``presence_metrics`` under ``presence``."""
    def metric(scored: Sequence[Scored]) -> dict[str, Any]:
        return {"presence": presence_metrics(*predictions(scored))}
    return metric


register_task(Task(
    id="presence", summary="MMErroR EPD: no error, or the error's type A-D (macro F1, presence accuracy)",
    template="eval/presence.j2",
    applies=lambda item: shows_solution(item) and (item.variant.error is None or mmerror_of(item) is not None),
    needs="a shown worked solution, correct or with an error MMErroR types",
    gold=lambda item: NO_ERROR_LABEL if item.variant.error is None else mmerror_of(item),
    parse=label_parser("answer|error type", _PHRASES),
    answer=lambda label: "Answer: No Error" if label == NO_ERROR_LABEL else f"Answer: Error Present, {label}",
    labels=LABELS,
    choices=lambda item: LABELS,
    metrics=(classification(LABELS, per_class=True), presence()),
    context={"mmerror": MMERROR},
    headline="macro_f1",
))
