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
    # Open-answer tasks score partial credit in [0, 1] from (item, parsed prediction); closed
    # tasks leave it None and score an exact label match.
    credit: Callable[[Item, Label | None], float] | None = None
    shows_steps: bool = True        # text input includes the shown solution (solve tasks: question only)
    needs_image: bool = False       # meaningless without the page (transcription)

    @property
    def closed(self) -> bool:
        """A fixed set of labels a guesser can pick from (random and majority baselines need one)."""
        return self.metric in ("binary", "localize", "multiclass")


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
    steps = [s.text for s in item.variant.steps] if with_steps and task.shows_steps else []
    return render_template(task.template, question=item.problem.question_text, steps=steps,
                           n_steps=len(item.variant.steps), image=with_image, categories=CATEGORIES,
                           errorradar=ERRORRADAR, mmerror=MMERROR)


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



# -- closed label sets from the seed benchmarks ---------------------------------------------
def _label_parser(keys: str, phrases: dict[str, str]) -> Callable[[str], str | None]:
    """A parser for `Key: <phrase>` (or a bare phrase on the last line), mapping phrases to labels."""
    alternation = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
    keyed = re.compile(rf"(?<![a-z])(?:{keys}) ?[:=] ?\(?({alternation})\)?(?![a-z])")
    bare = re.compile(rf"\(?({alternation})\)?")

    def parse(response: str) -> str | None:
        value = _last_match(normalized_lines(response), keyed, bare)
        return None if value is None else phrases[value]
    return parse


# ErrorRadar CATE (seed-benchmarks §1.2): code, full name, one-line definition.
ERRORRADAR: tuple[tuple[str, str, str], ...] = (
    ("VIS", "Visual Perception Error", "wrong information taken from the image, chart or diagram"),
    ("CAL", "Calculation Error", "a computation slip: arithmetic, unit conversion, or a sign carried wrongly"),
    ("REAS", "Reasoning Error", "a logical relation or conclusion applied wrongly"),
    ("KNOW", "Knowledge Error", "a knowledge point understood incompletely or wrongly, so applied wrongly"),
    ("MIS", "Misinterpretation of the Question", "the question's requirement or intent is misread"),
)
_ER_PHRASES = {p.casefold(): code for code, name, _ in ERRORRADAR for p in (code, name)}
_ER_PHRASES |= {name.casefold().removesuffix(" error"): code for code, name, _ in ERRORRADAR}

register_task(Task(
    id="categorize-errorradar", template="eval/categorize_errorradar.j2", metric="multiclass",
    labels=tuple(code for code, _, _ in ERRORRADAR),
    applies=lambda item: item.variant.error is not None and bool(item.variant.error.projections.get("errorradar")),
    gold=lambda item: item.variant.error.projections["errorradar"],
    parse=_label_parser("error category|category", _ER_PHRASES),
    answer=lambda label: f"Error Category: {dict((c, n) for c, n, _ in ERRORRADAR)[label]}",
    choices=lambda item: tuple(code for code, _, _ in ERRORRADAR),
))

# MMErroR ETC / EPD (seed-benchmarks §3.2): letter, label string, definition.
MMERROR: tuple[tuple[str, str, str], ...] = (
    ("A", "A_Visual_Perception_Error", "a value, label, shape, colour, position or count misread from the image"),
    ("B", "B_Reasoning_Error", "perception is right, but arithmetic, combining quantities or deduction is wrong"),
    ("C", "C_Question_Comprehension_Error", "the question is misread: a different question answered, "
                                            "a constraint ignored"),
    ("D", "D_Knowledge_Deployment_Error", "wrong external knowledge: a false fact, a misapplied formula or concept"),
)
_MM_LETTERS = tuple(letter for letter, _, _ in MMERROR)
_MM_PHRASES: dict[str, str] = {}
for _letter, _name, _ in MMERROR:
    _words = _name.casefold().replace("_", " ")            # "a visual perception error"
    for _p in (_letter.casefold(), _words, _words[2:], _words[2:].removesuffix(" error")):
        _MM_PHRASES[_p] = _letter
NO_ERROR_LABEL = "no_error"
_PRESENCE_PHRASES = {"no error": NO_ERROR_LABEL, "no error present": NO_ERROR_LABEL} | {
    f"error present{sep}{p}": label for p, label in _MM_PHRASES.items() for sep in (" ", ", ", " - ", ": ")
} | _MM_PHRASES


def _mmerror_of(item: Item) -> str | None:
    return None if item.variant.error is None else item.variant.error.projections.get("mmerror")


register_task(Task(
    id="categorize-mmerror", template="eval/categorize_mmerror.j2", metric="multiclass", labels=_MM_LETTERS,
    applies=lambda item: _mmerror_of(item) is not None,
    gold=_mmerror_of,
    parse=_label_parser("error type|type|answer", _MM_PHRASES),
    answer=lambda label: f"Error Type: {label}",
    choices=lambda item: _MM_LETTERS,
))

# MMErroR EPD: "no error", or the error's type (credit needs presence and the right type).
register_task(Task(
    id="presence", template="eval/presence.j2", metric="multiclass", labels=(NO_ERROR_LABEL, *_MM_LETTERS),
    applies=lambda item: item.variant.error is None or _mmerror_of(item) is not None,
    gold=lambda item: NO_ERROR_LABEL if item.variant.error is None else _mmerror_of(item),
    parse=_label_parser("answer|error type", _PRESENCE_PHRASES),
    answer=lambda label: "Answer: No Error" if label == NO_ERROR_LABEL else f"Answer: Error Present, {label}",
    choices=lambda item: (NO_ERROR_LABEL, *_MM_LETTERS),
))


# -- open answers: correct (FERMAT EC), solve (MathReal), solvable (Seeing Is Solving) --------
NA = "NA"
_NA_WORDS = {"na", "n/a", "none", "no error", "no errors", "not applicable"}
_CORRECTED = re.compile(r"corrected (?:final )?answer(?: latex)? ?[:=] ?(.*)", re.IGNORECASE)
_FINAL = re.compile(r"(?:final answer|the answer is|answer) ?[:=]? ?(.*)", re.IGNORECASE)


def _raw_lines(response: str) -> list[str]:
    """Tail lines with NFKC and markdown emphasis removed, case kept (answers are case-sensitive)."""
    if not isinstance(response, str):
        return []
    text = unicodedata.normalize("NFKC", response[-MAX_PARSE_CHARS:]).translate(_DASHES)
    lines = (" ".join(_drop_emphasis(line).replace("`", " ").split()) for line in text.splitlines())
    return [line for line in lines if line]


def _answer_value(text: str) -> str | None:
    from synth.evaluate.answers import MAX_ANSWER_CHARS, boxed, clean_answer

    inner = boxed(text)
    value = clean_answer(inner[-1] if inner else text)
    if not value or len(value) > MAX_ANSWER_CHARS:
        return None
    return NA if value.casefold().strip(" .") in _NA_WORDS else value


def parse_corrected(response: str) -> str | None:
    """The corrected final answer, ``NA`` when the model says there is no error, or None.

    >>> parse_corrected("Step 2 drops a sign.\\nCorrected Answer: $x = -5$")
    'x = -5'
    """
    for line in reversed(_raw_lines(response)):
        m = _CORRECTED.search(line)
        if m:
            return _answer_value(m.group(1))
    return None


def _correct_credit(item: Item, pred: Label | None) -> float:
    from synth.evaluate.answers import answers_match

    if pred is None:
        return 0.0
    truth = item.problem.answer_value
    if item.variant.is_correct:
        # FERMAT's judge: NA, or an unchanged (still correct) answer, both count.
        return float(pred == NA or answers_match(str(pred), truth))
    return float(pred != NA and answers_match(str(pred), truth))


register_task(Task(
    id="correct", template="eval/correct.j2", metric="answer", labels=None,
    applies=lambda item: True,
    gold=lambda item: NA if item.variant.is_correct else item.problem.answer_value,
    parse=parse_corrected,
    answer=lambda label: f"Corrected Answer: {label}",
    choices=lambda item: (),
    credit=_correct_credit,
))


def parse_solution_answers(response: str) -> tuple[str, ...] | None:
    """MathReal extraction: every `\\boxed{}` answer; else the last `Final answer:` line; else None."""
    from synth.evaluate.answers import MAX_ANSWER_CHARS, boxed, clean_answer, split_parts

    if not isinstance(response, str):
        return None
    tail = unicodedata.normalize("NFKC", response[-MAX_PARSE_CHARS:])
    parts = [clean_answer(b) for b in boxed(tail)]
    if not parts:
        for line in reversed(_raw_lines(response)):
            m = _FINAL.match(line)
            if m and m.group(1):
                parts = split_parts(m.group(1))
                break
    parts = [p for p in parts if p and len(p) <= MAX_ANSWER_CHARS]
    return tuple(parts) or None


def _solve_credit(item: Item, pred: Label | None) -> float:
    from synth.evaluate.answers import part_credit, split_parts

    if not pred:
        return 0.0
    return part_credit(list(pred), split_parts(item.problem.answer_value))


register_task(Task(
    id="solve", template="eval/solve.j2", metric="answer", labels=None,
    applies=lambda item: True,
    gold=lambda item: item.problem.answer_value,
    parse=parse_solution_answers,
    answer=lambda label: f"The answer is \\boxed{{{label}}}",
    choices=lambda item: (),
    credit=_solve_credit,
    shows_steps=False,
))

REFUSED = "<refused>"


def parse_solvable(response: str) -> str | None:
    """Seeing Is Solving: ``<refused>`` when ``isSolvable`` is false, else ``answer.value``; None
    when the response holds no such JSON. Free text is never read as a refusal."""
    from synth.evaluate.answers import MAX_ANSWER_CHARS, clean_answer, last_json_object

    if not isinstance(response, str):
        return None
    data = last_json_object(response[-MAX_PARSE_CHARS:])
    if data is None:
        return None
    solution = data.get("solution", data)
    if not isinstance(solution, dict) or not isinstance(solution.get("isSolvable"), bool):
        return None
    if not solution["isSolvable"]:
        return REFUSED
    answer = solution.get("answer")
    value = answer.get("value") if isinstance(answer, dict) else answer
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = clean_answer(str(value))
    return text if text and len(text) <= MAX_ANSWER_CHARS else None


def _solvable_credit(item: Item, pred: Label | None) -> float:
    from synth.evaluate.answers import answers_match

    return float(pred is not None and pred != REFUSED and answers_match(str(pred), item.problem.answer_value))


def _solvable_answer(label: Label) -> str:
    import json

    if label == REFUSED:
        body = {"isSolvable": False, "required_information": ["the figure"], "steps": [], "answer": None}
    else:
        body = {"isSolvable": True, "required_information": [], "steps": [], "answer": {"value": str(label),
                                                                                         "units": ""}}
    return json.dumps({"solution": body})


register_task(Task(
    id="solvable", template="eval/solvable.j2", metric="solvability", labels=None,
    applies=lambda item: True,
    gold=lambda item: item.problem.answer_value,
    parse=parse_solvable,
    answer=_solvable_answer,
    choices=lambda item: (),
    credit=_solvable_credit,
    shows_steps=False,
))


# -- transcribe (FERMAT OCR prompt; CER) ------------------------------------------------------
# A header is a whole line (`Solution`) or a label with a colon (`**Question:** ...`).
_TRANSCRIPT_HEADER = re.compile(r"^\**(?:question|problem|answer|solution|steps|transcription)\**"
                                r"(?::\**\s*|\**\s*$)", re.IGNORECASE)
_STEP_LABEL = re.compile(r"^(?:step\s*)?\d{1,3}\s*[.):]\s+", re.IGNORECASE)


def transcript_lines(text: str) -> list[str]:
    """Lines of a transcription with headers (`Question:`) and step labels (`Step 2:`, `2.`) removed."""
    lines = []
    for line in unicodedata.normalize("NFKC", text).splitlines():
        line = _STEP_LABEL.sub("", _TRANSCRIPT_HEADER.sub("", line.strip().strip("`"))).strip()
        if line:
            lines.append(line)
    return lines


def gold_transcript(item: Item) -> str:
    return "\n".join([item.problem.question_text, *(s.text for s in item.variant.steps)])


def parse_transcript(response: str) -> str | None:
    if not isinstance(response, str):
        return None
    text = "\n".join(transcript_lines(response[-MAX_PARSE_CHARS * 4:]))
    return text or None


def _transcribe_credit(item: Item, pred: Label | None) -> float:
    from synth.evaluate.textdist import cer

    return 0.0 if pred is None else max(0.0, 1.0 - cer(str(pred), gold_transcript(item)))


register_task(Task(
    id="transcribe", template="eval/transcribe.j2", metric="transcribe", labels=None,
    applies=lambda item: item.image is not None,
    gold=gold_transcript,
    parse=parse_transcript,
    answer=lambda label: str(label),
    choices=lambda item: (),
    credit=_transcribe_credit,
    shows_steps=False,
    needs_image=True,
))
