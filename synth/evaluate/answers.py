"""Final answers from untrusted model text: extraction (`\\boxed{}`, keyed lines, JSON) and equivalence.

Every comparison goes through the whitelist parser (``synth.mathparse``); no text reaches
sympify. An answer that does not parse is compared as a normalized string, never guessed at.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from synth.mathparse import equivalent, try_parse

# Answers are short; anything longer is not an answer we try to parse.
MAX_ANSWER_CHARS = 200
MAX_PARTS = 12
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2010": "-", "\u2014": "-"})
# A trailing unit word (cm, m^2, degrees, units): two or more letters, optionally with a power.
_UNIT_SUFFIX = re.compile(r"(?<=[0-9)}\s])\s*(?:[a-zA-Z]{2,}(?:\^?[23²³])?|°|%)\s*$")
_PART_SPLIT = re.compile(r";|\n|\bor\b|\band\b|,(?=\s*[a-zA-Z]\s*=)")


def clean_answer(text: str) -> str:
    """Normalized answer text: NFKC, one minus sign, no `$` or trailing period, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_MINUS)
    text = text.replace("$", " ").strip().rstrip(".").strip()
    return " ".join(text.split())


def _value_side(text: str) -> str:
    # `x = 5` answers with 5; keep what follows the last `=` (Seeing Is Solving, App. E.4).
    return text.rsplit("=", 1)[1].strip() if "=" in text else text


def _parsed(text: str) -> Any:
    value = try_parse(text, max_length=MAX_ANSWER_CHARS, timeout_s=0.5)
    if value is None:
        stripped = _UNIT_SUFFIX.sub("", text).strip()
        if stripped and stripped != text:
            value = try_parse(stripped, max_length=MAX_ANSWER_CHARS, timeout_s=0.5)
    return value


def answers_match(pred: str, gold: str) -> bool:
    """Whether a predicted final answer says the same value as the gold one.

    >>> answers_match("x = -10/2", "-5")
    True
    """
    if not isinstance(pred, str) or len(pred) > MAX_ANSWER_CHARS:
        return False
    p, g = _value_side(clean_answer(pred)), _value_side(clean_answer(gold))
    if not p:
        return False
    if p.replace(" ", "") == g.replace(" ", ""):
        return True
    a, b = _parsed(p), _parsed(g)
    if a is None or b is None:
        return False
    return bool(equivalent(a, b, timeout_s=1.0))


def split_parts(answer: str) -> list[str]:
    """Sub-answers of a multi-part answer (`;`, new lines, `or`, `and`), at most MAX_PARTS."""
    parts = [clean_answer(p) for p in _PART_SPLIT.split(answer)]
    return [p for p in parts if p][:MAX_PARTS]


def part_credit(pred_parts: Sequence[str], gold_parts: Sequence[str]) -> float:
    """MathReal-style loose credit: gold parts matched one-to-one, over the larger of the two counts.

    Extra predicted parts cost credit, so listing every candidate never scores full marks.
    """
    if not gold_parts or not pred_parts:
        return 0.0
    unused = list(pred_parts)
    matched = 0
    for g in gold_parts:
        for i, p in enumerate(unused):
            if answers_match(p, g):
                matched += 1
                del unused[i]
                break
    return matched / max(len(gold_parts), len(pred_parts))


def boxed(text: str) -> list[str]:
    """Contents of every `\\boxed{...}` (balanced braces), in order; unbalanced ones are skipped."""
    found: list[str] = []
    start = 0
    while len(found) < MAX_PARTS:
        at = text.find("\\boxed{", start)
        if at < 0:
            break
        i, depth = at + len("\\boxed{"), 1
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            break
        found.append(text[at + len("\\boxed{"):i - 1].strip())
        start = i
    return found


def last_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a response ends with (code fences allowed), or None."""
    end = text.rfind("}")
    start = text.find("{")
    while 0 <= start < end:
        try:
            value = json.loads(text[start:end + 1])
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None
