"""correct (FERMAT EC): the corrected final answer, or NA when there is no error. Strict and loose accuracy."""

from __future__ import annotations

import re

from synth.evaluate.answers import (
    MAX_ANSWER_CHARS,
    answers_match,
    boxed,
    clean_answer,
    gold_answer,
    wrong_only_as_asked,
)
from synth.evaluate.metrics import accuracy, loose_accuracy
from synth.evaluate.tasks import Label, Task, register_task, shows_solution
from synth.evaluate.tasks._parsing import raw_lines
from synth.records import Item

NA = "NA"
_NA_WORDS = {"na", "n/a", "none", "no error", "no errors", "not applicable"}
_CORRECTED = re.compile(r"corrected (?:final )?answer(?: latex)? ?[:=] ?(.*)", re.IGNORECASE)


def _answer_value(text: str) -> str | None:
    inner = boxed(text)
    value = clean_answer(inner[-1] if inner else text)
    if not value or len(value) > MAX_ANSWER_CHARS:
        return None
    return NA if value.casefold().strip(" .") in _NA_WORDS else value


def parse_corrected(response: str) -> str | None:
    """The corrected final answer, ``NA`` when the model says there is no error, or None.

    >>> parse_corrected("Step 2 drops a sign.\\nCorrected Answer: $x = -5$")
    'x = -5'
    """
    for line in reversed(raw_lines(response)):
        m = _CORRECTED.search(line)
        if m:
            return _answer_value(m.group(1))
    return None


def _gold_answer(item: Item) -> str:
    """The corrected answer: the number, or the answer as the question asks for it (``180 min``) when the
    error left the number right and the unit or form wrong (``error.answer_correct`` false, ``answer_changed``
    false), so keeping the shown ``180 h`` is no correction."""
    err = item.variant.error
    unit_or_form = err is not None and wrong_only_as_asked(err.answer_correct, err.answer_changed)
    return gold_answer(item.problem.answer_text, item.problem.answer_value, as_written=unit_or_form)


def _correct_credit(item: Item, pred: Label | None) -> float:
    if pred is None:
        return 0.0
    truth, form = _gold_answer(item), item.problem.params.get("answer_form")
    if item.variant.is_correct:
        # FERMAT's judge: NA, or an unchanged (still correct) answer, both count.
        return float(pred == NA or answers_match(str(pred), truth, form=form))
    return float(pred != NA and answers_match(str(pred), truth, form=form))


register_task(Task(
    id="correct", summary="the corrected final answer, or NA (answer equivalence)",
    applies=shows_solution, needs="a shown worked solution (a `degrade` output of your own images has none)",
    template="eval/correct.j2",
    gold=lambda item: NA if item.variant.is_correct else _gold_answer(item),
    parse=parse_corrected,
    answer=lambda label: f"Corrected Answer: {label}",
    credit=_correct_credit,
    metrics=(accuracy(), loose_accuracy()),
))
