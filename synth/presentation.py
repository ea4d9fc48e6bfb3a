"""The presentation checker: worded labels, units, answer forms, variable names and line order.

The verifier calls :func:`presentation_faults` after it has judged the math of every line, so a
presentation error (FERMAT's PR axis) is found from what the lines say, never from an injector.
Conventions a family can use, all optional:

- a worded line prefix ``Label: math`` (``Sum: 11/20``, ``Chen's share: 60``). The label names
  the quantity the line states; the family's :class:`Vocabulary` says which labels exist in its
  problem and what each one is worth. A label the problem does not know, or one whose quantity
  differs from what a correct line states, is a fault;
- ``params["answer_form"]`` (a key of :data:`FORMS`): the question asks for that form, and the
  last line must be written in it;
- ``params["answer_unit"]``: the answer's unit; a line may end with a unit from :data:`UNITS`
  (``345 cm``), which must be that one;
- ``params["var"]`` on one-variable equations: the letter may be renamed consistently from the
  first line on (a superficial control) but must not change name midway.
Order is checked against the problem's own clean solution: a line of it shown before a line it
comes after is out of order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from math import gcd
from typing import TypeVar

import sympy
from sympy.core.relational import Relational

from synth.records import Problem

Same = Callable[[sympy.Basic, sympy.Basic], bool]
T = TypeVar("T")

# A label is words (letters, spaces, apostrophes) before ": " at the start of a line.
_LABEL = re.compile(r"^(?P<label>[A-Za-z][A-Za-z'’ ]*[A-Za-z]):\s+(?P<math>\S.*)$")
# Names written with "=": a probability's event (``P(red) = 4/15``, ``P(Tennis | Boys) = 2/11``) or a
# side of a figure (``RP = 27 mm``).
_NAMED = "P\\([A-Za-z0-9][A-Za-z0-9'’ |]*\\)|[A-Z]{2}"
_EVENT = re.compile(rf"^(?P<label>{_NAMED}) = (?P<math>\S.*)$")

# Units an answer may end with, as written -> canonical spelling. Longest spellings match first.
_LENGTHS = ("mm", "cm", "m", "km", "in", "ft")
UNITS: dict[str, str] = {
    **{u: u for u in (*_LENGTHS, "g", "kg", "t", "mL", "L", "s", "min", "h", "days", "m/s", "km/h")},
    **{f"{u}{p}": f"{u}{p}" for u in _LENGTHS for p in "²³"},
    **{f"{u}^{n}": f"{u}{p}" for u in _LENGTHS for n, p in (("2", "²"), ("3", "³"))},
    "hours": "h", "minutes": "min", "seconds": "s",
}
# A unit follows a number, a closing bracket or π (``441π mm²``), after one space.
_UNIT = re.compile(r"(?<=[\d)π]) (?P<unit>" + "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
                   + r")$")
_UNIT_LATEX = {f"{u}{p}": rf"\mathrm{{{u}}}^{n}" for u in _LENGTHS for n, p in (("2", "²"), ("3", "³"))}

# What a question says to ask for each answer form.
FORMS: dict[str, str] = {
    "fraction": "Give your answer as a fraction in its simplest form.",
    "decimal": "Give your answer as a decimal.",
}

# Mathematical terms a label may use, with the partner a pupil confuses each with.
TERM_SWAPS: dict[str, str] = {
    "sum": "product", "product": "sum", "difference": "quotient", "quotient": "difference",
    "numerator": "denominator", "denominator": "numerator", "area": "perimeter", "perimeter": "area",
    "radius": "diameter", "diameter": "radius", "factor": "multiple", "multiple": "factor",
}


@dataclass(frozen=True)
class Line:
    """A shown line split into its worded label, its math and its trailing unit."""

    label: str | None
    math: str
    unit: str | None


def read_line(text: str) -> Line:
    """``"Sum: 345 cm"`` -> Line("Sum", "345", "cm"); plain math comes back unchanged."""
    label = None
    m = _LABEL.match(text) or _EVENT.match(text)
    if m:
        label, text = m["label"], m["math"]
    u = _UNIT.search(text)
    if u:
        return Line(label, text[: u.start()], UNITS[u["unit"]])
    return Line(label, text, None)


def with_label(text: str, latex: str, label: str) -> tuple[str, str]:
    """A line's text and LaTeX with a worded prefix, written the way :func:`read_line` reads it."""
    if _EVENT.match(f"{label} = 0"):
        return f"{label} = {text}", f"{label_latex(label)}{latex}"
    return f"{label}: {text}", f"{label_latex(label)}{latex}"


def label_latex(label: str) -> str:
    """The LaTeX a labelled line starts with (``\\text{Sum:}\\ ``, ``\\text{P(red)} = ``, ``RP = ``)."""
    if re.fullmatch(r"[A-Z]{2}", label):
        return f"{label} = "
    if _EVENT.match(f"{label} = 0"):
        return rf"\text{{{label}}} = "
    return rf"\text{{{label}:}}\ "


def label_last(drafts: list[T], label: str) -> list[T]:
    """The drafts with the last one's text and LaTeX given a worded prefix (families' final lines)."""
    text, latex = with_label(drafts[-1].text, drafts[-1].latex, label)  # type: ignore[attr-defined]
    return [*drafts[:-1], replace(drafts[-1], text=text, latex=latex)]  # type: ignore[type-var]


def unit_last(drafts: list[T], unit: str) -> list[T]:
    """The drafts with the answer's unit written after the last one."""
    text, latex = with_unit(drafts[-1].text, drafts[-1].latex, unit)  # type: ignore[attr-defined]
    return [*drafts[:-1], replace(drafts[-1], text=text, latex=latex)]  # type: ignore[type-var]


def with_unit(text: str, latex: str, unit: str) -> tuple[str, str]:
    """A line's text and LaTeX with a trailing unit (``345 cm``; LaTeX ``345\\ \\mathrm{cm}``)."""
    if unit not in UNITS:
        raise ValueError(f"unit {unit!r} is not in synth.presentation.UNITS; add it there first")
    tex = _UNIT_LATEX.get(unit) or r"\mathrm{" + unit + "}"
    return f"{text} {unit}", rf"{latex}\ {tex}"


def form_request(form: str) -> str:
    """The sentence a question ends with to ask for ``form``."""
    if form not in FORMS:
        raise ValueError(f"answer_form {form!r} is unknown; use one of {sorted(FORMS)}")
    return FORMS[form]


@dataclass(frozen=True)
class Vocabulary:
    """The labels a problem's lines may carry and the value each names, plus its context words.

    ``labels`` maps a label (any case) to the value a correct line so labelled states;
    ``context`` holds the names and objects of the question's story (``ava``, ``ben``), which is
    how a wrong label is told apart as a contextual swap rather than a terminology swap.
    """

    labels: Mapping[str, sympy.Basic]
    context: tuple[str, ...] = ()


def label_words(label: str) -> tuple[str, ...]:
    """``"Chen's share"`` -> ("chen", "share"): case, possessives and apostrophes do not count."""
    return tuple(re.findall(r"[a-z0-9]+", re.sub(r"['’]s\b", "", label.lower())))


def label_fault(label: str, value: sympy.Basic | None, correct: bool, vocab: Vocabulary | None,
                same: Same) -> str | None:
    """terminology_swap / contextual_swap when ``label`` misnames the line, else None.

    A label the problem does not know is always a fault. A known label must also name what the
    line states, but only a correct line can be held to that: a miscalculated line keeps the
    label of the quantity it was meant to compute (that error is the math's, not the words').
    """
    known = {label_words(k): v for k, v in (vocab.labels.items() if vocab else ())}
    words = label_words(label)
    if words in known and (not correct or value is None or same(known[words], value)):
        return None
    context = set(vocab.context) if vocab else set()
    right = [k for k, v in known.items() if correct and value is not None and same(v, value)]
    reference = set(right[0]) if right else set().union(*known) if known else set()
    strange = [w for w in words if w not in reference]
    if any(w in TERM_SWAPS for w in strange):
        return "terminology_swap"
    if any(w in context for w in strange) or any(w in context for w in reference - set(words)):
        return "contextual_swap"
    return "terminology_swap"


def unit_fault(unit: str | None, expected: str | None) -> str | None:
    """incorrect_units when a line ends with a unit other than the answer's (no unit is not a fault)."""
    if unit is None or expected is None:
        return None
    return None if UNITS.get(expected, expected) == unit else "incorrect_units"


_FRACTION = re.compile(r"^[−-]?(?P<p>\d+)/(?P<q>\d+)$")
_INTEGER = re.compile(r"^[−-]?\d+$")
_DECIMAL = re.compile(r"^[−-]?\d+\.\d+$")


def answer_part(math: str) -> str:
    """What a final line states as the answer: the part after its last ``= `` (or all of it)."""
    return math.rpartition("= ")[2].strip()


def form_fault(math: str, form: str | None) -> str | None:
    """format_ignored when the answer on a final line is not written in the requested form."""
    if form is None:
        return None
    if form not in FORMS:
        raise ValueError(f"params answer_form {form!r} is unknown; use one of {sorted(FORMS)}")
    shown = answer_part(math)
    if form == "fraction":
        m = _FRACTION.match(shown)
        ok = bool(_INTEGER.match(shown)) or (m is not None and gcd(int(m["p"]), int(m["q"])) == 1 and m["q"] != "1")
    else:
        ok = bool(_INTEGER.match(shown) or _DECIMAL.match(shown))
    return None if ok else "format_ignored"


def name_faults(symbols: Sequence[frozenset[str] | None], var: str) -> list[bool]:
    """Lines that use a variable name other than the one the working settled on.

    The first line with a variable fixes the name (a consistent rename is fine); any later line
    using another name is a fault, as is a first line naming more than one variable.
    """
    working: str | None = None
    out = []
    for names in symbols:
        if not names:
            out.append(False)
            continue
        if working is None:
            working = var if var in names or len(names) > 1 else next(iter(names))
        out.append(names != {working})
    return out


def order_faults(shown: Sequence[str | None], reference: Sequence[str]) -> list[bool]:
    """Lines shown before a line of the reference solution that they come after in it.

    Lines not in the reference (edited, renamed, remarks: None) are not judged. A line is out of
    order when a later shown line is an earlier reference line: it was written too soon.
    """
    where: dict[str, list[int]] = {}
    for i, text in enumerate(reference):
        where.setdefault(text, []).append(i)
    matched: list[int | None] = []
    last = -1
    for text in shown:
        spots = where.get(text) if text is not None else None
        if not spots:
            matched.append(None)
            continue
        later = [i for i in spots if i > last]
        pick = later[0] if later else spots[0]
        matched.append(pick)
        last = max(last, pick)
    out = []
    for j, pos in enumerate(matched):
        out.append(pos is not None and any(q is not None and q < pos for q in matched[j + 1:]))
    return out


@dataclass(frozen=True)
class ShownLine:
    """What the verifier read from one line of the working (remarks are left out as None)."""

    text: str
    line: Line
    value: sympy.Basic | None  # what the line says, as judged
    correct: bool  # locally valid and globally correct


def presentation_faults(problem: Problem, shown: Sequence[ShownLine | None], same: Same, *,
                        vocabulary: Vocabulary | None, initial: sympy.Basic) -> tuple[str, ...]:
    """Per line, "" when its presentation is fine, else the presentation subtype it shows.

    Labels, units and variable names are judged on every line, the requested form on the
    final one, order against the problem's clean solution. Only lines whose math is right are
    judged: a miscalculated line is already an error, and its form, unit or label says nothing
    more (a slipped ``3/5`` written ``6/10`` is a computational error, not a format one).
    ``vocabulary`` and ``initial`` are the family's for this problem (see ``synth.verification.Worked``).
    """
    params = problem.params
    vocab = vocabulary
    unit, form = params.get("answer_unit"), params.get("answer_form")
    chain = [i for i, s in enumerate(shown) if s is not None]
    found: list[list[str]] = [[] for _ in shown]
    for i in chain:
        s = shown[i]
        assert s is not None
        if s.line.label is not None:
            found[i].append(label_fault(s.line.label, s.value, s.correct, vocab, same) or "")
        found[i].append(unit_fault(s.line.unit, unit) or "")
    if chain:
        last = shown[chain[-1]]
        assert last is not None
        found[chain[-1]].append(form_fault(last.line.math, form) or "")
    var = params.get("var")
    if isinstance(var, str) and one_variable_relation(initial, var):
        names = [frozenset(str(x) for x in s.value.free_symbols) if s is not None and s.value is not None else None
                 for s in shown]
        for i, bad in enumerate(name_faults(names, var)):
            found[i].append("variable_misnaming" if bad else "")
    reference = [s.text for s in problem.steps]
    for i, bad in enumerate(order_faults([s.text if s is not None else None for s in shown], reference)):
        found[i].append("logic_disruption" if bad else "")
    return tuple(next((f for f in fs if f), "") if s is not None and s.correct else ""
                 for fs, s in zip(found, shown))


def one_variable_relation(initial: sympy.Basic, var: str) -> bool:
    """Whether the question is an equation or inequality in ``var`` alone (where names are checked)."""
    return isinstance(initial, Relational) and {str(x) for x in initial.free_symbols} == {var}


__all__ = ["FORMS", "TERM_SWAPS", "UNITS", "Line", "ShownLine", "Vocabulary", "answer_part", "form_fault",
           "form_request", "label_fault", "label_last", "label_latex", "label_words", "name_faults",
           "one_variable_relation", "order_faults", "presentation_faults", "read_line", "unit_fault", "unit_last",
           "with_label", "with_unit"]
