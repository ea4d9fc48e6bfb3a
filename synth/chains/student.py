"""The ``student`` style: a school student's written answer (ErrorRadar's chains, about 7.6 steps).

What is asked, the values read from the question and the figure, each calculation with a few words,
and the conclusion with its unit; phrasings in ``templates/chains/student/``.
"""

from __future__ import annotations

from synth.chains import ChainStyle, register


@register
class Student(ChainStyle):
    id = "student"
    reads_per_step = 2
