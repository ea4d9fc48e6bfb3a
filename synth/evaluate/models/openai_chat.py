"""OpenAI-compatible chat endpoints (OpenAI, vLLM, Ollama, LM Studio) through the openai client, as ``openai:<model>``.

Every reply is untrusted: its body is read through a decoded-size cap, its JSON shape is checked here,
each call is bounded in time, and the API key is scrubbed from everything returned.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
from openai import AsyncOpenAI, DefaultAsyncHttpxClient

# The reply cap and the key's scrubbing are shared with the write-up's paraphraser; InflatedSize is re-exported
# under its old name for the hostile-reply tests.
from synth.chatclient import MAX_REPLY_BYTES, REDACTED, ReplyRejected, reply_cap, secret_pattern
from synth.chatclient import InflatedSize as _InflatedSize  # noqa: F401
from synth.errors import ConfigError
from synth.evaluate.models import Adapter, ModelCallError, Reply, Request, register_model

_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}

_SURROGATE = re.compile("[\ud800-\udfff]")


def _one_line(text: object, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _kind(value: object) -> str:
    kinds = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string",
             list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


def _error_message(body: object) -> str:
    """The human part of an error body: OpenAI's error.message, vLLM's message, FastAPI's detail, or the text."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, str):
            return _one_line(inner)
        if isinstance(inner, dict):
            for name in ("message", "detail"):
                if isinstance(inner.get(name), str) and inner[name].strip():
                    return _one_line(inner[name])
        return _one_line(json.dumps(body, default=str))
    return "" if body is None else _one_line(body)


def _failure_reason(exc: BaseException, timeout: float) -> str:
    """One line saying why a call produced no reply; equal causes give equal lines, so they group."""
    if isinstance(exc, ReplyRejected):
        return str(exc)
    if isinstance(exc, openai.APIStatusError):
        message = _error_message(exc.body)
        return f"HTTP {exc.status_code}: {message}" if message else f"HTTP {exc.status_code}"
    if isinstance(exc, openai.APITimeoutError) or "Timeout" in type(exc).__name__:
        return f"timeout: the endpoint sent nothing for {timeout:g} s (--timeout)"
    if isinstance(exc, openai.APIConnectionError):
        # The innermost cause names it (ConnectionRefusedError, gaierror, SSLCertVerificationError...).
        root: BaseException = exc
        for _ in range(10):
            nxt = root.__cause__ or root.__context__
            if nxt is None:
                break
            root = nxt
        return f"connection failed: {type(root).__name__}: {_one_line(root)}"
    return f"{type(exc).__name__}: {_one_line(exc)}"


@dataclass
class OpenAIChat(Adapter):
    """Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LM Studio) through the openai client.

    The API key comes only from OPENAI_API_KEY and is scrubbed from everything the adapter returns.
    HTTP retries (429, 5xx, dropped connections) are the client's own, honouring Retry-After. Each
    call is bounded: ``deadline`` seconds in all (retries and reading included) and ``max_reply_bytes``
    of decoded body (error bodies too). Whatever the endpoint sends back, a call either returns a Reply
    or raises ModelCallError with the reason.
    """

    model: str
    base_url: str | None = None
    max_retries: int = 6
    timeout: float = 120.0      # seconds the endpoint may stay silent (per connect / read), the client's timeout
    deadline: float = 300.0     # seconds for the whole call, retries and their waits included
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = None          # sent as seed + run index, so each repeat of an item samples anew
    top_p: float | None = None
    extra_body: dict[str, Any] | str | None = None   # more request fields (a JSON object, or its text)
    max_tokens_param: str = "auto"   # max_tokens, max_completion_tokens, or auto (switch when refused)
    price_in: float | None = None    # US dollars per million prompt tokens (cost when the endpoint reports none)
    price_out: float | None = None   # US dollars per million completion tokens
    max_reply_bytes: int = MAX_REPLY_BYTES
    id: str = field(init=False)
    endpoint: str = field(init=False)
    params: dict[str, Any] = field(init=False)
    _client: Any = field(init=False, default=None, repr=False)
    _secret: re.Pattern[str] | None = field(init=False, default=None, repr=False)
    _limit_key: str = field(init=False, default="max_tokens", repr=False)   # the name max_tokens is sent under

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError("give the served model name as openai:<model>, e.g. openai:gpt-4o-mini")
        if (self.price_in is None) != (self.price_out is None) or min(self.price_in or 0, self.price_out or 0) < 0:
            raise ConfigError("give both --price-in and --price-out (US dollars per million tokens, >= 0), or neither")
        if self.max_retries < 0 or self.timeout <= 0:
            raise ConfigError(f"max_retries must be >= 0 and timeout > 0, got {self.max_retries}, {self.timeout}")
        if not self.deadline > 0 or self.max_reply_bytes < 1024:
            raise ConfigError(f"--deadline must be > 0 seconds and max_reply_bytes >= 1024, got {self.deadline}, "
                              f"{self.max_reply_bytes}")
        if not 0 <= self.temperature <= 2 or self.max_tokens < 1:
            raise ConfigError(f"--temperature must be 0-2 and --max-tokens >= 1, got {self.temperature}, "
                              f"{self.max_tokens}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ConfigError(f"--top-p must be in (0, 1], got {self.top_p}")
        if self.max_tokens_param not in _MAX_TOKENS_PARAMS:
            raise ConfigError(f"--max-tokens-param must be one of {', '.join(_MAX_TOKENS_PARAMS)}, "
                              f"got {self.max_tokens_param!r}")
        self.extra_body = parse_extra_body(self.extra_body)
        self.id = f"openai:{self.model}"
        self.endpoint = (self.base_url or "https://api.openai.com/v1").rstrip("/")
        scheme, _, rest = self.endpoint.partition("://")
        if scheme.lower() not in ("http", "https") or not rest.strip("/"):
            # every call would fail alike ("unsupported protocol") and the run would end in exit 4 as if the
            # endpoint had failed
            raise ConfigError(f"--base-url {self.base_url!r} is not an http(s) URL; give the endpoint's address, "
                              "e.g. http://localhost:8000/v1")
        # Everything that changes what the endpoint is asked goes into the cache key; settings left at their
        # defaults are not listed, so stores written before they existed are still reused.
        self.params = {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}
        self.params |= {k: v for k, v in (("top_p", self.top_p), ("extra_body", self.extra_body or None))
                        if v is not None}
        self._limit_key = (self.max_tokens_param if self.max_tokens_param != "auto"
                           else "max_completion_tokens" if _WANTS_COMPLETION_TOKENS.match(self.model) else "max_tokens")
        if self.base_url is None and not os.environ.get("OPENAI_API_KEY"):
            raise ConfigError("set OPENAI_API_KEY in the environment (or --base-url for a local server)")
        self._secret = secret_pattern(os.environ.get("OPENAI_API_KEY"))

    def scrub(self, text: str) -> str:
        """``text`` without the API key in any spelling a server might echo it in."""
        return text if self._secret is None else self._secret.sub(REDACTED, text)

    def _get_client(self) -> Any:
        if self._client is None:
            # Local servers usually ignore the key; the client insists on one being set.
            key = os.environ.get("OPENAI_API_KEY") or "not-needed"
            self._secret = secret_pattern(os.environ.get("OPENAI_API_KEY")) or self._secret
            http = DefaultAsyncHttpxClient(event_hooks={"response": [reply_cap(self.max_reply_bytes)]},
                                           headers={"Accept-Encoding": "gzip, deflate"})
            self._client = AsyncOpenAI(api_key=key, base_url=self.endpoint, max_retries=self.max_retries,
                                       timeout=self.timeout, http_client=http)
        return self._client

    async def respond(self, request: Request) -> Reply:
        content: list[dict[str, Any]] = [{"type": "text", "text": request.prompt}]
        if request.image_path is not None:
            content.append({"type": "image_url", "image_url": {"url": image_data_url(request.image_path)}})
        limit = asyncio.timeout(self.deadline)
        try:
            async with limit:
                try:
                    body = await self._post(content, request.run_index)
                except openai.BadRequestError as exc:
                    # An endpoint that refuses the name we sent max_tokens under is asked again with the other
                    # name, and keeps it for the rest of the evaluation (o-series and gpt-5 want
                    # max_completion_tokens, older local servers know only max_tokens).
                    sent = self._limit_key
                    other = _other_limit_key(exc, sent)
                    if self.max_tokens_param != "auto" or other is None:
                        raise
                    self._limit_key = other
                    try:
                        body = await self._post(content, request.run_index)
                    except openai.BadRequestError:
                        self._limit_key = sent   # refused either way: something else is wrong
                        raise
        except Exception as exc:   # every way the network and the endpoint can fail is a stored reason
            if limit.expired():
                raise ModelCallError(f"deadline: no complete reply within {self.deadline:g} s (--deadline)") from None
            raise ModelCallError(self.scrub(_failure_reason(exc, self.timeout))) from None
        return self._parse_reply(body)

    def request_fields(self, run_index: int) -> dict[str, Any]:
        """The sampling fields of one chat request (beside model and messages), as they are sent."""
        fields: dict[str, Any] = {"temperature": self.temperature, self._limit_key: self.max_tokens}
        if self.top_p is not None:
            fields["top_p"] = self.top_p
        if self.seed is not None:
            fields["seed"] = self.seed + run_index
        return fields

    async def _post(self, content: list[dict[str, Any]], run_index: int) -> bytes:
        # The raw body, read through the cap: the client's own parser accepts any shape of JSON.
        extra = {"extra_body": self.extra_body} if self.extra_body else {}
        async with self._get_client().chat.completions.with_streaming_response.create(
                model=self.model, messages=[{"role": "user", "content": content}], **self.request_fields(run_index),
                **extra) as response:
            return await response.read()

    def describe(self) -> dict[str, Any]:
        """The request fields as sent (the name the token limit went under is chosen by the endpoint's answers)."""
        return {"request": {k: v for k, v in self.request_fields(0).items() if k != "seed"}
                | {"seed": None if self.seed is None else f"{self.seed} + run index"}
                | ({"extra_body": self.extra_body} if self.extra_body else {})}

    def _parse_reply(self, body: bytes) -> Reply:
        """The assistant text and usage of a chat.completion body, or ModelCallError naming what is wrong."""
        def fail(reason: str) -> ModelCallError:
            return ModelCallError(self.scrub(reason))

        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:   # ValueError covers bad JSON and bad UTF-8
            raise fail(f"reply is not JSON ({type(exc).__name__}: {_one_line(exc, 120)}); it starts "
                       f"{_one_line(body[:60].decode('utf-8', 'replace'), 80)!r}") from None
        if not isinstance(data, dict):
            raise fail(f"reply is {_kind(data)}, expected a chat.completion object")
        if "choices" not in data and "error" in data:
            raise fail(f"endpoint error in a 200 reply: {_error_message(data)}")
        choices = data.get("choices")
        if not isinstance(choices, list):
            raise fail(f"reply 'choices' is {_kind(choices)}, expected a list")
        if not choices:
            raise fail("reply has no choices")
        if not isinstance(choices[0], dict):
            raise fail(f"reply choices[0] is {_kind(choices[0])}, expected an object")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise fail(f"reply choices[0].message is {_kind(message)}, expected an object")
        text = message.get("content")
        if text is None and isinstance(message.get("refusal"), str):
            raise fail(f"model refused: {_one_line(message['refusal'], 120)}")
        if not isinstance(text, str):
            raise fail("empty response" if text is None else f"reply message content is {_kind(text)}, "
                       "expected a string")
        bad = _SURROGATE.search(text)
        if bad is not None:
            raise fail(f"reply content is not valid Unicode (lone surrogate U+{ord(bad.group()):04X} at "
                       f"character {bad.start()})")
        if not text.strip():
            raise fail("empty response")
        return self._with_usage(self.scrub(text), data.get("usage"))

    def _with_usage(self, text: str, usage: Any) -> Reply:
        def read(name: str) -> Any:
            if isinstance(usage, dict):
                return usage.get(name)
            value = getattr(usage, name, None)
            extra = getattr(usage, "model_extra", None)
            return extra.get(name) if value is None and isinstance(extra, dict) else value

        def count(name: str) -> int | None:
            # A count no model reaches (over 2**53: a 400-digit one made the cache's SQLite INSERT and the cost's
            # float overflow) is as unknown as a missing one.
            value = read(name)
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53
            return value if ok else None

        prompt, completion = count("prompt_tokens"), count("completion_tokens")
        # Some gateways (OpenRouter, LiteLLM proxies) report the charge; otherwise use the user's prices.
        reported = read("cost")
        try:
            cost = float(reported) if isinstance(reported, (int, float)) and not isinstance(reported, bool) else None
        except OverflowError:  # an integer too large for a float
            cost = None
        if cost is not None and not (math.isfinite(cost) and cost >= 0):   # 1e999 parses as inf
            cost = None
        if cost is None and self.price_in is not None and prompt is not None and completion is not None:
            cost = (prompt * self.price_in + completion * (self.price_out or 0.0)) / 1e6
        return Reply(text, prompt, completion, cost)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


@register_model("openai")
def _openai(arg: str, **options: Any) -> OpenAIChat:
    """Any OpenAI-compatible chat endpoint, as openai:<model> (OpenAI; vLLM, Ollama, LM Studio with --base-url)."""
    known = {f.name for f in dataclasses.fields(OpenAIChat) if f.init}
    return OpenAIChat(arg, **{k: v for k, v in options.items() if k in known and v is not None})


_MAX_TOKENS_PARAMS = ("auto", "max_tokens", "max_completion_tokens")
# Model names whose endpoints take only max_completion_tokens (inspect-ai's rule: o-series and gpt-5).
_WANTS_COMPLETION_TOKENS = re.compile(r"^(?:.*/)?(?:o\d|gpt-5)", re.IGNORECASE)
# How endpoints say a field is not accepted (OpenAI, vLLM's and FastAPI's validation, LiteLLM).
_REFUSED_FIELD = re.compile(r"unsupported|not supported|unrecognized|unknown|not allowed|not permitted|extra "
                            r"(?:inputs|fields)|instead")
# Request fields the adapter writes itself; --extra-body may add any other.
_RESERVED_FIELDS = ("model", "messages", "stream")


def parse_extra_body(value: dict[str, Any] | str | None) -> dict[str, Any] | None:
    """--extra-body as a JSON object (given as text or already parsed); ConfigError says what is wrong."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ConfigError(f"--extra-body must be a JSON object, e.g. '{{\"top_k\": 20}}' ({exc})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"--extra-body must be a JSON object, e.g. '{{\"top_k\": 20}}', got {_kind(value)}")
    taken = [k for k in _RESERVED_FIELDS if k in value]
    if taken:
        raise ConfigError(f"--extra-body may not set {', '.join(taken)}: the adapter writes those fields itself")
    return value


def _other_limit_key(exc: openai.APIStatusError, sent: str) -> str | None:
    """The other name for the token limit when a 400 says the one ``sent`` is not supported, else None."""
    body = exc.body if isinstance(exc.body, dict) else {}
    text = f"{_error_message(body) or exc}".lower()
    named = body.get("param") == sent or re.search(rf"(?<![a-z_]){sent}(?![a-z_])", text) is not None
    return ("max_completion_tokens" if sent == "max_tokens" else "max_tokens") \
        if named and _REFUSED_FIELD.search(text) else None


def image_data_url(path: Path) -> str:
    mime = _IMAGE_TYPES.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
