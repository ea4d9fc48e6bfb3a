"""Manifest rows (DESIGN §4): the flat, documented view of an Item, and back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from render.describe import describe_figure
from synth.errors import MathstressError, RunError
from synth.records import (
    Box,
    Control,
    DegradationRecord,
    ErrorLabel,
    Figure,
    Given,
    Item,
    Problem,
    RenderedPage,
    Step,
    Variant,
    from_jsonable,
    to_jsonable,
)
from synth.rundir import file_sha256, manifest_seal, repair_command


def _bbox(boxes: dict[tuple[str, str], Box], kind: str, ref: str) -> list[float] | None:
    box = boxes.get((kind, ref))
    return None if box is None else [round(box.x0, 2), round(box.y0, 2), round(box.x1, 2), round(box.y1, 2)]


def variant_label(item: Item) -> str:
    """clean, error, superficial, or degraded (a clean solution photographed badly).

    A photographed error or superficial variant keeps its kind; its ``degradations`` and ``source_id`` say it
    is a photo.
    """
    if item.variant.kind == "clean" and item.degradations:
        return "degraded"
    return item.variant.kind


def hidden_givens(degradations: tuple[DegradationRecord, ...]) -> list[str]:
    """The givens a photo's marks hid (each record's ``measured.hidden_givens``, in order, once each): a row
    with any is not solvable from its image (``perturb.photo.question_marking`` states the rule)."""
    out: list[str] = []
    for record in degradations:
        out.extend(g for g in record.measured.get("hidden_givens", ()) if g not in out)
    return out


def to_row(item: Item) -> dict[str, Any]:
    p, v = item.problem, item.variant
    boxes = {(b.kind, b.ref): b for b in item.render.layout} if item.render else {}
    return {
        "id": item.id,
        "base_id": item.base_id,
        "index": item.index,
        "variant": variant_label(item),
        "solution_style": item.solution_style,
        "family": p.family,
        "domain": p.domain,
        "subdomain": p.subdomain,
        "grade_band": p.grade_band,
        "difficulty": p.difficulty,
        "question_type": p.question_type,
        "image_role": p.image_role,
        "question": {"text": p.question_text, "latex": p.question_latex,
                     "choices": list(p.choices) if p.choices is not None else None},
        "figure": None if p.figure is None else {"kind": p.figure.kind, "spec": p.figure.spec,
                                                 "bbox": _bbox(boxes, "figure", "figure")},
        "figure_description": describe_figure(p.figure),
        "answer": {"text": p.answer_text, "latex": p.answer_latex, "value": p.answer_value},
        "givens": to_jsonable(p.givens),
        "steps": [{"index": s.index, "text": s.text, "latex": s.latex, "value": s.value, "rule": s.rule,
                   "inputs": list(s.inputs), "math": s.math,
                   "spans": [list(sp) for sp in s.spans],
                   "bbox": _bbox(boxes, "step", str(s.index))} for s in v.steps],
        "clean_steps": len(p.steps),
        "error": to_jsonable(v.error),
        "errors": to_jsonable(v.errors),
        "control": to_jsonable(v.control),
        "is_correct": v.is_correct,
        "shown_answer": v.shown_answer,
        "render": None if item.render is None else {
            k: getattr(item.render, k) for k in ("style", "font", "paper", "ink", "dpi", "width", "height",
                                                 "neatness", "show_solution", "handwritten_question")},
        "layout": None if item.render is None else [
            {"kind": b.kind, "ref": b.ref, "bbox": [round(b.x0, 2), round(b.y0, 2), round(b.x1, 2), round(b.y1, 2)]}
            for b in item.render.layout],
        "degradations": to_jsonable(item.degradations),
        "solvable": not hidden_givens(item.degradations),
        "hidden_givens": hidden_givens(item.degradations),
        "profile": item.profile,
        "source_id": item.source_id,
        "capture_twin": item.capture_twin,
        "image": item.image,
        "clean_image": item.clean_image,
        "seed": item.seed,
        "params": p.params,
        "clean_solution": [{"index": s.index, "rule": s.rule, "value": s.value, "text": s.text,
                            "latex": s.latex, "inputs": list(s.inputs)} for s in p.steps],
        "versions": item.versions,
    }


def from_row(row: dict[str, Any]) -> Item:
    """Rebuild the Item a row was written from (used by export, show and evaluation)."""
    steps = tuple(Step(index=s["index"], rule=s["rule"], value=s["value"], text=s["text"], latex=s["latex"],
                       inputs=tuple(s["inputs"]), math=s.get("math", ""),
                       spans=tuple((int(a), int(b)) for a, b in s.get("spans", ()))) for s in row["steps"])
    clean = tuple(Step(index=s["index"], rule=s["rule"], value=s["value"], text=s["text"], latex=s["latex"],
                       inputs=tuple(s["inputs"])) for s in row["clean_solution"])
    fig = row["figure"]
    problem = Problem(
        id=row["base_id"], family=row["family"], domain=row["domain"], subdomain=row["subdomain"],
        grade_band=row["grade_band"], difficulty=row["difficulty"], question_type=row["question_type"],
        image_role=row["image_role"], question_text=row["question"]["text"],
        question_latex=row["question"]["latex"], answer_text=row["answer"]["text"],
        answer_latex=row["answer"]["latex"], answer_value=row["answer"]["value"], steps=clean,
        givens=from_jsonable(tuple[Given, ...], row["givens"]),
        choices=tuple(row["question"]["choices"]) if row["question"]["choices"] is not None else None,
        figure=None if fig is None else Figure(kind=fig["kind"], spec=fig["spec"]), params=row["params"],
    )
    kind = "clean" if row["variant"] == "degraded" else row["variant"]
    variant = Variant(kind=kind, steps=steps, shown_answer=row["shown_answer"], is_correct=row["is_correct"],
                      error=from_jsonable(ErrorLabel, row["error"]), control=from_jsonable(Control, row["control"]),
                      errors=from_jsonable(tuple[ErrorLabel, ...], row.get("errors", [])))
    render = None
    if row["render"] is not None:
        layout = tuple(Box(b["kind"], b["ref"], *b["bbox"]) for b in row["layout"])
        render = RenderedPage(**row["render"], layout=layout)
    return Item(id=row["id"], base_id=row["base_id"], index=row["index"], seed=row["seed"], problem=problem,
                variant=variant, render=render,
                degradations=from_jsonable(tuple[DegradationRecord, ...], row["degradations"]),
                image=row["image"], clean_image=row["clean_image"], versions=row["versions"],
                profile=row.get("profile"), source_id=row.get("source_id"), capture_twin=row.get("capture_twin"),
                solution_style=row.get("solution_style", "worked"))


def dumps_row(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


def read_manifest(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """Stream the rows of a finished run's manifest.jsonl; a line that is not a JSON object (a cut or hand-edited
    file) raises RunError naming it, with the fix (``generate --resume`` rebuilds the manifest from the shards)."""
    path = Path(run_dir) / "manifest.jsonl"

    def damaged(where: str, reason: str) -> RunError:
        return RunError(f"{path} {where} is not a manifest row ({reason[:200]}): the file is cut or was edited; "
                        f"{repair_command(run_dir)} rebuilds it from the run's shards")

    number = rows = 0
    with path.open(encoding="utf-8") as fh:
        try:
            for number, line in enumerate(fh, start=1):  # noqa: B007 - the message names the line read last
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise damaged(f"line {number}", str(exc).splitlines()[0]) from None
                if not isinstance(row, dict):
                    raise damaged(f"line {number}", f"JSON {json.dumps(row)[:40]}, not an object")
                rows += 1
                yield row
        except UnicodeDecodeError as exc:
            raise damaged(f"after line {number}", f"not UTF-8: {exc.reason}") from None
    seal = manifest_seal(run_dir)
    if seal is not None and seal.get("lines") != rows:
        raise RunError(f"{path} holds {rows} rows where the run's checksums.jsonl recorded {seal.get('lines')}: the "
                       f"file is cut or was edited; {repair_command(run_dir)} rebuilds it from the run's shards")


# What reading a row's fields raises when the row is not what generate writes (``steps: null``, an error label that is
# a string, a key left out).
ROW_FAULTS = (KeyError, TypeError, AttributeError, IndexError, ValueError)


def edited_row(run_dir: str | Path, where: str, exc: BaseException) -> RunError | None:
    """The one-line error for ``exc``, raised reading the manifest row ``where`` names, when the manifest is not
    the one the run sealed (``checksums.jsonl``: hand-edited, or from an earlier version); None when it is, for
    then the row is as generate wrote it and the fault is ours: its traceback is the report."""
    if isinstance(exc, MathstressError):
        return None
    path = Path(run_dir) / "manifest.jsonl"
    seal = manifest_seal(run_dir)
    try:
        if seal is not None and seal.get("sha256") == file_sha256(path):
            return None
    except OSError:
        pass
    return RunError(f"{where} is not a mathstress manifest row ({exc!r} is missing or of the wrong kind): the file "
                    f"was edited; {repair_command(run_dir)} rebuilds it from the run's shards")


def schema() -> dict[str, Any]:
    """The JSON Schema every manifest row validates against (shipped inside the package)."""
    return json.loads((Path(__file__).parent / "manifest.schema.json").read_text(encoding="utf-8"))
