"""Visual-perception errors: a value read wrongly off the figure, carried through (the image stays true)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from perturb.reasoning import register
from perturb.reasoning.base import Attempt, Injector, Skip, first_changed_step, replay_attempt
from perturb.reasoning.conventions import drifts, unlike_family
from synth.generators._figure_words import RELATION_WORDS as _RELATION_WORDS
from synth.generators._figure_words import element_words
from synth.generators._readings import figure_readings
from synth.generators.base import Family, Reading, StepDraft, derive_memo, working_head
from synth.records import Problem

VISUAL = ("misread_value", "misread_label", "misread_scale", "miscount", "misread_relation")


def derive_with(family: Family, problem: Problem, changes: dict[str, Any]) -> list[StepDraft] | Skip:
    """The clean solution re-derived with some parameters replaced, or a Skip if the family cannot."""
    try:
        return derive_memo(family, {**problem.params, **changes})
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
        return Skip("derive_failed")


class Misread(Injector):
    """Solve with the reading's parameters replaced by one of its plausible misreads (the figure stays true)."""

    # v3: only quantities the question text does not state are misread (a value printed in the text and
    # taken wrongly is a copy error, not a visual one), and explanations name figure elements in plain words.
    # v4: a misread whose working ends in a form the family never writes (``7/3`` objects) is passed over for
    # another, and one that shows no form its clean twin lacks is preferred (perturb.reasoning.conventions)
    version = 4
    splices = True

    def __init__(self, subtype: str) -> None:
        self.subtype = subtype

    def readings(self, family: Family, problem: Problem) -> list[Reading]:
        """The readings of this kind, each with only the misreads of values the figure alone tells."""
        if _text_tells_all(problem):  # figure_only refuses every misread: no need to derive them
            return []
        out = []
        for r in figure_readings(family, problem):
            if r.kind != self.subtype or not r.misreads:
                continue
            honest = tuple(w for w in r.misreads if figure_only(problem, r, w))
            if honest:
                out.append(r if len(honest) == len(r.misreads) else replace(r, misreads=honest))
        return out

    def applies(self, family: Family, problem: Problem) -> bool:
        return problem.figure is not None and bool(self.readings(family, problem))

    def propose(self, family: Family, problem: Problem, rng: np.random.Generator,
                placement: str | int) -> Attempt | Skip:
        """The first of the misreads (in a random order, at most ``_TRIES``) whose working ends in a form the
        family writes and shows no form its clean twin lacks (``conventions``); else the first that ends in
        the family's forms; else Skip("unlike_family_form"), final when every misread was tried."""
        readings = self.readings(family, problem)
        if not readings:
            return Skip("no_reading")
        pairs = [(r, w) for r in readings for w in r.misreads]
        order = rng.permutation(len(pairs))[:_TRIES]
        tried_all = len(order) == len(pairs)
        fallback: Attempt | Skip | None = None
        for i in order:
            reading, wrong = pairs[int(i)]
            if self._ends_unlike_family(family, problem, reading, wrong):  # what the attempt would show, underived
                fallback = fallback if isinstance(fallback, Attempt) else Skip("unlike_family_form", final=tried_all)
                continue
            attempt = self._attempt(family, problem, reading, wrong)
            if isinstance(attempt, Skip):
                fallback = fallback or Skip(attempt.reason, final=tried_all)
                continue
            if unlike_family(problem.family, attempt.steps[-1].text, clean_text=problem.steps[-1].text):
                fallback = fallback if isinstance(fallback, Attempt) else Skip("unlike_family_form", final=tried_all)
                continue
            if not drifts(attempt.steps, problem.steps):
                return attempt
            fallback = fallback if isinstance(fallback, Attempt) else attempt
        return fallback or Skip("no_reading", final=tried_all)

    @staticmethod
    def _ends_unlike_family(family: Family, problem: Problem, reading: Reading, wrong: Any) -> bool:
        """Whether ``_attempt`` would give an Attempt whose last line ``unlike_family`` refuses, told from the
        family's ``working_head`` without deriving the working (False where that cannot be told)."""
        try:
            changes = reading.changes(wrong)
        except ValueError:
            return False  # _attempt skips it as malformed
        if all(problem.params.get(key) == value for key, value in changes.items()):
            return False  # _attempt skips it as equal to the truth
        head = working_head(family, {**problem.params, **changes})
        if head is None or head[2] == problem.steps[-1].text:  # unknown, or maybe no visible change
            return False
        return unlike_family(problem.family, head[2], clean_text=problem.steps[-1].text)

    def _attempt(self, family: Family, problem: Problem, reading: Reading, wrong: Any) -> Attempt | Skip:
        """The solution worked correctly from ``reading`` misread as ``wrong``."""
        try:
            changes = reading.changes(wrong)
        except ValueError:
            return Skip("malformed_misread")
        # Only the keys the misread really changes are recorded (a swap may keep one of them).
        changed = [{"param": key, "from": problem.params.get(key), "to": value}
                   for key, value in changes.items() if problem.params.get(key) != value]
        if not changed:
            return Skip("misread_equals_truth")
        drafts = derive_with(family, problem, changes)
        if isinstance(drafts, Skip):
            return drafts
        k = first_changed_step(drafts, problem.steps)
        true, shown = problem.params.get(reading.param), changes[reading.param]
        explanation = explain(problem, reading, changed, true, shown)
        edit = {"param": reading.param, "element": reading.element, "from": true, "to": shown, "changes": changed}
        return replay_attempt(family, problem, drafts, k, explanation, edit)


_TRIES = 32  # misreads derived per proposal at most (each a full re-derivation): in practice every one


# -- which misreads are visual: the value lives in the figure only ----------------------------------------

_NUMBER = re.compile(r"(?<![\d.,])([−-](?=\d))?(\d+(?:\.\d+)?)")


def stated_numbers(problem: Problem) -> frozenset[Fraction]:
    """Every number the question text states, and every given whose source is the text.

    A minus sign counts only when it touches the digits (``A(−3, 6)``); ``5 − 3`` states 5 and 3.
    """
    found = set()
    for m in _NUMBER.finditer(problem.question_text):
        value = Fraction(m.group(2))
        found.add(-value if m.group(1) else value)
    for g in problem.givens:
        if g.source == "text":
            try:
                found.add(Fraction(g.value.replace("−", "-")))
            except (ValueError, ZeroDivisionError):
                continue
    return frozenset(found)


def _text_tells_all(problem: Problem) -> bool:
    """The question text states every given (``figure_only`` is False for every misread of such a problem)."""
    return bool(problem.givens) and all(g.source == "text" for g in problem.givens)


def figure_only(problem: Problem, reading: Reading, wrong: Any) -> bool:
    """Whether every value the misread replaces is one only the figure tells (not stated in the question text).

    A problem whose givens all live in the text has nothing only the figure tells; otherwise each
    replaced number is compared with the numbers the text states (``stated_numbers``).
    """
    try:
        changes = reading.changes(wrong)
    except ValueError:
        return False
    if _text_tells_all(problem):
        return False
    stated = stated_numbers(problem)
    return not any(v in stated for key, value in changes.items()
                   for v in replaced_numbers(problem.params.get(key), value))


def _leaves(value: Any) -> list[Any]:
    """The scalar values of a parameter in order (lists, and dicts in key order, flattened)."""
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for k in value for leaf in _leaves(value[k])]
    return [value]


def _as_number(value: Any) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        return None
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def replaced_numbers(true: Any, shown: Any) -> list[Fraction]:
    """The true numbers a misread replaces: those at the places that differ, or the ones left out."""
    a, b = _leaves(true), _leaves(shown)
    if len(a) == len(b):
        lost = [t for t, s in zip(a, b) if t != s]
    else:
        lost = list((Counter(map(repr, a)) - Counter(map(repr, b))).elements())
        lost = [t for t in a if repr(t) in lost] or a
    return [n for n in map(_as_number, lost) if n is not None]


# -- explanations in a teacher's words ----------------------------------------------------------------

def explain(problem: Problem, reading: Reading, changed: list[dict[str, Any]], true: Any, shown: Any) -> str:
    """What the pupil misread, naming figure elements as the figure does (never by internal ids)."""
    what = element_words(problem, reading.element)
    if _shortened(changed):  # an element missed when counting (a bar, a table row or column): fewer values
        return (f"leaves {what} out when counting what the figure shows{_rows_note(changed)}, "
                f"taking {_values(changed, 'to')} instead of {_values(changed, 'from')}; "
                "the solution is worked correctly from the miscount")
    if _groups(true) and _groups(shown):  # groups of objects (rows, columns, empty places) counted wrongly
        return (f"miscounts {what} in the figure, counting {_group_counts(shown, true)}; "
                "the solution is worked correctly from the miscount")
    if reading.element.startswith("hand_hour") and len(changed) == 2 and all(
            isinstance(c["from"], int) and isinstance(c["to"], int) for c in changed):
        (h0, m0), (h1, m1) = ((c["from"] for c in changed), (c["to"] for c in changed))
        return (f"swaps the hands of {what.split(' of ', 1)[1]}, reading the time as {h1}:{m1:02d} instead of "
                f"{h0}:{m0:02d}; the solution is worked correctly from the misreading")
    if isinstance(true, str):  # a relation read wrongly (which angle pair, which side is the hypotenuse)
        return (f"misreads {what} in the figure, taking {_relation(reading.param, shown)} where the figure shows "
                f"{_relation(reading.param, true)}; the solution is worked correctly from the misreading")
    if reading.also:  # several values taken together (hands swapped, a key read at the wrong size)
        return (f"misreads {what} in the figure, taking {_values(changed, 'to')} instead of "
                f"{_values(changed, 'from')}; the solution is worked correctly from the misreading")
    if reading.element.startswith("point_") and _pair(true) and _pair(shown):
        return (f"reads {what} in the figure as ({_number(shown[0])}, {_number(shown[1])}) instead of "
                f"({_number(true[0])}, {_number(true[1])}); the solution is worked correctly from the misread value")
    a, b = _changed_pair(true, shown)
    return (f"reads {what} in the figure as {a} instead of {b}; "
            "the solution is worked correctly from the misread value")


_RELATION_FRAMES = {"ce_matches": "it as matching side {}", "same_as": "the marked sector as equal to {}",
                    "counted": "group {} as the one asked about", "find": "it as {}", "given": "the length as {}",
                    "touches": "the balls as touching {}", "read_as": "the numbers as {}",
                    "ask": "the angle asked for as {}"}


def _relation(param: str, value: str) -> str:
    words = _RELATION_WORDS.get(value, value)
    return _RELATION_FRAMES.get(param, "{}").format(words)


def _pair(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 2 and all(_as_number(v) is not None for v in value)


def _groups(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, dict) for v in value)


def _group_counts(shown: list[dict[str, Any]], true: list[dict[str, Any]]) -> str:
    """``3 rows instead of 2, 1 empty place instead of 2``: what differs, group by group."""
    out = []
    for a, b in zip(shown, true):
        for key in a:
            if a.get(key) == b.get(key):
                continue
            if isinstance(a[key], (list, tuple)) or isinstance(b.get(key), (list, tuple)):
                n, m = len(a[key] or ()), len(b.get(key) or ())
                noun = "empty place" if key == "missing" else key
                out.append(f"{n} {noun}{'s' if n != 1 else ''} instead of {m}")
            else:
                noun = {"cols": "columns"}.get(key, key)
                out.append(f"{_number(a[key])} {noun} instead of {_number(b.get(key))}")
    if len(shown) != len(true):
        out.append(f"{len(shown)} groups instead of {len(true)}")
    return _and(out) if out else "the objects wrongly"


def _number(value: Any) -> str:
    text = str(value)
    return text[:-2] if isinstance(value, float) and text.endswith(".0") else text.replace("-", "−")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else "nothing"


def _changed_pair(true: Any, shown: Any) -> tuple[str, str]:
    """(shown, true) in words: only the entries that differ when a list keeps its length."""
    a, b = _leaves(shown), _leaves(true)
    if len(a) == len(b) and len(a) > 1:
        places = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return _and([_number(a[i]) for i in places]), _and([_number(b[i]) for i in places])
    return _and([_number(v) for v in a]), _and([_number(v) for v in b])


def _values(changed: list[dict[str, Any]], side: str) -> str:
    """The numbers on one side of a misread, plainly (``8 and 45``); a value absent on this side is left out."""
    return _and([_number(v) for c in changed if c[side] is not None for v in _leaves(c[side])
                 if not isinstance(v, str)] or [str(c[side]) for c in changed if isinstance(c[side], str)])


def _shortened(changed: list[dict[str, Any]]) -> bool:
    """Whether a misread leaves values out: some list came back shorter, or (a table) some of its rows did."""
    return any(_fewer(c["from"], c["to"]) for c in changed)


def _fewer(true: Any, shown: Any) -> bool:
    """``shown`` has items left out of ``true``: a shorter list, or as many items of which some lists have
    items left out and the rest are as drawn (a table's rows, a column or a cell missed)."""
    if not (isinstance(true, (list, tuple)) and isinstance(shown, (list, tuple))):
        return False
    if len(shown) < len(true):
        return True
    pairs = list(zip(true, shown))
    return len(shown) == len(true) and any(_fewer(t, s) for t, s in pairs) \
        and all(_fewer(t, s) or t == s for t, s in pairs)


def _rows_note(changed: list[dict[str, Any]]) -> str:
    """`` (the last entry of every row)`` when a table's rows each lost their last value: the column missed."""
    for c in changed:
        true, shown = c["from"], c["to"]
        if isinstance(true, (list, tuple)) and isinstance(shown, (list, tuple)) and len(true) == len(shown) > 0 \
                and all(isinstance(t, (list, tuple)) and isinstance(v, (list, tuple)) and len(t) > 0
                        and list(v) == list(t[:-1]) for t, v in zip(true, shown)):
            return " (the last entry of every row)"
    return ""


for _subtype in VISUAL:
    register(Misread(_subtype))
