"""Final answers from untrusted model text: extraction (`\\boxed{}`, keyed lines, JSON); equivalence is
``synth.answermatch``'s (shared with the FERMAT scorer), re-exported here.
"""

from __future__ import annotations

import json
from typing import Any

from synth.answermatch import (
    MAX_ANSWER_CHARS,
    MAX_PARTS,
    answers_match,
    clean_answer,
    gold_answer,
    part_credit,
    split_parts,
    wrong_only_as_asked,
)

__all__ = ["MAX_ANSWER_CHARS", "MAX_PARTS", "answers_match", "boxed", "clean_answer", "gold_answer",
           "last_json_object", "part_credit", "split_parts", "wrong_only_as_asked"]


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
