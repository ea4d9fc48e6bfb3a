"""OCR baselines: page structure from OCR lines, a real two-page read, the OCR cache and the install hint."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.errors import ConfigError
from synth.evaluate import evaluate_run, get_model, get_task, load_items
from synth.evaluate.ocr import OcrLine, split_page


def _line(text: str, y: float, x: float = 80, width: float = 200) -> OcrLine:
    return OcrLine(text, (x, y, x + width, y + 12), 0.9)


PAGE = [
    _line("Problem (quickstart-000000)", 80),
    _line("A number x satisfies 10x + 8 = -42. What is x?", 118),
    _line("Soluton", 172),                        # an OCR slip in the heading
    _line("10x + 8 - 8 = -42 - 8", 206, x=117),
    _line("1.", 206, x=80, width=10),             # the detector split the label off its step
    _line("2. 10x = -50", 232),
    _line("3. x = -50 ÷ 10", 259),
    _line("Answer: x = -5", 326),                 # a handwritten answer is not a step
]


def test_split_page_finds_question_and_steps_in_reading_order() -> None:
    page = split_page(list(reversed(PAGE)))
    assert page.question == ("A number x satisfies 10x + 8 = -42. What is x?",)
    assert page.steps == ("10x + 8 - 8 = -42 - 8", "10x = -50", "x = -50 ÷ 10")


def test_without_a_solution_heading_labelled_lines_are_the_steps() -> None:
    lines = [_line("Question 3", 40), _line("Evaluate 2 + 3 × 4.", 60), _line("1. 2 + 12", 90), _line("2. 14", 110)]
    page = split_page(lines)
    assert page.question == ("Evaluate 2 + 3 × 4.",) and page.steps == ("2 + 12", "14")


def test_a_question_that_starts_with_a_heading_word_is_kept() -> None:
    page = split_page([_line("Question: what is 2 + 2?", 40), _line("Solution", 70), _line("1. 4", 90)])
    assert page.question == ("Question: what is 2 + 2?",) and page.steps == ("4",)


needs_rapidocr = pytest.mark.skipif(importlib.util.find_spec("rapidocr") is None, reason="ocr extra not installed")


@pytest.mark.slow   # 2.5 s alone; 12 s on the shared 2-core machine under load
@needs_rapidocr
def test_ocr_verifier_reads_two_pages_and_reuses_the_ocr_for_other_tasks(tiny_run: Path, tmp_path: Path) -> None:
    first = get_model("ocr-verifier")
    # One base problem: its clean page, its error variant and two blurred photos of the clean page.
    result = evaluate_run(tiny_run, first, [get_task("transcribe")], out_dir=tmp_path, limit=1)
    transcribe = result.results["tasks"]["transcribe"]["metrics"]
    pages = {(tiny_run / item.image).read_bytes() for item in load_items(tiny_run, limit=1)}
    assert transcribe["n"] == 4 and len(first.ocr_seconds) == len(pages)   # each distinct page read once
    assert result.results["model"]["ocr_pages"]["n"] == len(pages)
    read = {r["variant"]: r["credit"] for r in map(json.loads, (tmp_path / "responses" / "transcribe.jsonl").open())
            if r["variant"] in ("clean", "error")}
    assert min(read.values()) > 0.95                                # printed pages read almost exactly

    again = get_model("ocr-verifier")                               # a new process would start like this
    scored = evaluate_run(tiny_run, again, [get_task("detect"), get_task("localize")], out_dir=tmp_path, limit=1)
    assert again.ocr_seconds == []                                  # the pages came from the OCR cache
    assert scored.results["tasks"]["detect"]["metrics"]["n"] == 4
    records = [json.loads(x) for x in (tmp_path / "responses" / "localize.jsonl").open()]
    assert all(r["response"].startswith("Error Step: ") for r in records)


def test_ocr_models_refuse_tasks_they_cannot_answer_before_any_call(tiny_run: Path, tmp_path: Path) -> None:
    if importlib.util.find_spec("rapidocr") is None:
        pytest.skip("ocr extra not installed")
    with pytest.raises(ConfigError, match="cannot answer categorize"):
        evaluate_run(tiny_run, get_model("ocr-verifier"), [get_task("detect"), get_task("categorize")],
                     out_dir=tmp_path)
    assert not (tmp_path / "cache.sqlite").exists()


def test_transcribe_needs_the_image(tiny_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--input image"):
        evaluate_run(tiny_run, get_model("random"), [get_task("transcribe")], out_dir=tmp_path, input_mode="text")


def test_missing_ocr_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "rapidocr" else real(name, *a))
    with pytest.raises(ConfigError, match=r'pip install "mathstress\[ocr\]"'):
        get_model("ocr-verifier")


def test_eval_defaults_to_the_ocr_verifier(tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "rapidocr" else real(name, *a))
    result = CliRunner().invoke(app, ["eval", str(tiny_run), "--task", "detect", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "ocr-verifier" in result.output and "mathstress[ocr]" in result.output


def test_a_stacked_fraction_folds_into_its_step() -> None:
    # `3. t = 15 ÷ 3` typeset as a fraction: OCR returns the denominator as its own row below.
    lines = [_line("Solution", 60), _line("1. 3t + 14 - 14 = 29 - 14", 90), _line("2. 3t = 15", 116),
             _line("3. t = 15", 140), _line("3", 152, x=130, width=10), _line("4. t = 5", 180)]
    assert split_page(lines).steps == ("3t + 14 - 14 = 29 - 14", "3t = 15", "t = 15 / (3)", "t = 5")
    # A numerator on its own row above the labelled `y =` row comes before the bar.
    lines = [_line("Solution", 60), _line("1. 6y = 48", 90), _line("48", 112, x=130, width=20),
             _line("2. y =", 124), _line("6", 136, x=130, width=10), _line("3. y = 8", 170)]
    assert split_page(lines).steps == ("6y = 48", "y = 48 / (6)", "y = 8")


def test_a_page_the_ocr_reads_nothing_on_is_a_wrong_transcript_not_a_failed_call(tiny_run: Path,
                                                                                 tmp_path: Path) -> None:
    from synth.evaluate.models.ocr import OcrVerifier

    class Blind:
        name = "blind"

        def read(self, path: Path) -> list[OcrLine]:
            return []

    model = OcrVerifier(Blind(), "blind-verifier", {"engine": "blind"})
    result = evaluate_run(tiny_run, model, [get_task("transcribe")], out_dir=tmp_path, limit=1)
    task = result.results["tasks"]["transcribe"]
    assert task["counts"]["failed"] == 0
    assert task["metrics"]["unparsed"] == task["metrics"]["n"] == 4 and task["metrics"]["cer"] == 1.0


def test_a_line_tesseract_returns_no_text_for_is_skipped_not_a_crash(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """tesserocr raises RuntimeError("No text returned") for a detected line with no text (seen on shadowed
    photos): the reader skips that line and keeps the others instead of failing the page."""
    tesserocr = pytest.importorskip("tesserocr")
    from PIL import Image

    from synth.evaluate.ocr import TesseractEngine

    class _Line:
        def __init__(self, text: str | None) -> None:
            self.text = text

        def GetUTF8Text(self, level: object) -> str:  # noqa: N802 - tesserocr's name
            if self.text is None:
                raise RuntimeError("No text returned")
            return self.text

        def BoundingBox(self, level: object) -> tuple[int, int, int, int]:  # noqa: N802
            return (1, 2, 30, 12)

        def Confidence(self, level: object) -> float:  # noqa: N802
            return 90.0

    class _Api:
        def SetImage(self, image: object) -> None:  # noqa: N802
            pass

        def Recognize(self) -> None:  # noqa: N802
            pass

        def GetIterator(self) -> object:  # noqa: N802
            return object()

    monkeypatch.setattr(tesserocr, "iterate_level", lambda it, level: iter([_Line(None), _Line("x = 5")]))
    page = tmp_path / "page.png"
    Image.new("L", (40, 20), 255).save(page)
    engine = TesseractEngine()
    engine._api = _Api()
    lines = engine.read(page)
    assert [line.text for line in lines] == ["x = 5"]


def test_tesseract_takes_its_own_settings_and_names_one_it_does_not_have(tmp_path: Path) -> None:
    """``TesseractEngine(params)`` sets tesseract's variables beyond the model and layout (the CER benchmark's
    what-if reads with Sauvola's local threshold, thresholding_method 2); a setting tesseract does not know is a
    ConfigError that names it, not a reading made with the default silently."""
    pytest.importorskip("tesserocr")
    from PIL import Image, ImageDraw

    from synth.evaluate.ocr import TESSERACT_PARAMS, TesseractEngine

    page = tmp_path / "page.png"
    image = Image.new("L", (400, 80), 255)
    ImageDraw.Draw(image).text((10, 30), "x = 5", fill=0)
    image.save(page)
    engine = TesseractEngine({**TESSERACT_PARAMS, "thresholding_method": 2})
    engine.read(page)
    assert engine._api.GetVariableAsString("thresholding_method") == "2"
    assert TesseractEngine()._api is None and TesseractEngine().params == TESSERACT_PARAMS
    unknown = TesseractEngine({**TESSERACT_PARAMS, "no_such_setting": 1})
    for _ in range(2):  # and again on the next page: never a reading without the setting
        with pytest.raises(ConfigError, match="no_such_setting"):
            unknown.read(page)
