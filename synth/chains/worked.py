"""The ``worked`` style: today's lines, one rewrite per line, each line its own claim (``math == text``)."""

from __future__ import annotations

from collections.abc import Mapping

from synth.chains import Chain, ChainStyle, Declared, MethodWords, register
from synth.records import Problem, Variant


@register
class Worked(ChainStyle):
    id = "worked"

    def write(self, problem: Problem, variant: Variant, seed: int, *, concepts_in_words: bool = False,
              declared: tuple[Declared, ...] | None = None,
              concepts: Mapping[int, MethodWords] | None = None, named: bool = False) -> Chain | None:
        return None  # the lines stay as verified; write_contents only sets math and spans
