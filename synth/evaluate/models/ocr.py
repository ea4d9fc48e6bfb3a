"""OCR baselines: ocr-verifier (rapidocr) and tesseract-verifier read the page, our verifier judges the steps read.

The OCR result of each page image is kept in this adapter's own store (``OcrStore``: a table beside the
responses in the evaluation's cache.sqlite, by engine, settings and image hash), so a second task on the
same pages, or a re-run, never reads a page again.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from synth.evaluate.cache import CACHE_FILE, connect, strict_json
from synth.evaluate.models import Adapter, ModelCallError, Request, register_model
from synth.evaluate.models._verifier import check_task, verdict_answer, verify_untrusted
from synth.evaluate.ocr import (
    LOGIC_VERSION,
    RAPIDOCR_PARAMS,
    TESSERACT_PARAMS,
    OcrLine,
    Page,
    RapidEngine,
    TesseractEngine,
    checkable,
    require,
    split_page,
)
from synth.evaluate.tasks import Task
from synth.records import Item, Step

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ocr (
    key          TEXT PRIMARY KEY,
    engine       TEXT NOT NULL,
    image_sha256 TEXT NOT NULL,
    lines        TEXT NOT NULL,
    seconds      REAL NOT NULL,
    created_at   REAL NOT NULL
)
"""


class OcrStore:
    """What an engine read on each page image: one row per (engine, settings, image hash), every write
    committed at once. It shares the evaluation's SQLite file with the response store, in its own table."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = connect(self.path, _SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> OcrStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: str) -> tuple[list[Any], float] | None:
        """The stored lines (text, box, score) and reading seconds for ``key``, or None."""
        row = self._db.execute("SELECT lines, seconds FROM ocr WHERE key = ?", (key,)).fetchone()
        return None if row is None else (json.loads(row[0]), float(row[1]))

    def put(self, key: str, *, engine: str, image_sha256: str, lines: list[Any], seconds: float) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO ocr (key, engine, image_sha256, lines, seconds, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (key, engine, image_sha256, strict_json(lines), seconds, time.time()))

    def seconds(self, engine: str) -> list[float]:
        """Seconds each stored page took to read with ``engine`` (for per-page timing reports)."""
        return [float(r[0]) for r in self._db.execute("SELECT seconds FROM ocr WHERE engine = ? ORDER BY rowid",
                                                      (engine,))]


class OcrVerifier(Adapter):
    """Reads the page with an OCR engine, then our safe parser and verifier judge the steps it read.

    It knows the problem's parameters (like text-verifier) but sees the solution only through
    OCR, so its gap to text-verifier is what reading the page costs. Answers detect, localize
    and transcribe.
    """

    def __init__(self, engine: RapidEngine | TesseractEngine, model_id: str, params: dict[str, Any]) -> None:
        self.id = model_id
        self.engine = engine
        self.params = params
        self._store_path: Path | None = None   # set by prepare: the evaluation's cache file
        self._store: OcrStore | None = None
        self._pages: dict[str, Page] = {}
        self._lock: asyncio.Lock | None = None
        self._verdicts: dict[tuple[str, str], Any] = {}   # (item, page) -> verdict: detect and localize share one
        self.ocr_seconds: list[float] = []     # per page actually read in this process (not cached)
        self.ocr_cpu_seconds: list[float] = []  # the reading thread's CPU time per page (steadier on a busy machine)

    def prepare(self, task: Task, items: Sequence[Item], *, workdir: Path | None = None) -> None:
        check_task(self.id, task, also=("transcribe",), hint=" (use an openai:<model> endpoint for that task)")
        if workdir is not None:   # without an evaluation folder, pages are kept in memory only
            self._store_path = Path(workdir) / CACHE_FILE   # opened at the first page read, not before

    def describe(self) -> dict[str, Any]:
        """How long the engine took per page, over every page stored for this evaluation."""
        if self._store_path is None or not self._store_path.is_file():
            return {}
        with OcrStore(self._store_path) as store:
            seconds = store.seconds(self.engine.name)
        if not seconds:
            return {}
        return {"ocr_pages": {"n": len(seconds), "mean_seconds": float(np.mean(seconds)),
                              "median_seconds": float(np.median(seconds))}}

    async def aclose(self) -> None:
        self._lock = None   # the lock belongs to the event loop that is closing
        if self._store is not None:
            self._store.close()
            self._store = None

    def _ocr_key(self, sha: str) -> str:
        engine = {k: v for k, v in self.params.items() if k != "logic"}
        return f"{self.engine.name}:{json.dumps(engine, sort_keys=True)}:{sha}"

    def _open_store(self) -> OcrStore | None:
        if self._store is None and self._store_path is not None:
            self._store = OcrStore(self._store_path)
        return self._store

    async def page(self, request: Request) -> Page:
        if request.image_path is None or request.image_sha256 is None:
            raise ModelCallError(f"{self.id} reads the page image; run with --input image")
        sha = request.image_sha256
        if sha in self._pages:
            return self._pages[sha]
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:     # one page at a time: the engines are not thread-safe, and cores are few
            if sha in self._pages:
                return self._pages[sha]
            key = self._ocr_key(sha)
            store = self._open_store()
            stored = store.get(key) if store is not None else None
            if stored is not None:
                lines, seconds = stored
                page = split_page([OcrLine(t, tuple(b), s) for t, b, s in lines], seconds)
            else:
                start = time.perf_counter()
                try:
                    raw, cpu = await asyncio.to_thread(_timed_read, self.engine, request.image_path)
                except (OSError, RuntimeError, ValueError) as exc:
                    raise ModelCallError(f"{self.engine.name} failed on {request.image_path.name}: {exc}") from exc
                seconds = time.perf_counter() - start
                self.ocr_seconds.append(seconds)
                self.ocr_cpu_seconds.append(cpu)
                if store is not None:
                    store.put(key, engine=self.engine.name, image_sha256=sha, seconds=seconds,
                              lines=[[ln.text, list(ln.box), ln.score] for ln in raw])
                page = split_page(raw, seconds)
            self._pages[sha] = page
            return page

    async def respond(self, request: Request) -> str:
        page = await self.page(request)
        task, item = request.task, request.item
        if task.id == "transcribe":
            text = "\n".join([" ".join(page.question), *page.steps])
            # Nothing read is this model's answer, not a failed call: a bare heading, which parses to no
            # transcript and is scored 0 (an empty reply would be stored as a failure and stop the evaluation).
            return text if text.strip() else "Transcription:"
        key = (item.id, request.image_sha256 or "")
        if key not in self._verdicts:
            # value = text: the verifier judges what was read, never the generator's hidden values.
            steps = [Step(index=i, rule="ocr", value=checkable(text), text=text, latex=text)
                     for i, text in enumerate(page.steps, 1)]
            # Judged in the bounded worker: a reading is untrusted input (stored as a failure when it cannot be
            # judged). One verdict per item and page serves every task that asks about it.
            self._verdicts[key] = verify_untrusted(item.problem, steps)
        return verdict_answer(task, self._verdicts[key])


def _timed_read(engine: RapidEngine | TesseractEngine, path: Path) -> tuple[list[OcrLine], float]:
    """The engine's lines and the CPU time this thread spent reading them (onnxruntime runs on it)."""
    start = time.thread_time()
    lines = engine.read(path)
    return lines, time.thread_time() - start


@register_model("ocr-verifier")
def _rapid(arg: str = "", **_: Any) -> OcrVerifier:
    """The default: rapidocr reads the page, our verifier judges the steps (detect, localize, transcribe)."""
    require("rapidocr", "ocr-verifier")
    require("onnxruntime", "ocr-verifier")
    params = {"engine": "rapidocr", "version": importlib.metadata.version("rapidocr"), "logic": LOGIC_VERSION,
              "settings": {k: v for k, v in RAPIDOCR_PARAMS.items() if k != "Global.log_level"}}
    return OcrVerifier(RapidEngine(), "ocr-verifier", params)


@register_model("tesseract-verifier")
def _tesseract(arg: str = "", **_: Any) -> OcrVerifier:
    """Like ocr-verifier with tesseract reading the page (weaker, fast)."""
    require("tesserocr", "tesseract-verifier")
    params = {"engine": "tesseract", "version": importlib.metadata.version("tesserocr"), "logic": LOGIC_VERSION,
              "settings": TESSERACT_PARAMS}
    return OcrVerifier(TesseractEngine(), "tesseract-verifier", params)
