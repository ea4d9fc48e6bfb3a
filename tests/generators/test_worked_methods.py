"""The text-only families show the school method they claim, and every computed number can slip."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy

from synth.generators import REGISTRY, get_family
from synth.generators.base import DIFFICULTIES

SEEDS = 30
# Families whose easy level has a deliberately small parameter space (few school-sized cases).
SMALL_SPACES = {"arithmetic.fractions.add_unlike": 0.2, "arithmetic.units.conversion": 0.3,
                "trig.exact_values": 0.3, "arithmetic.percent.percent_change": 0.15,
                "arithmetic.fractions.multiply_divide": 0.15, "arithmetic.percent.of_quantity": 0.05}


def _texts(family_id: str, params: dict) -> list[str]:
    return [s.text for s in get_family(family_id).derive(params)]


def test_column_addition_marks_each_carry() -> None:
    family = get_family("arithmetic.multi_digit.addition")
    steps = family.derive({"addends": [4567, 2858]})
    assert [s.text for s in steps] == ["4560 + 2850 + 15", "4500 + 2800 + 125", "4000 + 2000 + 1425", "Sum: 7425"]
    assert [s.rule.endswith(":carry") for s in steps] == [True, True, True, False]


def test_column_subtraction_shows_each_borrow() -> None:
    family = get_family("arithmetic.multi_digit.subtraction")
    for seed in range(SEEDS):
        params = family.sample(np.random.default_rng(seed), "hard")
        steps = family.derive(params)
        borrows = [s for s in steps if s.rule.startswith("borrow")]
        assert len(borrows) == family.borrow_columns(params["top"], params["bottom"])
        assert all("(" in s.text and s.result is None for s in borrows)
    assert _texts("arithmetic.multi_digit.subtraction", {"top": 5203, "bottom": 2678})[:2] == [
        "5190 − 2670 + (13 − 8)", "5190 − 2670 + 5"]


def test_multiplication_shows_partial_products_then_their_sum() -> None:
    assert _texts("arithmetic.multi_digit.multiplication", {"a": 347, "b": 26}) == [
        "347 × 6 + 347 × 20", "2082 + 347 × 20", "2082 + 6940", "Product: 9022"]


def test_unlike_fractions_use_the_lowest_common_denominator() -> None:
    texts = _texts("arithmetic.fractions.add_unlike", {"fractions": [[1, 4], [1, 6]], "signs": ["+"]})
    assert texts == ["(1 × 3)/(4 × 3) + (1 × 2)/(6 × 2)", "3/12 + (1 × 2)/(6 × 2)", "3/12 + 2/12",
                     "(3 + 2)/12", "Sum: 5/12"]


def test_fraction_division_multiplies_by_the_reciprocal() -> None:
    texts = _texts("arithmetic.fractions.multiply_divide",
                   {"a": [2, 3], "b": [4, 9], "whole": [0, 0], "op": "/"})
    assert texts[0] == "2/3 × 9/4" and texts[-1] == "Quotient: 3/2"


def test_decimal_addition_lines_up_the_places() -> None:
    texts = _texts("arithmetic.decimals.operations", {"kind": "add_sub", "a": "12.6", "b": "4.75", "c": "3.2"})
    assert texts == ["12.60 + 4.75 − 3.20", "17.35 − 3.20", "14.15"]


def test_linear_brackets_are_distributed_before_solving() -> None:
    texts = _texts("algebra.linear.brackets", {"var": "x", "brackets": [[3, 2, -5]], "rhs": 21})
    assert texts == ["3 × 2x − 3 × 5 = 21", "6x − 15 = 21", "6x − 15 + 15 = 21 + 15", "6x = 36",
                     "x = 36 ÷ 6", "x = 6"]


def test_quadratic_ends_with_both_solutions_joined_by_or() -> None:
    family = get_family("algebra.quadratic.factoring")
    params = {"var": "x", "p": 2, "q": -3, "s": 4, "k": 0}
    texts = [s.text for s in family.derive(params)]
    assert texts[0] == "2x^2 + 8x − 3x − 12 = 0"
    assert texts[2] == "(x + 4)(2x − 3) = 0"
    assert texts[-1] == "x = −4 or x = 3/2"
    assert family.answer_text(params, family.target(params))[0] == "x = −4 or x = 3/2"


def test_power_rule_writes_the_rule_before_the_arithmetic() -> None:
    texts = _texts("calculus.derivative.power_rule", {"var": "x", "terms": [[5, 3], [-2, 2]], "linear": 7,
                                                        "constant": 1})
    assert texts == ["3 × 5x^(3 − 1) − 2 × 2x^(2 − 1) + 7", "15x^2 − 2 × 2x^(2 − 1) + 7", "15x^2 − 4x + 7"]


def test_trig_values_are_looked_up_before_squaring() -> None:
    texts = _texts("trig.exact_values", {"terms": [[2, "sin", 45, 2], [1, "cos", 60, 1]], "signs": ["+"]})
    assert texts[:3] == ["2 × (√2/2)^2 + cos 60°", "2 × (1/2) + cos 60°", "2 × (1/2) + 1/2"]
    assert texts[-1] == "3/2"


@pytest.mark.parametrize("family_id", sorted(REGISTRY))
def test_every_computed_result_is_an_exact_rational(family_id: str) -> None:
    # The computational injectors slip results with sympy.Rational; an irrational one would crash.
    family = get_family(family_id)
    for seed in range(SEEDS):
        params = family.sample(np.random.default_rng(seed), DIFFICULTIES[seed % 3])
        results = [d.result for d in family.derive(params) if d.result is not None]
        assert results and all(isinstance(sympy.Rational(r), sympy.Rational) for r in results)
        assert json.loads(json.dumps(params)) == params  # canonical params are plain JSON


@pytest.mark.parametrize("family_id", sorted(REGISTRY))
def test_sampled_parameters_are_mostly_unique(family_id: str) -> None:
    family = get_family(family_id)
    n = 300
    seen = {json.dumps(family.sample(np.random.default_rng(seed), DIFFICULTIES[seed % 3]), sort_keys=True)
            for seed in range(n)}
    duplicates = 1 - len(seen) / n
    assert duplicates <= SMALL_SPACES.get(family_id, 0.02), f"{family_id}: {duplicates:.1%} duplicates"


@pytest.mark.slow
@pytest.mark.parametrize("family_id", sorted(REGISTRY))
def test_thousand_seeds_verify(family_id: str) -> None:
    from synth.verifier import verify

    family = get_family(family_id)
    for seed in range(1000):
        problem = family.build(np.random.default_rng(seed), difficulty=DIFFICULTIES[seed % 3],
                               question_type="free", problem_id=f"s{seed}")
        assert verify(problem, problem.steps, family=family).fully_correct, (family_id, seed)
