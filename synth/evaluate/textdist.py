"""Character error rate: rapidfuzz's Levenshtein distance over normalized text."""

from __future__ import annotations

import unicodedata

from rapidfuzz.distance import Levenshtein

_UNIFY = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u00d7": "x",
                        "\u22c5": "*", "\u00b7": "*"})


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute; each costs 1).

    >>> levenshtein("kitten", "sitting")
    3
    """
    return int(Levenshtein.distance(a, b))


def normalize_for_cer(text: str) -> str:
    """NFKC, one minus sign, and no whitespace: spacing around operators is not a reading error."""
    return "".join(unicodedata.normalize("NFKC", text).translate(_UNIFY).split())


def cer(pred: str, gold: str) -> float:
    """Edits per gold character after :func:`normalize_for_cer` (can exceed 1 for long garbage).

    Not rapidfuzz's ``normalized_distance``, which divides by the longer string and stays below 1.
    """
    p, g = normalize_for_cer(pred), normalize_for_cer(gold)
    if not g:
        return 0.0 if not p else 1.0
    return levenshtein(p, g) / len(g)
