"""Response parsers: the documented answer forms parse; hostile text never hangs and never invents a label."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth.errors import ConfigError
from synth.evaluate import load_items
from synth.evaluate.tasks import TASKS, get_task
from synth.evaluate.tasks.categorize import parse_categorize
from synth.evaluate.tasks.detect import parse_detect
from synth.evaluate.tasks.localize import parse_localize


@pytest.mark.parametrize(("text", "expected"), [
    ("Correct: yes", "correct"),
    ("Step 2 is wrong.\nCorrect: **No**", "incorrect"),
    ("The solution is incorrect.", "incorrect"),
    ("yes", "correct"),
    ("Correct: yes\nOn reflection...\nCorrect: no", "incorrect"),
    ("Answer: \\boxed{no}", "incorrect"),
    ("ＣＯＲＲＥＣＴ：ＹＥＳ", "correct"),
    ("correctness is hard to judge", None),
    ("", None),
])
def test_detect_parses_verdict_forms(text: str, expected: str | None) -> None:
    assert parse_detect(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("The slip is in step 3.\nError Step: Step 3", 3),
    ("Error Step: -1", -1),
    ("Error Step: \u22121", -1),
    ("Error Step: none", -1),
    ("no error", -1),
    ("Step 4", 4),
    ("first error: step 2", 2),
    ("Error Step: 0", None),
    ("Error Step: 9^9^9", None),
    ("Error Step: 3.5", None),
    ("Error Step: Step 12345", None),
    ("step 99999999999999999999", None),
    ("I think it is fine overall", None),
])
def test_localize_parses_step_forms(text: str, expected: int | None) -> None:
    assert parse_localize(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Category: visual perception", "visual_perception"),
    ("Category: Computational error", "computational"),
    ("conceptual", "conceptual"),
    ("Category: astrology", None),
])
def test_categorize_parses_family_names(text: str, expected: str | None) -> None:
    assert parse_categorize(text) == expected


def test_canonical_answers_parse_back_to_their_label() -> None:
    for task in (t for t in TASKS.values() if t.closed):
        labels = task.labels if task.labels is not None else (-1, 1, 2, 9, 30)
        for label in labels:
            assert task.parse(task.answer(label)) == label


def test_unknown_task_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown task"):
        get_task("telepathy")


_PAYLOADS = [
    "9^9^9", "10^100000", "1e999999", "__import__(\"os\").system(\"rm -rf /\")", "eval('1+1')",
    "\x00\x01\x02", "\u202e\u200b\u200d\ufeff", "٣", "Ⅻ", "Error Step: 9^9^9", "Error Step: 10**1000",
    "Error Step: " + "9" * 5000, "Correct: " + "y" * 10_000, "Category: " + "_" * 10_000,
    "(" * 100_000, "Step " * 200_000, "A" * 1_000_000, "\n" * 100_000, " " * 1_000_000 + "x",
]
_hostile = st.one_of(
    st.sampled_from(_PAYLOADS),
    st.integers(min_value=10**5, max_value=10**4000).map(str),
    st.lists(st.sampled_from(_PAYLOADS), min_size=1, max_size=4).map("\n".join),
)


@settings(max_examples=60, deadline=None)
@given(_hostile)
def test_hostile_payloads_parse_to_nothing_quickly(text: str) -> None:
    for task in (t for t in TASKS.values() if t.closed):
        start = time.perf_counter()
        assert task.parse(text) is None
        assert time.perf_counter() - start < 0.5


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None)
@given(st.one_of(_hostile, st.text(max_size=5000)))
def test_ten_thousand_hostile_outputs_never_hang_and_never_score(text: str) -> None:
    """The issue's bar: 10,000 hostile model outputs parse quickly, execute nothing, earn no answer."""
    for task in (t for t in TASKS.values() if t.closed):
        start = time.perf_counter()
        value = task.parse(text)
        assert time.perf_counter() - start < 0.5
        assert value is None or task.labels is None or value in task.labels


@settings(max_examples=15, deadline=None)
@given(_hostile)
def test_hostile_payloads_score_no_credit_on_open_tasks_quickly(tiny_run: Path, text: str) -> None:
    # A transcript can be any text, so open tasks may parse these; they must stay fast and earn nothing.
    item = next(i for i in load_items(tiny_run) if i.variant.error is not None)
    for task in (t for t in TASKS.values() if not t.closed):
        start = time.perf_counter()
        credit = task.credit(item, task.parse(text))
        assert time.perf_counter() - start < 1.0
        assert credit < 0.5, (task.id, text[:80])


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=3000))
def test_arbitrary_text_parses_to_a_legal_label_or_nothing(text: str) -> None:
    # NFKC can turn odd symbols into verdict words (U+2116 is "No"), so only legality is promised here.
    for task in (t for t in TASKS.values() if t.closed):
        start = time.perf_counter()
        value = task.parse(text)
        assert time.perf_counter() - start < 0.5
        if value is not None:
            if task.labels is not None:
                assert value in task.labels
            else:
                assert value == -1 or 1 <= value <= 9999
