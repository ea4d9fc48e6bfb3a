"""categorize: the first error's family in our taxonomy (DESIGN §5). Macro P/R/F1, per-family scores."""

from __future__ import annotations

import re

from synth.evaluate.metrics import classification
from synth.evaluate.tasks import Task, register_task
from synth.evaluate.tasks._parsing import last_match, normalized_lines
from synth.vocab import FAMILY_DEFINITIONS

FAMILIES = tuple(label for label, _ in FAMILY_DEFINITIONS)
_FAMILY_WORDS = "|".join(label.replace("_", " ") for label in FAMILIES)
_CATEGORIZE_KEYED = re.compile(rf"(?<![a-z])(?:category|error type|type|answer) ?[:=] ?({_FAMILY_WORDS})(?![a-z])")
_CATEGORIZE_BARE = re.compile(rf"({_FAMILY_WORDS})(?: error)?")


def parse_categorize(response: str) -> str | None:
    """A taxonomy family id (DESIGN §5), or None."""
    value = last_match(normalized_lines(response), _CATEGORIZE_KEYED, _CATEGORIZE_BARE)
    return None if value is None else value.replace(" ", "_")


register_task(Task(
    id="categorize", summary="the first error's family: computational, conceptual, ... (macro F1)",
    template="eval/categorize.j2",
    applies=lambda item: item.variant.error is not None, needs="an injected error (an error variant)",
    gold=lambda item: item.variant.error.family,
    parse=parse_categorize,
    answer=lambda label: f"Category: {label}",
    labels=FAMILIES,
    choices=lambda item: FAMILIES,
    metrics=(classification(FAMILIES, per_class=True),),
    context={"categories": FAMILY_DEFINITIONS},
    headline="macro_f1",
))
