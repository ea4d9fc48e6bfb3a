"""Requests and tokens per minute, held across a whole evaluation (every task of one `mathstress eval`).

Calls are spread evenly instead of let through in bursts: the next call may start ``60 / rpm`` seconds after
the last one, and a call that is expected to use ``t`` tokens moves the token clock on by ``60 * t / tpm``
seconds. So any window of ``w`` seconds holds at most ``w * rpm / 60 + 1`` calls and the tokens of
``w * tpm / 60`` plus one call's. Token use is known only when the reply arrives: a call is charged an
estimate when it starts (the mean of the replies seen so far for that task, or before any reply a
generous guess from the prompt, the image and the reply limit), and the difference is settled when its
usage comes back. Until the first reply of a task reports its usage, that task's other calls wait for it, so
an early overestimate is never charged to a whole batch of calls at once. Only plain numbers are shared
(no asyncio objects), so one limiter serves the event loops of several tasks.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from synth.errors import ConfigError

# An A4 page sent at detail "auto" is about six 512 px tiles: 6 x 170 + 85 tokens (OpenAI's image pricing).
IMAGE_TOKENS_GUESS = 1105
_RECENT = 50   # replies per task the estimate averages over


def guess_tokens(prompt: str, *, image: bool, max_tokens: int | None) -> int:
    """Tokens a call may use before any reply says how many it does: ~4 characters a token, the image,
    and the whole reply limit (an overestimate, settled when the reply arrives)."""
    return len(prompt) // 4 + (IMAGE_TOKENS_GUESS if image else 0) + int(max_tokens or 0)


@dataclass
class RateLimiter:
    """At most ``rpm`` calls and ``tpm`` tokens per minute (None: no limit of that kind)."""

    rpm: float | None = None
    tpm: float | None = None
    clock: Callable[[], float] = time.monotonic
    _next_call: float = field(default=float("-inf"), init=False)
    _next_token: float = field(default=float("-inf"), init=False)
    _seen: dict[str, deque[int]] = field(default_factory=lambda: defaultdict(lambda: deque(maxlen=_RECENT)),
                                         init=False)
    _probing: set[str] = field(default_factory=set, init=False)   # tasks whose first call is out, usage unknown

    def __post_init__(self) -> None:
        for name, value in (("--rpm", self.rpm), ("--tpm", self.tpm)):
            if value is not None and not value > 0:
                raise ConfigError(f"{name} must be a positive number per minute, got {value}")

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def estimate(self, kind: str, guess: int) -> int:
        """Tokens to charge a call of ``kind`` (a task): the mean of its recent replies, else ``guess``."""
        seen = self._seen.get(kind)
        return round(sum(seen) / len(seen)) if seen else guess

    def reserve(self, tokens: int) -> float:
        """Book the next start time for a call expected to use ``tokens``; returns the seconds to wait."""
        now = self.clock()
        start = max(now, self._next_call, self._next_token)
        if self.rpm is not None:
            self._next_call = start + 60.0 / self.rpm
        if self.tpm is not None:
            self._next_token = start + 60.0 * tokens / self.tpm
        return start - now

    async def acquire(self, kind: str, guess: int) -> int:
        """Wait for this call's turn; returns the tokens it was charged (give them back to ``settle``)."""
        if self.tpm is not None:
            while kind in self._probing and not self._seen.get(kind):
                await asyncio.sleep(0.02)
            if not self._seen.get(kind):
                self._probing.add(kind)
        charged = self.estimate(kind, guess) if self.tpm is not None else 0
        wait = self.reserve(charged)
        if wait > 0:
            await asyncio.sleep(wait)
        return charged

    def settle(self, kind: str, charged: int, used: int | None) -> None:
        """Correct the token clock by what the call really used (None: the call failed or the endpoint did not
        say; the estimate stands, and a task that never reports usage is charged its guess throughout)."""
        if self.tpm is None:
            return
        self._seen[kind].append(charged if used is None else used)
        self._probing.discard(kind)
        if used is not None:
            self._next_token += 60.0 * (used - charged) / self.tpm
