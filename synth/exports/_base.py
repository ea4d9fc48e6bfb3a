"""What every export format shares: the Exporter contract, the export driver, image copies, reading back.

An export format is one module of ``synth.exports`` that registers one ``Exporter``. The driver
(``export``) checks the run and the destination, hands the format a ``Context`` whose ``out`` is a
staging folder beside the destination, writes ``summary.json`` (items read, records written, items
skipped per reason, notes, the differences from the benchmark that cannot be closed, and the
command that runs the benchmark's own code on the export), and publishes the staging folder in
one rename (``synth.safepath``). A format never drops an item silently: it either writes records
for it or skips it with a reason, which the summary counts.
"""

from __future__ import annotations

import errno
import io
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from render.figures import draw_figure
from synth.errors import ConfigError, ResumableError, RunError
from synth.exports._anonymize import anonymous_view, check_key_path, remove_stale_key, write_key
from synth.manifest import ROW_FAULTS, edited_row, from_row, read_manifest
from synth.records import Figure, Item
from synth.registry import Registry, UnknownIdError
from synth.rundir import damaged_images, repair_command, require_not_in_use
from synth.safepath import (
    Layout,
    check_row_ids,
    clear_stale_staging,
    inside,
    layout,
    prepare_output_dir,
    publish_dir,
    spelled_out,
    staging,
    unowned_staging,
)

ProgressFn = Callable[[int, int], None]
SUMMARY = "summary.json"


def require_run(run_dir: Path) -> None:
    if not (run_dir / "manifest.jsonl").is_file():
        require_not_in_use(run_dir, "export it")
        hint = f" (it looks interrupted: finish it with {repair_command(run_dir)})" \
            if (run_dir / "config.yaml").exists() else ""
        raise RunError(f"{run_dir} is not a finished mathstress run: manifest.jsonl is missing{hint}")


def own_image(row: dict[str, Any]) -> bool:
    """A row `mathstress degrade` made from an image we did not make: no solution shown, the page's text unknown."""
    return row["domain"] == "external"


OWN_IMAGE = "an image of your own (from degrade): no solution shown"


def where_row(run_dir: Path, n: int) -> str:
    """How an error names manifest row ``n`` (1-based)."""
    return f"{run_dir / 'manifest.jsonl'} row {n}"


# -- reading an export back ----------------------------------------------------------------------


@dataclass(frozen=True)
class FormRecord:
    """One record of an export: the item id it came from, its labels and its (first) image."""

    id: str
    labels: dict[str, Any]
    image: Path | None
    raw: dict[str, Any]


def require_file(path: Path, root: Path, fmt: str) -> Path:
    """``path`` (a file or folder of the export at ``root``), or a RunError naming it and the command that
    writes it."""
    if not path.exists():
        raise RunError(f"{root} holds no {fmt} export ({path.relative_to(root)} is missing); "
                       f"write one with `mathstress export RUN --format {fmt} --out {root}`")
    return path


def read_json(path: Path, root: Path, fmt: str) -> Any:
    """A JSON file of an export, or a RunError naming the file and the command that writes it."""
    require_file(path, root, fmt)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunError(f"{path}: not valid JSON at line {exc.lineno}; re-export it") from None


def export_image(root: Path, rel: Any, data: Path, rec_id: Any) -> Path | None:
    """An image path read from an export record, resolved and proven to stay inside the export."""
    if not rel:
        return None
    resolved = (root / str(rel)).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise RunError(f"{data}: record {rec_id!r} points outside the export ({rel!r})")
    return resolved


# -- the Exporter contract ----------------------------------------------------------------------


@dataclass(frozen=True)
class Exporter:
    """One export format.

    ``write(ctx)`` reads the run through ``ctx.rows()`` and writes under ``ctx.out``; ``entries``
    are the top-level names it may write there (``summary.json`` is added), ``earlier`` the names
    an earlier version wrote, ``proof`` the names that show an unmarked folder is such an earlier
    export (it is then replaced like a marked one). ``load``
    reads an export back into ``FormRecord``s, ``task_gold(record, task_id)`` states the gold
    label of one of our evaluation tasks that a record carries (None when it carries none).
    ``differences`` are the ways the export cannot match the benchmark, written to summary.json;
    ``write`` adds what depends on the run or the destination to ``ctx.details`` (the commands
    that run the benchmark's own code on this export go in ``run_their_code``).
    """

    id: str
    title: str                        # the benchmark and where its format is defined
    help: str                         # one line for `mathstress export --help`
    entries: tuple[str, ...]
    write: Callable[[Context], None]
    load: Callable[[Path], list[FormRecord]] | None = None
    task_gold: Callable[[FormRecord, str], Any] | None = None
    earlier: tuple[str, ...] = ()
    proof: tuple[str, ...] = (SUMMARY,)  # what shows that an unmarked folder is an earlier export of this format
    differences: tuple[str, ...] = ()
    # Manifest fields whose files the format stores, and how many times (checked against the free disk first).
    copies: tuple[tuple[str, float], ...] = ()
    # Manifest fields whose files the format copies for some rows only (a page where there is no figure): checked
    # against their checksums like ``copies``, not counted as space (a lower bound would be no bound).
    verifies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Messages about a registry clash name the module that defines the format (its write function's).
        object.__setattr__(self, "__module__", getattr(self.write, "__module__", None) or type(self).__module__)
        object.__setattr__(self, "__qualname__", f"Exporter({self.id!r})")

    @property
    def layout(self) -> Layout:
        return layout(entries=(*self.entries, *self.earlier, SUMMARY), proof=self.proof)

    @property
    def kind(self) -> str:
        return f"export:{self.id}"

    @property
    def space_note(self) -> str:
        """What ``copies`` asks of the disk, in words: "images twice", "image and clean_image once"."""
        times = {1.0: "once", 2.0: "twice"}
        return "; ".join(f"the run's {name} files {times.get(k, f'{k:g} times')}" for name, k in self.copies)


EXPORTS: Registry[Exporter] = Registry("export format", discover="synth.exports",
                                       hint="`mathstress export --help` lists them")


def get_exporter(fmt: str) -> Exporter:
    try:
        return EXPORTS[fmt]
    except UnknownIdError as exc:
        raise ConfigError(f"--format: {exc}") from None


# -- the context a format writes through ------------------------------------------------------------


@dataclass
class Context:
    """The run being exported, the staging folder written into, and what the summary will say."""

    run_dir: Path
    out: Path                  # the staging folder written into
    dest: Path                 # where it will be published
    progress: ProgressFn | None = None
    items: int = 0
    written: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    details: dict[str, Any] = field(default_factory=dict)   # format-specific summary fields
    copied: set[str] = field(default_factory=set)   # image files written into the export
    embedded: int = 0                                 # images stored inside data files (parquet, Arrow)
    where: str = ""  # the manifest row being exported, for error messages
    anonymous: bool = False  # run_dir is an anonymized view (opaque ids that do not derive from their base's)
    _figure: tuple[str, bytes | None] | None = None  # the last base's figure (a base's rows are consecutive)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Each manifest row, its ids checked (they name the files an export writes); counts ``items``."""
        total = sum(1 for _ in read_manifest(self.run_dir)) if self.progress else 0
        for n, row in enumerate(read_manifest(self.run_dir), start=1):
            self.where = where_row(self.run_dir, n)
            check_row_ids(row, where=self.where, derived=not self.anonymous)
            self.items += 1
            yield row
            if self.progress:
                self.progress(n, total)

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def target(self, rel: str, *, key: str = "path") -> Path:
        """``out / rel``, proven inside the export (``rel`` is built from checked ids), parents made."""
        dest = inside(self.out, rel, field=key, where=self.where)
        dest.parent.mkdir(parents=True, exist_ok=True)
        return dest

    def source(self, rel: str, *, key: str = "image") -> Path:
        """A run file named by a manifest field, proven inside the run and present."""
        src = inside(self.run_dir, rel, field=key, where=self.where)
        if not src.is_file():
            raise RunError(f"{self.where}: {key} {rel!r} is missing from {self.run_dir} (or not a file); "
                           "regenerate the run")
        return src

    def copy(self, rel: str | None, folder: str, name: str | None = None, *, key: str = "image") -> str | None:
        """Copy a run image (row field ``key``) into ``folder`` of the export (once) and return its path there."""
        if rel is None:
            return None
        src = self.source(rel, key=key)
        target = f"{folder}/{name or src.name}"
        if target not in self.copied:
            shutil.copyfile(src, self.target(target, key=f"{key} copy"))
            self.copied.add(target)
        return target

    def copy_png(self, rel: str, target: str, *, key: str = "image") -> str:
        """A run image as a PNG at ``target`` (PNGs copied byte for byte, other formats decoded and re-encoded)."""
        src = self.source(rel, key=key)
        if target not in self.copied:
            dest = self.target(target, key=f"{key} copy")
            if src.suffix.lower() == ".png":
                shutil.copyfile(src, dest)
            else:
                dest.write_bytes(_png(_open_rgb(src, key, rel, self.where)))
            self.copied.add(target)
        return target

    def put_bytes(self, target: str, data: bytes) -> str:
        if target not in self.copied:
            self.target(target).write_bytes(data)
            self.copied.add(target)
        return target

    def figure_png(self, row: dict[str, Any]) -> bytes | None:
        """The problem's figure alone as PNG bytes (drawn from its spec, else cut from the clean page)."""
        fig = row["figure"]
        if fig is None:
            return None
        if self._figure is not None and self._figure[0] == row["base_id"]:
            return self._figure[1]
        png = _figure_png(self.run_dir, row, self.where)
        if png is None:
            self.notes[f"figure kind {fig['kind']!r} has no drawer and no box on the page"] += 1
        self._figure = (row["base_id"], png)
        return png

    def figure(self, row: dict[str, Any], folder: str) -> str | None:
        """The figure as ``folder/<base_id>-figure.png`` (written once per base), or None."""
        if row["figure"] is None:
            return None
        target = f"{folder}/{row['base_id']}-figure.png"
        if target in self.copied:
            return target
        png = self.figure_png(row)
        return None if png is None else self.put_bytes(target, png)

    def question_image(self, row: dict[str, Any], folder: str = "images") -> tuple[str | None, str]:
        """ErrorRadar and MMErroR show the question's own image: the figure when there is one, else the page."""
        fig = self.figure(row, folder)
        if fig is not None:
            return fig, "figure"
        return self.copy(row["image"], folder), "page" if row["image"] else "none"


def _open_rgb(path: Path, key: str, rel: str, where: str) -> Image.Image:
    try:
        with Image.open(path) as im:
            return im.convert("RGB")
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise RunError(f"{where}: {key} {rel!r} is not a readable image ({type(exc).__name__}); "
                       "regenerate the run") from None


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def _figure_png(run_dir: Path, row: dict[str, Any], where: str = "") -> bytes | None:
    fig = row["figure"]
    dpi = max(150, (row["render"] or {}).get("dpi", 150))
    try:
        image = Image.fromarray(draw_figure(Figure(fig["kind"], fig["spec"]), dpi).pixels)
    except KeyError:
        # No drawer for this kind here: the page the run rendered may still hold it, at its box.
        if not fig.get("bbox") or not row.get("clean_image"):
            return None
        x0, y0, x1, y1 = (round(v) for v in fig["bbox"])
        page = inside(run_dir, row["clean_image"], field="clean_image", where=where)
        image = _open_rgb(page, "clean_image", row["clean_image"], where).crop((x0, y0, x1, y1))
    return _png(image)


def write_json(path: Path, data: Any, *, indent: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=indent) + "\n", encoding="utf-8")


def numbered(steps: list[dict[str, Any]], key: str = "text") -> list[str]:
    return [f"Step {s['index']}: {s[key]}" for s in steps]


def solution_latex(steps: list[dict[str, Any]]) -> str:
    return " \\\\\n".join(s["latex"] or s["text"] for s in steps)


def question_text(row: dict[str, Any]) -> str:
    """The question, with multiple-choice options on their own lines (``A. ...``) as benchmarks print them."""
    choices = row["question"].get("choices")
    if not choices:
        return row["question"]["text"]
    return "\n".join([row["question"]["text"], *(f"{'ABCDEFGH'[i]}. {c}" for i, c in enumerate(choices))])


def gold_answer(row: dict[str, Any]) -> str:
    """The gold answer as benchmarks state it: the option letter for multiple choice, else the answer text."""
    letter = (row.get("params") or {}).get("answer_choice")
    return letter if row["question"].get("choices") and letter else row["answer"]["text"]


def educational_stage(grade_band: str) -> str:
    """Primary / Middle / High from a grade band such as ``3-5``, ``6-8``, ``9-12`` or ``K-2``."""
    head = grade_band.split("-")[0].strip().upper()
    grade = 0 if head in ("K", "") or not head.isdigit() else int(head)
    return "Primary" if grade <= 5 else "Middle" if grade <= 8 else "High"


# -- the driver -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportSummary:
    format: str
    path: Path
    items: int                 # manifest rows read
    written: int               # records written (Seeing Is Solving writes two per problem)
    skipped: dict[str, int]    # reason -> items
    notes: dict[str, int]      # things worth knowing that did not skip an item
    images: int


def export(run_dir: str | Path, dest: str | Path, fmt: str, progress: ProgressFn | None = None, *,
           anonymize: bool = False) -> ExportSummary:
    """Write run ``run_dir`` in format ``fmt`` under ``dest``; ``summary.json`` there says what it holds.

    ``dest`` must be new, empty or an earlier export of the same format; only what that export wrote
    is replaced (a user's own files there stay), and a new export appears in one rename when it can.
    Nothing is published unless the whole export was written.

    With ``anonymize`` every format writes opaque ids and image names (``item-000123``, ``problem-000017``)
    in an order drawn from the run seed, and ``<dest>.key.csv`` beside the export maps them back
    (``synth.exports._anonymize``): names no longer tell a clean control from an error or a photo.
    """
    exporter = get_exporter(fmt)
    run_dir, dest = Path(run_dir), spelled_out(dest)  # `--out .`: the folders beside it are beside it
    require_run(run_dir)
    key = check_key_path(dest) if anonymize else None
    prepare_output_dir(dest, exporter.kind, shape=exporter.layout)
    stale = clear_stale_staging(dest.parent)
    check_space(run_dir, dest, exporter)
    check_images(run_dir, exporter)
    with ExitStack() as stack:
        out = stack.enter_context(staging(dest))
        view_dir = stack.enter_context(staging(dest)) if anonymize else None  # the anonymized run; not published
        try:
            view = anonymous_view(run_dir, view_dir / "run") if view_dir is not None else None
            ctx = Context(view.run_dir if view else run_dir, out, dest, progress, anonymous=view is not None)
            if stale:
                ctx.notes[STALE_NOTE] += len(stale)
                ctx.details["stale_staging_removed"] = [{"folder": name, "bytes": size} for name, size in stale]
            try:
                exporter.write(ctx)
            except ROW_FAULTS as exc:
                edited = edited_row(run_dir, ctx.where or str(run_dir / "manifest.jsonl"), exc)
                if edited is None:
                    raise
                raise edited from None
            if ctx.items and not ctx.written:  # an export of nothing, published, read as a success
                why = "; ".join(f"{n} {reason}" for reason, n in ctx.skipped.most_common(3))
                raise RunError(f"none of the {ctx.items} items of {run_dir} can be exported as {fmt}"
                               f"{': ' + why if why else ''}; nothing was written")
            summary = ExportSummary(fmt, dest, ctx.items, ctx.written, dict(sorted(ctx.skipped.items())),
                                    dict(sorted(ctx.notes.items())), len(ctx.copied) + ctx.embedded)
            write_json(out / SUMMARY, {
                "format": fmt, "benchmark": exporter.title, "items": ctx.items, "written": ctx.written,
                "skipped": summary.skipped, "notes": summary.notes, "images": summary.images,
                "differences": list(exporter.differences), **ctx.details,
                **({"anonymized": {"key": key.name}} if key is not None else {})}, indent=2)
        except OSError as exc:
            raise _write_failure(exc, dest) from None
        publish_dir(out, dest, exporter.kind, shape=exporter.layout)
        if key is not None and view is not None:
            try:
                write_key(key, view)
            except OSError as exc:
                raise RunError(f"the export is at {dest} but its key could not be written to {key} "
                               f"({exc.strerror or type(exc).__name__}); re-run the same export command") from None
        else:
            remove_stale_key(dest)
    return summary


def check_images(run_dir: Path, exporter: Exporter) -> None:
    """Refuse a run whose images the export copies (``Exporter.copies`` and ``verifies``) no longer match the sha256
    their shard recorded (``checksums.jsonl``): an export would publish them as they are, and a damaged file fails
    only when a user's code decodes it (the ``hf`` dataset raised on iterating its split). Costs one read of each
    such image; a format that copies none, or a run without checksums, is not judged."""
    fields = [name for name, _ in exporter.copies] + list(exporter.verifies)
    if not fields:
        return
    names = [row[key].removeprefix("images/") for row in read_manifest(run_dir) for key in fields
             if isinstance(row.get(key), str) and row[key].startswith("images/")]
    bad = damaged_images(run_dir, names)
    if bad:
        shown = ", ".join(f"images/{n}" for n in bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        raise RunError(f"{len(bad)} of the run's images do not match the checksums their shards recorded (damaged or "
                       f"replaced): {shown}; {repair_command(run_dir)} redoes them with the same bytes")


STALE_NOTE = ("staging folders that killed exports left beside the destination, removed"
              " (stale_staging_removed in summary.json)")
# Free space kept beyond what an export is known to write (its records, summary and card; a filesystem's own
# reservations).
SPARE_BYTES = 64 * 2**20


def space_needed(run_dir: Path, exporter: Exporter) -> int:
    """The bytes ``exporter`` is sure to write for the run's images: each copied manifest field's distinct files,
    times how often the format stores them (``Exporter.copies``). A lower bound: re-encoded copies and figures
    drawn for the export come on top."""
    if not exporter.copies:
        return 0
    files: dict[str, set[str]] = {name: set() for name, _ in exporter.copies}
    for row in read_manifest(run_dir):
        for name in files:
            if isinstance(row.get(name), str):
                files[name].add(row[name])
    total = 0.0
    for name, times in exporter.copies:
        size = 0
        for rel in files[name]:
            try:
                size += inside(run_dir, rel, field=name).stat().st_size
            except OSError:
                continue  # a missing image is reported, with its row, when the export reaches it
        total += times * size
    return int(total)


def check_space(run_dir: Path, dest: Path, exporter: Exporter) -> None:
    """Refuse before writing anything when the disk beside ``dest`` cannot hold what the export is sure to write
    (``space_needed``): a full disk part-way is slower to learn, and the parquet writer behind the ``hf`` format
    aborts the whole process on it instead of raising."""
    need = space_needed(run_dir, exporter)
    if not need:
        return
    disk = dest.absolute().parent
    while not disk.exists() and disk != disk.parent:  # the folders the export will make are on their parent's disk
        disk = disk.parent
    free = shutil.disk_usage(disk).free
    if free < need + SPARE_BYTES:
        left = unowned_staging(dest.absolute().parent)
        hint = (f"; beside it {', '.join(name for name, _ in left)} ({_gb(sum(n for _, n in left))}) "
                "look left by an export of an earlier version that was killed: delete them if no mathstress "
                "export is running" if left else "")
        raise ResumableError(
            f"export to {dest} needs at least {_gb(need + SPARE_BYTES)} free beside it ({exporter.space_note}); "
            f"{_gb(free)} is free on the disk that holds {disk}{hint}: free some space, or choose an --out on "
            "another disk, and re-run the same export command; nothing was written")


def _gb(n: float) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.0f} MB"


def _write_failure(exc: OSError, dest: Path) -> Exception:
    what = exc.strerror or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return ResumableError(f"export to {dest} stopped: {what}{where}; nothing was published and {dest} is "
                              "unchanged; free some space and re-run the same export command")
    return RunError(f"export to {dest} failed: {what}{where}; nothing was published and {dest} is unchanged")


def read_summary(dest: str | Path) -> dict[str, Any]:
    """The ``summary.json`` of an export (items, written, skipped per reason, notes, differences)."""
    return json.loads((Path(dest) / SUMMARY).read_text(encoding="utf-8"))


def load_export(path: str | Path, fmt: str) -> list[FormRecord]:
    """Read an export (its folder) back into records, in file order."""
    exporter = get_exporter(fmt)
    if exporter.load is None:
        raise ConfigError(f"the {fmt} export is not read back record by record; use its own loader "
                          f"(see {Path(path) / SUMMARY})")
    return exporter.load(Path(path))


def form_items(run_dir: str | Path, records: list[FormRecord]) -> list[Item]:
    """The run's items behind ``records`` (each once, in record order), for ``synth.evaluate.plan``.

    This is how an export is evaluated with our tasks: ``plan(run_dir, task, form_items(...))``
    asks exactly the items the export holds.
    """
    wanted = list(dict.fromkeys(r.id for r in records))
    rows = {row["id"]: row for row in read_manifest(run_dir) if row["id"] in set(wanted)}
    missing = [i for i in wanted if i not in rows]
    if missing:
        raise RunError(f"{len(missing)} record id(s) are not in {run_dir}/manifest.jsonl (first: {missing[0]!r}); "
                       "load the export next to the run it was written from")
    return [from_row(rows[i]) for i in wanted]


def task_gold(record: FormRecord, fmt: str, task_id: str) -> Any:
    """The gold label of evaluation task ``task_id`` (detect, localize, categorize) that a record of
    format ``fmt`` states, or None. It equals ``get_task(task_id).gold(item)``."""
    gold = get_exporter(fmt).task_gold
    return None if gold is None else gold(record, task_id)


# -- formats that write one records file -------------------------------------------------------------

Records = list[dict[str, Any]] | str  # the records an item becomes, or why it is skipped


def write_records(ctx: Context, data_file: str, records: Callable[[Context, dict[str, Any]], Records], *,
                  as_list: bool = False) -> None:
    """Write each row's records to ``data_file`` as JSON lines, or streamed as one JSON array with ``as_list``
    (the bytes ``json.dumps(records, indent=1)`` would give, without holding the records)."""
    with ctx.target(data_file).open("w", encoding="utf-8") as out:
        if as_list:
            out.write("[")
        for row in ctx.rows():
            got = records(ctx, row)
            if isinstance(got, str):
                ctx.skip(got)
                continue
            for rec in got:
                if as_list:
                    body = json.dumps(rec, ensure_ascii=False, indent=1).replace("\n", "\n ")
                    out.write(("\n " if not ctx.written else ",\n ") + body)
                else:
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                ctx.written += 1
        if as_list:
            out.write("\n]\n" if ctx.written else "]\n")


def load_records(root: Path, fmt: str, data_file: str, *, id_key: str, labels: Callable[[dict[str, Any]], Any],
                 image_keys: tuple[str, ...], image_root: str = "") -> list[FormRecord]:
    """Records of a JSON-lines (or JSON array) file, with ids, labels and their first image."""
    data = require_file(root / data_file, root, fmt)
    text = data.read_text(encoding="utf-8")
    try:
        raw = json.loads(text) if text.lstrip().startswith("[") else \
            [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise RunError(f"{data}: not valid JSON at line {exc.lineno}; re-export it") from None
    out = []
    for rec in raw:
        rel = next((rec[k] for k in image_keys if rec.get(k)), None)
        image = export_image(root, f"{image_root}{rel}" if rel else None, data, rec.get(id_key))
        out.append(FormRecord(id=rec[id_key], labels=labels(rec), image=image, raw=rec))
    return out
