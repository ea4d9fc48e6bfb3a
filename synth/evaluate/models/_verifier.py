"""Our verifier as a judge: the tasks it answers and the label its verdict gives for each."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from synth import _bounded
from synth.errors import ConfigError
from synth.evaluate.models import ModelCallError
from synth.evaluate.tasks import Label, Task
from synth.evaluate.tasks.localize import NO_ERROR
from synth.records import Problem, Step
from synth.verifier import Verdict, verify

# CPU seconds the verifier may spend judging steps it did not write (an OCR reading of an image).
UNTRUSTED_VERIFY_CPU_S = 10.0

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


def verify_untrusted(problem: Problem, steps: Sequence[Step], *, cpu_s: float = UNTRUSTED_VERIFY_CPU_S) -> Verdict:
    """The verifier's verdict on steps read from an image, judged in the bounded worker process.

    A reading can hold a line whose expansion or simplification would not end in any useful time
    (``(x+y+z+w)^1000``); the whole judgement runs where it is killed when ``cpu_s`` CPU seconds are spent,
    and the item is then a stored failure with this reason, never a verdict.
    """
    verdict = _bounded.call(verify, problem, tuple(steps), cpu_s=cpu_s)
    if verdict is None:
        raise ModelCallError(f"the verifier could not judge the steps within {cpu_s:g} CPU s (or failed on them)")
    return verdict
