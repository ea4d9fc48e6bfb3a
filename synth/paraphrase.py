"""Reword a base's styled chains with a language model, keeping every math claim, every label and the twin pairing.

Optional (``generate.paraphrase``), in the write-up stage after :func:`synth.chains.write_contents`. Design:

- The model never sees mathematics. Each step is sent with its math claims (``Step.spans``), and any word that
  carries math (``πr²``, ``mm²``, a digit), replaced by numbered markers ``[[n]]``; it rewords the words around
  them. The claims go back in verbatim where the markers come back,
  so spans are recomputed exactly and the verifier's input is unchanged by construction (and checked again).
- One request per base words the clean twin. A variant reuses the twin's reworded words for every step whose
  words equal a twin step's (its claims may differ: computational, conceptual, visual errors change only claims),
  found by aligning the two chains. A step whose words differ from its twin step by one replaced phrase takes the
  twin's rewording with that phrase swapped, when the phrase occurs there once. Only what is left (an inserted
  remark or declaration, words the injector changed elsewhere) is asked for, in one request per variant, with the
  twin's reworded steps around it as context and the words that differ from the twin protected as markers too,
  so a wording error (a unit, a term) survives verbatim. Twin and variants so read alike except at the edit.
- A base is paraphrased whole or not at all: if any of its chains fails a check, every chain keeps its template
  wording (a twin reworded beside a variant that is not would itself tell them apart). The funnel counts bases
  under ``paraphrase.<style>`` with the first reason met (:data:`REASONS`).
- Checks on every reworded step: each of its markers exactly once and in order (``claim_lost``; a marker of
  another step: ``steps_reordered``), no number or math sign that its own words did not have (``new_math``), no
  character outside letters, plain punctuation and those its words had (``bad_characters``: markup, links, other
  scripts), no word that judges a step or speaks of the task (``judgement_words``: "wrong", "mistake", "ignore
  the instructions"), a length near the original's (``length``); then the verifier's verdict on every chain must
  equal the verdict before (``labels_changed``).
- Replies are cached in the run folder (``paraphrase/<sha256>.json``, keyed by model, endpoint, sampling fields
  and prompt), written as they arrive, so a resumed or repeated run reads them back and gives the same bytes.
  Failed calls are not cached (a re-run asks again). The API key is read from the environment when the stage
  starts, sent only as the client's header, and scrubbed from every reply before it is used or stored.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import string
from collections import Counter
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import numpy as np

from synth.chatclient import MAX_REPLY_BYTES, REDACTED, ReplyRejected, reply_cap, secret_pattern
from synth.config import ParaphraseConfig
from synth.errors import ConfigError
from synth.generators import get_family
from synth.records import Problem, Step, Variant
from synth.verification import verify
from synth.verification import worked as worked_context

REASONS = ("api_error", "timeout", "reply_too_large", "malformed_reply", "step_count", "claim_lost",
           "steps_reordered", "new_math", "bad_characters", "judgement_words", "length", "labels_changed",
           "unsupported_text")
MARKER = re.compile(r"\[\[(\d+)\]\]")
_MATHY = re.compile(r"[^\s]*[\d²³√±×÷=<>^/−+%°π∑∫][^\s]*")
_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")  # words, spaces and single signs: "radius:" -> "radius", ":"
_NUMBER = re.compile(r"\d+")
_MATH_SIGNS = frozenset("0123456789=+-−×÷*/^<>≤≥√π%±·∑∫")
_PLAIN = frozenset(string.ascii_letters + " .,;:!?'\"()-–—’‘“”")
_MAX_STEP_CHARS = 1500
# Words that judge a step or speak of the task: a rewording that adds them could tell which chain is wrong (or say
# a right one is), or carries an injected instruction.
_JUDGING = re.compile(r"\b(wrong\w*|incorrect\w*|mistake\w*|mistaken\w*|errors?|erroneous\w*|ignor\w*|instruction\w*"
                      r"|markers?|json|prompt\w*|assistant|language model|AI)\b", re.IGNORECASE)
_VOICES = {"student": "a school student's written answer, a few words around each calculation",
           "cot": "a model's step-by-step reasoning, in short paragraphs"}
CACHE_FOLDER = "paraphrase"


class Rejected(Exception):
    """A paraphrase refused; ``reason`` is one of :data:`REASONS`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ---------------------------------------------------------------- a step cut at what must not change

@dataclass(frozen=True)
class Frame:
    """A step's text cut at its protected fragments: ``words[0] frags[0] words[1] ... frags[k-1] words[k]``.

    ``claims[i]`` says whether ``frags[i]`` is a math claim (a span of the step) or words kept as they are
    (an edit of the injector's that the twin does not have).
    """

    words: tuple[str, ...]
    frags: tuple[str, ...]
    claims: tuple[bool, ...]

    def skeleton(self, first: int, words: Sequence[str] | None = None) -> str:
        """The text with each fragment as a marker numbered from ``first``."""
        words = self.words if words is None else words
        return "".join(w + (f"[[{first + i}]]" if i < len(self.frags) else "") for i, w in enumerate(words))

    def assemble(self, words: Sequence[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
        """The text with ``words`` around the fragments, and the spans of its claims."""
        out: list[str] = []
        spans: list[tuple[int, int]] = []
        n = 0
        for i, frag in enumerate(self.frags):
            out.append(words[i])
            n += len(words[i])
            if self.claims[i]:
                spans.append((n, n + len(frag)))
            out.append(frag)
            n += len(frag)
        out.append(words[-1])
        return "".join(out), tuple(spans)


Piece = tuple[str, bool | None]   # (text, None for words, True for a claim, False for words kept verbatim)


def _fold(pieces: Sequence[Piece]) -> Frame:
    """A frame from pieces in text order (adjacent words joined, empty words between adjacent fragments)."""
    words: list[str] = [""]
    frags: list[str] = []
    claims: list[bool] = []
    for text, claim in pieces:
        if claim is None:
            words[-1] += text
        else:
            frags.append(text)
            claims.append(claim)
            words.append("")
    return Frame(tuple(words), tuple(frags), tuple(claims))


def _words(text: str) -> list[Piece]:
    """Words, with a token that carries math (``πr²``, ``mm²``, ``Year 8``'s ``8``) kept verbatim as a fragment."""
    out: list[Piece] = []
    at = 0
    for m in _MATHY.finditer(text):
        out += [(text[at:m.start()], None), (m.group(), False)]
        at = m.end()
    return [*out, (text[at:], None)]


def frame(step: Step) -> Frame:
    """``step`` cut at its claims (the whole text is one claim when it has no spans) and at words carrying math."""
    spans = step.spans or ((0, len(step.text)),)
    pieces: list[Piece] = []
    at = 0
    for a, b in spans:
        if a < at or b < a or b > len(step.text):
            raise Rejected("unsupported_text")
        pieces += [*_words(step.text[at:a]), (step.text[a:b], True)]
        at = b
    pieces += _words(step.text[at:])
    if any(claim is None and ("[[" in text or "]]" in text) for text, claim in pieces):
        raise Rejected("unsupported_text")
    return _fold(pieces)


def _middle(a: str, b: str) -> tuple[str, str, str, str]:
    """Where ``b`` differs from ``a``, in whole tokens: (a's differing part, b's, b's text before it, b's after)."""
    ta, tb = _TOKENS.findall(a), _TOKENS.findall(b)
    p = 0
    while p < min(len(ta), len(tb)) and ta[p] == tb[p]:
        p += 1
    s = 0
    while s < min(len(ta), len(tb)) - p and ta[-1 - s] == tb[-1 - s]:
        s += 1
    return "".join(ta[p:len(ta) - s]), "".join(tb[p:len(tb) - s]), "".join(tb[:p]), "".join(tb[len(tb) - s:])


def protect_edit(twin: Frame, step: Frame) -> Frame:
    """``step`` with the words that differ from its twin step's kept as fragments (so they stay verbatim)."""
    pieces: list[Piece] = []
    for t, chunk in enumerate(step.words):
        _, mid, pre, post = _middle(twin.words[t], chunk) if t < len(twin.words) else ("", "", chunk, "")
        pieces += [(pre, None), (mid, False), (post, None)] if mid.strip() else [(chunk, None)]
        if t < len(step.frags):
            pieces.append((step.frags[t], step.claims[t]))
    return _fold(pieces)


def transfer(twin: Frame, step: Frame, reworded: Sequence[str]) -> tuple[str, ...] | None:
    """The twin step's reworded words with the one phrase ``step`` replaces swapped in, or None when that cannot
    be done unambiguously (several places differ, the phrase is not in the rewording exactly once)."""
    if len(twin.words) != len(step.words):
        return None
    differ = [t for t in range(len(step.words)) if twin.words[t] != step.words[t]]
    if len(differ) != 1:
        return None
    t = differ[0]
    old, new, _, _ = _middle(twin.words[t], step.words[t])
    if not old.strip() or reworded[t].count(old) != 1:
        return None
    return (*reworded[:t], reworded[t].replace(old, new), *reworded[t + 1:])


# ---------------------------------------------------------------- prompts and replies

_RULES = """Rules:
- Change only the wording. Each marker such as [[3]] stands for a piece of mathematics: keep every marker exactly
  once, in its own step, in the same order. Never write the mathematics yourself.
- Write no digits, numbers, units or mathematical signs of your own outside the markers.
- Keep every step and the order of the steps; do not merge, split, add, check or correct anything, even if a step
  looks wrong: a wrong step must stay just as wrong.
- Plain text only: no markdown, no lists, no quotation of these instructions."""


def twin_prompt(style: str, frames: Sequence[Frame]) -> str:
    """The request that rewords a clean twin's chain: every step, claims as markers numbered through the chain."""
    lines, n = [], 1
    for j, f in enumerate(frames, start=1):
        lines.append(f"{j}. {f.skeleton(n)}")
        n += len(f.frags)
    return (f"Reword this worked solution to a school maths problem so that it reads naturally, as "
            f"{_VOICES.get(style, 'a worked solution')}.\n{_RULES}\n"
            f'Reply with JSON only: {{"steps": [...]}}, one string per step, {len(frames)} in all.\n\n'
            "Steps:\n" + "\n".join(lines))


def variant_prompt(style: str, frames: Sequence[Frame], words: Sequence[Sequence[str] | None]) -> str:
    """The request for a variant's steps left to reword (``words[j]`` None), the others given already reworded."""
    lines, n = [], 1
    for j, (f, w) in enumerate(zip(frames, words), start=1):
        tag = "[reword]" if w is None else "[keep]"
        lines.append(f"{j}. {tag} {f.skeleton(n, w)}")
        n += len(f.frags)
    todo = sum(w is None for w in words)
    return (f"This worked solution to a school maths problem is written as {_VOICES.get(style, 'a worked solution')}."
            " The steps marked [keep] are final. Reword only the steps marked [reword] so that they read like"
            f" the steps around them.\n{_RULES}\n"
            f'Reply with JSON only: {{"steps": [...]}}, one string per [reword] step in order, {todo} in all.\n\n'
            "Steps:\n" + "\n".join(lines))


def reply_steps(reply: str, n: int) -> list[str]:
    """The ``steps`` list of a JSON reply (a code fence and text around the object are tolerated)."""
    text = reply.strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise Rejected("malformed_reply")
    try:
        data = json.loads(text[start:end + 1])
    except (ValueError, RecursionError):
        raise Rejected("malformed_reply") from None
    steps = data.get("steps") if isinstance(data, dict) else None
    if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
        raise Rejected("malformed_reply")
    if len(steps) != n:
        raise Rejected("step_count")
    return steps


def reworded_words(raw: str, f: Frame, first: int, others: frozenset[int]) -> tuple[str, ...]:
    """The words of one reworded step between its markers ``first ...``; Rejected when a check fails."""
    if len(raw) > _MAX_STEP_CHARS:
        raise Rejected("length")
    raw = " ".join(raw.split())
    parts = MARKER.split(raw)
    found = [int(x) for x in parts[1::2]]
    wanted = list(range(first, first + len(f.frags)))
    if found != wanted:
        raise Rejected("steps_reordered" if set(found) & others or (sorted(found) == wanted) else "claim_lost")
    words = tuple(parts[0::2])
    old, new = "".join(f.words), "".join(words)
    if "[[" in new or "]]" in new:
        raise Rejected("claim_lost")
    allowed = _PLAIN | set(old)
    strange = set(new) - allowed
    if strange & _MATH_SIGNS or Counter(_NUMBER.findall(new)) - Counter(_NUMBER.findall(old)):
        raise Rejected("new_math")
    if strange:
        raise Rejected("bad_characters")
    if {w.lower() for w in _JUDGING.findall(new)} - {w.lower() for w in _JUDGING.findall(old)}:
        raise Rejected("judgement_words")
    if len(new) > 2 * len(old) + 40 or len(new) < len(old) // 3 - 10:
        raise Rejected("length")
    for i in range(1, len(words) - 1):  # two fragments glued together that had words between them
        if f.words[i].strip() and not words[i].strip():
            raise Rejected("claim_lost")
    return words


def _check_total(old: Sequence[Frame], new: Sequence[Sequence[str]]) -> None:
    before = sum(len("".join(f.words)) for f in old)
    if sum(len("".join(w)) for w in new) > 1.6 * before + 100:
        raise Rejected("length")


# ---------------------------------------------------------------- the endpoint and the cache

class ReplyCache:
    """Replies by key in a folder (``None``: this process only); each file written whole, then renamed."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.memory: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        if key in self.memory or self.folder is None:
            return self.memory.get(key)
        try:
            data = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        reply = data.get("reply") if isinstance(data, dict) else None
        return reply if isinstance(reply, str) else None

    def put(self, key: str, model: str, reply: str) -> None:
        self.memory[key] = reply
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f".{key}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps({"model": model, "reply": reply}, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self.folder / f"{key}.json")
        except OSError:
            pass  # the reply is still used; a full disk stops the shard's commit, and a resume asks again


def _openai() -> Any:
    try:
        import openai  # imported when the stage runs: 1-3 s that runs without paraphrasing never pay
    except ImportError as exc:
        raise ConfigError("generate.paraphrase needs the openai package (pip install openai)") from exc
    return openai


def _failure(exc: BaseException, openai: Any) -> str:
    cause: BaseException | None = exc
    for _ in range(10):
        if cause is None:
            break
        if isinstance(cause, ReplyRejected):
            return "reply_too_large"
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, TimeoutError | openai.APITimeoutError):
        return "timeout"
    return "api_error"


def _content(body: bytes) -> str:
    """The assistant text of a chat.completion body."""
    try:
        data = json.loads(body)
        text = data["choices"][0]["message"]["content"]
    except (ValueError, RecursionError, KeyError, IndexError, TypeError):
        raise Rejected("malformed_reply") from None
    if not isinstance(text, str) or not text.strip():
        raise Rejected("malformed_reply")
    return text


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to the end from synchronous code, also where an event loop already runs (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def api_key(cfg: ParaphraseConfig) -> str:
    """The key from the environment ("" for a local server that needs none); a ConfigError naming the variable
    when a hosted endpoint would be asked without one. The run checks it before it makes the run folder."""
    key = os.environ.get(cfg.api_key_env, "")
    if not key and cfg.base_url is None:
        raise ConfigError(f"generate.paraphrase: set {cfg.api_key_env} in the environment (the key is read"
                          " from there only), or give generate.paraphrase.base_url for a local server")
    return key


class Paraphraser:
    """The paraphrase step of one shard: asks the endpoint (or the cache), checks, and remembers accepted bases."""

    def __init__(self, cfg: ParaphraseConfig, cache_folder: Path | None) -> None:
        self.cfg = cfg
        key = api_key(cfg)
        self._key = key or "not-needed"   # local servers ignore it; the client insists on one
        self._secret = secret_pattern(key)
        self.cache = ReplyCache(cache_folder)
        self.accepted: dict[str, str] = {}   # base id -> model, for the rows of bases written with reworded chains
        fields: dict[str, Any] = {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens}
        if cfg.seed is not None:
            fields["seed"] = cfg.seed
        self.fields = fields

    def cache_key(self, prompt: str) -> str:
        """The reply's key: model, sampling fields and prompt, and the endpoint when it is not OpenAI's (two servers
        serving one model name are two models). Keys made for OpenAI's endpoint are those of earlier versions, so
        their caches stay valid."""
        head = [self.cfg.model] if self.cfg.base_url is None else [self.cfg.model, self.cfg.base_url.rstrip("/")]
        return hashlib.sha256(json.dumps([*head, self.fields, prompt], sort_keys=True).encode()).hexdigest()

    def wanted(self, style: str, rng: np.random.Generator) -> bool:
        """Whether a base in ``style`` is paraphrased (its own draw: the share)."""
        return style in self.cfg.styles and bool(rng.random() < self.cfg.share)

    async def _ask(self, client: list[Any], prompt: str) -> str:
        key = self.cache_key(prompt)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        openai = _openai()
        if not client:   # made at the first miss: a run read back from its cache opens no connection
            http = openai.DefaultAsyncHttpxClient(event_hooks={"response": [reply_cap(MAX_REPLY_BYTES)]},
                                                  headers={"Accept-Encoding": "gzip, deflate"})
            client.append(openai.AsyncOpenAI(api_key=self._key, base_url=self.cfg.base_url,
                                             max_retries=self.cfg.max_retries, timeout=self.cfg.timeout,
                                             http_client=http))
        try:
            async with asyncio.timeout(self.cfg.timeout * (self.cfg.max_retries + 2)):
                async with client[0].chat.completions.with_streaming_response.create(
                        model=self.cfg.model, messages=[{"role": "user", "content": prompt}],
                        **self.fields) as response:
                    body = await response.read()
        except Exception as exc:   # every way a call can fail is a counted reason, never the run's end
            raise Rejected(_failure(exc, openai)) from None
        reply = _content(body)
        if self._secret is not None:
            reply = self._secret.sub(REDACTED, reply)
        self.cache.put(key, self.cfg.model, reply)
        return reply

    def paraphrase(self, problem: Problem, style: str, contents: list[tuple[str, Variant]],
                   rng: np.random.Generator, funnel: Any) -> list[tuple[str, Variant]]:
        """``contents`` (clean twin first) with reworded chains, or as they are; the funnel counts the base."""
        if not contents or not self.wanted(style, rng) or contents[0][1].kind != "clean":
            return contents
        name = f"paraphrase.{style}"
        funnel.attempted[name] += 1
        try:
            out = _run(self._base(problem, style, contents))
        except Rejected as rejected:
            funnel.reject(name, rejected.reason)
            return contents
        funnel.kept[name] += 1
        self.accepted[problem.id] = self.cfg.model
        return out

    async def _base(self, problem: Problem, style: str,
                    contents: list[tuple[str, Variant]]) -> list[tuple[str, Variant]]:
        client: list[Any] = []
        try:
            return await self._reword(problem, style, contents, client)
        finally:
            if client:
                await client[0].close()

    async def _reword(self, problem: Problem, style: str, contents: list[tuple[str, Variant]],
                      client: list[Any]) -> list[tuple[str, Variant]]:
        twin = contents[0][1]
        twin_frames = [frame(s) for s in twin.steps]
        reply = await self._ask(client, twin_prompt(style, twin_frames))
        twin_words = _read(reply_steps(reply, len(twin_frames)), twin_frames)
        _check_total(twin_frames, twin_words)
        plans = [_plan(twin_frames, twin_words, [frame(s) for s in v.steps]) for _, v in contents[1:]]
        asked = await asyncio.gather(*(self._fill(client, style, frames, words) for frames, words in plans),
                                     return_exceptions=True)
        for got in asked:   # the first failure in content order decides the base's reason
            if isinstance(got, BaseException):
                raise got
        chains = [(twin_frames, twin_words), *asked]
        family = get_family(problem.family)
        context = worked_context(problem, family)
        out = []
        for (item_id, variant), (frames, words) in zip(contents, chains):
            steps = tuple(replace(s, text=text, spans=spans) for s, (text, spans)
                          in zip(variant.steps, (f.assemble(w) for f, w in zip(frames, words))))
            if verify(problem, steps, family=family, context=context) != verify(problem, variant.steps,
                                                                                family=family, context=context):
                raise Rejected("labels_changed")
            out.append((item_id, replace(variant, steps=steps)))
        return out

    async def _fill(self, client: list[Any], style: str, frames: list[Frame],
                    words: list[tuple[str, ...] | None]) -> tuple[list[Frame], list[tuple[str, ...]]]:
        """A variant's words: those taken from its twin, the rest asked for in one request."""
        todo = [j for j, w in enumerate(words) if w is None]
        if todo:
            reply = await self._ask(client, variant_prompt(style, frames, words))
            got = _read(reply_steps(reply, len(todo)), frames, todo)
            for j, w in zip(todo, got):
                words[j] = w
            _check_total([frames[j] for j in todo], got)
        return frames, [w for w in words if w is not None]


def _read(raw: Sequence[str], frames: Sequence[Frame], which: Sequence[int] | None = None) -> list[tuple[str, ...]]:
    """Each reworded step of a reply checked against its frame (markers numbered through the whole chain)."""
    which = list(range(len(frames))) if which is None else list(which)
    starts, n = [], 1
    for f in frames:
        starts.append(n)
        n += len(f.frags)
    out = []
    for text, j in zip(raw, which):
        own = set(range(starts[j], starts[j] + len(frames[j].frags)))
        out.append(reworded_words(text, frames[j], starts[j], frozenset(set(range(1, n)) - own)))
    return out


def _plan(twin: list[Frame], twin_words: list[tuple[str, ...]],
          frames: list[Frame]) -> tuple[list[Frame], list[tuple[str, ...] | None]]:
    """A variant's frames and the words it takes from its twin (None where the model must be asked)."""
    first: dict[tuple[str, ...], int] = {}
    for i, f in enumerate(twin):
        first.setdefault(f.words, i)
    words: list[tuple[str, ...] | None] = [None] * len(frames)
    frames = list(frames)
    matcher = SequenceMatcher(None, [f.words for f in twin], [f.words for f in frames], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                words[j] = twin_words[i1 + j - j1]
            elif frames[j].words in first:
                words[j] = twin_words[first[frames[j].words]]
            elif tag == "replace" and i2 - i1 == j2 - j1:
                i = i1 + j - j1
                words[j] = transfer(twin[i], frames[j], twin_words[i])
                if words[j] is None and len(twin[i].words) == len(frames[j].words):
                    frames[j] = protect_edit(twin[i], frames[j])
    return frames, words
