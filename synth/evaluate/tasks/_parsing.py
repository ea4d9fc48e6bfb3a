"""Reading untrusted model text: the normalized tail of a response and anchored verdict patterns.

Model responses are untrusted text. Parsers read only a bounded tail of a response, normalize
it (NFKC, casefold, markdown and LaTeX wrappers dropped, whitespace collapsed so no pattern
needs nested `\\s*`), and match short anchored patterns. Anything else parses to None, which
is scored wrong. No parser builds numbers longer than four digits.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# Only this much of the end of a response is read: verdicts come last, and it bounds the work.
MAX_PARSE_CHARS = 4_000

_LATEX_WRAPPERS = re.compile(r"\\(?:boxed|text|textbf|mathrm|mathbf|fbox)")
_DROP = str.maketrans({c: " " for c in "`#>|{}$\\\"'"})
_STARS = re.compile(r"\*+")
DASHES = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "_": " "})


def drop_emphasis(text: str) -> str:
    """Markdown `*`/`**` become spaces, but `2*3` and `10**9` keep their stars (they are not step numbers)."""
    def repl(m: re.Match[str]) -> str:
        inside = 0 < m.start() and m.end() < len(text) and text[m.start() - 1] in "0123456789" \
            and text[m.end()] in "0123456789"
        return m.group() if inside else " "
    return _STARS.sub(repl, text)


def normalized_lines(response: str) -> list[str]:
    """The non-empty lines of the response tail, normalized for matching (last line last)."""
    if not isinstance(response, str):
        return []
    tail = response[-MAX_PARSE_CHARS:]
    text = unicodedata.normalize("NFKC", tail).casefold().translate(DASHES)
    text = drop_emphasis(_LATEX_WRAPPERS.sub(" ", text).translate(_DROP))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return [line for line in lines if line]


def raw_lines(response: str) -> list[str]:
    """Tail lines with NFKC and markdown emphasis removed, case kept (answers are case-sensitive)."""
    if not isinstance(response, str):
        return []
    text = unicodedata.normalize("NFKC", response[-MAX_PARSE_CHARS:]).translate(DASHES)
    lines = (" ".join(drop_emphasis(line).replace("`", " ").split()) for line in text.splitlines())
    return [line for line in lines if line]


def last_match(lines: list[str], keyed: re.Pattern[str], bare: re.Pattern[str]) -> str | None:
    """The value of the last keyed verdict (`Key: value`), else a bare verdict on the last line."""
    for line in reversed(lines):
        found = keyed.findall(line)
        if found:
            return found[-1]
    if lines:
        last = lines[-1].rstrip(".!")
        m = bare.fullmatch(last)
        if m:
            return m.group(1)
    return None


def label_parser(keys: str, phrases: dict[str, str]) -> Callable[[str], str | None]:
    """A parser for `Key: <phrase>` (or a bare phrase on the last line), mapping phrases to labels."""
    alternation = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
    keyed = re.compile(rf"(?<![a-z])(?:{keys}) ?[:=] ?\(?({alternation})\)?(?![a-z])")
    bare = re.compile(rf"\(?({alternation})\)?")

    def parse(response: str) -> str | None:
        value = last_match(normalized_lines(response), keyed, bare)
        return None if value is None else phrases[value]
    return parse
