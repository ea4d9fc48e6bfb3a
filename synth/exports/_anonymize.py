"""Anonymized exports: a run seen through opaque ids, file names and a shuffled order, with a key mapping back.

An id such as ``quickstart-000003-e1-d2`` tells a model what the item is (an error variant, photographed),
and so do image names and row order (a base's clean control first, its variants next). ``anonymous_view``
writes a folder that looks like a finished run to every export format: its manifest holds the same rows in
an order drawn from the run seed, each with an opaque id (``item-000123``), an opaque base id
(``problem-000017``), its own links (``source_id``, ``capture_twin``, ``clean_image``) renamed the same way,
and its images hard-linked (or copied) under the opaque names. ``write_key`` writes the mapping back beside
the export, not inside it, so the export can be shared without it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from synth.errors import UnsafePathError
from synth.safepath import check_row_ids, inside

ITEM_PREFIX = "item"
BASE_PREFIX = "problem"
KEY_HEADER = ["anonymous_id", "id", "kind"]
_LINKS = ("source_id", "capture_twin")


def key_path(dest: str | Path) -> Path:
    """Where the key of an anonymized export at ``dest`` goes: ``<dest>.key.csv`` beside it."""
    dest = Path(dest)
    return dest.parent / f"{dest.name}.key.csv"


def _is_our_key(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return next(csv.reader(fh), None) == KEY_HEADER
    except (OSError, UnicodeDecodeError):
        return False


def check_key_path(dest: str | Path) -> Path:
    """The key file's path, refused when something that is not an earlier key of ours is there."""
    path = key_path(dest)
    if (path.exists() or path.is_symlink()) and not (path.is_file() and not path.is_symlink() and _is_our_key(path)):
        raise UnsafePathError(f"--anonymize writes its key to {path}, but something else is there; move it away "
                              "or export to another --out")
    return path


def remove_stale_key(dest: str | Path) -> None:
    """A plain export replaces an anonymized one: its key beside it no longer describes it."""
    path = key_path(dest)
    if path.is_file() and not path.is_symlink() and _is_our_key(path):
        path.unlink()


@dataclass(frozen=True)
class View:
    """An anonymized view of a run: the folder to export from and the opaque names given (ours -> opaque)."""

    run_dir: Path
    items: dict[str, str]
    bases: dict[str, str]


def _rank(salt: str, ids: list[str]) -> dict[str, int]:
    """Each id's place in an order drawn from ``salt``: sorting by a salted hash shuffles, the same way each time."""
    order = sorted(ids, key=lambda i: hashlib.sha256(f"{salt}\x00{i}".encode()).hexdigest())
    return {i: n for n, i in enumerate(order)}


def _run_seed(run_dir: Path) -> str:
    try:
        config = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        config = None
    return str(config.get("seed")) if isinstance(config, dict) else ""


def anonymous_view(run_dir: Path, folder: Path) -> View:
    """Write ``run_dir`` anonymized into the new folder ``folder`` (config.yaml, manifest.jsonl, images/)."""
    manifest = run_dir / "manifest.jsonl"
    offsets: list[tuple[int, str]] = []
    ids, bases, images = [], {}, {}
    with manifest.open("rb") as fh:
        for n, line in enumerate(iter(fh.readline, b""), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            where = f"{manifest} row {n}"
            check_row_ids(row, where=where)
            offsets.append((fh.tell() - len(line), row["id"]))
            ids.append(row["id"])
            bases.setdefault(row["base_id"], None)
            if row.get("image") is not None:
                images[row["image"]] = row["id"]
    salt = _run_seed(run_dir)
    width = max(6, len(str(len(ids))))
    item_rank, base_rank = _rank(salt + ":items", ids), _rank(salt + ":bases", list(bases))
    items = {i: f"{ITEM_PREFIX}-{item_rank[i]:0{width}d}" for i in ids}
    base_names = {b: f"{BASE_PREFIX}-{base_rank[b]:0{width}d}" for b in bases}
    (folder / "images").mkdir(parents=True)
    if (run_dir / "config.yaml").is_file():
        shutil.copyfile(run_dir / "config.yaml", folder / "config.yaml")

    def image_name(rel: str | None, field: str, where: str) -> str | None:
        if rel is None:
            return None
        owner = images.get(rel)
        if owner is None:
            raise UnsafePathError(f"{where}: {field} {rel!r} is no row's image; the manifest was edited or is not "
                                  "ours: regenerate the run")
        return f"images/{items[owner]}{Path(rel).suffix.lower()}"

    rows = sorted(offsets, key=lambda pair: item_rank[pair[1]])
    with manifest.open("rb") as src, (folder / "manifest.jsonl").open("w", encoding="utf-8") as out:
        for offset, item_id in rows:
            src.seek(offset)
            row = json.loads(src.readline())
            where = f"{manifest} row of {item_id}"
            new = dict(row)
            new["id"], new["base_id"] = items[item_id], base_names[row["base_id"]]
            new["index"] = base_rank[row["base_id"]]
            for key in _LINKS:
                if row.get(key) is not None:
                    if row[key] not in items:
                        raise UnsafePathError(f"{where}: {key} {row[key]!r} is no row's id; regenerate the run")
                    new[key] = items[row[key]]
            new["degradations"] = [_opaque_reverse(d, salt) for d in row.get("degradations") or []]
            new["image"] = image_name(row.get("image"), "image", where)
            new["clean_image"] = image_name(row.get("clean_image"), "clean_image", where)
            if row.get("image") is not None:
                _link(inside(run_dir, row["image"], field="image", where=where), folder / new["image"])
            out.write(json.dumps(new, ensure_ascii=False, separators=(",", ":")) + "\n")
    return View(folder, items, base_names)


def _opaque_reverse(record: dict, salt: str) -> dict:
    """bleed_through records the other side of the sheet by its problem id (``reverse_ref``): renamed too."""
    params = record.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("reverse_ref"), str):
        return record
    digest = hashlib.sha256(f"{salt}\x00reverse\x00{params['reverse_ref']}".encode()).hexdigest()[:12]
    return {**record, "params": {**params, "reverse_ref": f"reverse-{digest}"}}


def _link(src: Path, dest: Path) -> None:
    """``dest`` as a hard link to ``src`` (no copy of the bytes), or a copy where links are not possible."""
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def write_key(path: Path, view: View) -> None:
    """The key (anonymous id, our id, item or base) as CSV at ``path``, written atomically."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(KEY_HEADER)
    for ours, opaque in sorted(view.items.items(), key=lambda kv: kv[1]):
        writer.writerow([opaque, ours, "item"])
    for ours, opaque in sorted(view.bases.items(), key=lambda kv: kv[1]):
        writer.writerow([opaque, ours, "base"])
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    os.replace(tmp, path)


def read_key(path: str | Path) -> dict[str, str]:
    """An anonymized export's key: anonymous id -> our id (items and bases)."""
    with Path(path).open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        if next(reader, None) != KEY_HEADER:
            raise UnsafePathError(f"{path} is not the key of an anonymized mathstress export (header differs)")
        return {row[0]: row[1] for row in reader if row}
