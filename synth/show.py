"""Contact sheets: an item beside its clean twin, with its labels, as one PNG."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from render.typeset import SANS
from render.typeset import font as load_font
from synth.errors import RunError
from synth.export import require_run
from synth.manifest import read_manifest

PANEL_HEIGHT = 900


def _find(run_dir: Path, item_id: str) -> dict[str, Any]:
    for row in read_manifest(run_dir):
        if row["id"] == item_id:
            return row
    raise RunError(f"no item {item_id!r} in {run_dir / 'manifest.jsonl'}; ids look like "
                   f"{next(read_manifest(run_dir))['id']!r}")


def _panel(run_dir: Path, rel: str | None, title: str) -> Image.Image:
    font = load_font(SANS, 22)
    if rel is None:
        img = Image.new("RGB", (600, PANEL_HEIGHT), (235, 235, 235))
        ImageDraw.Draw(img).text((20, 20), "(text-only run: no image)", font=font, fill=(60, 60, 60))
    else:
        img = Image.open(run_dir / rel).convert("RGB")
        scale = PANEL_HEIGHT / img.height
        img = img.resize((max(1, round(img.width * scale)), PANEL_HEIGHT), Image.Resampling.LANCZOS)
    framed = Image.new("RGB", (img.width, img.height + 40), (255, 255, 255))
    framed.paste(img, (0, 40))
    ImageDraw.Draw(framed).text((8, 8), title, font=font, fill=(20, 20, 120))
    return framed


def _labels(row: dict[str, Any]) -> list[str]:
    lines = [f"id: {row['id']}   base: {row['base_id']}   variant: {row['variant']}",
             f"family: {row['family']} ({row['difficulty']}, {row['question_type']})",
             f"answer: {row['answer']['text']}   shown: {row['shown_answer']}   correct: {row['is_correct']}"]
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


def contact_sheet(run_dir: str | Path, item_id: str, out: str | Path | None = None) -> Path:
    run_dir = Path(run_dir)
    require_run(run_dir)
    row = _find(run_dir, item_id)
    panels = [_panel(run_dir, row["image"], f"item {row['id']}")]
    if row["id"] != row["base_id"]:
        panels.append(_panel(run_dir, row["clean_image"], f"clean twin {row['base_id']}"))
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
    path = Path(out) if out is not None else run_dir / "show" / f"{item_id}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path, format="PNG")
    return path
