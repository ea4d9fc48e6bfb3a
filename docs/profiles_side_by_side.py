"""The README picture of the capture profiles: one page clean and through each profile, printed and handwritten.

    python docs/profiles_side_by_side.py [--out docs/images/profiles_side_by_side.png] [--index 3] [--dpi 110]
    python docs/profiles_side_by_side.py --profile desk_lamp_tilted --out docs/images/profile_desk_lamp.png

Row 1 is a printed page, row 2 the same problem handwritten; column 1 is the clean page and the others
are the profiles of configs/capture_profiles.yaml in order, each applied as the pipeline applies it
(``perturb.photo.profile.capture`` with the profile's own generator for that base), so the picture
shows what `mathstress generate capture_profiles` writes. Deterministic: the same code gives the same PNG.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perturb.photo.base import ReversePage  # noqa: E402
from perturb.photo.handwritten import page_text  # noqa: E402
from perturb.photo.profile import capture  # noqa: E402
from perturb.reasoning.base import clean_variant  # noqa: E402
from render import render_page  # noqa: E402
from render.handwriting import sample_writer  # noqa: E402
from synth.config import load_config  # noqa: E402
from synth.generators import get_family  # noqa: E402
from synth.seeding import stage_rng  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAMILY = "geometry.triangle.angle_sum"
CELL = (300, 400)  # width, height of one photo's box in the picture
GAP, HEAD, SIDE = 12, 34, 28
FONT = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


def pages(index: int, dpi: int) -> list[tuple[str, object, object, ReversePage]]:
    """(style, drawn page, page text, reverse side) for the printed and the handwritten page of one problem."""
    fam = get_family(FAMILY)
    problem = fam.build(np.random.default_rng(index), difficulty="medium", question_type="free",
                        problem_id=f"figure{index}")
    other = get_family("algebra.linear.two_step").build(np.random.default_rng(index + 1), difficulty="medium",
                                                        question_type="free", problem_id=f"figure{index + 1}")
    variant = clean_variant(problem)
    back = render_page(other, clean_variant(other), dpi=dpi)
    writer = sample_writer(np.random.default_rng(index), neatness=1)
    printed = render_page(problem, variant, dpi=dpi)
    hand = render_page(problem, variant, dpi=dpi, style="handwritten", writer=writer, seed=index)
    text = page_text(problem, variant)
    return [(style, drawn, text, ReversePage(back.pixels, "back")) for style, drawn in
            (("printed", printed), ("handwritten", hand))]


def fit(pixels: np.ndarray) -> Image.Image:
    """The photo scaled to fit one cell, centred on the picture's grey."""
    img = Image.fromarray(pixels)
    img.thumbnail(CELL, Image.Resampling.LANCZOS)
    cell = Image.new("RGB", CELL, (236, 236, 236))
    cell.paste(img, ((CELL[0] - img.width) // 2, (CELL[1] - img.height) // 2))
    return cell


def through(profile: object, drawn: object, text: object, back: ReversePage, index: int) -> np.ndarray:
    """The page photographed through ``profile`` as the pipeline does it (the profile's own generator for the base)."""
    steps = [(s.subtype, s.severity) for s in profile.ops]
    return capture(drawn.pixels, drawn.page, steps, stage_rng(index, f"profile:{profile.name}"), reverse=back,
                   text=text).pixels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "profiles_side_by_side.png")
    parser.add_argument("--index", type=int, default=3, help="which problem (its seed)")
    parser.add_argument("--dpi", type=int, default=110)
    parser.add_argument("--profile", default=None,
                        help="write only this profile's photo of the printed page, 600 px wide (the README's"
                             " docs/images/profile_desk_lamp.png is --profile desk_lamp_tilted)")
    args = parser.parse_args()
    profiles = load_config(ROOT / "configs" / "capture_profiles.yaml").degrade.profiles
    if args.profile is not None:
        chosen = [p for p in profiles if p.name == args.profile]
        if not chosen:
            raise SystemExit(f"--profile: no {args.profile!r} in configs/capture_profiles.yaml;"
                             f" choose from {[p.name for p in profiles]}")
        _, drawn, text, back = pages(args.index, args.dpi)[0]
        img = Image.fromarray(through(chosen[0], drawn, text, back, args.index))
        img.thumbnail((600, 900), Image.Resampling.LANCZOS)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        img.save(args.out, optimize=True)
        return
    columns = ["clean", *[p.name for p in profiles]]
    width = SIDE + len(columns) * (CELL[0] + GAP)
    rows = pages(args.index, args.dpi)
    sheet = Image.new("RGB", (width, HEAD + len(rows) * (CELL[1] + GAP)), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.truetype(str(FONT), 17)
    for c, name in enumerate(columns):
        x = SIDE + c * (CELL[0] + GAP)
        draw.text((x + CELL[0] // 2, HEAD // 2), name, fill=(20, 20, 20), font=font, anchor="mm")
    for r, (style, drawn, text, back) in enumerate(rows):
        y = HEAD + r * (CELL[1] + GAP)
        label = Image.new("RGB", (CELL[1], SIDE), (255, 255, 255))
        ImageDraw.Draw(label).text((CELL[1] // 2, SIDE // 2), style, fill=(20, 20, 20), font=font, anchor="mm")
        sheet.paste(label.rotate(90, expand=True), (0, y))
        sheet.paste(fit(drawn.pixels), (SIDE, y))
        for c, profile in enumerate(profiles, start=1):
            sheet.paste(fit(through(profile, drawn, text, back, args.index)), (SIDE + c * (CELL[0] + GAP), y))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out, optimize=True)


if __name__ == "__main__":
    main()
