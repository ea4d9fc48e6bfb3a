"""The Hugging Face `datasets` export: Arrow (save_to_disk) and parquet with Image features, and a dataset card."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from synth.errors import MathstressError, RunError
from synth.exports._base import EXPORTS, Context, Exporter
from synth.safepath import inside
from synth.taxonomy import ERROR_SUBTYPES
from synth.templating import render_template


def _image(run_dir: Path, rel: str | None, *, field: str = "image", where: str = "") -> dict[str, Any] | None:
    if rel is None:
        return None
    path = inside(run_dir, rel, field=field, where=where)
    if not path.is_file():
        raise RunError(f"{where}: {field} {rel!r} is missing from {run_dir} (or not a file); regenerate the run")
    return {"bytes": path.read_bytes(), "path": Path(rel).name}


def hf_features():  # noqa: ANN201 - datasets is imported lazily (it is slow to import)
    from datasets import Features, Image, Sequence, Value

    return Features({
        "id": Value("string"), "base_id": Value("string"), "variant": Value("string"),
        "family": Value("string"), "domain": Value("string"), "difficulty": Value("string"),
        "question_type": Value("string"), "image_role": Value("string"),
        "question": Value("string"), "figure_description": Value("string"), "answer": Value("string"),
        "steps": Sequence(Value("string")),
        "is_correct": Value("bool"), "error_family": Value("string"), "error_subtype": Value("string"),
        "first_error_step": Value("int32"), "propagated": Value("bool"), "answer_changed": Value("bool"),
        "error_count": Value("int32"), "other_error_subtypes": Sequence(Value("string")),
        "other_first_error_steps": Sequence(Value("int32")),
        "shown_answer": Value("string"), "explanation": Value("string"),
        "errorradar": Value("string"), "fermat": Value("string"), "mmerror": Value("string"),
        "control_subtype": Value("string"), "degradation": Value("string"), "severity": Value("int32"),
        "profile": Value("string"),
        "render_style": Value("string"), "neatness": Value("int32"), "show_solution": Value("bool"),
        "image": Image(), "clean_image": Image(), "row": Value("string"),
    })


def hf_record(run_dir: Path, row: dict[str, Any], where: str = "") -> dict[str, Any]:
    err = row["error"] or {}
    others = row.get("errors") or []  # errors after the first (inject.errors_per_variant > 1)
    proj = err.get("projections") or {}
    deg = row["degradations"][0] if row["degradations"] else None
    return {
        "id": row["id"], "base_id": row["base_id"], "variant": row["variant"], "family": row["family"],
        "domain": row["domain"], "difficulty": row["difficulty"], "question_type": row["question_type"],
        "image_role": row["image_role"], "question": row["question"]["text"],
        "figure_description": row.get("figure_description"), "answer": row["answer"]["text"],
        "steps": [s["text"] for s in row["steps"]], "is_correct": row["is_correct"],
        "error_family": err.get("family"), "error_subtype": err.get("subtype"),
        "first_error_step": err.get("first_error_step", -1) if err else -1,
        "propagated": err.get("propagated"), "answer_changed": err.get("answer_changed"),
        "error_count": (1 + len(others)) if err else 0, "other_error_subtypes": [e["subtype"] for e in others],
        "other_first_error_steps": [e["first_error_step"] for e in others],
        "shown_answer": row["shown_answer"], "explanation": err.get("explanation"),
        "errorradar": proj.get("errorradar"), "fermat": proj.get("fermat"), "mmerror": proj.get("mmerror"),
        "control_subtype": (row["control"] or {}).get("subtype"),
        "degradation": deg["subtype"] if deg else None, "severity": deg["severity"] if deg else 0,
        "profile": row.get("profile"),
        "render_style": (row["render"] or {}).get("style"), "neatness": (row["render"] or {}).get("neatness"),
        "show_solution": (row["render"] or {}).get("show_solution"),
        "image": _image(run_dir, row["image"], where=where),
        "clean_image": _image(run_dir, row["clean_image"], field="clean_image", where=where),
        "row": json.dumps(row, ensure_ascii=False, separators=(",", ":")),
    }


def _our_cause(exc: BaseException) -> BaseException:
    """The MathstressError behind an error `datasets` wrapped (DatasetGenerationError), else ``exc`` itself."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, MathstressError):
        cause = cause.__cause__ or cause.__context__
    return cause if cause is not None else exc


def write(ctx: Context) -> None:
    from datasets import Dataset, disable_progress_bars

    disable_progress_bars()
    counts: Counter[str] = Counter()
    families: Counter[str] = Counter()
    subtypes: Counter[str] = Counter()
    degradations: Counter[str] = Counter()

    def records() -> Iterator[dict[str, Any]]:
        for row in ctx.rows():
            counts[row["variant"]] += 1
            families[row["family"]] += 1
            for e in ([row["error"]] if row["error"] else []) + (row.get("errors") or []):
                subtypes[e["subtype"]] += 1
            for d in row["degradations"]:
                degradations[f"{d['subtype']} (severity {d['severity']})"] += 1
            yield hf_record(ctx.run_dir, row, ctx.where)

    # An explicit fingerprint stops `datasets` from pickling the generator (and its progress hook).
    digest = hashlib.sha256((ctx.run_dir / "manifest.jsonl").read_bytes()).hexdigest()[:32]
    try:
        ds = Dataset.from_generator(records, features=hf_features(), cache_dir=str(ctx.out / "cache"),
                                    fingerprint=digest)
    except Exception as exc:
        raise _our_cause(exc) from None
    ds.save_to_disk(str(ctx.out / "dataset"))
    (ctx.out / "data").mkdir()
    ds.to_parquet(str(ctx.out / "data" / "train-00000-of-00001.parquet"))
    ctx.written = len(ds)
    del ds
    shutil.rmtree(ctx.out / "cache", ignore_errors=True)
    card = render_template(
        "dataset_card.md.j2", config=(ctx.run_dir / "config.yaml").read_text(encoding="utf-8"),
        total=sum(counts.values()), counts=sorted(counts.items()), families=sorted(families.items()),
        subtypes=sorted(subtypes.items()), degradations=sorted(degradations.items()),
        taxonomy=list(ERROR_SUBTYPES))
    (ctx.out / "README.md").write_text(card, encoding="utf-8")


EXPORTS.register(Exporter(
    id="hf", title="Hugging Face datasets", write=write, entries=("dataset", "data", "README.md"),
    proof=("dataset",),
    help="a Hugging Face `datasets` dataset (Arrow and parquet, Image features) with a dataset card"))
