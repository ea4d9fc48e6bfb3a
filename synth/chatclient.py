"""The HTTP-level guards every OpenAI-compatible chat call shares: a decoded-size cap on reply bodies, and the API
key kept out of what is returned.

The evaluation adapter (``synth.evaluate.models.openai_chat``) and the write-up's paraphraser (``synth.paraphrase``)
both read untrusted endpoints through the openai client; this is the part of that which needs no openai import,
low in the layers so that both may use it.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import sys
import zlib
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

# A chat completion is a few kilobytes; anything past this, decoded, is refused as it streams in.
MAX_REPLY_BYTES = 4 * 1024 * 1024
# The key is also removed in these spellings: the raw key covers "Bearer <key>" and quoted echoes.
REDACTED = "[redacted]"
_MIN_SECRET_CHARS = 8    # shorter "keys" (EMPTY, ollama) are placeholders, and scrubbing them would edit answers


class ReplyRejected(Exception):
    """A reply refused while it was read (too large, an encoding we did not ask for)."""


def secret_pattern(secret: str | None) -> re.Pattern[str] | None:
    """A pattern matching ``secret`` as sent and as a server may echo it: raw, URL-, JSON- and base64-encoded."""
    if not secret or len(secret) < _MIN_SECRET_CHARS:
        return None
    forms = {secret, quote(secret, safe=""), json.dumps(secret)[1:-1],
             base64.b64encode(secret.encode("utf-8")).decode("ascii").rstrip("=")}
    return re.compile("|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)), re.IGNORECASE)


class InflatedSize:
    """Counts the decoded size of a body from its raw chunks (gzip and deflate decoded in 1 MiB pieces, output
    dropped) and raises ReplyRejected past the limit, before the HTTP client decodes the same chunk."""

    _PIECE = 1 << 20

    def __init__(self, content_encoding: str, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.refused: str | None = None
        self.stages: list[list[Any]] = []   # [decompressor, first chunk still to come] in the order they apply
        for coding in reversed([c.strip().lower() for c in content_encoding.split(",") if c.strip()]):
            if coding == "gzip":
                self.stages.append([zlib.decompressobj(zlib.MAX_WBITS | 16), False])
            elif coding == "deflate":
                self.stages.append([zlib.decompressobj(), True])
            elif coding in ("br", "zstd"):   # we ask for gzip or deflate; these cannot be counted here
                self.refused = f"reply used content-encoding {coding}, which was not asked for"
            # identity and unknown codings reach the client undecoded: counted as they are

    def feed(self, chunk: bytes, stage: int = 0) -> None:
        if self.refused is not None:
            raise ReplyRejected(self.refused)
        if stage == len(self.stages):
            self.size += len(chunk)
            if self.size > self.limit:
                raise ReplyRejected(f"response larger than {self.limit} bytes (decoded)")
            return
        entry = self.stages[stage]
        data = chunk
        while data:
            try:
                out = entry[0].decompress(data, self._PIECE)
            except zlib.error:
                if entry[1]:   # deflate without its zlib header, as the HTTP client also retries it
                    entry[:] = [zlib.decompressobj(-zlib.MAX_WBITS), False]
                    continue
                self.stages = self.stages[:stage]   # broken data: the client's own decoder reports it
                return self.feed(chunk, stage)
            entry[1] = False
            self.feed(out, stage + 1)
            data = entry[0].unconsumed_tail


@functools.cache
def _capped_stream_type(base: type) -> type:
    """A byte stream of the client's HTTP library (httpx or httpx2) that counts what it passes on."""

    class CappedStream(base):  # type: ignore[valid-type, misc]
        def __init__(self, inner: Any, counter: InflatedSize) -> None:
            self._inner = inner
            self._counter = counter

        async def __aiter__(self):  # type: ignore[no-untyped-def]
            async for chunk in self._inner:
                self._counter.feed(chunk)
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

        @property
        def elapsed(self) -> Any:
            return getattr(self._inner, "elapsed", None)

    return CappedStream


def reply_cap(limit: int) -> Callable[[Any], Any]:
    """An HTTP response hook: every body the client reads (answers, error bodies, redirects) stops at ``limit``."""

    async def cap(response: Any) -> None:
        http = sys.modules[type(response).__module__.partition(".")[0]]
        counter = InflatedSize(response.headers.get("content-encoding", ""), limit)
        response.stream = _capped_stream_type(http.AsyncByteStream)(response.stream, counter)

    return cap
