"""Exporters from a finished run folder to other layouts: ``export_run(run, fmt)``.

The formats live in ``synth.exports``, one module each, found through its registry
(``synth.exports.EXPORTS``); this module keeps the names callers import.
"""

from __future__ import annotations

from synth.exports import EXPORTS, export_run, require_run, where_row
from synth.exports.hf import hf_features, hf_record
from synth.exports.processbench import processbench_record

EXPORTERS = EXPORTS

__all__ = ["EXPORTERS", "EXPORTS", "export_run", "hf_features", "hf_record", "processbench_record", "require_run",
           "where_row"]
