"""Offline baselines that run here: text-verifier (upper bound), random and majority guessers."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from synth.errors import ConfigError
from synth.evaluate.models import Adapter, ModelCallError, Request, register_model
from synth.evaluate.models._verifier import check_task, verdict_answer
from synth.evaluate.tasks import Task
from synth.records import Item
from synth.verifier import verify


def _closed_only(model_id: str, task: Task) -> None:
    if not task.closed:
        raise ConfigError(f"the {model_id} baseline picks from a fixed label set; the {task.id} task has open "
                          "answers (use ocr-verifier for transcribe, or an openai:<model> endpoint)")


@register_model("text-verifier")
class TextVerifier(Adapter):
    """Upper bound: the true step text, re-checked by our verifier (detect, localize)."""

    def __init__(self, arg: str = "", **_: Any) -> None:
        self.id = "text-verifier"
        self.params: dict[str, Any] = {}

    def prepare(self, task: Task, items: Sequence[Item], *, workdir: Path | None = None) -> None:
        check_task(self.id, task)

    async def respond(self, request: Request) -> str:
        item = request.item
        # value = what is written: the verifier judges the shown claim, not the generator's hidden values. A worded
        # step (a student's or a chain of thought's words around its math: synth.chains) writes its claim as
        # ``math``, in its text; its words are not a value (taken as one, every worded line read as misdisplayed).
        steps = tuple(dataclasses.replace(s, value=s.math or s.text) for s in item.variant.steps)
        return verdict_answer(request.task, verify(item.problem, steps))


def _item_rng(seed: int, *parts: object) -> np.random.Generator:
    digest = hashlib.sha256("\x1f".join(str(p) for p in (seed, *parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


@register_model("random")
class RandomGuess(Adapter):
    """Uniform guess over the item's labels, from (seed, task, item id, run index) alone (closed tasks)."""

    def __init__(self, arg: str = "", *, seed: int = 0, **_: Any) -> None:
        self.id = "random"
        self.seed = int(seed)
        self.params = {"seed": self.seed}

    def prepare(self, task: Task, items: Sequence[Item], *, workdir: Path | None = None) -> None:
        _closed_only(self.id, task)

    async def respond(self, request: Request) -> str:
        task, item = request.task, request.item
        choices = task.choices(item)
        rng = _item_rng(self.seed, task.id, item.id, request.run_index)
        return task.answer(choices[int(rng.integers(len(choices)))])


@register_model("majority")
class Majority(Adapter):
    """Always the most frequent gold label of the evaluated items (closed tasks; ties: the first seen)."""

    def __init__(self, arg: str = "", **_: Any) -> None:
        self.id = "majority"
        self.params: dict[str, Any] = {}
        self._label: dict[str, Any] = {}

    def prepare(self, task: Task, items: Sequence[Item], *, workdir: Path | None = None) -> None:
        _closed_only(self.id, task)
        counts = Counter(task.gold(item) for item in items)
        if counts:
            label = counts.most_common(1)[0][0]
            self._label[task.id] = label
            self.params = {**self.params, task.id: str(label)}

    async def respond(self, request: Request) -> str:
        if request.task.id not in self._label:
            raise ModelCallError("majority baseline was not prepared for this task")
        return request.task.answer(self._label[request.task.id])
