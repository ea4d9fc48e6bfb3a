"""The generation pipeline: plan -> generate -> inject -> verify -> render -> degrade -> write.

Every item is a function of (run seed, base index) alone, so shards can run in any process, in
any order, and resume after a crash without changing a byte of the output.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from perturb.photo import REGISTRY as PHOTO_OPS
from perturb.photo import Photo, degrade_photo
from perturb.photo.base import ReversePage
from perturb.photo.handwritten import page_text
from perturb.photo.profile import capture
from perturb.reasoning import REGISTRY as INJECTORS
from perturb.reasoning import inject
from perturb.reasoning.base import Funnel, clean_variant
from perturb.reasoning.multi import stack, stackable
from synth.allocation import BasePlan, plan_base
from synth.config import RunConfig, validate_config
from synth.errors import ConfigError, ResumableError, RunError
from synth.generators import get_family
from synth.lifeline import pool_worker_init
from synth.manifest import dumps_row, to_row
from synth.memory import keep_image_buffers
from synth.records import Item, Problem, Variant
from synth.rundir import LOCK_NAME, RESUME_HINT, ResumePlan, RunDir, ShardOutput, sha256, stage_image
from synth.safepath import prepare_output_dir, read_marker, write_marker
from synth.seeding import item_seed, stage_rng
from synth.verifier import verify

STAGES = ("plan", "generate", "inject", "verify", "render", "degrade", "write")
MAX_GENERATE_ATTEMPTS = 5
MAX_ALLOCATION_REDRAWS = 24  # quota runs: fresh problems tried until one takes every planned subtype


@cache
def versions() -> dict[str, str]:
    names = {"mathstress": "mathstress", "numpy": "numpy", "sympy": "sympy",
             "opencv": "opencv-python-headless", "pillow": "pillow"}
    out = {}
    for key, dist in names.items():
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = "unknown"
    return out


@dataclass
class ShardStats:
    items: Counter[str] = field(default_factory=Counter)
    families: Counter[str] = field(default_factory=Counter)
    subtypes: Counter[str] = field(default_factory=Counter)
    degradations: Counter[str] = field(default_factory=Counter)
    generate_rejected: Counter[str] = field(default_factory=Counter)
    funnel: Funnel = field(default_factory=Funnel)
    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def as_dict(self) -> dict[str, Any]:
        return {"items": dict(self.items), "families": dict(self.families), "subtypes": dict(self.subtypes),
                "degradations": dict(self.degradations), "generate_rejected": dict(self.generate_rejected),
                "inject": self.funnel.as_dict(), "seconds": dict(self.seconds)}


class _Timer:
    def __init__(self, stats: ShardStats, stage: str) -> None:
        self.stats, self.stage = stats, stage

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.stats.seconds[self.stage] += time.perf_counter() - self.t0


def _weighted(rng: np.random.Generator, weights: dict[str, float]) -> str:
    keys = sorted(weights)  # canonical order: the same config gives the same items however keys are ordered
    p = np.array([weights[k] for k in keys], dtype=float)
    return keys[int(rng.choice(len(keys), p=p / p.sum()))]


def _stack_errors(config: RunConfig, problem: Problem, variant: Variant, rng: np.random.Generator,
                  stats: ShardStats) -> Variant | None:
    """``variant`` with errors added until it holds ``inject.errors_per_variant``, or None if one cannot be placed.

    Each added subtype is drawn by weight from the configured stackable subtypes that can act on
    the shown lines and are not in the variant yet; a variant short of its count is dropped
    (counted under ``<injector>+stacked`` in the funnel), never written with fewer errors.
    """
    family = get_family(problem.family)
    while variant is not None and 1 + len(variant.errors) < config.inject.errors_per_variant:
        used = {variant.error.subtype, *(e.subtype for e in variant.errors)} if variant.error else set()
        shown = replace(problem, steps=variant.steps)
        options = {s: w for s, w in config.inject.subtypes.items()
                   if s not in used and stackable(s) and INJECTORS[s].applies(family, shown)}
        if not options:
            stats.funnel.reject("stacked", "no_stackable_subtype_applies")
            return None
        variant = stack(problem, variant, _weighted(rng, options), rng, max_attempts=config.inject.max_attempts,
                        funnel=stats.funnel)
    return variant


def base_id(config: RunConfig, index: int) -> str:
    return f"{config.name}-{index:06d}"


def _pick(rng: np.random.Generator, values: list[str] | dict[str, float]) -> str:
    """One of ``values``: uniform over a list (the original draw, kept byte-for-byte), by weight for a mapping."""
    if isinstance(values, dict):
        return _weighted(rng, values)
    return values[int(rng.integers(len(values)))]


def generate_problem(config: RunConfig, index: int, stats: ShardStats, plan: BasePlan | None = None,
                     redraw: int = 0) -> Problem:
    """The verified clean problem for base ``index``: plan, generate, verify (resampling on failure).

    ``plan`` (quota runs) fixes the family, difficulty and question type; ``redraw`` > 0 asks for
    another problem of the same plan, from generate seeds no other draw uses.
    """
    seed = item_seed(config.seed, index)
    with _Timer(stats, "plan"):
        if plan is not None:
            family_id, difficulty, question_type = plan.family, plan.difficulty, plan.question_type
        else:
            rng = stage_rng(seed, "plan")
            family_id = _weighted(rng, config.generate.families)
            difficulty = _pick(rng, config.generate.difficulties)
            question_type = _pick(rng, config.generate.question_types)
    family = get_family(family_id)
    if question_type not in family.question_types:
        # Only a quota run's reverse pages get here (weighted configs offer every type in every family).
        question_type = "free"
    for attempt in range(MAX_GENERATE_ATTEMPTS):
        keys = (attempt,) if redraw == 0 else (attempt, redraw)
        with _Timer(stats, "generate"):
            problem = family.build(stage_rng(seed, "generate", *keys), difficulty=difficulty,
                                   question_type=question_type, problem_id=base_id(config, index))
        with _Timer(stats, "verify"):
            ok = verify(problem, problem.steps, family=family).fully_correct
        if ok:
            return problem
        stats.generate_rejected[f"{family_id}:unverified"] += 1
    raise RunError(f"{family_id} could not produce a verified solution for item {index} "
                   f"in {MAX_GENERATE_ATTEMPTS} attempts; this is a generator bug")


def build_items(config: RunConfig, index: int, stats: ShardStats) -> Iterator[tuple[Item, np.ndarray | bytes | None]]:
    """The clean control for base ``index``, then its error and degraded variants, with their image.

    The image is pixels to store as PNG, or the encoded file itself when the photo's last op was the
    camera's JPEG encoding (``item.image`` then ends in .jpg): storing those bytes keeps the file
    exactly the degraded pixels, at a fraction of the size and of the time a PNG takes.
    """
    from render import render_page, sample_hand

    seed = item_seed(config.seed, index)
    plan = plan_base(config, index)
    problem, planned = (generate_problem(config, index, stats), []) if plan is None else \
        _allocated_base(config, index, plan, stats)
    bid = problem.id
    variants: list[tuple[str, Variant]] = [(bid, clean_variant(problem)), *planned]
    with _Timer(stats, "inject"):
        family = get_family(problem.family)
        # Only subtypes that can act on this problem compete (variable_rename needs a variable...).
        # A quota run's variants were made with its problem, by plan.
        applicable = {s: w for s, w in config.inject.subtypes.items()
                      if plan is None and INJECTORS[s].applies(family, problem)}
        for j in range(config.inject.variants_per_base if applicable else 0):
            rng = stage_rng(seed, "inject", j)
            subtype = _weighted(rng, applicable)
            v = inject(problem, subtype, rng, placement=config.inject.placement,
                       max_attempts=config.inject.max_attempts, funnel=stats.funnel,
                       propagate=config.inject.propagate)
            if v is not None and v.error is not None and config.inject.errors_per_variant > 1:
                v = _stack_errors(config, problem, v, rng, stats)
            if v is not None:
                tag = "s" if v.kind == "superficial" else "e"
                variants.append((f"{bid}-{tag}{j + 1}", v))
    rcfg = config.render
    # One modality and writer per base problem: the clean page and its variants share the same hand.
    style, writer = sample_hand(stage_rng(seed, "render"), style=rcfg.style, handwritten_share=rcfg.handwritten_share,
                                neatness=rcfg.neatness, writers=rcfg.writers)
    clean_pixels = None
    clean_image = f"images/{bid}.png" if rcfg.enabled else None
    for item_id, variant in variants:
        pixels, page = None, None
        if rcfg.enabled:
            with _Timer(stats, "render"):
                drawn = render_page(problem, variant, page=rcfg.page, paper=rcfg.paper, dpi=rcfg.dpi,
                                    style=style, writer=writer, seed=seed, show_solution=rcfg.show_solution,
                                    handwritten_question=rcfg.handwritten_question and style == "handwritten")
            pixels, page = drawn.pixels, drawn.page
            if item_id == bid:
                clean_pixels, clean_page = pixels, page
        yield Item(id=item_id, base_id=bid, index=index, seed=seed, problem=problem, variant=variant,
                   render=page, image=f"images/{item_id}.png" if rcfg.enabled else None,
                   clean_image=clean_image, versions=versions()), pixels
    if clean_pixels is None:
        return
    reverse = _reverse_page(config, index) if _needs_reverse(config) else None
    text = page_text(problem, variants[0][1])  # the words handwritten_* ops write (the clean, correct ones)
    n = 0
    for op in config.degrade.ops:
        for severity in op.severities:
            n += 1
            if plan is not None and plan.degradations is not None and n not in plan.degradations:
                continue  # degrade.per_base: this base's photos are the planned ones
            # An op that cannot act on this page (figure_marking without a figure) is skipped and
            # counted, so the id of every other degraded item stays the same.
            if severity and not PHOTO_OPS[op.subtype].applies(clean_page):
                stats.degradations[f"{op.subtype}:{severity}:not_applicable"] += 1
                continue
            with _Timer(stats, "degrade"):
                rng = stage_rng(seed, f"degrade:{op.subtype}", severity, n)
                photo = degrade_photo(clean_pixels, clean_page, op.subtype, severity, rng, reverse=reverse, text=text)
            item_id = f"{bid}-d{n}"
            yield Item(id=item_id, base_id=bid, index=index, seed=seed, problem=problem,
                       variant=variants[0][1], render=photo.page, degradations=photo.records,
                       image=_photo_name(item_id, photo), clean_image=clean_image, versions=versions()), _stored(photo)
    for k, profile in enumerate(config.degrade.profiles, start=1):
        steps = [(s.subtype, s.severity) for s in profile.ops]
        if not all(PHOTO_OPS[s].applies(clean_page) for s, _ in steps):
            stats.degradations[f"profile:{profile.name}:not_applicable"] += 1
            continue
        with _Timer(stats, "degrade"):
            rng = stage_rng(seed, f"profile:{profile.name}")
            photo = capture(clean_pixels, clean_page, steps, rng, reverse=reverse, text=text)
        item_id = f"{bid}-p{k}"
        yield Item(id=item_id, base_id=bid, index=index, seed=seed, problem=problem,
                   variant=variants[0][1], render=photo.page, degradations=photo.records, profile=profile.name,
                   image=_photo_name(item_id, photo), clean_image=clean_image, versions=versions()), _stored(photo)


def _photo_name(item_id: str, photo: Photo) -> str:
    return f"images/{item_id}.jpg" if photo.jpeg is not None else f"images/{item_id}.png"


def _stored(photo: Photo) -> np.ndarray | bytes:
    return photo.jpeg if photo.jpeg is not None else photo.pixels


def _allocated_base(config: RunConfig, index: int, plan: BasePlan,
                    stats: ShardStats) -> tuple[Problem, list[tuple[str, Variant]]]:
    """Base ``index`` of a quota run: a problem of the planned family that takes every planned subtype.

    Problems are redrawn until one has the planned image role and each planned subtype is
    injected and verified, so the planned shares hold in the output. A base that never fits keeps
    its best draw; its missing variants are counted as ``allocation:<subtype>:unfilled``.
    """
    seed = item_seed(config.seed, index)
    best: tuple[Problem, list[tuple[str, Variant]]] | None = None
    for redraw in range(MAX_ALLOCATION_REDRAWS):
        problem = generate_problem(config, index, stats, plan=plan, redraw=redraw)
        family = get_family(problem.family)
        if best is None:
            best = (problem, [])
        if plan.image_role is not None and problem.image_role != plan.image_role:
            stats.generate_rejected["allocation:image_role_redrawn"] += 1
            continue
        if not all(INJECTORS[s].applies(family, problem) for s in plan.subtypes):
            stats.generate_rejected["allocation:not_applicable_redrawn"] += 1
            continue
        got: list[tuple[str, Variant]] = []
        with _Timer(stats, "inject"):
            for j, subtype in enumerate(plan.subtypes):
                rng = stage_rng(seed, "inject", j) if redraw == 0 else stage_rng(seed, "inject", j, redraw)
                v = inject(problem, subtype, rng, placement=config.inject.placement,
                           max_attempts=config.inject.max_attempts, funnel=stats.funnel,
                           propagate=config.inject.propagate)
                if v is not None and v.error is not None and config.inject.errors_per_variant > 1:
                    v = _stack_errors(config, problem, v, rng, stats)
                if v is None:
                    break
                got.append((f"{problem.id}-{'s' if v.kind == 'superficial' else 'e'}{j + 1}", v))
        if len(got) == len(plan.subtypes):
            return problem, got
        stats.generate_rejected["allocation:inject_failed_redrawn"] += 1
        if len(got) > len(best[1]):
            best = (problem, got)
    assert best is not None
    for subtype in plan.subtypes[len(best[1]):]:
        stats.generate_rejected[f"allocation:{subtype}:unfilled"] += 1
    return best


def _needs_reverse(config: RunConfig) -> bool:
    subtypes = [op.subtype for op in config.degrade.ops] + [s.subtype for p in config.degrade.profiles for s in p.ops]
    return any(PHOTO_OPS[s].uses_reverse for s in subtypes)


def _reverse_page(config: RunConfig, index: int) -> ReversePage:
    """The other side of base ``index``'s sheet: the clean page of a problem rendered for the purpose.

    It is base ``count + index`` of the same run settings (never an item of this run), so it is a
    function of (run seed, index) like everything else, and bleed-through shows real other print.
    """
    from render import render_page

    other = config.count + index
    problem = generate_problem(config, other, ShardStats())  # its own stats are not this run's
    rcfg = config.render
    drawn = render_page(problem, clean_variant(problem), page=rcfg.page, paper=rcfg.paper, dpi=rcfg.dpi)
    return ReversePage(drawn.pixels, problem.id)


# ------------------------------------------------------------------------- run folder


def shard_ranges(count: int, shard_size: int) -> list[range]:
    return [range(s, min(s + shard_size, count)) for s in range(0, count, shard_size)]


def _png_bytes(name: str, pixels: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 1])
    if not ok:
        raise RunError(f"could not encode {name} as PNG")
    return buf.tobytes()


def produce_shard(config_data: dict[str, Any], shard: int, stage: Path | None = None) -> ShardOutput:
    """Build every item of one shard and encode its images; with ``stage``, images go there at once."""
    config = validate_config(config_data)
    if config.render.enabled:
        keep_image_buffers()
    with one_opencv_thread():
        return _produce(config, shard, stage)


@contextmanager
def one_opencv_thread() -> Iterator[None]:
    """Run OpenCV on one thread: a worker is one core, so ``--workers N`` uses N cores without
    oversubscribing them (N processes x OpenCV's own pool), and runs scale with workers."""
    before = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        yield
    finally:
        cv2.setNumThreads(before)


def _produce(config: RunConfig, shard: int, stage: Path | None) -> ShardOutput:
    indices = shard_ranges(config.count, config.output.shard_size)[shard]
    stats = ShardStats()
    rows: list[str] = []
    names: list[str] = []
    digests: list[str] = []  # taken from the bytes as they are encoded: committing needs no second read
    images: list[tuple[str, bytes]] = []
    for index in indices:
        for item, image in build_items(config, index, stats):
            with _Timer(stats, "write"):
                if image is not None:
                    name = Path(item.image or f"{item.id}.png").name
                    data = image if isinstance(image, bytes) else _png_bytes(name, image)
                    names.append(name)
                    digests.append(sha256(data))
                    if stage is not None:
                        stage_image(stage, name, data)
                    else:
                        images.append((name, data))
                rows.append(dumps_row(to_row(item)))
            stats.items[_kind(item)] += 1
            stats.families[item.problem.family] += 1
            label = item.variant.error or item.variant.control
            if label is not None:
                stats.subtypes[label.subtype] += 1
            for d in item.degradations:
                stats.degradations[f"{d.subtype}:{d.severity}"] += 1
    return ShardOutput(shard, tuple(rows), tuple(names), tuple(digests), tuple(images), stats.as_dict())


def commit_shard(run_dir: str | Path, output: ShardOutput) -> int:
    """Write a produced shard into the run folder (``RunDir.commit``: images, rows, then its checksummed record).

    A shard is complete when its record exists; committing the same shard twice (a retried
    task) rewrites identical bytes, so nothing is lost or duplicated. Returns its row count.
    """
    return RunDir(run_dir).commit(output).lines


def run_shard(config_data: dict[str, Any], run_dir: str, shard: int) -> dict[str, Any]:
    """Produce one shard, streaming its images to a staging folder, and commit it."""
    stage = RunDir(run_dir).staging(shard, fresh=True)
    return {"shard": shard, "items": commit_shard(run_dir, produce_shard(config_data, shard, stage))}


def _kind(item: Item) -> str:
    return "degraded" if item.degradations else item.variant.kind


def items_per_base(config: RunConfig) -> int:
    """Upper bound on rows per base problem (for progress totals; failed injections lower it)."""
    return (1 + config.inject.variants_per_base + sum(len(op.severities) for op in config.degrade.ops)
            + len(config.degrade.profiles))


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    items: int
    shards: int
    resumed_shards: int  # committed shards kept from an earlier attempt (verified against their checksums)
    seconds: float
    redone: dict[int, str] = field(default_factory=dict)  # shards that failed verification and were redone: why
    notes: tuple[str, ...] = ()  # what resuming repaired besides shards (a rebuilt manifest), for the user


ProgressFn = Callable[[int, int], None]  # (items done now, items expected in total)


def check_output_dir(run_dir: Path) -> None:
    parent = run_dir
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"output path {str(parent)!r} is a file; choose a folder with --out")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"output folder {str(parent)!r} is not writable; choose another with --out")


def prepare_run(config: RunConfig, run_dir: Path, *, resume: bool, overwrite: bool = False) -> ResumePlan:
    """Create or reopen the run folder; return the shards still to do. Writes nothing on error.

    The caller holds the folder's lock (``RunDir.locked``). Resuming trusts only what verifies:
    shards whose record, rows or images do not match their checksums are redone (the plan says
    which and why), and a finished run whose manifest or images do not match is reopened.
    """
    check_output_dir(run_dir)
    resolved = config.to_yaml()
    n_shards = len(shard_ranges(config.count, config.output.shard_size))
    stored = run_dir / "config.yaml"
    if run_dir.exists() and any(p.name != LOCK_NAME for p in run_dir.iterdir()):
        if overwrite:
            _clear_run(run_dir)
        elif not resume:
            raise RunError(f"{run_dir} already holds a run; pass --resume to continue it, --overwrite to "
                           "replace it, or --out to write elsewhere")
        elif not stored.exists() or stored.read_text(encoding="utf-8") != resolved:
            raise RunError(f"{run_dir} was started with a different config; --resume needs the same config "
                           "(and --limit); use --overwrite or another --out")
    run_dir.mkdir(parents=True, exist_ok=True)
    if read_marker(run_dir) is None:
        write_marker(run_dir, "run")  # what lets a later --overwrite tell this folder is ours
    (run_dir / "images").mkdir(exist_ok=True)
    (run_dir / "shards").mkdir(exist_ok=True)
    if not stored.exists():
        tmp = run_dir / ".config.yaml.tmp"
        tmp.write_text(resolved, encoding="utf-8")
        os.replace(tmp, stored)
    return RunDir(run_dir).resume(n_shards)


def _clear_run(run_dir: Path) -> None:
    """Delete what an earlier run wrote in ``run_dir``; refuse a folder that is not a run (a user's files stay)."""
    prepare_output_dir(run_dir, "run", overwrite=True)


def finish_run(config: RunConfig, run_dir: Path, wall: float, resumed: int) -> int:
    """Join the shards into manifest.jsonl (the completion marker), write stats.json and checksums.jsonl."""
    n_shards = len(shard_ranges(config.count, config.output.shard_size))
    folder = RunDir(run_dir)
    total: dict[str, Any] = {"items": Counter(), "families": Counter(), "subtypes": Counter(),
                             "degradations": Counter(), "generate_rejected": Counter()}
    funnel: dict[str, dict[str, Any]] = {}
    seconds: Counter[str] = Counter()
    count = 0
    for record in folder.records(n_shards):
        part = record.stats
        count += record.lines
        for key in total:
            total[key].update(part[key])
        seconds.update(part.get("seconds", {}))  # a shard put back from a finished run's checksums has none
        for inj, f in part["inject"].items():
            agg = funnel.setdefault(inj, {"attempted": 0, "kept": 0, "rejected": Counter()})
            agg["attempted"] += f["attempted"]
            agg["kept"] += f["kept"]
            agg["rejected"].update(f["rejected"])
    stats = {
        "name": config.name, "items": count, "base_problems": config.count, "shards": n_shards,
        "resumed_shards": resumed,
        "counts": {k: dict(sorted(v.items())) for k, v in total.items() if k != "generate_rejected"},
        "rejections": {"generate": dict(sorted(total["generate_rejected"].items())),
                       "inject": {k: {**v, "rejected": dict(sorted(v["rejected"].items()))}
                                  for k, v in sorted(funnel.items())}},
        "seconds_per_stage": {k: round(seconds[k], 3) for k in STAGES},
        "wall_seconds": round(wall, 3),
        "versions": versions(),
    }
    folder.write_json("stats.json", stats)
    return folder.publish(n_shards)


EXECUTORS = ("local", "dask")


def run(config: RunConfig, run_dir: str | Path, *, workers: int = 1, resume: bool = False,
        overwrite: bool = False, progress: ProgressFn | None = None, executor: str = "local",
        scheduler: str | None = None) -> RunResult:
    """Generate a run folder. Interrupting it leaves finished shards; ``resume=True`` continues.

    ``executor="dask"`` runs shards as Dask tasks (a local cluster of ``workers`` processes, or
    the cluster at ``scheduler``); the output is byte-identical to the local executor's. The run
    holds the folder's lock throughout (a second run on it gets a LockedError). A stop part-way
    (disk full, a killed worker) raises a ResumableError; the shards committed until then are kept.
    """
    if executor not in EXECUTORS:
        raise ConfigError(f"--executor must be one of {', '.join(EXECUTORS)}, not {executor!r}")
    if scheduler and executor != "dask":
        raise ConfigError("--scheduler needs --executor dask")
    t0 = time.perf_counter()
    run_dir = Path(run_dir)
    n_shards = len(shard_ranges(config.count, config.output.shard_size))
    check_output_dir(run_dir)
    with RunDir(run_dir).locked():
        plan = prepare_run(config, run_dir, resume=resume, overwrite=overwrite)
        todo = list(plan.todo)
        per_base = items_per_base(config)
        expected = config.count * per_base
        done = sum(len(r) for s, r in enumerate(shard_ranges(config.count, config.output.shard_size))
                   if s not in todo) * per_base
        committed = n_shards - len(todo)
        if progress:
            progress(done, expected)

        def shard_done(n: int) -> None:
            nonlocal done, committed
            done += n
            committed += 1
            if progress:
                progress(done, expected)

        data = config.model_dump(mode="json")
        try:
            if executor == "dask":
                from synth.distributed import run_on_dask

                run_on_dask(data, run_dir, todo, scheduler=scheduler, workers=workers, on_shard=shard_done)
            elif workers <= 1:
                for s in todo:
                    shard_done(run_shard(data, str(run_dir), s)["items"])
            elif todo:
                _run_pool(data, run_dir, todo, workers, shard_done)
        except BrokenProcessPool as exc:
            raise ResumableError(f"a worker process died (killed, or out of memory) before its shard was "
                                 f"committed; {committed} of {n_shards} shards are committed and kept in "
                                 f"{run_dir}; {RESUME_HINT}") from exc
        except MemoryError as exc:
            raise ResumableError(f"out of memory; {committed} of {n_shards} shards are committed and kept in "
                                 f"{run_dir}; use fewer --workers or a smaller output.shard_size, then "
                                 f"{RESUME_HINT}") from exc
        if not (run_dir / "manifest.jsonl").exists():
            finish_run(config, run_dir, time.perf_counter() - t0, n_shards - len(todo))
        total = sum(1 for _ in (run_dir / "manifest.jsonl").open(encoding="utf-8"))
    return RunResult(run_dir, total, n_shards, n_shards - len(todo), time.perf_counter() - t0,
                     redone=plan.redone, notes=plan.notes)


def _run_pool(data: dict[str, Any], run_dir: Path, todo: list[int], workers: int,
              shard_done: Callable[[int], None]) -> None:
    """Shards on a forkserver process pool whose workers die with the run (``synth.lifeline``)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["synth.pipeline", "render.page", "synth.lifeline_forkserver"])
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=pool_worker_init,
                             initargs=(os.getpid(),)) as pool:
        pending: set[Future[dict[str, Any]]] = set()
        queue = list(todo)
        try:
            while queue or pending:
                while queue and len(pending) < 2 * workers:
                    pending.add(pool.submit(run_shard, data, str(run_dir), queue.pop(0)))
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    shard_done(fut.result()["items"])
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
