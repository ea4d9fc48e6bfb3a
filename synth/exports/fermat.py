"""FERMAT's layout, read by its own pipeline unchanged (github.com/AI4Bharat/FERMAT @ ec1d8ac4), and a scorer.

Their ``main.py`` lists the ``.png`` files of ``--dir_name`` and sends each as
``../benchmark_images/<file name>`` (relative to the repository, where it runs); ``fill_in_csv.py``
finds each image's row in a CSV by ``annotation_url.str.contains(<file name>)`` and writes the
model's outputs beside the row's columns. The export is ``benchmark_images/<id>.png`` and
``fermat.csv`` with the released dataset's columns (new_custom_id, orig_q, orig_a, pert_a,
pert_reasoning, has_error, grade, domain_code, handwriting_style, image_quality) plus
``annotation_url`` and the labels our scorer needs: clone FERMAT beside ``benchmark_images``.

Their repository has no scorer (the paper judges EL and EC with GPT-4o). ``score_fermat`` scores the
CSV ``fill_in_csv.py`` writes: ED as balanced accuracy (positive = has an error), EL and EC as
accuracy with deterministic rules in place of the judge (see ``el_correct`` and ``ec_correct``);
``python -m synth.fermat_score FILLED.csv --gold EXPORT/fermat.csv`` prints the scores.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from synth.answermatch import answers_match, gold_answer, wrong_only_as_asked
from synth.exports._base import (
    EXPORTS,
    Context,
    Exporter,
    FormRecord,
    export_image,
    question_text,
    require_file,
    solution_latex,
)
from synth.taxonomy import SUBTYPES
from synth.vocab import FERMAT_ROTATION, FERMAT_TYPES

DATA = "fermat.csv"
IMAGES = "benchmark_images"
# The released dataset's columns, then annotation_url (what fill_in_csv.py matches), then ours.
COLUMNS = ("new_custom_id", "orig_q", "orig_a", "pert_a", "pert_reasoning", "has_error", "grade", "domain_code",
           "handwriting_style", "image_quality", "annotation_url",
           "error_steps", "first_error_step", "final_answer", "answer_form", "shown_answer_correct",
           "perturbation_axis", "perturbation_type", "subtype",
           "question_type", "subdomain", "rotation", "score_invariance", "render_style", "base_id")
# FERMAT's seven domain codes; ours map by family (percent, ratio and rate problems are its aptitude questions).
DOMAIN_CODES = {"algebra": "alg", "arithmetic": "art", "calculus": "clc", "geometry": "mgm", "solid": "mgm",
                "coordinate": "alg", "probability": "pst", "statistics": "pst", "trig": "trg", "commonsense": "apt"}
APTITUDE = ("arithmetic.percent", "arithmetic.ratio", "arithmetic.rate")

DIFFERENCES = (
    "FERMAT's annotation_url is the handwritten photo's URL; ours is benchmark_images/<id>.png, which is what "
    "fill_in_csv.py matches (new_custom_id is our item id)",
    "grade is c<first grade of the problem's band>, so problems for classes below 7 get c02..c06 (FERMAT covers "
    "classes 7-12, c00 for aptitude)",
    "domain_code follows the problem family (algebra and coordinate geometry alg, arithmetic art, percent/ratio/"
    "rate apt, calculus clc, geometry and solids mgm, probability and statistics pst, trigonometry trg, clocks and "
    "counting apt); FERMAT's subdomain codes are not written (our subdomain is)",
    "handwriting_style is True when the page stays legible (no quality degradation at severity 3), image_quality "
    "True when the photo has no degradation",
    "FERMAT photographs handwritten solutions: render_style says which of ours are printed pages",
    "EL and EC are scored by rules, not by the paper's GPT-4o judge: EL is right when the steps it names include "
    "the first wrong step and are all wrong steps (NA for no-error items), EC when its final answer equals the "
    "gold answer (NA, or the unchanged answer, for no-error items)",
    "final_answer is the answer as asked (with its unit, 180 min) when the error left the number right and the "
    "unit or requested form wrong; answer_form is the form the question asks for (fraction, decimal or empty), "
    "which EC's corrected answer must be written in; shown_answer_correct says whether the shown answer is right "
    "as asked",
)


def domain_code(family: str) -> str:
    if family.startswith(APTITUDE):
        return "apt"
    return DOMAIN_CODES.get(family.split(".")[0], "apt")


def grade_code(grade_band: str) -> str:
    head = grade_band.split("-")[0].strip()
    return f"c{int(head):02d}" if head.isdigit() else "c00"


def _image_fields(row: dict[str, Any]) -> dict[str, Any]:
    """FERMAT's per-image metadata, read from the item's degradation records (MathReal rubric bins)."""
    degs = row["degradations"]
    rotation = next((d["measured"].get("rotation", d["params"].get("rotation")) for d in degs
                     if d["subtype"] == "rotation"), None)
    unreadable = any(d["severity"] >= 3 and d["family"] == "quality" for d in degs)
    return {"handwriting_style": not unreadable, "image_quality": not degs,
            "rotation": FERMAT_ROTATION.get(str(rotation), "default")}


def _gold_answer(row: dict[str, Any]) -> str:
    """EC's gold: the answer's value, or the answer as asked (``180 min``) when the error left the number right
    and the unit or requested form wrong (``answer_correct`` false, ``answer_changed`` false)."""
    err = row["error"]
    unit_or_form = bool(err) and wrong_only_as_asked(err.get("answer_correct", True), err["answer_changed"])
    return gold_answer(row["answer"]["text"], row["answer"]["value"], as_written=unit_or_form)


def fermat_row(row: dict[str, Any], image: str) -> dict[str, Any] | str:
    """The CSV row of one item, or why FERMAT has no such item."""
    if row["variant"] == "clean":
        return "unperturbed solution (FERMAT's no-error items are superficial edits)"
    if row["variant"] == "degraded":
        return "photo of an unperturbed solution (FERMAT photographs perturbed solutions)"
    err, control = row["error"], row["control"]
    subtype = err["subtype"] if err else control["subtype"]
    axis = err["projections"]["fermat"] if err else "SU"
    if axis is None:
        return f"no FERMAT axis for {subtype} (FERMAT has no visual-perception errors)"
    return {
        "new_custom_id": row["id"], "orig_q": question_text(row), "orig_a": solution_latex(row["clean_solution"]),
        "pert_a": solution_latex(row["steps"]),
        "pert_reasoning": err["explanation"] if err else SUBTYPES[subtype].description,
        "has_error": 1 if err else 0, "grade": grade_code(row["grade_band"]), "domain_code": domain_code(row["family"]),
        **_image_fields(row), "annotation_url": image,
        "error_steps": ";".join(str(i) for i in err["error_steps"]) if err else "",
        "first_error_step": err["first_error_step"] if err else "", "final_answer": _gold_answer(row),
        "answer_form": (row.get("params") or {}).get("answer_form") or "",
        "shown_answer_correct": int(err.get("answer_correct", not err["answer_changed"])) if err else 1,
        "perturbation_axis": axis, "perturbation_type": FERMAT_TYPES.get(subtype, subtype), "subtype": subtype,
        "question_type": "MCQ" if row["question_type"] == "mcq" else "free-form", "subdomain": row["subdomain"],
        "score_invariance": 0 if err else 1, "render_style": (row["render"] or {}).get("style"),
        "base_id": row["base_id"],
    }


def write(ctx: Context) -> None:
    with ctx.target(DATA).open("w", encoding="utf-8", newline="") as out:
        table = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        table.writeheader()
        for row in ctx.rows():
            image = f"{IMAGES}/{row['id']}.png"
            got = fermat_row(row, image) if row["image"] is not None else "no image (render disabled)"
            if isinstance(got, str):
                ctx.skip(got)
                continue
            ctx.copy_png(row["image"], image)
            if got["render_style"] != "handwritten":
                ctx.notes["printed pages (FERMAT's photos are of handwritten solutions; see render_style)"] += 1
            table.writerow(got)
            ctx.written += 1
    dest = ctx.dest.resolve()
    ctx.details |= {"run_their_code": [
        f"git clone https://github.com/AI4Bharat/FERMAT {dest}/FERMAT && cd {dest}/FERMAT",
        f"python main.py --model MODEL --dir_name ../{IMAGES}",
        f"python fill_in_csv.py --csv_file ../{DATA} --json_file state_MODEL.json --model MODEL",
        f"python -m synth.fermat_score MODEL_<time>.csv --gold ../{DATA}"]}


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def load(root: Path) -> list[FormRecord]:
    data = require_file(root / DATA, root, "fermat")
    out = []
    for rec in _read_csv(data):
        has_error = int(rec["has_error"])
        steps = tuple(int(s) for s in rec["error_steps"].split(";") if s)
        out.append(FormRecord(id=rec["new_custom_id"], raw=rec, labels={
            "error": has_error, "axis": rec["perturbation_axis"],
            "first_error_step": int(rec["first_error_step"]) if has_error else None, "error_steps": steps,
            "location": rec["pert_reasoning"] if has_error else "NA"},
            image=export_image(root, rec["annotation_url"], data, rec["new_custom_id"])))
    return out


def task_gold(record: FormRecord, task_id: str) -> Any:
    has_error = record.labels["error"] == 1
    if task_id == "detect":
        return "incorrect" if has_error else "correct"
    if task_id == "localize":
        return record.labels["first_error_step"] if has_error else -1
    if task_id == "categorize":
        return SUBTYPES[record.raw["subtype"]].family if has_error else None
    return None


# -- scoring the CSV fill_in_csv.py writes ------------------------------------------------------------

ED_COLUMNS = {"1.1.1": "pred_err_1.1.1", "1.1.2": "pred_err_1.1.2", "1.2.1": "pred_err_1.2.1",
              "1.2.2": "pred_err_1.2.2"}
EL_COLUMNS = {"2.1": "pred_eloc_2.1", "2.2": "pred_eloc_2.2"}
EC_COLUMNS = {"3.1": "pred_corr_a_3.1", "3.2": "pred_corr_a_3.2"}
_NA = {"na", "n/a", "none", "no error", "no errors", "not applicable", "there is no error"}
_STEP = re.compile(r"\b(?:step|line)s?\s*(\d{1,3})((?:\s*(?:,|and|&)\s*\d{1,3})*)", re.IGNORECASE)
_MAX_CHARS = 4_000


def _flag(value: str | None) -> int | None:
    """An ED prediction cell (``1``, ``0``, ``1.0`` when pandas wrote the column as floats), else None."""
    try:
        number = float((value or "").strip())
    except ValueError:
        return None
    return int(number) if number in (0.0, 1.0) else None


def _is_na(text: str) -> bool:
    words = " ".join(unicodedata.normalize("NFKC", text).casefold().replace("*", " ").split()).strip(" .'\"`")
    return words in _NA


def named_steps(text: str) -> set[int]:
    """Step (or line) numbers an EL answer names: ``Step 3``, ``steps 2 and 4``, ``line 2``."""
    found: set[int] = set()
    for first, rest in _STEP.findall(text[:_MAX_CHARS]):
        found |= {int(first), *(int(n) for n in re.findall(r"\d{1,3}", rest))}
    return found


def el_correct(pred: str | None, has_error: bool, first_step: int | None, error_steps: Iterable[int]) -> bool:
    """EL: a no-error item is right when the answer is NA; an error item when the steps named include the
    first wrong step and every one of them is a wrong step."""
    if pred is None or not pred.strip():
        return False
    if not has_error:
        return _is_na(pred)
    named = named_steps(pred)
    return bool(named) and first_step in named and named <= set(error_steps)


def final_value(latex: str) -> str:
    """The final answer of a corrected solution: its last line without ``$`` (``answers_match`` takes the value
    right of each part's ``=``: ``m = −5 or m = −8`` is two values)."""
    lines = [ln for ln in re.split(r"\\\\|\n", latex[-_MAX_CHARS:]) if ln.strip()]
    last = unicodedata.normalize("NFKC", lines[-1] if lines else "").replace("$", " ")
    return last.strip().rstrip(".").strip()


def same_answer(pred: str, gold: str, form: str | None = None) -> bool:
    return answers_match(final_value(pred), final_value(gold), form=form)


def ec_correct(pred: str | None, has_error: bool, gold: str, form: str | None = None) -> bool:
    """EC: an error item is right when its corrected final answer equals the gold one; a no-error item when
    the answer is NA or leaves the (correct) answer unchanged."""
    if pred is None or not pred.strip():
        return False
    if _is_na(pred):
        return not has_error
    return same_answer(pred, gold, form)


def _binary(gold: list[int], pred: list[int | None]) -> dict[str, Any]:
    tp = sum(g == 1 and p == 1 for g, p in zip(gold, pred))
    tn = sum(g == 0 and p == 0 for g, p in zip(gold, pred))
    fp = sum(g == 0 and p == 1 for g, p in zip(gold, pred))
    pos, neg = sum(gold), len(gold) - sum(gold)
    recalls = [r for r in (tp / pos if pos else None, tn / neg if neg else None) if r is not None]
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / pos if pos else 0.0
    return {"n": len(gold), "accuracy": (tp + tn) / len(gold) if gold else None,
            "balanced_accuracy": sum(recalls) / len(recalls) if len(recalls) == 2 else None,
            "error_precision": precision, "error_recall": recall,
            "error_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            "unparsed": sum(p is None for p in pred)}


def score_fermat(filled: str | Path, gold: str | Path | None = None) -> dict[str, Any]:
    """ED, EL and EC scores of the CSV FERMAT's ``fill_in_csv.py`` wrote (``<model>_<time>.csv``).

    With ``gold`` (the export's ``fermat.csv``) every exported item counts and an item the run left
    out (not parsed, not matched) counts wrong; without it only the rows of ``filled`` count. Only
    the steps whose prediction column is present are scored.

    >>> score_fermat("pixtral_20250101_120000.csv", "export/fermat.csv")["ED"]["1.1.2"]  # doctest: +SKIP
    {'n': 120, 'accuracy': 0.7, 'balanced_accuracy': 0.68, ...}
    """
    preds = {r["new_custom_id"]: r for r in _read_csv(Path(filled))}
    rows = _read_csv(Path(gold)) if gold is not None else list(preds.values())
    columns = set().union(*(r.keys() for r in preds.values())) if preds else set()
    has_error = [int(float(r["has_error"])) for r in rows]
    out: dict[str, Any] = {"items": len(rows), "matched": sum(r["new_custom_id"] in preds for r in rows),
                           "ED": {}, "EL": {}, "EC": {}}

    def cell(row: dict[str, str], column: str) -> str | None:
        value = preds.get(row["new_custom_id"], {}).get(column)
        return None if value is None or value == "" else value

    for step, column in ED_COLUMNS.items():
        if column in columns:
            out["ED"][step] = _binary(has_error, [_flag(cell(r, column)) for r in rows])
    for step, column in EL_COLUMNS.items():
        if column in columns:
            right = [el_correct(cell(r, column), bool(e), int(r["first_error_step"]) if e else None,
                                (int(s) for s in r["error_steps"].split(";") if s)) for r, e in zip(rows, has_error)]
            out["EL"][step] = {"n": len(rows), "accuracy": sum(right) / len(rows) if rows else None}
    for step, column in EC_COLUMNS.items():
        if column in columns:
            right = [ec_correct(cell(r, column), bool(e), r["final_answer"], r.get("answer_form") or None)
                     for r, e in zip(rows, has_error)]
            out["EC"][step] = {"n": len(rows), "accuracy": sum(right) / len(rows) if rows else None}
    return out


def score_lines(scores: dict[str, Any]) -> list[str]:
    """The scores as lines of text (what the script and `mathstress report --fermat` print)."""
    lines = [f"{scores['matched']} of {scores['items']} items have predictions"]
    for task in ("ED", "EL", "EC"):
        for step, m in scores[task].items():
            head = "balanced accuracy" if task == "ED" else "accuracy"
            value = m["balanced_accuracy"] if task == "ED" else m["accuracy"]
            lines.append(f"{task} {step}: {head} {100 * value:.1f}" if value is not None else f"{task} {step}: n/a")
    return lines


EXPORTS.register(Exporter(
    id="fermat", title="FERMAT (github.com/AI4Bharat/FERMAT @ ec1d8ac4)", write=write, load=load, task_gold=task_gold,
    entries=(DATA, IMAGES), earlier=("fermat.jsonl", "images"), differences=DIFFERENCES, copies=(("image", 1.0),),
    help="FERMAT: benchmark_images/*.png and fermat.csv, read by its main.py and fill_in_csv.py unchanged; "
         "python -m synth.fermat_score scores ED, EL, EC"))

