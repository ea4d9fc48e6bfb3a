"""A family's answer conventions, so an error variant reads like a pupil's work in that family.

An error variant that ends in a form the family never writes (``1352/3 sweets`` where every answer is
a whole number, ``√399`` where the working always comes out exact, ``√(−576) cm``) is itself a cue:
a detector learns the form, not the mistake. The injectors that replay a wrong value through the
family's own derivation (computational slips, copy errors, mal-rules) check the variant's final
answer against the forms the family's clean answers take, and resample when it falls outside them; a
final line that lost the family's label or unit on the way gets them back.
A line written twice in a row (a mal-rule that leaves a factor out makes two lines read alike) is
kept once, as a pupil would write it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from typing import TypeVar

import numpy as np

from synth.generators import get_family
from synth.generators.base import DIFFICULTIES, StepDraft
from synth.presentation import answer_part, read_line, with_label, with_unit

T = TypeVar("T")

# Clean problems probed per difficulty to learn a family's answer forms (fixed seeds: deterministic).
_PROBES = 8
_PROBE_SEED = 18_018


def answer_form(text: str) -> frozenset[str]:
    """The written form of a final line's answer: which of these it shows.

    ``fraction`` (a/b), ``improper`` (a fraction above one), ``decimal``, ``root`` (√ left in), ``pi``,
    ``negative``, ``operation`` (a sum or product left unevaluated), ``power`` (a number's power left
    unevaluated), ``non_real`` (a root of a negative number, ``i``).
    """
    shown = answer_part(read_line(text).math)
    parts = [p.strip() for p in re.split(r"\bor\b|\band\b|,", shown)]
    form: set[str] = set()
    for part in parts:
        value = part.rpartition("= ")[2] if "= " in part else part
        if re.search(r"√\(?\s*[−-]|(?<![A-Za-z])i(?![A-Za-z])", value):
            form.add("non_real")
        if "√" in value:
            form.add("root")
        if "π" in value:
            form.add("pi")
        if re.search(r"\d/\d|\)/", value):
            form.add("fraction")
        if any(int(p) > int(q) for p, q in re.findall(r"(?<![\d.])(\d+)/(\d+)", value)):
            form.add("improper")  # above one: a probability of 5/3 is impossible unless the family writes such
        if re.search(r"\d\.\d", value):
            form.add("decimal")
        if value.startswith(("−", "-")):
            form.add("negative")
        if re.search(r"\^\(?[−-]", value):
            form.add("negative_power")
        if re.search(r"\S [+−×÷] \S", value):
            form.add("operation")
        if re.search(r"[\d)]\^", value):
            form.add("power")
    return frozenset(form)


@cache
def family_forms(family_id: str) -> frozenset[str]:
    """Every form feature some clean answer of the family shows (probed on fixed seeds)."""
    family = get_family(family_id)
    seen: set[str] = set()
    for d, difficulty in enumerate(DIFFICULTIES):
        for i in range(_PROBES):
            rng = np.random.default_rng([_PROBE_SEED, d, i])
            try:
                problem = family.build(rng, difficulty=difficulty, question_type="free", problem_id=f"probe-{d}-{i}")
            except Exception:  # noqa: BLE001 - a probe a family cannot build teaches nothing about its forms
                continue
            seen |= answer_form(problem.steps[-1].text)
    return frozenset(seen)


def unlike_family(family_id: str, final_text: str, *, clean_text: str, allowed: frozenset[str] = frozenset()) -> bool:
    """Whether a variant's final line shows a form no clean answer of the family shows.

    ``allowed`` are features the error itself is about (a sign slip may end negative). A feature the
    clean answer of this very problem shows is always allowed.
    """
    extra = answer_form(final_text) - family_forms(family_id) - answer_form(clean_text) - allowed
    if _SOLVED_FOR.search(read_line(final_text).math):
        # A solved equation or inequality ending in a fraction (``y ≤ −1/4``) is how a pupil whose slip
        # made the numbers uneven writes it; a count or a measure (``1352/3 sweets``) is not.
        extra -= {"fraction", "improper"}
    return bool(extra)


_SOLVED_FOR = re.compile(r"(?<![A-Za-z])[a-z] [=≤≥<>] ")


# Forms that make a variant stand out from its own clean twin when the slip brings them in: fractions and
# decimals where the working was whole, a negative where it was positive, a root that no longer simplifies.
_DRIFT = frozenset({"fraction", "improper", "decimal", "negative", "negative_power", "root", "non_real"})


def drifts(steps: Sequence[StepDraft] | Sequence[object], clean: Sequence[object]) -> bool:
    """Whether a variant shows a form its clean twin does not: in the answer (``12`` -> ``71/9``), or a fraction
    anywhere in working that had none. Not an error in itself, but a detector would learn it, so the injectors
    that draw values redraw a few times to avoid it."""
    last, first = getattr(steps[-1], "text", ""), getattr(clean[-1], "text", "")
    if (answer_form(last) - answer_form(first)) & _DRIFT:
        return True
    return not any("/" in getattr(c, "text", "") for c in clean) and any("/" in getattr(s, "text", "") for s in steps)


def least_drifting(propose_once: Callable[[], T], clean: Sequence[object], tries: int = 4) -> T:
    """The first of up to ``tries`` proposals that does not :func:`drift` from the clean working; else the first
    one that proposed steps at all (a form a pupil could write, only less like its twin), else the first."""
    fallback: T | None = None
    for _ in range(tries):
        attempt = propose_once()
        steps = getattr(attempt, "steps", None)
        if steps is None:
            fallback = attempt if fallback is None else fallback
            continue
        if not drifts(steps, clean):
            return attempt
        if fallback is None or getattr(fallback, "steps", None) is None:
            fallback = attempt
    assert fallback is not None
    return fallback


def dressed(drafts: Sequence[StepDraft], clean_text: str) -> list[StepDraft]:
    """The drafts with the final line given the clean answer line's worded label and unit when it lost them
    (a mal-rule's working that ends ``195`` where the family writes ``115 min``): the mistake is in the number."""
    if not drafts:
        return list(drafts)
    clean, last = read_line(clean_text), read_line(drafts[-1].text)
    text, latex = drafts[-1].text, drafts[-1].latex
    if clean.unit and not last.unit and not last.label:
        text, latex = with_unit(text, latex, clean.unit)
    if clean.label and not last.label:
        text, latex = with_label(text, latex, clean.label)
    if text == drafts[-1].text:
        return list(drafts)
    return [*drafts[:-1], replace(drafts[-1], text=text, latex=latex)]


def without_repeats(drafts: Sequence[StepDraft]) -> list[StepDraft]:
    """The drafts with a line that repeats the one before it dropped (a tagged mal-rule line wins)."""
    out: list[StepDraft] = []
    for d in drafts:
        if out and d.text == out[-1].text:
            if d.rule.startswith("mal:") and not out[-1].rule.startswith("mal:"):
                out[-1] = d
            continue
        out.append(d)
    return out


__all__ = ["answer_form", "dressed", "drifts", "family_forms", "least_drifting", "unlike_family", "without_repeats"]
