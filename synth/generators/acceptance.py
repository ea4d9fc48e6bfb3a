"""The acceptance bar every registered family must clear, measured per family and difficulty.

A family passes when, over many seeds: every clean solution verifies; every shown step parses
back to its value; problems do not repeat (by canonical parameters); harder levels are
measurably harder (more steps or bigger numbers); figure families draw a figure and every
figure-sourced given names an element of it; offered mcq/fill questions are well formed.

    mathstress check-families [--seeds 30] [--family ID ...]
"""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.generators import get_family
from synth.generators.base import BLANK, CHOICE_LETTERS, DIFFICULTIES, QUESTION_KEYS, Family
from synth.records import Problem
from synth.verification import parse_step, same_value, verify

_DIGIT = re.compile(r"\d")
_NUMERIC = re.compile(r"[-−]?\d+(\.\d+)?(/\d+)?")


@dataclass(frozen=True)
class LevelStats:
    """What one difficulty level of one family looked like over ``n`` seeds."""

    difficulty: str
    n: int
    mean_steps: float
    min_steps: int
    max_steps: int
    mean_magnitude: float
    duplicates: int


@dataclass(frozen=True)
class FamilyReport:
    family: str
    levels: tuple[LevelStats, ...]
    failures: tuple[str, ...]
    seconds: float

    @property
    def graded(self) -> bool:
        """Hard is measurably harder than easy: more steps on average, or bigger numbers."""
        by = {lv.difficulty: lv for lv in self.levels}
        easy, hard = by["easy"], by["hard"]
        return hard.mean_steps > easy.mean_steps or hard.mean_magnitude > easy.mean_magnitude

    @property
    def duplicate_rate(self) -> float:
        return sum(lv.duplicates for lv in self.levels) / max(1, sum(lv.n for lv in self.levels))


def canonical_params(params: dict[str, Any]) -> str:
    """The problem's identity: its parameters without question-type keys or the variable's letter.

    ``3x + 1 = 7`` and ``3y + 1 = 7`` are the same problem for a duplicate count.
    """
    kept = {k: v for k, v in params.items() if k not in QUESTION_KEYS and k != "var"}
    return json.dumps(kept, sort_keys=True, ensure_ascii=False)


def magnitude(params: dict[str, Any]) -> int:
    """How much number a problem carries: the digits of every number in its parameters."""
    total = 0

    def walk(v: Any) -> None:
        nonlocal total
        if isinstance(v, bool):
            return
        if isinstance(v, (int, float)):
            total += len(_DIGIT.findall(str(v)))
        elif isinstance(v, str) and _NUMERIC.fullmatch(v):  # decimals kept as written: "2.40"
            total += len(_DIGIT.findall(v))
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk({k: v for k, v in params.items() if k not in QUESTION_KEYS})
    return total


def problem_failures(family: Family, problem: Problem) -> list[str]:
    """Everything wrong with one clean problem (empty when it passes)."""
    out = []
    verdict = verify(problem, problem.steps, family=family)
    if not verdict.fully_correct:
        out.append(f"does not verify (first error step {verdict.first_error_step}, "
                   f"answer correct {verdict.answer_correct}): {[s.text for s in problem.steps]}")
    for step in problem.steps:
        try:
            ok = same_value(parse_step(step.text), parse_step(step.value))
        except Exception as exc:  # a parse error is a finding here, not a crash
            ok, step_text = False, f"{step.text!r} ({exc})"
        else:
            step_text = repr(step.text)
        if not ok:
            out.append(f"step {step.index} text {step_text} does not read back as its value {step.value!r}")
    if family.figure_kind is not None:
        out.extend(_figure_failures(family, problem))
    return out


def _figure_failures(family: Family, problem: Problem) -> list[str]:
    fig = problem.figure
    if fig is None:
        return [f"figure_kind is {family.figure_kind!r} but figure() returned None"]
    out = []
    if fig.kind != family.figure_kind:
        out.append(f"figure kind {fig.kind!r} differs from the family's figure_kind {family.figure_kind!r}")
    ids = {e.get("id") for e in fig.spec.get("elements", [])}
    for g in problem.givens:
        if g.source == "text":
            continue
        if not g.source.startswith("figure:") or g.source[len("figure:"):] not in ids:
            out.append(f"given {g.name!r} has source {g.source!r}, not 'text' or 'figure:<an element id>'")
    return out


def question_failures(family: Family, rng_seed: int, difficulty: str) -> list[str]:
    """mcq and fill versions of one problem, for the question types the family offers."""
    out = []
    if "mcq" in family.question_types:
        p = family.build(np.random.default_rng(rng_seed), difficulty=difficulty, question_type="mcq", problem_id="q")
        choices = p.choices or ()
        letter = p.params.get("answer_choice")
        if len(choices) != len(CHOICE_LETTERS) or len(set(choices)) != len(choices):
            out.append(f"mcq choices are not {len(CHOICE_LETTERS)} distinct options: {choices}")
        elif letter not in CHOICE_LETTERS or choices[CHOICE_LETTERS.index(letter)] != p.answer_text:
            out.append(f"mcq answer_choice {letter!r} does not point at the answer {p.answer_text!r}: {choices}")
    if "fill" in family.question_types:
        p = family.build(np.random.default_rng(rng_seed), difficulty=difficulty, question_type="fill", problem_id="q")
        if BLANK not in p.question_text:
            out.append(f"fill question has no blank: {p.question_text!r}")
    return out


def check_family(family_id: str, seeds: int = 30, *, question_seeds: int = 10) -> FamilyReport:
    """Build ``seeds`` problems per difficulty (seeds 0..n-1) and collect every failure."""
    family = get_family(family_id)
    start = time.perf_counter()
    failures: list[str] = []
    levels = []
    for difficulty in DIFFICULTIES:
        steps, sizes, seen = [], [], set()
        duplicates = 0
        for seed in range(seeds):
            try:
                problem = family.build(np.random.default_rng(seed), difficulty=difficulty, question_type="free",
                                       problem_id=f"a{seed}")
            except Exception as exc:  # report, keep measuring the other seeds
                failures.append(f"{difficulty} seed {seed}: build raised {type(exc).__name__}: {exc}")
                continue
            failures.extend(f"{difficulty} seed {seed}: {f}" for f in problem_failures(family, problem))
            key = canonical_params(problem.params)
            duplicates += key in seen
            seen.add(key)
            steps.append(len(problem.steps))
            sizes.append(magnitude(problem.params))
        for seed in range(min(seeds, question_seeds)):
            try:
                failures.extend(f"{difficulty} seed {seed}: {f}" for f in question_failures(family, seed, difficulty))
            except Exception as exc:
                failures.append(f"{difficulty} seed {seed}: question build raised {type(exc).__name__}: {exc}")
        levels.append(LevelStats(difficulty, len(steps), statistics.fmean(steps) if steps else 0.0,
                                 min(steps, default=0), max(steps, default=0),
                                 statistics.fmean(sizes) if sizes else 0.0, duplicates))
    return FamilyReport(family_id, tuple(levels), tuple(failures), time.perf_counter() - start)
