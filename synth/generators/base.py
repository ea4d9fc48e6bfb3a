"""The generator contract: sample parameters, derive replayable steps, phrase the question."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import sympy

from synth.mathparse import to_text
from synth.presentation import Vocabulary
from synth.records import Figure, Given, Problem, Step
from synth.slips import COMMON_SLIPS, SLIPS
from synth.templating import render_phrasing
from synth.verification import equal_answers, same_value

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

    Some misreads change two values at once (the clock's hands swapped change the hour and the
    minutes; a radius taken for a diameter changes what is given and its length). ``also`` names
    the further keys such a misread replaces; each misread is then a tuple aligned with
    ``(param, *also)``: ``Reading("h1", "hand_hour_1", "misread_label", ((5, 40),), also=("m1",))``.
    A key missing from ``params`` counts as None. Use ``changes`` and ``apply``, not the raw tuple.
    """

    param: str
    element: str
    kind: str
    misreads: tuple[Any, ...]
    also: tuple[str, ...] = ()

    @property
    def params(self) -> tuple[str, ...]:
        """Every key a misread of this reading replaces, ``param`` first."""
        return (self.param, *self.also)

    def changes(self, wrong: Any) -> dict[str, Any]:
        """The replacement values of one misread, by key."""
        if not self.also:
            return {self.param: wrong}
        if not isinstance(wrong, (tuple, list)) or len(wrong) != len(self.params):
            raise ValueError(f"Reading {self.element!r}: a misread must give one value for each of {self.params}, "
                             f"got {wrong!r}")
        return dict(zip(self.params, wrong))

    def apply(self, params: Mapping[str, Any], wrong: Any) -> dict[str, Any]:
        """``params`` as the solver misreads them (the figure itself is still drawn from ``params``)."""
        return {**params, **self.changes(wrong)}


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
    # The question's phrasings (jinja2, separated by "---" lines) when templates/problems/<id>.j2 does not exist,
    # so a family can be one file.
    phrasings: ClassVar[str | None] = None

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

    def working_head(self, params: dict[str, Any]) -> tuple[sympy.Basic, str, str] | None:
        """``(answer_of(steps[-1].value), steps[0].text, steps[-1].text)`` of ``derive(params)`` found without
        writing every step, or None (not known: derive). A family that overrides it must return exactly those
        whenever it returns a triple, and derive(params) must then succeed. ``effective_readings`` uses it to
        pass over a misread that ends at the true answer, and to tell a working new (its first line is no
        other's) without deriving it; the visual injectors, to pass over a misread whose last line ends in a
        form the family never writes."""
        return None

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

    def valid(self, params: dict[str, Any]) -> bool:
        """Whether ``params`` describe a problem the family can draw and solve (families with
        constraints, such as a triangle inequality, override it); misreads must keep it."""
        return True

    def vocabulary(self, params: dict[str, Any]) -> Vocabulary | None:
        """The worded labels this problem's lines may carry (``Sum: 11/20``) and what each names.

        None (the default) for families whose lines carry no words; see ``synth.presentation``.
        """
        return None

    def image_role(self, params: dict[str, Any]) -> str:
        """required / useful / not_required / insufficient, known by construction from ``params``."""
        return str(params.get("image_role", "not_required"))

    def fill_stem(self, params: dict[str, Any]) -> str:
        """The sentence a ``fill`` question ends with, blank included (``x = ____``).

        The default blanks every value after ``=`` in the answer's own wording, or asks for the
        answer when it has no ``=``. Override for a more natural sentence (``P(red) = ____``).
        """
        text = self.answer_text(params, self.target(params))[0]
        if "= " not in text:
            return f"Answer: {BLANK}"
        return _AFTER_EQUALS.sub(lambda m: m.group(1) + BLANK, text)

    def judge_step(self, params: dict[str, Any], value: sympy.Basic, previous: sympy.Basic,
                   earlier: tuple[sympy.Basic, ...]) -> tuple[bool, bool] | None:
        """(locally valid, globally correct) for a step, when equivalence to one value is the wrong test.

        ``previous`` is the value of the line before (``initial`` for step 1); ``earlier`` holds
        the values of all lines before this one. The default, None, keeps the verifier's rule:
        a step must be equivalent to the previous line and to ``initial``. Families override it
        when their lines are not all restatements of one value: a system's lines are separate
        equations that hold at the solution, a limit's lines share only the limit.
        """
        return None

    # -- assembly shared by every family ------------------------------------------------

    def build(self, rng: np.random.Generator, *, difficulty: str, question_type: str,
              problem_id: str) -> Problem:
        if question_type not in QUESTION_TYPES:
            raise ValueError(f"question_type must be one of {QUESTION_TYPES}, got {question_type!r}")
        params = self.sample(rng, difficulty)
        drafts = self.derive(params)
        answer = self.target(params)
        ctx = self.question_context(params)
        # The free question draws nothing after the phrasing: mcq/fill draw afterwards, so a
        # free item is the same whichever question types a run allows.
        text = render_phrasing(self.id, ctx, rng, self.phrasings)
        latex = ctx.get("latex", text)
        answer_text, answer_latex = self.answer_text(params, answer)
        choices: tuple[str, ...] | None = None
        if question_type == "mcq":
            choices, letter, sources = self.multiple_choice(params, answer, rng)
            params = {**params, "answer_choice": letter, "choice_sources": list(sources)}
            text = render_phrasing("question_type.mcq", {"question": text, "letters": CHOICE_LETTERS}, rng)
        elif question_type == "fill":
            text = render_phrasing("question_type.fill", {"question": text, "stem": self.fill_stem(params)}, rng)
        return Problem(
            id=problem_id, family=self.id, domain=self.domain, subdomain=self.subdomain,
            grade_band=self.grade_band, difficulty=difficulty, question_type=question_type,  # type: ignore[arg-type]
            image_role=self.image_role(params), question_text=text, question_latex=latex,
            answer_text=answer_text, answer_latex=answer_latex, answer_value=to_text(answer),
            steps=finalize(drafts), givens=self.givens(params), choices=choices, figure=self.figure(params),
            params=params,
        )

    def mal_answers(self, params: dict[str, Any]) -> Iterator[tuple[str, sympy.Basic]]:
        """(``mal:<rule id>``, final answer) of every mal-rule that applies: plausible wrong answers."""
        for rule in self.malrules:
            drafts = self.derive_mal(params, rule.id)
            if drafts:
                yield f"mal:{rule.id}", self.answer_of(drafts[-1].value)

    def slip_answers(self, params: dict[str, Any], rng: np.random.Generator) -> Iterator[tuple[str, sympy.Basic]]:
        """Final answers after one computational slip at a computed step, carried forward (lazily)."""
        drafts = self.derive(params)
        computed = [(i, d.result) for i, d in enumerate(drafts, start=1)
                    if isinstance(d.result, sympy.Rational)]
        for j in rng.permutation(len(computed)):
            k, true = computed[int(j)]
            for kind in dict.fromkeys((*COMMON_SLIPS, "sign_slip")):
                wrong = SLIPS[kind](true, rng)
                if wrong is None or wrong == true:
                    continue
                slipped = self.derive(params, {k: wrong})
                yield f"slip:{kind}@{k}", self.answer_of(slipped[-1].value)

    def multiple_choice(self, params: dict[str, Any], answer: sympy.Basic,
                        rng: np.random.Generator) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
        """Shuffled choice texts, the correct letter, and where each choice came from.

        Distractors are the final answers of the family's own mal-rule solutions first (wrong
        methods a student really uses), then slips, never equal to the answer or each other.
        """
        picked: list[tuple[str, sympy.Basic, str]] = [("answer", answer, self.answer_text(params, answer)[0])]

        def take(candidates: Iterator[tuple[str, sympy.Basic]]) -> None:
            for source, value in candidates:
                if len(picked) == len(CHOICE_LETTERS):
                    return
                try:
                    shown = self.answer_text(params, value)[0]
                except ValueError:  # a wrong answer the family cannot state (complex roots, …)
                    continue
                if any(shown == t or _same_answer(value, v) for _, v, t in picked):
                    continue
                picked.append((source, value, shown))

        take(self.mal_answers(params))
        if len(picked) < len(CHOICE_LETTERS):
            take(self.slip_answers(params, rng))
        if len(picked) < len(CHOICE_LETTERS):
            raise ValueError(f"{self.id} found {len(picked) - 1} distinct distractors for an mcq question "
                             f"(needs {len(CHOICE_LETTERS) - 1}); add mal-rules or computed steps to the family, "
                             "or drop 'mcq' from generate.question_types for it")
        order = [int(i) for i in rng.permutation(len(picked))]
        letter = CHOICE_LETTERS[order.index(0)]
        return tuple(picked[i][2] for i in order), letter, tuple(picked[i][0] for i in order)


QUESTION_TYPES = ("free", "mcq", "fill")
CHOICE_LETTERS = "ABCD"
BLANK = "____"
# Keys build() adds to params for mcq items; they describe the question, not the problem.
QUESTION_KEYS = ("answer_choice", "choice_sources")
# A value after `=` up to the next `or` / `and` / `, ` / end: ``x = 3 or x = −5`` -> two blanks.
_AFTER_EQUALS = re.compile(r"(=\s*)([^=]+?)(?=\s+(?:or|and)\s+|,\s|$)")


def _same_answer(a: sympy.Basic, b: sympy.Basic) -> bool:
    try:
        return bool(same_value(a, b))
    except (TypeError, ValueError):
        return a == b


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


# Exceptions a family's derivation raises on params it cannot work from (treated as "not offered").
_DERIVE_ERRORS = (ArithmeticError, ValueError, TypeError, KeyError, IndexError)

# -- memoised derivations ----------------------------------------------------------------------------------
# A family's derive(params) and derive_mal(params, rule) are pure functions of the params (JSON values): the
# quota planner's applies() checks, effective_readings, the visual injector's attempts and the mal-rule injectors
# ask for the same derivations of one problem again and again. The last results are remembered, keyed by the
# method itself (a patched method is another key) and a repr of params that tells every JSON type apart; params
# holding anything else, and derivations that raise, are not remembered. Steps are immutable: callers get a new
# list each time.
_PLAIN = (int, float, str, bool, type(None))
_DERIVED: OrderedDict[tuple[Any, ...], tuple[StepDraft, ...] | None] = OrderedDict()
_DERIVED_KEPT = 2048


def _plain(value: Any) -> bool:
    if type(value) in _PLAIN:
        return True
    if type(value) in (list, tuple):
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


def params_key(params: Mapping[str, Any]) -> str | None:
    """A key equal for equal JSON params (``repr`` tells int, float, bool, str, list and tuple apart), or None when
    ``params`` holds a value of another type (one whose repr might not tell it from another)."""
    return repr(params) if type(params) is dict and _plain(params) else None


def _memo(key: tuple[Any, ...] | None, compute: Any) -> Any:
    if key is None:
        return compute()
    try:
        return _DERIVED[key]
    except KeyError:
        pass
    out = compute()
    _DERIVED[key] = out
    if len(_DERIVED) > _DERIVED_KEPT:
        _DERIVED.popitem(last=False)
    return out


def _method(family: Family, name: str) -> Any:
    bound = getattr(family, name)
    return getattr(bound, "__func__", bound)


def derive_memo(family: Family, params: dict[str, Any]) -> list[StepDraft]:
    """``family.derive(params)``, remembered for the last derivations (same result, new list)."""
    key = params_key(params)
    func = _method(family, "derive")
    return list(_memo(None if key is None else (func, type(family), key), lambda: tuple(family.derive(params))))


def derive_mal_memo(family: Family, params: dict[str, Any], rule: str) -> list[StepDraft] | None:
    """``family.derive_mal(params, rule)``, remembered for the last derivations (same result, new list or None)."""
    key = params_key(params)
    func = _method(family, "derive_mal")

    def compute() -> tuple[StepDraft, ...] | list[StepDraft] | None:
        drafts = family.derive_mal(params, rule)
        return drafts if drafts is None else tuple(drafts)

    out = _memo(None if key is None else (func, type(family), rule, key), compute)
    return None if out is None else list(out)


def _misread_working(family: Family, misread: dict[str, Any], truth: sympy.Basic) -> tuple[str, ...] | None:
    """The step texts of the solution worked correctly from ``misread``, or None when that is no error
    (the params are not a valid problem, cannot be worked, or end at the true answer)."""
    if not family.valid(misread):
        return None
    try:
        drafts = derive_memo(family, misread)
        if equal_answers(family.answer_of(drafts[-1].value), truth):
            return None
    except _DERIVE_ERRORS:
        return None
    return tuple(d.text for d in drafts)


def _mal_workings(family: Family, params: dict[str, Any]) -> frozenset[tuple[str, ...]]:
    """The step texts of every mal-rule solution that applies to ``params``."""
    out = set()
    for rule in family.malrules:
        try:
            drafts = derive_mal_memo(family, params, rule.id)
        except _DERIVE_ERRORS:
            continue
        if drafts:
            out.add(tuple(d.text for d in drafts))
    return frozenset(out)


def effective_readings(family: Family, params: dict[str, Any], readings: Sequence[Reading]) -> tuple[Reading, ...]:
    """Keep the misreads that change the answer (misreading a value the question does not use is no error),
    and give each wrong working one label.

    A misread whose working is exactly a mal-rule's is left to the mal-rule, and one whose working an
    earlier misread already writes is left to that one (a ±1 square on squared paper that is also the
    key ignored; the value one grid line up that is also the next line's number): the verifier sees only
    the working, so two labels for it could not both be right, and one label twice is one offer. Readings
    earlier in ``readings`` win; pass every reading of a figure in one call.
    """
    truth = family.target(params)
    mal = _mal_workings(family, params)
    offered: set[tuple[str, ...]] = set()
    # A family with a working_head: a misread's working is derived only when its first line is that of a
    # mal-rule's or of an offered working (only then can the whole working be one of theirs).
    firsts: set[str | None] = {_first(w) for w in mal}
    pending: dict[str | None, dict[str, Any]] = {}  # first line -> the offered misread's params, not yet derived
    out = []
    for reading in readings:
        kept = []
        for wrong in reading.misreads:
            misread = reading.apply(params, wrong)
            head = _working_head(family, misread)
            if head is not None:
                answer, first, _ = head
                if equal_answers(answer, truth):
                    continue
                if first not in firsts:
                    firsts.add(first)
                    pending[first] = misread
                    kept.append(wrong)
                    continue
            working = _misread_working(family, misread, truth)
            if working is None or working in mal:
                continue
            earlier = pending.pop(_first(working), None)
            if earlier is not None:  # a possible collision: derive the earlier working now
                offered.add(_misread_working(family, earlier, truth) or ())  # never None: its head was an error
            if working in offered:
                continue
            offered.add(working)
            firsts.add(_first(working))
            kept.append(wrong)
        if kept:
            out.append(replace(reading, misreads=tuple(kept)))
    return tuple(out)


def _first(working: tuple[str, ...]) -> str | None:
    return working[0] if working else None


def _working_head(family: Family, misread: dict[str, Any]) -> tuple[sympy.Basic, str, str] | None:
    if not family.valid(misread):
        return None
    return working_head(family, misread)


def working_head(family: Family, params: dict[str, Any]) -> tuple[sympy.Basic, str, str] | None:
    """``family.working_head(params)``, None where it fails (then derive decides)."""
    try:
        return family.working_head(params)
    except _DERIVE_ERRORS:
        return None
