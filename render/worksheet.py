"""Printable PDF worksheets (reportlab): problems with answer space, a copy-by-hand pack and an answer key.

The packs are for collecting real handwriting and real photos of the same items a run holds:
the items come from ``synth.worksheets.worksheet_items`` with the run's seeding, so every block's id
is the id ``mathstress generate`` gives that item. Every block prints its id in Courier (plain
text in the PDF, easy to OCR off a photo), and ``index.json`` says on which page of which pack
each id sits. The copy pack is FERMAT's protocol (§2.3): a writer copies the question and the
shown solution, mistakes included, by hand; one item per page so one photo is one item.
PDFs are written with reportlab's ``invariant`` mode: the same config gives the same bytes.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from matplotlib import get_data_path
from PIL import Image as PILImage
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4, letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import cm, inch
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import (
    CondPageBreak,
    Flowable,
    Image,
    KeepTogether,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from render.figures import draw_figure
from render.page import is_sentence
from synth.errors import ConfigError
from synth.records import Figure, Item

PAGE_SIZES = {"a4": A4, "letter": letter}
MARGIN = 1.8 * cm
LINE_PITCH = 0.85 * cm          # ruled-line spacing: roomy enough for school handwriting
HAND_CHARS_PER_LINE = 55        # characters of school handwriting one ruled line holds
MAX_COPY_LINES = 26             # ruled lines one letter-size page holds below the cut line and the ID line
RULE = colors.Color(0.62, 0.74, 0.86)
MUTED = colors.Color(0.35, 0.35, 0.4)
ID_FONT = "Courier"             # a standard PDF font: ids stay plain text in the file
PACKS = ("problems", "copy", "answer_key")


@cache
def _fonts() -> tuple[str, str]:
    """DejaVu Sans (shipped with matplotlib) has −, ×, ÷ and √, which the standard PDF fonts lack."""
    folder = Path(get_data_path()) / "fonts" / "ttf"
    pdfmetrics.registerFont(TTFont("DejaVuSans", str(folder / "DejaVuSans.ttf")))
    pdfmetrics.registerFont(TTFont("DejaVuSans-Bold", str(folder / "DejaVuSans-Bold.ttf")))
    return "DejaVuSans", "DejaVuSans-Bold"


@cache
def _styles() -> dict[str, ParagraphStyle]:
    body, bold = _fonts()
    return {
        "body": ParagraphStyle("body", fontName=body, fontSize=11.5, leading=16),
        "step": ParagraphStyle("step", fontName=body, fontSize=11.5, leading=17, leftIndent=0.9 * cm,
                               firstLineIndent=-0.9 * cm),
        "head": ParagraphStyle("head", fontName=bold, fontSize=12.5, leading=16),
        "id": ParagraphStyle("id", fontName=ID_FONT, fontSize=9.5, leading=12, alignment=TA_RIGHT),
        "id_left": ParagraphStyle("id_left", fontName=ID_FONT, fontSize=9, leading=12),
        "small": ParagraphStyle("small", fontName=body, fontSize=9.5, leading=13, textColor=MUTED),
        "title": ParagraphStyle("title", fontName=bold, fontSize=17, leading=22),
        "note": ParagraphStyle("note", fontName=body, fontSize=10, leading=14, textColor=MUTED),
        "warn": ParagraphStyle("warn", fontName=body, fontSize=10, leading=14, textColor=colors.darkred),
    }


@dataclass(frozen=True)
class WorksheetResult:
    out_dir: Path
    files: dict[str, Path]          # pack -> PDF
    pages: dict[str, int]           # pack -> page count
    problems: int                   # base problems
    copies: int                     # solutions in the copy pack (clean, error and superficial variants)
    warnings: tuple[str, ...]       # e.g. figures that could not be drawn


# -- flowables ---------------------------------------------------------------------------------


class _IdTag(Flowable):
    """Zero-size marker that notes the page an id was printed on (for index.json)."""

    def __init__(self, pages: dict[str, int], item_id: str) -> None:
        super().__init__()
        self.pages, self.item_id = pages, item_id
        self.width = self.height = 0

    def draw(self) -> None:
        self.pages.setdefault(self.item_id, self.canv.getPageNumber())


class _Ruled(Flowable):
    """``lines`` ruled writing lines across the frame, optionally with a label before the first."""

    def __init__(self, lines: int, label: str = "") -> None:
        super().__init__()
        self.lines, self.label = lines, label

    def wrap(self, avail_w: float, avail_h: float) -> tuple[float, float]:
        self.width = avail_w
        self.height = self.lines * LINE_PITCH
        return self.width, self.height

    def draw(self) -> None:
        c = self.canv
        c.setStrokeColor(RULE)
        c.setLineWidth(0.6)
        for i in range(self.lines):
            y = self.height - (i + 1) * LINE_PITCH
            c.line(0, y, self.width, y)
        if self.label:
            c.setFillColor(MUTED)
            c.setFont(_fonts()[0], 9)
            c.drawString(0, self.height - LINE_PITCH + 3, self.label)


class _AnswerLine(Flowable):
    """"Answer:" followed by a line to write on."""

    def wrap(self, avail_w: float, avail_h: float) -> tuple[float, float]:
        self.width, self.height = avail_w, 0.9 * cm
        return self.width, self.height

    def draw(self) -> None:
        c = self.canv
        c.setFont(_fonts()[1], 11)
        c.setFillColor(colors.black)
        c.drawString(0, 0.2 * cm, "Answer:")
        c.setStrokeColor(colors.black)
        c.setLineWidth(0.8)
        c.line(2.0 * cm, 0.15 * cm, min(self.width, 11 * cm), 0.15 * cm)


class _CutLine(Flowable):
    def wrap(self, avail_w: float, avail_h: float) -> tuple[float, float]:
        self.width, self.height = avail_w, 0.8 * cm
        return self.width, self.height

    def draw(self) -> None:
        c = self.canv
        c.setStrokeColor(MUTED)
        c.setDash(4, 3)
        c.line(0, 0.4 * cm, self.width, 0.4 * cm)
        c.setDash()
        c.setFillColor(MUTED)
        c.setFont(_fonts()[0], 8)
        text = "cut or fold here: photograph the part below"
        w = pdfmetrics.stringWidth(text, _fonts()[0], 8)
        c.setFillColor(colors.white)
        c.rect((self.width - w) / 2 - 4, 0.25 * cm, w + 8, 0.3 * cm, stroke=0, fill=1)
        c.setFillColor(MUTED)
        c.drawCentredString(self.width / 2, 0.31 * cm, text)


def _p(text: str, style: str) -> Paragraph:
    return Paragraph(escape(text), _styles()[style])


def _header(title: str, item_id: str, frame_w: float) -> Table:
    """The block's title on the left and its id (Courier, plain text) on the right."""
    table = Table([[_p(title, "head"), _p(f"ID {item_id}", "id")]], colWidths=[frame_w * 0.55, frame_w * 0.45])
    table.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "BOTTOM"), ("LEFTPADDING", (0, 0), (-1, -1), 0),
                               ("RIGHTPADDING", (0, 0), (-1, -1), 0), ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
                               ("LINEBELOW", (0, 0), (-1, 0), 0.8, colors.black)]))
    return table


class _Figures:
    """Draws each problem's figure once, as an embedded PNG; notes kinds that have no drawer."""

    def __init__(self) -> None:
        self.cache: dict[str, bytes | None] = {}
        self.warnings: list[str] = []

    def flowable(self, item: Item, max_w: float) -> Flowable | None:
        fig = item.problem.figure
        if fig is None:
            return None
        key = item.base_id
        if key not in self.cache:
            self.cache[key] = self._png(fig, item.base_id)
        png = self.cache[key]
        if png is None:
            return _p(f"[The figure of this problem ({fig.kind}) cannot be printed: no drawer is registered "
                      "for this figure kind. Add one in render/figures/.]", "warn")
        w_in, h_in = (fig.spec.get("size_in") or [3.0, 2.2])[:2]
        scale = min(1.0, max_w / (w_in * inch))
        img = Image(io.BytesIO(png), width=w_in * inch * scale, height=h_in * inch * scale)
        img.hAlign = "LEFT"
        return img

    def _png(self, fig: Figure, base_id: str) -> bytes | None:
        try:
            drawn = draw_figure(fig, 200)
        except KeyError as exc:
            self.warnings.append(f"{base_id}: {exc.args[0] if exc.args else exc}")
            return None
        buf = io.BytesIO()
        PILImage.fromarray(drawn.pixels).save(buf, format="PNG")
        return buf.getvalue()


def _question(item: Item, figures: _Figures, frame_w: float) -> list[Flowable]:
    p = item.problem
    out: list[Flowable] = [_p(p.question_text, "body")]
    fig = figures.flowable(item, frame_w * 0.8)
    if fig is not None:
        out += [Spacer(1, 0.2 * cm), fig]
    if p.choices:
        out.append(Spacer(1, 0.1 * cm))
        out += [_p(f"({letter})  {choice}", "body") for letter, choice in zip("ABCDE", p.choices)]
    return out


def _steps(item: Item) -> list[Flowable]:
    return [_p(f"{s.index}.\u2003{s.text}", "step") for s in item.variant.steps]


# -- the three packs ------------------------------------------------------------------------------


def _problems_pack(items: list[Item], figures: _Figures, frame_w: float, pages: dict[str, int]) -> list[Flowable]:
    story: list[Flowable] = [_p("Name: ______________________    Class: ________    Date: ____________", "note"),
                             Spacer(1, 0.5 * cm)]
    clean = [i for i in items if i.variant.kind == "clean"]
    for n, item in enumerate(clean, start=1):
        lines = max(4, min(10, len(item.problem.steps) + 2))
        block = [_IdTag(pages, item.id), _header(f"Problem {n}", item.id, frame_w), Spacer(1, 0.25 * cm),
                 *_question(item, figures, frame_w), Spacer(1, 0.2 * cm),
                 _Ruled(lines, "Show your working:"), _AnswerLine(), Spacer(1, 0.6 * cm)]
        story.append(KeepTogether(block))
    return story


def _copy_lines(item: Item) -> int:
    """Ruled lines to copy an item onto: handwriting runs larger than print, so a line per step plus room for
    the question (at least 12), and a sentence step (a student's answer, a chain of thought) the lines its
    words take, as far as one page holds."""
    lines = max(12, 4 + len(item.variant.steps) + (3 if item.problem.figure is not None else 0))
    wrapped = sum(math.ceil(len(s.text) / HAND_CHARS_PER_LINE) - 1 for s in item.variant.steps if is_sentence(s))
    return lines + min(wrapped, max(0, MAX_COPY_LINES - lines))


def _copy_pack(items: list[Item], figures: _Figures, frame_w: float, pages: dict[str, int]) -> list[Flowable]:
    story: list[Flowable] = []
    for n, item in enumerate(items, start=1):
        if item.variant.kind not in ("clean", "error", "superficial"):
            continue
        copy_lines = _copy_lines(item)
        story += [
            _IdTag(pages, item.id), _header(f"Copy {n}", item.id, frame_w), Spacer(1, 0.2 * cm),
            _p("Copy the question and the solution below by hand onto the lines under the cut line, exactly as "
               "written, including any mistakes. Write the ID first. Use your normal handwriting.", "note"),
            Spacer(1, 0.3 * cm), _p("Question", "head"), Spacer(1, 0.1 * cm), *_question(item, figures, frame_w),
            Spacer(1, 0.3 * cm), _p("Solution", "head"), Spacer(1, 0.1 * cm), *_steps(item),
            Spacer(1, 0.2 * cm), CondPageBreak((copy_lines + 2) * LINE_PITCH), _CutLine(),
            _Ruled(1, f"ID: {item.id}"), _Ruled(copy_lines), PageBreak(),
        ]
    return story[:-1] if story else story


def _label_lines(item: Item) -> list[str]:
    v = item.variant
    if v.error is not None:
        e = v.error
        proj = ", ".join(f"{k} {val}" for k, val in (("ErrorRadar", e.projections.get("errorradar")),
                                                    ("FERMAT", e.projections.get("fermat")),
                                                    ("MMErroR", e.projections.get("mmerror"))) if val)
        return [f"Error: {e.subtype} ({e.family}). First wrong step: {e.first_error_step}; "
                f"steps affected: {', '.join(map(str, e.error_steps))}; shown answer: {e.shown_answer}.",
                e.explanation, proj]
    if v.control is not None:
        return [f"No error: superficial edit ({v.control.subtype}); the solution is still correct."]
    return ["No error: the clean solution."]


def _answer_key(items: list[Item], figures: _Figures, frame_w: float, pages: dict[str, int]) -> list[Flowable]:
    story: list[Flowable] = []
    by_base: dict[str, list[Item]] = {}
    for item in items:
        by_base.setdefault(item.base_id, []).append(item)
    for n, (base, group) in enumerate(by_base.items(), start=1):
        clean = group[0]
        block: list[Flowable] = [_IdTag(pages, base), _header(f"Problem {n}", base, frame_w), Spacer(1, 0.2 * cm),
                                 _p(clean.problem.question_text, "body"), Spacer(1, 0.15 * cm),
                                 _p(f"Answer: {clean.problem.answer_text}", "head"), Spacer(1, 0.1 * cm),
                                 *[_p(f"{s.index}.\u2003{s.text}", "step") for s in clean.problem.steps]]
        rows = [[_p(v.id, "id_left"), [_p(line, "small") for line in _label_lines(v) if line]] for v in group[1:]]
        for v in group[1:]:
            block.insert(0, _IdTag(pages, v.id))
        if rows:
            table = Table(rows, colWidths=[frame_w * 0.3, frame_w * 0.7])
            table.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP"), ("LEFTPADDING", (0, 0), (0, -1), 0),
                                       ("LINEABOVE", (0, 0), (-1, -1), 0.3, RULE),
                                       ("ALIGN", (0, 0), (0, -1), "LEFT")]))
            block += [Spacer(1, 0.2 * cm), _p("Copy-pack variants", "note"), table]
        story.append(KeepTogether(block + [Spacer(1, 0.6 * cm)]))
    return story


def _decorate(title: str, pack_title: str) -> Callable[[Any, Any], None]:
    def on_page(canvas: Any, doc: Any) -> None:
        body, bold = _fonts()
        w, h = doc.pagesize
        canvas.saveState()
        canvas.setFont(bold, 10)
        canvas.drawString(MARGIN, h - 1.1 * cm, title)
        canvas.setFont(body, 9)
        canvas.setFillColor(MUTED)
        canvas.drawRightString(w - MARGIN, h - 1.1 * cm, pack_title)
        canvas.setStrokeColor(MUTED)
        canvas.setLineWidth(0.4)
        canvas.line(MARGIN, h - 1.3 * cm, w - MARGIN, h - 1.3 * cm)
        canvas.drawCentredString(w / 2, 0.9 * cm, f"page {doc.page}")
        canvas.restoreState()
    return on_page


PACK_TITLES = {"problems": "Problems", "copy": "Copy this solution by hand", "answer_key": "Answer key"}
PACK_BUILDERS = {"problems": _problems_pack, "copy": _copy_pack, "answer_key": _answer_key}


def write_worksheets(items: list[Item], out_dir: str | Path, *, title: str, page: str = "a4") -> WorksheetResult:
    """Write problems.pdf, copy.pdf, answer_key.pdf and index.json (id -> pack -> page) under ``out_dir``."""
    if page not in PAGE_SIZES:
        raise ConfigError(f"page must be one of {sorted(PAGE_SIZES)}, got {page!r}")
    if not items:
        raise ConfigError("no items to print; check the config's count and --limit")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = _Figures()
    files: dict[str, Path] = {}
    page_counts: dict[str, int] = {}
    index: dict[str, dict[str, int]] = {}
    for pack in PACKS:
        pages: dict[str, int] = {}
        path = out / f"{pack}.pdf"
        tmp = out / f".{pack}.pdf.tmp"
        doc = SimpleDocTemplate(str(tmp), pagesize=PAGE_SIZES[page], leftMargin=MARGIN, rightMargin=MARGIN,
                                topMargin=MARGIN, bottomMargin=MARGIN, title=f"{title}: {PACK_TITLES[pack]}",
                                author="mathstress", invariant=1)
        story = PACK_BUILDERS[pack](items, figures, doc.width, pages)
        decorate = _decorate(title, PACK_TITLES[pack])
        doc.build(story, onFirstPage=decorate, onLaterPages=decorate)
        tmp.replace(path)
        files[pack], page_counts[pack] = path, doc.page
        for item_id, number in pages.items():
            index.setdefault(item_id, {})[pack] = number
    (out / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    copies = sum(1 for i in items if i.variant.kind in ("clean", "error", "superficial"))
    return WorksheetResult(out, files, page_counts, sum(1 for i in items if i.variant.kind == "clean"
                                                        and not i.degradations), copies, tuple(figures.warnings))
