"""Degrade images we did not make (a folder, a saved HF dataset, a parquet file, a mathstress run) into a run folder.

``degrade_external(input, out, config)`` writes the same run folder ``generate`` writes: per source
image a clean control (the decoded image, ``images/<base>.png``) and one degraded item per op x
severity (``-d<n>``) and per capture profile (``-p<k>``), each with its params and measured effect;
``manifest.jsonl`` rows in our format plus ``source`` (where the image came from: a file, a row, a
run's item). Items are a function of (seed, source index) alone, so a run is deterministic per seed;
it is cut into shards committed with checksums (``synth.rundir``), so ``resume=True`` continues after a
stop and redoes only shards that do not verify.

Bad input is one item's failure, never the run's: an unreadable or truncated file, a cell that is not
an image, an image over ``max_pixels`` or ``max_bytes`` (refused before it is decoded), or too small,
is recorded in stats.json with its reason and the rest goes on. Ops that need what an arbitrary photo
lacks (our layout boxes, the problem's words) are skipped and counted with the reason; a mathstress
run as input has both, so every op applies to it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import cv2
import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from PIL import Image, ImageOps, UnidentifiedImageError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from perturb.albu import named_profile, page_for
from perturb.photo import REGISTRY as PHOTO_OPS
from perturb.photo import Photo, degrade_photo
from perturb.photo.base import DegradationError, PageText
from perturb.photo.handwritten import page_text
from perturb.photo.profile import capture
from synth.config import CaptureProfile, DegradeConfig, DegradeOp, ProfileStep
from synth.errors import ConfigError, ResumableError, RunError
from synth.manifest import dumps_row, from_row, read_manifest, to_row
from synth.pixels import eight_bit_grey
from synth.records import Item, Problem, RenderedPage, Variant
from synth.rundir import (
    RESUME_HINT,
    ResumePlan,
    RunDir,
    ShardOutput,
    check_same_versions,
    file_sha256,
    open_run,
    sha256,
    stage_image,
)
from synth.safepath import MARKER, check_not_in_run_internals, check_row_ids, inside, read_marker
from synth.seeding import item_seed, stage_rng
from synth.stages import versions
from synth.yamlsafe import preview, read_yaml_file

InputKind = Literal["folder", "hf", "parquet", "run"]
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif")
MIN_SIDE = 16  # the photo ops' own minimum (perturb.photo.base.check_image)
MAX_LISTED_FAILURES = 1000  # stats.json lists this many failed sources; the counts cover all
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TEXT_CHARS = 20_000  # a question or answer cell longer than this is cut (they are a few hundred characters)


class ExternalConfig(BaseModel):
    """What to do to each source image; the ``degrade`` block is a run config's (ops and profiles)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(default="external", pattern=_NAME.pattern)
    seed: int = Field(default=0, ge=0, lt=2**63)
    dpi: int = Field(default=150, ge=30, le=1200, description="the resolution the ops assume for a source image")
    degrade: DegradeConfig = DegradeConfig()
    image_column: str | None = None
    question_column: str | None = None
    answer_column: str | None = None
    id_column: str | None = None
    split: str | None = None
    max_pixels: int = Field(default=36_000_000, ge=256, le=178_000_000)
    max_bytes: int = Field(default=64 << 20, ge=1024, le=1 << 30)
    shard_size: int = Field(default=8, ge=1, le=10_000)
    limit: int | None = Field(default=None, ge=1)

    @field_validator("degrade")
    @classmethod
    def _no_quota(cls, value: DegradeConfig) -> DegradeConfig:
        if value.per_base is not None:
            raise ValueError("degrade.per_base belongs to generated runs (quota allocation); remove it")
        return value


def parse_ops(spec: str) -> list[DegradeOp]:
    """``blur:2,tilt:1,noise`` -> one DegradeOp per op (a bare name takes every severity the op has)."""
    by_op: dict[str, list[int]] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        subtype, colon, level = part.partition(":")
        if subtype not in PHOTO_OPS:
            raise ConfigError(f"--ops: unknown op {subtype!r}{PHOTO_OPS.near(subtype)} (`mathstress taxonomy "
                              "--degradations` lists them)")
        if not colon:
            by_op.setdefault(subtype, []).extend(PHOTO_OPS[subtype].levels)
            continue
        if not (level.isascii() and level.isdigit()) or int(level) not in PHOTO_OPS[subtype].levels:
            raise ConfigError(f"--ops: {part!r}: {subtype} has severities {list(PHOTO_OPS[subtype].levels)}; "
                              "write op:severity, e.g. blur:2")
        by_op.setdefault(subtype, []).append(int(level))
    return [DegradeOp(subtype=s, severities=sorted(set(v))) for s, v in by_op.items()]


def profile_config(name: str) -> CaptureProfile:
    """A packaged capture profile (``desk_lamp_tilted``) as a config entry."""
    try:
        steps = named_profile(name)
    except DegradationError as exc:
        raise ConfigError(f"--profile: {exc}") from None
    return CaptureProfile(name=name, ops=[ProfileStep(subtype=s, severity=v) for s, v in steps])


def load_external_config(path: str | Path | None = None, **overrides: Any) -> ExternalConfig:
    """The config from a YAML file (or the defaults), with the CLI's values (not None) laid over it.

    ``ops`` (a ``blur:2,tilt`` string) and ``profiles`` (names) are added to the file's degrade block.
    """
    data: dict[str, Any] = {}
    source = "degrade options"
    if path is not None:
        raw = read_yaml_file(path)
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of keys, got {type(raw).__name__}")
        data, source = dict(raw), str(path)
    ops, profiles = overrides.pop("ops", None), overrides.pop("profiles", None) or ()
    data |= {k: v for k, v in overrides.items() if v is not None}
    try:
        cfg = ExternalConfig.model_validate(data)
    except ValidationError as exc:
        lines = [_describe(e) for e in exc.errors(include_url=False)[:20]]
        raise ConfigError(f"{source} is invalid:\n  " + "\n  ".join(lines)) from None
    extra_ops = parse_ops(ops) if ops else []
    extra_profiles = [profile_config(n) for n in profiles]
    if extra_ops or extra_profiles:
        try:
            cfg = cfg.model_copy(update={"degrade": DegradeConfig(
                ops=[*cfg.degrade.ops, *extra_ops], profiles=[*cfg.degrade.profiles, *extra_profiles])})
        except ValidationError as exc:
            raise ConfigError(f"{source}: {_describe(exc.errors(include_url=False)[0])}") from None
    if not cfg.degrade.ops and not cfg.degrade.profiles:
        raise ConfigError("nothing to do: give --ops (e.g. blur:2,tilt:1), --profile NAME or a --config with "
                          "degrade.ops / degrade.profiles")
    return cfg


def _describe(err: dict[str, Any]) -> str:
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    if err["type"] == "extra_forbidden":
        return f"{where}: unknown key; remove it or check its spelling"
    return f"{where}: {re.sub(r'^Value error, ', '', err['msg'])} (given {preview(err.get('input'))})"


# ------------------------------------------------------------------------- sources


class ItemFailure(Exception):
    """One source that cannot be degraded; ``kind`` groups the reasons in stats.json."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Entry:
    """One source image, not yet read: where it is, what it says (question, answer), how to get its bytes."""

    index: int
    ref: dict[str, Any]                 # the manifest's ``source``: kind, and path / row / item id
    cell: Any                           # bytes, a path, an HF image dict, a PIL image, or anything a user put there
    question: str = ""
    answer: str = ""
    item: Item | None = None            # a mathstress run's clean control (layout, words, labels)


@dataclass(frozen=True)
class Input:
    """An opened input: its kind, how many sources, a fingerprint for --resume, and its entries in order."""

    kind: InputKind
    path: Path
    count: int
    fingerprint: str
    entries: Callable[[], Iterator[Entry]]
    base: Path                          # where relative image paths in cells are resolved
    image_column: str | None = None


def open_input(path: str | Path, config: ExternalConfig, *, exclude: Path | None = None) -> Input:
    """Recognise ``path``: a mathstress run, a saved HF dataset, a parquet file, or a folder of images."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"input {str(p)!r} does not exist; give a folder of images, a dataset saved with "
                          "save_to_disk, a .parquet file or a mathstress run folder")
    if p.is_file():
        if p.suffix.lower() != ".parquet":
            raise ConfigError(f"input {str(p)!r} is a file but not .parquet; give a parquet file, or the folder "
                              "that holds the images")
        return _parquet_input(p, config)
    marker = read_marker(p)
    if (p / "manifest.jsonl").is_file() and ((marker or {}).get("kind") == "run"
                                             or (marker is None and (p / "config.yaml").is_file())):
        return _run_input(p, config)
    if any((p / n).is_file() for n in ("dataset_info.json", "dataset_dict.json", "state.json")):
        return _hf_input(p, config)
    return _folder_input(p, config, exclude)


def _text(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, default=str) if isinstance(value, (list, dict)) \
        else str(value)
    return text[:_TEXT_CHARS]


def _folder_input(root: Path, config: ExternalConfig, exclude: Path | None) -> Input:
    skip = exclude.resolve() if exclude is not None else None
    found = []
    for folder, subfolders, names in os.walk(root):
        # Hidden folders, and mathstress output inside the input folder (a run, an export, an earlier degrade's
        # --out: its photos are not clean sources), are not walked into.
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and not (Path(folder, d) / MARKER).is_file()]
        found.extend(Path(folder, n).relative_to(root) for n in names)
    files = []
    for rel in sorted(found):
        path = root / rel
        if any(part.startswith(".") for part in rel.parts) or path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        if skip is not None and path.resolve().is_relative_to(skip):
            continue  # our own output, written inside the input folder
        if path.is_file():
            files.append(rel.as_posix())
    if config.limit is not None:
        files = files[:config.limit]
    if not files:
        if skip is not None and root.resolve().is_relative_to(skip):
            raise ConfigError(f"--out {exclude} is the input folder {root} (or holds it); write the degraded set to "
                              "another folder")
        raise ConfigError(f"{root} holds no images ({', '.join(IMAGE_SUFFIXES)}); give the folder that holds them")
    meta = _folder_metadata(root)
    # What --resume holds the folder to: each image's bytes and the metadata row it is labelled with (names and
    # sizes alone let a relabelled metadata.jsonl or a same-size replaced image through: old and new labels mixed).
    digest = hashlib.sha256()
    for rel in files:
        label = json.dumps(meta.get(rel), sort_keys=True, ensure_ascii=False)
        digest.update(f"{rel}\0{_bytes_digest(root / rel)}\0{label}\n".encode())

    def entries() -> Iterator[Entry]:
        for i, rel in enumerate(files):
            row = meta.get(rel, {})
            ref = {"kind": "folder", "path": rel}
            if config.id_column and config.id_column in row:
                ref["id"] = _text(row[config.id_column])
            yield Entry(i, ref, root / rel, _text(row.get(config.question_column or "question")),
                        _text(row.get(config.answer_column or "answer")))

    return Input("folder", root, len(files), digest.hexdigest(), entries, root)


def _bytes_digest(path: Path) -> str:
    """A source file's sha256, or "unreadable" (the item that reads it fails, with its reason, when degraded)."""
    try:
        return file_sha256(path)
    except OSError:
        return "unreadable"


def _folder_metadata(root: Path) -> dict[str, dict[str, Any]]:
    """``metadata.jsonl`` beside the images (Hugging Face imagefolder: ``file_name`` and any columns), if any."""
    path = root / "metadata.jsonl"
    if not path.is_file():
        return {}
    if path.stat().st_size > 256 << 20:
        raise ConfigError(f"{path} is over 256 MiB; split the folder")
    rows: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                raise ConfigError(f"{path}: line {n} is not JSON; fix or remove it") from None
            if not isinstance(row, dict) or not isinstance(row.get("file_name"), str):
                raise ConfigError(f"{path}: line {n} needs a file_name (the image's path in the folder)")
            rows[Path(row["file_name"]).as_posix()] = row
    return rows


def _pick(names: Sequence[str], given: str | None, guesses: Sequence[str], what: str) -> str | None:
    if given is not None:
        if given not in names:
            raise ConfigError(f"--{what}-column {given!r} is not a column; the columns are {list(names)}")
        return given
    return next((g for g in guesses if g in names), None)


def _hf_input(root: Path, config: ExternalConfig) -> Input:
    try:
        loaded = datasets.load_from_disk(str(root))
    except (OSError, ValueError, FileNotFoundError) as exc:
        raise ConfigError(f"{root} looks like a saved Hugging Face dataset but cannot be loaded ({exc})") from None
    split = config.split
    if isinstance(loaded, datasets.DatasetDict):
        splits = list(loaded)
        if split is None and len(splits) == 1:
            split = splits[0]
        if split not in loaded:
            raise ConfigError(f"{root} holds the splits {splits}; choose one with --split")
        ds = loaded[split]
    else:
        if split is not None:
            raise ConfigError(f"{root} is a single dataset without splits; drop --split")
        ds = loaded
    features = ds.features
    names = list(features)
    images = [n for n, f in features.items() if isinstance(f, datasets.Image)]
    column = _pick(names, config.image_column, [*images, "image", "decoded_image", "img"], "image")
    if column is None:
        raise ConfigError(f"{root}: no image column found among {names}; name it with --image-column")
    feature = features[column]
    if isinstance(feature, datasets.Image):
        ds = ds.cast_column(column, datasets.Image(decode=False))  # bytes: sizes are checked before decoding
    elif not (isinstance(feature, datasets.Value) and feature.dtype in ("string", "large_string", "binary",
                                                                          "large_binary")):
        raise ConfigError(f"--image-column {column!r} holds {feature}, which cannot be an image; image columns hold "
                          f"images, image bytes or paths (columns: {names})")
    question = _pick(names, config.question_column, ["question", "query", "problem"], "question")
    answer = _pick(names, config.answer_column, ["answer"], "answer")
    ident = _pick(names, config.id_column, ["id", "pid"], "id")
    count = len(ds) if config.limit is None else min(len(ds), config.limit)
    fingerprint = f"{getattr(ds, '_fingerprint', '')}:{split}:{len(ds)}"
    wanted = [c for c in dict.fromkeys([column, question, answer, ident]) if c is not None]
    view = ds.select_columns(wanted)

    def entries() -> Iterator[Entry]:
        for i in range(count):
            row = view[i]
            ref: dict[str, Any] = {"kind": "hf", "row": i, **({"split": split} if split else {})}
            if ident is not None:
                ref["id"] = _text(row[ident])
            yield Entry(i, ref, row[column], _text(row.get(question)) if question else "",
                        _text(row.get(answer)) if answer else "")

    return Input("hf", root, count, fingerprint, entries, root, column)


def _parquet_input(path: Path, config: ExternalConfig) -> Input:
    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise ConfigError(f"{path} cannot be read as parquet ({exc})") from None
    schema = pf.schema_arrow
    names = list(schema.names)

    def image_like(t: pa.DataType) -> bool:
        return pa.types.is_struct(t) and t.get_field_index("bytes") >= 0

    images = [n for n in names if image_like(schema.field(n).type)]
    column = _pick(names, config.image_column, [*images, "image", "decoded_image", "img"], "image")
    if column is None:
        raise ConfigError(f"{path}: no image column found among {names}; name it with --image-column")
    kind = schema.field(column).type
    if not (image_like(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
            or pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise ConfigError(f"--image-column {column!r} holds {kind}, which cannot be an image; image columns hold "
                          f"images ({{bytes, path}}), image bytes or paths (columns: {names})")
    question = _pick(names, config.question_column, ["question", "query", "problem"], "question")
    answer = _pick(names, config.answer_column, ["answer"], "answer")
    ident = _pick(names, config.id_column, ["id", "pid"], "id")
    total = pf.metadata.num_rows
    count = total if config.limit is None else min(total, config.limit)
    fingerprint = f"{_bytes_digest(path)}:{total}:{sha256(str(schema).encode())[:16]}"  # its bytes, as a folder's
    wanted = [c for c in dict.fromkeys([column, question, answer, ident]) if c is not None]

    def entries() -> Iterator[Entry]:
        i = 0
        for batch in pf.iter_batches(batch_size=32, columns=wanted):
            for row in batch.to_pylist():
                if i >= count:
                    return
                ref: dict[str, Any] = {"kind": "parquet", "row": i}
                if ident is not None:
                    ref["id"] = _text(row[ident])
                yield Entry(i, ref, row[column], _text(row.get(question)) if question else "",
                            _text(row.get(answer)) if answer else "")
                i += 1

    return Input("parquet", path, count, fingerprint, entries, path.parent, column)


def _is_control(row: Any) -> bool:
    """A run's clean control: its own base, no degradation."""
    return isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"] == row.get("base_id") \
        and not row.get("degradations")


def _control_item(root: Path, row: dict[str, Any], n: int) -> tuple[Item, Path | None]:
    """A run's manifest row as its Item and image path, both proven (ids' shapes, the path inside the run)."""
    where = f"manifest.jsonl line {n}"
    check_row_ids(row, where=where)
    try:
        item = from_row(row)
    except (KeyError, TypeError, ValueError) as exc:
        raise RunError(f"{root}/{where} is not a mathstress manifest row ({exc!r} is missing or wrong); "
                       "regenerate the run") from None
    return item, inside(root, item.image, field="image", where=where) if item.image else None


def _run_input(root: Path, config: ExternalConfig) -> Input:
    """A mathstress run: its clean controls, with their layout and words (every op applies)."""
    digest = hashlib.sha256()
    count = 0
    with (root / "manifest.jsonl").open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    for n, row in enumerate(read_manifest(root), start=1):
        if _is_control(row) and (config.limit is None or count < config.limit):
            _control_item(root, row, n)  # a row that is not ours is refused before anything is written
            count += 1
    if config.limit is not None:
        count = min(count, config.limit)
    if not count:
        raise ConfigError(f"{root}: the run's manifest has no clean controls to degrade")

    def entries() -> Iterator[Entry]:
        i = 0
        for n, row in enumerate(read_manifest(root), start=1):
            if i >= count:
                return
            if not _is_control(row):
                continue
            item, cell = _control_item(root, row, n)
            yield Entry(i, {"kind": "run", "id": item.id, "image": item.image}, cell, item=item)
            i += 1

    return Input("run", root, count, digest.hexdigest(), entries, root)


# ------------------------------------------------------------------------- reading one image


def read_image(cell: Any, *, base: Path, column: str | None, max_pixels: int, max_bytes: int) -> np.ndarray:
    """An H x W x 3 uint8 RGB array from a source cell, or ItemFailure saying why not.

    Sizes are checked from the file's header before its pixels are decoded, so a huge image (or a
    decompression bomb) costs nothing. Alpha is laid on white paper; EXIF orientation is applied.
    """
    what = f"column {column!r}" if column else "the file"
    if isinstance(cell, Image.Image):
        return _pixels(cell, max_pixels)
    if isinstance(cell, dict) and ("bytes" in cell or "path" in cell):  # a Hugging Face image, undecoded
        cell = cell.get("bytes") or cell.get("path")
    if isinstance(cell, (bytes, bytearray, memoryview)):
        data = bytes(cell)
        if len(data) > max_bytes:
            raise ItemFailure("too_large", f"image of {len(data):,} bytes is over the {max_bytes:,}-byte limit")
        return _decode(io.BytesIO(data), max_pixels)
    if isinstance(cell, str) and cell.strip():
        path = base / cell
        if "\x00" in cell or "\n" in cell or len(cell) > 4096 or not path.is_file():
            raise ItemFailure("not_an_image", f"{what} holds {preview(cell)}: not an image, nor the path of an image "
                                              f"file under {base}")
        cell = path
    if isinstance(cell, Path):
        try:
            size = cell.stat().st_size
            if not cell.is_file():
                raise ItemFailure("not_an_image", f"{preview(str(cell))} is not a file")
        except OSError:
            raise ItemFailure("missing_file" if column is None else "not_an_image",
                              f"{what} names {preview(str(cell))}, which is not a readable file") from None
        if size > max_bytes:
            raise ItemFailure("too_large", f"image file of {size:,} bytes is over the {max_bytes:,}-byte limit")
        with cell.open("rb") as fh:
            return _decode(io.BytesIO(fh.read(max_bytes + 1)), max_pixels)
    kind = "nothing" if cell is None or cell == "" else type(cell).__name__
    raise ItemFailure("not_an_image", f"{what} holds {kind}, not an image")


def _decode(stream: io.BytesIO, max_pixels: int) -> np.ndarray:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our own limit decides, below
            image = Image.open(stream)
            return _pixels(image, max_pixels)
    except Image.DecompressionBombError:
        claimed = 2 * (Image.MAX_IMAGE_PIXELS or 0) / 1e6
        raise ItemFailure("too_large", f"over --max-pixels {max_pixels:,}: its header claims more than "
                                       f"{claimed:,.0f} million pixels (a decompression bomb)") from None
    except UnidentifiedImageError:
        raise ItemFailure("unreadable", "not a readable image (no image format recognised)") from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:  # truncated files, broken chunks
        raise ItemFailure("unreadable", f"the image cannot be decoded ({exc})") from None


def _pixels(image: Image.Image, max_pixels: int) -> np.ndarray:
    w, h = image.size
    if w * h > max_pixels:
        raise ItemFailure("too_large", f"{w}x{h} px ({w * h:,} pixels) is over --max-pixels {max_pixels:,}")
    if min(w, h) < MIN_SIDE:
        raise ItemFailure("too_small", f"{w}x{h} px; the ops need at least {MIN_SIDE} px on each side")
    image.load()
    try:
        image = ImageOps.exif_transpose(image)
    except (OSError, ValueError, KeyError, TypeError):
        pass  # broken EXIF: keep the stored orientation
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        image = Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba)
    if image.mode in ("I", "F") or image.mode.startswith("I;16"):
        image = eight_bit_grey(image)
    return np.ascontiguousarray(np.asarray(image.convert("RGB"), dtype=np.uint8))


# ------------------------------------------------------------------------- one source, one shard


@dataclass
class ShardStats:
    sources: int = 0
    items: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, str] = field(default_factory=dict)
    degradations: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"sources": self.sources, "items": self.items, "failures": self.failures,
                "skipped": dict(self.skipped), "reasons": self.reasons, "degradations": dict(self.degradations),
                "seconds": round(self.seconds, 3)}


def base_id(config: ExternalConfig, entry: Entry) -> str:
    return entry.item.base_id if entry.item is not None else f"{config.name}-{entry.index:06d}"


def external_item(config: ExternalConfig, kind: InputKind, entry: Entry, page: RenderedPage) -> Item:
    """The clean control of an external image: what the source says (question, answer), no solution."""
    bid = base_id(config, entry)
    problem = Problem(id=bid, family=f"external.{kind}", domain="external", subdomain=kind, grade_band="unknown",
                      difficulty="unknown", question_type="free", image_role="required",
                      question_text=entry.question, question_latex="", answer_text=entry.answer, answer_latex="",
                      answer_value=entry.answer, steps=())
    return Item(id=bid, base_id=bid, index=entry.index, seed=item_seed(config.seed, entry.index), problem=problem,
                variant=Variant(kind="clean", steps=(), shown_answer="", is_correct=True), render=page,
                image=f"images/{bid}.png", clean_image=f"images/{bid}.png", versions=versions())


def png_bytes(pixels: np.ndarray) -> bytes:
    """PNG of RGB pixels (fast compression, as the pipeline writes its pages)."""
    ok, buf = cv2.imencode(".png", cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 1])
    if not ok:
        raise DegradationError("could not encode the image as PNG")
    return buf.tobytes()


def _skip_reason(subtype: str, page: RenderedPage, text: PageText | None) -> str | None:
    op = PHOTO_OPS[subtype]
    if not op.applies(page):
        return op.requirement or "does not apply to this image"
    if op.uses_text and text is None:
        return "writes the problem's own words by hand; only a mathstress run as input carries them"
    return None


def photos(config: ExternalConfig, entry: Entry, seed: int, pixels: np.ndarray, page: RenderedPage,
           text: PageText | None, stats: ShardStats) -> Iterator[tuple[str, Photo, str | None]]:
    """``(suffix, photo, profile name)`` for each op x severity and each profile that applies to this image.

    Numbering and generators follow the pipeline's degrade stage: ``-d<n>`` counts every op x severity
    pair in config order, applied or skipped, so one image's skip never renumbers another's items.
    """
    n = 0
    for entry, op in enumerate(config.degrade.ops):
        for severity in op.severities:
            n += 1
            why = _skip_reason(op.subtype, page, text) if severity else None
            if why is not None:
                stats.skipped[f"{op.subtype}:{severity}"] += 1
                stats.reasons[op.subtype] = why
                continue
            # Keyed by the op's entry, not its severity (as the pipeline's captures): an image's severities of
            # one op are one scene made worse, so a severity ablation is paired.
            rng = stage_rng(seed, f"degrade:{op.subtype}", entry)
            yield f"d{n}", degrade_photo(pixels, page, op.subtype, severity, rng, text=text), None
    for k, profile in enumerate(config.degrade.profiles, start=1):
        if any(_skip_reason(s.subtype, page, text) for s in profile.ops):
            stats.skipped[f"profile:{profile.name}"] += 1
            stats.reasons[f"profile:{profile.name}"] = next(
                f"{s.subtype} {w}" for s in profile.ops if (w := _skip_reason(s.subtype, page, text)))
            continue
        rng = stage_rng(seed, f"profile:{profile.name}")
        yield f"p{k}", capture(pixels, page, [(s.subtype, s.severity) for s in profile.ops], rng, text=text), \
            profile.name


def produce_shard(config: ExternalConfig, source: Input, shard: int, entries: Sequence[Entry],
                  stage: Path) -> ShardOutput:
    """Read, degrade and encode one shard's sources; images go to ``stage`` as they are made."""
    t0 = time.perf_counter()
    stats = ShardStats()
    rows: list[str] = []
    names: list[str] = []
    digests: list[str] = []

    def keep(name: str, data: bytes) -> None:
        stage_image(stage, name, data)
        names.append(name)
        digests.append(sha256(data))

    for entry in entries:
        try:
            pixels = read_image(entry.cell, base=source.base, column=source.image_column,
                                max_pixels=config.max_pixels, max_bytes=config.max_bytes)
        except ItemFailure as failure:
            stats.failures.append({"index": entry.index, "source": entry.ref, "kind": failure.kind,
                                   "reason": str(failure)})
            continue
        if entry.item is not None and entry.item.render is not None:
            clean = entry.item
            page = clean.render
            assert page is not None
            if (page.width, page.height) != (pixels.shape[1], pixels.shape[0]):
                page = page_for(pixels.shape[1], pixels.shape[0], page.dpi, page.layout)
            text: PageText | None = page_text(clean.problem, clean.variant)
            clean = replace(clean, render=page, image=f"images/{clean.base_id}.png",
                            clean_image=f"images/{clean.base_id}.png")
        else:
            page = page_for(pixels.shape[1], pixels.shape[0], config.dpi)
            clean, text = external_item(config, source.kind, entry, page), None
        seed = item_seed(config.seed, entry.index)
        made: list[tuple[Item, bytes]] = [(clean, png_bytes(pixels))]
        try:
            for suffix, photo, profile in photos(config, entry, seed, pixels, page, text, stats):
                item_id = f"{clean.base_id}-{suffix}"
                image = f"images/{item_id}.jpg" if photo.jpeg is not None else f"images/{item_id}.png"
                item = Item(id=item_id, base_id=clean.base_id, index=clean.index, seed=clean.seed,
                            problem=clean.problem, variant=clean.variant, render=photo.page,
                            degradations=photo.records, profile=profile, image=image, clean_image=clean.image,
                            versions=versions(), source_id=clean.id)
                made.append((item, photo.jpeg if photo.jpeg is not None else png_bytes(photo.pixels)))
        except DegradationError as exc:  # the image defeats an op (degenerate content): one source's failure
            stats.failures.append({"index": entry.index, "source": entry.ref, "kind": "op_failed",
                                   "reason": str(exc)})
            continue
        stats.sources += 1
        for item, data in made:
            keep(Path(item.image or "").name, data)
            row = to_row(item) | {"source": entry.ref}
            rows.append(dumps_row(row))
            stats.items += 1
            for record in item.degradations:
                stats.degradations[f"{record.subtype}:{record.severity}"] += 1
    stats.seconds = time.perf_counter() - t0
    return ShardOutput(shard, tuple(rows), tuple(names), tuple(digests), (), stats.as_dict())


# ------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class DegradeResult:
    run_dir: Path
    kind: InputKind
    sources: int            # source images read and degraded
    failed: int             # source images that could not be (stats.json lists why)
    items: int              # manifest rows: a clean control and its photos per source
    shards: int
    resumed_shards: int
    seconds: float
    failures: tuple[dict[str, Any], ...] = ()
    skipped: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    redone: dict[int, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


ProgressFn = Callable[[int, int], None]


def _resolved(config: ExternalConfig, source: Input) -> str:
    data = {"degrade_external": config.model_dump(mode="json"),
            "input": {"kind": source.kind, "path": str(source.path.resolve()), "count": source.count,
                      "fingerprint": source.fingerprint}}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _prepare(run_dir: Path, resolved: str, *, resume: bool, overwrite: bool, n_shards: int) -> ResumePlan:
    """Create or reopen the run folder (as ``synth.pipeline.prepare_run`` does); the shards still to do."""
    return open_run(run_dir, resolved, resume=resume, overwrite=overwrite, n_shards=n_shards,
                    differs="was started with other settings or another input (or the input changed since); "
                    "--resume needs the same ones: use --overwrite or another --out")


def degrade_external(input_path: str | Path, run_dir: str | Path, config: ExternalConfig, *, resume: bool = False,
                     overwrite: bool = False, progress: ProgressFn | None = None) -> DegradeResult:
    """Degrade every image of ``input_path`` into the run folder ``run_dir`` (see the module docstring)."""
    t0 = time.perf_counter()
    run_dir = Path(run_dir)
    source = open_input(input_path, config, exclude=run_dir)
    if source.kind == "run" and run_dir.resolve() == source.path.resolve():
        raise ConfigError("--out is the input run itself; write the degraded set to another folder")
    n_shards = -(-source.count // config.shard_size)
    resolved = _resolved(config, source)
    check_not_in_run_internals(run_dir)  # another run's images/ or shards/: its --overwrite would delete this one
    with RunDir(run_dir).locked():
        plan = _prepare(run_dir, resolved, resume=resume, overwrite=overwrite, n_shards=n_shards)
        check_same_versions(run_dir, plan, n_shards, versions())
        todo = set(plan.todo)
        folder = RunDir(run_dir)
        done = sum(min(config.shard_size, source.count - s * config.shard_size)
                   for s in range(n_shards) if s not in todo)
        if progress:
            progress(done, source.count)
        batch: list[Entry] = []

        def flush(shard: int) -> None:
            nonlocal done
            if shard in todo:
                stage = folder.staging(shard, fresh=True)
                folder.commit(produce_shard(config, source, shard, batch, stage))
                done += len(batch)
                if progress:
                    progress(done, source.count)
            batch.clear()

        try:
            for entry in source.entries():
                batch.append(entry)
                if len(batch) == config.shard_size:
                    flush(entry.index // config.shard_size)
            if batch:
                flush(batch[0].index // config.shard_size)
        except MemoryError as exc:
            raise ResumableError(f"out of memory; the shards committed so far are kept in {run_dir}; lower "
                                 f"--max-pixels or the shard size, then {RESUME_HINT}") from exc
        stats = _finish(folder, config, source, n_shards, time.perf_counter() - t0, n_shards - len(todo))
    return DegradeResult(run_dir, source.kind, stats["sources"]["degraded"], stats["sources"]["failed"],
                         stats["items"], n_shards, n_shards - len(todo), time.perf_counter() - t0,
                         tuple(stats["failures"]), stats["skipped"], stats["skip_reasons"], plan.redone, plan.notes)


def _finish(folder: RunDir, config: ExternalConfig, source: Input, n_shards: int, wall: float,
            resumed: int) -> dict[str, Any]:
    """Join the shards into manifest.jsonl and write stats.json (sources, failures, skips, counts).

    A finished run (resumed with nothing left to do) keeps the stats.json it was finished with.
    """
    if folder.manifest.exists():
        return json.loads((folder.path / "stats.json").read_text(encoding="utf-8"))
    sources = items = 0
    failures: list[dict[str, Any]] = []
    by_kind: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    reasons: dict[str, str] = {}
    degradations: Counter[str] = Counter()
    for record in folder.records(n_shards):
        part = record.stats
        sources += part["sources"]
        items += part["items"]
        for f in part["failures"]:
            by_kind[f["kind"]] += 1
            if len(failures) < MAX_LISTED_FAILURES:
                failures.append(f)
        skipped.update(part["skipped"])
        reasons.update(part["reasons"])
        degradations.update(part["degradations"])
    stats = {"name": config.name, "input": {"kind": source.kind, "path": str(source.path)},
             "sources": {"total": source.count, "degraded": sources, "failed": sum(by_kind.values()),
                         "failed_by_kind": dict(sorted(by_kind.items()))},
             "items": items, "shards": n_shards, "resumed_shards": resumed,
             "skipped": dict(sorted(skipped.items())), "skip_reasons": dict(sorted(reasons.items())),
             "degradations": dict(sorted(degradations.items())), "failures": failures,
             "wall_seconds": round(wall, 3), "versions": versions()}
    folder.write_json("stats.json", stats)
    folder.publish(n_shards)
    return stats
