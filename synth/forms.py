"""Benchmark forms: a run folder laid out as ErrorRadar, FERMAT, MMErroR, MathReal or Seeing Is Solving, and back.

Each form keeps the published benchmark's record layout, answer format and label vocabulary
(``../shared/reference/seed-benchmarks.md`` §1-§5), copies the images it refers to next to the
records, and writes ``summary.json`` with how many items it wrote and, per reason, how many it
skipped: a form never drops an item silently. ``load_form`` reads an export back into records with
ids and labels, and ``form_items`` / ``task_gold`` connect loaded records to the evaluation tasks.
"""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.errors import ConfigError, RunError
from synth.manifest import from_row, read_manifest
from synth.records import Figure, Item
from synth.safepath import Layout, check_row_ids, inside, layout, prepare_output_dir, publish_dir, staging_dir
from synth.taxonomy import SUBTYPES
from synth.vocab import (
    ERRORRADAR_NAMES,
    FERMAT_ROTATION,
    FERMAT_TYPES,
    MATHREAL_CATEGORIES,
    MATHREAL_LEVELS,
    MATHREAL_QUESTION_TYPES,
    MATHREAL_ROTATION,
    MATHREAL_SUBTYPES,
    MMERROR_NO_ERROR,
    MMERROR_OPTIONS,
    SEEING_CONDITIONS,
    SEEING_ROLES,
)

ProgressFn = Callable[[int, int], None]
Records = list[dict[str, Any]] | str  # the records an item becomes, or why it is skipped

# The benchmarks' label vocabularies (ERRORRADAR_NAMES, MMERROR_OPTIONS, ...) come from synth.vocab.


def educational_stage(grade_band: str) -> str:
    """Primary / Middle / High from a grade band such as ``3-5``, ``6-8``, ``9-12`` or ``K-2``."""
    head = grade_band.split("-")[0].strip().upper()
    grade = 0 if head in ("K", "") or not head.isdigit() else int(head)
    return "Primary" if grade <= 5 else "Middle" if grade <= 8 else "High"


# -- the export context: image copies and figure drawings ---------------------------------------


@dataclass
class _Context:
    run_dir: Path
    out: Path
    copied: set[str] = field(default_factory=set)
    notes: Counter[str] = field(default_factory=Counter)
    where: str = ""  # the manifest row being exported, for error messages

    def copy(self, rel: str | None, folder: str, name: str | None = None, *, key: str = "image") -> str | None:
        """Copy a run image (row field ``key``) into ``folder`` of the export (once) and return its path there."""
        if rel is None:
            return None
        src = inside(self.run_dir, rel, field=key, where=self.where)
        if not src.is_file():
            raise RunError(f"{self.where}: {key} {rel!r} is missing from {self.run_dir} (or not a file); "
                           "regenerate the run")
        target = f"{folder}/{name or src.name}"
        if target not in self.copied:
            dest = inside(self.out, target, field=f"{key} copy", where=self.where)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            self.copied.add(target)
        return target

    def figure(self, row: dict[str, Any], folder: str) -> str | None:
        """The problem's figure alone as a PNG (drawn from its spec, else cut from the clean page)."""
        fig = row["figure"]
        if fig is None:
            return None
        target = f"{folder}/{row['base_id']}-figure.png"
        if target in self.copied:
            return target
        dest = inside(self.out, target, field="figure copy", where=self.where)
        png = _figure_png(self.run_dir, row, self.where)
        if png is None:
            self.notes[f"figure kind {fig['kind']!r} has no drawer and no box on the page"] += 1
            return None
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(png)
        self.copied.add(target)
        return target

    def question_image(self, row: dict[str, Any], folder: str = "images") -> tuple[str | None, str]:
        """ErrorRadar and MMErroR show the question's own image: the figure when there is one, else the page."""
        fig = self.figure(row, folder)
        if fig is not None:
            return fig, "figure"
        return self.copy(row["image"], folder), "page" if row["image"] else "none"


def _figure_png(run_dir: Path, row: dict[str, Any], where: str = "") -> bytes | None:
    from PIL import Image, UnidentifiedImageError

    from render.figures import draw_figure

    fig = row["figure"]
    dpi = max(150, (row["render"] or {}).get("dpi", 150))
    try:
        pixels = draw_figure(Figure(fig["kind"], fig["spec"]), dpi).pixels
        image = Image.fromarray(pixels)
    except KeyError:
        # No drawer for this kind here: the page the run rendered may still hold it, at its box.
        if not fig.get("bbox") or not row.get("clean_image"):
            return None
        x0, y0, x1, y1 = (round(v) for v in fig["bbox"])
        page = inside(run_dir, row["clean_image"], field="clean_image", where=where)
        try:
            image = Image.open(page).convert("RGB").crop((x0, y0, x1, y1))
        except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
            raise RunError(f"{where}: clean_image {row['clean_image']!r} is not a readable image "
                           f"({type(exc).__name__}); regenerate the run") from None
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def _numbered(steps: list[dict[str, Any]], key: str = "text") -> list[str]:
    return [f"Step {s['index']}: {s[key]}" for s in steps]


def _solution_latex(steps: list[dict[str, Any]]) -> str:
    return " \\\\\n".join(s["latex"] or s["text"] for s in steps)


# -- ErrorRadar (§1): first wrong step and a 5-way category; every item holds an error ----------


def errorradar_records(ctx: _Context, row: dict[str, Any]) -> Records:
    err = row["error"]
    if err is None:
        return "no error in the shown solution (every ErrorRadar item has one)"
    category = err["projections"]["errorradar"]
    if category is None:
        return f"no ErrorRadar category for {err['subtype']}"
    if not err["answer_changed"]:
        return "final answer still correct (ErrorRadar's student answers are wrong)"
    image, source = ctx.question_image(row)
    if image is None:
        return "no image (render disabled and no figure)"
    step = err["first_error_step"]
    return [{
        "id": row["id"], "base_id": row["base_id"], "question": row["question"]["text"], "image": image,
        "image_source": source, "answer": row["answer"]["text"], "user_answer": row["steps"][-1]["text"],
        "user_answer_steps": _numbered(row["steps"]), "error_step": step, "error_category": category,
        "error_category_name": ERRORRADAR_NAMES[category],
        "gold_step_response": f"Error Step: Step {step}",
        "gold_category_response": f"Error Category: {ERRORRADAR_NAMES[category]}",
        "problem_type": row["domain"], "subtype": err["subtype"],
    }]


def errorradar_labels(rec: dict[str, Any]) -> dict[str, Any]:
    return {"error_step": rec["error_step"], "category": rec["error_category"]}


# -- FERMAT (§2): a photo of the whole solution; detect 0/1, localise (NA), correct (NA) ----------


def _fermat_image_fields(row: dict[str, Any]) -> dict[str, str]:
    """FERMAT's per-image quality metadata, read from the item's degradation records (MathReal rubric bins)."""
    degs = row["degradations"]
    rotation = next((d["measured"].get("rotation", d["params"].get("rotation")) for d in degs
                     if d["subtype"] == "rotation"), None)
    unreadable = any(d["severity"] >= 3 and d["family"] == "quality" for d in degs)
    return {"legibility": "illegible" if unreadable else "legible", "image_quality": "bad" if degs else "good",
            "rotation": FERMAT_ROTATION.get(str(rotation), "default")}


def fermat_records(ctx: _Context, row: dict[str, Any]) -> Records:
    if row["variant"] == "clean":
        return "unperturbed solution (FERMAT's no-error items are superficial edits)"
    if row["variant"] == "degraded":
        return "photo of an unperturbed solution (FERMAT photographs perturbed solutions)"
    if row["image"] is None:
        return "no image (render disabled)"
    err, control = row["error"], row["control"]
    subtype = err["subtype"] if err else control["subtype"]
    axis = err["projections"]["fermat"] if err else "SU"
    if axis is None:
        return f"no FERMAT axis for {subtype} (FERMAT has no visual-perception errors)"
    clean = row["clean_solution"]
    if err:
        steps = {s["index"]: s for s in row["steps"]}
        location = "; ".join(f"Step {i}: {steps[i]['text']}" for i in err["error_steps"] if i in steps)
        exp = err["explanation"]
    else:
        location, exp = "NA", SUBTYPES[subtype].description
    return [{
        "id": row["id"], "base_id": row["base_id"], "image": ctx.copy(row["image"], "images"),
        "question": row["question"]["text"], "question_latex": row["question"]["latex"],
        "gold_answer": _solution_latex(clean), "perturbed_answer": _solution_latex(row["steps"]),
        "perturbation_axis": axis, "perturbation_type": FERMAT_TYPES.get(subtype, subtype), "subtype": subtype,
        "exp": exp, "error": 1 if err else 0, "error_location": location,
        "error_steps": list(err["error_steps"]) if err else [],
        "first_error_step": err["first_error_step"] if err else None,
        "corrected_answer": _solution_latex(clean) if err else "NA",
        "domain": row["domain"], "subdomain": row["subdomain"], "grade": row["grade_band"],
        "question_type": "MCQ" if row["question_type"] == "mcq" else "free-form",
        "score_invariance": "variant" if err else "invariant", **_fermat_image_fields(row),
    }]


def fermat_labels(rec: dict[str, Any]) -> dict[str, Any]:
    return {"error": rec["error"], "axis": rec["perturbation_axis"], "first_error_step": rec["first_error_step"],
            "error_steps": tuple(rec["error_steps"]), "location": rec["error_location"]}


# -- MMErroR (§3): 4-way type over single-error chains; no-error chains for error presence --------


def mmerror_records(ctx: _Context, row: dict[str, Any]) -> Records:
    if row["variant"] == "degraded":
        return "degraded photo (MMErroR images are clean)"
    err = row["error"]
    if err is not None:
        letter = err["projections"]["mmerror"]
        if letter is None:
            return f"no MMErroR type for {err['subtype']}"
        if not err["answer_changed"]:
            return "final answer still correct (MMErroR chains end on a wrong answer)"
    image, source = ctx.question_image(row)
    if image is None:
        return "no image (render disabled and no figure)"
    label = MMERROR_OPTIONS[err["projections"]["mmerror"]] if err else MMERROR_NO_ERROR
    return [{
        "id": row["id"], "base_id": row["base_id"], "image": image, "image_source": source,
        "question": row["question"]["text"], "reasoning": "\n".join(_numbered(row["steps"])),
        "answer": row["answer"]["text"], "label": label,
        "letter": err["projections"]["mmerror"] if err else None,
        "tasks": ["ETC", "EPD"] if err else ["EPD"],
        "epd_answer": "Error Present" if err else MMERROR_NO_ERROR, "options": MMERROR_OPTIONS,
        "domain": "Mathematics & Logic", "subdomain": row["subdomain"],
        "subtype": err["subtype"] if err else None,
    }]


def mmerror_labels(rec: dict[str, Any]) -> dict[str, Any]:
    return {"label": rec["letter"] or MMERROR_NO_ERROR, "tasks": tuple(rec["tasks"])}


# -- MathReal (§5): a photo per item, 14 condition levels, QG/DG text and the clean twin ------------


def mathreal_levels(degradations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every MathReal subtype's level for one photo (0, or ``upright`` for rotation, when absent)."""
    levels = {group: {name: ("upright" if s == "rotation" else 0) for s, name in names.items()}
              for group, names in MATHREAL_LEVELS.items()}
    for d in degradations:
        for group, names in MATHREAL_LEVELS.items():
            if d["subtype"] in names:
                if d["subtype"] == "rotation":
                    value: Any = MATHREAL_ROTATION.get(str(d["measured"].get("rotation", d["params"].get("rotation"))),
                                                       "upright")
                elif d["subtype"] == "handwritten_answer":
                    value = 1 if d["severity"] else 0
                else:
                    value = d["severity"]
                levels[group][names[d["subtype"]]] = value
    return levels


def mathreal_records(ctx: _Context, row: dict[str, Any]) -> Records:
    if row["variant"] != "degraded":
        return ("not a photo (MathReal items are photos; clean pages travel as the ImgClean twin)"
                if row["variant"] == "clean" else "solution variant (MathReal poses the clean problem)")
    real = ctx.copy(row["image"], "img/real")
    clean = ctx.copy(row["clean_image"], "img/clean", f"{row['base_id']}.png", key="clean_image")
    extras = [{"subtype": d["subtype"], "severity": d["severity"]} for d in row["degradations"]
              if d["subtype"] not in MATHREAL_SUBTYPES]
    if extras:
        ctx.notes["photos with camera extras outside the 14 subtypes (see ExtraDegradations)"] += 1
    if row["figure"] is None:
        ctx.notes["photos of problems without a figure (DescriptionEN is null)"] += 1
    return [{
        "idx": row["id"], "base_id": row["base_id"], "ImgReal": real, "ImgClean": clean,
        "QuestionEN": row["question"]["text"], "DescriptionEN": row.get("figure_description"),
        "AnswerEN": row["answer"]["text"], "Category": MATHREAL_CATEGORIES.get(row["domain"]),
        "Domain": row["domain"], "Difficulty": row["difficulty"].capitalize(),
        "EducationalStage": educational_stage(row["grade_band"]),
        "QuestionType": MATHREAL_QUESTION_TYPES[row["question_type"]],
        "Levels": mathreal_levels(row["degradations"]), "ExtraDegradations": extras,
        # Our pages print the worked solution under the question; MathReal photos show the question only.
        "SolutionShown": True,
    }]


def mathreal_labels(rec: dict[str, Any]) -> dict[str, Any]:
    flat = {name: level for group in rec["Levels"].values() for name, level in group.items()}
    return {"levels": flat, "clean_image": rec["ImgClean"],
            "extra": tuple((e["subtype"], e["severity"]) for e in rec["ExtraDegradations"])}


# -- Seeing Is Solving (§4): image role, with / without image, isSolvable ---------------------------


def _solvable(role: str, condition: str) -> bool:
    if role == "insufficient":
        return False
    return condition == "with_image" or role in ("useful", "not_required")


def seeing_records(ctx: _Context, row: dict[str, Any]) -> Records:
    if row["variant"] != "clean":
        return "not a clean problem (Seeing Is Solving poses problems, not solutions or photos)"
    if row["figure"] is None:
        return "no figure (Seeing Is Solving items have exactly one image in the stem)"
    image = ctx.figure(row, "images")
    if image is None:
        return "figure could not be drawn (no drawer for its kind)"
    from_figure = [g for g in row["givens"] if str(g.get("source", "")).startswith("figure:")]
    answer = {"value": row["answer"]["text"], "units": None}
    out = []
    for condition in SEEING_CONDITIONS:
        solvable = _solvable(row["image_role"], condition)
        missing = [] if solvable else [f"{g['name']} (shown in the figure)" for g in from_figure]
        steps = [{"step_number": s["index"], "description": s["text"]} for s in row["clean_solution"]]
        out.append({
            "id": row["id"], "base_id": row["base_id"], "condition": condition,
            "question_text": row["question"]["text"], "image": image if condition == "with_image" else None,
            "image_role": SEEING_ROLES[row["image_role"]], "isSolvable": solvable, "answer": answer,
            "reference_response": {"solution": {
                "isSolvable": solvable, "required_information": missing,
                "steps": steps if solvable else [], "answer": answer if solvable else None}},
        })
    return out


def seeing_labels(rec: dict[str, Any]) -> dict[str, Any]:
    return {"condition": rec["condition"], "image_role": rec["image_role"], "isSolvable": rec["isSolvable"]}


# -- registry, export and load -------------------------------------------------------------------


@dataclass(frozen=True)
class Form:
    id: str
    paper: str
    data_file: str        # where the records go, relative to the export folder
    as_list: bool         # one JSON array (MathReal) instead of JSON lines
    id_key: str
    records: Callable[[_Context, dict[str, Any]], Records]
    labels: Callable[[dict[str, Any]], dict[str, Any]]
    image_keys: tuple[str, ...]


FORMS: dict[str, Form] = {f.id: f for f in (
    Form("errorradar", "ErrorRadar (arXiv 2410.04509)", "errorradar.jsonl", False, "id", errorradar_records,
         errorradar_labels, ("image",)),
    Form("fermat", "FERMAT (arXiv 2501.07244)", "fermat.jsonl", False, "id", fermat_records, fermat_labels,
         ("image",)),
    Form("mmerror", "MMErroR", "mmerror.jsonl", False, "id", mmerror_records, mmerror_labels, ("image",)),
    Form("mathreal", "MathReal", "json/mathstress.json", True, "idx", mathreal_records, mathreal_labels,
         ("ImgReal", "ImgClean")),
    Form("seeing", "Seeing Is Solving", "seeing.jsonl", False, "id", seeing_records, seeing_labels, ("image",)),
)}


def get_form(fmt: str) -> Form:
    try:
        return FORMS[fmt]
    except KeyError:
        raise ConfigError(f"unknown benchmark form {fmt!r}; choose from {', '.join(sorted(FORMS))}") from None


@dataclass(frozen=True)
class FormSummary:
    format: str
    path: Path
    items: int                 # manifest rows read
    written: int               # records written (Seeing Is Solving writes two per problem)
    skipped: dict[str, int]    # reason -> items
    notes: dict[str, int]      # things worth knowing that did not skip an item
    images: int


def _rows(run_dir: Path, progress: ProgressFn | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row) per manifest row, ids checked: they name the files an export writes."""
    total = sum(1 for _ in read_manifest(run_dir)) if progress else 0
    for n, row in enumerate(read_manifest(run_dir), start=1):
        where = f"{run_dir / 'manifest.jsonl'} row {n}"
        check_row_ids(row, where=where)
        yield where, row
        if progress:
            progress(n, total)


def form_layout(form: Form) -> Layout:
    """What a form export writes at its top (how an unmarked earlier export is recognised)."""
    return layout(entries=(form.data_file.split("/")[0], "summary.json", "images", "img"), proof=("summary.json",))


def export_form(run_dir: str | Path, dest: str | Path, fmt: str, progress: ProgressFn | None = None) -> FormSummary:
    """Write a run in one benchmark's form under ``dest``; see ``summary.json`` there.

    ``dest`` must be new, empty or an earlier export of the same form; only what that export wrote is
    replaced (a user's own files there stay), and a new export appears in one rename when it can.
    """
    form = get_form(fmt)
    run_dir, dest = Path(run_dir), Path(dest)
    if not (run_dir / "manifest.jsonl").is_file():
        raise RunError(f"{run_dir} is not a finished mathstress run: manifest.jsonl is missing")
    kind, shape = f"export:{fmt}", form_layout(form)
    prepare_output_dir(dest, kind, shape=shape)
    staging = staging_dir(dest)
    try:
        ctx = _Context(run_dir, staging)
        skipped: Counter[str] = Counter()
        records: list[dict[str, Any]] = []
        items = 0
        data = staging / form.data_file
        data.parent.mkdir(parents=True, exist_ok=True)
        with data.open("w", encoding="utf-8") as out:
            for where, row in _rows(run_dir, progress):
                ctx.where = where
                items += 1
                got = form.records(ctx, row)
                if isinstance(got, str):
                    skipped[got] += 1
                    continue
                for rec in got:
                    if form.as_list:
                        records.append(rec)
                    else:
                        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            if form.as_list:
                out.write(json.dumps(records, ensure_ascii=False, indent=1) + "\n")
        written = len(records) if form.as_list else sum(1 for _ in data.open(encoding="utf-8"))
        summary = FormSummary(fmt, dest, items, written, dict(sorted(skipped.items())), dict(sorted(ctx.notes.items())),
                              len(ctx.copied))
        (staging / "summary.json").write_text(json.dumps(
            {"format": fmt, "paper": form.paper, "data": form.data_file, "items": items, "written": written,
             "skipped": summary.skipped, "notes": summary.notes, "images": summary.images}, indent=2) + "\n",
            encoding="utf-8")
        publish_dir(staging, dest, kind, shape=shape)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return summary


def read_summary(dest: str | Path) -> dict[str, Any]:
    """The ``summary.json`` of a form export (items, written, skipped per reason, notes)."""
    return json.loads((Path(dest) / "summary.json").read_text(encoding="utf-8"))


def form_exporters() -> dict[str, Callable[[Path, Path, ProgressFn | None], Path]]:
    """Exporters in ``synth.export.EXPORTERS``' shape (run, dest, progress) -> dest, one per form."""
    def make(fmt: str) -> Callable[[Path, Path, ProgressFn | None], Path]:
        return lambda run_dir, dest, progress=None: export_form(run_dir, dest, fmt, progress).path
    return {fmt: make(fmt) for fmt in FORMS}


@dataclass(frozen=True)
class FormRecord:
    """One record of a form export: the item id it came from, its labels and its (first) image."""

    id: str
    labels: dict[str, Any]
    image: Path | None
    raw: dict[str, Any]


def load_form(path: str | Path, fmt: str) -> list[FormRecord]:
    """Read a form export (its folder) back into records, in file order.

    >>> records = load_form("outputs/quickstart/errorradar", "errorradar")  # doctest: +SKIP
    >>> records[0].labels
    {'error_step': 2, 'category': 'CAL'}
    """
    form = get_form(fmt)
    root = Path(path)
    data = root / form.data_file
    if not data.is_file():
        raise RunError(f"{root} holds no {fmt} export ({form.data_file} is missing); "
                       f"write one with `mathstress export RUN --format {fmt} --out {root}`")
    text = data.read_text(encoding="utf-8")
    try:
        raw = json.loads(text) if form.as_list else [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise RunError(f"{data}: not valid JSON at line {exc.lineno}; re-export it") from None
    out = []
    for rec in raw:
        image = next((rec[k] for k in form.image_keys if rec.get(k)), None)
        resolved = None
        if image is not None:
            resolved = (root / image).resolve()
            if not resolved.is_relative_to(root.resolve()):
                raise RunError(f"{data}: record {rec.get(form.id_key)!r} points outside the export ({image!r})")
        out.append(FormRecord(id=rec[form.id_key], labels=form.labels(rec), image=resolved, raw=rec))
    return out


# -- connection to the evaluation tasks ------------------------------------------------------------


def form_items(run_dir: str | Path, records: list[FormRecord]) -> list[Item]:
    """The run's items behind ``records`` (each once, in record order), for ``synth.evaluate.plan``.

    This is how a form export is evaluated with our tasks: ``plan(run_dir, task, form_items(...))``
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
    """The gold label of evaluation task ``task_id`` (detect, localize, categorize) that a form record
    states, or None when the form does not state it. It equals ``get_task(task_id).gold(item)``."""
    raw, labels = record.raw, record.labels
    has_error = {"errorradar": True, "fermat": labels.get("error") == 1,
                 "mmerror": labels.get("label") != MMERROR_NO_ERROR}.get(fmt)
    if has_error is None:
        return None
    if task_id == "detect":
        return "incorrect" if has_error else "correct"
    if task_id == "localize":
        if fmt == "errorradar":
            return labels["error_step"]
        if fmt == "fermat":
            return labels["first_error_step"] if has_error else -1
        return None
    if task_id == "categorize":
        return SUBTYPES[raw["subtype"]].family if has_error else None
    return None
