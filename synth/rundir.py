"""The run folder on disk: its lock, atomic shard commits with sha256 checksums, and verification on resume.

Every write to a run folder goes through ``RunDir``. A shard is committed as images first, then
its rows, then its record (``shards/NNNNN.stats.json``: the shard's stats, the sha256 of its rows
and of every image, sealed by a checksum of its own); the record is renamed into place last, so
a shard is committed exactly when its record exists. ``publish`` joins the shards into
``manifest.jsonl`` and keeps their records in ``checksums.jsonl`` (the run's state: one record per
shard without its stage timings, then the manifest's own checksum; byte-identical for the same
config, like the manifest), so a finished run can be verified too. ``resume``
trusts nothing it cannot verify: a shard whose record, rows or images do not match is redone
(items are a function of (seed, index), so it comes back byte for byte), and a cut or edited
manifest is rebuilt from the shards that verify. ``locked`` holds an flock on ``.mathstress.lock``
for the whole run, so two processes never write one folder; the kernel drops the lock when its
holder dies, so a killed run leaves no stale lock.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import socket
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from synth.errors import ConfigError, LockedError, ResumableError, RunError
from synth.safepath import prepare_output_dir, read_marker, write_marker
from synth.yamlsafe import read_yaml_file

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; runs there are not locked
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".mathstress.lock"
STATE_NAME = "checksums.jsonl"
MANIFEST_NAME = "manifest.jsonl"
STAGING_PREFIX = ".tmp-"  # images/.tmp-NNNNN: a shard's images until it is committed
FORMAT = 1
RESUME_HINT = "re-run with --resume to continue"
_CHUNK = 1 << 20
_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


# ------------------------------------------------------------------------- writing


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``; every file of a run folder is written here or streamed by ``publish``."""
    with open(path, "wb") as fh:
        fh.write(data)


def stopped(exc: OSError, path: Path | str) -> ResumableError:
    """The one-line error for a write that failed part-way (disk full, folder made read-only...)."""
    why = f"the disk is full ({exc.strerror})" if exc.errno in _DISK_FULL else (exc.strerror or str(exc))
    return ResumableError(f"could not write {path}: {why}; the shards committed so far are kept and will be "
                          f"verified: fix that, then {RESUME_HINT}")


@contextmanager
def writing(path: Path | str) -> Iterator[None]:
    """Turn an OSError raised while writing ``path`` into a ResumableError (exit 3) that names it."""
    try:
        yield
    except OSError as exc:
        raise stopped(exc, path) from exc


def stage_image(stage: Path, name: str, data: bytes) -> None:
    """Write one encoded image into a shard's staging folder (``RunDir.staging``)."""
    with writing(stage / name):
        write_file(stage / name, data)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _sealed(data: dict[str, Any]) -> str:
    """``data`` as one JSON line carrying a checksum of itself (a truncated or edited record is caught)."""
    return _dumps({**data, "seal": sha256(_dumps(data).encode())})


def _unseal(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("seal"), str):
        return None
    seal = data.pop("seal")
    return data if sha256(_dumps(data).encode()) == seal else None


# ------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ShardOutput:
    """Everything one shard produced: manifest rows, image names and their sha256, stage stats, image bytes.

    Producing a shard (config and shard number in, bytes out) is separate from committing it to
    the run folder, so a remote worker can produce and the client commit; either way the bytes on
    disk are the same. ``images`` holds the encoded images that were not already staged on disk:
    the local executor streams each image to the shard's staging folder as soon as it is encoded
    (memory stays flat however large the shard), a Dask worker returns them with the rows.
    ``digests[i]`` is the sha256 of image ``names[i]``, taken from the bytes when they were encoded.
    """

    shard: int
    rows: tuple[str, ...]
    names: tuple[str, ...]
    digests: tuple[str, ...]
    images: tuple[tuple[str, bytes], ...]
    stats: dict[str, Any]


@dataclass(frozen=True)
class ShardRecord:
    """What a committed shard must be: its rows' checksum, size and line count, its images' checksums."""

    shard: int
    rows_sha256: str
    rows_bytes: int
    lines: int
    images: dict[str, str]
    stats: dict[str, Any] = field(compare=False)

    def line(self, *, timings: bool = True) -> str:
        """The record as one sealed JSON line; without ``timings`` it is the same bytes for the same config."""
        stats = self.stats if timings else {k: v for k, v in self.stats.items() if k != "seconds"}
        return _sealed({"format": FORMAT, "shard": self.shard, "stats": stats, "images": self.images,
                        "rows": {"sha256": self.rows_sha256, "bytes": self.rows_bytes, "lines": self.lines}})

    @classmethod
    def parse(cls, text: str, shard: int) -> ShardRecord | str:
        """The record in ``text``, or why it cannot be trusted."""
        data = _unseal(text)
        if data is None:
            try:
                old = json.loads(text)
            except ValueError:
                return "its record is unreadable (cut short or not JSON)"
            if isinstance(old, dict) and "seal" not in old:
                return "it has no checksums (written by an earlier mathstress)"
            return "its record does not match its own checksum (edited or damaged)"
        rows, images = data.get("rows"), data.get("images")
        ok = (data.get("format") == FORMAT and data.get("shard") == shard and isinstance(data.get("stats"), dict)
              and isinstance(rows, dict) and isinstance(rows.get("sha256"), str)
              and isinstance(rows.get("bytes"), int) and isinstance(rows.get("lines"), int)
              and isinstance(images, dict) and all(isinstance(v, str) and _plain(k) for k, v in images.items()))
        if not ok:
            return f"its record is not a mathstress format-{FORMAT} record for shard {shard}"
        return cls(shard, rows["sha256"], rows["bytes"], rows["lines"], dict(images), data["stats"])


def repair_command(run_dir: str | Path) -> str:
    """The command that redoes a run's damaged shards, for messages: `generate` with its own config.yaml, or, for a
    `mathstress degrade` output (its config.yaml holds ``degrade_external``), `degrade` of the same input."""
    run_dir = Path(run_dir)
    try:
        config = read_yaml_file(run_dir / "config.yaml")
    except ConfigError:
        config = None
    if isinstance(config, dict) and "degrade_external" in config:
        source = config.get("input") if isinstance(config.get("input"), dict) else {}
        where = source.get("path", "INPUT") if isinstance(source, dict) else "INPUT"
        return f"`mathstress degrade {where} --out {run_dir} --resume` with the options it was made with"
    return f"`mathstress generate {run_dir / 'config.yaml'} --out {run_dir} --resume`"


def manifest_seal(run_dir: str | Path) -> dict[str, Any] | None:
    """What a finished run's checksums.jsonl recorded of its manifest (``sha256``, ``bytes``, ``lines``), or None
    when it has no such record that verifies (an earlier version's run, another tool's folder)."""
    try:
        with open(Path(run_dir) / STATE_NAME, encoding="utf-8") as fh:
            last = ""
            for line in fh:
                last = line
    except (OSError, UnicodeDecodeError):
        return None
    tail = _unseal(last)
    return tail["manifest"] if isinstance(tail, dict) and isinstance(tail.get("manifest"), dict) else None


def image_digests(run_dir: str | Path) -> dict[str, str]:
    """The sha256 of every image a finished run's ``checksums.jsonl`` records, by name in ``images/``; empty when
    there is no such file or it cannot be read (an earlier version's run, another tool's folder): nothing to hold
    the images to. Records that do not verify are left out."""
    digests: dict[str, str] = {}
    try:
        with open(Path(run_dir) / STATE_NAME, encoding="utf-8") as fh:
            for shard, line in enumerate(fh):
                record = ShardRecord.parse(line, shard)
                if isinstance(record, ShardRecord):
                    digests.update(record.images)
    except (OSError, UnicodeDecodeError):
        return {}
    return digests


def damaged_images(run_dir: str | Path, names: Iterable[str]) -> list[str]:
    """Which of ``names`` (files in the run's ``images/``) no longer match the sha256 their shard recorded, or are
    missing; names the checksums do not cover are not judged."""
    digests, images = image_digests(run_dir), Path(run_dir) / "images"
    bad = []
    for name in dict.fromkeys(names):
        if name in digests:
            try:
                if file_sha256(images / name) != digests[name]:
                    bad.append(name)
            except OSError:
                bad.append(name)
    return bad


def _plain(name: object) -> bool:
    """An image name as the pipeline writes them: one plain file name, never a path."""
    return isinstance(name, str) and bool(name) and name == Path(name).name and not name.startswith(".")


@dataclass(frozen=True)
class ResumePlan:
    """The shards a run still has to make, and the ones redone because they did not verify (with why)."""

    todo: tuple[int, ...]
    redone: dict[int, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def check_same_versions(run_dir: Path, plan: ResumePlan, n_shards: int, now: dict[str, str]) -> None:
    """Refuse to resume a run whose committed shards another version made (mathstress or a library: the
    rows' ``versions``): its manifest would mix rows of two versions, with nothing to tell them apart."""
    pending = set(plan.todo)
    if not pending:
        return  # finished: nothing is made again, nothing mixed
    kept = next((s for s in range(n_shards) if s not in pending), None)
    if kept is None:
        return
    source = RunDir(run_dir)._paths(kept)[0]
    try:
        with open(source if source.is_file() else run_dir / "manifest.jsonl", "rb") as fh:
            # The shard's last row: every row of a generate run is made by it, and a degrade shard ends on a photo
            # it made (its first row can be the input run's clean page, with the input's versions).
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - (1 << 20)))
            made = json.loads(fh.read().splitlines()[-1]).get("versions")
    except (OSError, ValueError, AttributeError, IndexError):
        return  # no row to tell by: the shard checks have already redone what does not verify
    if isinstance(made, dict) and made != now:
        differ = ", ".join(f"{k} {made.get(k)} -> {now.get(k)}" for k in sorted(set(made) | set(now))
                           if made.get(k) != now.get(k))
        raise RunError(f"{run_dir}'s committed shards were made by other versions ({differ}); resuming would mix "
                       "two versions in one manifest: use --overwrite to make it again with these, or resume "
                       "with the versions it was started with")


# ------------------------------------------------------------------------- the folder


class RunDir:
    """One run folder: ``manifest.jsonl``, ``images/``, ``shards/`` while running, ``checksums.jsonl`` when done."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.images = self.path / "images"
        self.shards = self.path / "shards"
        self.manifest = self.path / MANIFEST_NAME
        self.state = self.path / STATE_NAME

    # -- lock

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run folder's lock (creating the folder if needed) until the block ends.

        A second process gets a LockedError at once, naming the holder's pid, host and start time.
        A folder this call created is removed again if the block fails and leaves it empty.
        """
        created = not self.path.exists()
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"output path {str(self.path)!r} is a file, not a folder; choose another --out")
        if self.path.is_symlink() and not self.path.exists():
            raise ConfigError(f"output path {str(self.path)!r} is a symlink to {os.readlink(self.path)!r}, which does "
                              "not exist; choose another --out")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the run folder {str(self.path)!r} ({exc.strerror}); "
                              "choose another --out") from None
        fd = _acquire(self.path / LOCK_NAME, self.path)
        ok = False
        try:
            yield
            ok = True
        finally:
            _release(fd, self.path / LOCK_NAME)
            if created and not ok:
                try:
                    self.path.rmdir()  # only when empty: nothing of the user's can be in a folder we just made
                except OSError:
                    pass

    # -- commit

    def staging(self, shard: int, *, fresh: bool) -> Path:
        """The folder a shard's images are written to before its commit moves them into ``images/``."""
        tmp = self.images / f"{STAGING_PREFIX}{shard:05d}"
        if not self.path.is_dir():  # a worker made the folder again, with a shard's images in it, at the old name
            raise RunError(f"the run folder {self.path} is gone (deleted or moved while the run was being written); "
                           "nothing more is written there: start the run again")
        with writing(tmp):
            if fresh:
                shutil.rmtree(tmp, ignore_errors=True)
            self.images.mkdir(exist_ok=True)
            tmp.mkdir(exist_ok=True)
        return tmp

    def commit(self, output: ShardOutput) -> ShardRecord:
        """Write a produced shard: images first, then its rows, then its record (the commit point).

        Committing the same shard twice (a retried task) rewrites identical bytes.
        """
        stage = self.staging(output.shard, fresh=False)
        for name, data in output.images:
            stage_image(stage, name, data)
        with writing(self.images):
            for name in output.names:
                os.replace(stage / name, self.images / name)
            shutil.rmtree(stage, ignore_errors=True)
        rows = "".join(r + "\n" for r in output.rows).encode("utf-8")
        record = ShardRecord(output.shard, sha256(rows), len(rows), len(output.rows),
                             dict(zip(output.names, output.digests)), output.stats)
        self._commit_record(record, rows)
        return record

    def _commit_record(self, record: ShardRecord, rows: bytes) -> None:
        part, tmp, rec, rec_tmp = self._paths(record.shard)
        with writing(part):
            write_file(tmp, rows)
            os.replace(tmp, part)
        with writing(rec):
            write_file(rec_tmp, (record.line() + "\n").encode("utf-8"))
            os.replace(rec_tmp, rec)

    def _paths(self, shard: int) -> tuple[Path, Path, Path, Path]:
        stem = f"{shard:05d}"
        return (self.shards / f"{stem}.jsonl", self.shards / f".{stem}.jsonl.tmp",
                self.shards / f"{stem}.stats.json", self.shards / f".{stem}.stats.json.tmp")

    # -- verification

    def record(self, shard: int) -> ShardRecord | str | None:
        """Shard ``shard``'s record; None when it was never committed; why not, when it cannot be trusted."""
        rec = self._paths(shard)[2]
        try:
            text = rec.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            return "its record cannot be read"
        return ShardRecord.parse(text, shard)

    def check(self, shard: int) -> ShardRecord | str | None:
        """Shard ``shard``'s record when its rows and every image match it; None if never committed; else why."""
        record = self.record(shard)
        if not isinstance(record, ShardRecord):
            return record
        part = self._paths(shard)[0]
        try:
            rows_ok = part.stat().st_size == record.rows_bytes and file_sha256(part) == record.rows_sha256
        except OSError:
            return f"shards/{part.name} is missing"
        if not rows_ok:
            return f"shards/{part.name} does not match its checksum (cut short or edited)"
        return self._check_images(record)

    def _check_images(self, record: ShardRecord) -> ShardRecord | str:
        for name, digest in record.images.items():
            path = self.images / name
            try:
                if file_sha256(path) != digest:
                    return f"images/{name} does not match its checksum (damaged or replaced)"
            except OSError:
                return f"images/{name} is missing"
        return record

    def resume(self, n_shards: int) -> ResumePlan:
        """What a resumed run must still make: shards never committed, and those that fail verification.

        A finished run is verified against ``checksums.jsonl``; when its manifest or an image does
        not match, the shards that do are put back into ``shards/`` and the rest are redone, so the
        manifest is rebuilt. A run folder that cannot be verified at all is redone whole.
        """
        notes: list[str] = []
        for name in (self.manifest, self.path / "checksums.jsonl"):
            if name.exists() and not name.is_file():
                raise RunError(f"{name} is a folder where the run keeps a file; move it away, or use --overwrite to "
                               "make the run again")
        if self.manifest.exists():
            finished, redone, note = self._reopen(n_shards)
            if finished:
                return ResumePlan(())
            notes.append(note)
        else:
            with writing(self.state):
                self.state.unlink(missing_ok=True)  # a finish that never completed: rebuilt at the next finish
            redone = {}
        self.shards.mkdir(exist_ok=True)
        todo = []
        for s in range(n_shards):
            if s in redone:
                todo.append(s)
                continue
            outcome = self.check(s)
            if isinstance(outcome, ShardRecord):
                continue
            todo.append(s)
            if outcome is not None:
                redone[s] = outcome
        return ResumePlan(tuple(todo), dict(sorted(redone.items())), tuple(notes))

    def _reopen(self, n_shards: int) -> tuple[bool, dict[int, str], str]:
        """Verify a finished run; when anything fails, turn it back into an unfinished one.

        Returns (whether everything verified, {shard: why it is redone}, a note for the user or "").
        """
        records, manifest_sha, why = self._read_state(n_shards)
        redone: dict[int, str] = {}
        whole = hashlib.sha256()
        with open(self.manifest, "rb") as fh:
            for record in records:
                data = fh.read(record.rows_bytes)
                whole.update(data)
                if len(data) != record.rows_bytes or sha256(data) != record.rows_sha256:
                    redone[record.shard] = "its rows in manifest.jsonl are cut short or changed"
                    continue
                outcome = self._check_images(record)
                if isinstance(outcome, str):
                    redone[record.shard] = outcome
            trailing = bool(fh.read(1))
        for s in range(len(records), n_shards):
            redone[s] = why or "checksums.jsonl has no record of it"
        manifest_ok = why is None and not trailing and whole.hexdigest() == manifest_sha
        if manifest_ok and not redone:
            with writing(self.shards):
                shutil.rmtree(self.shards, ignore_errors=True)  # left by a finish killed after its last rename
            return True, {}, ""
        # Unfinish: put every verified shard back into shards/, then drop the manifest and its state.
        self.shards.mkdir(exist_ok=True)
        with open(self.manifest, "rb") as fh:
            for record in records:
                data = fh.read(record.rows_bytes)
                if record.shard not in redone:
                    self._commit_record(record, data)
        with writing(self.manifest):
            self.manifest.unlink()
            self.state.unlink(missing_ok=True)
        if why is not None:
            note = f"manifest.jsonl could not be verified: {why}; it is rebuilt"
        elif not manifest_ok:
            kept = sum(r.shard not in redone for r in records)
            note = ("manifest.jsonl did not match its checksum (cut short or edited); " +
                    (f"it is rebuilt from the {kept} verified shard{'s' * (kept != 1)}" if kept else
                     "no shard verified, so every shard is made again"))
        else:
            note = "manifest.jsonl matched its checksum; it is rebuilt with the redone shards"
        return False, redone, note

    def _read_state(self, n_shards: int) -> tuple[list[ShardRecord], str, str | None]:
        """A finished run's records in shard order, its manifest's sha256, and why records are missing (or None)."""
        records: list[ShardRecord] = []
        try:
            fh = open(self.state, encoding="utf-8")
        except FileNotFoundError:
            return [], "", f"there is no {STATE_NAME} (written by an earlier mathstress, or deleted)"
        except OSError as exc:
            return [], "", f"{STATE_NAME} cannot be read ({exc.strerror})"
        with fh:
            try:
                for s in range(n_shards):
                    record = ShardRecord.parse(fh.readline(), s)
                    if isinstance(record, str):
                        return records, "", f"{STATE_NAME} is cut short or damaged at shard {s}"
                    records.append(record)
                tail = _unseal(fh.readline())
            except (OSError, UnicodeDecodeError):
                return records, "", f"{STATE_NAME} cannot be read"
        if tail is None or not isinstance(tail.get("manifest"), dict) or tail.get("shards") != n_shards:
            return records, "", f"{STATE_NAME} is cut short or damaged at its end"
        return records, str(tail["manifest"].get("sha256")), None

    # -- finish

    def records(self, n_shards: int) -> Iterator[ShardRecord]:
        """The committed shards' records in order (verified when the run resumed or as they were written)."""
        for s in range(n_shards):
            record = self.record(s)
            if not isinstance(record, ShardRecord):
                why = record or "it was never committed"
                raise ResumableError(f"shard {s} cannot be joined: {why}; {RESUME_HINT} (it will be redone)")
            yield record

    def publish(self, n_shards: int) -> int:
        """Join the shards into manifest.jsonl and keep their records in checksums.jsonl; return the row count.

        The manifest is renamed into place last: it marks the run finished. Each shard's rows are
        checked against their record as they are copied, so a shard changed since its commit is
        caught here rather than published.
        """
        tmp_manifest = self.path / f".{MANIFEST_NAME}.tmp"
        tmp_state = self.path / f".{STATE_NAME}.tmp"
        whole = hashlib.sha256()
        size = lines = 0
        with writing(tmp_manifest), open(tmp_manifest, "wb") as out, open(tmp_state, "w", encoding="utf-8") as state:
            for record in self.records(n_shards):
                part = self._paths(record.shard)[0]
                digest = _copy(part, out, whole)
                if digest != record.rows_sha256:
                    raise ResumableError(f"shards/{part.name} changed after it was committed; "
                                         f"{RESUME_HINT} (it will be redone)")
                size += record.rows_bytes
                lines += record.lines
                state.write(record.line(timings=False) + "\n")  # like the manifest: same config, same bytes
            state.write(_sealed({"manifest": {"sha256": whole.hexdigest(), "bytes": size, "lines": lines},
                                 "shards": n_shards}) + "\n")
        with writing(self.manifest):
            os.replace(tmp_state, self.state)
            os.replace(tmp_manifest, self.manifest)
        shutil.rmtree(self.shards, ignore_errors=True)
        for leftover in self.images.glob(f"{STAGING_PREFIX}*"):  # a killed worker's half-staged shard
            shutil.rmtree(leftover, ignore_errors=True)
        return lines

    def write_json(self, name: str, data: dict[str, Any]) -> None:
        """Write a small top-level JSON file (stats.json) atomically."""
        path, tmp = self.path / name, self.path / f".{name}.tmp"
        with writing(path):
            write_file(tmp, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
            os.replace(tmp, path)


def open_run(run_dir: Path, resolved: str, *, resume: bool, overwrite: bool, n_shards: int,
             differs: str) -> ResumePlan:
    """Create or reopen the run folder whose settings are ``resolved`` (its config.yaml); the shards still to do.

    A folder holding another run is replaced only with ``overwrite`` (and only when marked as a run), continued
    only with ``resume`` and the same settings; ``differs`` is the error when they are not the same.
    The caller holds the folder's lock (``RunDir.locked``).
    """
    stored = run_dir / "config.yaml"
    if run_dir.exists() and any(p.name != LOCK_NAME for p in run_dir.iterdir()):
        # A folder that is not a run is refused whatever was asked (it was called "a run" to resume or overwrite);
        # with --overwrite a run's own entries are cleared. A copy of a run's config.yaml proves nothing: a user's
        # folder holding one was resumed into, its images replaced and its shards/ deleted.
        prepare_output_dir(run_dir, "run", overwrite=overwrite)
        for inner in ("images", "shards"):
            if (run_dir / inner).exists() and not (run_dir / inner).is_dir():
                raise RunError(f"{run_dir / inner} is a file where the run keeps a folder; move it away, or use "
                               "--overwrite to replace the run")
        if overwrite:
            pass
        elif not resume:
            raise RunError(f"{run_dir} already holds a run; pass --resume to continue it, --overwrite to "
                           "replace it, or --out to write elsewhere")
        elif not stored.exists():
            raise RunError(f"{run_dir} holds a run without its config.yaml, so --resume cannot tell it was started "
                           "with this config; use --overwrite to replace it, or another --out")
        elif stored.read_text(encoding="utf-8") != resolved:
            raise RunError(f"{run_dir} {differs}")
    run_dir.mkdir(parents=True, exist_ok=True)
    if read_marker(run_dir) is None:
        write_marker(run_dir, "run")  # what lets a later --overwrite tell this folder is ours
    (run_dir / "images").mkdir(exist_ok=True)
    (run_dir / "shards").mkdir(exist_ok=True)
    if not stored.exists():
        tmp = run_dir / ".config.yaml.tmp"
        tmp.write_text(resolved, encoding="utf-8")
        os.replace(tmp, stored)
    return RunDir(run_dir).resume(n_shards)


def _copy(part: Path, out: BinaryIO, whole: Any) -> str:
    h = hashlib.sha256()
    with open(part, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            whole.update(chunk)
            out.write(chunk)
    return h.hexdigest()


# ------------------------------------------------------------------------- lock


def _acquire(path: Path, run_dir: Path) -> int | None:
    """An open descriptor holding an exclusive flock on ``path``, with the holder's details written in it."""
    if fcntl is None:  # pragma: no cover
        return None
    for _ in range(5):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ConfigError(f"cannot create the lock {str(path)!r} ({exc.strerror}); choose another --out") from None
        # A reader asking whether the run is in use (``in_use``) holds a shared lock for a moment: a few short
        # waits before calling the run another process's.
        for wait in (0.0, 0.01, 0.02, 0.04):
            time.sleep(wait)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                continue
        else:
            holder = _holder(fd)
            os.close(fd)
            raise LockedError(f"{run_dir} is in use by another mathstress process ({holder}); wait for it to "
                              "finish or stop it, or choose another --out")
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the previous holder removed the file as we opened it: lock the new one
            os.close(fd)
            continue
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(info) + "\n").encode("utf-8"))
        return fd
    raise LockedError(f"{run_dir}: its lock file keeps changing hands; another mathstress process is using it")


def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return f"pid {int(info['pid'])} on {info['host']}, started {info['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not written its details yet"


def _release(fd: int | None, path: Path) -> None:
    if fd is None:  # pragma: no cover
        return
    try:
        path.unlink(missing_ok=True)  # before unlocking: a waiting process then locks a fresh file
    finally:
        os.close(fd)


def in_use(run_dir: str | Path) -> str | None:
    """Who holds the run folder's lock now (a generate or degrade writing it: "pid N on HOST, started T"), or None
    when nobody does (a lock file a killed process left is not held)."""
    if fcntl is None:  # pragma: no cover
        return None
    try:
        fd = os.open(Path(run_dir) / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(fd)
    except OSError:
        return None
    finally:
        os.close(fd)  # closing drops a lock we took
    return None


def require_not_in_use(run_dir: str | Path, then: str) -> None:
    """Refuse, naming the holder, a run folder another process is still writing (``then``: what to do after)."""
    holder = in_use(run_dir)
    if holder is not None:
        raise RunError(f"{run_dir} is still being written by another mathstress process ({holder}); {then} when "
                       "that finishes")


def read_lock(run_dir: str | Path) -> dict[str, Any] | None:
    """The details the current holder wrote in the run folder's lock (pid, host, started), if any."""
    try:
        return json.loads((Path(run_dir) / LOCK_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
