"""FERMAT's form (arXiv 2501.07244): a photo of a whole solution; detect 0/1, localise, correct (NA when none)."""

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
    solution_latex,
    write_records,
)
from synth.taxonomy import SUBTYPES
from synth.vocab import FERMAT_ROTATION, FERMAT_TYPES

DATA = "fermat.jsonl"


def _image_fields(row: dict[str, Any]) -> dict[str, str]:
    """FERMAT's per-image quality metadata, read from the item's degradation records (MathReal rubric bins)."""
    degs = row["degradations"]
    rotation = next((d["measured"].get("rotation", d["params"].get("rotation")) for d in degs
                     if d["subtype"] == "rotation"), None)
    unreadable = any(d["severity"] >= 3 and d["family"] == "quality" for d in degs)
    return {"legibility": "illegible" if unreadable else "legible", "image_quality": "bad" if degs else "good",
            "rotation": FERMAT_ROTATION.get(str(rotation), "default")}


def fermat_records(ctx: Context, row: dict[str, Any]) -> Records:
    if row["variant"] == "clean":
        return "unperturbed solution (FERMAT's no-error items are superficial edits)"
    if row["variant"] == "degraded":
        return "photo of an unperturbed solution (FERMAT photographs perturbed solutions)"
    if row["image"] is None:
        return "no image (render disabled)"
    err, control = row["error"], row["control"]
    subtype = err["subtype"] if err else control["subtype"]
    axis = err["projections"]["fermat"] if err else "SU"
    if axis is None:
        return f"no FERMAT axis for {subtype} (FERMAT has no visual-perception errors)"
    clean = row["clean_solution"]
    if err:
        steps = {s["index"]: s for s in row["steps"]}
        location = "; ".join(f"Step {i}: {steps[i]['text']}" for i in err["error_steps"] if i in steps)
        exp = err["explanation"]
    else:
        location, exp = "NA", SUBTYPES[subtype].description
    return [{
        "id": row["id"], "base_id": row["base_id"], "image": ctx.copy(row["image"], "images"),
        "question": row["question"]["text"], "question_latex": row["question"]["latex"],
        "gold_answer": solution_latex(clean), "perturbed_answer": solution_latex(row["steps"]),
        "perturbation_axis": axis, "perturbation_type": FERMAT_TYPES.get(subtype, subtype), "subtype": subtype,
        "exp": exp, "error": 1 if err else 0, "error_location": location,
        "error_steps": list(err["error_steps"]) if err else [],
        "first_error_step": err["first_error_step"] if err else None,
        "corrected_answer": solution_latex(clean) if err else "NA",
        "domain": row["domain"], "subdomain": row["subdomain"], "grade": row["grade_band"],
        "question_type": "MCQ" if row["question_type"] == "mcq" else "free-form",
        "score_invariance": "variant" if err else "invariant", **_image_fields(row),
    }]


def write(ctx: Context) -> None:
    write_records(ctx, DATA, fermat_records)


def load(root: Path) -> list[FormRecord]:
    return load_records(root, "fermat", DATA, id_key="id", image_keys=("image",), labels=lambda rec: {
        "error": rec["error"], "axis": rec["perturbation_axis"], "first_error_step": rec["first_error_step"],
        "error_steps": tuple(rec["error_steps"]), "location": rec["error_location"]})


def task_gold(record: FormRecord, task_id: str) -> Any:
    has_error = record.labels.get("error") == 1
    if task_id == "detect":
        return "incorrect" if has_error else "correct"
    if task_id == "localize":
        return record.labels["first_error_step"] if has_error else -1
    if task_id == "categorize":
        return SUBTYPES[record.raw["subtype"]].family if has_error else None
    return None


EXPORTS.register(Exporter(
    id="fermat", title="FERMAT (arXiv 2501.07244)", write=write, load=load, task_gold=task_gold,
    entries=(DATA, "images"), help="FERMAT: photos of perturbed solutions; detect, localise, correct"))
