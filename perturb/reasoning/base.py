"""Injector contract and the inject-verify-resample loop that makes labels right by construction."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from synth.generators import get_family
from synth.generators.base import Family, StepDraft, finalize
from synth.mathparse import to_text
from synth.records import Control, ErrorLabel, Problem, Step, Variant
from synth.registry import Registry
from synth.taxonomy import SUBTYPES, projections
from synth.verifier import Verdict, verify


@dataclass(frozen=True)
class Intent:
    """What the injector meant to do; the variant is kept only if the verifier agrees."""

    first_error_step: int
    propagated: bool
    answer_changed: bool
    explanation: str
    edit: dict[str, Any]
    display_step: int | None = None  # notational errors: the one line whose text says other than its value
    # presentation errors: the subtype the verifier's presentation checker must find (and nothing else
    # may be wrong: the math stays right)
    presentation: str | None = None


@dataclass(frozen=True)
class Attempt:
    steps: tuple[Step, ...]
    intent: Intent


@dataclass(frozen=True)
class ControlAttempt:
    """A superficial edit: the verifier must still find the solution fully correct."""

    steps: tuple[Step, ...]
    edit: dict[str, Any]


@dataclass(frozen=True)
class Skip:
    """The injector cannot act on this attempt; ``reason`` goes into the rejection funnel.

    ``final``: the injector tried every edit it has for this problem, so another attempt would fail the
    same way; ``inject`` stops there (one rejection, not ``max_attempts``).
    """

    reason: str
    final: bool = False


ShownKey = tuple[tuple[str, str], ...]  # what a reader sees of a solution: each line's text and LaTeX (shown_key)
DUPLICATE = "duplicate"  # the funnel's reason for an attempt that reads like a sibling of the same base


@dataclass
class Funnel:
    """Per-injector counts: attempted, kept, and rejected by reason (reported in stats.json)."""

    attempted: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    rejected: dict[str, Counter[str]] = field(default_factory=dict)

    def reject(self, injector: str, reason: str) -> None:
        self.rejected.setdefault(injector, Counter())[reason] += 1

    @property
    def duplicates_rejected(self) -> int:
        """Attempts rejected for reading exactly like another content of their base (``inject(avoid=...)``)."""
        return sum(c[DUPLICATE] for c in self.rejected.values())

    def as_dict(self) -> dict[str, Any]:
        names = sorted(set(self.attempted) | set(self.kept) | set(self.rejected))
        return {n: {"attempted": self.attempted[n], "kept": self.kept[n],
                    "rejected": dict(sorted(self.rejected.get(n, Counter()).items()))} for n in names}


class Injector:
    """One taxonomy subtype. ``propose`` edits a clean solution; it never sets labels itself."""

    subtype: str
    # Part of the recorded injector id ("computational.copy_error/v2"): raised whenever the same problem,
    # seed and config would give a different variant, so records from different behaviours never mix.
    version: int = 1
    splices: bool = False  # offers a non-propagated form via ``unpropagated``
    edits_text: bool = False  # edits only the shown lines (never re-derives), so it can stack on another error
    avoids: bool = False  # ``propose`` takes ``avoid=`` (the base's other contents) and passes over what they show

    @property
    def id(self) -> str:
        return f"{SUBTYPES[self.subtype].family}.{self.subtype}/v{self.version}"

    def applies(self, family: Family, problem: Problem) -> bool:
        return True

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | ControlAttempt | Skip:
        raise NotImplementedError

    def novel(self, family: Family, problem: Problem, placement: str | int, avoid: Collection[ShownKey]) -> bool:
        """Whether the injector can propose something that reads like none of ``avoid`` (the base's other
        contents). Injectors with few fixed workings (a family's mal-rules) say no once every one is taken, so
        ``inject`` does not propose duplicates again and again; the rest draw freely and say yes."""
        return True


# Every injector module of this package registers its injectors as it loads; the first lookup imports them
# all (``synth.registry``), so adding an injector is adding one module.
INJECTORS: Registry[Injector] = Registry("error subtype", discover="perturb.reasoning",
                                         hint="`mathstress taxonomy` lists them")


def register(injector: Injector) -> Injector:
    """Register ``injector`` under its taxonomy subtype; a subtype registered twice is an error naming both."""
    if injector.subtype not in SUBTYPES:
        raise ValueError(f"injector {type(injector).__qualname__} claims subtype {injector.subtype!r}, which is not"
                         " in synth.taxonomy.ERROR_SUBTYPES; use one of its ids (DESIGN section 5)")
    return INJECTORS.register(injector, id=injector.subtype)


def choose_step(candidates: list[int], rng: np.random.Generator, placement: str | int) -> int | None:
    """Pick a step index by placement: a 1-based index, or early / middle / late / any."""
    if not candidates:
        return None
    if isinstance(placement, int):
        return placement if placement in candidates else None
    n = len(candidates)
    thirds = {"early": candidates[: max(1, n // 3)],
              "middle": candidates[n // 3: max(n // 3 + 1, 2 * n // 3)],
              "late": candidates[max(0, 2 * n // 3 - (n < 3)):],
              "any": candidates}
    pool = thirds[placement] or candidates
    return pool[int(rng.integers(len(pool)))]


def first_changed_step(drafts: list[StepDraft] | tuple[Step, ...], clean: tuple[Step, ...]) -> int | None:
    """The first line (1-based) written differently from the clean solution, or None."""
    for i, d in enumerate(drafts, start=1):
        if i > len(clean) or d.text != clean[i - 1].text:
            return i
    return None if len(drafts) == len(clean) else len(drafts)


def replay_attempt(family: Family, problem: Problem, drafts: list[StepDraft] | None, k: int | None,
                   explanation: str, edit: dict[str, Any]) -> Attempt | Skip:
    """A propagated error whose steps are ``drafts`` and whose first wrong line is ``k``."""
    if not drafts:
        return Skip("does_not_apply")
    if k is None:
        return Skip("no_visible_change")
    return Attempt(finalize(drafts), Intent(first_error_step=k, propagated=True, answer_changed=True,
                                            explanation=explanation, edit={**edit, "step": k}))


def unpropagated(attempt: Attempt, problem: Problem) -> Attempt | Skip:
    """The same mistake at one line only: the student carries on from the correct value.

    Only the erring line is taken from the attempt; every other line is the clean one, so the
    final answer stays right (the non-propagated form of any propagated error).
    """
    k = attempt.intent.first_error_step
    if k >= len(problem.steps) or k > len(attempt.steps):
        return Skip("error_on_last_line")
    wrong = attempt.steps[k - 1]
    steps = problem.steps[: k - 1] + (replace(wrong, index=k),) + problem.steps[k:]
    return Attempt(steps, replace(attempt.intent, propagated=False, answer_changed=False,
                                  edit={**attempt.intent.edit, "propagated": False}))


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_PLAIN_MATH = (
    (re.compile(r"\bsqrt\("), lambda m: "√("),
    (re.compile(r"\bpi\b"), lambda m: "π"),
    (re.compile(r"\*\*(-?\d+)\b"), lambda m: m.group(1).translate(_SUPERSCRIPT)),  # n**2 -> n²
    (re.compile(r"\*\*"), lambda m: "^"),
    (re.compile(r"\*I\b"), lambda m: "i"),  # 24*I -> 24i
    (re.compile(r"(?<![A-Za-z])I(?=\*)"), lambda m: "i"),
    (re.compile(r"(?<=[\w)π⁰¹²³⁴⁵⁶⁷⁸⁹])\*(?=[A-Za-z(√π])"), lambda m: ""),  # 5*x -> 5x, 3*(x + 1) -> 3(x + 1)
    (re.compile(r"\*"), lambda m: " × "),
)


def plain_math(text: str) -> str:
    """An explanation as a teacher writes it: SymPy's syntax (``n**2``, ``24*I``, ``sqrt(3)``, ``5*x``) in the
    notation of the page (``n²``, ``24i``, ``√(3)``, ``5x``). Words are left alone."""
    for pattern, repl in _PLAIN_MATH:
        text = pattern.sub(repl, text)
    return text


def _disagreement(intent: Intent, verdict: Verdict) -> str | None:
    first = verdict.first_error_step
    if first is None:
        return "no_op"
    shown = {kind for kind in verdict.presentation if kind}
    if shown != ({intent.presentation} if intent.presentation else set()):
        return "presentation_mismatch"
    if intent.presentation and not (all(verdict.local_valid) and all(verdict.global_correct)):
        return "changed_math"
    misdisplayed = tuple(i for i, ok in enumerate(verdict.parses, start=1) if not ok)
    if misdisplayed != ((intent.display_step,) if intent.display_step else ()):
        return "display_mismatch"
    if first != intent.first_error_step:
        return "first_step_mismatch"
    if verdict.propagated != intent.propagated:
        return "compensating" if intent.propagated else "propagation_mismatch"
    if (not verdict.answer_correct) != intent.answer_changed:
        return "answer_mismatch"
    return None


def shown_key(steps: tuple[Step, ...]) -> ShownKey:
    """What a reader sees of a solution (each line's text and LaTeX): equal keys are the same shown page."""
    return tuple((s.text, s.latex) for s in steps)


def inject(problem: Problem, subtype: str, rng: np.random.Generator, *, placement: str | int = "any",
           max_attempts: int = 8, funnel: Funnel | None = None, propagate: bool = True,
           avoid: Collection[tuple[tuple[str, str], ...]] = ()) -> Variant | None:
    """An error variant of ``problem`` whose labels the verifier confirmed, or None.

    ``propagate=False`` asks for the non-propagated form (the student carries on from the
    correct value after the wrong line) of injectors that offer both (``Injector.splices``).
    ``avoid`` holds the ``shown_key`` of the base's other contents (its clean control and the variants
    made so far): an attempt that reads exactly like one of them is rejected as ``duplicate`` and redrawn,
    so a base's variants always differ.
    """
    injector = INJECTORS[subtype]
    family = get_family(problem.family)
    funnel = funnel if funnel is not None else Funnel()
    if not injector.applies(family, problem) or (avoid and not injector.novel(family, problem, placement, avoid)):
        funnel.reject(injector.id, "not_applicable")  # nothing this injector can do here, or nothing new
        return None
    for _ in range(max_attempts):
        funnel.attempted[injector.id] += 1
        if avoid and injector.avoids:
            attempt = injector.propose(family, problem, rng, placement, avoid=avoid)
        else:
            attempt = injector.propose(family, problem, rng, placement)
        if not propagate and injector.splices and isinstance(attempt, Attempt):
            attempt = unpropagated(attempt, problem)
        if isinstance(attempt, Skip):
            funnel.reject(injector.id, attempt.reason)
            if attempt.final:
                return None
            continue
        if avoid and shown_key(attempt.steps) in avoid:
            funnel.reject(injector.id, DUPLICATE)
            continue
        verdict = verify(problem, attempt.steps, family=family)
        if isinstance(attempt, ControlAttempt):
            if not verdict.fully_correct:
                funnel.reject(injector.id, "changed_math")
                continue
            if [s.text for s in attempt.steps] == [s.text for s in problem.steps]:
                funnel.reject(injector.id, "no_visible_change")
                continue
            funnel.kept[injector.id] += 1
            return control_variant(attempt.steps, to_text(verdict.shown_answer), subtype, injector.id,
                                   attempt.edit)
        # The verifier already compared the shown answer with the independent route.
        answer_changed = not verdict.answer_correct
        reason = _disagreement(attempt.intent, verdict)
        if reason is not None:
            funnel.reject(injector.id, reason)
            continue
        funnel.kept[injector.id] += 1
        shown = to_text(verdict.shown_answer) if verdict.shown_answer is not None else ""
        meta = SUBTYPES[subtype]
        label = ErrorLabel(
            family=meta.family, subtype=subtype, first_error_step=verdict.first_error_step or 0,
            error_steps=verdict.error_steps, propagated=verdict.propagated,
            answer_changed=bool(answer_changed), shown_answer=shown,
            explanation=plain_math(attempt.intent.explanation), injector=injector.id, edit=attempt.intent.edit,
            projections=projections(subtype), answer_correct=verdict.answer_fully_correct,
        )
        return Variant(kind="error", steps=attempt.steps, shown_answer=shown, is_correct=False, error=label)
    return None


def clean_variant(problem: Problem) -> Variant:
    return Variant(kind="clean", steps=problem.steps, shown_answer=problem.answer_value, is_correct=True)


def control_variant(steps: tuple[Step, ...], shown_answer: str, subtype: str, injector: str,
                    edit: dict[str, Any]) -> Variant:
    return Variant(kind="superficial", steps=steps, shown_answer=shown_answer, is_correct=True,
                   control=Control(subtype=subtype, injector=injector, edit=edit))


__all__ = ["DUPLICATE", "INJECTORS", "Attempt", "ControlAttempt", "Funnel", "Injector", "Intent", "ShownKey", "Skip",
           "choose_step",
           "clean_variant", "control_variant", "finalize", "first_changed_step", "inject", "plain_math", "register",
           "replay_attempt", "shown_key", "unpropagated"]
