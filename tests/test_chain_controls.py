"""Superficial controls in worded chains: a control differs from its clean twin only where the control does."""

from __future__ import annotations

import re
from functools import cache

import pytest

from perturb.reasoning import inject
from perturb.reasoning.base import clean_variant
from synth.chains import write_contents
from synth.generators import get_family
from synth.records import Problem, Variant
from synth.seeding import stage_rng
from synth.verifier import DECLARE_RULE, REMARK_RULE

WORDED = ("student", "cot")


@cache
def _problem(family_id: str, seed: int = 3) -> Problem:
    return get_family(family_id).build(stage_rng(seed, "test_chain_controls"), difficulty="medium",
                                       question_type="free", problem_id=f"{family_id}-{seed}")


def _control(problem: Problem, subtype: str, want: dict[str, int] | None = None) -> Variant:
    for attempt in range(60):
        variant = inject(problem, subtype, stage_rng(attempt, "test_chain_controls_inject"))
        if variant is not None and all(variant.control.edit.get(k) == v for k, v in (want or {}).items()):
            return variant
    raise AssertionError(f"{subtype} did not apply to {problem.id} as wanted")


def _styled(problem: Problem, variant: Variant, style: str, seed: int) -> tuple[Variant, Variant]:
    contents = [(problem.id, clean_variant(problem)), (f"{problem.id}-c0", variant)]
    styled = write_contents(problem, contents, style, seed, concepts_in_words=True)
    assert styled.style == style and not styled.rejected, styled.rejected
    (_, twin), (_, control) = styled.contents
    return twin, control


@pytest.mark.parametrize("style", WORDED)
@pytest.mark.parametrize("subtype", ["irrelevant_info", "variable_rename"])
def test_a_control_that_adds_a_line_keeps_the_twins_words_on_every_other_line(style: str, subtype: str) -> None:
    problem = _problem("algebra.linear.two_step")
    variant = _control(problem, subtype, {"inserted_step": 1} if subtype == "irrelevant_info" else None)
    for seed in range(6):
        twin, control = _styled(problem, variant, style, seed)
        added = next(j for j, s in enumerate(control.steps) if s.rule in (REMARK_RULE, DECLARE_RULE))
        rest = [s.text for j, s in enumerate(control.steps) if j != added]
        letter = problem.params["var"]
        if subtype == "variable_rename":  # the rest is the twin's chain in the declared letter
            new = control.control.edit["to"]
            theirs = [re.sub(rf"(?<![A-Za-z]){letter}(?![A-Za-z])", new, s.text) for s in twin.steps]
            assert len(rest) == len(theirs)
            assert [t.split(". ")[-1] for t in rest] == [t.split(". ")[-1] for t in theirs]
        else:
            theirs = [s.text for s in twin.steps]  # the remark may open the chain: the question's lead is then its
            assert rest[1:] == theirs[1:] and theirs[0].endswith(rest[0])


@pytest.mark.parametrize("style", WORDED)
def test_a_side_calculation_is_written_like_the_chains_other_lines(style: str) -> None:
    problem = _problem("algebra.linear.two_step")
    variant = _control(problem, "irrelevant_info")
    twin, control = _styled(problem, variant, style, 2)
    remark = next(s for s in control.steps if s.rule == REMARK_RULE)
    assert remark.text != remark.math and remark.text[slice(*remark.spans[0])] == remark.math
    assert not remark.text.startswith("(")


@pytest.mark.parametrize("style", WORDED)
def test_a_declared_rename_says_what_clean_chains_say_when_they_name_the_unknown(style: str) -> None:
    problem = _problem("algebra.linear.two_step")
    variant = _control(problem, "variable_rename")
    old, new = variant.control.edit["from"], variant.control.edit["to"]
    twin, control = _styled(problem, variant, style, 4)
    declaration = next(s for s in control.steps if s.rule == DECLARE_RULE)
    assert declaration.math == f"{new} = {old}" and declaration.text[slice(*declaration.spans[0])] == new
    sentence = declaration.text.split(". ")[-1]
    # the clean twin names its own letter in the same sentence, before its first line using it
    assert sentence.replace(f" {new} ", f" {old} ").replace(f" {new}.", f" {old}.") in twin.steps[0].text
    # and clean chains of bases without a rename name their unknown in some bases, not in others
    said = []
    for seed in range(12):
        contents = [(problem.id, clean_variant(problem))]
        (_, clean), = write_contents(problem, contents, style, seed, concepts_in_words=True).contents
        said.append(f" {old} " in clean.steps[0].text.split(":")[0] or f" {old}." in clean.steps[0].text)
    assert any(said) and not all(said)


def test_a_rename_takes_a_letter_its_kind_of_family_uses() -> None:
    letters = set()
    for seed in range(4):
        problem = _problem("calculus.derivative.power_rule", seed)
        for attempt in range(6):
            variant = inject(problem, "variable_rename", stage_rng(attempt, "test_chain_controls_letters"))
            if variant is not None:
                letters.add(variant.control.edit["to"])
    assert letters and letters <= {"x", "t", "u"}


def test_two_conceptual_errors_at_one_line_in_other_frames_add_no_sentence_the_twin_lacks() -> None:
    from synth.chains._base import said_words
    from synth.generators._method_words import method_words

    problem = _problem("solid.cone.volume")
    variant = next(v for a in range(20) if (v := inject(problem, "formula_misuse", stage_rng(a, "t_concepts")))
                   and method_words(problem.family, v.error.edit["rule"]) is not None)
    line, own = said_words(problem.family, variant.error, {})
    other = method_words(problem.family, "slant_as_height")
    assert own.frame != other.frame
    # another error of the base says its words at that line in another frame: the twin says those, so this
    # error says none of its own (no sentence the twin lacks) ...
    assert said_words(problem.family, variant.error, {line: other}) is None
    # ... while one in the same frame still says its method in the twin's sentence
    assert said_words(problem.family, variant.error, {line: own}) == (line, own)
