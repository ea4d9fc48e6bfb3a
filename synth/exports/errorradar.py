"""ErrorRadar's form (arXiv 2410.04509): first wrong step and a 5-way category.

ErrorRadar has released neither code nor data, so the form is the paper's task: each record fills the
prompt slots (``{image}``, ``{content}`` the question, ``{answer}`` the correct answer, ``{user_answer}``
the student's wrong answer, ``{user_answer_steps}``) and states the two gold responses in the paper's
output formats (``Error Step: Step k``, ``Error Category: <full name>``) with its exact label strings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth.exports._base import EXPORTS, Context, Exporter, FormRecord, Records, load_records, numbered, write_records
from synth.taxonomy import SUBTYPES
from synth.vocab import ERRORRADAR_NAMES

DATA = "errorradar.jsonl"
# The paper's five problem types; plane and solid geometry are separate types.
PROBLEM_TYPES = ("Plane Geometry", "Solid Geometry", "Diagram", "Algebra", "Math Commonsense")
PROBLEM_TYPE_OF_FAMILY = {"geometry": "Plane Geometry", "trig": "Plane Geometry", "solid": "Solid Geometry",
                          "statistics": "Diagram", "probability": "Diagram", "coordinate": "Algebra",
                          "algebra": "Algebra", "arithmetic": "Algebra", "calculus": "Algebra",
                          "commonsense": "Math Commonsense"}

DIFFERENCES = (
    "ErrorRadar released no code or data: records follow the paper's prompt slots and output formats",
    "problem_type follows the problem family: geometry and trigonometry Plane Geometry, solids Solid Geometry, "
    "charts, tables and probability Diagram, algebra, arithmetic, calculus and coordinate geometry Algebra, "
    "clocks, counting and number lines Math Commonsense",
    "only items whose error makes the final answer wrong are kept (ErrorRadar's student answers are wrong)",
)


def problem_type(family: str) -> str:
    return PROBLEM_TYPE_OF_FAMILY.get(family.split(".")[0], "Algebra")


def errorradar_records(ctx: Context, row: dict[str, Any]) -> Records:
    err = row["error"]
    if row["degradations"]:
        return "photo of a solution page (ErrorRadar shows the question's image and the solution as text)"
    if err is None:
        return "no error in the shown solution (every ErrorRadar item has one)"
    category = err["projections"]["errorradar"]
    if category is None:
        return f"no ErrorRadar category for {err['subtype']}"
    # answer_correct: number, unit and requested form ("180 h" for 180 min is a wrong answer); older manifests
    # without it fall back to the number alone.
    if err.get("answer_correct", not err["answer_changed"]):
        return "final answer still correct (ErrorRadar's student answers are wrong)"
    image, source = ctx.question_image(row)
    if image is None:
        return "no image (render disabled and no figure)"
    step = err["first_error_step"]
    return [{
        "id": row["id"], "base_id": row["base_id"], "question": row["question"]["text"], "image": image,
        "image_source": source, "answer": row["answer"]["text"], "user_answer": shown_answer_text(row),
        "user_answer_steps": numbered(row["steps"]), "error_step": step, "error_category": category,
        "error_category_name": ERRORRADAR_NAMES[category],
        "gold_step_response": f"Error Step: Step {step}",
        "gold_category_response": f"Error Category: {ERRORRADAR_NAMES[category]}",
        "problem_type": problem_type(row["family"]), "subtype": err["subtype"],
    }]


def shown_answer_text(row: dict[str, Any]) -> str:
    """The student's final answer as the page writes it (the last step's claim: ``6√3 in``, ``m = −5 or m = −80``);
    the row's ``shown_answer`` is the verifier's value of it (``6*sqrt(3)``, ``m^2 + 85*m + 400``)."""
    last = row["steps"][-1] if row["steps"] else {}
    return str(last.get("math") or last.get("text") or row["shown_answer"])


def write(ctx: Context) -> None:
    write_records(ctx, DATA, errorradar_records)
    ctx.details["run_their_code"] = []  # no public code: prompt with the slots, compare with the gold responses


def load(root: Path) -> list[FormRecord]:
    return load_records(root, "errorradar", DATA, id_key="id", image_keys=("image",),
                        labels=lambda rec: {"error_step": rec["error_step"], "category": rec["error_category"]})


def task_gold(record: FormRecord, task_id: str) -> Any:
    if task_id == "detect":
        return "incorrect"
    if task_id == "localize":
        return record.labels["error_step"]
    if task_id == "categorize":
        return SUBTYPES[record.raw["subtype"]].family
    return None


EXPORTS.register(Exporter(
    id="errorradar", title="ErrorRadar (arXiv 2410.04509; no public code)", write=write, load=load,
    task_gold=task_gold, entries=(DATA, "images"), differences=DIFFERENCES, verifies=("image",),
    help="ErrorRadar (paper only): first wrong step and 5-way error category, with the question image"))
