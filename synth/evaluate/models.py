"""Model adapters by id: offline baselines (text-verifier, random, majority) and OpenAI-compatible endpoints."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from synth.errors import ConfigError
from synth.evaluate.tasks import Task
from synth.records import Item

# Responses longer than this are cut before they are stored or parsed (a verdict never needs more).
MAX_RESPONSE_CHARS = 64_000


@dataclass(frozen=True)
class Request:
    """One model call: a prompt (and image) about one item, for one task and one repeat."""

    task: Task
    item: Item
    prompt: str
    image_path: Path | None
    image_sha256: str | None
    run_index: int


@dataclass(frozen=True)
class Reply:
    """A response with the usage the endpoint reported (a model may also return a plain str)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None       # US dollars: reported by the endpoint, or from the user's prices


class ModelCallError(Exception):
    """A call that produced no answer (HTTP failure, timeout, empty reply); stored, never scored."""


class Model(Protocol):
    id: str                  # goes into the cache key, with endpoint and params
    endpoint: str
    params: dict[str, Any]   # sampling parameters (and baseline seeds / constants)

    def prepare(self, task: Task, items: Sequence[Item]) -> None: ...

    async def respond(self, request: Request) -> str | Reply: ...

    async def aclose(self) -> None: ...


MODELS: dict[str, Callable[..., Model]] = {}


def register_model(name: str) -> Callable[[Callable[..., Model]], Callable[..., Model]]:
    def add(factory: Callable[..., Model]) -> Callable[..., Model]:
        MODELS[name] = factory
        return factory
    return add


def get_model(spec: str, **options: Any) -> Model:
    """``ocr-verifier``, ``tesseract-verifier``, ``text-verifier``, ``random``, ``majority`` or
    ``openai:<model>`` (options: base_url, seed, ...)."""
    name, _, arg = spec.partition(":")
    factory = MODELS.get(name)
    if factory is None:
        raise ConfigError(f"unknown model {spec!r}; choose from {', '.join(sorted(MODELS))} "
                          "(OpenAI-compatible endpoints as openai:<model>)")
    return factory(arg, **options)


class _Offline:
    """Shared no-op parts of the baselines that run here."""

    endpoint = "local"

    def prepare(self, task: Task, items: Sequence[Item]) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _closed_only(model_id: str, task: Task) -> None:
    if not task.closed:
        raise ConfigError(f"the {model_id} baseline picks from a fixed label set; the {task.id} task has open "
                          "answers (use ocr-verifier for transcribe, or an openai:<model> endpoint)")


@register_model("text-verifier")
class TextVerifier(_Offline):
    """Upper bound: the true step text, re-checked by our verifier, answered as text."""

    TASKS = ("detect", "localize")

    def __init__(self, arg: str = "", **_: Any) -> None:
        self.id = "text-verifier"
        self.params: dict[str, Any] = {}

    def prepare(self, task: Task, items: Sequence[Item]) -> None:
        if task.id not in self.TASKS:
            raise ConfigError(f"text-verifier answers {', '.join(self.TASKS)}; it cannot answer {task.id}")

    async def respond(self, request: Request) -> str:
        from synth.verifier import verify

        item = request.item
        # value=text: the verifier judges what is written, not the generator's hidden values.
        steps = tuple(dataclasses.replace(s, value=s.text) for s in item.variant.steps)
        verdict = verify(item.problem, steps)
        task = request.task
        if task.id == "detect":
            return task.answer("correct" if verdict.fully_correct else "incorrect")
        if task.id == "localize":
            first = verdict.first_error_step
            return task.answer(-1 if first is None else first)
        raise ModelCallError(f"text-verifier cannot answer the {task.id} task")


def _item_rng(seed: int, *parts: object) -> np.random.Generator:
    digest = hashlib.sha256("\x1f".join(str(p) for p in (seed, *parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


@register_model("random")
class RandomGuess(_Offline):
    """Uniform guess over the item's labels, from (seed, task, item id, run index) alone."""

    def __init__(self, arg: str = "", *, seed: int = 0, **_: Any) -> None:
        self.id = "random"
        self.seed = int(seed)
        self.params = {"seed": self.seed}

    def prepare(self, task: Task, items: Sequence[Item]) -> None:
        _closed_only(self.id, task)

    async def respond(self, request: Request) -> str:
        task, item = request.task, request.item
        choices = task.choices(item)
        rng = _item_rng(self.seed, task.id, item.id, request.run_index)
        return task.answer(choices[int(rng.integers(len(choices)))])


@register_model("majority")
class Majority(_Offline):
    """Always the most frequent gold label of the evaluated items (ties: the first label seen)."""

    def __init__(self, arg: str = "", **_: Any) -> None:
        self.id = "majority"
        self.params: dict[str, Any] = {}
        self._label: dict[str, Any] = {}

    def prepare(self, task: Task, items: Sequence[Item]) -> None:
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


_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


@dataclass
class OpenAIChat:
    """Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LM Studio) through the openai client.

    The API key comes only from OPENAI_API_KEY. HTTP retries (429, 5xx, dropped connections)
    are the client's own, honouring Retry-After; what still fails is raised as ModelCallError.
    """

    model: str
    base_url: str | None = None
    max_retries: int = 6
    timeout: float = 120.0
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = None
    price_in: float | None = None    # US dollars per million prompt tokens (cost when the endpoint reports none)
    price_out: float | None = None   # US dollars per million completion tokens
    id: str = field(init=False)
    endpoint: str = field(init=False)
    params: dict[str, Any] = field(init=False)
    _client: Any = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError("give the served model name as openai:<model>, e.g. openai:gpt-4o-mini")
        if (self.price_in is None) != (self.price_out is None) or min(self.price_in or 0, self.price_out or 0) < 0:
            raise ConfigError("give both --price-in and --price-out (US dollars per million tokens, >= 0), or neither")
        if self.max_retries < 0 or self.timeout <= 0:
            raise ConfigError(f"max_retries must be >= 0 and timeout > 0, got {self.max_retries}, {self.timeout}")
        self.id = f"openai:{self.model}"
        self.endpoint = (self.base_url or "https://api.openai.com/v1").rstrip("/")
        self.params = {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}
        if self.base_url is None and not os.environ.get("OPENAI_API_KEY"):
            raise ConfigError("set OPENAI_API_KEY in the environment (or --base-url for a local server)")

    def prepare(self, task: Task, items: Sequence[Item]) -> None:
        return None

    def _get_client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            # Local servers usually ignore the key; the client insists on one being set.
            key = os.environ.get("OPENAI_API_KEY") or "not-needed"
            self._client = AsyncOpenAI(api_key=key, base_url=self.endpoint, max_retries=self.max_retries,
                                       timeout=self.timeout)
        return self._client

    async def respond(self, request: Request) -> Reply:
        import openai

        content: list[dict[str, Any]] = [{"type": "text", "text": request.prompt}]
        if request.image_path is not None:
            content.append({"type": "image_url", "image_url": {"url": image_data_url(request.image_path)}})
        extra = {} if self.seed is None else {"seed": self.seed + request.run_index}
        try:
            reply = await self._get_client().chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": content}],
                temperature=self.temperature, max_tokens=self.max_tokens, **extra)
        except openai.OpenAIError as exc:
            raise ModelCallError(f"{type(exc).__name__}: {str(exc)[:500]}") from exc
        choices = getattr(reply, "choices", None) or []
        text = choices[0].message.content if choices and choices[0].message is not None else None
        if not isinstance(text, str) or not text.strip():
            raise ModelCallError("empty response")
        return self._with_usage(text, getattr(reply, "usage", None))

    def _with_usage(self, text: str, usage: Any) -> Reply:
        def count(name: str) -> int | None:
            value = getattr(usage, name, None)
            return value if isinstance(value, int) and value >= 0 else None

        prompt, completion = count("prompt_tokens"), count("completion_tokens")
        # Some gateways (OpenRouter, LiteLLM proxies) report the charge; otherwise use the user's prices.
        reported = getattr(usage, "cost", None)
        if reported is None and isinstance(getattr(usage, "model_extra", None), dict):
            reported = usage.model_extra.get("cost")
        cost = float(reported) if isinstance(reported, (int, float)) and not isinstance(reported, bool) else None
        if cost is None and self.price_in is not None and prompt is not None and completion is not None:
            cost = (prompt * self.price_in + completion * (self.price_out or 0.0)) / 1e6
        return Reply(text, prompt, completion, cost)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


@register_model("openai")
def _openai(arg: str, **options: Any) -> OpenAIChat:
    known = {f.name for f in dataclasses.fields(OpenAIChat) if f.init}
    return OpenAIChat(arg, **{k: v for k, v in options.items() if k in known and v is not None})


def image_data_url(path: Path) -> str:
    mime = _IMAGE_TYPES.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
