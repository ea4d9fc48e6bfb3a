"""Our verifier as a judge: the tasks it answers and the label its verdict gives for each."""

from __future__ import annotations

from collections.abc import Callable

from synth.errors import ConfigError
from synth.evaluate.models import ModelCallError
from synth.evaluate.tasks import Label, Task
from synth.evaluate.tasks.localize import NO_ERROR
from synth.verifier import Verdict

# What a verdict answers, per task: the verifier finds the first wrong step, so it can detect and localize.
_LABEL_OF: dict[str, Callable[[Verdict], Label]] = {
    "detect": lambda v: "correct" if v.fully_correct else "incorrect",
    "localize": lambda v: NO_ERROR if v.first_error_step is None else v.first_error_step,
}
VERDICT_TASKS = tuple(_LABEL_OF)


def check_task(model_id: str, task: Task, also: tuple[str, ...] = (), hint: str = "") -> None:
    """Refuse a task a verifier model cannot answer: only detect, localize and those in ``also``."""
    answers = (*VERDICT_TASKS, *also)
    if task.id not in answers:
        raise ConfigError(f"{model_id} answers {', '.join(answers)}; it cannot answer {task.id}{hint}")


def verdict_answer(task: Task, verdict: Verdict) -> str:
    """The task's canonical response for what the verifier found."""
    label_of = _LABEL_OF.get(task.id)
    if label_of is None:
        raise ModelCallError(f"the verifier cannot answer the {task.id} task")
    return task.answer(label_of(verdict))
