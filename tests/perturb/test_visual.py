"""Visual-perception errors over any family's figure readings, tested with a tiny fake figure family."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
import sympy

from perturb.reasoning import REGISTRY as INJECTORS
from perturb.reasoning import inject
from perturb.reasoning.base import Funnel
from perturb.reasoning.visual import VISUAL
from synth import generators
from synth.generators.base import Family, Reading, StepDraft
from synth.records import Figure, Problem, Step


class AppleBasket(Family):
    """Count the apples drawn, add the ones in the bag, share among children."""

    id = "test.fake.apples"
    domain = "arithmetic"
    subdomain = "counting"
    grade_band = "1-2"
    figure_kind = "fake_apples"
    image_roles = ("required",)

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        a, b, k = params["apples"], params["bag"], params["children"]
        total = sympy.Integer(a + b)
        return [StepDraft("add", total / k, f"({a} + {b}) ÷ {k}", rf"\left({a} + {b}\right) \div {k}"),
                StepDraft("add", total / k, f"{a + b} ÷ {k}", rf"{a + b} \div {k}", total),
                StepDraft("divide", total / k, str(total / k).replace("-", "−"), str(total / k), total / k)]

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Rational(params["apples"] + params["bag"], params["children"])

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Rational(params["apples"] + params["bag"], params["children"])

    def figure(self, params: dict[str, Any]) -> Figure:
        return Figure("fake_apples", {"apples": params["apples"], "children": params["children"]})

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        a, k = params["apples"], params["children"]
        return (Reading("apples", "the apples in the picture", "miscount", (a - 1, a + 1)),
                Reading("children", "the number under the children", "misread_value", (k + 1,)))


@pytest.fixture
def problem(monkeypatch: pytest.MonkeyPatch) -> Problem:
    monkeypatch.setitem(generators.REGISTRY, AppleBasket.id, AppleBasket)
    family = AppleBasket()
    params = {"apples": 7, "bag": 5, "children": 4}
    steps = tuple(Step(index=i, rule=d.rule, value=str(d.value), text=d.text, latex=d.latex)
                  for i, d in enumerate(family.derive(params), start=1))
    return Problem(id="p", family=family.id, domain="arithmetic", subdomain="counting", grade_band="1-2",
                   difficulty="easy", question_type="free", image_role="required",
                   question_text="The bag holds 5 more apples. Share all the apples in the picture fairly.",
                   question_latex="", answer_text="3", answer_latex="3", answer_value="3", steps=steps,
                   figure=family.figure(params), params=params)


def test_miscount_is_carried_through_against_the_true_figure(problem: Problem) -> None:
    v = inject(problem, "miscount", np.random.default_rng(0))
    assert v is not None and v.error is not None
    err = v.error
    assert err.family == "visual_perception" and err.subtype == "miscount"
    assert err.edit["param"] == "apples" and err.edit["to"] in (6, 8) and err.edit["from"] == 7
    assert err.first_error_step == 1 and err.propagated and err.answer_changed
    assert v.steps[0].text in ("(6 + 5) ÷ 4", "(8 + 5) ÷ 4")
    assert problem.figure.spec["apples"] == 7  # the picture still shows the truth
    assert err.projections == {"errorradar": "VIS", "fermat": None, "mmerror": "A"}


def test_each_kind_acts_only_where_the_family_offers_such_a_reading(problem: Problem) -> None:
    family = AppleBasket()
    offered = {s for s in VISUAL if INJECTORS[s].applies(family, problem)}
    assert offered == {"miscount", "misread_value"}
    assert inject(problem, "misread_scale", np.random.default_rng(0)) is None


def test_misread_value_names_the_element_and_keeps_labels_verified(problem: Problem) -> None:
    funnel = Funnel()
    v = inject(problem, "misread_value", np.random.default_rng(3), funnel=funnel)
    assert v is not None
    assert "the number under the children" in v.error.explanation and v.error.edit["to"] == 5
    assert v.shown_answer == "12/5"


def test_non_propagated_misread_keeps_the_answer(problem: Problem) -> None:
    v = inject(problem, "miscount", np.random.default_rng(0), propagate=False)
    assert v is not None and not v.error.propagated and not v.error.answer_changed
    assert v.steps[1:] == problem.steps[1:]
