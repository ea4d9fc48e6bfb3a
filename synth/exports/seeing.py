"""Seeing Is Solving's form: each figure problem posed with and without its image, refusal as isSolvable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth.exports._base import EXPORTS, Context, Exporter, FormRecord, Records, load_records, write_records
from synth.vocab import SEEING_CONDITIONS, SEEING_ROLES

DATA = "seeing.jsonl"


def _solvable(role: str, condition: str) -> bool:
    if role == "insufficient":
        return False
    return condition == "with_image" or role in ("useful", "not_required")


def seeing_records(ctx: Context, row: dict[str, Any]) -> Records:
    if row["variant"] != "clean":
        return "not a clean problem (Seeing Is Solving poses problems, not solutions or photos)"
    if row["figure"] is None:
        return "no figure (Seeing Is Solving items have exactly one image in the stem)"
    image = ctx.figure(row, "images")
    if image is None:
        return "figure could not be drawn (no drawer for its kind)"
    from_figure = [g for g in row["givens"] if str(g.get("source", "")).startswith("figure:")]
    answer = {"value": row["answer"]["text"], "units": None}
    out = []
    for condition in SEEING_CONDITIONS:
        solvable = _solvable(row["image_role"], condition)
        missing = [] if solvable else [f"{g['name']} (shown in the figure)" for g in from_figure]
        steps = [{"step_number": s["index"], "description": s["text"]} for s in row["clean_solution"]]
        out.append({
            "id": row["id"], "base_id": row["base_id"], "condition": condition,
            "question_text": row["question"]["text"], "image": image if condition == "with_image" else None,
            "image_role": SEEING_ROLES[row["image_role"]], "isSolvable": solvable, "answer": answer,
            "reference_response": {"solution": {
                "isSolvable": solvable, "required_information": missing,
                "steps": steps if solvable else [], "answer": answer if solvable else None}},
        })
    return out


def write(ctx: Context) -> None:
    write_records(ctx, DATA, seeing_records)


def load(root: Path) -> list[FormRecord]:
    return load_records(root, "seeing", DATA, id_key="id", image_keys=("image",), labels=lambda rec: {
        "condition": rec["condition"], "image_role": rec["image_role"], "isSolvable": rec["isSolvable"]})


EXPORTS.register(Exporter(
    id="seeing", title="Seeing Is Solving", write=write, load=load, entries=(DATA, "images"),
    help="Seeing Is Solving: each figure problem with and without its image, isSolvable and the reference answer"))
