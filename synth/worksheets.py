"""Printable worksheets of a run config: the run's problems and variants (ids as ``generate`` gives them) as PDFs.

The items come from the pipeline's own stages with rendering and degradation off, so every block
of ``render.worksheet``'s packs carries the id ``mathstress generate`` gives that item.
"""

from __future__ import annotations

import json
from pathlib import Path

from render.worksheet import PAGE_SIZES, WorksheetResult, write_worksheets
from synth.config import DegradeConfig, RunConfig
from synth.errors import ConfigError
from synth.records import Item
from synth.safepath import MARKER, layout, prepare_output_dir, read_marker, write_marker
from synth.stages import ShardStats, build_items


def worksheet_items(config: RunConfig, limit: int | None = None) -> list[Item]:
    """The run's clean problems and solution variants (ids and steps as in the manifest), without pixels.

    Pages are laid out, not drawn, and nothing is photographed: neither changes which problems and variants an
    index gets (each stage draws from its own seeded stream), but the layout decides one thing, as in the run: a
    sentence chain too long for its page is written up as worked lines (with render off, the copy pack held the
    11-step chain where the run's page held 8 worked lines, labels and all).
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}")
    count = config.bases if limit is None else min(limit, config.count)  # a run's config.yaml may hold its limit
    textual = config.model_copy(update={"degrade": DegradeConfig()})
    stats = ShardStats()
    return [item for index in range(count)
            for item, _ in build_items(textual, index, stats, layout_only=textual.render.enabled)]


# What `mathstress worksheet` writes in its folder. Earlier versions left no marker, and a user's folder can hold these
# very names (problems.pdf, index.json), so an unmarked folder is never taken for one: it is refused, never rewritten.
WORKSHEETS_KIND = "worksheets"
WORKSHEETS_LAYOUT = layout(entries=("problems.pdf", "copy.pdf", "answer_key.pdf", "index.json", ".problems.pdf.tmp",
                                    ".copy.pdf.tmp", ".answer_key.pdf.tmp", f"{MARKER}.tmp"))


def _our_index(path: Path) -> bool:
    """Whether ``path`` is a worksheet index: item id -> pack -> page number."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data) and all(
        isinstance(v, dict) and v and all(isinstance(k, str) and type(n) is int for k, n in v.items())
        for v in data.values())


def build_worksheets(config: RunConfig, out_dir: str | Path, *, limit: int | None = None,
                     page: str = "a4") -> WorksheetResult:
    """Worksheets for a run config: the same problems (and ids) ``mathstress generate`` would make, in ``out_dir``
    (missing, empty or an earlier worksheet folder; anything else is refused before the problems are built)."""
    if page not in PAGE_SIZES:  # before the folder is made (it was checked only once every item was built)
        raise ConfigError(f"--page must be one of {sorted(PAGE_SIZES)}, got {page!r}")
    out = Path(out_dir)
    if out.is_dir() and read_marker(out) is None and any(out.iterdir()) \
            and all(p.name in WORKSHEETS_LAYOUT.entries for p in out.iterdir()) and _our_index(out / "index.json"):
        write_marker(out, WORKSHEETS_KIND)  # an earlier version's worksheets (its index.json): ours, adopted
    out = prepare_output_dir(out, WORKSHEETS_KIND, shape=WORKSHEETS_LAYOUT)
    items = worksheet_items(config, limit)
    out.mkdir(parents=True, exist_ok=True)
    if read_marker(out) is None:
        write_marker(out, WORKSHEETS_KIND)
    return write_worksheets(items, out, title=f"mathstress · {config.name}", page=page)
