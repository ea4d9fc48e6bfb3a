"""Printable worksheets of a run config: the run's problems and variants (ids as ``generate`` gives them) as PDFs.

The items come from the pipeline's own stages with rendering and degradation off, so every block
of ``render.worksheet``'s packs carries the id ``mathstress generate`` gives that item.
"""

from __future__ import annotations

from pathlib import Path

from render.worksheet import WorksheetResult, write_worksheets
from synth.config import DegradeConfig, RunConfig
from synth.errors import ConfigError
from synth.records import Item
from synth.stages import ShardStats, build_items


def worksheet_items(config: RunConfig, limit: int | None = None) -> list[Item]:
    """The run's clean problems and solution variants (ids as in the manifest), without pixels.

    Rendering and degradation are switched off: they do not change which problems and variants
    an index gets, because each stage draws from its own seeded stream.
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}")
    count = config.count if limit is None else min(limit, config.count)
    textual = config.model_copy(update={"render": config.render.model_copy(update={"enabled": False}),
                                        "degrade": DegradeConfig()})
    stats = ShardStats()
    return [item for index in range(count) for item, _ in build_items(textual, index, stats)]


def build_worksheets(config: RunConfig, out_dir: str | Path, *, limit: int | None = None,
                     page: str = "a4") -> WorksheetResult:
    """Worksheets for a run config: the same problems (and ids) ``mathstress generate`` would make."""
    return write_worksheets(worksheet_items(config, limit), out_dir, title=f"mathstress · {config.name}", page=page)
