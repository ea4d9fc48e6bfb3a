"""What the benchmark scripts share about their results files."""

from __future__ import annotations

from pathlib import Path


def before(paths: list[Path]) -> list[str]:
    """The acceptance lines of earlier results files of a script (its first line and its '- ' lines)."""
    out = []
    for path in paths:
        text = path.read_text().split("\n## ")
        head = next((ln for ln in text[0].splitlines() if ln.startswith("Commit ")), "").split(". ")[0]
        part = next((t for t in text if t.startswith("Acceptance")), "")
        out += [f"Before ({head or path.name}):", "",
                *[f"  {ln}" for ln in part.splitlines() if ln.startswith("- ")], ""]
    return out
