"""Notational errors: a line WRITTEN wrongly while the working carries on from what was meant."""

from __future__ import annotations

import re

import numpy as np

from perturb.reasoning import register
from perturb.reasoning.base import Attempt, Injector, Intent, Skip, choose_step
from synth.generators.base import Family
from synth.mathparse import MathParseError
from synth.records import Problem, Step
from synth.verifier import parse_step, same_value

# Binary operators as the step writers space them, in text and in LaTeX, with the swap a pupil makes.
_TEXT_OPS = {" + ": " − ", " − ": " + ", " × ": " ÷ ", " ÷ ": " × "}
_LATEX_OPS = {" + ": " - ", " - ": " + ", r" \times ": r" \div ", r" \div ": r" \times "}
_TEXT_TO_LATEX = {" + ": " + ", " − ": " - ", " × ": r" \times ", " ÷ ": r" \div "}


def _occurrences(text: str, tokens: list[str]) -> list[tuple[int, str]]:
    pattern = "|".join(re.escape(t) for t in tokens)
    return [(m.start(), m.group()) for m in re.finditer(pattern, text)]


def _parse(text: str) -> object | None:
    try:
        return parse_step(text)
    except MathParseError:
        return None


def _edited(step: Step, text: str, latex: str) -> Step:
    return Step(index=step.index, rule=step.rule, value=step.value, text=text, latex=latex, inputs=step.inputs)


class _Notational(Injector):
    """Shared loop: pick a line by placement, rewrite its text (and LaTeX); the value stays as meant."""

    edits_text = True

    def edit(self, step: Step, rng: np.random.Generator) -> tuple[str, str, str] | None:
        """(new text, new LaTeX, what changed) or None when this line offers nothing to rewrite."""
        raise NotImplementedError

    def applies(self, family: Family, problem: Problem) -> bool:
        return any(self.edit(s, np.random.default_rng(0)) is not None for s in problem.steps)

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        sites = [s.index for s in problem.steps if self.edit(s, np.random.default_rng(0)) is not None]
        k = choose_step(sites, rng, placement)
        if k is None:
            return Skip("no_site_at_placement")
        step = problem.steps[k - 1]
        found = self.edit(step, rng)
        if found is None:
            return Skip("no_site_at_placement")
        text, latex, what = found
        last = k == len(problem.steps)
        tail = ("so the written answer is wrong" if last else
                "but the next line carries on from the intended value")
        explanation = f"Step {k} is written as {text} ({what}); {tail}."
        steps = tuple(_edited(s, text, latex) if s.index == k else s for s in problem.steps)
        return Attempt(steps, Intent(first_error_step=k, propagated=last, answer_changed=last, explanation=explanation,
                                     edit={"step": k, "from": step.text, "to": text, "change": what},
                                     display_step=k))


class OperatorSwap(_Notational):
    """One operator written as its partner (+ for −, × for ÷)."""

    subtype = "operator_swap"

    def edit(self, step: Step, rng: np.random.Generator) -> tuple[str, str, str] | None:
        ops = _occurrences(step.text, list(_TEXT_OPS))
        lops = _occurrences(step.latex, list(_LATEX_OPS))
        if not ops or [_TEXT_TO_LATEX[o] for _, o in ops] != [o for _, o in lops]:
            return None  # the LaTeX writes this line differently (fractions): no faithful twin edit
        i = int(rng.integers(len(ops)))
        (at, op), (lat, lop) = ops[i], lops[i]
        text = step.text[:at] + _TEXT_OPS[op] + step.text[at + len(op):]
        latex = step.latex[:lat] + _LATEX_OPS[lop] + step.latex[lat + len(lop):]
        return text, latex, f"'{op.strip()}' written as '{_TEXT_OPS[op].strip()}'"


class MisplacedParentheses(_Notational):
    """A pair of brackets left out, so the line as written groups differently."""

    subtype = "misplaced_parentheses"
    version = 2  # v2: only brackets between spaced operators are left out, so no text is glued together

    @staticmethod
    def _pairs(text: str, open_: str, close: str) -> list[tuple[int, int]]:
        stack, pairs = [], []
        for m in re.finditer(re.escape(open_) + "|" + re.escape(close), text):
            if m.group() == open_:
                stack.append(m.start())
            elif stack:
                pairs.append((stack.pop(), m.start()))
        return sorted(pairs)

    @staticmethod
    def _spaced(text: str, a: int, b: int) -> bool:
        """Brackets that stand between spaced operators (or the line's ends), so leaving them out glues nothing:
        ``x(x + 6)`` would read ``xx + 6``, ``6(−4m − 1)`` would read ``6−4m − 1``, ``2^(3 − 1)``
        would read ``2^3 − 1``."""
        before = text[a - 1] if a > 0 else " "
        after = text[b + 1] if b + 1 < len(text) else " "
        signed_after_operator = text[a + 1:a + 2] == "−" and text[max(0, a - 2):a - 1] in ("+", "−", "×", "÷")
        return before in " (" and after in " )" and not signed_after_operator  # "5 − (−4 + 2)" -> "5 − −4 + 2"

    def edit(self, step: Step, rng: np.random.Generator) -> tuple[str, str, str] | None:
        grouped = [p for p in self._pairs(step.text, "(", ")") if re.search(r" [+−×÷] ", step.text[p[0]:p[1]])]
        lgrouped = [p for p in self._pairs(step.latex, r"\left(", r"\right)")
                    if re.search(r" (\+|-|\\times|\\div) ", step.latex[p[0]:p[1]])]
        if len(grouped) != len(lgrouped):
            return None
        both = [(p, lp) for p, lp in zip(grouped, lgrouped) if self._spaced(step.text, *p)]
        pairs, lpairs = [p for p, _ in both], [lp for _, lp in both]
        if not pairs or len(pairs) != len(lpairs):
            return None
        meant = _parse(step.text)
        options = []
        for (a, b), (la, lb) in zip(pairs, lpairs):
            text = step.text[:a] + step.text[a + 1:b] + step.text[b + 1:]
            said = _parse(text)
            if meant is not None and said is not None and not same_value(said, meant):  # brackets that matter
                latex = step.latex[:la] + step.latex[la + len(r"\left("):lb] + step.latex[lb + len(r"\right)"):]
                options.append((text, latex, f"the brackets around {step.text[a + 1:b]} are left out"))
        return options[int(rng.integers(len(options)))] if options else None


class SymbolError(_Notational):
    """A symbol dropped or miswritten: a minus sign or a root sign left off a number."""

    subtype = "symbol_error"

    _SIGNS = (("−", "-", "the minus sign is left off"), ("√", r"\sqrt", "the root sign is left off"))

    def edit(self, step: Step, rng: np.random.Generator) -> tuple[str, str, str] | None:
        options = []
        for sign, lsign, what in self._SIGNS:
            # A sign that starts a number (not a subtraction, which is spaced): −16, √3.
            spots = [m.start() for m in re.finditer(rf"(?<![ \w)]){re.escape(sign)}(?=\d)", step.text)]
            lspots = [m.start() for m in re.finditer(rf"(?<![ \w}})]){re.escape(lsign)}(?=\{{?\d)", step.latex)]
            if spots and len(spots) == len(lspots):
                options += [(s, ls, sign, lsign, what) for s, ls in zip(spots, lspots)]
        if not options:
            return None
        at, lat, sign, lsign, what = options[int(rng.integers(len(options)))]
        text = step.text[:at] + step.text[at + len(sign):]
        latex = step.latex[:lat] + step.latex[lat + len(lsign):]
        return text, latex, what


for _cls in (OperatorSwap, MisplacedParentheses, SymbolError):
    register(_cls())
