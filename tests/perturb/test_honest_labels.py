"""Labels mean what they say (issue 18): visual errors only where only the figure tells, subtypes that do not
contradict each other, answers right as asked, one error_steps rule, explanations in plain words, and a base's
variants that always differ."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perturb.reasoning import INJECTORS, inject
from perturb.reasoning.base import DUPLICATE, Funnel, plain_math, shown_key
from perturb.reasoning.visual import VISUAL, element_words
from synth import generators
from synth.config import ConfigError, validate_config
from synth.manifest import read_manifest
from synth.pipeline import run
from synth.records import Problem, Step
from synth.taxonomy import RETIRED, SUBTYPES
from synth.verifier import DECLARE_RULE, verify
from tests.conftest import tiny_config_data


def _problems(family_id: str, seeds: range) -> list[Problem]:
    family = generators.get_family(family_id)
    return [family.build(np.random.default_rng(seed), difficulty=("easy", "medium", "hard")[seed % 3],
                         question_type="free", problem_id=f"{family_id}-{seed}") for seed in seeds]


def _figure_families() -> list[str]:
    return sorted(fid for fid, cls in generators.REGISTRY.items() if cls.figure_kind and not fid.startswith("test."))


# -- visual errors only where only the figure tells ------------------------------------------------------


def _text_numbers(problem: Problem) -> set[Fraction]:
    """Numbers the question text prints (a minus sign only when it touches the digits), and text givens."""
    text = problem.question_text.replace("−", "-")
    found = {Fraction(m.group(0)) for m in re.finditer(r"(?<![\d.,])-?\d+(?:\.\d+)?", text)}
    found |= {abs(n) for n in found if n < 0 and not re.search(rf"-{abs(n)}", text.replace(" ", ""))}
    for g in problem.givens:
        if g.source == "text":
            try:
                found.add(Fraction(g.value.replace("−", "-")))
            except ValueError:
                pass
    return found


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, dict):
        return [x for k in value for x in _flat(value[k])]
    return [value]


def _misread_truths(change: dict[str, Any]) -> list[Fraction]:
    """The true numbers a recorded misread replaced: at the places that differ, or those left out."""
    true, shown = _flat(change["from"]), _flat(change["to"])
    if len(true) == len(shown):
        lost = [t for t, s in zip(true, shown) if t != s]
    else:
        rest = list(shown)
        lost = []
        for t in true:
            if t in rest:
                rest.remove(t)
            else:
                lost.append(t)
    return [Fraction(str(v)) for v in lost if isinstance(v, (int, float)) and not isinstance(v, bool)]


@pytest.mark.parametrize("family_id", _figure_families())
def test_visual_misreads_never_replace_a_value_the_question_text_states(family_id: str) -> None:
    """A seeded sample of the family, every visual kind: the misread's true values are nowhere in the text."""
    copied, kept = [], 0
    for problem in _problems(family_id, range(6)):
        stated = _text_numbers(problem)
        text_only = bool(problem.givens) and all(g.source == "text" for g in problem.givens)
        for kind in VISUAL:
            v = inject(problem, kind, np.random.default_rng(1))
            if v is None:
                continue
            kept += 1
            assert not text_only, f"{problem.id}: {kind} on a problem whose givens all live in the text"
            for change in v.error.edit["changes"]:
                copied += [(problem.id, kind, n) for n in _misread_truths(change) if n in stated]
    assert not copied, f"misreads of values the question text states: {copied}"
    assert kept or family_id in {"statistics.median_mode.table"}, f"no visual error kept on {family_id}'s sample"


def test_a_value_printed_in_the_text_is_never_misread_but_the_same_figure_required_is() -> None:
    family = generators.get_family("coordinate.slope.two_points")
    problems = _problems(family.id, range(40))
    useful = next(p for p in problems if p.image_role == "useful")
    required = next(p for p in problems if p.image_role == "required")
    assert "A(" in useful.question_text  # the coordinates are printed: a misread would be a copy error
    assert not INJECTORS["misread_value"].applies(family, useful)
    assert INJECTORS["misread_value"].applies(family, required)


# -- subtypes that do not contradict each other -----------------------------------------------------------


def test_logic_disruption_is_retired_and_a_config_asking_for_it_is_told_why() -> None:
    assert "logic_disruption" in SUBTYPES and "logic_disruption" in RETIRED
    assert "logic_disruption" not in INJECTORS
    data = tiny_config_data(inject={"variants_per_base": 1, "subtypes": {"logic_disruption": 1.0}})
    with pytest.raises(ConfigError, match=r"logic_disruption: retired .*step_omission.*remove it from inject"):
        validate_config(data)


@pytest.mark.parametrize("family_id", ["arithmetic.order_of_operations", "algebra.linear.brackets",
                                       "arithmetic.ratio.share", "statistics.mean.bar_chart"])
def test_no_error_variant_reads_like_a_step_omission_control(family_id: str) -> None:
    """Every error subtype against every step left out of the same problem: no error has a control's lines."""
    family = generators.get_family(family_id)
    errors = [s for s in sorted(INJECTORS) if SUBTYPES[s].is_error]
    for problem in _problems(family_id, range(3)):
        omitted = set()
        for k in range(1, len(problem.steps)):  # what step_omission can write: any line but the answer left out
            kept = problem.steps[: k - 1] + problem.steps[k:]
            omitted.add(tuple(s.text for s in kept))
            assert verify(problem, tuple(replace(s, index=i) for i, s in enumerate(kept, 1))).fully_correct
        for subtype in errors:
            if not INJECTORS[subtype].applies(family, problem):
                continue
            v = inject(problem, subtype, np.random.default_rng(5))
            if v is not None:
                assert tuple(s.text for s in v.steps) not in omitted, (problem.id, subtype)


def _declared(problem: Problem, new: str) -> tuple[Step, ...]:
    var = problem.params["var"]
    pattern = re.compile(rf"(?<![A-Za-z\\]){var}(?![A-Za-z])")
    renamed = [replace(s, value=pattern.sub(new, s.value), text=pattern.sub(new, s.text),
                       latex=pattern.sub(new, s.latex)) for s in problem.steps]
    declare = Step(index=0, rule=DECLARE_RULE, value=f"{new} = {var}", text=f"Let {new} stand for {var}",
                   latex=f"{new} = {var}", math=f"{new} = {var}")
    return tuple(replace(s, index=i) for i, s in enumerate((declare, *renamed), start=1))


def test_a_declared_rename_is_correct_and_the_same_rename_undeclared_is_variable_misnaming() -> None:
    problem = _problems("algebra.linear.two_step", range(1))[0]
    new = "q" if problem.params["var"] != "q" else "p"
    declared = _declared(problem, new)
    assert verify(problem, declared).fully_correct
    undeclared = tuple(replace(s, index=i) for i, s in enumerate(declared[1:], start=1))
    verdict = verify(problem, undeclared)
    assert not verdict.fully_correct and verdict.first_error_step == 1
    assert set(verdict.presentation) == {"variable_misnaming"}  # every line calls the unknown q
    assert verdict.answer_correct  # the number is right: only the name is wrong
    # Declaring a letter the question already uses is no declaration.
    clash = _declared(problem, problem.params["var"])
    assert not verify(problem, clash).fully_correct


# -- the answer right as asked, and one error_steps rule ---------------------------------------------------


def test_a_wrong_unit_or_form_leaves_the_number_right_but_the_answer_not_correct() -> None:
    units = next(v for p in _problems("arithmetic.units.conversion", range(6))
                 if (v := inject(p, "incorrect_units", np.random.default_rng(0))) is not None
                 and v.error.first_error_step == len(v.steps))
    assert not units.error.answer_changed and not units.error.answer_correct
    form = next(v for p in _problems("arithmetic.fractions.add_unlike", range(12))
                if (v := inject(p, "format_ignored", np.random.default_rng(0))) is not None)
    assert not form.error.answer_changed and not form.error.answer_correct
    slip = next(v for p in _problems("arithmetic.order_of_operations", range(6))
                if (v := inject(p, "intermediate_corrected", np.random.default_rng(0))) is not None)
    assert not slip.error.answer_changed and slip.error.answer_correct
    wrong = next(v for p in _problems("arithmetic.order_of_operations", range(6))
                 if (v := inject(p, "final_number", np.random.default_rng(0))) is not None)
    assert wrong.error.answer_changed and not wrong.error.answer_correct


@pytest.mark.parametrize("family_id", ["algebra.systems.two_equations", "arithmetic.order_of_operations",
                                       "algebra.linear.two_step", "statistics.mean.bar_chart"])
def test_a_slip_the_student_recovers_from_lists_its_line_and_the_next_in_every_family(family_id: str) -> None:
    kept = 0
    for problem in _problems(family_id, range(8)):
        v = inject(problem, "intermediate_corrected", np.random.default_rng(2))
        if v is None:
            continue
        kept += 1
        k = v.error.first_error_step
        assert v.error.error_steps == (k, k + 1), (problem.id, v.error.error_steps)
    assert kept, f"no recovered slip kept on {family_id}'s sample"


# -- explanations in a teacher's words --------------------------------------------------------------------

# What an explanation must never show: an internal id (cell_2_1, ce_matches) or SymPy syntax.
NOT_PLAIN = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|\*\*|\*I\b|sqrt\(|\d\*[A-Za-z(]")


def test_sympy_syntax_in_an_explanation_is_written_as_on_the_page() -> None:
    assert plain_math("the final answer 30/(5*x + 1)**5.") == "the final answer 30/(5x + 1)⁵."
    assert plain_math("roots 24*I and -24*I, n**2 + 3*n") == "roots 24i and -24i, n² + 3n"
    assert plain_math("2*pi*r and sqrt(3)*x, 4*3") == "2πr and √(3)x, 4 × 3"
    assert plain_math("Step 2 computes 14 where 15 is correct.") == "Step 2 computes 14 where 15 is correct."


@cache
def _two_way() -> Problem:
    return next(p for p in _problems("probability.table.two_way", range(10)) if p.figure is not None)


@pytest.mark.parametrize(("element", "words"), [
    ("cell_2_1", re.compile(r"the cell in row 2, column 1 \(“.+”, “.+”\)")),
    ("cell_0_1", re.compile(r"the column headed “.+”")),
    ("hand_hour_2", re.compile(r"the hour hand of the second clock")),
    ("side_AB", re.compile(r"side AB")),
    ("ce_matches", re.compile(r"ce matches")),  # never an id: an unknown id still loses its underscores
])
def test_figure_elements_are_named_in_words(element: str, words: re.Pattern[str]) -> None:
    said = element_words(_two_way(), element)
    assert words.fullmatch(said), said
    assert not NOT_PLAIN.search(said)


@pytest.mark.parametrize("family_id", _figure_families())
def test_visual_explanations_name_no_internal_id(family_id: str) -> None:
    for problem in _problems(family_id, range(4)):
        for kind in VISUAL:
            v = inject(problem, kind, np.random.default_rng(3))
            if v is not None:
                assert not NOT_PLAIN.search(v.error.explanation), v.error.explanation


# -- a base's variants always differ ----------------------------------------------------------------------


def test_an_attempt_that_reads_like_a_sibling_is_redrawn_and_counted() -> None:
    # final_number draws its slip afresh each attempt: from the same generator its first attempt is the
    # sibling's page, so it is rejected as a duplicate and redrawn.
    problem = next(p for p in _problems("arithmetic.fractions.multiply_divide", range(12))
                   if INJECTORS["final_number"].applies(generators.get_family(p.family), p))
    first = inject(problem, "final_number", np.random.default_rng(0))
    assert first is not None
    funnel = Funnel()
    again = inject(problem, "final_number", np.random.default_rng(0), funnel=funnel,
                   avoid={shown_key(first.steps)})
    assert again is None or shown_key(again.steps) != shown_key(first.steps)
    assert funnel.duplicates_rejected > 0
    assert funnel.rejected[INJECTORS["final_number"].id][DUPLICATE] == funnel.duplicates_rejected


@pytest.mark.parametrize(("family", "subtype"), [
    # one unit_conversion rule fits a given problem; a decimal asked for as a decimal has one other form
    ("arithmetic.units.conversion", "unit_conversion"),
    ("arithmetic.decimals.operations", "format_ignored"),
])
def test_an_injector_with_nothing_new_for_a_base_says_so_at_once(family: str, subtype: str) -> None:
    # Once a sibling variant shows the only working the injector has for this problem, it is not offered again:
    # no run of duplicate attempts.
    fam = generators.get_family(family)
    problem = fam.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="p")
    funnel = Funnel()
    first = inject(problem, subtype, np.random.default_rng(1), funnel=funnel, avoid={shown_key(problem.steps)})
    assert first is not None
    again = inject(problem, subtype, np.random.default_rng(2), funnel=funnel,
                   avoid={shown_key(problem.steps), shown_key(first.steps)})
    assert again is None
    rejected = funnel.rejected.get(first.error.injector, {})
    assert rejected.get(DUPLICATE, 0) == 0 and rejected.get("not_applicable") == 1
    assert funnel.attempted[first.error.injector] == 1


def test_a_mal_rule_a_sibling_shows_is_passed_over_not_redrawn() -> None:
    problem = next(p for p in _problems("arithmetic.fractions.multiply_divide", range(12))
                   if INJECTORS["incorrect_fact"].applies(generators.get_family(p.family), p))
    first = inject(problem, "incorrect_fact", np.random.default_rng(0))
    assert first is not None
    funnel = Funnel()
    again = inject(problem, "incorrect_fact", np.random.default_rng(0), funnel=funnel,
                   avoid={shown_key(first.steps)})
    assert again is None or shown_key(again.steps) != shown_key(first.steps)
    assert funnel.duplicates_rejected == 0


def test_a_runs_variants_of_one_base_all_differ_and_stats_count_the_duplicates(tmp_path: Path) -> None:
    """Three slots of one mal-rule subtype per base: siblings never read alike, and stats.json says how many
    attempts were redrawn for reading like one."""
    data = tiny_config_data(
        name="dups", count=4, generate={"families": {"arithmetic.fractions.multiply_divide": 1.0},
                                        "allocation": "weighted"},  # the slots as drawn, not a quota plan
        inject={"variants_per_base": 3, "subtypes": {"incorrect_fact": 1.0, "final_number": 1.0}},
        render={"enabled": False}, degrade={"ops": []}, output={"root": str(tmp_path), "shard_size": 4})
    run(validate_config(data), tmp_path / "run", workers=1)
    by_base: dict[str, list[tuple[str, ...]]] = {}
    for row in read_manifest(tmp_path / "run"):
        if row["variant"] != "clean":
            by_base.setdefault(row["base_id"], []).append(tuple((s["text"], s["latex"]) for s in row["steps"]))
    assert by_base
    for base, shown in by_base.items():
        assert len(set(shown)) == len(shown), f"{base} has two variants that read alike"
    stats = json.loads((tmp_path / "run" / "stats.json").read_text(encoding="utf-8"))
    rejected = sum(f["rejected"].get(DUPLICATE, 0) for f in stats["rejections"]["inject"].values())
    assert stats["duplicates_rejected"] == rejected


# -- answer_correct where the exports and eval tasks read it ---------------------------------------------


@cache
def _wrong_unit_item() -> Any:
    from synth.records import Item

    problem = next(p for p in _problems("arithmetic.units.conversion", range(12))
                   if (v := inject(p, "incorrect_units", np.random.default_rng(0))) is not None
                   and v.error.first_error_step == len(v.steps))
    variant = inject(problem, "incorrect_units", np.random.default_rng(0))
    return Item(id=f"{problem.id}-e1", base_id=problem.id, index=0, seed=0, problem=problem, variant=variant)


def test_the_correct_task_wants_the_unit_back_when_only_the_unit_was_wrong() -> None:
    from synth.evaluate.tasks import get_task

    item = _wrong_unit_item()
    task = get_task("correct")
    unit = item.problem.params["answer_unit"]
    number = item.problem.answer_value
    assert task.gold(item) == item.problem.answer_text and unit in task.gold(item)
    assert task.credit(item, f"{number} {unit}") == 1.0
    assert task.credit(item, item.variant.shown_answer + " " + item.variant.error.edit["to"]) == 0.0  # 180 h


def test_the_solve_task_counts_an_answer_in_another_unit_wrong() -> None:
    from synth.evaluate.tasks import get_task

    item = _wrong_unit_item()
    task = get_task("solve")
    number, unit = item.problem.answer_value, item.problem.params["answer_unit"]
    wrong = item.variant.error.edit["to"]
    assert task.credit(item, (f"{number} {unit}",)) == 1.0
    assert task.credit(item, (f"{number} {wrong}",)) == 0.0


def test_exports_treat_a_right_number_in_the_wrong_unit_as_a_wrong_answer() -> None:
    from synth.exports.errorradar import errorradar_records
    from synth.exports.fermat import fermat_row
    from synth.manifest import to_row

    row = to_row(_wrong_unit_item())
    assert row["error"]["answer_correct"] is False and row["error"]["answer_changed"] is False
    fermat = fermat_row(row, "benchmark_images/x.png")
    assert isinstance(fermat, dict)
    assert fermat["shown_answer_correct"] == 0 and fermat["final_answer"] == row["answer"]["text"]

    class _Ctx:  # errorradar_records asks the context only for the question's image
        def question_image(self, row: dict[str, Any]) -> tuple[str, str]:
            return "images/x.png", "page"

    kept = errorradar_records(_Ctx(), row)  # type: ignore[arg-type]
    # the student's answer as the page writes it, unit and all ("13511 L" where mL is asked), not its value
    last = row["steps"][-1]
    assert isinstance(kept, list) and kept[0]["user_answer"] == (last.get("math") or last["text"])
    assert kept[0]["user_answer"] != row["answer"]["text"]
