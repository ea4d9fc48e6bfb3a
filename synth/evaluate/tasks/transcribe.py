"""transcribe (FERMAT's OCR prompt): the page's question and steps as text. Character error rate."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from synth.evaluate.metrics import Metric, Scored
from synth.evaluate.tasks import Label, Task, page_text_known, register_task
from synth.evaluate.tasks._parsing import MAX_PARSE_CHARS
from synth.evaluate.textdist import cer, levenshtein, normalize_for_cer
from synth.records import Item

# A header is a whole line (`Solution`) or a label with a colon (`**Question:** ...`).
_TRANSCRIPT_HEADER = re.compile(r"^\**(?:question|problem|answer|solution|steps|transcription)\**"
                                r"(?::\**\s*|\**\s*$)", re.IGNORECASE)
_STEP_LABEL = re.compile(r"^(?:step\s*)?\d{1,3}\s*[.):]\s+", re.IGNORECASE)


def transcript_lines(text: str) -> list[str]:
    """Lines of a transcription with headers (`Question:`) and step labels (`Step 2:`, `2.`) removed."""
    lines = []
    for line in unicodedata.normalize("NFKC", text).splitlines():
        line = _STEP_LABEL.sub("", _TRANSCRIPT_HEADER.sub("", line.strip().strip("`"))).strip()
        if line:
            lines.append(line)
    return lines


def gold_transcript(item: Item) -> str:
    return "\n".join([item.problem.question_text, *(s.text for s in item.variant.steps)])


def parse_transcript(response: str) -> str | None:
    if not isinstance(response, str):
        return None
    text = "\n".join(transcript_lines(response[-MAX_PARSE_CHARS * 4:]))
    return text or None


def _transcribe_credit(item: Item, pred: Label | None) -> float:
    return 0.0 if pred is None else max(0.0, 1.0 - cer(str(pred), gold_transcript(item)))


def transcription_metrics(scored: Sequence[Scored]) -> dict[str, Any]:
    """Mean CER per item, pooled CER (edits over all gold characters) and the share read exactly."""
    rates, edits, chars = [], 0, 0
    for s in scored:
        g, p = normalize_for_cer(str(s.gold)), normalize_for_cer(str(s.pred or ""))
        d = levenshtein(p, g)
        edits += d
        chars += len(g)
        rates.append(d / len(g) if g else float(bool(p)))
    return {"cer": float(np.mean(rates)), "cer_median": float(np.median(rates)),
            "pooled_cer": edits / chars if chars else None,
            "exact": float(np.mean([r == 0 for r in rates])), "accuracy": float(np.mean([r == 0 for r in rates]))}


def character_error_rate() -> Metric:
    """``transcription_metrics`` as a task metric."""
    return transcription_metrics


register_task(Task(
    id="transcribe", summary="the page's question and steps as text (needs --input image; CER)",
    template="eval/transcribe.j2",
    applies=page_text_known, needs="a page mathstress wrote (the text on your own images is unknown)",
    gold=gold_transcript,
    parse=parse_transcript,
    answer=lambda label: str(label),
    credit=_transcribe_credit,
    metrics=(character_error_rate(),),
    shows_steps=False,
    needs_image=True,
    headline="cer",
    lower_is_better=True,
))
