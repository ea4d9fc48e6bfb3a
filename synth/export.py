"""Exporters from a finished run folder to other layouts (Hugging Face `datasets` first)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from synth.errors import MathstressError, RunError
from synth.forms import form_exporters
from synth.manifest import read_manifest
from synth.safepath import HF_LAYOUT, check_row_ids, inside, layout, prepare_output_dir, publish_dir, staging_dir
from synth.templating import render_template

ProgressFn = Callable[[int, int], None]


def require_run(run_dir: Path) -> None:
    if not (run_dir / "manifest.jsonl").is_file():
        hint = " (it looks interrupted: finish it with `mathstress generate ... --resume`)" \
            if (run_dir / "config.yaml").exists() else ""
        raise RunError(f"{run_dir} is not a finished mathstress run: manifest.jsonl is missing{hint}")


PROCESSBENCH_LAYOUT = layout(entries=("processbench.jsonl",), proof=("processbench.jsonl",))


def where_row(run_dir: Path, n: int) -> str:
    """How an error names manifest row ``n`` (1-based)."""
    return f"{run_dir / 'manifest.jsonl'} row {n}"


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


def _rows_with_progress(run_dir: Path, progress: ProgressFn | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row) for each manifest row, its ids checked (they name files in exports and contact sheets)."""
    total = sum(1 for _ in read_manifest(run_dir))
    for n, row in enumerate(read_manifest(run_dir), start=1):
        where = where_row(run_dir, n)
        check_row_ids(row, where=where)
        yield where, row
        if progress:
            progress(n, total)


def _our_cause(exc: BaseException) -> BaseException:
    """The MathstressError behind an error `datasets` wrapped (DatasetGenerationError), else ``exc`` itself."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, MathstressError):
        cause = cause.__cause__ or cause.__context__
    return cause if cause is not None else exc


def export_hf(run_dir: Path, dest: Path, progress: ProgressFn | None = None) -> Path:
    """A `datasets` dataset (save_to_disk) plus parquet files, and a dataset card, under ``dest``.

    ``dest`` must be new, empty or an earlier hf export; only what an export writes there is replaced.
    """
    from datasets import Dataset, disable_progress_bars

    prepare_output_dir(dest, "export:hf", shape=HF_LAYOUT)
    disable_progress_bars()
    counts: Counter[str] = Counter()
    families: Counter[str] = Counter()
    subtypes: Counter[str] = Counter()
    degradations: Counter[str] = Counter()

    def records() -> Iterator[dict[str, Any]]:
        for where, row in _rows_with_progress(run_dir, progress):
            counts[row["variant"]] += 1
            families[row["family"]] += 1
            for e in ([row["error"]] if row["error"] else []) + (row.get("errors") or []):
                subtypes[e["subtype"]] += 1
            for d in row["degradations"]:
                degradations[f"{d['subtype']} (severity {d['severity']})"] += 1
            yield hf_record(run_dir, row, where)

    staging = staging_dir(dest)
    try:
        # An explicit fingerprint stops `datasets` from pickling the generator (and its progress hook).
        digest = hashlib.sha256((run_dir / "manifest.jsonl").read_bytes()).hexdigest()[:32]
        try:
            ds = Dataset.from_generator(records, features=hf_features(), cache_dir=str(staging / "cache"),
                                        fingerprint=digest)
        except Exception as exc:
            raise _our_cause(exc) from None
        ds.save_to_disk(str(staging / "dataset"))
        (staging / "data").mkdir()
        ds.to_parquet(str(staging / "data" / "train-00000-of-00001.parquet"))
        del ds
        shutil.rmtree(staging / "cache", ignore_errors=True)
        card = render_template(
            "dataset_card.md.j2", config=(run_dir / "config.yaml").read_text(encoding="utf-8"),
            total=sum(counts.values()), counts=sorted(counts.items()), families=sorted(families.items()),
            subtypes=sorted(subtypes.items()), degradations=sorted(degradations.items()),
            taxonomy=_taxonomy_rows())
        (staging / "README.md").write_text(card, encoding="utf-8")
        publish_dir(staging, dest, "export:hf", shape=HF_LAYOUT)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def _taxonomy_rows() -> list[Any]:
    from synth.taxonomy import ERROR_SUBTYPES

    return list(ERROR_SUBTYPES)


def processbench_record(row: dict[str, Any]) -> dict[str, Any]:
    """ProcessBench's layout: ``label`` is the 0-based index of the first wrong step, or -1."""
    err = row["error"]
    return {
        "id": row["id"], "generator": "mathstress", "problem": row["question"]["text"],
        "steps": [s["text"] for s in row["steps"]],
        "label": err["first_error_step"] - 1 if err else -1,
        "final_answer_correct": not (err and err["answer_changed"]),
    }


def export_processbench(run_dir: Path, dest: Path, progress: ProgressFn | None = None) -> Path:
    """One JSONL file of text items (degraded photos repeat their clean control, so they are left out)."""
    prepare_output_dir(dest, "export:processbench", shape=PROCESSBENCH_LAYOUT)
    staging = staging_dir(dest)
    try:
        with (staging / "processbench.jsonl").open("w", encoding="utf-8") as out:
            for _, row in _rows_with_progress(run_dir, progress):
                if row["variant"] != "degraded":
                    out.write(json.dumps(processbench_record(row), ensure_ascii=False) + "\n")
        publish_dir(staging, dest, "export:processbench", shape=PROCESSBENCH_LAYOUT)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest / "processbench.jsonl"


EXPORTERS: dict[str, Callable[[Path, Path, ProgressFn | None], Path]] = {
    "hf": export_hf, "processbench": export_processbench}
# The benchmark forms (errorradar, fermat, mmerror, mathreal, seeing) live in synth.forms.
EXPORTERS.update(form_exporters())


def export_run(run_dir: str | Path, fmt: str, dest: str | Path | None = None,
               progress: ProgressFn | None = None) -> Path:
    run_dir = Path(run_dir)
    require_run(run_dir)
    if fmt not in EXPORTERS:
        raise RunError(f"unknown export format {fmt!r}; available: {sorted(EXPORTERS)}")
    target = Path(dest) if dest is not None else run_dir / fmt
    # Each exporter refuses a destination that is not new, empty or its own earlier export, before any work.
    return EXPORTERS[fmt](run_dir, target, progress)
