"""solve (MathReal): the problem's final answer from the question alone. Strict and loose (per-part) accuracy."""

from __future__ import annotations

import re
import unicodedata

from synth.evaluate.answers import MAX_ANSWER_CHARS, boxed, clean_answer, gold_answer, part_credit, split_parts
from synth.evaluate.metrics import accuracy, loose_accuracy
from synth.evaluate.tasks import Label, Task, register_task
from synth.evaluate.tasks._parsing import MAX_PARSE_CHARS, raw_lines
from synth.records import Item

_FINAL = re.compile(r"(?:final answer|the answer is|answer) ?[:=]? ?(.*)", re.IGNORECASE)


def parse_solution_answers(response: str) -> tuple[str, ...] | None:
    """MathReal extraction: every `\\boxed{}` answer; else the last `Final answer:` line; else None."""
    if not isinstance(response, str):
        return None
    tail = unicodedata.normalize("NFKC", response[-MAX_PARSE_CHARS:])
    parts = [clean_answer(b) for b in boxed(tail)]
    if not parts:
        for line in reversed(raw_lines(response)):
            m = _FINAL.match(line)
            if m and m.group(1):
                parts = split_parts(m.group(1))
                break
    parts = [p for p in parts if p and len(p) <= MAX_ANSWER_CHARS]
    return tuple(parts) or None


def _gold_answer(item: Item) -> str:
    """The answer as the question asks for it: with its unit when it asks for one (``180 min``), so an answer
    in another unit (``180 h``) is not correct (what ``error.answer_correct`` means for a shown solution); as
    written when it lists several values (``t = −2 or t = 1``)."""
    problem = item.problem
    return gold_answer(problem.answer_text, problem.answer_value, as_written=bool(problem.params.get("answer_unit")))


def _solve_credit(item: Item, pred: Label | None) -> float:
    if not pred:
        return 0.0
    return part_credit(list(pred), split_parts(_gold_answer(item)), form=item.problem.params.get("answer_form"))


register_task(Task(
    id="solve", summary="the final answer, from the question (strict and loose accuracy)",
    template="eval/solve.j2",
    applies=lambda item: bool(_gold_answer(item).strip()),
    needs="a gold answer (for your own images, give degrade --answer-column)",
    gold=_gold_answer,
    parse=parse_solution_answers,
    answer=lambda label: f"The answer is \\boxed{{{label}}}",
    credit=_solve_credit,
    metrics=(accuracy(), loose_accuracy()),
    shows_steps=False,
))
