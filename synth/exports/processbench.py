"""ProcessBench's layout: the problem, the solution's steps, and the 0-based index of the first wrong step."""

from __future__ import annotations

import json
from typing import Any

from synth.exports._base import EXPORTS, Context, Exporter


def processbench_record(row: dict[str, Any]) -> dict[str, Any]:
    """ProcessBench's layout: ``label`` is the 0-based index of the first wrong step, or -1."""
    err = row["error"]
    return {
        "id": row["id"], "generator": "mathstress", "problem": row["question"]["text"],
        "steps": [s["text"] for s in row["steps"]],
        "label": err["first_error_step"] - 1 if err else -1,
        "final_answer_correct": not (err and err["answer_changed"]),
    }


def write(ctx: Context) -> None:
    """One JSONL file of text items (degraded photos repeat their clean control, so they are left out)."""
    with (ctx.out / "processbench.jsonl").open("w", encoding="utf-8") as out:
        for row in ctx.rows():
            if row["variant"] == "degraded":
                ctx.skip("degraded photo (its text repeats the clean control)")
                continue
            out.write(json.dumps(processbench_record(row), ensure_ascii=False) + "\n")
            ctx.written += 1


EXPORTS.register(Exporter(
    id="processbench", title="ProcessBench", write=write, entries=("processbench.jsonl",),
    proof=("processbench.jsonl",), help="ProcessBench JSONL (label: 0-based first wrong step, -1 for none)"))
