"""Computational slips: a number computed wrongly at one step, carried forward or not."""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

import numpy as np
import sympy

from perturb.reasoning import register
from perturb.reasoning.base import Attempt, Injector, Intent, Skip, choose_step, first_changed_step, replay_attempt
from perturb.reasoning.conventions import dressed, least_drifting, unlike_family, without_repeats
from synth.generators.base import Family, StepDraft, finalize, format_number
from synth.records import Problem, Step
from synth.slips import COMMON_SLIPS, apply_slip

# applies() and every propose() attempt ask for the same problem's computed steps (up to nine clean
# derivations of one problem per slot): remember the last problems' (by identity, as visual.figure_readings).
_COMPUTED: OrderedDict[int, tuple[Problem, tuple[tuple[int, sympy.Basic], ...]]] = OrderedDict()
_COMPUTED_KEPT = 32


def _computed_steps(family: Family, problem: Problem) -> tuple[tuple[int, sympy.Basic], ...]:
    hit = _COMPUTED.get(id(problem))
    if hit is not None and hit[0] is problem:
        return hit[1]
    drafts = family.derive(problem.params)
    computed = tuple((i, d.result) for i, d in enumerate(drafts, start=1) if d.result is not None)
    _COMPUTED[id(problem)] = (problem, computed)
    while len(_COMPUTED) > _COMPUTED_KEPT:
        _COMPUTED.popitem(last=False)
    return computed


def off_convention(problem: Problem, steps: tuple[Step, ...] | list[StepDraft], allowed: frozenset[str] = frozenset(),
                   ) -> Skip | None:
    """Skip("unlike_family_form") when the variant ends in a form the family never writes (``1352/3 sweets``)."""
    if steps and unlike_family(problem.family, steps[-1].text, clean_text=problem.steps[-1].text, allowed=allowed):
        return Skip("unlike_family_form")
    return None


class _Slip(Injector):
    """Shared machinery: slip the number computed at step k, then replay or splice."""

    # v2: a slipped value that makes a later step divide by zero is skipped, not a crash
    # v3: a propagated slip ends in the family's answer forms (resampled otherwise; a sign slip may end negative),
    # keeps the answer line's label and unit, a repeated line is kept once;
    # up to four draws to find a slip that shows no form its clean twin lacks (conventions.least_drifting)
    # v4: the explanation names the final answer as the page shows it (root sets and derivatives named the right one)
    version = 4
    propagate: bool = True
    last_only: bool = False
    exclude_last: bool = False
    slip_kinds: tuple[str, ...] = COMMON_SLIPS

    def _candidates(self, family: Family, problem: Problem) -> list[tuple[int, sympy.Basic]]:
        """The computed steps this subtype may slip on (the last one, the earlier ones, or any)."""
        computed = _computed_steps(family, problem)
        n_steps = len(problem.steps)
        if self.last_only:
            return [c for c in computed if c[0] == n_steps]
        if self.exclude_last:
            return [c for c in computed if c[0] < n_steps]
        return list(computed)

    def applies(self, family: Family, problem: Problem) -> bool:
        """False when no step computes a number where this subtype slips (e.g. a one-step solution has
        no intermediate result), so the pipeline never picks it there instead of resampling in vain."""
        return bool(self._candidates(family, problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        return least_drifting(lambda: self._propose_once(family, problem, rng, placement), problem.steps)

    def _propose_once(self, family: Family, problem: Problem, rng: np.random.Generator,
                      placement: str | int) -> Attempt | Skip:
        computed = self._candidates(family, problem)
        n_steps = len(problem.steps)
        k = choose_step([i for i, _ in computed], rng, "any" if self.last_only else placement)
        if k is None:
            return Skip("no_step_at_placement")
        true = dict(computed)[k]
        slipped = apply_slip(sympy.Rational(true), rng, self.slip_kinds)
        if slipped is None:
            return Skip("no_slip_fits")
        kind, wrong = slipped
        try:  # a slipped value can break a later step (a divisor slipped to 0)
            drafts = family.derive(problem.params, {k: wrong})
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
            return Skip("derive_failed")
        replay = finalize(drafts)
        if self.propagate:
            steps = finalize(dressed(without_repeats(drafts), problem.steps[-1].text))
            # A sign slip's ending is the sign error itself and may show what follows from it (a negative the
            # family never writes); its lines and draws still prefer flips that keep the family's forms
            # (SignError._candidates, least_drifting), so it is never rejected for its form.
            skip = off_convention(problem, steps) if kind != "sign_slip" else None
            if skip is not None:
                return skip
            # the final answer as the page shows it: a family's wording of a value can ignore the value (a root
            # set is worded from the params), and then named the right answer as the one the slip carried to
            tail = f"the error carries through to the final answer {steps[-1].text}"
        else:  # non-propagated: only step k shows the slip; the student carries on correctly
            if len(replay) < k:  # the slipped value takes the derivation a shorter way: it has no line k to show
                return Skip("derive_failed")
            steps = problem.steps[: k - 1] + (replay[k - 1],) + problem.steps[k:]
            tail = "later steps continue from the correct value, so the final answer is still right"
        explanation = (f"Step {k} computes {format_number(wrong)} where {format_number(true)} is correct "
                       f"({kind.replace('_', ' ')}); {tail}.")
        edit = {"step": k, "field": "result", "from": str(true), "to": str(wrong), "slip": kind,
                "magnitude": str(wrong - true)}
        return Attempt(steps, Intent(first_error_step=k, propagated=self.propagate or k == n_steps,
                                     answer_changed=self.propagate, explanation=explanation, edit=edit))


class FinalNumber(_Slip):
    subtype = "final_number"
    last_only = True


class IntermediatePropagated(_Slip):
    subtype = "intermediate_propagated"
    exclude_last = True


class IntermediateCorrected(_Slip):
    subtype = "intermediate_corrected"
    exclude_last = True
    propagate = False


class SignError(_Slip):
    """A sign lost or flipped in one computed result, carried forward.

    Lines whose flip leaves the answer in the family's forms come first (a negative product where the
    family never writes one is a cue); only where every flip ends negative may the answer end negative.
    """

    subtype = "sign_error"
    slip_kinds = ("sign_slip",)
    _quiet: OrderedDict[int, tuple[Problem, tuple[tuple[int, sympy.Basic], ...]]] = OrderedDict()

    def _candidates(self, family: Family, problem: Problem) -> list[tuple[int, sympy.Basic]]:
        computed = super()._candidates(family, problem)
        hit = self._quiet.get(id(problem))
        if hit is None or hit[0] is not problem:
            quiet = tuple(c for c in computed if self._keeps_forms(family, problem, *c))
            self._quiet[id(problem)] = hit = (problem, quiet)
            while len(self._quiet) > _COMPUTED_KEPT:
                self._quiet.popitem(last=False)
        return list(hit[1]) or computed

    @staticmethod
    def _keeps_forms(family: Family, problem: Problem, k: int, true: sympy.Basic) -> bool:
        if true == 0:
            return False
        try:
            drafts = family.derive(problem.params, {k: -sympy.Rational(true)})
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
            return False
        if drafts[-1].text == problem.steps[-1].text:
            return False  # the flip cancels (a squared value): no error to see
        last = dressed(without_repeats(drafts), problem.steps[-1].text)[-1].text
        return not unlike_family(problem.family, last, clean_text=problem.steps[-1].text)


Path = tuple[Any, ...]
_NOTHING_TO_COPY = ("no_number_to_copy", "no_value_rewritten")


def _writes(text: str, value: sympy.Basic) -> bool:
    """Whether ``text`` writes ``value`` as a number of its own (6 is not written in 36 or 6.5)."""
    return re.search(rf"(?<![\d.]){re.escape(format_number(value))}(?![\d.])", text) is not None


def _copied_numbers(params: dict[str, Any], question: str) -> list[tuple[Path, int]]:
    """Whole numbers in ``params`` (top level, or in lists) that the question writes out."""
    found: list[tuple[Path, int]] = []

    def walk(value: Any, path: Path) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int) and abs(value) >= 2 and re.search(rf"(?<![\d.]){abs(value)}(?![\d.])", question):
            found.append((path, value))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, i))

    for key in sorted(params):
        if key not in ("answer_choice", "choice_sources"):
            walk(params[key], (key,))
    return found


def _with(params: dict[str, Any], path: Path, value: int) -> dict[str, Any]:
    def put(node: Any, rest: Path) -> Any:
        if not rest:
            return value
        node = list(node)
        node[rest[0]] = put(node[rest[0]], rest[1:])
        return node

    return {**params, path[0]: put(params[path[0]], path[1:])}


class CopyError(Injector):
    """A number copied wrongly: from the question into the working, or from one line into the next."""

    subtype = "copy_error"
    # v2: copies that would read the same (invisible edits) are filtered before proposing
    # v3: the variant ends in the family's answer forms (resampled otherwise), a repeated line is kept once;
    # up to four draws to find a copy that shows no form its clean twin lacks (conventions.least_drifting)
    # v4: only whole numbers are miscopied from line to line (no slip of its kinds fits a fraction: it was
    # offered there and rejected as no_slip_fits)
    version = 4
    splices = True

    @staticmethod
    def _question_numbers(problem: Problem) -> list[tuple[Path, int]]:
        """Numbers of the question that the working writes out: one it never writes cannot be seen miscopied."""
        shown = "\n".join(s.text for s in problem.steps)
        return [(path, v) for path, v in _copied_numbers(problem.params, problem.question_text)
                if _writes(shown, sympy.Integer(v))]

    @staticmethod
    def _rewritten(family: Family, problem: Problem) -> list[tuple[int, sympy.Basic]]:
        """Computed whole numbers the next line writes out again, so they can be miscopied into it (the copy
        slips, a swapped pair of digits or one off, are slips of whole numbers: a fraction has none)."""
        n = len(problem.steps)
        return [(i, v) for i, v in _computed_steps(family, problem)
                if i < n and getattr(v, "is_integer", False) and _writes(problem.steps[i].text, v)]

    def applies(self, family: Family, problem: Problem) -> bool:
        """Some number is copied in the working: from the question, or from one line into the next."""
        return bool(self._question_numbers(problem)) or bool(self._rewritten(family, problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        return least_drifting(lambda: self._propose_once(family, problem, rng, placement), problem.steps)

    def _propose_once(self, family: Family, problem: Problem, rng: np.random.Generator,
                      placement: str | int) -> Attempt | Skip:
        first = self._from_line if rng.random() < 0.5 else self._from_question
        second = self._from_question if first == self._from_line else self._from_line
        attempt = first(family, problem, rng, placement)
        if isinstance(attempt, Attempt):
            return attempt
        other = second(family, problem, rng, placement)
        # A route with nothing to copy says less about the failure than one that tried.
        return attempt if isinstance(other, Skip) and other.reason in _NOTHING_TO_COPY else other

    def _from_question(self, family: Family, problem: Problem, rng: np.random.Generator,
                       placement: str | int) -> Attempt | Skip:
        numbers = self._question_numbers(problem)
        if not numbers:
            return Skip("no_number_to_copy")
        path, true = numbers[int(rng.integers(len(numbers)))]
        slipped = apply_slip(sympy.Integer(true), rng, ("digit_transposition", "off_by_one"))
        if slipped is None:
            return Skip("no_slip_fits")
        wrong = int(slipped[1])
        try:
            drafts = family.derive(_with(problem.params, path, wrong))
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
            return Skip("derive_failed")
        k = first_changed_step(drafts, problem.steps)
        if k is None or choose_step([k], rng, placement) is None:
            return Skip("no_step_at_placement")
        if not _writes(drafts[k - 1].text, sympy.Integer(wrong)):
            return Skip("copy_not_visible")  # the slip must show as a number written down
        drafts = dressed(without_repeats(drafts), problem.steps[-1].text)
        skip = off_convention(problem, drafts)
        if skip is not None:
            return skip
        explanation = f"copies {true} from the question as {wrong} at step {k} and works on with it"
        return replay_attempt(family, problem, drafts, k, explanation,
                              {"source": "question", "param": list(path), "from": true, "to": wrong})

    def _from_line(self, family: Family, problem: Problem, rng: np.random.Generator,
                   placement: str | int) -> Attempt | Skip:
        rewritten = self._rewritten(family, problem)
        k = choose_step([i + 1 for i, _ in rewritten], rng, placement)
        if k is None:
            return Skip("no_value_rewritten")
        true = dict(rewritten)[k - 1]
        slipped = apply_slip(sympy.Rational(true), rng, ("digit_transposition", "off_by_one"))
        if slipped is None:
            return Skip("no_slip_fits")
        wrong = slipped[1]
        try:
            replay = finalize(dressed(without_repeats(family.derive(problem.params, {k - 1: wrong})),
                                      problem.steps[-1].text))
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
            return Skip("derive_failed")
        # The miscopied value may end the working sooner (√6401 does not simplify as √6400 did).
        if len(replay) < k or not _writes(replay[k - 1].text, wrong):
            return Skip("copy_not_visible")
        steps = problem.steps[: k - 1] + replay[k - 1:]
        skip = off_convention(problem, steps)
        if skip is not None:
            return skip
        explanation = (f"step {k - 1} gets {format_number(true)}, but step {k} copies it as "
                       f"{format_number(wrong)}; the rest follows from the miscopied value")
        return Attempt(steps, Intent(first_error_step=k, propagated=True, answer_changed=True, explanation=explanation,
                                     edit={"source": "line", "step": k, "from_step": k - 1, "from": str(true),
                                           "to": str(wrong)}))


for _cls in (FinalNumber, IntermediatePropagated, IntermediateCorrected, SignError, CopyError):
    register(_cls())
