"""The subtype-first sweep delivers the requested subtype shares (within 2 percentage points)."""

from __future__ import annotations

import pytest

from perturb.reasoning.sweep import quotas, sweep

FAMILIES = {f: 1.0 for f in (
    "algebra.exponents.simplify", "algebra.linear.both_sides", "algebra.linear.brackets", "algebra.linear.two_step",
    "algebra.quadratic.factoring", "arithmetic.decimals.operations", "arithmetic.fractions.add_unlike",
    "arithmetic.fractions.multiply_divide", "arithmetic.multi_digit.addition", "arithmetic.multi_digit.multiplication",
    "arithmetic.multi_digit.subtraction", "arithmetic.order_of_operations", "arithmetic.percent.of_quantity",
    "arithmetic.percent.percent_change", "arithmetic.rate.unit_rate", "arithmetic.ratio.share",
    "arithmetic.units.conversion", "calculus.derivative.power_rule", "trig.exact_values")}
WEIGHTS = {"intermediate_propagated": 3.0, "copy_error": 1.0, "unit_conversion": 1.0, "formula_misuse": 2.0,
           "invalid_assumption": 1.0, "misinterpret_question": 1.0, "incorrect_fact": 1.0, "operator_swap": 1.0,
           "irrelevant_info": 1.0}


def _check(n: int, seed: int) -> None:
    result = sweep(FAMILIES, WEIGHTS, n, seed)
    total = sum(WEIGHTS.values())
    shares = result.shares()
    for subtype, w in WEIGHTS.items():
        assert abs(shares.get(subtype, 0.0) - w / total) <= 0.02, (subtype, shares, result.funnel.as_dict())
    assert not result.build_failed


def test_quotas_are_exact_and_independent_of_key_order() -> None:
    q = quotas({"b": 1.0, "a": 2.0, "c": 1.0}, 10)
    assert q == quotas({"c": 1.0, "a": 2.0, "b": 1.0}, 10) and sum(q.values()) == 10
    assert q["a"] == 5 and {q["b"], q["c"]} == {2, 3}


def test_requested_shares_are_met_on_a_small_sweep() -> None:
    _check(120, seed=1)


@pytest.mark.slow
def test_requested_shares_are_met_on_a_2000_variant_sweep() -> None:
    _check(2000, seed=0)
