"""Worksheets for sentence chains: the copy pack leaves room to copy a chain of thought by hand."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from perturb.reasoning.base import clean_variant
from render.worksheet import MAX_COPY_LINES, _copy_lines, write_worksheets
from synth.chains import write_contents
from synth.generators import get_family
from synth.records import Item


def _items(style: str) -> list[Item]:
    family = get_family("statistics.mean.bar_chart")
    problem = family.build(np.random.default_rng(3), difficulty="medium", question_type="free", problem_id="ws")
    variant = write_contents(problem, [(problem.id, clean_variant(problem))], style, 11).contents[0][1]
    return [Item(id=problem.id, base_id=problem.id, index=0, seed=11, problem=problem, variant=variant)]


def test_a_chain_of_thought_gets_more_copy_lines_than_its_worked_lines_and_the_pack_builds(tmp_path: Path) -> None:
    worked, cot = _items("worked")[0], _items("cot")[0]
    assert _copy_lines(worked) < _copy_lines(cot) <= MAX_COPY_LINES
    result = write_worksheets([cot], tmp_path, title="cot")
    assert result.files["copy"].stat().st_size > 0


def test_copy_lines_for_long_sentences_stop_at_what_one_page_holds() -> None:
    cot = _items("cot")[0]
    wordy = tuple(replace(step, text=step.text + " " + step.text * 3) for step in cot.variant.steps)
    assert _copy_lines(replace(cot, variant=replace(cot.variant, steps=wordy))) == MAX_COPY_LINES
