"""Hostile solution text: a step that SymPy cannot settle quickly still gets a verdict on time (issue 16)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import sympy

from synth.evaluate import get_task, load_items, plan
from synth.evaluate.models import ModelCallError
from synth.evaluate.models._verifier import verify_untrusted
from synth.evaluate.models.ocr import OcrVerifier, checkable
from synth.evaluate.ocr import OcrLine
from synth.mathparse import parse_math, to_text
from synth.records import Step

x, y, z = sympy.symbols("x y z")
# tan(5x + 3y + 2z) against its expansion: equal, and SymPy's simplify ran for over 90 CPU s without
# deciding it (the verifier used to wait for it in the calling process).
HARD = sympy.tan(5 * x + 3 * y + 2 * z)
HARD_EXPANDED = sympy.expand_trig(HARD)


class ScriptedEngine:
    """An OCR engine that reads the given solution lines off any page."""

    name = "scripted"

    def __init__(self, steps: list[str]) -> None:
        self.steps = steps

    def read(self, path: Path) -> list[OcrLine]:
        rows = [OcrLine(f"{i}. {text}", (80, 60 + 26 * i, 900, 72 + 26 * i), 0.9)
                for i, text in enumerate(self.steps, 1)]
        return [OcrLine("Solution", (80, 60, 200, 72), 0.9), *rows]


def test_a_final_step_that_makes_simplify_slow_gets_a_verdict_within_the_bound(tiny_run: Path) -> None:
    task = get_task("detect")
    item = next(i for i in load_items(tiny_run, limit=1) if i.variant.is_correct)
    truth = parse_math(item.problem.answer_value)
    # The clean solution, then a last line equal to the answer that only simplify could prove so.
    final = f"{to_text(truth)} + {to_text(HARD)} - ({to_text(HARD_EXPANDED)})"
    assert parse_math(final) != truth  # SymPy does not settle it on construction
    steps = [step.text for step in item.variant.steps] + [final]
    request = next(r for r in plan(tiny_run, task, [item], input_mode="image") if r.run_index == 0)
    model = OcrVerifier(ScriptedEngine(steps), "ocr-verifier", {"engine": "scripted"})
    model.prepare(task, [item])

    start = time.monotonic()
    answer = asyncio.run(model.respond(request))
    assert time.monotonic() - start < 10.0  # the answer's budget is 2 CPU s (4.5 s wall at worst)
    assert answer == task.answer("incorrect")  # undecided counts as not shown to be right



def test_a_step_whose_expansion_would_never_end_is_a_stored_failure_within_the_bound(tiny_run: Path) -> None:
    # (x+y+z+w)^1000 parses (its exponent is within the parser's limits) but expanding it, as the verifier's
    # value comparison does, does not end in any useful time: the OCR verifier judges a reading in the bounded
    # worker, and what it cannot judge in time is a failure (the runner stores it with this reason).
    item = next(i for i in load_items(tiny_run, limit=1) if i.variant.is_correct)
    steps = [*item.variant.steps[:1], Step(index=2, rule="ocr", value=checkable("(x+y+z+w)^1000"),
                                             text="(x+y+z+w)^1000", latex="(x+y+z+w)^1000")]
    start = time.monotonic()
    with pytest.raises(ModelCallError, match="could not judge the steps within 2 CPU s"):
        verify_untrusted(item.problem, steps, cpu_s=2.0)
    assert time.monotonic() - start < 20.0  # 2 CPU s budget, 4.5 s wall backstop, plus a fresh worker's start
