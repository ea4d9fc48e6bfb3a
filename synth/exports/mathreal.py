"""MathReal's form: a photo per item, 14 condition levels, question and description text, the clean twin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth.exports._base import (
    EXPORTS,
    Context,
    Exporter,
    FormRecord,
    Records,
    educational_stage,
    load_records,
    write_records,
)
from synth.vocab import (
    MATHREAL_CATEGORIES,
    MATHREAL_LEVELS,
    MATHREAL_QUESTION_TYPES,
    MATHREAL_ROTATION,
    MATHREAL_SUBTYPES,
)

DATA = "json/mathstress.json"


def mathreal_levels(degradations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every MathReal subtype's level for one photo (0, or ``upright`` for rotation, when absent)."""
    levels = {group: {name: ("upright" if s == "rotation" else 0) for s, name in names.items()}
              for group, names in MATHREAL_LEVELS.items()}
    for d in degradations:
        for group, names in MATHREAL_LEVELS.items():
            if d["subtype"] in names:
                if d["subtype"] == "rotation":
                    value: Any = MATHREAL_ROTATION.get(str(d["measured"].get("rotation", d["params"].get("rotation"))),
                                                       "upright")
                elif d["subtype"] == "handwritten_answer":
                    value = 1 if d["severity"] else 0
                else:
                    value = d["severity"]
                levels[group][names[d["subtype"]]] = value
    return levels


def mathreal_records(ctx: Context, row: dict[str, Any]) -> Records:
    if row["variant"] != "degraded":
        return ("not a photo (MathReal items are photos; clean pages travel as the ImgClean twin)"
                if row["variant"] == "clean" else "solution variant (MathReal poses the clean problem)")
    real = ctx.copy(row["image"], "img/real")
    clean = ctx.copy(row["clean_image"], "img/clean", f"{row['base_id']}.png", key="clean_image")
    extras = [{"subtype": d["subtype"], "severity": d["severity"]} for d in row["degradations"]
              if d["subtype"] not in MATHREAL_SUBTYPES]
    if extras:
        ctx.notes["photos with camera extras outside the 14 subtypes (see ExtraDegradations)"] += 1
    if row["figure"] is None:
        ctx.notes["photos of problems without a figure (DescriptionEN is null)"] += 1
    return [{
        "idx": row["id"], "base_id": row["base_id"], "ImgReal": real, "ImgClean": clean,
        "QuestionEN": row["question"]["text"], "DescriptionEN": row.get("figure_description"),
        "AnswerEN": row["answer"]["text"], "Category": MATHREAL_CATEGORIES.get(row["domain"]),
        "Domain": row["domain"], "Difficulty": row["difficulty"].capitalize(),
        "EducationalStage": educational_stage(row["grade_band"]),
        "QuestionType": MATHREAL_QUESTION_TYPES[row["question_type"]],
        "Levels": mathreal_levels(row["degradations"]), "ExtraDegradations": extras,
        # Our pages print the worked solution under the question; MathReal photos show the question only.
        "SolutionShown": True,
    }]


def write(ctx: Context) -> None:
    write_records(ctx, DATA, mathreal_records, as_list=True)


def _labels(rec: dict[str, Any]) -> dict[str, Any]:
    flat = {name: level for group in rec["Levels"].values() for name, level in group.items()}
    return {"levels": flat, "clean_image": rec["ImgClean"],
            "extra": tuple((e["subtype"], e["severity"]) for e in rec["ExtraDegradations"])}


def load(root: Path) -> list[FormRecord]:
    return load_records(root, "mathreal", DATA, id_key="idx", image_keys=("ImgReal", "ImgClean"), labels=_labels)


EXPORTS.register(Exporter(
    id="mathreal", title="MathReal", write=write, load=load, entries=("json", "img"),
    help="MathReal: one photo per problem with its 14 degradation levels and the clean twin"))
