"""The per-item viewer of report.html: one entry per answered (or failed) call, with what a reader filters by.

Each entry holds the item's page (a path relative to the report, so the images stay in the run folder),
the prompt, the model's reply, the parsed answer, the gold label and the result of the item's clean twin
(the base problem's clean control, same run index). The entries travel inside report.html as JSON that
the page's script reads with ``textContent``: model replies are untrusted and never become markup.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

# The reply and the prompt are kept whole up to these lengths (the records hold at most 2,000 reply characters).
_MAX_PROMPT = 6_000
_MAX_REPLY = 2_000


def verdict(record: Mapping[str, Any]) -> str:
    """correct, wrong, unparsed (scored wrong: no answer could be read) or failed (no reply: never scored)."""
    if record.get("status") != "ok":
        return "failed"
    if record.get("pred") is None:
        return "unparsed"
    return "correct" if record.get("correct") else "wrong"


def capture(record: Mapping[str, Any]) -> tuple[str, int | None]:
    """The capture condition as the viewer filters it: ("none", None) for the undegraded page, the profile's
    name for a capture profile, else the op (ops joined by "+") and its severity (the highest, for several)."""
    if record.get("profile"):
        return str(record["profile"]), None
    ops = record.get("degradations") or []
    if not ops:
        return "none", None
    return "+".join(str(op[0]) for op in ops), max(int(op[1]) for op in ops)


def image_link(run_dir: str | None, image: str | None, eval_dir: Path) -> str | None:
    """The page's URL relative to report.html (which lives in the evaluation folder)."""
    if not run_dir or not image:
        return None
    target = Path(run_dir) / image
    try:
        rel = os.path.relpath(target, eval_dir.resolve())
    except ValueError:   # another drive (Windows): link the absolute path
        return target.resolve().as_uri()
    return quote(PurePosixPath(*Path(rel).parts).as_posix())


def viewer_entries(eval_dir: Path, run_dir: str | None, records_by_task: Mapping[str, Sequence[Mapping[str, Any]]]
                   ) -> list[dict[str, Any]]:
    """Viewer entries for every task's records (responses/<task>.jsonl), in task and record order."""
    entries = []
    for task, records in sorted(records_by_task.items()):
        twins = {(r["item_id"], r.get("run_index", 0)): r for r in records}
        for r in records:
            twin = twins.get((r.get("base_id"), r.get("run_index", 0)))
            cap, severity = capture(r)
            entries.append({
                "task": task, "item": r["item_id"], "base": r.get("base_id"), "run": r.get("run_index", 0),
                "family": r.get("family"), "variant": r.get("variant"),
                "error": r.get("error_subtype") or r.get("control") or "none", "capture": cap,
                "severity": severity, "verdict": verdict(r),
                "image": image_link(run_dir, r.get("image"), eval_dir),
                "prompt": (r.get("prompt") or "")[:_MAX_PROMPT],
                "reply": (r.get("response") or "")[-_MAX_REPLY:] if r.get("status") == "ok" else None,
                "failure": r.get("error"),
                "pred": _text(r.get("pred")), "gold": _text(r.get("gold")),
                "twin": None if twin is None or twin is r else {"item": twin["item_id"], "verdict": verdict(twin),
                                                                 "pred": _text(twin.get("pred"))},
            })
    return entries


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def embedded_json(value: Any) -> str:
    """JSON that is safe inside a <script type="application/json"> element: no "</script>", no "<!--"."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
