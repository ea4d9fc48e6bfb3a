"""Superficial controls: visible edits that keep the solution correct (FERMAT's SU items)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import sympy

from perturb.reasoning import register
from perturb.reasoning.base import ControlAttempt, Injector, Skip
from perturb.reasoning.computational import _copied_numbers
from synth.generators.base import Family
from synth.mathparse import parse_math, to_text
from synth.presentation import read_line, with_label, with_unit
from synth.records import Problem, Step
from synth.verifier import DECLARE_RULE, REMARK_RULE, same_value

# The letters a renamed unknown takes: those of the problem's own kind of family (synth.generators._intpoly for
# calculus, _equation otherwise), so the new letter is no rarer in a control than in clean work of its kind (a
# calculus working renamed into ``m``, a letter no clean calculus working uses, marked the control).
_CALCULUS_LETTERS = ("x", "t", "u")
_EQUATION_LETTERS = ("x", "y", "n", "a", "t", "m")


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


# How a pupil declares another letter for the unknown before using it ({new} = the letter used, {old} = the
# question's). The math claim of the line is ``new = old``; spans point at the letters written in it.
_DECLARATIONS = ("Let {new} = {old}", "Let {new} stand for {old}", "Write {new} for {old}", "Put {new} = {old}",
                 "Call {old} {new}", "Using {new} instead of {old}", "{new} = {old}", "Say {new} is {old}",
                 "Rename {old} as {new}", "Set {new} = {old}", "{old} is {new} from here on")
_BARE_SHARE = 0.4  # share of declarations written as bare math (``q = a``); remarks always are (``42 = 6 × 7``)


def _declaration(new: str, old: str, form: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The declaration's text and the spans of its letters (``Let q stand for a``)."""
    text = form.format(new=new, old=old)
    spans = []
    for letter, key in sorted(((new, "{new}"), (old, "{old}")), key=lambda lk: form.index(lk[1])):
        at = form.index(key)
        shift = sum(len(v) - len(k) for v, k in ((new, "{new}"), (old, "{old}")) if form.index(k) < at)
        spans.append((at + shift, at + shift + len(letter)))
    if " = " in text and text.index(" = ") == spans[0][1]:
        spans = [(spans[0][0], spans[1][1])]  # "q = a" is one claim
    return text, tuple(spans)


def declare_rename(problem: Problem, new: str, form: str) -> tuple[Step, ...]:
    """``problem``'s working in the letter ``new``, after a line declaring it for the question's letter."""
    old = problem.params["var"]
    pattern = re.compile(rf"(?<![A-Za-z\\]){re.escape(old)}(?![A-Za-z])")
    renamed = [replace(s, value=pattern.sub(new, s.value), text=pattern.sub(new, s.text),
                       latex=pattern.sub(new, s.latex), math=pattern.sub(new, s.math) if s.math else "")
               for s in problem.steps]
    first = next((i for i, (a, b) in enumerate(zip(renamed, problem.steps)) if a.text != b.text), 0)
    text, spans = _declaration(new, old, form)
    claim = f"{new} = {old}"
    line = Step(index=0, rule=DECLARE_RULE, value=claim, text=text, latex=claim, math=claim, spans=spans)
    lines = (*renamed[:first], line, *renamed[first:])
    return tuple(replace(s, index=i) for i, s in enumerate(lines, start=1))


class VariableRename(Injector):
    """Solve with another letter, declared first ("Let q stand for a"); the question keeps its own.

    An undeclared change of letter is the error variable_misnaming; only a visibly declared rename
    is a control (the verifier reads a ``declare`` line as the rename it states).
    """

    subtype = "variable_rename"
    # v2: the rename is declared on a line of its own before the first line using the new letter, in one of
    # the families' own letters; v3: the letters of the problem's kind of family
    version = 3

    def applies(self, family: Family, problem: Problem) -> bool:
        return isinstance(problem.params.get("var"), str)

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> ControlAttempt | Skip:
        old = problem.params["var"]
        pool = _CALCULUS_LETTERS if problem.family.startswith("calculus.") else _EQUATION_LETTERS
        choices = [v for v in pool if v != old and not re.search(rf"(?<![A-Za-z]){v}(?![A-Za-z])",
                                                                 problem.question_text)]
        if not choices:
            return Skip("no_free_letter")
        new = choices[int(rng.integers(len(choices)))]
        bare = _DECLARATIONS.index("{new} = {old}")
        others = [f for f in _DECLARATIONS if f != _DECLARATIONS[bare]]
        form = _DECLARATIONS[bare] if rng.random() < _BARE_SHARE else others[int(rng.integers(len(others)))]
        steps = declare_rename(problem, new, form)
        declared = next(s.index for s in steps if s.rule == DECLARE_RULE)
        return ControlAttempt(steps, {"from": old, "to": new, "declared_step": declared,
                                      "text": steps[declared - 1].text})


# Plain math -> LaTeX for the numeric lines equivalent_format rewrites (anything else: no rewrite).
_PLAIN_TOKEN = re.compile(r"(?P<frac>\d+/\d+)|(?P<num>\d+(?:\.\d+)?)|(?P<pow>\^\d+)|(?P<sym>[−×÷π()=<>≤≥+])"
                          r"|(?P<var>[a-z])|(?P<space> )")
_LATEX_SYM = {"−": "-", "×": r"\times", "÷": r"\div", "π": r"\pi", "(": r"\left(", ")": r"\right)", "≤": r"\le",
              "≥": r"\ge"}
_ATOM = r"(?:\d+(?:\.\d+)?(?:/\d+)?(?:\^\d+)?|π|[a-z])"
_SPELLED_UNITS = {"h": "hours", "min": "minutes", "s": "seconds"}


def plain_latex(math: str) -> str | None:
    """LaTeX of a line of numbers, letters, + − × ÷ ^ π and brackets (``1/4 × 2`` -> ``\\frac{1}{4} \\times 2``)."""
    out, at = [], 0
    for m in _PLAIN_TOKEN.finditer(math):
        if m.start() != at:
            return None
        at = m.end()
        if m["frac"]:
            p, q = m["frac"].split("/")
            out.append(rf"\frac{{{p}}}{{{q}}}")
        elif m["pow"]:
            out.append(f"^{{{m['pow'][1:]}}}")
        elif m["sym"]:
            out.append(_LATEX_SYM.get(m["sym"], m["sym"]))
        else:
            out.append(m.group())
    return "".join(out) if at == len(math) else None


def _terminating(value: sympy.Rational) -> bool:
    q = int(value.q)
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def _decimal_of(p: int, q: int) -> str | None:
    value = sympy.Rational(p, q)
    if value.q == 1 or not _terminating(value):
        return None
    digits = 0
    while (value * 10**digits).q != 1:
        digits += 1
    return f"{float(value):.{digits}f}"


def _rewrites(math: str) -> list[tuple[str, str, str]]:
    """(kind, rewritten math, what) for each equivalent way to write one part of a line (checked by value later)."""
    out = []
    for m in re.finditer(r"(?<![\d.^/])(\d+)/(\d+)(?![\d.^/])", math):
        dec = _decimal_of(int(m[1]), int(m[2]))
        if dec is not None:
            out.append(("fraction_to_decimal", math[:m.start()] + dec + math[m.end():], f"{m.group()} as {dec}"))
    for m in re.finditer(r"(?<![\d./^])(\d+\.\d+)(?![\d./^])", math):
        value = sympy.Rational(m[1])
        if value.q != 1:
            frac = f"{value.p}/{value.q}"
            out.append(("decimal_to_fraction", math[:m.start()] + frac + math[m.end():], f"{m[1]} as {frac}"))
    for m in re.finditer(rf"(?=(?<![\w.^/])({_ATOM}) × ({_ATOM})(?![\w.^/]))", math):
        a, b = m[1], m[2]
        if a != b:
            end = m.start() + len(a) + 3 + len(b)
            out.append(("reordered_factors", f"{math[:m.start()]}{b} × {a}{math[end:]}", f"{a} × {b} as {b} × {a}"))
    for m in re.finditer(r"(?<![\w.^/])(\d+) ÷ (\d+)(?![\w.^/])", math):
        out.append(("division_as_fraction", f"{math[:m.start()]}{m[1]}/{m[2]}{math[m.end():]}",
                    f"{m.group()} as {m[1]}/{m[2]}"))
    return out


class EquivalentFormat(Injector):
    """Write one part of the working in an equivalent form a pupil might use.

    A fraction as a decimal or back, factors in the other order, a division as a fraction bar, the
    answer's unit spelled out; any line, the answer included (unless the question asks for a form).
    Every rewrite is kept only if it reads as the same value.
    """

    subtype = "equivalent_format"
    # v2: keeps the line's worded label and unit; skips answers with a requested form
    # v3: varied forms on any line (no more ".0" on whole numbers)
    version = 3

    @staticmethod
    def _options(problem: Problem) -> list[tuple[str, int, str, str, str]]:
        """(kind, step index, text, LaTeX, what) of every equivalent rewrite of the working."""
        options = []
        n = len(problem.steps)
        for step in problem.steps:
            if step.rule in (REMARK_RULE, DECLARE_RULE) or " or " in step.text:
                continue
            if step.index == n and problem.params.get("answer_form"):
                continue  # a requested form makes another form of the answer an error (format_ignored)
            line = read_line(step.text)
            try:
                meant = parse_math(line.math)
            except Exception:  # noqa: BLE001 - a line our parser cannot read is not rewritten
                continue
            found = [(k, m, w) for k, m, w in _rewrites(line.math)]
            if step.index == n and line.unit in _SPELLED_UNITS:
                found.append(("spelled_unit", line.math, f"{line.unit} as {_SPELLED_UNITS[line.unit]}"))
            for kind, math, what in found:
                latex = plain_latex(math)
                if latex is None:
                    continue
                if kind != "spelled_unit":
                    try:
                        if not same_value(parse_math(math), meant):
                            continue
                    except Exception:  # noqa: BLE001 - an unreadable rewrite is not offered
                        continue
                text = math
                if line.unit:
                    unit = _SPELLED_UNITS[line.unit] if kind == "spelled_unit" else line.unit
                    text, latex = with_unit(text, latex, unit)
                if line.label:
                    text, latex = with_label(text, latex, line.label)
                if text != step.text:
                    options.append((kind, step.index, text, latex, what))
        return options

    def applies(self, family: Family, problem: Problem) -> bool:
        return bool(self._options(problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> ControlAttempt | Skip:
        options = self._options(problem)
        if not options:
            return Skip("no_equivalent_form")
        kinds = sorted({o[0] for o in options})
        kind = kinds[int(rng.integers(len(kinds)))]
        pool = [o for o in options if o[0] == kind]
        _, k, text, latex, what = pool[int(rng.integers(len(pool)))]
        old = problem.steps[k - 1]
        edited = replace(old, text=text, latex=latex, math=text if old.math else "")
        steps = tuple(edited if s.index == k else s for s in problem.steps)
        return ControlAttempt(steps, {"step": k, "from": old.text, "to": text, "form": kind, "change": what})


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


# How a pupil writes a true fact the solution does not use ({fact} is its math claim): a side calculation in
# the margin, without words. Sentences ("By the way, 42 = 6 × 7.") marked the control in worked solutions, whose
# lines have no words (800 bases, seed 18001: irrelevant_info's AUC against the error rows 0.80 with 60 % of
# remarks in sentences, 0.765 with none; in student style 0.79 either way).
_ASIDES = ("{fact}", "({fact})")


def _aside(fact: str, form: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    at = form.index("{fact}")
    return form.format(fact=fact), ((at, at + len(fact)),)


class IrrelevantInfo(Injector):
    """A true remark about numbers of the question that the solution does not need (``42 = 6 × 7`` in the margin).

    The remark's form (bare or in brackets) and its place (before the first line, between lines, after the
    answer) vary, so no word or position marks the control.
    Where the verifier cannot yet read a remark by its rule, it falls back to a ``Note: `` line.
    """

    subtype = "irrelevant_info"
    # v2: varied facts, phrasings (bare in 40 %) and places; the remark is known by its rule, not a "Note:" prefix
    # v3: the remark is a side calculation without words (in brackets or not)
    # v4: also about whole numbers the figure gives
    version = 4

    @staticmethod
    def _facts(problem: Problem) -> list[str]:
        # numbers the question writes out, and whole numbers it gives in its figure (a bar's height, a point's
        # coordinate): a figure problem gets side calculations as often as a worded one, so the control is no
        # rarer among figure problems (whose chains say they read a figure) than among the others
        shown = {int(m[1]) for g in problem.givens if (m := re.fullmatch(r"[−-]?(\d{1,4})", g.value))}
        numbers = sorted({abs(v) for _, v in _copied_numbers(problem.params, problem.question_text)}
                         | {n for n in shown if n >= 2})
        facts = []
        for n in numbers:
            divisor = next((d for d in range(2, int(n**0.5) + 1) if n % d == 0), None)
            if divisor is not None:
                facts += [f"{n} = {divisor} × {n // divisor}", f"{divisor} × {n // divisor} = {n}"]
            facts += [f"2 × {n} = {2 * n}", f"{n} + {n} = {2 * n}"]
            if n % 2 == 0:
                facts.append(f"{n} ÷ 2 = {n // 2}")
            if n <= 30:
                facts.append(f"{n}^2 = {n * n}")
            if n > 10 and n % 10:
                facts.append(f"{n} = {n - n % 10} + {n % 10}")
        facts += [f"{a} + {b} = {a + b}" for a, b in zip(numbers, numbers[1:])]
        facts += [f"{b} − {a} = {b - a}" for a, b in zip(numbers, numbers[1:]) if b > a]
        facts += [f"{b} > {a}" for a, b in zip(numbers, numbers[1:]) if b > a]
        return facts

    def applies(self, family: Family, problem: Problem) -> bool:
        return len(problem.steps) >= 2 and bool(self._facts(problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> ControlAttempt | Skip:
        facts = self._facts(problem)
        if not facts or len(problem.steps) < 2:
            return Skip("no_fact_to_add")
        fact = facts[int(rng.integers(len(facts)))]
        latex = fact.replace("×", r"\times").replace("÷", r"\div").replace("−", "-")
        form = _ASIDES[int(rng.integers(len(_ASIDES)))]
        text, spans = _aside(fact, form)
        remark = Step(index=0, rule=REMARK_RULE, value=to_text(parse_math(fact)), text=text, latex=latex,
                      math=fact, spans=spans)
        after = int(rng.integers(0, len(problem.steps) + 1))  # before the first line ... after the answer
        lines = (*problem.steps[:after], remark, *problem.steps[after:])
        steps = tuple(replace(s, index=i) for i, s in enumerate(lines, start=1))
        return ControlAttempt(steps, {"inserted_step": after + 1, "text": remark.text})


for _cls in (StepOmission, VariableRename, EquivalentFormat, ReorderTerms, IrrelevantInfo):
    register(_cls())
