"""The old home of figure descriptions, kept for imports written before they moved to ``synth.describe``.

Descriptions read only the figure spec, and the manifest (core) writes them into every row, so they
live in the core layer now; import ``describe_figure`` from ``synth.describe``.
"""

from synth.describe import describe_figure

__all__ = ["describe_figure"]
