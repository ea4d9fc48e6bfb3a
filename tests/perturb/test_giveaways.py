"""Error variants read like a pupil's work in the family: no form the family never writes, no glued text,
no line written twice, no unevaluated or non-real ending (issue 18, "variants without giveaway cues").

The fast tests pin each pattern on the families where it was seen; the slow test scans a seeded sweep of
every family for all of them:

    .venv/bin/pytest -q -m slow tests/perturb/test_giveaways.py
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from perturb.reasoning import inject
from perturb.reasoning.conventions import answer_form, family_forms, unlike_family, without_repeats
from perturb.reasoning.notational import MisplacedParentheses
from perturb.reasoning.sweep import sweep
from synth.generators import REGISTRY as FAMILIES
from synth.generators import get_family
from synth.generators.base import StepDraft
from synth.presentation import read_line
from synth.records import Problem, Step, Variant

# The injectors of this part of the issue (computational, conceptual, notational): their variants replay or
# rewrite the family's own working, so they must keep its conventions.
OWN = ("final_number", "intermediate_propagated", "intermediate_corrected", "sign_error", "copy_error",
       "unit_conversion", "formula_misuse", "theorem_misapplication", "incorrect_fact", "invalid_assumption",
       "invalid_inference", "misinterpret_question", "operator_swap", "misplaced_parentheses", "symbol_error")
_GLUED = re.compile(r"(?<![A-Za-z])([a-z])\1(?![A-Za-z])|[\da-z)]−\d")


def _problems(family_id: str, n: int, offset: int = 0):
    family = get_family(family_id)
    for seed in range(offset, offset + n):
        yield family.build(np.random.default_rng(seed), difficulty=("easy", "medium", "hard")[seed % 3],
                           question_type="free", problem_id=f"p{seed}")


def giveaways(problem: Problem, variant: Variant) -> list[str]:
    """What makes ``variant`` look unlike the family's work (empty when nothing does)."""
    label = variant.error
    assert label is not None
    last, clean = variant.steps[-1].text, problem.steps[-1].text
    found = []
    if label.subtype != "sign_error" and unlike_family(problem.family, last, clean_text=clean):  # sign: the error
        found.append(f"ends in a form the family never writes: {last!r} (clean {clean!r})")
    if "non_real" in answer_form(last):
        found.append(f"non-real ending {last!r}")
    if any(a.text == b.text for a, b in zip(variant.steps, variant.steps[1:])):
        found.append("a line written twice in a row")
    if label.subtype == "misplaced_parentheses":
        glued = [s.text for s in variant.steps if _GLUED.search(read_line(s.text).math)]
        if glued:
            found.append(f"glued text {glued}")
    return found


def test_a_whole_number_story_never_ends_in_a_fraction() -> None:
    """`1352/3 sweets`: the ratio family's answers are whole, so a slip that would end in a fraction is redrawn."""
    assert "fraction" not in family_forms("arithmetic.ratio.share")
    kept = 0
    for problem in _problems("arithmetic.ratio.share", 12):
        for subtype in ("intermediate_propagated", "copy_error", "formula_misuse"):
            v = inject(problem, subtype, np.random.default_rng(int(problem.id[1:])))
            if v is None:
                continue
            kept += 1
            assert "/" not in read_line(v.steps[-1].text).math, [s.text for s in v.steps]
    assert kept >= 12


def test_a_solved_equation_may_end_in_a_fraction() -> None:
    """A slip that makes the numbers uneven leaves `y ≤ −1/4`: how a pupil writes it, so it is no cue."""
    assert not unlike_family("algebra.inequalities.linear", "y ≤ −1/4", clean_text="y ≤ 0")
    assert unlike_family("arithmetic.ratio.share", "Ava's share: 1352/3", clean_text="Ava's share: 450")


def test_answer_forms_name_what_the_ending_shows() -> None:
    assert answer_form("√(−576) cm") >= {"non_real", "root"}
    assert answer_form("1/3 × π × 150^2 × √570400 ft³") >= {"operation", "power", "root", "pi"}
    assert answer_form("x = −3/4") == {"fraction", "negative"}
    assert answer_form("P(A) = 5/3") == {"fraction", "improper"}
    assert unlike_family("probability.simple", "P(red) = 5/3", clean_text="P(red) = 2/3")
    assert answer_form("Sum: 1538") == frozenset()


def test_a_mal_rule_never_writes_the_same_line_twice() -> None:
    """The chain rule without the inner derivative made two lines read alike; the pupil writes it once."""
    kept = 0
    for problem in _problems("calculus.derivative.chain_rule", 12):
        v = inject(problem, "theorem_misapplication", np.random.default_rng(int(problem.id[1:])))
        if v is None:
            continue
        kept += 1
        texts = [s.text for s in v.steps]
        assert all(a != b for a, b in zip(texts, texts[1:])), texts
    assert kept >= 6


def test_without_repeats_keeps_the_tagged_mal_rule_line() -> None:
    one = StepDraft(rule="power", value=0, text="4(x + 1)^3", latex="")
    mal = StepDraft(rule="mal:inner_derivative_forgotten", value=0, text="4(x + 1)^3", latex="")
    assert [d.rule for d in without_repeats([one, mal])] == ["mal:inner_derivative_forgotten"]


@pytest.mark.parametrize(("text", "glued"), [
    ("x(x + 6) = 0", "xx + 6"),
    ("6(−4m − 1)", "6−4m − 1"),
    ("2^(3 − 1) × 5", "2^3 − 1 × 5"),
    ("5 − (−4 + 2)", "5 − −4 + 2"),
])
def test_misplaced_parentheses_never_glues_text(text: str, glued: str) -> None:
    latex = (text.replace("(", r"\left(").replace(")", r"\right)").replace("−", "-").replace("×", r"\times"))
    step = Step(index=1, rule="r", value=text, text=text, latex=latex)
    for seed in range(5):
        found = MisplacedParentheses().edit(step, np.random.default_rng(seed))
        assert found is None or found[0] != glued


def test_misplaced_parentheses_still_drops_brackets_between_operators() -> None:
    text = "2 × (3 + 4)"
    step = Step(index=1, rule="r", value=text, text=text, latex=r"2 \times \left(3 + 4\right)")
    found = MisplacedParentheses().edit(step, np.random.default_rng(0))
    assert found is not None and found[0] == "2 × 3 + 4" and found[1] == r"2 \times 3 + 4"


@pytest.mark.slow
def test_a_sweep_of_every_family_shows_no_giveaway() -> None:
    result = sweep({f: 1.0 for f in sorted(FAMILIES)}, {s: 1.0 for s in OWN}, 600, 18018, keep_variants=True)
    problems = [(p.family, v.error.subtype, msg) for p, v in result.variants for msg in giveaways(p, v)]
    assert sum(result.kept.values()) >= 500
    assert problems == []
