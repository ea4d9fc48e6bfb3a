"""Whether a written final answer says what the gold answer says: the evaluation's tasks and the FERMAT scorer.

Every comparison goes through the whitelist parser (``synth.mathparse``); no text reaches sympify. An answer
that does not parse is compared as a normalized string, never guessed at. What a written answer may carry
around its value and still mean it: a variable (``x = 5``), a unit (``5 cm``, ``5\\ \\mathrm{cm}^2``), a label
(``\\text{Product:}\\ 25843``), a percent sign where the gold is the percentage's number (``25%`` for 25), the
relation signs ``≤ ≥ ≠``, and several values in any order (``t = 1 or t = −2``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from synth.mathparse import equivalent, try_parse
from synth.presentation import form_fault

# Answers are short; anything longer is not an answer we try to parse.
MAX_ANSWER_CHARS = 200
MAX_PARTS = 12
_SIGNS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2010": "-", "\u2014": "-",
                        "\u2264": "<=", "\u2265": ">=", "\u2260": "!="})
_PART_SPLIT = re.compile(r";|\n|\bor\b|\band\b|,(?=\s*[a-zA-Z]\s*=)")
_LATEX_WORD_JOIN = re.compile(r"\\(?:text|textrm|mathrm|mbox)\s*\{\s*(or|and)\s*\}")
# Units a school answer carries, each to its one spelling (a written answer's unit is compared with the gold's).
_UNIT_NAMES = {
    **{u: u for u in ("mm", "cm", "m", "km", "in", "ft", "yd", "mi", "mg", "g", "kg", "t", "lb", "oz", "mL", "cL",
                      "L", "s", "min", "h", "mph", "°", "units")},
    "ml": "mL", "cl": "cL", "l": "L", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "mins": "min",
    "minute": "min", "minutes": "min", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "day": "days",
    "days": "days", "week": "weeks", "weeks": "weeks", "year": "years", "years": "years", "deg": "°",
    "degree": "°", "degrees": "°", "inch": "in", "inches": "in", "foot": "ft", "feet": "ft", "metre": "m",
    "metres": "m", "meter": "m", "meters": "m", "unit": "units",
}
_UNIT_WORD = "|".join(sorted(map(re.escape, _UNIT_NAMES), key=len, reverse=True))
_POWER = r"(?:\^\s*\{?\s*[23]\s*\}?|[23²³])?"  # NFKC writes cm² as cm2
_UNIT = rf"(?:{_UNIT_WORD}){_POWER}(?:\s*/\s*(?:{_UNIT_WORD}){_POWER})?"
_TRAILING_UNIT = re.compile(rf"(?P<before>.*?)(?P<gap>\s*)(?P<unit>{_UNIT})\s*$", re.DOTALL)
# LaTeX around a value: a unit or a label in text type (``\mathrm{ft}^3``, ``\text{Product:}``), spacing, degrees.
_LATEX_WORDS = re.compile(r"\\(?:mathrm|text|textrm|mbox|operatorname)\s*\{\s*([^{}]*?)\s*\}")
_LATEX_SPACE = re.compile(r"\\[,;:! ]|\\q?quad\b|~")
_LATEX_DEGREE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?")
_LATEX_FRACTION = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")
_LABEL = re.compile(r"^[A-Za-z][A-Za-z' ()-]{1,40}:\s*(?=\S)")  # a word label before a colon (not 3:4)
_UNIT_FOLLOWS = set("0123456789)]}π")  # what a unit is written after: a number, a bracket, π
_BARE_EQUALS = re.compile(r"(?<![<>!=])=(?!=)")
_VARIABLE = re.compile(r"[A-Za-z]\w{0,2}")


def clean_answer(text: str) -> str:
    """Normalized answer text: NFKC, one minus sign, ASCII relation signs, no `$` or trailing period, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_SIGNS)
    text = text.replace("$", " ").strip().rstrip(".").strip()
    return " ".join(text.split())


def value_side(text: str) -> str:
    """``x = 5`` answers with 5: what follows the last ``=`` (not that of ``<=``, ``>=`` or ``!=``; Seeing Is
    Solving, App. E.4)."""
    parts = _BARE_EQUALS.split(text)
    return parts[-1].strip() if len(parts) > 1 else text


def split_parts(answer: str) -> list[str]:
    """Sub-answers of a multi-part answer (`;`, new lines, `or`, `and`), at most MAX_PARTS."""
    # "or" and "and" between values split; inside a label (\text{P(Boys or Football)} = 44/73) they do not
    parts = [clean_answer(p) for p in _PART_SPLIT.split(_plain(_LATEX_WORD_JOIN.sub(r" \1 ", answer)))]
    return [p for p in parts if p][:MAX_PARTS]


def _plain(text: str) -> str:
    """LaTeX's text-type words out: a unit kept as a word (``\\mathrm{ft}^3`` -> ``ft^3``), a label dropped
    (``\\text{Product:}``); spacing and ``^\\circ`` as plain text."""
    def word(m: re.Match[str]) -> str:
        return f" {m.group(1)}" if re.fullmatch(_UNIT, m.group(1)) else " "

    text = _LATEX_DEGREE.sub("°", text.replace("\\%", "%"))
    text = " ".join(_LATEX_SPACE.sub(" ", _LATEX_WORDS.sub(word, text)).split())
    return _LABEL.sub("", text)  # "Product: 2/9", "Eli's share: 528": the page's own last lines


def _unit(text: str) -> tuple[str, str | None]:
    """(the value, its unit in one spelling or None): ``62.8 mm`` -> (``62.8``, ``mm``), ``(529π)/2 in2``
    -> (``(529π)/2``, ``in2``). A unit follows a number, a bracket or π, and a unit of one letter (m, g, t, s, h,
    L) a space too: ``64t`` and ``9 - t`` are terms."""
    m = _TRAILING_UNIT.fullmatch(text)
    if m is None or not m.group("before").strip():
        return text, None
    unit, before = m.group("unit"), m.group("before")
    tail = before.rstrip()
    if tail[-1] not in _UNIT_FOLLOWS and not tail.endswith("\\pi"):  # 9 - t: a term, not 9 tonnes
        return text, None
    if not m.group("gap") and len(re.sub(r"[^A-Za-z]", "", unit)) < 2 and unit != "°":
        return text, None
    spelled = []
    for part in unit.split("/"):
        part = re.sub(r"[\s^{}]", "", part).replace("²", "2").replace("³", "3")
        name = part.rstrip("23")
        spelled.append(_UNIT_NAMES.get(name, name) + part[len(name):])
    return before.strip(), "/".join(spelled)


def _parsed(text: str) -> Any:
    return try_parse(text, max_length=MAX_ANSWER_CHARS, timeout_s=0.5) if text else None


def _name(text: str) -> str | None:
    """The variable an answer names (``q`` of ``q = 7``), or None."""
    parts = _BARE_EQUALS.split(text)
    return parts[-2].strip() if len(parts) > 1 and _VARIABLE.fullmatch(parts[-2].strip()) else None


def _form_kept(value: str, form: str | None) -> bool:
    """Whether a value is written in the form the question asks for (``synth.presentation.form_fault``)."""
    if form is None:
        return True
    plain = _LATEX_FRACTION.sub(r"\1/\2", value).replace(" ", "").removeprefix("(").removesuffix(")")
    plain = re.sub(r"^(-?)\.(?=\d)", r"\g<1>0.", plain)  # .25 is the decimal 0.25
    return form_fault(plain, form) is None


def _one_matches(pred: str, gold: str, form: str | None = None, names: bool = False) -> bool:
    """One value against one; ``names``: the variables must agree too (a system's p = 6 is not its q = 6)."""
    pred, gold = _plain(clean_answer(pred)), _plain(clean_answer(gold))
    named = _name(pred), _name(gold)
    if names and None not in named and named[0] != named[1]:
        return False
    p, g = value_side(pred), value_side(gold)
    if not p:
        return False
    if p.endswith("%") != g.endswith("%"):  # "25%" for the percentage 25, "25" for 25%: the number is the answer
        p, g = p.removesuffix("%").strip(), g.removesuffix("%").strip()  # (so 0.25% passes for 0.25: a number gold
        # cannot say it is not a percentage, and "25%" against a gold of 25 is the common case)
    (p, p_unit), (g, g_unit) = _unit(p), _unit(g)
    if p_unit is not None and g_unit is not None and p_unit != g_unit:  # 180 h is not 180 min
        return False
    if not _form_kept(p, form):  # 0.0625 where the question asks for a fraction in its simplest form
        return False
    if p.replace(" ", "") == g.replace(" ", ""):
        return True
    a, b = _parsed(p), _parsed(g)
    if a is None or b is None:
        return False
    return bool(equivalent(a, b, timeout_s=1.0))


def answers_match(pred: str, gold: str, *, form: str | None = None) -> bool:
    """Whether a predicted final answer says the same value(s) as the gold one: every value of a gold that lists
    several, in any order, and no other; with ``form`` (a problem's ``answer_form``: fraction or decimal), only
    written in that form.

    >>> answers_match("x = -10/2", "-5"), answers_match("t = 1 or t = −2", "t = −2 or t = 1")
    (True, True)
    """
    if not isinstance(pred, str) or not isinstance(gold, str) or len(pred) > MAX_ANSWER_CHARS:
        return False
    gold_parts = split_parts(gold)
    if len(gold_parts) > 1:  # several values: every one, in any order, and no other
        pred_parts = split_parts(pred)
        return len(pred_parts) == len(gold_parts) and part_credit(pred_parts, gold_parts, form=form) == 1.0
    # one value: the value the answer ends on (``Hence, x = 5``; ``P(Afternoon or Juice) = 33/58``)
    return _one_matches(pred, gold, form)


def part_credit(pred_parts: Sequence[str], gold_parts: Sequence[str], *, form: str | None = None) -> float:
    """MathReal-style loose credit: gold parts matched one-to-one, over the larger of the two counts.

    Extra predicted parts cost credit, so listing every candidate never scores full marks.
    """
    if not gold_parts or not pred_parts:
        return 0.0
    unused = list(pred_parts)
    matched = 0
    # a gold naming two variables (a system) is matched name by name; one name (a root set) is not: renaming the
    # unknown (y for a) is a superficial control's edit, its answer still right
    names = len({_name(_plain(clean_answer(g))) for g in gold_parts} - {None}) > 1
    for g in gold_parts:
        for i, p in enumerate(unused):
            if _one_matches(p, g, form, names):
                matched += 1
                del unused[i]
                break
    return matched / max(len(gold_parts), len(pred_parts))


def gold_answer(answer_text: str, answer_value: str, *, as_written: bool = False) -> str:
    """What a written final answer is scored against: the answer's value, or the answer as written when it lists
    several values (the value of ``t = −2 or t = 1`` is the verifier's ``t^2 + t - 2``, of ``p = 6 and q = 6``
    ``(p - 6)^2 + (q - 6)^2 = 0``: no pupil writes those) or when ``as_written`` (a unit the question asks for:
    ``180 min``)."""
    if as_written or len(split_parts(answer_text)) > 1:
        return answer_text
    return answer_value


def wrong_only_as_asked(answer_correct: bool, answer_changed: bool) -> bool:
    """An error that left the number right and the unit or requested form wrong (``180 h`` for 180 min): its
    correction is scored against the answer as written, ``gold_answer(..., as_written=True)``."""
    return not answer_correct and not answer_changed
