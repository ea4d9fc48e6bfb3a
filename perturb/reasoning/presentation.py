"""Presentation errors (FERMAT's PR axis): the math stays right, the way it is written does not.

Every injector here edits only the shown lines (text, LaTeX and, for a renamed variable, the
value), so each can also be stacked on another error (``perturb.reasoning.multi``). Its label
is confirmed by the verifier's presentation checker (``synth.presentation``), never taken from
the injector.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace
from fractions import Fraction
from math import gcd

import numpy as np
import sympy

from perturb.reasoning import register
from perturb.reasoning.base import Attempt, Injector, Intent, ShownKey, Skip, choose_step, shown_key
from synth.generators.base import Family, latex_number
from synth.generators.expr import decimal_text, is_decimal
from synth.mathparse import MathParseError
from synth.presentation import (
    TERM_SWAPS,
    UNITS,
    answer_part,
    label_latex,
    label_words,
    one_variable_relation,
    read_line,
    with_label,
    with_unit,
)
from synth.records import Problem, Step
from synth.verifier import REMARK, parse_step, same_value

# Units a pupil writes instead of the right one: a neighbour of the same kind, or the wrong dimension.
_CONFUSED_UNITS: dict[str, tuple[str, ...]] = {
    "mm": ("cm",), "cm": ("m", "mm", "cm²"), "m": ("cm", "km", "m²"), "km": ("m",), "g": ("kg",), "kg": ("g",),
    "t": ("kg",), "mL": ("L",), "L": ("mL",), "s": ("min",), "min": ("h", "s"), "h": ("min",), "days": ("h",),
    "m/s": ("km/h", "m"), "km/h": ("m/s", "km"), "in": ("ft", "cm"), "ft": ("in", "m"),
    # An area written with the length unit, a volume with the area unit (or the length unit).
    **{f"{u}²": (u,) for u in ("mm", "cm", "m", "km", "in", "ft")},
    **{f"{u}³": (f"{u}²", u) for u in ("mm", "cm", "m", "in", "ft")},
}
_LETTERS = ("y", "x", "z", "m", "k", "p", "a", "t")


def _lines(problem: Problem) -> list[Step]:
    """The working lines (side remarks left out)."""
    return [s for s in problem.steps if not s.text.startswith(REMARK)]


def _renumbered(steps: list[Step] | tuple[Step, ...]) -> tuple[Step, ...]:
    return tuple(replace(s, index=i) for i, s in enumerate(steps, start=1))


def _swap_in(steps: tuple[Step, ...], k: int, new: Step) -> tuple[Step, ...]:
    return tuple(new if s.index == k else s for s in steps)


def _last_line_intent(k: int, n: int, subtype: str, explanation: str, edit: dict) -> Intent:
    # The verifier counts an error on the last line as carried to the end (nothing follows it).
    return Intent(first_error_step=k, propagated=k == n, answer_changed=False, explanation=explanation,
                  edit={"step": k, **edit}, presentation=subtype)


class _Presentation(Injector):
    edits_text = True


class FormatIgnored(_Presentation):
    """The question asks for a form (a fraction in simplest form, a decimal); the answer is right in another."""

    subtype = "format_ignored"
    # v2: a form a sibling variant of the base already shows is not proposed again (``avoid``, ``novel``)
    version = 2
    avoids = True

    @staticmethod
    def _options(problem: Problem) -> list[tuple[tuple[Step, ...], str]]:
        form = problem.params.get("answer_form")
        steps = problem.steps
        if not form or not steps or steps[-1].text.startswith(REMARK):
            return []
        last = steps[-1]
        line = read_line(last.text)
        shown = answer_part(line.math)
        try:
            value = parse_step(shown)
        except MathParseError:
            return []
        if not isinstance(value, sympy.Rational) or value.q == 1:
            return []
        options: list[tuple[tuple[Step, ...], str]] = []
        f = Fraction(int(value.p), int(value.q))
        if form == "fraction" and is_decimal(f):
            new = _rewrite(last, line.math, decimal_text(f).replace("-", "−"), decimal_text(f))
            options.append(((*steps[:-1], new), "writes the answer as a decimal"))
        if form == "decimal":
            text = ("−" if f < 0 else "") + f"{abs(f.numerator)}/{f.denominator}"
            options.append(((*steps[:-1], _rewrite(last, line.math, text, latex_number(value))),
                            "writes the answer as a fraction"))
        if form == "fraction":
            stop = _unsimplified(steps, value)
            if stop is not None:
                prev = steps[stop - 1]
                p, q = (int(x) for x in re.split(r" ?[/÷] ?", prev.text.replace("−", "")))
                sign = "−" if prev.text.startswith("−") else ""
                text, latex = f"{sign}{p}/{q}", ("-" if sign else "") + rf"\frac{{{p}}}{{{q}}}"
                if prev.text == text:  # already written as a fraction: keep its own LaTeX
                    latex = prev.latex
                if line.unit:
                    text, latex = with_unit(text, latex, line.unit)
                if line.label:
                    text, latex = with_label(text, latex, line.label)
                options.append(((*steps[: stop - 1], replace(prev, text=text, latex=latex)),
                                "stops before simplifying the fraction"))
        return options

    def applies(self, family: Family, problem: Problem) -> bool:
        return bool(self._options(problem))

    def novel(self, family: Family, problem: Problem, placement: str | int, avoid: Collection[ShownKey]) -> bool:
        """Whether some other form of the answer is not already shown by a sibling variant (a fixed few)."""
        return any(shown_key(steps) not in avoid for steps, _ in self._options(problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int, avoid: Collection[ShownKey] = ()) -> Attempt | Skip:
        options = [o for o in self._options(problem) if shown_key(o[0]) not in avoid]
        if not options:
            return Skip("no_other_form")
        steps, what = options[int(rng.integers(len(options)))]
        k = len(steps)
        if choose_step([k], rng, placement) is None:
            return Skip("no_step_at_placement")
        form = problem.params["answer_form"]
        asked = {"fraction": "a fraction in its simplest form", "decimal": "a decimal"}.get(form, form)
        explanation = (f"The question asks for the answer as {asked}, but the solution {what} "
                       f"({read_line(steps[-1].text).math}); the value is right, the form is not.")
        return Attempt(_renumbered(steps), _last_line_intent(
            k, k, self.subtype, explanation, {"form": form, "from": problem.steps[-1].text, "to": steps[-1].text}))


def _unsimplified(steps: tuple[Step, ...], value: sympy.Rational) -> int | None:
    """The last earlier line (1-based) that is the answer as a fraction or division not yet in lowest terms.

    ``6/10`` or ``6 ÷ 10`` before ``3/5``: the pupil stops there and writes ``6/10`` as the answer.
    """
    for j in range(len(steps) - 1, 0, -1):
        line = read_line(steps[j - 1].text)
        if steps[j - 1].text.startswith(REMARK) or line.label or line.unit:
            continue
        m = re.fullmatch(r"−?(\d+)(?:/| ÷ )(\d+)", line.math)
        if m is None or gcd(int(m[1]), int(m[2])) == 1 or m[2] in ("0", "1"):
            continue
        try:
            if parse_step(line.math) == value:
                return j
        except MathParseError:
            continue
    return None


def _rewrite(last: Step, math: str, shown: str, shown_latex: str) -> Step:
    """The last line with its answer written as ``shown``, keeping its label, its unit and any ``x = ``."""
    line = read_line(last.text)
    head, sep, _ = math.rpartition("= ")
    text = f"{head}{sep}{shown}"
    latex_head, lsep, _ = last.latex.rpartition("= ")
    latex = f"{latex_head}{lsep}{shown_latex}" if sep and lsep else shown_latex
    if line.unit:
        text, latex = with_unit(text, latex, line.unit)
    if line.label:
        text, latex = with_label(text, latex, line.label)
    return replace(last, text=text, latex=latex)


class IncorrectUnits(_Presentation):
    """The answer carries the wrong unit: the question's other unit, a neighbour, or the wrong dimension."""

    subtype = "incorrect_units"

    @staticmethod
    def _wrong_units(problem: Problem, unit: str) -> list[str]:
        # Units the question writes after a number ("10 kg 755 g"), so "a ball's path" is no "s".
        said = [UNITS[u] for u in re.findall(r"(?<=\d )(" + "|".join(
            re.escape(u) for u in sorted(UNITS, key=len, reverse=True)) + r")(?![A-Za-z²³/^])", problem.question_text)]
        given = [u for u in dict.fromkeys(said) if u != unit]
        return given + [u for u in _CONFUSED_UNITS.get(unit, ()) if u not in given]

    def applies(self, family: Family, problem: Problem) -> bool:
        unit = problem.params.get("answer_unit")
        return bool(unit) and any(read_line(s.text).unit == unit for s in _lines(problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        unit = problem.params.get("answer_unit")
        sites = [s.index for s in _lines(problem) if read_line(s.text).unit == unit]
        k = choose_step(sites, rng, placement)
        if k is None or not unit:
            return Skip("no_unit_at_placement")
        step = problem.steps[k - 1]
        wrong_units = self._wrong_units(problem, unit)
        if not wrong_units:
            return Skip("no_wrong_unit")
        wrong = wrong_units[0] if rng.random() < 0.6 else wrong_units[int(rng.integers(len(wrong_units)))]
        line = read_line(step.text)
        text, latex = with_unit(step.text[: step.text.rindex(" ")], _strip_latex_unit(step.latex), wrong)
        explanation = f"Step {k} gives the answer in {wrong} where the question asks for {unit}; the number is right."
        return Attempt(problem.steps[: k - 1] + (replace(step, text=text, latex=latex),) + problem.steps[k:],
                       _last_line_intent(k, len(problem.steps), self.subtype, explanation,
                                         {"from": line.unit, "to": wrong}))


def _strip_latex_unit(latex: str) -> str:
    return latex[: latex.rindex(r"\ ")] if r"\ " in latex else latex


class VariableMisnaming(_Presentation):
    """The unknown changes name midway: for the rest of the working, or on one line only."""

    subtype = "variable_misnaming"

    @staticmethod
    def _sites(family: Family, problem: Problem) -> list[int]:
        var = problem.params.get("var")
        if not isinstance(var, str) or not one_variable_relation(family.initial(problem.params), var):
            return []  # the checker compares names on one-variable equations and inequalities only
        pattern = _name(var)
        with_var = [s.index for s in _lines(problem) if pattern.search(read_line(s.text).math)]
        return with_var[1:]  # the first line fixes the name; a change can only come after it

    def applies(self, family: Family, problem: Problem) -> bool:
        return bool(self._sites(family, problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        k = choose_step(self._sites(family, problem), rng, placement)
        if k is None:
            return Skip("no_site_at_placement")
        var = problem.params["var"]
        free = [v for v in _LETTERS if v != var and not _name(v).search(problem.question_text)]
        new = free[int(rng.integers(len(free)))]
        rest = bool(rng.random() < 0.5)
        pattern = _name(var)
        steps = tuple(replace(s, text=pattern.sub(new, s.text), latex=pattern.sub(new, s.latex),
                              value=pattern.sub(new, s.value))
                      if (s.index == k or (rest and s.index > k)) and not s.text.startswith(REMARK) else s
                      for s in problem.steps)
        renamed = [s.index for s, old in zip(steps, problem.steps) if s.text != old.text]
        n = len(steps)
        scope = "from then on" if rest and len(renamed) > 1 else "on that line"
        explanation = f"Step {k} calls the unknown {new} instead of {var} ({scope}); the working is otherwise right."
        return Attempt(steps, Intent(first_error_step=k, propagated=renamed == list(range(k, n + 1)),
                                     answer_changed=False, explanation=explanation,
                                     edit={"step": k, "from": var, "to": new, "steps": renamed},
                                     presentation=self.subtype))


def _name(var: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z\\]){re.escape(var)}(?![A-Za-z])")


# logic_disruption is retired (synth.taxonomy.RETIRED says why): every family writes its working as a chain of
# equivalent lines, so two lines swapped give a valid skip-ahead (the step_omission control's pattern) and a line
# that goes backwards; no line ever uses a value not yet derived, which is what the label would have to say.


class _LabelSwap(_Presentation):
    """Replace one word of a line's worded label (``Sum: 11/20`` -> ``Product: 11/20``)."""

    def words(self, family: Family, problem: Problem) -> dict[str, tuple[str, ...]]:
        """Each swappable word (lower case) and what it may become."""
        raise NotImplementedError

    def keep(self, family: Family, problem: Problem, step: Step, labels: list[str]) -> list[str]:
        """Which of the relabellings of ``step`` to offer (all of them, unless a subclass knows better)."""
        return labels

    def _relabellings(self, family: Family, problem: Problem, step: Step) -> list[str]:
        label = read_line(step.text).label
        if label is None:
            return []
        swaps = self.words(family, problem)
        out = []
        for word in dict.fromkeys(label_words(label)):
            at = re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", label, flags=re.IGNORECASE)
            if at is None:
                continue
            for new in swaps.get(word, ()):
                found = at.group()
                written = new.upper() if len(found) > 1 and found.isupper() else \
                    new.capitalize() if found[:1].isupper() else new
                out.append(label[: at.start()] + written + label[at.end():])
        return self.keep(family, problem, step, list(dict.fromkeys(out)))

    def _sites(self, family: Family, problem: Problem) -> list[int]:
        return [s.index for s in _lines(problem) if self._relabellings(family, problem, s)]

    def applies(self, family: Family, problem: Problem) -> bool:
        return bool(self._sites(family, problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        k = choose_step(self._sites(family, problem), rng, placement)
        if k is None:
            return Skip("no_label_at_placement")
        step = problem.steps[k - 1]
        options = self._relabellings(family, problem, step)
        new_label = options[int(rng.integers(len(options)))]
        label = read_line(step.text).label or ""
        text = new_label + step.text[len(label):]
        old_tex, new_tex = label_latex(label), label_latex(new_label)
        if not step.latex.startswith(old_tex):
            return Skip("label_not_in_latex")
        latex = new_tex + step.latex[len(old_tex):]
        explanation = (f"Step {k} is labelled '{new_label}' where it states '{label}'; "
                       "the number is right, the word is wrong.")
        return Attempt(_swap_in(problem.steps, k, replace(step, text=text, latex=latex)), _last_line_intent(
            k, len(problem.steps), self.subtype, explanation, {"from": label, "to": new_label}))


class TerminologySwap(_LabelSwap):
    """A mathematical term swapped for the one pupils confuse it with (sum/product, area/perimeter, ...)."""

    subtype = "terminology_swap"

    def words(self, family: Family, problem: Problem) -> dict[str, tuple[str, ...]]:
        return {w: (partner,) for w, partner in TERM_SWAPS.items()}


class ContextualSwap(_LabelSwap):
    """A name or object from the question's story swapped for another one from it (Chen's share -> Ava's)."""

    subtype = "contextual_swap"

    def words(self, family: Family, problem: Problem) -> dict[str, tuple[str, ...]]:
        vocab = family.vocabulary(problem.params)
        context = vocab.context if vocab else ()
        return {w: tuple(c for c in context if c != w) for w in context}

    def keep(self, family: Family, problem: Problem, step: Step, labels: list[str]) -> list[str]:
        """Labels naming another quantity of the story first (P(red) -> P(blue)); never one worth the same.

        A swap to a label the problem knows with the line's own value (two colours with equal counts)
        says nothing wrong, and a made-up label only when the story offers no other quantity.
        """
        vocab = family.vocabulary(problem.params)
        if vocab is None:
            return []
        try:
            value = parse_step(step.text)
        except MathParseError:
            return []
        known = {label_words(k): v for k, v in vocab.labels.items()}
        other = [lb for lb in labels if label_words(lb) in known and not same_value(known[label_words(lb)], value)]
        if other:
            return other
        return [lb for lb in labels if label_words(lb) not in known
                and len(set(label_words(lb))) == len(label_words(lb))]


for _cls in (FormatIgnored, IncorrectUnits, VariableMisnaming, TerminologySwap, ContextualSwap):
    register(_cls())
