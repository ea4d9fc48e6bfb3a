"""detect (ErrorRadar / FERMAT ED): is the shown solution correct? Balanced accuracy, error-class P/R/F1."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from synth.evaluate.metrics import Metric, Scored, classification, precision_recall_f1, predictions
from synth.evaluate.tasks import Task, register_task, shows_solution
from synth.evaluate.tasks._parsing import last_match, normalized_lines

LABELS = ("correct", "incorrect")
_VERDICTS = {"yes": "correct", "correct": "correct", "true": "correct", "right": "correct",
             "no": "incorrect", "incorrect": "incorrect", "false": "incorrect", "wrong": "incorrect",
             "not correct": "incorrect"}
_VERDICT_WORDS = "not correct|incorrect|correct|yes|no|true|false|right|wrong"
_DETECT_KEYS = "correct|final answer|answer|verdict|judgement|judgment|conclusion"
_DETECT_KEYED = re.compile(rf"(?<![a-z])(?:{_DETECT_KEYS}) ?[:=] ?({_VERDICT_WORDS})(?![a-z])")
_DETECT_BARE = re.compile(rf"(?:(?:the )?(?:student s |students )?(?:solution|answer) is )?({_VERDICT_WORDS})")


def parse_detect(response: str) -> str | None:
    """'correct', 'incorrect', or None.

    >>> parse_detect("Step 2 is wrong.\\nCorrect: **No**")
    'incorrect'
    """
    value = last_match(normalized_lines(response), _DETECT_KEYED, _DETECT_BARE)
    return None if value is None else _VERDICTS[value]


def error_detection() -> Metric:
    """Precision, recall and F1 of the positive class: "incorrect" (an error is present)."""
    def metric(scored: Sequence[Scored]) -> dict[str, Any]:
        gold, pred = predictions(scored)
        p, r, f, _ = precision_recall_f1([str(g) for g in gold], [str(x) for x in pred], ["incorrect"])
        return {"error_precision": float(p[0]), "error_recall": float(r[0]), "error_f1": float(f[0])}
    return metric


register_task(Task(
    id="detect", summary="is the shown solution correct? (balanced accuracy, error F1)", applies=shows_solution,
    needs="a shown worked solution (a `degrade` output of your own images has none)",
    template="eval/detect.j2",
    gold=lambda item: "correct" if item.variant.is_correct else "incorrect",
    parse=parse_detect,
    answer=lambda label: f"Correct: {'yes' if label == 'correct' else 'no'}",
    labels=LABELS,
    choices=lambda item: LABELS,
    metrics=(classification(LABELS), error_detection()),
    headline="balanced_accuracy",
))
