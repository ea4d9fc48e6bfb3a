"""Model adapters by id: one module per adapter family in this package, found by discovery.

``get_model("openai:gpt-4o-mini", base_url=...)`` splits the spec at the first ``:`` and calls the factory
registered as ``openai`` with ``"gpt-4o-mini"`` and the CLI's options (``base_url``, ``seed``,
``max_retries``, ``timeout``, ``deadline``, ``price_in``, ``price_out``, ``temperature``, ``max_tokens``,
``max_tokens_param``, ``top_p``, ``extra_body``; a factory ignores those it does not use). Adding an adapter is
adding one file here (names starting with ``_`` are shared helpers)::

    # synth/evaluate/models/echo.py
    from synth.evaluate.models import Adapter, register_model

    @register_model("echo")
    class Echo(Adapter):
        \"\"\"Answers every item with its gold label (a sanity check of the parsers).\"\"\"

        def __init__(self, arg: str = "", **options):
            self.id = "echo"

        async def respond(self, request):
            return request.task.answer(request.task.gold(request.item))

The first line of the factory's docstring is its line in `mathstress eval --help`.

The protocol (``Model``) the runner uses, every method called explicitly, none probed for:

- ``id``, ``endpoint`` and ``params`` go into every cache key: two adapters that can answer differently
  must differ in one of them (a baseline's seed, a prompt logic version, sampling parameters).
- ``prepare(task, items, *, workdir)`` is called once per task before any call, with the items the task
  will ask about and the evaluation folder (None when there is none: keep nothing on disk). It refuses a
  task the adapter cannot answer (ConfigError), fits what it needs (the majority label) and notes where
  it may keep its own files (the OCR store).
- ``respond(request)`` returns the response text (or a ``Reply`` with token usage and cost); a call that
  produced no answer raises ``ModelCallError`` with a one-line reason, which is stored as a failure and
  never scored. Any other exception is a bug: calls in flight are stored, then it is re-raised.
- ``scrub(text)`` removes the adapter's secrets from anything that is stored (responses, reasons).
- ``describe()`` adds adapter facts to results.json's ``model`` entry (OCR page timings).
- ``aclose()`` ends each task's event loop's resources (HTTP clients, locks).

``Adapter`` gives the defaults for all but ``respond`` (an offline, parameterless, secretless model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from synth.errors import ConfigError
from synth.evaluate.tasks import Task
from synth.records import Item
from synth.registry import Registry, UnknownIdError

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

    def prepare(self, task: Task, items: Sequence[Item], *, workdir: Path | None = None) -> None: ...

    async def respond(self, request: Request) -> str | Reply: ...

    def scrub(self, text: str) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class Adapter:
    """Defaults for an adapter that runs here: endpoint "local", no params, answers any task, keeps no
    secrets, adds nothing to results.json and holds nothing to close. Subclasses set ``id`` and ``respond``."""

    id: str
    endpoint: str = "local"
    params: dict[str, Any] = {}  # shared and never mutated: an adapter with params assigns its own dict

    def prepare(self, task: Task, items: Sequence[Item], *, workdir: Path | None = None) -> None:
        return None

    async def respond(self, request: Request) -> str | Reply:
        raise NotImplementedError

    def scrub(self, text: str) -> str:
        return text

    def describe(self) -> dict[str, Any]:
        return {}

    async def aclose(self) -> None:
        return None


ModelFactory = Callable[..., Model]
MODELS: Registry[ModelFactory] = Registry(
    "model", discover=__name__,
    hint="`mathstress eval --help` lists them; OpenAI-compatible endpoints are openai:<model>")


def register_model(name: str) -> Callable[[ModelFactory], ModelFactory]:
    """Register a factory ``(arg, **options) -> Model`` (a class or a function) under ``name``."""
    return MODELS.register(id=name)


def get_model(spec: str, **options: Any) -> Model:
    """``ocr-verifier``, ``tesseract-verifier``, ``text-verifier``, ``random``, ``majority`` or
    ``openai:<model>`` (options: base_url, seed, ...)."""
    name, _, arg = spec.partition(":")
    try:
        factory = MODELS[name]
    except UnknownIdError as exc:
        raise ConfigError(str(exc).replace(repr(name), repr(spec), 1)) from None
    return factory(arg, **options)


def summary(factory: ModelFactory) -> str:
    """The first line of a factory's docstring (its line in `mathstress eval --help`)."""
    doc = (factory.__doc__ or "").strip()
    return doc.splitlines()[0].rstrip(".") if doc else ""
