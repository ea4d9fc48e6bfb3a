"""Evaluation tasks by id: one module per task in this package, found by discovery.

A task is data plus small functions (inspect-ai's dataset + solver + scorer, without a framework).
A task module builds one ``Task`` and registers it; adding a task is adding one file here (names
starting with ``_`` are shared helpers and are not imported by discovery)::

    # synth/evaluate/tasks/detect.py
    from synth.evaluate.metrics import classification
    from synth.evaluate.tasks import Task, register_task

    register_task(Task(
        id="detect", summary="is the shown solution correct? (balanced accuracy)",
        template="eval/detect.j2",                     # templates/eval/detect.j2, rendered by prompt_for
        gold=lambda item: "correct" if item.variant.is_correct else "incorrect",
        parse=parse_detect,                            # untrusted response -> label, or None (scored wrong)
        answer=lambda label: f"Correct: {'yes' if label == 'correct' else 'no'}",
        labels=("correct", "incorrect"), choices=lambda item: ("correct", "incorrect"),
        metrics=(classification(("correct", "incorrect")), error_detection()),   # error_detection: this module's own
    ))

The contract:

- ``gold(item)`` is the label; ``parse(response)`` reads a model's text into a label or None. Parsers
  read a bounded tail of untrusted text with anchored patterns only (``_parsing``); None scores wrong.
- ``answer(label)`` writes the canonical response for a label, so offline baselines answer through the
  same parser a real model's text goes through (``task.parse(task.answer(x)) == x`` for closed tasks).
- Closed tasks (``credit`` is None) score an exact label match and offer ``choices(item)`` to guessers;
  open tasks give ``credit(item, pred)`` in [0, 1] (loose accuracy, 1 - CER), 1.0 meaning right.
- ``metrics`` are the task's own: functions of the scored answers returning named numbers (the
  factories in ``synth.evaluate.metrics`` for shared statistics, or the task module's own). Their
  keys are merged, in order, into the task's ``metrics`` in results.json, after ``n`` and
  ``unparsed`` and before the groupings every task gets (by variant, family, error family, worst case).
- ``headline`` names the one metric a leaderboard shows for the task (a key of its metrics, e.g.
  ``balanced_accuracy``); results.json's ``summary`` gives it with a clustered 95 % interval.
  ``lower_is_better`` says which way it points (CER).
- ``context`` holds the extra variables the task's template reads (label tables from ``synth.vocab``);
  every template also gets ``question``, ``steps``, ``n_steps`` and ``image``.
- ``applies(item)`` picks the items the task is asked on; ``shows_steps`` is False when the text input
  is the question alone; ``needs_image`` when the task means nothing without the page.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from synth.errors import ConfigError
from synth.evaluate.metrics import Metric
from synth.records import Item
from synth.registry import Registry, UnknownIdError
from synth.templating import render_template

Label = Hashable


def _every_item(item: Item) -> bool:
    return True


def shows_solution(item: Item) -> bool:
    """The item shows a worked solution to judge (a ``degrade`` output's own images show none: detect, localize,
    correct and presence have no gold there, and scored it as if every page were a correct solution)."""
    return bool(item.variant.steps)


def page_text_known(item: Item) -> bool:
    """We wrote the page, so its text is known: a ``degrade`` output's own images hold text we never saw (its
    question column, if any, is not what the page says)."""
    return item.image is not None and item.problem.domain != "external" and bool(item.problem.question_text.strip())


def _no_choices(item: Item) -> tuple[Label, ...]:
    return ()


@dataclass(frozen=True, eq=False, kw_only=True)
class Task:
    """One evaluation protocol (see the module docstring for the contract)."""

    id: str
    summary: str                       # one line for `mathstress eval --help`
    template: str                      # a template under templates/, e.g. "eval/detect.j2"
    gold: Callable[[Item], Label]
    parse: Callable[[str], Label | None]
    answer: Callable[[Label], str]
    metrics: tuple[Metric, ...]
    labels: tuple[Label, ...] | None = None   # fixed label set, or None when labels depend on the item
    choices: Callable[[Item], tuple[Label, ...]] = _no_choices  # the labels a guesser may pick for this item
    credit: Callable[[Item, Label | None], float] | None = None  # open tasks: partial credit in [0, 1]
    applies: Callable[[Item], bool] = _every_item
    needs: str = "items"               # what ``applies`` asks of an item, for the error when no item has it
    shows_steps: bool = True           # text input includes the shown solution (solve tasks: question only)
    needs_image: bool = False          # meaningless without the page (transcription)
    context: Mapping[str, Any] = field(default_factory=dict)
    headline: str = "accuracy"         # the metric results.json's summary reports for this task
    lower_is_better: bool = False      # the headline falls as models improve (CER)

    @property
    def closed(self) -> bool:
        """Scored by an exact label match, from labels a guesser can pick (random and majority need this)."""
        return self.credit is None


TASKS: Registry[Task] = Registry("task", discover=__name__, hint="`mathstress eval --help` lists them")


def register_task(task: Task) -> Task:
    """Register ``task`` under its id (a second task with the same id is an error) and return it."""
    # A Task is an instance, so it would be reported as synth.evaluate.tasks.Task; name its module instead.
    object.__setattr__(task, "__module__", sys._getframe(1).f_globals.get("__name__", Task.__module__))
    return TASKS.register(task)


def get_task(task_id: str) -> Task:
    """The task registered as ``task_id``; an unknown id is a ConfigError naming the close ones."""
    try:
        return TASKS[task_id]
    except UnknownIdError as exc:
        raise ConfigError(str(exc)) from None


def prompt_for(task: Task, item: Item, *, with_image: bool, with_steps: bool) -> str:
    """The prompt text for one item (the image, when sent, travels beside it)."""
    steps: Sequence[str] = [s.text for s in item.variant.steps] if with_steps and task.shows_steps else []
    return render_template(task.template, question=item.problem.question_text, steps=steps,
                           n_steps=len(item.variant.steps), image=with_image, **task.context)
