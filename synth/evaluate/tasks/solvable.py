"""solvable (Seeing Is Solving): answer, or refuse when the input lacks what the problem needs.

Scored on the answer; reported as refusal, guess-wrong and lucky-correct rates, overall and per image role.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from synth.evaluate.answers import MAX_ANSWER_CHARS, answers_match, clean_answer, last_json_object
from synth.evaluate.metrics import Metric, Scored, accuracy
from synth.evaluate.tasks import Label, Task, register_task
from synth.evaluate.tasks._parsing import MAX_PARSE_CHARS
from synth.manifest import hidden_givens
from synth.records import Item

REFUSED = "<refused>"


def parse_solvable(response: str) -> str | None:
    """Seeing Is Solving: ``<refused>`` when ``isSolvable`` is false, else ``answer.value``; None
    when the response holds no such JSON. Free text is never read as a refusal."""
    if not isinstance(response, str):
        return None
    data = last_json_object(response[-MAX_PARSE_CHARS:])
    if data is None:
        return None
    solution = data.get("solution", data)
    if not isinstance(solution, dict) or not isinstance(solution.get("isSolvable"), bool):
        return None
    if not solution["isSolvable"]:
        return REFUSED
    answer = solution.get("answer")
    value = answer.get("value") if isinstance(answer, dict) else answer
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = clean_answer(str(value))
    return text if text and len(text) <= MAX_ANSWER_CHARS else None


def _solvable_gold(item: Item) -> str:
    """The answer, or a refusal when the photo's marks hid a given (the row's ``solvable: false``)."""
    return REFUSED if hidden_givens(item.degradations) else item.problem.answer_value


def _solvable_credit(item: Item, pred: Label | None) -> float:
    if _solvable_gold(item) == REFUSED:
        return float(pred == REFUSED)
    return float(pred is not None and pred != REFUSED and answers_match(str(pred), item.problem.answer_value))


def _solvable_answer(label: Label) -> str:
    if label == REFUSED:
        body = {"isSolvable": False, "required_information": ["the figure"], "steps": [], "answer": None}
    else:
        body = {"isSolvable": True, "required_information": [], "steps": [], "answer": {"value": str(label),
                                                                                         "units": ""}}
    return json.dumps({"solution": body})


def solvability_rates(scored: Sequence[Scored]) -> dict[str, Any]:
    """Seeing Is Solving: refusal, guess-wrong and lucky-correct rates (they sum to 1 when all parse)."""
    n = len(scored)
    if not n:
        return {"n": 0}
    refused = sum(s.pred == REFUSED for s in scored)
    right = sum(s.correct and s.pred != REFUSED for s in scored)  # a refusal of an unsolvable photo is no guess
    unparsed = sum(s.pred is None for s in scored)
    return {"n": n, "refusal_rate": refused / n, "guess_wrong_rate": (n - refused - right - unparsed) / n,
            "lucky_correct_rate": right / n, "unparsed_rate": unparsed / n}


def solvability() -> Metric:
    """``solvability_rates`` over every answer, and under ``by_image_role`` per image role."""
    def metric(scored: Sequence[Scored]) -> dict[str, Any]:
        roles = sorted({s.image_role for s in scored})
        return solvability_rates(scored) | {
            "by_image_role": {role: solvability_rates([s for s in scored if s.image_role == role]) for role in roles}}
    return metric


register_task(Task(
    id="solvable", summary="answer or refuse, with and without the image (refusal / guess-wrong / lucky rates)",
    template="eval/solvable.j2",
    applies=lambda item: bool(_solvable_gold(item).strip()),
    needs="a gold answer (for your own images, give degrade --answer-column)",
    gold=_solvable_gold,
    parse=parse_solvable,
    answer=_solvable_answer,
    credit=_solvable_credit,
    metrics=(accuracy(), solvability()),
    shows_steps=False,
))
