"""Benchmark forms: a run folder laid out as ErrorRadar, FERMAT, MMErroR, MathReal or Seeing Is Solving, and back.

The formats themselves live in ``synth.exports``, one module each, found through its registry; this
module keeps the names callers import: ``export_form`` writes one, ``load_form`` reads one back into
records with ids and labels, and ``form_items`` / ``task_gold`` connect loaded records to the
evaluation tasks. The benchmarks' label vocabularies come from ``synth.vocab``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from synth.exports import EXPORTS, ExportSummary, FormRecord, export, form_items, load_export, read_summary, task_gold
from synth.exports._base import educational_stage
from synth.vocab import (
    ERRORRADAR_NAMES,
    FERMAT_ROTATION,
    FERMAT_TYPES,
    MATHREAL_CATEGORIES,
    MATHREAL_LEVELS,
    MATHREAL_QUESTION_TYPES,
    MATHREAL_ROTATION,
    MATHREAL_SUBTYPES,
    MMERROR_NO_ERROR,
    MMERROR_OPTIONS,
    SEEING_CONDITIONS,
    SEEING_ROLES,
)

ProgressFn = Callable[[int, int], None]
FormSummary = ExportSummary
# The benchmark forms: every registered format that can be read back record by record, hf aside.
FORMS: tuple[str, ...] = tuple(fmt for fmt in EXPORTS if EXPORTS[fmt].load is not None)


def export_form(run_dir: str | Path, dest: str | Path, fmt: str, progress: ProgressFn | None = None) -> ExportSummary:
    """Write a run in one benchmark's form under ``dest``; see ``summary.json`` there.

    ``dest`` must be new, empty or an earlier export of the same form; only what that export wrote is
    replaced (a user's own files there stay), and a new export appears in one rename when it can.
    """
    return export(run_dir, dest, fmt, progress)


def load_form(path: str | Path, fmt: str) -> list[FormRecord]:
    """Read a form export (its folder) back into records, in file order.

    >>> records = load_form("outputs/quickstart/errorradar", "errorradar")  # doctest: +SKIP
    >>> records[0].labels
    {'error_step': 2, 'category': 'CAL'}
    """
    return load_export(path, fmt)


__all__ = [
    "ERRORRADAR_NAMES", "FERMAT_ROTATION", "FERMAT_TYPES", "FORMS", "MATHREAL_CATEGORIES", "MATHREAL_LEVELS",
    "MATHREAL_QUESTION_TYPES", "MATHREAL_ROTATION", "MATHREAL_SUBTYPES", "MMERROR_NO_ERROR", "MMERROR_OPTIONS",
    "SEEING_CONDITIONS", "SEEING_ROLES", "FormRecord", "FormSummary", "educational_stage", "export_form",
    "form_items", "load_form", "read_summary", "task_gold",
]
