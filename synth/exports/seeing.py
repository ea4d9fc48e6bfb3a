"""Seeing Is Solving's form (Croteau & Heffernan, JEDM; scoring per App. E.4): each figure problem posed
with and without its image, refusal as ``isSolvable``.

No loader is public; the paper's scorer compares ``answer.value`` strings: it keeps what follows the
last ``=``, inserts ``*`` for implicit products, parses with SymPy and checks ``simplify(pred - gold)
== 0``; units are not compared. So the gold ``value`` is written in that convention: ASCII,
``**`` for powers, ``pi`` and ``sqrt(...)``, and the unit apart in ``units``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from synth.exports._base import EXPORTS, Context, Exporter, FormRecord, Records, load_records, write_records
from synth.vocab import SEEING_CONDITIONS, SEEING_ROLES

DATA = "seeing.jsonl"
# A unit after the number (`12 cm`, `200π in²`), or a sign stuck to it (`50%`, `49°`).
_UNIT = re.compile(r"(?:(?<=\S)\s+(?P<word>[A-Za-zμ]{1,4}[²³]?)|(?P<sign>[%°]))$")
_UNIT_ASCII = str.maketrans({"²": "^2", "³": "^3", "μ": "u"})
# What App. E.4's parse_expr reads without guessing: ASCII numbers, letters, operators, parentheses, `=`.
_PARSEABLE = re.compile(r"[0-9A-Za-z_*/+\-(). =]+")
UNPARSEABLE = "answers the Seeing Is Solving scorer cannot parse (inequalities, sets, factorials): value kept as is"

DIFFERENCES = (
    "answer.value follows App. E.4's scorer: ASCII, ** for powers, pi, E and sqrt(...), the unit apart in units "
    "(%, degrees, cm^2); a decimal answer shown rounded on the page keeps its exact value (2826/25 for 113.04)",
    "items are our problems that have a figure; image_role comes from construction, not from annotators",
    "with_image and without_image are two records of one problem (same id); only the with_image record names "
    "the image",
)


def answer_units(text: str) -> str | None:
    """The unit written after an answer (``cm^2``, ``%``, ``degrees``), ASCII, or None."""
    m = _UNIT.search(text.strip())
    if m is None:
        return None
    if m["sign"]:
        return "degrees" if m["sign"] == "°" else "%"
    return m["word"].translate(_UNIT_ASCII)


def sis_value(value: str) -> str:
    """Our plain answer text (``synth.mathparse.to_text``) in App. E.4's SymPy convention."""
    text = value.replace("^", "**").replace("sqrt(-1)", "I")
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)              # \theta -> theta
    text = re.sub(r"(?<![A-Za-z_])e(?![A-Za-z_(])", "E", text)  # Euler's number, not a symbol named e
    return re.sub(r"(?<![A-Za-z_])abs\(", "Abs(", text)


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
    value = sis_value(row["answer"]["value"])
    if not _PARSEABLE.fullmatch(value):
        ctx.notes[UNPARSEABLE] += 1
    from_figure = [g for g in row["givens"] if str(g.get("source", "")).startswith("figure:")]
    answer = {"value": value, "units": answer_units(row["answer"]["text"])}
    out = []
    for condition in SEEING_CONDITIONS:
        solvable = _solvable(row["image_role"], condition)
        missing = [] if solvable else [f"{g['name']} (shown in the figure)" for g in from_figure]
        steps = [{"step_number": s["index"], "description": s["text"]} for s in row["clean_solution"]]
        out.append({
            "id": row["id"], "base_id": row["base_id"], "condition": condition,
            "question_text": row["question"]["text"], "image": image if condition == "with_image" else None,
            "image_role": SEEING_ROLES[row["image_role"]], "isSolvable": solvable, "answer": answer,
            "answer_text": row["answer"]["text"],
            "reference_response": {"solution": {
                "isSolvable": solvable, "required_information": missing,
                "steps": steps if solvable else [], "answer": answer if solvable else None}},
        })
    return out


def write(ctx: Context) -> None:
    write_records(ctx, DATA, seeing_records)
    ctx.details["run_their_code"] = []  # no public code: score answer.value as App. E.4 does


def load(root: Path) -> list[FormRecord]:
    return load_records(root, "seeing", DATA, id_key="id", image_keys=("image",), labels=lambda rec: {
        "condition": rec["condition"], "image_role": rec["image_role"], "isSolvable": rec["isSolvable"]})


EXPORTS.register(Exporter(
    id="seeing", title="Seeing Is Solving (JEDM; App. E.4 scoring)", write=write, load=load,
    entries=(DATA, "images"), differences=DIFFERENCES,
    help="Seeing Is Solving (paper only): each figure problem with and without its image, answers as App. E.4 "
         "scores them"))
