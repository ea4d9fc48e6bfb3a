"""ProcessBench's layout, read by its own code unchanged (github.com/QwenLM/ProcessBench @ e8024636).

``code/run_eval.py`` loads ``load_dataset('Qwen/ProcessBench', split=config)`` for config in gsm8k,
math, olympiadbench, omnimath and reads ``problem``, ``steps`` and ``label`` (0-based index of the
earliest wrong paragraph, -1 when none). ``datasets`` looks for a local folder of that name first, so
the export is ``Qwen/ProcessBench/`` holding one ``<split>.json`` per split and a ``README.md``
whose YAML header declares the splits, exactly as the dataset repository does; run ``run_eval.py``
from a folder where ``Qwen/ProcessBench`` is that folder.

Our items are school problems: grade bands that start at grade 8 or below go to ``gsm8k``
(grade-school math), the rest to ``math``. Each split holds error items and no-error items, since
ProcessBench's F1 is the harmonic mean of the accuracies on the two groups.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from synth.exports._base import (
    EXPORTS,
    OWN_IMAGE,
    Context,
    Exporter,
    FormRecord,
    educational_stage,
    own_image,
    read_json,
    require_file,
)

ROOT = "Qwen/ProcessBench"
SPLITS = ("gsm8k", "math", "olympiadbench", "omnimath")   # run_eval.py's --configs choices
NO_ERROR = -1
NEEDS_FIGURE = ("its figure holds values the text does not state (image_role required): ProcessBench shows the "
                "problem's text only, so its steps cannot be judged")

DIFFERENCES = (
    "label is 0-based here, as in ProcessBench; the same step is first_error_step + 1 (1-based) in manifest.jsonl "
    "and in our localize task",
    "our problems are school math: grade bands starting at grade 8 or below are in the gsm8k split, the rest in "
    "math; there are no olympiadbench or omnimath items, so pass run_eval.py --configs with the splits listed here",
    "generator is 'mathstress': the solutions are written from templates and their errors injected and verified, "
    "not sampled from a model; ids are our item ids, not '<split>-<n>'",
    "degraded photos are left out: ProcessBench is text only and a photo's text is its clean control's; so are "
    "problems whose figure holds values the text does not state (image_role required)",
    "run run_eval.py with a fresh HF_DATASETS_CACHE (as run_their_code does): datasets caches a local "
    "Qwen/ProcessBench folder under one key whatever its files hold, so a second export would be scored on the "
    "first one's items",
    "final_answer_correct is whether the shown answer is right as the question asks for it (number, unit and "
    "form): a right number in a wrong unit is not",
    "steps are the rows' shown steps as written: a run with generate.solution_style: cot gives paragraphs of a "
    "model-like chain of thought, as ProcessBench's are; a worked run gives one derivation line per step",
)


def split_of(row: dict[str, Any]) -> str:
    """gsm8k for primary and middle school problems, math for high school ones."""
    return "math" if educational_stage(row["grade_band"]) == "High" else "gsm8k"


def processbench_record(row: dict[str, Any]) -> dict[str, Any]:
    """ProcessBench's record: ``label`` is the 0-based index of the first wrong step, or -1."""
    err = row["error"]
    return {
        "id": row["id"], "generator": "mathstress", "problem": row["question"]["text"],
        "steps": [s["text"] for s in row["steps"]],
        # right as the question asks for it (its number, unit and form): "10 km/h" for 10 m/s is not
        "final_answer_correct": not err or bool(err.get("answer_correct", not err["answer_changed"])),
        "label": err["first_error_step"] - 1 if err else NO_ERROR,
    }


def dataset_card(splits: dict[str, dict[str, int]]) -> str:
    """The README.md that makes ``load_dataset('Qwen/ProcessBench', split=...)`` find our split files."""
    files = "".join(f"  - split: {s}\n    path: {s}.json\n" for s in splits)
    rows = "".join(f"| {s} | {n['items']} | {n['error_items']} | {n['no_error_items']} |\n" for s, n in splits.items())
    return (
        "---\nconfigs:\n- config_name: default\n  data_files:\n" + files + "---\n"
        "# mathstress items in ProcessBench's layout\n\n"
        "Each record: `id`, `generator`, `problem`, `steps` (the solution, one paragraph per step), "
        "`final_answer_correct`, and `label`: the 0-based index of the earliest wrong step, -1 when every step "
        "is right (the manifest of the run numbers steps from 1).\n\n"
        "| split | items | error items | no-error items |\n|---|---|---|---|\n" + rows)


def write(ctx: Context) -> None:
    counts: dict[str, dict[str, int]] = {}
    files: dict[str, TextIO] = {}
    try:
        for row in ctx.rows():
            if row["degradations"]:
                ctx.skip("photo of a page (ProcessBench is text only; its text is the photographed item's)")
                continue
            if own_image(row):
                ctx.skip(OWN_IMAGE)
                continue
            if row["image_role"] == "required":
                ctx.skip(NEEDS_FIGURE)
                continue
            split = split_of(row)
            rec = processbench_record(row)
            if split not in files:
                files[split] = ctx.target(f"{ROOT}/{split}.json").open("w", encoding="utf-8")
                files[split].write("[\n")
                counts[split] = {"items": 0, "error_items": 0, "no_error_items": 0}
            else:
                files[split].write(",\n")
            files[split].write(json.dumps(rec, ensure_ascii=False))
            n = counts[split]
            n["items"] += 1
            n["error_items" if rec["label"] != NO_ERROR else "no_error_items"] += 1
            ctx.written += 1
    finally:
        for out in files.values():
            out.write("\n]\n")
            out.close()
    splits = {s: counts[s] for s in SPLITS if s in counts}
    for s, n in splits.items():
        for group in ("error_items", "no_error_items"):
            if not n[group]:
                ctx.notes[f"split {s} has no {group.replace('_', ' ')}: run_eval.py's F1 for it is nan"] += 1
    ctx.target(f"{ROOT}/README.md").write_text(dataset_card(splits), encoding="utf-8")
    configs = " ".join(splits)
    ctx.details |= {"splits": splits, "label_index": "0-based (manifest.jsonl first_error_step is 1-based)",
                    "run_their_code": [
                        f"cd ProcessBench/code && ln -s {ctx.dest.resolve() / 'Qwen'} Qwen",
                        # datasets caches a local 'Qwen/ProcessBench' under one key whatever its files hold: a
                        # second export run from the same place would be scored on the first one's items
                        f'HF_DATASETS_CACHE="$(mktemp -d)" python run_eval.py --model_path MODEL --configs {configs}'],
                    "load_json_instead": "in run_eval.py: input_data = load_dataset('json', data_files="
                                         f"{{config: f'{ctx.dest.resolve() / ROOT}/{{config}}.json'}}, split=config)"}


def load(root: Path) -> list[FormRecord]:
    folder = root / ROOT
    require_file(folder / "README.md", root, "processbench")
    records = []
    for split in SPLITS:
        path = folder / f"{split}.json"
        if not path.is_file():
            continue
        for rec in read_json(path, root, "processbench"):
            records.append(FormRecord(id=rec["id"], labels={"label": rec["label"], "split": split}, image=None,
                                      raw=rec))
    return records


def task_gold(record: FormRecord, task_id: str) -> Any:
    label = record.labels["label"]
    if task_id == "detect":
        return "correct" if label == NO_ERROR else "incorrect"
    if task_id == "localize":
        return NO_ERROR if label == NO_ERROR else label + 1
    return None


EXPORTS.register(Exporter(
    id="processbench", title="ProcessBench (github.com/QwenLM/ProcessBench @ e8024636)", write=write, load=load,
    task_gold=task_gold, entries=("Qwen",), earlier=("processbench.jsonl",),
    proof=("processbench.jsonl", "summary.json"), differences=DIFFERENCES,
    help="ProcessBench: Qwen/ProcessBench/ (split files and card), read by its run_eval.py unchanged"))
