"""What a question asks for, in a few words (``the area``, ``the gradient``): the chains' "goal" sentences."""

from __future__ import annotations

import re
from functools import lru_cache

from synth.records import Problem

# What the question asks for, found in its wording (first match wins).
_ASKED: tuple[tuple[str, str], ...] = (
    (r"how much .*(fits|hold)", "the volume"), (r"dy/d", "the derivative"), (r"approaches|tends to", "the limit"),
    (r"arrow|point to", "the number at the point"), (r"percentage", "the percentage change"),
    (r"what are [a-z] and|find both", "both unknowns"), (r"multiply out|collect like terms", "the simplified form"),
    (r"rewrite|\bin (t|g|kg|mm|cm|m|km|s|min|h)\b", "the converted amount"),
    (r"surface area|card is needed", "the surface area"), (r"\bvolume", "the volume"), (r"\barea\b", "the area"),
    (r"perimeter", "the perimeter"), (r"length of the arc|arc length", "the arc length"),
    (r"circumference", "the circumference"), (r"gradient|slope", "the gradient"),
    (r"equation of the line", "the equation of the line"), (r"intercept|meets the [xy]-axis", "the intercept"),
    (r"\bmean\b", "the mean"), (r"median", "the median"), (r"probab|how likely", "the probability"),
    # "how long did it take" is a time; "how long is BC", "how long is the ladder" a length
    (r"how many minutes|how long (did|does|do|will|would)\b", "the time it takes"), (r"how long", "the length"),
    (r"\bsum\b", "the sum"), (r"share|receive", "the share"),
    (r"number is at|number at", "the number at the point"), (r"how many|total number", "the number asked for"),
    (r"percentage change", "the percentage change"), (r"per hour|change per", "the rate of change"),
    (r"differentiate|derivative|f'|r'\(", "the derivative"), (r"limit", "the limit"),
    (r"∫|integral", "the value of the integral"), (r"convert|conversion", "the converted amount"),
    (r"\b(sin|cos|tan) [a-zθ]", "the trigonometric ratio"),
    (r"angle|value of x|calculate x|length", "the unknown value"),
    (r"simultaneous", "both unknowns"), (r"solve|what is [a-z]\?|values of", "the unknown"),
    (r"simplify|simplest|factori", "the simplified form"), (r"cos|sin|tan", "the exact value"),
    (r"decrease|increase|raised|new weekly", "the new amount"),
    (r"calculate|work out|evaluate|multiply|subtract|\badd\b|divide", "the value of the expression"),
    (r"equation", "the equation of the line"), (r"find [a-z]\b|value of [a-z]\b|makes .* true|mystery|solutions",
                                                 "the unknown"),
)
_ASKED_RES = tuple((re.compile(p), w) for p, w in _ASKED)


def asked(problem: Problem) -> str:
    """What the question asks for, in a few words (``the area``, ``the gradient``, ``the unknown``)."""
    return _asked(problem.question_text)


@lru_cache(maxsize=4096)
def _asked(question: str) -> str:  # once per base: the twin and its variants share the question
    text = question.lower()
    for pattern, words in _ASKED_RES:
        if pattern.search(text):
            return words
    return "the answer"
