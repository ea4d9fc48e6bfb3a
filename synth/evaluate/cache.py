"""The response store (SQLite, WAL): one row per model call, written as it arrives; it is the resume point.

It lives in ``<evaluation folder>/cache.sqlite``; an adapter may keep its own table in the same file
(the OCR baselines' page store), never in this one.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE_FILE = "cache.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key        TEXT PRIMARY KEY,
    model      TEXT NOT NULL,
    endpoint   TEXT NOT NULL,
    task       TEXT NOT NULL,
    item_id    TEXT NOT NULL,
    run_index  INTEGER NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    response   TEXT,
    error      TEXT,
    truncated  INTEGER NOT NULL DEFAULT 0,
    latency_s  REAL,
    attempts   INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL
)
"""
# Token usage and cost, when the endpoint reports them, and the prompt sent (added after the first schema;
# see _migrate).
_USAGE_COLUMNS = {"prompt_tokens": "INTEGER", "completion_tokens": "INTEGER", "cost": "REAL", "prompt": "TEXT"}

_SURROGATES = re.compile("[\ud800-\udfff]")


def json_ready(value: Any) -> Any:
    """``value`` with non-finite numbers as None and lone surrogates as U+FFFD, so strict JSON can hold it."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, dict):
        return {json_ready(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if getattr(value, "shape", None) == () and hasattr(value, "item"):   # numpy scalars
        return json_ready(value.item())
    return value


def strict_json(value: Any, **options: Any) -> str:
    """JSON that strict parsers accept: no NaN or Infinity (written as null), valid UTF-8 throughout."""
    return json.dumps(json_ready(value), allow_nan=False, ensure_ascii=False, **options)


def _text(value: str | None) -> str | None:
    return None if value is None else _SURROGATES.sub("\ufffd", value)


def _number(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def request_key(*, model: str, endpoint: str, prompt: str, image_sha256: str | None, params: dict[str, Any],
                run_index: int, item_id: str) -> str:
    """sha256 over everything that can change a response; the image enters by its hash only.

    The item id is part of the key because offline baselines answer from the item itself.
    """
    payload = json.dumps({"model": model, "endpoint": endpoint, "prompt": prompt, "image": image_sha256,
                          "params": params, "run": run_index, "item": item_id},
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Stored:
    key: str
    task: str
    item_id: str
    run_index: int
    status: str          # "ok" or "error"
    response: str | None
    error: str | None
    truncated: bool
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    prompt: str | None = None   # the prompt text sent (None in stores written before it was kept)


_COLUMNS = ("key, task, item_id, run_index, status, response, error, truncated, prompt_tokens, completion_tokens,"
            " cost, prompt")


def _stored(row: tuple) -> Stored:
    return Stored(*row[:7], truncated=bool(row[7]), prompt_tokens=row[8], completion_tokens=row[9], cost=row[10],
                  prompt=row[11])


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating if needed) the evaluation's SQLite file at ``path``, every write committed at once, with the
    table ``schema`` creates; the response store and the OCR store share the file, so they open it alike."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(schema)
    return db


class ResponseCache:
    """Open (creating if needed) the store at ``path``. Every write commits at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = connect(self.path, _SCHEMA)
        self._migrate()

    def _migrate(self) -> None:
        # Stores written before usage was recorded lack these columns; add them in place.
        have = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
        for name, kind in _USAGE_COLUMNS.items():
            if name not in have:
                self._db.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: str) -> Stored | None:
        row = self._db.execute(f"SELECT {_COLUMNS} FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else _stored(row)

    def put_ok(self, key: str, *, model: str, endpoint: str, task: str, item_id: str, run_index: int,
               response: str, truncated: bool, latency_s: float, prompt_tokens: int | None = None,
               completion_tokens: int | None = None, cost: float | None = None, prompt: str | None = None) -> None:
        self._db.execute(
            "INSERT INTO responses (key, model, endpoint, task, item_id, run_index, status, response, error,"
            " truncated, latency_s, prompt_tokens, completion_tokens, cost, prompt, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, 'ok', ?, NULL, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET status='ok', response=excluded.response, error=NULL,"
            " truncated=excluded.truncated, latency_s=excluded.latency_s, prompt_tokens=excluded.prompt_tokens,"
            " completion_tokens=excluded.completion_tokens, cost=excluded.cost, prompt=excluded.prompt,"
            " attempts=attempts+1, created_at=excluded.created_at",
            (key, model, endpoint, task, item_id, run_index, _text(response), int(truncated), latency_s,
             prompt_tokens, completion_tokens, _number(cost), _text(prompt), time.time()))

    def put_error(self, key: str, *, model: str, endpoint: str, task: str, item_id: str, run_index: int,
                  error: str, latency_s: float, prompt: str | None = None) -> None:
        # A stored answer is never replaced by a later failure.
        self._db.execute(
            "INSERT INTO responses (key, model, endpoint, task, item_id, run_index, status, response, error,"
            " latency_s, prompt, created_at) VALUES (?, ?, ?, ?, ?, ?, 'error', NULL, ?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET error=excluded.error, latency_s=excluded.latency_s,"
            " prompt=excluded.prompt, attempts=attempts+1, created_at=excluded.created_at WHERE status = 'error'",
            (key, model, endpoint, task, item_id, run_index, _text(error[:2000]), latency_s, _text(prompt),
             time.time()))

    def counts(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT status, COUNT(*) FROM responses GROUP BY status").fetchall())

    def __iter__(self) -> Iterator[Stored]:
        for row in self._db.execute(f"SELECT {_COLUMNS} FROM responses ORDER BY rowid"):
            yield _stored(row)
