"""Superficial controls: visible edits that keep the solution correct (FERMAT's SU items)."""

from __future__ import annotations

import re

import numpy as np
import sympy

from perturb.reasoning import register
from perturb.reasoning.base import ControlAttempt, Injector, Skip
from perturb.reasoning.computational import _copied_numbers
from synth.generators.base import Family
from synth.mathparse import parse_math, to_text
from synth.presentation import read_line, with_label, with_unit
from synth.records import Problem, Step
from synth.verifier import REMARK

_GREEK_FREE = ("p", "q", "k", "m", "w", "z")


class StepOmission(Injector):
    """Leave out one routine intermediate line; every remaining line still follows."""

    subtype = "step_omission"

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> ControlAttempt | Skip:
        steps = problem.steps
        if len(steps) < 3:
            return Skip("too_few_steps")
        k = int(rng.integers(1, len(steps)))  # never the last line: it states the answer
        kept = steps[: k - 1] + steps[k:]
        renumbered = tuple(Step(index=i, rule=s.rule, value=s.value, text=s.text, latex=s.latex, inputs=s.inputs)
                           for i, s in enumerate(kept, start=1))
        return ControlAttempt(renumbered, {"omitted_step": k, "text": steps[k - 1].text})


class VariableRename(Injector):
    """Solve with another letter throughout (the question keeps its own)."""

    subtype = "variable_rename"

    def applies(self, family: Family, problem: Problem) -> bool:
        return isinstance(problem.params.get("var"), str)

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> ControlAttempt | Skip:
        old = problem.params["var"]
        choices = [v for v in _GREEK_FREE if v != old]
        new = choices[int(rng.integers(len(choices)))]
        pattern = re.compile(rf"(?<![A-Za-z\\]){re.escape(old)}(?![A-Za-z])")
        renamed = tuple(Step(index=s.index, rule=s.rule, value=pattern.sub(new, s.value),
                             text=pattern.sub(new, s.text), latex=pattern.sub(new, s.latex), inputs=s.inputs)
                        for s in problem.steps)
        return ControlAttempt(renamed, {"from": old, "to": new})


def _decimal_text(value: sympy.Rational) -> str | None:
    """A terminating decimal for a non-integer rational (7/4 -> 1.75), else None."""
    if value.q == 1:
        return None
    q = value.q
    for p in (2, 5):
        while q % p == 0:
            q //= p
    if q != 1:
        return None
    digits = 0
    while (value * 10**digits).q != 1:
        digits += 1
    text = f"{abs(value.p) / value.q:.{digits}f}"
    return ("−" if value < 0 else "") + text


class EquivalentFormat(Injector):
    """Write the final value in an equivalent form: a fraction as a decimal, an integer as n.0."""

    subtype = "equivalent_format"
    version = 2  # v2: keeps the line's worded label and unit; skips answers with a requested form

    @staticmethod
    def _shown(family: Family, problem: Problem) -> str | None:
        last = problem.steps[-1]
        if " or " in last.text or problem.params.get("answer_form"):
            return None  # a requested form makes another form of the answer an error (format_ignored)
        answer = family.answer_of(parse_math(last.value))
        if not isinstance(answer, sympy.Rational):
            return None
        shown = _decimal_text(answer) or (f"{abs(int(answer))}.0" if answer.q == 1 else None)
        if shown is None or last.text.endswith(shown.lstrip("−")):
            return None
        return ("−" + shown) if answer.q == 1 and answer < 0 else shown

    def applies(self, family: Family, problem: Problem) -> bool:
        """Only answers with another exact written form: terminating decimals, or integers."""
        return self._shown(family, problem) is not None

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> ControlAttempt | Skip:
        last = problem.steps[-1]
        shown = self._shown(family, problem)
        if shown is None:
            return Skip("no_equivalent_form")
        line = read_line(last.text)
        head, sep, _ = line.math.rpartition("= ")
        text = f"{head}{sep}{shown}" if sep else shown
        latex_head, lsep, _ = last.latex.rpartition("= ")
        latex = f"{latex_head}{lsep}{shown.replace('−', '-')}" if lsep else shown.replace("−", "-")
        if line.unit:  # keep the worded label and the unit the line was written with
            text, latex = with_unit(text, latex, line.unit)
        if line.label:
            text, latex = with_label(text, latex, line.label)
        edited = Step(index=last.index, rule=last.rule, value=last.value, text=text, latex=latex, inputs=last.inputs)
        return ControlAttempt(problem.steps[:-1] + (edited,), {"step": last.index, "from": last.text, "to": text})


class ReorderTerms(Injector):
    """Swap the two operands of a commutative sum or product written in one line."""

    subtype = "reorder_terms"
    version = 2  # v2: only lines whose swap shows are candidates

    _pair = re.compile(r"^(?P<a>−?\d+(?:/\d+)?) (?P<op>[+×]) (?P<b>\d+(?:/\d+)?)$")

    def _sites(self, problem: Problem) -> list[tuple[Step, re.Match[str]]]:
        """Lines whose swap shows: equal operands would read the same, and a leading negative
        operand cannot move behind the operator (`5 + −3` is not how the line is written)."""
        matches = [(s, self._pair.match(s.text)) for s in problem.steps]
        return [(s, m) for s, m in matches if m and m["a"] != m["b"] and not m["a"].startswith("−")]

    def applies(self, family: Family, problem: Problem) -> bool:
        return bool(self._sites(problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> ControlAttempt | Skip:
        sites = self._sites(problem)
        if not sites:
            return Skip("no_commutative_line")
        step, m = sites[int(rng.integers(len(sites)))]
        text = f"{m['b']} {m['op']} {m['a']}"
        latex = text.replace("×", r"\times")
        value = to_text(parse_math(text))
        edited = Step(index=step.index, rule=step.rule, value=value, text=text, latex=latex, inputs=step.inputs)
        steps = tuple(edited if s.index == step.index else s for s in problem.steps)
        return ControlAttempt(steps, {"step": step.index, "from": step.text, "to": text})


class IrrelevantInfo(Injector):
    """A true remark about a number in the question that the solution does not need (``Note: 42 = 6 × 7``)."""

    subtype = "irrelevant_info"

    @staticmethod
    def _facts(problem: Problem) -> list[str]:
        numbers = sorted({abs(v) for _, v in _copied_numbers(problem.params, problem.question_text)})
        facts = []
        for n in numbers:
            divisor = next((d for d in range(2, int(n**0.5) + 1) if n % d == 0), None)
            if divisor is not None:
                facts.append(f"{n} = {divisor} × {n // divisor}")
        facts += [f"{a} + {b} = {a + b}" for a, b in zip(numbers, numbers[1:])]
        return facts

    def applies(self, family: Family, problem: Problem) -> bool:
        return len(problem.steps) >= 2 and bool(self._facts(problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> ControlAttempt | Skip:
        facts = self._facts(problem)
        if not facts or len(problem.steps) < 2:
            return Skip("no_fact_to_add")
        fact = facts[int(rng.integers(len(facts)))]
        after = int(rng.integers(0, len(problem.steps)))  # never after the last line: it states the answer
        remark = Step(index=0, rule="remark", value=to_text(parse_math(fact)), text=REMARK + fact,
                      latex=r"\text{Note: } " + fact.replace("×", r"\times"))
        lines = (*problem.steps[:after], remark, *problem.steps[after:])
        steps = tuple(Step(index=i, rule=s.rule, value=s.value, text=s.text, latex=s.latex, inputs=s.inputs)
                      for i, s in enumerate(lines, start=1))
        return ControlAttempt(steps, {"inserted_step": after + 1, "text": REMARK + fact})


for _cls in (StepOmission, VariableRename, EquivalentFormat, ReorderTerms, IrrelevantInfo):
    register(_cls())
