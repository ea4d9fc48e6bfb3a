"""The ``cot`` style: a model's chain of thought in paragraphs (MMErroR's chains, ProcessBench's paragraphs).

"First, let's find ... From the bar chart, Tuesday's bar reaches 12 ..."; one paragraph per step, each
around one checked claim; phrasings in ``templates/chains/cot/``.
"""

from __future__ import annotations

from synth.chains import ChainStyle, register


@register
class Cot(ChainStyle):
    id = "cot"
    reads_per_step = 3
