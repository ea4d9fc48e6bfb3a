"""Export formats by id (``hf``, ``processbench``, ``errorradar``, ``fermat``, ``mmerror``, ``mathreal``, ``seeing``).

One module per format, found by discovery: a module of this package whose name does not start
with ``_`` registers one ``Exporter`` (``EXPORTS.register(Exporter(id="fermat", ...))``), so adding
a format is adding one file. Two modules claiming one id is an error naming both. Each benchmark
format follows the benchmark's public code (repository and commit in its module docstring), so
that code reads the export unchanged; what cannot match is listed in the export's ``summary.json``.

>>> export_run("outputs/quickstart", "processbench")  # doctest: +SKIP
PosixPath('outputs/quickstart/processbench')
"""

from __future__ import annotations

from pathlib import Path

from synth.exports._base import (
    EXPORTS,
    Context,
    Exporter,
    ExportSummary,
    FormRecord,
    ProgressFn,
    educational_stage,
    export,
    form_items,
    get_exporter,
    load_export,
    read_summary,
    require_run,
    task_gold,
    where_row,
)


def export_run(run_dir: str | Path, fmt: str, dest: str | Path | None = None,
               progress: ProgressFn | None = None, *, anonymize: bool = False) -> Path:
    """Export a finished run as ``fmt`` into ``dest`` (default ``RUN/<fmt>``) and return ``dest``; with
    ``anonymize``, opaque ids and image names in a shuffled order, and ``<dest>.key.csv`` mapping them back."""
    run_dir = Path(run_dir)
    require_run(run_dir)
    exporter = get_exporter(fmt)  # an unknown format is refused before any work
    target = Path(dest) if dest is not None else run_dir / exporter.id
    return export(run_dir, target, exporter.id, progress, anonymize=anonymize).path


__all__ = ["EXPORTS", "Context", "ExportSummary", "Exporter", "FormRecord", "educational_stage", "export",
           "export_run", "form_items", "get_exporter", "load_export", "read_summary", "require_run", "task_gold",
           "where_row"]
