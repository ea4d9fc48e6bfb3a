"""Character error rate: Levenshtein distance with a numpy row update (no extra dependency)."""

from __future__ import annotations

import unicodedata

import numpy as np

_UNIFY = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u00d7": "x",
                        "\u22c5": "*", "\u00b7": "*"})


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute; each costs 1).

    One row per character of ``a``; within a row, insertions chain left to right, which is a
    running minimum of ``row[j] - j`` (so the row needs no Python loop over ``b``).

    >>> levenshtein("kitten", "sitting")
    3
    """
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    codes_b = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    j = np.arange(len(b) + 1, dtype=np.int64)
    row = j.copy()
    for i, ch in enumerate(a, start=1):
        cost = (codes_b != ord(ch)).astype(np.int64)
        cand = np.empty_like(row)
        cand[0] = i
        cand[1:] = np.minimum(row[:-1] + cost, row[1:] + 1)     # substitute / delete
        row = np.minimum.accumulate(cand - j) + j                # insert
    return int(row[-1])


def normalize_for_cer(text: str) -> str:
    """NFKC, one minus sign, and no whitespace: spacing around operators is not a reading error."""
    return "".join(unicodedata.normalize("NFKC", text).translate(_UNIFY).split())


def cer(pred: str, gold: str) -> float:
    """Edits per gold character after :func:`normalize_for_cer` (can exceed 1 for long garbage)."""
    p, g = normalize_for_cer(pred), normalize_for_cer(gold)
    if not g:
        return 0.0 if not p else 1.0
    return levenshtein(p, g) / len(g)
