"""Contact sheets: an item beside its clean twin, with its labels, as one PNG."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, UnidentifiedImageError

from render.typeset import SANS
from render.typeset import font as load_font
from synth.errors import ConfigError, RunError
from synth.export import require_run, where_row
from synth.manifest import read_manifest
from synth.safepath import check_not_in_run_internals, check_row_ids, inside

PANEL_HEIGHT = 900


def _find(run_dir: Path, item_id: str) -> tuple[str, dict[str, Any]]:
    for n, row in enumerate(read_manifest(run_dir), start=1):
        if row.get("id") == item_id:
            where = where_row(run_dir, n)
            check_row_ids(row, where=where)  # the id names the default output file
            return where, row
    raise RunError(f"no item {item_id!r} in {run_dir / 'manifest.jsonl'}; ids look like "
                   f"{next(read_manifest(run_dir))['id']!r}")


def _read_image(run_dir: Path, rel: str, key: str, where: str) -> Image.Image:
    """The image a row names, read only from inside the run (symlinks followed) and only if it is one."""
    path = inside(run_dir, rel, field=key, where=where)
    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except FileNotFoundError:
        raise RunError(f"{where}: {key} {rel!r} is missing from {run_dir}; regenerate the run") from None
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise RunError(f"{where}: {key} {rel!r} is not an image mathstress can read ({type(exc).__name__}); "
                       "regenerate the run") from None


def _panel(run_dir: Path, rel: str | None, title: str, key: str = "image", where: str = "") -> Image.Image:
    font = load_font(SANS, 22)
    if rel is None:
        img = Image.new("RGB", (600, PANEL_HEIGHT), (235, 235, 235))
        ImageDraw.Draw(img).text((20, 20), "(text-only run: no image)", font=font, fill=(60, 60, 60))
    else:
        img = _read_image(run_dir, rel, key, where)
        scale = PANEL_HEIGHT / img.height
        img = img.resize((max(1, round(img.width * scale)), PANEL_HEIGHT), Image.Resampling.LANCZOS)
    framed = Image.new("RGB", (img.width, img.height + 40), (255, 255, 255))
    framed.paste(img, (0, 40))
    ImageDraw.Draw(framed).text((8, 8), title, font=font, fill=(20, 20, 120))
    return framed


def _labels(row: dict[str, Any]) -> list[str]:
    lines = [f"id: {row['id']}   base: {row['base_id']}   variant: {row['variant']}",
             f"family: {row['family']} ({row['difficulty']}, {row['question_type']})",
             f"answer: {row['answer']['text']}   shown: {row['shown_answer']}   "
             f"solution correct: {row['is_correct']}"]  # an intermediate slip corrected later: the answer is right
    if row["error"]:
        e = row["error"]
        lines += [f"error: {e['family']}.{e['subtype']}  first wrong step: {e['first_error_step']}"
                  f"  error steps: {e['error_steps']}  propagated: {e['propagated']}",
                  f"projections: {json.dumps(e['projections'])}"]
        lines += textwrap.wrap(f"why: {e['explanation']}", 110)
    if row["control"]:
        lines.append(f"superficial control: {row['control']['subtype']}")
    for d in row["degradations"]:
        lines += textwrap.wrap(f"degradation: {d['subtype']} severity {d['severity']}  "
                               f"measured: {json.dumps(d['measured'])}", 110)
    return lines


def _is_png(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(8) in (b"\x89PNG\r\n\x1a\n", b"")  # an empty placeholder (mktemp) may be filled
    except OSError:
        return False


def contact_sheet(run_dir: str | Path, item_id: str, out: str | Path | None = None) -> Path:
    """Write the contact sheet of ``item_id`` to ``out`` (a path the caller chose) or RUN/show/<id>.png."""
    run_dir = Path(run_dir)
    require_run(run_dir)
    where, row = _find(run_dir, item_id)
    # The default path is made from the row's id, so it is proven to stay in the run before any work.
    path = Path(out) if out is not None else inside(run_dir, f"show/{row['id']}.png", field="id", where=where)
    if path.is_dir():
        raise ConfigError(f"--out {str(path)!r} is a folder; give a PNG file path")
    if out is not None:
        check_not_in_run_internals(path)  # a run's own page image, checksummed, was replaced by the contact sheet
    if out is not None and path.exists() and not _is_png(path):  # a user's notes.txt was silently replaced
        raise ConfigError(f"--out {str(path)!r} exists and is not a PNG image, so it is not replaced; choose "
                          "another --out")
    panels = [_panel(run_dir, row["image"], f"item {row['id']}", "image", where)]
    if row["id"] != row["base_id"]:
        panels.append(_panel(run_dir, row["clean_image"], f"clean twin {row['base_id']}", "clean_image", where))
    lines = _labels(row)
    font = load_font(SANS, 20)
    width = max(sum(p.width for p in panels) + 20 * (len(panels) + 1), 1300)
    height = max(p.height for p in panels) + 40 + 30 * len(lines) + 20
    sheet = Image.new("RGB", (width, height), (255, 255, 255))
    x = 20
    for p in panels:
        sheet.paste(p, (x, 20))
        x += p.width + 20
    draw = ImageDraw.Draw(sheet)
    y = max(p.height for p in panels) + 40
    for line in lines:
        draw.text((20, y), line, font=font, fill=(0, 0, 0))
        y += 30
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sheet.save(path, format="PNG")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}; choose another --out") from None
    return path
