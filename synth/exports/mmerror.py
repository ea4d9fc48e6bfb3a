"""MMErroR's layout, read by its own code unchanged (github.com/code-here-in/MMerroR-Evaluation @ b5fc9f82).

Their loader (``mmerror_eval/dataset.py``) globs ``MMErroR_*.json`` in a ``jsons`` folder, one JSON
object per item, skips items without a ``label``, and finds the image at ``images/<question_id>``
(``.png`` first) beside it. It reads ``question_id``, ``question``, ``correct_answer``,
``error_reason`` (the erroneous reasoning chain), ``label``, ``domain`` and ``subdomain``.

ETC (error type, A-D) has no no-error option: their ETC run fails an ``E_NoError`` item with
"Unsupported ground-truth label". So the export holds two folders, each a ``jsons``/``images``
pair: ``ETC`` with the error items only, ``EPD`` (error presence, then type) with error and
no-error items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth.exports._base import (
    EXPORTS,
    OWN_IMAGE,
    Context,
    Exporter,
    FormRecord,
    export_image,
    gold_answer,
    numbered,
    own_image,
    question_text,
    read_json,
    require_file,
    write_json,
)
from synth.taxonomy import SUBTYPES
from synth.vocab import MMERROR_NO_ERROR, MMERROR_OPTIONS

# Their label for an error-free chain (EPD's option E), as mmerror_eval/labels.py spells it; their ETC rejects it.
E_NO_ERROR = MMERROR_NO_ERROR
TASK_FOLDERS = ("ETC", "EPD")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")   # the order their find_image tries
# MMErroR's six domains include Data & Analytics with a subdomain named "Charts & Data Interpretation";
# our chart and table reading problems are exactly that. Its other 23 subdomain names are not published.
CHART_FIGURES = frozenset({"bar_chart", "line_chart", "pie_chart", "table"})
MATH_DOMAIN = "Mathematics & Logic"
CHARTS = ("Data & Analytics", "Charts & Data Interpretation")

DIFFERENCES = (
    "ETC and EPD are two folders: ETC holds only the error items (MMErroR's ETC has no no-error option and fails "
    "an E_NoError item as 'Unsupported ground-truth label'); EPD holds the error items and the no-error items",
    "subdomain: MMErroR names 24 subdomains but publishes neither their list nor the strings its files use; chart "
    "and table problems get the one named subdomain that fits (Charts & Data Interpretation, domain Data & "
    "Analytics), the others keep our subdomain under Mathematics & Logic (their code uses subdomain only to group "
    "scores)",
    "error_reason is our shown solution: paragraphs of prose for rows written in the cot style (as MMErroR's "
    "chains are), 'Step k: ...' lines for the other styles",
    "question_id is MMErroR_<our item id>, not MMErroR_<5 digits>; the file and the image carry the same name",
    "items whose error leaves the final answer right are left out (MMErroR chains end on a wrong answer)",
    "multiple-choice options are written into the question text and correct_answer is the option letter",
)


def question_id(item_id: str) -> str:
    return f"MMErroR_{item_id}"


def mmerror_domain(row: dict[str, Any]) -> tuple[str, str]:
    """MMErroR's (domain, subdomain) for one of our problems."""
    if row["figure"] is not None and row["figure"]["kind"] in CHART_FIGURES:
        return CHARTS
    return MATH_DOMAIN, row["subdomain"]


def error_reason(row: dict[str, Any]) -> str:
    """The chain as MMErroR shows it: a cot row's paragraphs as prose, other styles' steps as numbered lines."""
    if row.get("solution_style") == "cot":
        return "\n\n".join(s["text"] for s in row["steps"])
    return "\n".join(numbered(row["steps"]))


def mmerror_record(row: dict[str, Any], source: str) -> dict[str, Any]:
    err = row["error"]
    domain, subdomain = mmerror_domain(row)
    return {
        "question_id": question_id(row["id"]), "question": question_text(row), "correct_answer": gold_answer(row),
        "error_reason": error_reason(row),
        "label": MMERROR_OPTIONS[err["projections"]["mmerror"]] if err else E_NO_ERROR,
        "domain": domain, "subdomain": subdomain,
        # Not read by their code: where the item comes from.
        "id": row["id"], "base_id": row["base_id"], "subtype": err["subtype"] if err else None,
        "image_source": source,
    }


def _why_not(row: dict[str, Any]) -> str | None:
    if row["degradations"]:
        return "photo of a page (MMErroR images are clean)"
    if own_image(row):
        return OWN_IMAGE
    err = row["error"]
    if err is not None:
        if err["projections"]["mmerror"] is None:
            return f"no MMErroR type for {err['subtype']}"
        if not err["answer_changed"]:
            return "final answer still correct (MMErroR chains end on a wrong answer)"
    return None


def write(ctx: Context) -> None:
    domains: dict[str, int] = {}
    for row in ctx.rows():
        why = _why_not(row)
        png = ctx.figure_png(row) if why is None else None
        if why is None and png is None and row["image"] is None:
            why = "no image (render disabled and no figure that can be drawn)"
        if why is not None:
            ctx.skip(why)
            continue
        rec = mmerror_record(row, "figure" if png is not None else "page")
        qid = rec["question_id"]
        for task in TASK_FOLDERS if row["error"] else ("EPD",):
            write_json(ctx.target(f"{task}/jsons/{qid}.json"), rec, indent=2)
            image = f"{task}/images/{qid}.png"
            if png is not None:
                ctx.put_bytes(image, png)
            else:
                ctx.copy_png(row["image"], image)
        ctx.written += 1
        key = f"{rec['domain']} / {rec['subdomain']}"
        domains[key] = domains.get(key, 0) + 1
    dest = ctx.dest.resolve()
    ctx.details |= {
        "folders": {"ETC": "error items only (task mode etc)", "EPD": "error and no-error items (task mode epd)"},
        "labels": {**{name: letter for letter, name in MMERROR_OPTIONS.items()}, E_NO_ERROR: "E (EPD only)"},
        "domains": dict(sorted(domains.items())),
        "run_their_code": [f"cd MMerroR-Evaluation && python run.py --data-dir {dest}/ETC/jsons --task-mode etc",
                           f"python run.py --data-dir {dest}/EPD/jsons --task-mode epd"]}


def _image(folder: Path, qid: str) -> Path | None:
    return next((folder / f"{qid}{s}" for s in IMAGE_SUFFIXES if (folder / f"{qid}{s}").is_file()), None)


def load(root: Path) -> list[FormRecord]:
    """The EPD folder's items (all of them) in their loader's order; ``tasks`` says which folders hold each."""
    folder = require_file(root / "EPD" / "jsons", root, "mmerror")
    in_etc = {p.name for p in (root / "ETC" / "jsons").glob("MMErroR_*.json")}
    out = []
    for path in sorted(p for p in folder.glob("MMErroR_*.json") if p.name != "MMErroR_all.json"):
        rec = read_json(path, root, "mmerror")
        image = _image(root / "EPD" / "images", str(rec["question_id"]))
        tasks = ("ETC", "EPD") if path.name in in_etc else ("EPD",)
        out.append(FormRecord(id=rec["id"], labels={"label": rec["label"], "tasks": tasks}, raw=rec,
                              image=export_image(root, image.relative_to(root) if image else None, path, rec["id"])))
    return out


def task_gold(record: FormRecord, task_id: str) -> Any:
    has_error = record.labels["label"] != E_NO_ERROR
    if task_id == "detect":
        return "incorrect" if has_error else "correct"
    if task_id == "categorize":
        return SUBTYPES[record.raw["subtype"]].family if has_error else None
    return None


EXPORTS.register(Exporter(
    id="mmerror", title="MMErroR (github.com/code-here-in/MMerroR-Evaluation @ b5fc9f82)", write=write, load=load,
    task_gold=task_gold, entries=TASK_FOLDERS, earlier=("mmerror.jsonl", "images"), differences=DIFFERENCES,
    verifies=("image",),
    help="MMErroR: ETC/ and EPD/ (jsons/ and images/ each), read by its run.py unchanged"))
