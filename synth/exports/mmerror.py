"""MMErroR's form: a 4-way error type over single-error chains, and no-error chains for error presence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth.exports._base import (
    EXPORTS,
    Context,
    Exporter,
    FormRecord,
    Records,
    load_records,
    numbered,
    write_records,
)
from synth.taxonomy import SUBTYPES
from synth.vocab import MMERROR_NO_ERROR, MMERROR_OPTIONS

DATA = "mmerror.jsonl"


def mmerror_records(ctx: Context, row: dict[str, Any]) -> Records:
    if row["variant"] == "degraded":
        return "degraded photo (MMErroR images are clean)"
    err = row["error"]
    if err is not None:
        letter = err["projections"]["mmerror"]
        if letter is None:
            return f"no MMErroR type for {err['subtype']}"
        if not err["answer_changed"]:
            return "final answer still correct (MMErroR chains end on a wrong answer)"
    image, source = ctx.question_image(row)
    if image is None:
        return "no image (render disabled and no figure)"
    label = MMERROR_OPTIONS[err["projections"]["mmerror"]] if err else MMERROR_NO_ERROR
    return [{
        "id": row["id"], "base_id": row["base_id"], "image": image, "image_source": source,
        "question": row["question"]["text"], "reasoning": "\n".join(numbered(row["steps"])),
        "answer": row["answer"]["text"], "label": label,
        "letter": err["projections"]["mmerror"] if err else None,
        "tasks": ["ETC", "EPD"] if err else ["EPD"],
        "epd_answer": "Error Present" if err else MMERROR_NO_ERROR, "options": MMERROR_OPTIONS,
        "domain": "Mathematics & Logic", "subdomain": row["subdomain"],
        "subtype": err["subtype"] if err else None,
    }]


def write(ctx: Context) -> None:
    write_records(ctx, DATA, mmerror_records)


def load(root: Path) -> list[FormRecord]:
    return load_records(root, "mmerror", DATA, id_key="id", image_keys=("image",), labels=lambda rec: {
        "label": rec["letter"] or MMERROR_NO_ERROR, "tasks": tuple(rec["tasks"])})


def task_gold(record: FormRecord, task_id: str) -> Any:
    has_error = record.labels.get("label") != MMERROR_NO_ERROR
    if task_id == "detect":
        return "incorrect" if has_error else "correct"
    if task_id == "categorize":
        return SUBTYPES[record.raw["subtype"]].family if has_error else None
    return None


EXPORTS.register(Exporter(
    id="mmerror", title="MMErroR", write=write, load=load, task_gold=task_gold, entries=(DATA, "images"),
    help="MMErroR: 4-way error type (ETC) and error presence (EPD) over reasoning chains"))
