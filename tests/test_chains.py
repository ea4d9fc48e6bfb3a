"""Solution styles (synth.chains): worded chains whose every claim is still verified and whose labels stay proved."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

import jsonschema
import pytest

from perturb.reasoning import REGISTRY as INJECTORS
from perturb.reasoning import inject
from perturb.reasoning.base import clean_variant
from synth.chains import STYLES, bank, write_contents
from synth.chains._base import KINDS
from synth.config import validate_config
from synth.errors import ConfigError
from synth.exports.mmerror import error_reason
from synth.exports.processbench import processbench_record
from synth.generators import get_family
from synth.generators._method_words import method_words
from synth.manifest import from_row, schema, to_row
from synth.records import Problem, Step, Variant
from synth.seeding import stage_rng
from synth.stages import ShardStats, build_items
from synth.verification import READING_RULE, reading_holds
from synth.verifier import verify

WORDED = ("student", "cot")


@cache
def _problem(family_id: str, seed: int = 3, difficulty: str = "medium") -> Problem:
    return get_family(family_id).build(stage_rng(seed, "test_chains"), difficulty=difficulty, question_type="free",
                                       problem_id=f"{family_id}-{seed}")


def _variant(problem: Problem, subtype: str) -> Variant:
    for attempt in range(20):
        variant = inject(problem, subtype, stage_rng(attempt, "test_chains_inject"))
        if variant is not None:
            return variant
    raise AssertionError(f"{subtype} did not apply to {problem.id}")


def _styled(problem: Problem, variants: list[Variant], style: str, seed: int = 11, *,
            concepts_in_words: bool = False) -> list[Variant]:
    contents = [(problem.id, clean_variant(problem))] + [(f"{problem.id}-e{j}", v) for j, v in enumerate(variants)]
    styled = write_contents(problem, contents, style, seed, concepts_in_words=concepts_in_words)
    assert styled.style == style and not styled.rejected, styled.rejected
    return [v for _, v in styled.contents]


def _prose(step: Step) -> str:
    """The words of a step with its math fragments cut out."""
    out, at = [], 0
    for a, b in step.spans:
        out.append(step.text[at:a])
        at = b
    return "|".join([*out, step.text[at:]])


@pytest.mark.parametrize("style", WORDED)
def test_the_same_base_seed_writes_the_same_chain(style: str) -> None:
    problem = _problem("statistics.mean.bar_chart")
    first = _styled(problem, [], style, seed=5)[0]
    again = _styled(problem, [], style, seed=5)[0]
    assert first == again
    others = {tuple(s.text for s in _styled(problem, [], style, seed=s)[0].steps) for s in range(8)}
    assert len(others) > 1  # the seed chooses the phrasings


@pytest.mark.parametrize("style", WORDED)
def test_twin_and_error_variant_use_the_same_words_everywhere(style: str) -> None:
    problem = _problem("geometry.circle.area")
    twin, wrong = _styled(problem, [_variant(problem, "intermediate_propagated")], style)
    assert len(twin.steps) == len(wrong.steps)
    assert [_prose(s) for s in twin.steps] == [_prose(s) for s in wrong.steps]
    assert [s.math for s in twin.steps] != [s.math for s in wrong.steps]


@pytest.mark.parametrize("style", WORDED)
def test_a_conceptual_error_and_its_twin_both_say_their_method_in_the_same_slot(style: str) -> None:
    problem = _problem("geometry.circle.area")
    variant = _variant(problem, "formula_misuse")
    twin, wrong = _styled(problem, [variant], style, concepts_in_words=True)
    k = wrong.error.first_error_step
    words = method_words(problem.family, variant.error.edit["rule"])
    assert words.wrong in wrong.steps[k - 1].text and words.right in twin.steps[k - 1].text
    # the same phrasing around the method: only the method's words (and the math) differ
    assert _prose(wrong.steps[k - 1]).replace(words.wrong, "…") == _prose(twin.steps[k - 1]).replace(words.right, "…")
    # the label records the words said (the edit's textual part) beside the judge's explanation, which stays
    assert (wrong.error.edit["said"], wrong.error.edit["instead_of"]) == (words.wrong, words.right)
    assert wrong.error.explanation == variant.error.explanation
    said = {_prose(s) for s in twin.steps}
    assert [j for j, s in enumerate(wrong.steps, start=1) if _prose(s) not in said] == [k]


@pytest.mark.parametrize("style", WORDED)
def test_with_concepts_off_no_chain_says_a_method(style: str) -> None:
    problem = _problem("geometry.circle.area")
    variant = _variant(problem, "formula_misuse")
    twin, wrong = _styled(problem, [variant], style)
    said = {_prose(s) for s in twin.steps}
    assert all(_prose(s) in said for s in wrong.steps)
    words = method_words(problem.family, variant.error.edit["rule"])
    assert words.wrong not in " ".join(s.text for s in wrong.steps)
    assert "said" not in wrong.error.edit


def test_concepts_are_said_in_words_by_default() -> None:
    from synth.config import GenerateConfig

    families = {"geometry.circle.area": 1.0}
    assert GenerateConfig(families=families).concepts_in_words is True
    assert GenerateConfig(families=families, concepts_in_words=False).concepts_in_words is False


@pytest.mark.parametrize("style", WORDED)
def test_spans_point_at_the_claim_inside_the_words(style: str) -> None:
    problem = _problem("coordinate.slope.two_points")
    for variant in _styled(problem, [_variant(problem, "sign_error")], style):
        for step in variant.steps:
            assert step.spans and step.text != step.math
            fragments = [step.text[a:b] for a, b in step.spans]
            if step.rule == READING_RULE:
                assert all(f.replace("−", "-").split(" = ")[-1].strip("()").split(",")[0] in step.math
                           for f in fragments)
            else:
                assert fragments[-1] == step.math


def test_worked_lines_are_their_own_claim() -> None:
    problem = _problem("algebra.linear.two_step")
    (clean,) = _styled(problem, [], "worked")
    assert [s.text for s in clean.steps] == [s.text for s in problem.steps]
    assert all(s.math == s.text and s.spans == ((0, len(s.text)),) for s in clean.steps)


@pytest.mark.parametrize("style", WORDED)
@pytest.mark.parametrize("subtype", ["intermediate_propagated", "copy_error"])
def test_the_explanation_names_the_step_the_reader_sees(style: str, subtype: str) -> None:
    # Seed 6021023's errorradar_like-000001-e1: labelled step 4, explained as "Step 3 computes 18" (the worked
    # line's number; the student's chain opens with a reading step, so that line is its step 4).
    problem = _problem("geometry.circle.area")
    (wrong,) = _styled(problem, [_variant(problem, subtype)], style)[1:]
    named = [int(n) for n in re.findall(r"[Ss]tep (\d+)", wrong.error.explanation)]
    assert named and named[-1] == wrong.error.first_error_step
    edit = wrong.error.edit
    assert [wrong.error.first_error_step] == [edit["step"]]
    if subtype == "copy_error":  # "step k - 1 gets 108, but step k copies it as 180": both as the reader counts
        assert named == [edit["from_step"], edit["step"]] and edit["from_step"] < edit["step"]
    assert edit["step"] != edit["worked_step"]  # this chain numbers its steps otherwise than the worked lines


@pytest.mark.parametrize("style", WORDED)
def test_a_misread_is_first_wrong_at_the_reading_step(style: str) -> None:
    problem = _problem("statistics.mean.bar_chart")
    twin, wrong = _styled(problem, [_variant(problem, "misread_value")], style)
    first = wrong.steps[wrong.error.first_error_step - 1]
    assert first.rule == READING_RULE
    assert not reading_holds(problem, first.math)
    assert all(reading_holds(problem, s.math) for s in twin.steps if s.rule == READING_RULE)
    # the figure values the solver read are stated before any calculation
    assert wrong.error.first_error_step < next(j for j, s in enumerate(wrong.steps, 1) if s.rule != READING_RULE)


def _misread(family_id: str, subtype: str) -> tuple[Problem, Variant]:
    """A problem of the family this misread applies to, and one such variant (the first seed that has one)."""
    family = get_family(family_id)
    for seed in range(30):
        for difficulty in ("easy", "medium", "hard"):
            problem = _problem(family_id, seed=seed, difficulty=difficulty)
            if INJECTORS[subtype].applies(family, problem):
                return problem, _variant(problem, subtype)
    raise AssertionError(f"{subtype} applies to no {family_id} problem of seeds 0-29")


@pytest.mark.parametrize("style", WORDED)
@pytest.mark.parametrize(("family_id", "subtype"), [
    ("coordinate.slope.two_points", "miscount"),  # the run or rise counted in squares: no given states it
    ("probability.table.two_way", "misread_scale"),  # the title's "(hundreds)" overlooked
    ("probability.table.two_way", "miscount"),  # a column left out of every row
    ("statistics.mean.bar_chart", "miscount"),  # a bar left out
    ("geometry.similar_triangles", "misread_relation"),  # which side matches which
])
def test_a_misread_no_given_shows_is_first_wrong_at_a_reading_of_the_figure(style: str, family_id: str,
                                                                           subtype: str) -> None:
    problem, variant = _misread(family_id, subtype)
    twin, wrong = _styled(problem, [variant], style)
    first = wrong.steps[wrong.error.first_error_step - 1]
    assert first.rule == READING_RULE and not reading_holds(problem, first.math)
    assert all(reading_holds(problem, s.math) for s in twin.steps if s.rule == READING_RULE)
    # the twin reads the same figure parameter, truly, in the same words but for the value (a miscount that leaves
    # elements out reads fewer values after it)
    at = wrong.error.first_error_step - 1
    assert _prose(twin.steps[at]).split(" and ")[0] == _prose(first).split(" and ")[0]
    assert twin.steps[at].math.split(" = ")[0] == first.math.split(" = ")[0]
    assert "figure." not in first.text  # the claim names the parameter; the words name what the figure shows


@pytest.mark.parametrize("style", WORDED)
def test_a_misread_scale_is_stated_by_a_figure_reading_in_the_twin_too(style: str) -> None:
    problem, variant = _misread("probability.table.two_way", "misread_scale")
    twin, wrong = _styled(problem, [variant], style)
    said = [s for s in twin.steps if s.rule == READING_RULE and "figure.scale" in s.math]
    assert len(said) == 1 and str(problem.params["scale"]) in said[0].text
    assert "figure.scale = 1" in wrong.steps[wrong.error.first_error_step - 1].math.split("; ")


def test_a_figure_reading_is_checked_against_the_parameters_the_figure_is_drawn_from() -> None:
    problem, _ = _misread("probability.table.two_way", "misread_scale")
    scale, counts = problem.params["scale"], problem.params["counts"]
    assert reading_holds(problem, f"figure.scale = {scale}")
    assert not reading_holds(problem, "figure.scale = 1")
    assert reading_holds(problem, f"count(figure.counts) = {len(counts)}")
    assert reading_holds(problem, f"columns(figure.counts) = {len(counts[0])}")
    assert not reading_holds(problem, f"columns(figure.counts) = {len(counts[0]) - 1}")
    assert not reading_holds(problem, "figure.no_such_parameter = 1")
    assert not reading_holds(problem, "figure.counts = 1")  # a table of rows is no flat value to state


def test_propagation_is_judged_over_the_computed_lines_not_the_readings() -> None:
    from synth.verification import Verdict

    # a wrong reading, a right first line (the misread value is used later), then wrong lines to the answer
    verdict = Verdict(parses=(True,) * 4, local_valid=(False, True, False, True), global_correct=(False, True, False,
                      False), shown_answer=None, answer_correct=False, reading=(True, False, False, False))
    assert verdict.propagated
    # the same lines without the reading flag: the first wrong step is the first line, and the right line breaks it
    assert not replace(verdict, reading=()).propagated
    # a right reading does not carry a wrong line's error, and a wrong one after right lines is not propagation
    assert not Verdict(parses=(True,) * 3, local_valid=(True, False, True), global_correct=(True, False, True),
                       shown_answer=None, answer_correct=True, reading=(True, False, False)).propagated


@pytest.mark.parametrize("style", [*WORDED, "worked"])
def test_labels_stay_proved_on_a_small_sweep(style: str) -> None:
    for family_id in ("statistics.mean.bar_chart", "algebra.linear.two_step", "geometry.polygon.area_perimeter"):
        problem = _problem(family_id, seed=1)
        family = get_family(family_id)
        subtypes = [s for s in sorted(INJECTORS) if INJECTORS[s].applies(family, problem)]
        variants = [v for j, s in enumerate(subtypes)
                    if (v := inject(problem, s, stage_rng(j, "test_chains_sweep"))) is not None]
        assert len(variants) >= 5
        for variant in _styled(problem, variants, style):
            verdict = verify(problem, variant.steps)
            if variant.error is None:
                assert verdict.fully_correct
            else:
                assert verdict.first_error_step == variant.error.first_error_step
                assert verdict.error_steps == variant.error.error_steps


def test_a_chain_the_verifier_labels_otherwise_is_dropped_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = _problem("algebra.linear.two_step")
    variant = _variant(problem, "intermediate_propagated")
    wrong_label = replace(variant, error=replace(variant.error, first_error_step=variant.error.first_error_step + 1,
                                                 error_steps=variant.error.error_steps[1:]))
    styled = write_contents(problem, [(problem.id, clean_variant(problem)), ("e", wrong_label)], "student", 1)
    assert [i for i, _ in styled.contents] == [problem.id]
    assert styled.rejected == {"first_step_mismatch": 1}


def test_every_style_has_five_phrasings_of_every_step_kind() -> None:
    for style in WORDED:
        for kind in KINDS:
            assert len(bank(style, kind)) >= 5, (style, kind)
    assert sorted(STYLES) == ["cot", "student", "worked"]


def test_the_verifier_checks_the_claim_not_the_words() -> None:
    problem = _problem("algebra.linear.two_step")
    worded = tuple(replace(s, text=f"Next, we find that {s.text}.", math=s.text) for s in problem.steps)
    assert verify(problem, worded).fully_correct
    wrong = replace(worded[-1], math=worded[-1].math + "1")
    assert verify(problem, (*worded[:-1], wrong)).first_error_step == len(worded)


def test_a_reading_claim_is_checked_against_the_true_givens() -> None:
    problem = _problem("coordinate.slope.two_points")
    values = {g.name: g.value for g in problem.givens}
    assert reading_holds(problem, f"A = ({values['Ax']}, {values['Ay']})")
    assert not reading_holds(problem, f"A = ({values['Ax']}, {int(values['Ay']) + 1})")
    assert not reading_holds(problem, "Q = 3")


def test_an_unknown_style_is_refused_naming_the_field_and_the_choices() -> None:
    data = {"name": "t", "count": 1, "generate": {"families": {"algebra.linear.two_step": 1.0},
                                                 "solution_style": {"student": 1, "essay": 1}}}
    with pytest.raises(ConfigError) as info:
        validate_config(data)
    message = str(info.value)
    assert "generate.solution_style" in message and "essay" in message
    assert "['cot', 'student', 'worked']" in message


def _rows(style: str, count: int = 4) -> list[dict]:
    config = validate_config({
        "name": "chains", "seed": 4, "count": count,
        "generate": {"families": {"statistics.mean.bar_chart": 1.0, "arithmetic.percent.of_quantity": 1.0},
                     "solution_style": style},
        "inject": {"variants_per_base": 1, "subtypes": {"misread_value": 1.0, "intermediate_propagated": 1.0}},
        "render": {"enabled": False}, "degrade": {"ops": []}})
    stats = ShardStats()
    return [to_row(item) for i in range(count) for item, _ in build_items(config, i, stats)]


def test_rows_record_their_style_and_validate() -> None:
    validator = jsonschema.Draft202012Validator(schema())
    rows = _rows("student")
    assert {r["solution_style"] for r in rows} == {"student"}
    for row in rows:
        assert not list(validator.iter_errors(row))
        assert to_row(from_row(row)) == row
        assert all(s["math"] and s["spans"] for s in row["steps"])


def test_a_mix_of_styles_gives_one_style_per_base() -> None:
    rows = _rows({"worked": 1, "student": 1, "cot": 1}, count=9)
    by_base: dict[str, set[str]] = {}
    for r in rows:
        by_base.setdefault(r["base_id"], set()).add(r["solution_style"])
    assert all(len(styles) == 1 for styles in by_base.values())
    assert len(set().union(*by_base.values())) >= 2


def test_exports_carry_the_sentences() -> None:
    rows = [r for r in _rows("cot") if r["error"] is not None]
    assert rows
    row = rows[0]
    reason = error_reason(row)
    assert reason.split("\n\n") == [s["text"] for s in row["steps"]]
    assert not reason.startswith("Step 1:")
    record = processbench_record(row)
    assert record["steps"] == [s["text"] for s in row["steps"]]
    assert record["label"] == row["error"]["first_error_step"] - 1


@pytest.mark.parametrize(("question", "words"), [
    ("In the diagram, triangles ABC and ADE are similar. How long is BC?", "the length"),   # was "the time it takes"
    ("How long is the ladder?", "the length"),
    ("The film started at 14:20 and ended at 16:05. How long did it take, in minutes?", "the time it takes"),
    ("How many minutes does the lesson last?", "the time it takes"),
])
def test_a_chain_says_what_the_question_asks_for(question: str, words: str) -> None:
    # Seed 6021023's errorradar_like-000013: "Goal: the time it takes." in the clean chain of a length problem,
    # a false statement in a row labelled correct.
    from synth.chains._asked import _asked

    assert _asked(question) == words
