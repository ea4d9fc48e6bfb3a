"""One labelled reasoning error in solutions we did not write: a model under MMErroR's or FERMAT's contract, or offline.

``inject_external(data, out, contract=..., model=...)`` reads problems (question, gold answer, optional image and
reference solution) from a JSONL file or a saved HF dataset and writes ``injected.jsonl``: one row per problem
whose erroneous solution passed every check, ``stats.json`` with the funnel (asked, kept, rejected by reason,
failed calls, skipped rows), ``cache.sqlite`` (every reply, eval's store: re-running the same command is
resume, and stored failures are asked again) and ``images/``.

A model's reply is kept only when it is well formed (the contract's JSON), its label is one of the
contract's (FERMAT: the type that was asked for), its final answer differs from the gold one (our answer
comparison, never sympify) and no step mentions the error or a label. Where the chain's calculations
parse, our verifier finds its first false step (``first_error_step_verified``); otherwise the row says
``unverified``. Offline (``model="offline"``) our own computational slips and notational edits are applied
to reference solutions whose calculations parse (GSM8K's ``<<48/2=24>>`` or one equation per line), and
every label comes from the verifier, which must agree with the edit's intent (else the edit is rejected
and counted, as our injectors' funnel does).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np

from synth.degrade_external import ItemFailure, png_bytes, read_image
from synth.errors import ConfigError, EvalFailuresError
from synth.evaluate import ModelCallError, Reply, Request, ResponseCache, Task, get_model, request_key
from synth.evaluate.answers import answers_match, last_json_object
from synth.external_chains import OFFLINE_SUBTYPES, offline_error, parse_chain, verify_chain
from synth.manifest import dumps_row
from synth.records import Item, Problem, Variant
from synth.rundir import RunDir, write_file
from synth.safepath import layout, prepare_output_dir, read_marker, write_marker
from synth.seeding import stable_hash
from synth.taxonomy import projections
from synth.templating import render_template
from synth.vocab import FERMAT_AXES, MMERROR, MMERROR_OPTIONS

MAX_REPLY_CHARS = 32_000     # a solution with one planted error is a few thousand characters
MAX_STORED_CHARS = 64_000    # what the cache keeps of a reply (longer ones are rejected anyway)
_SURROGATES = re.compile("[\ud800-\udfff]")
MAX_STEPS = 60
MAX_LISTED = 1000            # stats.json lists this many rejections; the counts cover all
KIND = "inject-external"
LAYOUT = layout(entries=("injected.jsonl", "stats.json", "images", "cache.sqlite", "cache.sqlite-wal",
                         "cache.sqlite-shm", ".injected.jsonl.tmp", ".stats.json.tmp"))
# Words that give a planted error away when they appear in the solution itself.
_TELLS = re.compile(r"\b(?:errors?|mistakes?|mistaken(?:ly)?|wrong(?:ly)?|incorrect(?:ly)?|typos?|oops|"
                    r"intentional(?:ly)?|deliberate(?:ly)?|planted|injected|miscalculat\w*|should (?:be|have)|"
                    r"actually|correction|corrected|error[_ ]type|type [A-D])\b", re.IGNORECASE)


@dataclass(frozen=True)
class Contract:
    """How one benchmark asks a model for an erroneous solution, and what a well-formed reply holds."""

    id: str
    template: str
    labels: tuple[str, ...]              # the labels a reply may carry
    label_names: Mapping[str, str]
    steps_field: str
    label_field: str
    needs_solution: bool                 # FERMAT perturbs a reference solution; MMErroR writes one
    projection: str                      # our taxonomy's projection for offline labels (synth.taxonomy)
    asks_type: bool = False              # FERMAT asks for one type per problem; the reply must be that type


CONTRACTS: dict[str, Contract] = {
    "mmerror": Contract("mmerror", "inject/mmerror.j2", tuple(MMERROR_OPTIONS), MMERROR_OPTIONS, "steps",
                        "error_type", needs_solution=False, projection="mmerror"),
    "fermat": Contract("fermat", "inject/fermat.j2", ("CO", "CP", "NO", "PR"), FERMAT_AXES, "perturbed_solution",
                       "perturbation_type", needs_solution=True, projection="fermat", asks_type=True),
}
FERMAT_DEFAULT_TYPES = ("CO", "CP", "NO")  # PR (presentation) usually keeps the answer and is rejected for it


def get_contract(name: str) -> Contract:
    if name not in CONTRACTS:
        raise ConfigError(f"--contract must be one of {sorted(CONTRACTS)}, got {name!r}")
    return CONTRACTS[name]


# ------------------------------------------------------------------------- the data


@dataclass(frozen=True)
class External:
    """One problem as given: the source's id, question, gold answer, optional reference solution and image."""

    index: int
    id: str
    question: str
    answer: str
    solution: str | None
    image: Any = None                   # a path, bytes or an HF image cell; None without an image
    base: Path = Path(".")


@dataclass(frozen=True)
class Fields:
    id: str = "id"
    question: str = "question"
    answer: str = "answer"
    solution: str = "solution"
    image: str = "image"


_GSM8K_FINAL = re.compile(r"\n\s*####\s*(.+?)\s*$", re.DOTALL)


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    return (value if isinstance(value, str) else str(value))[:20_000]


def external_problem(index: int, row: Mapping[str, Any], fields: Fields, base: Path) -> External:
    """A row as a problem; a GSM8K ``answer`` ("...<<48/2=24>>24 ...\\n#### 72") gives the solution and the answer."""
    answer = _as_text(row.get(fields.answer)) or ""
    solution = _as_text(row.get(fields.solution))
    final = _GSM8K_FINAL.search(answer)
    if final is not None:
        solution = solution or answer
        answer = final.group(1).replace(",", "")
    ident = _as_text(row.get(fields.id))
    return External(index, ident if ident else str(index), _as_text(row.get(fields.question)) or "", answer.strip(),
                    solution, row.get(fields.image), base)


def read_problems(path: str | Path, fields: Fields, *, limit: int | None = None) -> list[External]:
    """The problems of a JSONL file (one object per line) or of a dataset saved with ``save_to_disk``."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"data {str(p)!r} does not exist; give a .jsonl file or a dataset saved with save_to_disk")
    rows: list[External] = []
    if p.is_dir():
        try:
            ds = datasets.load_from_disk(str(p))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{p} is not a dataset saved with save_to_disk ({exc})") from None
        if isinstance(ds, datasets.DatasetDict):
            raise ConfigError(f"{p} holds the splits {list(ds)}; save one split (ds['test'].save_to_disk(...))")
        if fields.image in ds.features and isinstance(ds.features[fields.image], datasets.Image):
            ds = ds.cast_column(fields.image, datasets.Image(decode=False))
        for i in range(len(ds) if limit is None else min(limit, len(ds))):
            rows.append(external_problem(i, ds[i], fields, p))
        return _ids_once(rows, p, fields)
    with p.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if limit is not None and len(rows) >= limit:
                break
            if not line.strip():
                continue
            if len(line) > 1 << 20:
                raise ConfigError(f"{p}: line {n} is over 1 MiB; a problem is a few KB")
            try:
                row = json.loads(line)
            except ValueError:
                raise ConfigError(f"{p}: line {n} is not JSON; fix or remove it") from None
            if not isinstance(row, dict):
                raise ConfigError(f"{p}: line {n} is {type(row).__name__}, not an object with "
                                  f"{fields.question!r} and {fields.answer!r}")
            rows.append(external_problem(len(rows), row, fields, p.parent))
    return _ids_once(rows, p, fields)


def _ids_once(rows: list[External], path: Path, fields: Fields) -> list[External]:
    """Refuse ids given twice (a row without one takes its index, which can be another row's id): output rows are
    joined back to the source by id, and two of one id were kept as two rows nobody could tell apart."""
    seen: dict[str, int] = {}
    for row in rows:
        if row.id in seen:
            raise ConfigError(f"{path}: rows {seen[row.id] + 1} and {row.index + 1} both have the id {row.id!r} (a row "
                              f"without {fields.id!r} takes its index as its id); give every row its own "
                              f"{fields.id!r}, or name another field with --id-field")
        seen[row.id] = row.index
    return rows


# ------------------------------------------------------------------------- checking a reply


@dataclass(frozen=True)
class Checked:
    """A reply that passed every check: the solution, its label and where its first error is."""

    steps: tuple[str, ...]
    final_answer: str
    label: str
    claimed_step: int | None
    explanation: str | None


class Rejected(Exception):
    """A reply that is not kept; ``reason`` is its line in the funnel."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def check_reply(contract: Contract, problem: External, text: str, asked: str | None) -> Checked:
    """The reply as a kept solution, or Rejected with the funnel reason (malformed, bad_label,
    answer_preserved, mentions_error)."""
    if len(text) > MAX_REPLY_CHARS:
        raise Rejected("malformed", f"reply of {len(text):,} characters (over {MAX_REPLY_CHARS:,})")
    data = last_json_object(text)  # code fences and a sentence around it allowed
    if data is None:
        raise Rejected("malformed", "no JSON object in the reply")
    steps, final, label = data.get(contract.steps_field), data.get("final_answer"), data.get(contract.label_field)
    if not isinstance(steps, list) or not steps or not all(isinstance(s, str) and s.strip() for s in steps):
        raise Rejected("malformed", f"{contract.steps_field} is not a list of steps")
    if len(steps) > MAX_STEPS:
        raise Rejected("malformed", f"{len(steps)} steps (over {MAX_STEPS})")
    if isinstance(final, (int, float)) and not isinstance(final, bool):
        final = str(final)
    if not isinstance(final, str) or not final.strip():
        raise Rejected("malformed", "final_answer is missing")
    claimed = data.get("error_step")
    if claimed is not None and (not isinstance(claimed, int) or isinstance(claimed, bool)
                                or not 1 <= claimed <= len(steps)):
        raise Rejected("malformed", f"error_step {claimed!r} is not a step number 1-{len(steps)}")
    label = label.strip() if isinstance(label, str) else label
    if label not in contract.labels:
        raise Rejected("bad_label", f"{contract.label_field} {label!r} is not one of {list(contract.labels)}")
    if asked is not None and label != asked:
        raise Rejected("bad_label", f"asked for a {asked} perturbation, the reply says {label}")
    if answers_match(final, problem.answer):
        raise Rejected("answer_preserved", f"final answer {final.strip()!r} equals the gold answer "
                                           f"{problem.answer!r}")
    label_words = [w.lower() for w in contract.label_names.values()] + [w.lower() for w in FERMAT_AXES.values()]
    for i, step in enumerate(steps, start=1):
        tell = _TELLS.search(step)
        named = next((w for w in label_words if w.replace("_", " ") in step.lower().replace("_", " ")), None)
        if tell is not None or named is not None:
            said = tell.group(0) if tell is not None else named
            raise Rejected("mentions_error", f"step {i} gives the error away ({said!r})")
    explanation = data.get("explanation")
    return Checked(tuple(s.strip() for s in steps), final.strip(), label, claimed,
                   explanation.strip() if isinstance(explanation, str) else None)


# ------------------------------------------------------------------------- one problem


def _item(problem: External) -> Item:
    """The problem as an Item, for the model adapter's Request (it reads the prompt and the image only)."""
    pid = f"external-{problem.index:06d}"
    record = Problem(id=pid, family="external.inject", domain="external", subdomain="inject", grade_band="unknown",
                     difficulty="unknown", question_type="free", image_role="required",
                     question_text=problem.question, question_latex="", answer_text=problem.answer, answer_latex="",
                     answer_value=problem.answer, steps=())
    return Item(id=pid, base_id=pid, index=problem.index, seed=0, problem=record,
                variant=Variant(kind="clean", steps=(), shown_answer=problem.answer, is_correct=True))


def _task(contract: Contract) -> Task:
    return Task(id=f"inject-{contract.id}", summary=f"an erroneous solution under {contract.id}'s contract",
                template=contract.template, gold=lambda item: item.problem.answer_value, parse=lambda text: None,
                answer=str, metrics=())


def asked_type(contract: Contract, problem: External, seed: int, types: Sequence[str]) -> str | None:
    """The perturbation type FERMAT is asked for on this problem: a stable draw from ``types`` per (seed, id)."""
    if not contract.asks_type:
        return None
    return types[stable_hash(f"{seed}:{problem.id}") % len(types)]


def prompt(contract: Contract, problem: External, asked: str | None, *, image: bool) -> str:
    return render_template(contract.template, question=problem.question, answer=problem.answer,
                           solution=problem.solution or "", image=image, perturbation=asked or "",
                           mmerror=MMERROR, fermat_axes=FERMAT_AXES)


def _solution_text(steps: Sequence[str], final: str) -> str:
    return "\n".join(steps) + f"\n#### {final}"


def kept_row(contract: Contract, problem: External, model_id: str, image: str | None,
             checked: Checked, attempt: int) -> dict[str, Any]:
    """A kept reply as an output row, with what our verifier finds in its calculations."""
    chain = parse_chain(checked.steps)
    verdict = verify_chain(chain, reference=None, truth=problem.answer) if chain is not None else None
    found = verdict.first_error_line if verdict is not None else None
    status = "unverified" if verdict is None else ("verified" if found is not None else "no_false_claim")
    return {"id": problem.id, "index": problem.index, "question": problem.question, "gold_answer": problem.answer,
            "image": image, "contract": contract.id, "model": model_id, "attempt": attempt,
            "steps": list(checked.steps), "solution": _solution_text(checked.steps, checked.final_answer),
            "final_answer": checked.final_answer,
            "error": {"label": checked.label, "label_name": contract.label_names[checked.label],
                      "first_error_step": checked.claimed_step, "explanation": checked.explanation},
            "first_error_step_verified": found, "verification": status,
            "agrees": None if found is None or checked.claimed_step is None else found == checked.claimed_step,
            "reference_solution": problem.solution}


def offline_subtypes(contract: Contract, types: Sequence[str]) -> tuple[str, ...]:
    """The offline edits whose label in ``contract`` is one of ``types`` (all of them when none is asked)."""
    if not types:
        return OFFLINE_SUBTYPES
    return tuple(s for s in OFFLINE_SUBTYPES if projections(s)[contract.projection] in types)


def offline_row(contract: Contract, problem: External, image: str | None, seed: int,
                funnel: Funnel, subtypes: Sequence[str] = OFFLINE_SUBTYPES) -> dict[str, Any] | None:
    """Our own slip or notational edit on the problem's reference solution, labelled by the verifier."""
    if not problem.solution:
        funnel.skip("no_reference_solution")
        return None
    chain = parse_chain(problem.solution.splitlines())
    if chain is None or not chain.claims:
        funnel.skip("solution_does_not_parse" if chain is None else "no_calculation_in_solution")
        return None
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stable_hash(problem.id),)))
    planted = offline_error(chain, problem.answer, rng, funnel.attempt, funnel.reject, subtypes)
    if planted is None:
        funnel.skip("no_edit_passed_the_verifier")
        return None
    label = planted.projections[contract.projection]
    funnel.keep()
    return {"id": problem.id, "index": problem.index, "question": problem.question, "gold_answer": problem.answer,
            "image": image, "contract": contract.id, "model": "offline", "attempt": 0,
            "steps": list(planted.lines), "solution": _solution_text(planted.lines, planted.final_answer),
            "final_answer": planted.final_answer,
            "error": {"label": label, "label_name": contract.label_names.get(label or "", None),
                      "family": planted.family, "subtype": planted.subtype,
                      "first_error_step": planted.first_error_line, "error_steps": list(planted.error_lines),
                      "propagated": planted.propagated, "answer_changed": planted.answer_changed,
                      "explanation": planted.explanation, "edit": planted.edit},
            "first_error_step_verified": planted.first_error_line, "verification": "verified", "agrees": True,
            "reference_solution": problem.solution}


# ------------------------------------------------------------------------- the funnel


@dataclass
class Funnel:
    """What happened to every problem and every reply, counted like our injectors' funnel."""

    problems: int = 0
    asked: int = 0                     # replies judged (new calls and cached ones)
    called: int = 0                    # calls made now
    cached: int = 0
    kept: int = 0
    failed_calls: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    edits: dict[str, Counter[str]] = field(default_factory=dict)   # offline: per subtype attempted/kept/rejections
    rejections: list[dict[str, Any]] = field(default_factory=list)
    verification: Counter[str] = field(default_factory=Counter)
    usage: dict[str, float] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    cost: float | None = None

    def add_usage(self, prompt_tokens: int | None, completion_tokens: int | None, cost: float | None) -> None:
        self.usage["prompt_tokens"] += prompt_tokens or 0
        self.usage["completion_tokens"] += completion_tokens or 0
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def keep(self) -> None:
        self.kept += 1

    def attempt(self, subtype: str) -> None:
        self.edits.setdefault(subtype, Counter())["attempted"] += 1

    def reject(self, subtype: str, reason: str) -> None:
        self.edits.setdefault(subtype, Counter())[f"rejected:{reason}"] += 1

    def as_dict(self) -> dict[str, Any]:
        return {"problems": self.problems, "asked": self.asked, "called": self.called, "cached": self.cached,
                "kept": self.kept, "rejected": dict(sorted(self.rejected.items())),
                "failed_calls": sum(self.failed_calls.values()),
                "failed_by_reason": dict(self.failed_calls.most_common()),
                "skipped": dict(sorted(self.skipped.items())),
                "verification": dict(sorted(self.verification.items())),
                "offline_edits": {k: dict(sorted(v.items())) for k, v in sorted(self.edits.items())},
                "tokens": dict(self.usage), "cost": self.cost, "rejections": self.rejections}


def funnel_table(funnel: Mapping[str, Any]) -> list[tuple[str, int]]:
    """The funnel as (stage, count) rows, for the CLI and the README."""
    rows = [("problems", funnel["problems"]), *((f"skipped: {k}", v) for k, v in funnel["skipped"].items()),
            ("replies judged", funnel["asked"]), *((f"rejected: {k}", v) for k, v in funnel["rejected"].items()),
            ("failed calls", funnel["failed_calls"]),
            *((f"offline {subtype}: {what.replace(':', ' ')}", n) for subtype, counts in funnel["offline_edits"].items()
              for what, n in counts.items()),
            ("kept", funnel["kept"]), *((f"kept, {k}", v) for k, v in funnel["verification"].items())]
    return [(k, int(v)) for k, v in rows]


# ------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class InjectResult:
    out_dir: Path
    funnel: dict[str, Any]
    rows: int


ProgressFn = Callable[[int, int], None]


def _image_file(problem: External, images: Path) -> tuple[str | None, Path | None, str | None]:
    """The problem's image copied into ``images/`` as PNG: (relative name, path, sha256), or Nones without one."""
    if problem.image is None or problem.image == "":
        return None, None, None
    pixels = read_image(problem.image, base=problem.base, column="image", max_pixels=36_000_000, max_bytes=64 << 20)
    data = png_bytes(pixels)
    path = images / f"{problem.index:06d}.png"
    write_file(path, data)
    return f"images/{path.name}", path, hashlib.sha256(data).hexdigest()


def _adapter(spec: str, **options: Any) -> Any:
    if not spec.startswith("openai:"):
        raise ConfigError(f"--model must be openai:<model> (any OpenAI-compatible endpoint, with --base-url) or "
                          f"offline, got {spec!r}")
    return get_model(spec, **options)


async def _ask_all(contract: Contract, prepared: Sequence[tuple[External, str | None, Path | None, str | None]],
                   adapter: Any, cache: ResponseCache, *, seed: int, attempts: int, types: Sequence[str],
                   concurrency: int, funnel: Funnel, progress: ProgressFn | None) -> list[dict[str, Any] | None]:
    """Ask for every problem (cache first), judge each reply, try again up to ``attempts`` times when rejected."""
    task = _task(contract)
    gate = asyncio.Semaphore(concurrency)
    done = [0]

    async def reply_for(problem: External, text: str, digest: str | None, image: Path | None,
                        attempt: int) -> str | None:
        key = request_key(model=adapter.id, endpoint=adapter.endpoint, prompt=text, image_sha256=digest,
                          params=adapter.params, run_index=attempt, item_id=f"{contract.id}:{problem.id}")
        stored = cache.get(key)
        if stored is not None and stored.status == "ok" and stored.response is not None:
            funnel.cached += 1
            funnel.add_usage(stored.prompt_tokens, stored.completion_tokens, stored.cost)
            return stored.response
        meta = {"model": adapter.id, "endpoint": adapter.endpoint, "task": task.id, "item_id": problem.id,
                "run_index": attempt}
        async with gate:
            funnel.called += 1
            start = time.perf_counter()
            try:
                answer = await adapter.respond(Request(task, _item(problem), text, image, digest, attempt))
            except ModelCallError as exc:
                reason = adapter.scrub(str(exc))
                cache.put_error(key, error=reason, latency_s=time.perf_counter() - start, **meta)
                funnel.failed_calls[reason] += 1
                return None
        reply = answer if isinstance(answer, Reply) else Reply(str(answer))
        body = adapter.scrub(_SURROGATES.sub("\ufffd", reply.text))[:MAX_STORED_CHARS]
        cache.put_ok(key, response=body, truncated=len(reply.text) > MAX_STORED_CHARS,
                     latency_s=time.perf_counter() - start, prompt_tokens=reply.prompt_tokens,
                     completion_tokens=reply.completion_tokens, cost=reply.cost, **meta)
        funnel.add_usage(reply.prompt_tokens, reply.completion_tokens, reply.cost)
        return body

    async def one(problem: External, image_rel: str | None, image: Path | None,
                  digest: str | None) -> dict[str, Any] | None:
        asked = asked_type(contract, problem, seed, types)
        text = prompt(contract, problem, asked, image=image is not None)
        try:
            for attempt in range(attempts):
                body = await reply_for(problem, text, digest, image, attempt)
                if body is None:
                    return None
                funnel.asked += 1
                try:
                    checked = check_reply(contract, problem, body, asked)
                except Rejected as no:
                    funnel.rejected[no.reason] += 1
                    funnel.rejections.append({"id": problem.id, "index": problem.index, "attempt": attempt,
                                              "reason": no.reason, "detail": str(no)})
                    continue
                row = kept_row(contract, problem, adapter.id, image_rel, checked, attempt)
                funnel.kept += 1
                funnel.verification[row["verification"]] += 1
                return row
            return None
        finally:
            done[0] += 1
            if progress is not None:
                progress(done[0], len(prepared))

    try:
        results = await asyncio.gather(*(one(*x) for x in prepared), return_exceptions=True)
    finally:
        await adapter.aclose()
    for r in results:  # a bug, not a model failure: every reply in flight is stored by now
        if isinstance(r, BaseException):
            raise r
    return [r for r in results if not isinstance(r, BaseException)]


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    write_file(tmp, text.encode("utf-8"))
    os.replace(tmp, path)


def inject_external(data: str | Path, out_dir: str | Path, *, contract: str, model: str,
                    base_url: str | None = None, fields: Fields = Fields(), seed: int = 0, attempts: int = 1,
                    types: Sequence[str] | None = None, concurrency: int = 4, limit: int | None = None,
                    max_retries: int = 6, timeout: float = 120.0, deadline: float = 300.0,
                    temperature: float = 0.7, max_tokens: int = 2048,
                    progress: ProgressFn | None = None) -> InjectResult:
    """Erroneous solutions for every problem of ``data`` (see the module docstring); re-running resumes."""
    terms = get_contract(contract)
    if attempts < 1 or concurrency < 1:
        raise ConfigError(f"--attempts and --concurrency must be >= 1, got {attempts} and {concurrency}")
    if types and not terms.asks_type:
        raise ConfigError(f"--types: the {terms.id} contract asks for no type (the model picks its error); drop "
                          "--types, or use --contract fermat")
    asked_types = tuple(types or ())
    types = tuple(types or (FERMAT_DEFAULT_TYPES if terms.asks_type else ()))
    bad = [t for t in types if t not in terms.labels]
    if bad:
        raise ConfigError(f"--types: {bad} are not {terms.id} types; choose from {list(terms.labels)}")
    offline = model == "offline"
    edits = offline_subtypes(terms, asked_types)
    made = sorted({projections(s)[terms.projection] for s in OFFLINE_SUBTYPES} - {None})
    beyond = [t for t in asked_types if t not in made]
    if offline and beyond:  # CO,PR gave CO and NO: the asked types were ignored
        raise ConfigError(f"--types: the offline edits make only {made} (slips and operator swaps), not {beyond}; "
                          f"ask a model for those (--model openai:<model>) or choose from {made}")
    adapter = None if offline else _adapter(model, base_url=base_url, seed=seed, max_retries=max_retries,
                                            timeout=timeout, deadline=deadline, temperature=temperature,
                                            max_tokens=max_tokens)
    problems = read_problems(data, fields, limit=limit)
    out = Path(out_dir)
    if Path(data).resolve().is_relative_to(out.resolve()):  # it read its own injected.jsonl, then emptied it
        raise ConfigError(f"the data {data} is inside --out {out_dir}, whose files this run replaces; copy it out "
                          "first or choose another --out")
    prepare_output_dir(out, KIND, shape=LAYOUT)  # a user's folder, or another kind of output, is refused
    funnel = Funnel(problems=len(problems))
    with RunDir(out).locked():
        if read_marker(out) is None:
            write_marker(out, KIND)
        images = out / "images"
        images.mkdir(exist_ok=True)
        prepared = []
        for problem in problems:
            if not problem.question or not problem.answer:
                funnel.skip("no_question_or_gold_answer")
            elif terms.needs_solution and not problem.solution and not offline:
                funnel.skip("no_reference_solution")
            else:
                try:
                    prepared.append((problem, *_image_file(problem, images)))
                except ItemFailure as failure:
                    funnel.skip(f"image_{failure.kind}")
        if offline:
            rows = []
            for n, (problem, image, _, _) in enumerate(prepared, start=1):
                rows.append(offline_row(terms, problem, image, seed, funnel, edits))
                if progress is not None:
                    progress(n, len(prepared))
            funnel.verification["verified"] = sum(r is not None for r in rows)
        else:
            with ResponseCache(out / "cache.sqlite") as cache:
                rows = asyncio.run(_ask_all(terms, prepared, adapter, cache, seed=seed, attempts=attempts,
                                            types=types, concurrency=concurrency, funnel=funnel, progress=progress))
        kept = sorted((r for r in rows if r is not None), key=lambda r: r["index"])
        funnel.rejections = sorted(funnel.rejections, key=lambda r: (r["index"], r["attempt"]))[:MAX_LISTED]
        _write(out / "injected.jsonl", "".join(dumps_row(r) + "\n" for r in kept))
        stats = {"contract": terms.id, "model": model if offline else adapter.id, "data": str(Path(data)),
                 "seed": seed, "attempts": attempts, "types": list(types), "funnel": funnel.as_dict()}
        _write(out / "stats.json", json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
    return InjectResult(out, stats["funnel"], len(kept))


def check_call_failures(result: InjectResult, *, fail_on_error: float = 1) -> None:
    """EvalFailuresError (exit 4) when failed calls reach ``fail_on_error``: a proportion of the calls below 1,
    a count from 1 up (as ``mathstress eval``). Their reasons are stored; re-running asks them again."""
    failed = result.funnel["failed_calls"]
    total = result.funnel["asked"] + failed
    limit = fail_on_error * total if fail_on_error < 1 else fail_on_error
    if failed and failed >= limit:
        top = next(iter(result.funnel["failed_by_reason"].items()), None)
        most = f"; most often {top[1]} x {top[0]}" if top else ""
        raise EvalFailuresError(f"{failed} of {total} calls failed{most} (--fail-on-error {fail_on_error:g}); "
                                f"reasons are stored in {result.out_dir / 'cache.sqlite'}; re-run the same command "
                                "to ask them again")
