"""The generator contract: sample parameters, derive replayable steps, phrase the question."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import sympy

from synth.mathparse import to_text
from synth.records import Figure, Given, Problem, Step
from synth.templating import render_phrasing

DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class StepDraft:
    """A step while it is still SymPy: ``result`` is the number computed here (None if none).

    Injectors override ``result`` at one index and re-derive; that is what makes a propagated
    error exact rather than a string edit.
    """

    rule: str
    value: sympy.Basic
    text: str
    latex: str
    result: sympy.Basic | None = None
    inputs: tuple[str, ...] = ()


@dataclass
class Derivation:
    """Collects steps; ``compute`` returns the override for the step being built, if any."""

    overrides: Mapping[int, sympy.Basic] = field(default_factory=dict)
    steps: list[StepDraft] = field(default_factory=list)

    def compute(self, true_value: sympy.Basic) -> sympy.Basic:
        return self.overrides.get(len(self.steps) + 1, true_value)

    def add(self, draft: StepDraft) -> None:
        self.steps.append(draft)


@dataclass(frozen=True)
class MalRule:
    """A realistic student error a family can make (DESIGN §5): the conceptual injectors' catalogue.

    ``subtype`` is one of the conceptual subtypes (formula_misuse, theorem_misapplication,
    incorrect_fact, invalid_assumption, invalid_inference, misinterpret_question) or, for
    computational mal-rules such as a wrong conversion factor, ``unit_conversion``.
    ``explanation`` is one line usable as a judge's ground truth ("adds the numerators and the
    denominators"). Its preconditions are checked by ``Family.derive_mal``, which returns None
    when the rule does not apply to a problem.
    """

    id: str
    subtype: str
    explanation: str


@dataclass(frozen=True)
class Reading:
    """A value the solver reads off the figure, and the plausible ways to misread it.

    ``param`` is the key in ``params`` that holds the true value; ``element`` is the figure
    element it comes from; ``kind`` is the visual-perception subtype a misread makes
    (misread_value, misread_label, misread_scale, miscount, misread_relation);
    ``misreads`` are replacement values for ``params[param]`` (JSON values), each one a
    mistake a person could make looking at that figure (a neighbouring tick, a swapped label,
    one object more or fewer). The image is always drawn from the true ``params``.
    """

    param: str
    element: str
    kind: str
    misreads: tuple[Any, ...]


class Family:
    """One problem family (reasoning-gym style: item = f(rng), registered by id)."""

    id: ClassVar[str]
    domain: ClassVar[str]
    subdomain: ClassVar[str]
    grade_band: ClassVar[str]
    question_types: ClassVar[tuple[str, ...]] = ("free",)
    figure_kind: ClassVar[str | None] = None
    image_roles: ClassVar[tuple[str, ...]] = ("not_required",)
    malrules: ClassVar[tuple[MalRule, ...]] = ()

    def sample(self, rng: np.random.Generator, difficulty: str) -> dict[str, Any]:
        """Canonical parameters (JSON values) for one problem."""
        raise NotImplementedError

    def derive(self, params: dict[str, Any], overrides: Mapping[int, sympy.Basic] = {}) -> list[StepDraft]:
        """The worked solution; ``overrides`` replaces the number computed at a step (1-based)."""
        raise NotImplementedError

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        """What the question states, as a value step 1 must be equivalent to."""
        raise NotImplementedError

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        """The answer by an independent route (not the step chain)."""
        raise NotImplementedError

    def answer_of(self, value: sympy.Basic) -> sympy.Basic:
        """The final answer a step value states (the number, or the solution of ``x = n``)."""
        return value.rhs if isinstance(value, sympy.Eq) else value

    def answer_text(self, params: dict[str, Any], answer: sympy.Basic) -> tuple[str, str]:
        return format_number(answer), latex_number(answer)

    def question_context(self, params: dict[str, Any]) -> dict[str, Any]:
        """Values the question templates may use."""
        return dict(params)

    def figure(self, params: dict[str, Any]) -> Figure | None:
        """The figure spec (true values; the renderer draws from it), for families with a figure."""
        return None

    def givens(self, params: dict[str, Any]) -> tuple[Given, ...]:
        """The quantities the problem states and where each lives (``text`` or ``figure:<id>``)."""
        return ()

    def derive_mal(self, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
        """The whole solution as a student applying mal-rule ``rule`` writes it, or None if it does not apply.

        Steps before the mistake are the clean ones; the step where the rule is used displays
        the wrong method (not just a wrong number); later steps follow correctly from it, so
        the verifier sees one first error carried forward. Its final answer is also a natural
        MCQ distractor.
        """
        return None

    def figure_readings(self, params: dict[str, Any]) -> tuple[Reading, ...]:
        """The values a solver must read off this problem's figure (empty without a figure)."""
        return ()

    def image_role(self, params: dict[str, Any]) -> str:
        """required / useful / not_required / insufficient, known by construction from ``params``."""
        return str(params.get("image_role", "not_required"))

    # -- assembly shared by every family ------------------------------------------------

    def build(self, rng: np.random.Generator, *, difficulty: str, question_type: str,
              problem_id: str) -> Problem:
        params = self.sample(rng, difficulty)
        drafts = self.derive(params)
        answer = self.target(params)
        ctx = self.question_context(params)
        text = render_phrasing(self.id, ctx, rng)
        answer_text, answer_latex = self.answer_text(params, answer)
        return Problem(
            id=problem_id, family=self.id, domain=self.domain, subdomain=self.subdomain,
            grade_band=self.grade_band, difficulty=difficulty, question_type=question_type,  # type: ignore[arg-type]
            image_role=self.image_role(params), question_text=text, question_latex=ctx.get("latex", text),
            answer_text=answer_text, answer_latex=answer_latex, answer_value=to_text(answer),
            steps=finalize(drafts), givens=self.givens(params), figure=self.figure(params), params=params,
        )


def finalize(drafts: list[StepDraft]) -> tuple[Step, ...]:
    return tuple(
        Step(index=i, rule=d.rule, value=to_text(d.value), text=d.text, latex=d.latex, inputs=d.inputs)
        for i, d in enumerate(drafts, start=1)
    )


def format_number(value: sympy.Basic) -> str:
    """School style: integers plainly, other rationals as a/b, negatives with a real minus."""
    value = sympy.nsimplify(value) if isinstance(value, sympy.Float) else value
    if isinstance(value, sympy.Rational) and not isinstance(value, sympy.Integer):
        text = f"{abs(value.p)}/{value.q}"
        return ("−" + text) if value < 0 else text
    text = str(value)
    return text.replace("-", "−")


def latex_number(value: sympy.Basic) -> str:
    if isinstance(value, sympy.Rational) and not isinstance(value, sympy.Integer):
        body = rf"\frac{{{abs(value.p)}}}{{{value.q}}}"
        return ("-" + body) if value < 0 else body
    return str(value)
