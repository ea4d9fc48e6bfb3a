"""categorize-errorradar (ErrorRadar CATE): the first error as VIS, CAL, REAS, KNOW or MIS. Macro P/R/F1."""

from __future__ import annotations

from synth.evaluate.metrics import classification
from synth.evaluate.tasks import Task, register_task
from synth.evaluate.tasks._parsing import label_parser
from synth.vocab import ERRORRADAR, ERRORRADAR_CODES, ERRORRADAR_NAMES

# A model may answer with the code, the full name, or the name without "Error".
_PHRASES = {p.casefold(): code for code, name, _ in ERRORRADAR for p in (code, name)}
_PHRASES |= {name.casefold().removesuffix(" error"): code for code, name, _ in ERRORRADAR}

register_task(Task(
    id="categorize-errorradar", summary="ErrorRadar's category: VIS, CAL, REAS, KNOW or MIS (macro F1)",
    template="eval/categorize_errorradar.j2",
    applies=lambda item: item.variant.error is not None and bool(item.variant.error.projections.get("errorradar")),
    needs="an injected error of a kind ErrorRadar names",
    gold=lambda item: item.variant.error.projections["errorradar"],
    parse=label_parser("error category|category", _PHRASES),
    answer=lambda label: f"Error Category: {ERRORRADAR_NAMES[label]}",
    labels=ERRORRADAR_CODES,
    choices=lambda item: ERRORRADAR_CODES,
    metrics=(classification(ERRORRADAR_CODES, per_class=True),),
    context={"errorradar": ERRORRADAR},
    headline="macro_f1",
))
