"""categorize-mmerror (MMErroR ETC): the error type as A, B, C or D. Macro P/R/F1."""

from __future__ import annotations

from synth.evaluate.metrics import classification
from synth.evaluate.tasks import Task, register_task
from synth.evaluate.tasks._parsing import label_parser
from synth.records import Item
from synth.vocab import MMERROR, MMERROR_LETTERS


def type_phrases() -> dict[str, str]:
    """What a model may write for each letter: "b", "b reasoning error", "reasoning error", "reasoning"."""
    phrases: dict[str, str] = {}
    for letter, name, _ in MMERROR:
        words = name.casefold().replace("_", " ")            # "a visual perception error"
        for p in (letter.casefold(), words, words[2:], words[2:].removesuffix(" error")):
            phrases[p] = letter
    return phrases


def mmerror_of(item: Item) -> str | None:
    """The item's MMErroR letter, None for error-free items and errors MMErroR has no type for."""
    return None if item.variant.error is None else item.variant.error.projections.get("mmerror")


register_task(Task(
    id="categorize-mmerror", summary="MMErroR's error type: A, B, C or D (macro F1)",
    template="eval/categorize_mmerror.j2",
    applies=lambda item: mmerror_of(item) is not None, needs="an injected error of a kind MMErroR names",
    gold=mmerror_of,
    parse=label_parser("error type|type|answer", type_phrases()),
    answer=lambda label: f"Error Type: {label}",
    labels=MMERROR_LETTERS,
    choices=lambda item: MMERROR_LETTERS,
    metrics=(classification(MMERROR_LETTERS, per_class=True),),
    context={"mmerror": MMERROR},
    headline="macro_f1",
))
