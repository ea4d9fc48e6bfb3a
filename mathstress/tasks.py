"""One inspect task per mathstress evaluation task: dataset, solver and scorer from the same registry.

Task parameters (``-T name=value``): ``run`` (a run folder), ``limit`` (that many base problems, each with all
its variants, taken in turn from each family, as ``mathstress eval --limit``), ``input`` (``image`` or ``text``),
``temperature`` and ``max_tokens`` (the defaults of ``mathstress eval``; inspect's own ``--temperature`` etc. win).
``--epochs K`` plays the part of ``--runs K``: epoch k is run index k - 1.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from inspect_ai import Task as InspectTask
from inspect_ai import task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

from synth.evaluate.cache import json_ready
from synth.evaluate.runner import load_items, plan
from synth.evaluate.scoring import score as score_item
from synth.evaluate.tasks import TASKS, get_task
from synth.records import Item

SCORER = "mathstress"   # the scorer's name in the logs (what `mathstress report --from-inspect` reads)


@cache
def _items(run: str, limit: int | None) -> dict[str, Item]:
    return {item.id: item for item in load_items(run, limit=limit)}


def samples(task_id: str, run: str, limit: int | None, input: str) -> list[Sample]:
    """The task's requests as inspect samples: the prompt text, then the page (as ``mathstress eval`` sends them)."""
    t = get_task(task_id)
    items = list(_items(run, limit).values())
    out = []
    for request in plan(run, t, items, runs=1, input_mode=input):   # type: ignore[arg-type]
        content: list[Any] = [ContentText(text=request.prompt)]
        if request.image_path is not None:
            content.append(ContentImage(image=str(request.image_path)))
        item = request.item
        out.append(Sample(id=item.id, input=[ChatMessageUser(content=content)], target=str(t.gold(item)),
                          metadata={"item_id": item.id, "base_id": item.base_id, "task": t.id, "input": input}))
    return out


@scorer(metrics=[accuracy(), stderr()], name=SCORER)
def mathstress_scorer(task_id: str, run: str, limit: int | None = None) -> Callable[..., Any]:
    """The task's own parser and credit (synth.evaluate.scoring.score) on the model's completion."""
    t = get_task(task_id)

    async def score(state: TaskState, target: Target) -> Score:
        item = _items(run, limit)[state.metadata["item_id"]]
        s = score_item(t, item, state.epoch - 1, state.output.completion)
        return Score(value=s.credit, answer=None if s.pred is None else str(s.pred),
                     metadata={"pred": json_ready(s.pred), "correct": s.correct})

    return score


def _inspect_task(task_id: str) -> Callable[..., InspectTask]:
    def build(run: str = "outputs/quickstart", limit: int | None = None, input: str = "image",
              temperature: float = 0.0, max_tokens: int = 1024) -> InspectTask:
        return InspectTask(dataset=MemoryDataset(samples(task_id, run, limit, input), name=f"mathstress-{task_id}"),
                           solver=[generate()], scorer=mathstress_scorer(task_id, run, limit),
                           config=GenerateConfig(temperature=temperature, max_tokens=max_tokens),
                           metadata={"mathstress_task": task_id, "run": run, "limit": limit, "input": input})

    build.__name__ = build.__qualname__ = task_id.replace("-", "_")
    build.__doc__ = f"mathstress {task_id}: {TASKS[task_id].summary}."
    return task(name=task_id)(build)


# Derived from the registry, never listed by hand: a new mathstress task is an inspect task too.
INSPECT_TASKS = {task_id: _inspect_task(task_id) for task_id in TASKS}
globals().update({task_id.replace("-", "_"): fn for task_id, fn in INSPECT_TASKS.items()})
