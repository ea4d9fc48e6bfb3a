"""MathReal's layout, read by its own scripts unchanged (github.com/junfeng0288/MathReal @ 4db6bbcf).

``json/testmini.json`` there is one JSON array of records keyed by an int ``idx``; image paths are
relative to ``img/`` (``real/0001.jpg``, ``clean/0004.png`` or null). ``evaluate/evaluation_answer_2.py``
joins a model's extracted answers to the records by ``idx`` and has a judge compare them with
``AnswerCN`` given ``QuestionType``; ``evaluate/calculate_answer_3.py`` averages per ``Category`` (five
full names) and leaves out every item whose category is not one of them, overall included. The 14
condition levels sit in three top-level groups under MathReal's own key names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth.exports._base import (
    EXPORTS,
    Context,
    Exporter,
    FormRecord,
    educational_stage,
    gold_answer,
    load_records,
    question_text,
    write_records,
)
from synth.vocab import (
    MATHREAL_CATEGORIES,
    MATHREAL_CATEGORY_OF_FIGURE,
    MATHREAL_LEVELS,
    MATHREAL_QUESTION_TYPES,
    MATHREAL_ROTATION,
    MATHREAL_UPRIGHT,
)

DATA = "json/mathstress.json"
LEVEL_KEYS = MATHREAL_LEVELS
SUBTYPE_GROUP = {s: group for group, keys in LEVEL_KEYS.items() for s in keys}
UPRIGHT = MATHREAL_UPRIGHT
ROTATION = MATHREAL_ROTATION
CATEGORIES = MATHREAL_CATEGORIES
CATEGORY_OF_FIGURE = MATHREAL_CATEGORY_OF_FIGURE
NO_CATEGORY = ("photos with no MathReal category (no figure, or a figure kind outside its five genres): Category "
               "is null, so calculate_answer_3.py leaves them out of every score, overall included; "
               "evaluation_answer_2.py scores them")

DIFFERENCES = (
    "QuestionCN, DescriptionCN and AnswerCN hold the English text (we generate no Chinese); MathReal's scorer "
    "reads AnswerCN, and its judge compares answers, not languages",
    "Category follows the figure drawn (plane geometry, solids, coordinate grids, charts and tables; clocks, object "
    "arrays and number lines as Logical Reasoning); problems without a figure have Category null",
    "each photo carries the degradations of one capture (one op, or a named profile); ops outside MathReal's 14 "
    "(jpeg, noise, resolution, background) are listed in ExtraDegradations",
    "ImgReal keeps the run's file type (real/NNNN.png or .jpg); the clean twin is stored once per base problem as "
    "clean/<base_id>.png",
    "SolutionShown is true when our page prints the worked solution under the question (MathReal photos show the "
    "question only; render.show_solution: false gives question-only pages)",
)


def level_groups(degradations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """MathReal's three groups of levels for one photo: 0 (``Upright`` for rotation) where absent."""
    groups: dict[str, dict[str, Any]] = {g: {key: (UPRIGHT if s == "rotation" else 0) for s, key in keys.items()}
                                         for g, keys in LEVEL_KEYS.items()}
    for d in degradations:
        group = SUBTYPE_GROUP.get(d["subtype"])
        if group is None:
            continue
        if d["subtype"] == "rotation":
            turn = str(d["measured"].get("rotation", d["params"].get("rotation")))
            value: Any = ROTATION.get(turn, UPRIGHT)
        elif d["subtype"] == "handwritten_answer":
            value = 1 if d["severity"] else 0
        else:
            value = d["severity"]
        groups[group][LEVEL_KEYS[group][d["subtype"]]] = value
    return groups


def category(row: dict[str, Any]) -> str | None:
    fig = row["figure"]
    return None if fig is None else CATEGORY_OF_FIGURE.get(fig["kind"])


def mathreal_records(ctx: Context, row: dict[str, Any]) -> list[dict[str, Any]] | str:
    if row["variant"] != "degraded":
        return ("not a photo (MathReal items are photos; clean pages travel as the ImgClean twin)"
                if row["variant"] == "clean" else "solution variant (MathReal poses the clean problem)")
    if not row["question"]["text"].strip() or not row["answer"]["text"].strip():
        return "no question or no answer (an image of your own, from degrade without those columns)"
    idx = ctx.written + 1
    src = ctx.source(row["image"])
    real = ctx.copy(row["image"], "img/real", f"{idx:04d}{src.suffix.lower()}")
    clean = ctx.copy(row["clean_image"], "img/clean", f"{row['base_id']}.png", key="clean_image")
    extras = [{"subtype": d["subtype"], "severity": d["severity"]} for d in row["degradations"]
              if d["subtype"] not in SUBTYPE_GROUP]
    if extras:
        ctx.notes["photos with camera extras outside the 14 subtypes (see ExtraDegradations)"] += 1
    description = row.get("figure_description")
    if description is None:
        ctx.notes["photos of problems without a figure (DescriptionEN is null, DescriptionCN empty)"] += 1
    cat = category(row)
    if cat is None:
        ctx.notes[NO_CATEGORY] += 1
    text, gold = question_text(row), gold_answer(row)
    return [{
        "idx": idx, "ImgReal": real.removeprefix("img/") if real else None,
        "ImgClean": clean.removeprefix("img/") if clean else None,
        "QuestionCN": text, "QuestionEN": text, "DescriptionCN": description or "", "DescriptionEN": description,
        "AnswerCN": gold, "AnswerEN": gold,
        "Table": int(row["figure"] is not None and row["figure"]["kind"] == "table"),
        "EducationalStage": educational_stage(row["grade_band"]),
        "QuestionType": MATHREAL_QUESTION_TYPES[row["question_type"]], "Category": cat,
        "Difficulty": row["difficulty"].capitalize(), **level_groups(row["degradations"]),
        # Not read by their scripts: where the photo comes from.
        "id": row["id"], "base_id": row["base_id"], "Domain": row["domain"], "ExtraDegradations": extras,
        "SolutionShown": bool((row["render"] or {}).get("show_solution", True)),
    }]


def write(ctx: Context) -> None:
    write_records(ctx, DATA, mathreal_records, as_list=True)
    gt = ctx.dest.resolve() / DATA
    ctx.details |= {"run_their_code": [
        "cd MathReal  # MODEL.json: a JSON array of {\"idx\": <idx>, \"raw_output\": <the model's reply>}",
        "python evaluate/extract_answer_1.py --input MODEL.json --output extracted.json",
        f"python evaluate/evaluation_answer_2.py --gt_file {gt} --extract_file extracted.json --output_file eval.json",
        f"python evaluate/calculate_answer_3.py {gt} eval.json"]}


def _labels(rec: dict[str, Any]) -> dict[str, Any]:
    flat = {key: level for group in LEVEL_KEYS for key, level in rec[group].items()}
    return {"idx": rec["idx"], "levels": flat, "category": rec["Category"], "clean_image": rec["ImgClean"],
            "extra": tuple((e["subtype"], e["severity"]) for e in rec["ExtraDegradations"])}


def load(root: Path) -> list[FormRecord]:
    return load_records(root, "mathreal", DATA, id_key="id", image_keys=("ImgReal", "ImgClean"), labels=_labels,
                        image_root="img/")


EXPORTS.register(Exporter(
    id="mathreal", title="MathReal (github.com/junfeng0288/MathReal @ 4db6bbcf)", write=write, load=load,
    entries=("json", "img"), differences=DIFFERENCES, copies=(("image", 1.0), ("clean_image", 1.0)),
    help="MathReal: json/mathstress.json and img/, read by its evaluate/ scripts unchanged"))
