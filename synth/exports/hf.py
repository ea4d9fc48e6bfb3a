"""The Hugging Face `datasets` export: one split per variant, categorical labels as ClassLabel, a dataset card.

Splits follow the design's content factor (DESIGN §3): ``clean`` (the clean controls), ``error``,
``superficial`` and ``degraded`` (clean solutions photographed). A row's clean twin is the ``clean``
row whose ``id`` is the row's ``base_id``: its image is stored once there, not copied into every row.
Categorical columns are ``ClassLabel``s whose names come from the registries and the taxonomy, so a
label outside them is refused at export time. Steps are numbered from 1 (``first_error_step``; -1
when the solution has no error), as in the manifest.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, get_args

from datasets import (
    ClassLabel,
    Dataset,
    DatasetDict,
    Features,
    Image,
    Sequence,
    Value,
    disable_progress_bars,
    load_from_disk,
)

from perturb.photo import OPS
from synth.config import Difficulty, ImageRole, QuestionType
from synth.errors import MathstressError, RunError
from synth.exports._base import EXPORTS, Context, Exporter
from synth.generators import REGISTRY as FAMILIES
from synth.manifest import ROW_FAULTS, read_manifest
from synth.safepath import inside
from synth.taxonomy import ERROR_SUBTYPES, RETIRED
from synth.templating import render_template
from synth.vocab import ERRORRADAR_CODES, FERMAT_AXES, MMERROR_LETTERS

SPLITS = ("clean", "error", "superficial", "degraded")
RENDER_STYLES = ("printed", "handwritten")


def class_names() -> dict[str, tuple[str, ...]]:
    """Each categorical column's label names, from the registries and the taxonomy (their order is the index)."""
    errors = [s for s in ERROR_SUBTYPES if s.is_error]
    return {
        "variant": SPLITS, "family": tuple(FAMILIES), "domain": tuple(sorted({FAMILIES[f].domain for f in FAMILIES})),
        "difficulty": get_args(Difficulty), "question_type": get_args(QuestionType), "image_role": get_args(ImageRole),
        "error_family": tuple(dict.fromkeys(s.family for s in errors)),
        "error_subtype": tuple(s.subtype for s in errors),
        "errorradar": ERRORRADAR_CODES, "fermat": tuple(FERMAT_AXES), "mmerror": MMERROR_LETTERS,
        "control_subtype": tuple(s.subtype for s in ERROR_SUBTYPES if not s.is_error),
        "degradation": tuple(OPS), "render_style": RENDER_STYLES,
    }


def _image(run_dir: Path, rel: str | None, *, field: str = "image", where: str = "") -> dict[str, Any] | None:
    if rel is None:
        return None
    path = inside(run_dir, rel, field=field, where=where)
    if not path.is_file():
        raise RunError(f"{where}: {field} {rel!r} is missing from {run_dir} (or not a file); regenerate the run")
    return {"bytes": path.read_bytes(), "path": Path(rel).name}


# The manifest fields behind the ClassLabel columns that a run made outside our registries can extend
# (a `mathstress degrade` set of external images: family external.folder, domain external, difficulty unknown).
# An external photo's render style is "photo".
EXTENSIBLE: dict[str, Any] = {
    **{name: (lambda row, name=name: row.get(name)) for name in
       ("family", "domain", "difficulty", "question_type", "image_role")},
    "render_style": lambda row: (row.get("render") or {}).get("style"),
}


def extra_class_names(rows: Iterable[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Label names a run holds beyond the registries', per column, sorted (appended after the registry's names,
    so every registry label keeps its index)."""
    known = class_names()
    extra: dict[str, set[str]] = {name: set() for name in EXTENSIBLE}
    for row in rows:
        for name, get in EXTENSIBLE.items():
            value = get(row)
            if isinstance(value, str) and value not in known[name]:
                extra[name].add(value)
    return {name: tuple(sorted(values)) for name, values in extra.items() if values}


def hf_features(extra: dict[str, tuple[str, ...]] | None = None) -> Features:
    names = class_names()
    for name, values in (extra or {}).items():
        names[name] = tuple(names[name]) + tuple(values)
    label = {name: ClassLabel(names=list(values)) for name, values in names.items()}
    return Features({
        "id": Value("string"), "base_id": Value("string"), "variant": label["variant"],
        "family": label["family"], "domain": label["domain"], "difficulty": label["difficulty"],
        "question_type": label["question_type"], "image_role": label["image_role"],
        "question": Value("string"), "figure_description": Value("string"), "answer": Value("string"),
        "steps": Sequence(Value("string")),
        "is_correct": Value("bool"), "error_family": label["error_family"], "error_subtype": label["error_subtype"],
        "first_error_step": Value("int32"), "propagated": Value("bool"), "answer_changed": Value("bool"),
        "error_count": Value("int32"), "other_error_subtypes": Sequence(label["error_subtype"]),
        "other_first_error_steps": Sequence(Value("int32")),
        "shown_answer": Value("string"), "explanation": Value("string"),
        "errorradar": label["errorradar"], "fermat": label["fermat"], "mmerror": label["mmerror"],
        "control_subtype": label["control_subtype"], "degradation": label["degradation"],
        "severity": Value("int32"), "profile": Value("string"),
        "render_style": label["render_style"], "neatness": Value("int32"), "show_solution": Value("bool"),
        "image": Image(), "row": Value("string"),
    })


def hf_record(run_dir: Path, row: dict[str, Any], where: str = "") -> dict[str, Any]:
    """One row of the dataset. The clean twin is not copied in (it is the clean row's image), but its path is
    still proven to lie inside the run, like every path a manifest names."""
    if row["clean_image"] is not None:
        inside(run_dir, row["clean_image"], field="clean_image", where=where)
    err = row["error"] or {}
    others = row.get("errors") or []  # errors after the first (inject.errors_per_variant > 1)
    proj = err.get("projections") or {}
    # one op's photo; a capture profile's photo holds several ops and is named by ``profile`` (row: every op)
    deg = row["degradations"][0] if len(row["degradations"]) == 1 and not row.get("profile") else None
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
        # FERMAT's no-error items are superficial edits (its SU class, as fermat.csv writes them)
        "errorradar": proj.get("errorradar"), "mmerror": proj.get("mmerror"),
        "fermat": "SU" if row["variant"] == "superficial" else proj.get("fermat"),
        "control_subtype": (row["control"] or {}).get("subtype"),
        "degradation": deg["subtype"] if deg else None, "severity": deg["severity"] if deg else 0,
        "profile": row.get("profile"),
        "render_style": (row["render"] or {}).get("style"), "neatness": (row["render"] or {}).get("neatness"),
        "show_solution": (row["render"] or {}).get("show_solution"),
        "image": _image(run_dir, row["image"], where=where),
        "row": json.dumps(row, ensure_ascii=False, separators=(",", ":")),
    }


def _our_cause(exc: BaseException) -> BaseException:
    """The MathstressError behind an error `datasets` wrapped (DatasetGenerationError), else the error our records
    raised (a row lacking a field: the export driver names the row), else ``exc`` itself."""
    cause: BaseException | None = exc
    deepest = exc
    while cause is not None and not isinstance(cause, MathstressError):
        deepest = cause
        cause = cause.__cause__ or cause.__context__
    if cause is not None:
        return cause
    return deepest if isinstance(deepest, ROW_FAULTS) else exc


def write(ctx: Context) -> None:
    disable_progress_bars()
    counts: Counter[str] = Counter(row["variant"] for row in read_manifest(ctx.run_dir))
    families: Counter[str] = Counter()
    subtypes: Counter[str] = Counter()
    degradations: Counter[str] = Counter()
    profiles: Counter[str] = Counter()
    extra = extra_class_names(read_manifest(ctx.run_dir))
    features = hf_features(extra)

    def records(split: str) -> Iterator[dict[str, Any]]:
        for row in ctx.rows():
            if row["variant"] != split:
                continue
            families[row["family"]] += 1
            for e in ([row["error"]] if row["error"] else []) + (row.get("errors") or []):
                subtypes[e["subtype"]] += 1
            if row.get("profile"):
                profiles[str(row["profile"])] += 1
            else:
                for d in row["degradations"]:
                    degradations[f"{d['subtype']} (severity {d['severity']})"] += 1
            ctx.embedded += row["image"] is not None
            yield hf_record(ctx.run_dir, row, ctx.where)

    # An explicit fingerprint stops `datasets` from pickling the generator (and its progress hook).
    digest = hashlib.sha256((ctx.run_dir / "manifest.jsonl").read_bytes()).hexdigest()[:24]
    splits = {}
    for split in (s for s in SPLITS if counts[s]):
        try:
            splits[split] = Dataset.from_generator(records, gen_kwargs={"split": split}, features=features,
                                                   cache_dir=str(ctx.out / "cache"), fingerprint=f"{digest}-{split}",
                                                   split=split)
        except Exception as exc:
            raise _our_cause(exc) from None
    ctx.items = sum(counts.values())
    DatasetDict(splits).save_to_disk(str(ctx.out / "dataset"))
    # The generator's cache holds every image once more: dropped before the parquet copy is written, so the export
    # needs the images' size twice at its peak (Arrow and parquet), not three times.
    del splits
    shutil.rmtree(ctx.out / "cache", ignore_errors=True)
    data = load_from_disk(str(ctx.out / "dataset"))
    (ctx.out / "data").mkdir()
    for split, ds in data.items():
        ds.to_parquet(str(ctx.out / "data" / f"{split}-00000-of-00001.parquet"))
    ctx.written = sum(len(ds) for ds in data.values())
    del data
    card = render_template(
        "dataset_card.md.j2", config=(ctx.run_dir / "config.yaml").read_text(encoding="utf-8"),
        total=sum(counts.values()), counts=[(s, counts[s]) for s in SPLITS if counts[s]],
        families=sorted(families.items()), subtypes=sorted(subtypes.items()),
        degradations=sorted(degradations.items()), profiles=sorted(profiles.items()),
        taxonomy=[s for s in ERROR_SUBTYPES if s.subtype not in RETIRED],
        classes={name: tuple(values) + extra.get(name, ()) for name, values in class_names().items()})
    (ctx.out / "README.md").write_text(card, encoding="utf-8")
    ctx.details |= {"splits": {s: counts[s] for s in SPLITS if counts[s]},
                    "clean_image": "not a column: the clean twin is the image of the clean row whose id is base_id",
                    "step_index": "1-based (first_error_step; -1 when the solution has no error)"}


EXPORTS.register(Exporter(
    id="hf", title="Hugging Face datasets", write=write, entries=("dataset", "data", "README.md"),
    proof=("dataset",), copies=(("image", 2.0),),
    help="Hugging Face datasets: one split per variant (Arrow and parquet), ClassLabel labels, a dataset card"))
