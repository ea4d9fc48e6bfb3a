"""Evaluation tasks by id: which items they use, the prompt, the gold label and the response parser."""

# Model responses are untrusted text. Parsers read only a bounded tail of a response, normalize
# it (NFKC, casefold, markdown and LaTeX wrappers dropped, whitespace collapsed so no pattern
# needs nested `\s*`), and match short anchored patterns. Anything else parses to None, which
# is scored wrong. No parser builds numbers longer than four digits.

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from synth.errors import ConfigError
from synth.records import Item
from synth.templating import render_template

# Only this much of the end of a response is read: verdicts come last, and it bounds the work.
MAX_PARSE_CHARS = 4_000

Label = Hashable


@dataclass(frozen=True)
class Task:
    """One evaluation protocol. ``answer(label)`` writes the canonical response for a label, so
    offline baselines answer through the same parser as a real model."""

    id: str
    template: str
    metric: str                      # "binary", "localize" or "multiclass" (see synth.evaluate.metrics)
    labels: tuple[Label, ...] | None  # fixed label set, or None when labels depend on the item
    applies: Callable[[Item], bool]
    gold: Callable[[Item], Label]
    parse: Callable[[str], Label | None]
    answer: Callable[[Label], str]
    choices: Callable[[Item], tuple[Label, ...]]  # the labels a guesser may pick for this item


TASKS: dict[str, Task] = {}


def register_task(task: Task) -> Task:
    TASKS[task.id] = task
    return task


def get_task(task_id: str) -> Task:
    try:
        return TASKS[task_id]
    except KeyError:
        raise ConfigError(f"unknown task {task_id!r}; choose from {', '.join(sorted(TASKS))}") from None


def prompt_for(task: Task, item: Item, *, with_image: bool, with_steps: bool) -> str:
    """The prompt text for one item (the image, when sent, travels beside it)."""
    steps = [s.text for s in item.variant.steps] if with_steps else []
    return render_template(task.template, question=item.problem.question_text, steps=steps,
                           n_steps=len(item.variant.steps), image=with_image, categories=CATEGORIES)


# -- normalization ------------------------------------------------------------------------
_LATEX_WRAPPERS = re.compile(r"\\(?:boxed|text|textbf|mathrm|mathbf|fbox)")
_DROP = str.maketrans({c: " " for c in "`#>|{}$\\\"'"})
_STARS = re.compile(r"\*+")
_DASHES = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "_": " "})


def _drop_emphasis(text: str) -> str:
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
    text = unicodedata.normalize("NFKC", tail).casefold().translate(_DASHES)
    text = _drop_emphasis(_LATEX_WRAPPERS.sub(" ", text).translate(_DROP))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return [line for line in lines if line]


def _last_match(lines: list[str], keyed: re.Pattern[str], bare: re.Pattern[str]) -> str | None:
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


# -- detect ---------------------------------------------------------------------------------
_VERDICTS = {"yes": "correct", "correct": "correct", "true": "correct", "right": "correct",
             "no": "incorrect", "incorrect": "incorrect", "false": "incorrect", "wrong": "incorrect",
             "not correct": "incorrect"}
_VERDICT_WORDS = "not correct|incorrect|correct|yes|no|true|false|right|wrong"
_DETECT_KEYS = "correct|final answer|answer|verdict|judgement|judgment|conclusion"
_DETECT_KEYED = re.compile(rf"(?<![a-z])(?:{_DETECT_KEYS}) ?[:=] ?({_VERDICT_WORDS})(?![a-z])")
_DETECT_BARE = re.compile(rf"(?:(?:the )?(?:student s |students )?(?:solution|answer) is )?({_VERDICT_WORDS})")


def parse_detect(response: str) -> str | None:
    """'correct', 'incorrect', or None.

    >>> parse_detect("Step 2 is wrong.\\nCorrect: **No**")
    'incorrect'
    """
    value = _last_match(normalized_lines(response), _DETECT_KEYED, _DETECT_BARE)
    return None if value is None else _VERDICTS[value]


register_task(Task(
    id="detect", template="eval/detect.j2", metric="binary", labels=("correct", "incorrect"),
    applies=lambda item: True,
    gold=lambda item: "correct" if item.variant.is_correct else "incorrect",
    parse=parse_detect,
    answer=lambda label: f"Correct: {'yes' if label == 'correct' else 'no'}",
    choices=lambda item: ("correct", "incorrect"),
))


# -- localize -------------------------------------------------------------------------------
NO_ERROR = -1
# A step number must stand alone: `9^9^9`, `3.5` and `12345` are not step numbers.
_STEP_VALUE = r"(-1|[0-9]{1,4}|none|no error|n/a|na)(?![0-9a-z^*/(]|[.,][0-9])"
_LOCALIZE_KEYED = re.compile(rf"(?<![a-z])(?:first )?error(?: step)? ?[:=] ?(?:step ?)?{_STEP_VALUE}")
_LOCALIZE_BARE = re.compile(r"(?:step ?)?(-1|[0-9]{1,4})|(?:there is )?(no error|none|all steps are correct)")


def parse_localize(response: str) -> int | None:
    """The first wrong step (1-based), -1 for "no error", or None.

    >>> parse_localize("The slip is in step 3.\\nError Step: Step 3")
    3
    """
    lines = normalized_lines(response)
    value: str | None = None
    for line in reversed(lines):
        found = _LOCALIZE_KEYED.findall(line)
        if found:
            value = found[-1]
            break
    if value is None and lines:
        m = _LOCALIZE_BARE.fullmatch(lines[-1].rstrip(".!"))
        if m:
            value = m.group(1) or m.group(2)
    if value is None:
        return None
    if not value[-1].isdigit():
        return NO_ERROR
    step = int(value)
    return step if step == NO_ERROR or step >= 1 else None


register_task(Task(
    id="localize", template="eval/localize.j2", metric="localize", labels=None,
    applies=lambda item: True,
    gold=lambda item: item.variant.error.first_error_step if item.variant.error else NO_ERROR,
    parse=parse_localize,
    answer=lambda label: "Error Step: -1" if label == NO_ERROR else f"Error Step: Step {label}",
    choices=lambda item: (NO_ERROR, *range(1, len(item.variant.steps) + 1)),
))


# -- categorize -----------------------------------------------------------------------------
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("computational", "a calculation, copying, sign or unit-conversion slip"),
    ("conceptual", "a wrong formula, theorem or fact, an invalid assumption or inference, or a misread question"),
    ("notational", "a wrong operator, misplaced parentheses or a wrong symbol"),
    ("visual_perception", "a value, label, scale, count or relation misread from the figure"),
    ("presentation", "ignored format, wrong units, misnamed variables, disrupted logic or swapped terms"),
)
_FAMILIES = tuple(label for label, _ in CATEGORIES)
_FAMILY_WORDS = "|".join(label.replace("_", " ") for label in _FAMILIES)
_CATEGORIZE_KEYED = re.compile(rf"(?<![a-z])(?:category|error type|type|answer) ?[:=] ?({_FAMILY_WORDS})(?![a-z])")
_CATEGORIZE_BARE = re.compile(rf"({_FAMILY_WORDS})(?: error)?")


def parse_categorize(response: str) -> str | None:
    """A taxonomy family id (DESIGN §5), or None."""
    value = _last_match(normalized_lines(response), _CATEGORIZE_KEYED, _CATEGORIZE_BARE)
    return None if value is None else value.replace(" ", "_")


register_task(Task(
    id="categorize", template="eval/categorize.j2", metric="multiclass", labels=_FAMILIES,
    applies=lambda item: item.variant.error is not None,
    gold=lambda item: item.variant.error.family,
    parse=parse_categorize,
    answer=lambda label: f"Category: {label}",
    choices=lambda item: _FAMILIES,
))

