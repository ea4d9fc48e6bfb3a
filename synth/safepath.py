"""Paths derived from manifests, and ownership of the folders mathstress writes: prove first, then touch.

Manifest values are data, not paths we trust: an id must have the shape the pipeline gives ids
(``check_id``), and a file path read from a row must resolve, symlinks followed, to a place inside
its folder (``inside``). A folder mathstress writes carries a marker (``.mathstress.json``) saying
what kind of output it holds; a folder is replaced or cleared only when it is new, empty, marked
with the same kind, or exactly the layout an earlier version wrote (``prepare_output_dir``), and
even then only the entries mathstress writes there are deleted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from synth import __version__
from synth.errors import ConfigError, UnsafePathError
from synth.yamlsafe import read_yaml_file

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock: staging folders there are never judged left over
    fcntl = None  # type: ignore[assignment]

MARKER = ".mathstress.json"
STAGING_PREFIX = ".mathstress-staging-"  # a folder being written; renamed into place when complete
STAGING_LOCK = ".mathstress-staging.lock"  # held (flock) by the process writing a staging folder

# The shapes synth.pipeline gives ids: base_id is f"{config.name}-{index:06d}" (RunConfig.name's own
# pattern, then the zero-padded index); variants add -e<j> (error) or -s<j> (superficial control), and a
# photo of the clean control or of a variant adds -d<n> (one degradation) or -p<k> (a capture profile):
# tiny-000003-d4, tiny-000003-e1-d4. None of these can hold a separator or be "..".
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
BASE_ID_PATTERN = re.compile(rf"{_NAME}-[0-9]{{6,9}}")
ID_PATTERN = re.compile(rf"({BASE_ID_PATTERN.pattern})(?:-[es][0-9]{{1,6}})?(?:-[dp][0-9]{{1,6}})?")
PREVIEW_CHARS = 48


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """``value`` quoted on one line and cut to ``limit`` characters, for error messages."""
    text = value if isinstance(value, str) else repr(value)
    cut = text if len(text) <= limit else text[:limit] + "..."
    return repr(cut)


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def check_id(value: Any, *, field: str = "id", where: str = "", base: bool = False) -> str:
    """``value`` when it is an item id as the pipeline builds them (a base id with ``base=True``).

    >>> check_id("quickstart-000012-d3")
    'quickstart-000012-d3'
    """
    pattern = BASE_ID_PATTERN if base else ID_PATTERN
    if not isinstance(value, str) or not pattern.fullmatch(value):
        shape = "tiny-000003" if base else "tiny-000003, tiny-000003-e1, -s2, -d4, -p1, -e1-d4 or -s2-p1"
        raise UnsafePathError(f"{_at(where)}{field} {preview(value)} is not a mathstress "
                              f"{'base ' if base else ''}id (like {shape}); the manifest was edited or is not "
                              "ours: regenerate the run")
    return value


def check_row_ids(row: dict[str, Any], *, where: str = "", derived: bool = True) -> None:
    """A manifest row's ``id`` and ``base_id`` have the pipeline's shapes, and the id derives from the base
    (``derived=False``: an anonymized view's opaque ids, ``item-000123`` of ``problem-000017``, which do not)."""
    item = check_id(row.get("id"), field="id", where=where, base=not derived)
    bid = check_id(row.get("base_id"), field="base_id", where=where, base=True)
    if derived and item != bid and not item.startswith(bid + "-"):
        raise UnsafePathError(f"{_at(where)}id {preview(item)} does not belong to base_id {preview(bid)}; "
                              "the manifest was edited or is not ours: regenerate the run")


def inside(root: str | Path, relative: Any, *, field: str = "path", where: str = "") -> Path:
    """``root / relative`` resolved (symlinks followed), proven to lie inside ``root``.

    Absolute paths, drive letters, NUL bytes and anything that resolves to ``root`` itself or
    outside it are refused with an ``UnsafePathError`` naming ``field`` and a preview of the value.

    >>> inside("/data/run", "images/x.png")  # doctest: +SKIP
    PosixPath('/data/run/images/x.png')
    """
    def refuse(why: str) -> UnsafePathError:
        return UnsafePathError(f"{_at(where)}{field} {preview(relative)} {why}; paths in a manifest must stay "
                               f"inside {root}: regenerate the run")

    if isinstance(relative, os.PathLike):
        relative = os.fspath(relative)
    if not isinstance(relative, str) or not relative.strip():
        raise refuse("is not a relative path")
    if "\x00" in relative:
        raise refuse("holds a NUL byte")
    if PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute() \
            or PureWindowsPath(relative).drive or relative.startswith(("\\", "~")):
        raise refuse("is absolute")
    base = Path(root).resolve()
    target = (base / relative).resolve()
    if target == base or not target.is_relative_to(base):
        raise refuse("points outside the folder")
    return target


# -- ownership markers ----------------------------------------------------------------------------


def read_marker(folder: str | Path) -> dict[str, Any] | None:
    """The marker mathstress left in ``folder`` (``{"kind", "version", ...}``), or None if there is none
    or it is not one of ours (unreadable, not JSON, no kind)."""
    path = Path(folder) / MARKER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        return None
    return data


def write_marker(folder: str | Path, kind: str, *, entries: Iterable[str] | None = None) -> Path:
    """Mark ``folder`` as mathstress output of ``kind`` ("run", "export:<format>"); atomic, same bytes each time.

    ``entries`` lists the top-level names written there when they vary (exports); a run's are fixed.
    """
    folder = Path(folder)
    data: dict[str, Any] = {"kind": kind, "version": __version__}
    if entries is not None:
        data["entries"] = sorted(entries)
    tmp = folder / f"{MARKER}.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MARKER)
    return folder / MARKER


@dataclass(frozen=True)
class Layout:
    """The top-level names mathstress writes in one kind of folder, and how an unmarked one is recognised.

    An unmarked folder (written before markers existed) is ours when it holds one of ``proof`` and
    nothing outside ``entries`` and ``kept``; ``entries`` are deleted on overwrite, ``kept`` stay.
    """

    entries: frozenset[str]
    proof: frozenset[str] = frozenset()
    kept: frozenset[str] = frozenset()


def layout(entries: Iterable[str], proof: Iterable[str] = (), kept: Iterable[str] = ()) -> Layout:
    return Layout(frozenset(entries), frozenset(proof), frozenset(kept))


# A run folder (DESIGN §4; checksums.jsonl and the lock are synth.rundir's). An `hf` export inside it
# goes with the run; evaluations and contact sheets are kept (an evaluation's cache may hold paid
# answers), and so is the lock, which the process clearing the folder holds.
RUN_LAYOUT = layout(
    entries=("manifest.jsonl", "stats.json", "config.yaml", "checksums.jsonl", "images", "shards", "hf",
             ".manifest.jsonl.tmp", ".stats.json.tmp", ".config.yaml.tmp", ".checksums.jsonl.tmp", f"{MARKER}.tmp"),
    proof=("config.yaml", "manifest.jsonl"), kept=("show", "eval", ".mathstress.lock"))
HF_LAYOUT = layout(entries=("dataset", "data", "README.md"), proof=("dataset",))
LAYOUTS: dict[str, Layout] = {"run": RUN_LAYOUT, "export:hf": HF_LAYOUT}
# Files an export of an earlier version left at its top (a form's summary.json, ProcessBench's JSONL, hf's dataset).
_EARLIER_EXPORT = ("summary.json", "processbench.jsonl", "dataset")


def _is_staging(name: str) -> bool:
    return name.startswith(STAGING_PREFIX)


def _earlier_export(path: Path) -> bool:
    """An unmarked folder a run holds that an earlier `mathstress export` wrote (kept, not deleted)."""
    return path.is_dir() and not path.is_symlink() and any((path / n).exists() for n in _EARLIER_EXPORT)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _run_files(folder: Path) -> bool:
    """Whether ``folder``'s manifest.jsonl starts with a manifest row and its config.yaml is a run config (a name
    and a seed): a user's folder of photos beside a ``config.yaml`` of their own is not a run, whatever its names."""
    try:
        with (folder / "manifest.jsonl").open(encoding="utf-8") as fh:
            row = json.loads(next((line for line in fh if line.strip()), ""))
        config = read_yaml_file(folder / "config.yaml")
    except (OSError, ValueError, ConfigError):
        return False
    return isinstance(row, dict) and {"id", "base_id", "image"} <= row.keys() and isinstance(config, dict) \
        and isinstance(config.get("name"), str) and "seed" in config


def _legacy(folder: Path, kind: str, shape: Layout) -> bool:
    """Whether unmarked ``folder`` holds exactly what an earlier mathstress wrote for ``kind`` (a run: all its
    proof files, and they read as a run's; ``_run_files``)."""
    names = _names(folder)
    if not shape.proof or not any(n in shape.proof for n in names):
        return False
    if kind == "run" and not (all(n in names for n in shape.proof) and _run_files(folder)):
        return False
    for name in names:
        if name in shape.entries or name in shape.kept or _is_staging(name):
            continue
        child = folder / name
        if kind == "run" and (_marked_export(child) or _earlier_export(child)):
            continue
        return False
    return True


def _marked_export(path: Path) -> bool:
    if not path.is_dir() or path.is_symlink():
        return False
    marker = read_marker(path)
    return marker is not None and marker["kind"].startswith("export:")


def folder_kind(folder: str | Path) -> str | None:
    """What mathstress output ``folder`` holds ("run", "export:<format>"), or None if it is not ours.

    A marker decides; an unmarked folder is a run when it holds exactly a run's files.
    """
    folder = Path(folder)
    try:
        if not folder.is_dir():
            return None
        marker = read_marker(folder)
        if marker is not None:
            return str(marker["kind"])
        return "run" if _legacy(folder, "run", RUN_LAYOUT) else None
    except OSError:  # a folder this user may not list is not one mathstress wrote for them
        return None


def _remove(path: Path) -> None:
    # A symlink is removed as a link: what it points to is never ours.
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)


# What a run writes in images/: <name>-<index> with its variant and photo suffixes, as PNG or JPEG; staging folders.
_RUN_IMAGE = re.compile(rf"(?:{ID_PATTERN.pattern})\.(?:png|jpg)")
_DESKTOP_FILES = {".DS_Store", "Thumbs.db", "desktop.ini"}  # a file browser's, not the user's work


def _foreign_images(images: Path) -> list[str]:
    """Names in a run's images/ that the run did not write (a user's own scan put there)."""
    if not images.is_dir() or images.is_symlink():
        return []
    return sorted(n for n in _names(images) if not (_RUN_IMAGE.fullmatch(n) or _is_staging(n) or n in _DESKTOP_FILES))


def _clear(folder: Path, kind: str, shape: Layout, marker: dict[str, Any] | None) -> None:
    """Delete what mathstress wrote in ``folder`` (its marker's entries, else the layout's); keep the rest.

    A run's images/ goes whole, so a file in it the run did not write is refused first (--overwrite deleted a
    user's scan kept there)."""
    if kind == "run":
        foreign = _foreign_images(folder / "images")
        if foreign:
            named = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
            raise UnsafePathError(f"{folder / 'images'} holds {named}, which the run did not write; --overwrite "
                                  "replaces that folder whole: move them out first")
    listed = marker.get("entries") if marker is not None else None
    ours = set(listed) if isinstance(listed, list) else set(shape.entries)
    for name in _names(folder):
        child = folder / name
        if name == "hf" and kind == "run" and not child.is_symlink() and child.is_dir():
            # An hf export inside a run is cleared like any export: only if it is ours, only what it wrote.
            sub = read_marker(child)
            hf_ours = sub["kind"] == "export:hf" if sub is not None else _legacy(child, "export:hf", HF_LAYOUT)
            if hf_ours:
                _clear(child, "export:hf", HF_LAYOUT, sub)
                _rmdir_if_empty(child)
        elif name in ours or _is_staging(name):
            _remove(child)
        elif kind == "run" and _marked_export(child):
            sub = read_marker(child)
            _clear(child, str(sub["kind"]) if sub else "export", Layout(frozenset()), sub)
            _rmdir_if_empty(child)
    (folder / MARKER).unlink(missing_ok=True)


def _rmdir_if_empty(path: Path) -> None:
    if path.is_dir() and not any(path.iterdir()):
        path.rmdir()


def _check_writable_parent(path: Path) -> None:
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"output path {str(parent)!r} is a file, so {str(path)!r} cannot be a folder; "
                          "choose another --out")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"output folder {str(parent)!r} is not writable; choose another --out")


# A run's folders that mathstress replaces whole: images/ on --overwrite, shards/ when the run is published or resumed.
RUN_INTERNALS = ("images", "shards")


def check_not_in_run_internals(path: Path) -> None:
    """Refuse an output folder inside a run's ``images/`` or ``shards/``: a later --resume or --overwrite of the
    run deletes them whole, with whatever was written there (an export, an evaluation's paid answers)."""
    if str(path).startswith("~"):
        # '~' reaches us only when no shell expanded it (quoted): a folder named "~" here, whose `rm -rf ~` by hand
        # would take the home folder
        raise UnsafePathError(f"the output folder {str(path)!r} starts with '~', which was not expanded to your home "
                              "folder; write the path out (e.g. $HOME/... on the command line, or a full path in a "
                              "config's output.root)")
    resolved = path.resolve()
    for at, inner in enumerate(resolved.parts):
        # Only the folder directly above an images/ or shards/ part is asked (every folder up to / may not be
        # listable: a 0711 home on a shared machine).
        parent = Path(*resolved.parts[:at])
        if at == 0 or inner not in RUN_INTERNALS or folder_kind(parent) != "run":
            continue
        raise UnsafePathError(f"{path} is inside the {inner}/ folder of the run {parent}, which mathstress "
                              f"replaces whole (generate --resume or --overwrite); choose an --out outside it, "
                              f"e.g. {parent / ('export' if inner == 'images' else 'out')}")


def prepare_output_dir(path: str | Path, kind: str, *, overwrite: bool = False,
                       shape: Layout | None = None) -> Path:
    """Check that ``path`` may receive mathstress output of ``kind``; with ``overwrite``, clear what we wrote.

    ``path`` may be missing, an empty folder, a folder marked with the same ``kind``, or an unmarked
    folder holding exactly what an earlier version wrote (``shape``, by default ``LAYOUTS[kind]``).
    Anything else (a file, a user's folder, another kind of output) is refused with an
    ``UnsafePathError`` (a ``ConfigError`` for a file) that names the folder and the fix. With
    ``overwrite`` only the entries mathstress writes are deleted; a user's own files stay. Returns ``path``.
    """
    path = Path(path)
    shape = shape if shape is not None else LAYOUTS.get(kind, Layout(frozenset()))
    check_not_in_run_internals(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"output path {str(path)!r} is a file, not a folder; choose another --out")
    if not path.exists():
        _check_writable_parent(path)
        return path
    if not any(path.iterdir()):
        _check_writable_parent(path)
        return path
    fix = "choose another --out or delete it yourself"
    marker = read_marker(path)
    if marker is not None and marker["kind"] != kind:
        raise UnsafePathError(f"{path} holds mathstress output of another kind ({marker['kind']}, not {kind}); "
                              f"{fix}")
    if marker is None and not _legacy(path, kind, shape):
        raise UnsafePathError(f"{path} is not empty and was not written by mathstress (no {MARKER}, and it holds "
                              f"files mathstress does not write there); {fix}")
    _check_writable_parent(path)
    if overwrite:
        _clear(path, kind, shape, marker)
    return path


@contextmanager
def staging(dest: str | Path) -> Iterator[Path]:
    """A new folder beside ``dest`` to write into, removed on leaving unless ``publish_dir`` moved it into place.

    While it is written the folder holds ``STAGING_LOCK`` under an flock; the kernel drops the lock when this
    process dies, however it dies (a C library's abort on a full disk skips every ``finally``), so a later export
    beside ``dest`` knows the folder is left over (``clear_stale_staging``) and not another export still writing.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=dest.parent))
    fd = None
    try:
        # mkdtemp makes the folder private (0700); published, it is an ordinary output folder, as the user's umask
        # makes folders (an export was unreadable to everyone else on a shared machine).
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(folder, 0o777 & ~mask)
        if fcntl is not None:
            fd = os.open(folder / STAGING_LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield folder
    finally:
        if fd is not None:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)  # gone already when it was published (renamed into place)


def clear_stale_staging(parent: str | Path) -> list[tuple[str, int]]:
    """Remove the staging folders in ``parent`` that an export killed before it could clean up left behind; return
    each one's name and size in bytes.

    Only folders named ``STAGING_PREFIX*`` that hold this version's ``STAGING_LOCK`` with nobody holding its lock
    are removed: a live export's folder is locked, and a folder without the lock file (being set up, being
    published, or left by an earlier version) is not ours to judge. Where flock is missing nothing is removed."""
    removed: list[tuple[str, int]] = []
    parent = Path(parent)
    if fcntl is None or not parent.is_dir():
        return removed
    for folder in sorted(parent.iterdir()):
        if not _is_staging(folder.name) or folder.is_symlink() or not folder.is_dir():
            continue
        try:
            fd = os.open(folder / STAGING_LOCK, os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        try:
            size = tree_size(folder)
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                removed.append((folder.name, size))
        finally:
            os.close(fd)
    return removed


def unowned_staging(parent: str | Path) -> list[tuple[str, int]]:
    """The staging folders in ``parent`` without this version's lock file (an earlier version's, left when its
    export was killed; or one being set up or published this instant), with their sizes in bytes: not removed
    (``clear_stale_staging``), but worth naming to a user short of space."""
    parent = Path(parent)
    if not parent.is_dir():
        return []
    return [(folder.name, tree_size(folder)) for folder in sorted(parent.iterdir())
            if _is_staging(folder.name) and folder.is_dir() and not folder.is_symlink()
            and not (folder / STAGING_LOCK).exists()]


def tree_size(folder: Path) -> int:
    """The bytes of the files under ``folder`` (links counted as links, never followed)."""
    return sum(os.lstat(os.path.join(top, name)).st_size for top, _, names in os.walk(folder) for name in names)


def spelled_out(dest: str | Path) -> Path:
    """``dest`` with ``.`` and ``..`` resolved away when it ends in one (``--out .``), so the folder beside it is beside
    it: ``Path(".").parent`` is ``.`` itself, and a staging folder made there sat inside the export's destination.
    A caller spells its destination out once, before ``staging``, ``publish_dir`` and the checks beside it."""
    dest = Path(dest)
    return Path(os.path.abspath(dest)) if dest.name in ("", "..") else dest


def _holds_cwd(folder: Path) -> bool:
    try:
        return Path.cwd().resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def publish_dir(staging: str | Path, dest: str | Path, kind: str, *, shape: Layout | None = None) -> Path:
    """Mark a finished ``staging`` folder and put it at ``dest``, replacing only what mathstress wrote there.

    When ``dest`` is missing or (once cleared) empty the staging folder is renamed into place in
    one step; otherwise a user's files are left and our entries moved in beside them.
    """
    staging, dest = Path(staging), Path(dest)
    # The lock file goes first: a folder without it is never judged left over, and it is not part of the output.
    (staging / STAGING_LOCK).unlink(missing_ok=True)
    entries = [n for n in _names(staging) if n != MARKER]
    write_marker(staging, kind, entries=entries)
    prepare_output_dir(dest, kind, overwrite=True, shape=shape)
    # An empty folder is replaced in one rename, unless it is where the user stands (``--out .``): replaced, their
    # shell would be left in a deleted folder.
    if dest.exists() and not dest.is_symlink() and not any(dest.iterdir()) and not _holds_cwd(dest):
        dest.rmdir()
    if not dest.exists():
        staging.rename(dest)
        return dest
    clash = [n for n in entries if (dest / n).exists() or (dest / n).is_symlink()]
    if clash:
        raise UnsafePathError(f"{dest / clash[0]} is in the way and was not written by mathstress; "
                              "choose another --out or move it yourself")
    for name in [*entries, MARKER]:
        os.replace(staging / name, dest / name)
    staging.rmdir()
    return dest
