"""Printed page composer: question, numbered solution steps and an answer area, with boxes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from synth.records import Box, Problem, RenderedPage, Variant

PAGE_INCHES = {"a4": (8.27, 11.69), "phone": (6.0, 8.0)}
PAPER_RGB = (250, 249, 245)
RULE_RGB = (170, 195, 225)
INK_RGB = (25, 25, 30)
FONT_FILE = "DejaVuSans.ttf"


@dataclass(frozen=True)
class PageImage:
    pixels: np.ndarray  # H x W x 3, uint8, RGB
    page: RenderedPage


@cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    from matplotlib import get_data_path  # the DejaVu fonts ship with matplotlib

    return ImageFont.truetype(str(Path(get_data_path()) / "fonts" / "ttf" / FONT_FILE), size)


def _wrap(draw: ImageDraw.ImageDraw, words: list[str], font: ImageFont.FreeTypeFont, width: int) -> list[list[str]]:
    lines: list[list[str]] = [[]]
    for word in words:
        trial = " ".join(lines[-1] + [word])
        if lines[-1] and draw.textlength(trial, font=font) > width:
            lines.append([word])
        else:
            lines[-1].append(word)
    return lines


def _paper(draw: ImageDraw.ImageDraw, kind: str, w: int, h: int, pitch: int, margin: int) -> None:
    if kind == "lined":
        for y in range(margin + pitch, h - margin // 2, pitch):
            draw.line([(0, y), (w, y)], fill=RULE_RGB, width=1)
        draw.line([(margin - pitch // 3, 0), (margin - pitch // 3, h)], fill=(225, 150, 150), width=1)
    elif kind == "grid":
        step = max(8, pitch // 2)
        for y in range(0, h, step):
            draw.line([(0, y), (w, y)], fill=RULE_RGB, width=1)
        for x in range(0, w, step):
            draw.line([(x, 0), (x, h)], fill=RULE_RGB, width=1)


def render_page(problem: Problem, variant: Variant, *, page: str = "a4", paper: str = "plain",
                dpi: int = 100) -> PageImage:
    """Draw the question and the variant's steps; every line, token and step gets a box."""
    w_in, h_in = PAGE_INCHES[page]
    width, height = int(round(w_in * dpi)), int(round(h_in * dpi))
    size = max(8, round(12 * dpi / 72))
    font, bold = _font(size), _font(round(size * 1.1))
    line_h = round(size * 1.6)
    margin = round(0.8 * dpi)
    img = Image.new("RGB", (width, height), PAPER_RGB)
    draw = ImageDraw.Draw(img)
    _paper(draw, paper, width, height, line_h, margin)
    boxes: list[Box] = []
    y = margin

    def put(text: str, x: int, fnt: ImageFont.FreeTypeFont, kind: str, ref: str) -> Box:
        draw.text((x, y), text, font=fnt, fill=INK_RGB)
        x0, y0, x1, y1 = draw.textbbox((x, y), text, font=fnt)
        box = Box(kind, ref, float(x0), float(y0), float(x1), float(y1))
        boxes.append(box)
        return box

    put(f"Problem ({problem.id})", margin, bold, "header", "problem")
    y += round(line_h * 1.4)
    words = problem.question_text.split()
    token = 0
    for n, line in enumerate(_wrap(draw, words, font, width - 2 * margin), start=1):
        x = margin
        first = token
        for word in line:
            draw.text((x, y), word, font=font, fill=INK_RGB)
            x0, y0, x1, y1 = draw.textbbox((x, y), word, font=font)
            boxes.append(Box("question_token", str(token), float(x0), float(y0), float(x1), float(y1)))
            token += 1
            x += round(draw.textlength(word + " ", font=font))
        toks = [b for b in boxes[-(token - first):]]
        boxes.append(Box("question_line", str(n), min(b.x0 for b in toks), min(b.y0 for b in toks),
                         max(b.x1 for b in toks), max(b.y1 for b in toks)))
        y += line_h
    if problem.choices:
        for letter, choice in zip("ABCDE", problem.choices):
            put(f"({letter}) {choice}", margin + size, font, "choice", letter)
            y += line_h
    y += line_h
    put("Solution", margin, bold, "header", "solution")
    y += round(line_h * 1.3)
    for step in variant.steps:
        number = f"{step.index}."
        draw.text((margin, y), number, font=font, fill=INK_RGB)
        put(step.text, margin + round(size * 2.2), font, "step", str(step.index))
        y += line_h
    y += line_h // 2
    label = put("Answer:", margin, bold, "header", "answer")
    area_x0 = label.x1 + size
    draw.line([(area_x0, label.y1 + 2), (area_x0 + 4 * dpi // 2, label.y1 + 2)], fill=INK_RGB, width=1)
    boxes.append(Box("answer_area", "answer", float(area_x0), float(label.y0 - size // 2),
                     float(area_x0 + 4 * dpi // 2), float(label.y1 + 3)))
    if y + line_h > height:
        raise ValueError(f"{problem.id}: the solution does not fit on a {page} page at {dpi} dpi")
    meta = RenderedPage(style="printed", font="DejaVu Sans", paper=paper, ink="black", dpi=dpi,
                        width=width, height=height, layout=tuple(boxes))
    return PageImage(np.asarray(img, dtype=np.uint8), meta)
