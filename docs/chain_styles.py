"""The README picture of the solution styles: one error variant as worked lines, a student's answer and a model's
chain of thought, printed and handwritten.

    python docs/chain_styles.py [--out docs/images/chain_styles.png] [--family statistics.mean.bar_chart]
        [--subtype misread_value] [--index 4] [--dpi 100]

Each column is one style (``synth.chains``), written as the pipeline writes it (the same base seed for the
clean twin and the variant); row 1 is printed, row 2 handwritten. The page is cut below its last step.
Deterministic: the same code gives the same PNG.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perturb.reasoning import inject  # noqa: E402
from perturb.reasoning.base import clean_variant  # noqa: E402
from render import render_page  # noqa: E402
from render.handwriting import sample_writer  # noqa: E402
from synth.chains import write_contents  # noqa: E402
from synth.generators import get_family  # noqa: E402
from synth.seeding import stage_rng  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STYLES = ("worked", "student", "cot")
WIDTH, GAP, HEAD, SIDE = 560, 14, 34, 28
FONT = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


def cut(pixels: np.ndarray, boxes: list, margin: int = 24) -> Image.Image:
    """The page down to just below its last step, scaled to the column width."""
    bottom = max((int(b.y1) for b in boxes if b.kind in ("step", "answer_area")), default=pixels.shape[0])
    img = Image.fromarray(pixels[: min(pixels.shape[0], bottom + margin)])
    return img.resize((WIDTH, round(img.height * WIDTH / img.width)), Image.Resampling.LANCZOS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "chain_styles.png")
    parser.add_argument("--family", default="statistics.mean.bar_chart")
    parser.add_argument("--subtype", default="misread_value")
    parser.add_argument("--index", type=int, default=4, help="which problem (its seed)")
    parser.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args()
    problem = get_family(args.family).build(np.random.default_rng(args.index), difficulty="easy",
                                            question_type="free", problem_id=f"styles{args.index}")
    variant = inject(problem, args.subtype, stage_rng(args.index, "docs"))
    if variant is None:
        raise SystemExit(f"{args.subtype} does not apply to this {args.family} problem; try another --index")
    writer = sample_writer(np.random.default_rng(args.index), neatness=1)
    cells: list[list[Image.Image]] = [[], []]
    for style in STYLES:
        styled = write_contents(problem, [(problem.id, clean_variant(problem)), ("e", variant)], style, args.index)
        shown = styled.contents[-1][1]
        for row, kw in enumerate(({}, {"style": "handwritten", "writer": writer, "seed": args.index})):
            drawn = render_page(problem, shown, dpi=args.dpi, **kw)
            cells[row].append(cut(drawn.pixels, list(drawn.page.layout)))
    heights = [max(c.height for c in row) for row in cells]
    sheet = Image.new("RGB", (SIDE + len(STYLES) * (WIDTH + GAP), HEAD + sum(h + GAP for h in heights)), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.truetype(str(FONT), 17)
    for c, style in enumerate(STYLES):
        draw.text((SIDE + c * (WIDTH + GAP) + 4, 8), style, fill=(20, 20, 20), font=font)
    y = HEAD
    for r, row in enumerate(cells):
        draw.text((4, y + 6), "PH"[r], fill=(90, 90, 90), font=font)
        for c, cell in enumerate(row):
            sheet.paste(cell, (SIDE + c * (WIDTH + GAP), y))
        y += heights[r] + GAP
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out, optimize=True)
    print(args.out)


if __name__ == "__main__":
    main()
