"""The stages of one base problem: plan, generate, inject, verify, render, degrade, and write a shard.

Every stage draws from its own generator, ``stage_rng(item seed, stage name, ...)``, so an item is
a function of (run seed, base index) alone: the same in any process, shard or order, and changing
one stage's settings does not reshuffle another's draws. ``build_items`` chains the stages for one
base; ``produce_shard`` runs the bases of a shard and encodes what they give (the write stage), as
bytes ready for ``RunDir.commit``. Nothing here touches the run folder but a shard's staging folder (and, with
``generate.paraphrase``, its reply cache, ``synth.paraphrase``).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import cv2
import numpy as np

import perturb
import render
import synth
from perturb.photo import REGISTRY as PHOTO_OPS
from perturb.photo import Photo, degrade_photo
from perturb.photo.base import ReversePage
from perturb.photo.handwritten import page_text
from perturb.photo.profile import capture
from perturb.reasoning import REGISTRY as INJECTORS
from perturb.reasoning import inject
from perturb.reasoning.base import Funnel, clean_variant, shown_key
from perturb.reasoning.multi import stack, stackable
from render import PageImage, compose_page, render_page, sample_hand
from render.handwriting import Writer
from render.page import Draft, PageFullError
from synth.allocation import BasePlan, plan_base
from synth.chains import write_contents
from synth.config import RunConfig, validate_config
from synth.errors import RunError
from synth.generators import get_family
from synth.manifest import dumps_row, to_row
from synth.memory import keep_image_buffers
from synth.paraphrase import CACHE_FOLDER, Paraphraser
from synth.records import Item, Problem, Variant
from synth.resources import resource_dir
from synth.rundir import ShardOutput, sha256, stage_image
from synth.seeding import item_seed, stage_rng
from synth.verifier import verify

STAGES = ("plan", "generate", "inject", "verify", "write_up", "render", "degrade", "write")
MAX_GENERATE_ATTEMPTS = 5
MAX_ALLOCATION_REDRAWS = 24  # quota runs: fresh problems tried until one takes every planned subtype

Slot = tuple[int, str, np.random.Generator]  # (variant slot j, error subtype, that slot's generator)
Stored = np.ndarray | bytes  # an image as pixels to encode as PNG, or the encoded file itself


@cache
def versions() -> dict[str, str]:
    """The versions that make a row's bytes: the packages', and ``source``, a digest of our code and templates
    (the package version stays the same between two commits whose rows differ; a resume across them is refused)."""
    names = {"mathstress": "mathstress", "numpy": "numpy", "sympy": "sympy",
             "opencv": "opencv-python-headless", "pillow": "pillow"}
    out = {}
    for key, dist in names.items():
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = "unknown"
    out["source"] = source_digest()
    return out


def source_digest() -> str:
    """sha256 (first 16 hex) of every module of synth, perturb and render and every template, by relative path:
    the same in a checkout, an editable install and a wheel (templates are synth/templates there)."""
    h = hashlib.sha256()
    trees = [(pkg.__name__, Path(pkg.__file__).resolve().parent, "*.py") for pkg in (synth, perturb, render)]
    trees.append(("templates", resource_dir("templates"), "*"))
    for label, root, pattern in trees:
        for path in sorted(root.rglob(pattern)):
            rel = path.relative_to(root)
            if not path.is_file() or "__pycache__" in rel.parts or (label == "synth" and rel.parts[0] == "templates"):
                continue
            h.update(f"{label}/{rel.as_posix()}\0".encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


@dataclass
class ShardStats:
    items: Counter[str] = field(default_factory=Counter)
    families: Counter[str] = field(default_factory=Counter)
    subtypes: Counter[str] = field(default_factory=Counter)
    subtype_pages: Counter[str] = field(default_factory=Counter)  # the pages alone: the slots a config asks for
    degradations: Counter[str] = field(default_factory=Counter)
    generate_rejected: Counter[str] = field(default_factory=Counter)
    funnel: Funnel = field(default_factory=Funnel)
    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def as_dict(self) -> dict[str, Any]:
        return {"items": dict(self.items), "families": dict(self.families), "subtypes": dict(self.subtypes),
                "subtype_pages": dict(self.subtype_pages), "degradations": dict(self.degradations),
                "generate_rejected": dict(self.generate_rejected), "inject": self.funnel.as_dict(),
                "seconds": dict(self.seconds)}


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


def _pick(rng: np.random.Generator, values: list[str] | dict[str, float]) -> str:
    """One of ``values``: uniform over a list (the original draw, kept byte-for-byte), by weight for a mapping."""
    if isinstance(values, dict):
        return _weighted(rng, values)
    return values[int(rng.integers(len(values)))]


def base_id(config: RunConfig, index: int) -> str:
    return f"{config.name}-{index:06d}"


# ------------------------------------------------------------------------- plan, generate, verify


def plan_problem(config: RunConfig, index: int, plan: BasePlan | None = None) -> tuple[str, str, str]:
    """The plan stage: base ``index``'s family, difficulty and question type (a quota run's ``plan`` fixes them)."""
    if plan is not None:
        return plan.family, plan.difficulty, plan.question_type
    rng = stage_rng(item_seed(config.seed, index), "plan")
    family_id = _weighted(rng, config.generate.families)
    return family_id, _pick(rng, config.generate.difficulties), _pick(rng, config.generate.question_types)


def generate_problem(config: RunConfig, index: int, stats: ShardStats, plan: BasePlan | None = None,
                     redraw: int = 0) -> Problem:
    """The verified clean problem for base ``index``: plan, generate, verify (resampling on failure).

    ``plan`` (quota runs) fixes the family, difficulty and question type; ``redraw`` > 0 asks for
    another problem of the same plan, from generate seeds no other draw uses.
    """
    seed = item_seed(config.seed, index)
    with _Timer(stats, "plan"):
        family_id, difficulty, question_type = plan_problem(config, index, plan)
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


# ------------------------------------------------------------------------- inject


def inject_variants(config: RunConfig, problem: Problem, slots: Iterable[Slot], stats: ShardStats, *,
                    all_or_none: bool = False) -> list[tuple[str, Variant]]:
    """The inject stage: one variant per slot, each injected (and verified) from the slot's own generator.

    A variant is ``<base>-e<j+1>`` (an error) or ``<base>-s<j+1>`` (a superficial control); a slot
    whose injection is refused is left out (the funnel counts why), or, with ``all_or_none``,
    ends the list there (a quota base needs every planned subtype, so the caller redraws it).
    """
    out: list[tuple[str, Variant]] = []
    with _Timer(stats, "inject"):
        for j, subtype, rng in slots:
            # A base's variants always differ: one that reads like an earlier sibling is redrawn (funnel: duplicate).
            variant = inject(problem, subtype, rng, placement=config.inject.placement,
                             max_attempts=config.inject.max_attempts, funnel=stats.funnel,
                             propagate=config.inject.propagate, avoid={shown_key(v.steps) for _, v in out})
            if variant is not None and variant.error is not None and config.inject.errors_per_variant > 1:
                variant = _stack_errors(config, problem, variant, rng, stats)
            if variant is None:
                if all_or_none:
                    break
                continue
            out.append((f"{problem.id}-{'s' if variant.kind == 'superficial' else 'e'}{j + 1}", variant))
    return out


def drawn_slots(config: RunConfig, index: int, problem: Problem) -> Iterator[Slot]:
    """A weighted run's variant slots: each draws its subtype by weight among those that can act on ``problem``."""
    family = get_family(problem.family)
    # Only subtypes that can act on this problem compete (variable_rename needs a variable...).
    applicable = {s: w for s, w in config.inject.subtypes.items() if INJECTORS[s].applies(family, problem)}
    if not applicable:
        return
    seed = item_seed(config.seed, index)
    for j in range(config.inject.variants_per_base):
        rng = stage_rng(seed, "inject", j)
        yield j, _weighted(rng, applicable), rng


def planned_slots(config: RunConfig, index: int, plan: BasePlan, redraw: int = 0) -> list[Slot]:
    """A quota base's variant slots: the planned subtypes in slot order (a redrawn problem gets fresh generators)."""
    seed = item_seed(config.seed, index)
    return [(j, subtype, stage_rng(seed, "inject", j) if redraw == 0 else stage_rng(seed, "inject", j, redraw))
            for j, subtype in enumerate(plan.subtypes)]


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


def _allocated_base(config: RunConfig, index: int, plan: BasePlan,
                    stats: ShardStats) -> tuple[Problem, list[tuple[str, Variant]]]:
    """Base ``index`` of a quota run: a problem of the planned family that takes every planned subtype.

    Problems are redrawn until one has the planned image role and each planned subtype is
    injected and verified, so the planned shares hold in the output. A base that never fits keeps
    its best draw; its missing variants are counted as ``allocation:<subtype>:unfilled``.
    """
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
        got = inject_variants(config, problem, planned_slots(config, index, plan, redraw), stats, all_or_none=True)
        if len(got) == len(plan.subtypes):
            return problem, got
        stats.generate_rejected["allocation:inject_failed_redrawn"] += 1
        if len(got) > len(best[1]):
            best = (problem, got)
    assert best is not None
    for subtype in plan.subtypes[len(best[1]):]:
        stats.generate_rejected[f"allocation:{subtype}:unfilled"] += 1
    return best


def contents(config: RunConfig, index: int, plan: BasePlan | None,
             stats: ShardStats) -> tuple[Problem, list[tuple[str, Variant]]]:
    """Base ``index``'s problem and its contents: the clean control first, then its error and superficial variants.

    ``plan`` is the base's quota plan (``plan_base``), None in a weighted run.
    """
    if plan is None:
        problem = generate_problem(config, index, stats)
        variants = inject_variants(config, problem, drawn_slots(config, index, problem), stats)
    else:
        problem, variants = _allocated_base(config, index, plan, stats)
    return problem, [(problem.id, clean_variant(problem)), *variants]


def solution_style(config: RunConfig, index: int) -> str:
    """Base ``index``'s solution style: the one configured, or one drawn by weight from its own stage generator."""
    styles = config.generate.solution_style
    if isinstance(styles, str):
        return styles
    if len(styles) == 1:
        return next(iter(styles))
    return _weighted(stage_rng(item_seed(config.seed, index), "solution_style"), styles)


def write_solutions(config: RunConfig, index: int, problem: Problem, variants: list[tuple[str, Variant]],
                    stats: ShardStats) -> tuple[str, list[tuple[str, Variant]]]:
    """The write-up stage: base ``index``'s contents in its solution style (``synth.chains``), re-verified.

    A variant whose styled chain the verifier labels otherwise is dropped and counted in the funnel
    under ``chains.<style>``; should the clean control's chain fail, the base keeps the worked style.
    """
    style = solution_style(config, index)
    with _Timer(stats, "write_up"):
        styled = write_contents(problem, variants, style, item_seed(config.seed, index),
                                concepts_in_words=config.generate.concepts_in_words)
    name = f"chains.{style}"
    stats.funnel.attempted[name] += len(variants)
    stats.funnel.kept[name] += len(styled.contents) if styled.style == style else 0
    for reason, n in sorted(styled.rejected.items()):
        for _ in range(n):
            stats.funnel.reject(name, reason)
    return styled.style, styled.contents


# ------------------------------------------------------------------------- render, degrade


def compose_variant(config: RunConfig, problem: Problem, variant: Variant, hand: tuple[str, Writer | None],
                    seed: int, solution_style: str, stats: ShardStats) -> Draft:
    """The render stage's layout: ``variant``'s page in the base's hand (one modality and writer per base
    problem), its solution set as its style is (a chain of thought in paragraphs). ``.rasterize()`` draws it."""
    rcfg = config.render
    style, writer = hand
    with _Timer(stats, "render"):
        return compose_page(problem, variant, page=rcfg.page, paper=rcfg.paper, dpi=rcfg.dpi, style=style,
                            writer=writer, seed=seed, show_solution=rcfg.show_solution,
                            handwritten_question=rcfg.handwritten_question and style == "handwritten",
                            solution_style=solution_style)


def compose_base(config: RunConfig, index: int, problem: Problem, worked: list[tuple[str, Variant]],
                 styled: tuple[str, list[tuple[str, Variant]]], hand: tuple[str, Writer | None],
                 stats: ShardStats) -> tuple[str, list[tuple[str, Variant, Draft]]]:
    """Lay out every page of a base before any is drawn, so a base's pages are all in one style.

    ``worked`` is the base's contents as the verifier made them, ``styled`` its write-up (style, contents).
    When a page of a sentence chain (student, cot) does not fit even in the smallest type (PageFullError),
    the whole base is written up in the worked style instead, counted under ``chains.<style>`` as rejected
    ``page_full_fallback`` (one per base; its contents no longer count as kept in that style). A worked page
    that does not fit raises PageFullError: the config asks for a page too small.
    """
    seed = item_seed(config.seed, index)
    style, variants = styled
    try:
        return style, [(i, v, compose_variant(config, problem, v, hand, seed, style, stats)) for i, v in variants]
    except PageFullError:
        if style == "worked":
            raise
    name = f"chains.{style}"
    stats.funnel.kept[name] -= len(variants)
    stats.funnel.reject(name, "page_full_fallback")
    with _Timer(stats, "write_up"):
        fallback = write_contents(problem, worked, "worked", seed)
    return fallback.style, [(i, v, compose_variant(config, problem, v, hand, seed, fallback.style, stats))
                            for i, v in fallback.contents]


@dataclass(frozen=True)
class Capture:
    """One way a base's pages are photographed: an op at a severity (``d<n>``) or a capture profile (``p<k>``).

    ``keys`` seed its generator (``stage_rng(item seed, *keys)``): they name the base and the capture but
    never the content, so every page of a base photographed under it gets the same draws.
    """

    suffix: str
    steps: tuple[tuple[str, int], ...]
    profile: str | None
    keys: tuple[Any, ...]

    def applies(self, page: Any) -> bool:
        return all(not severity or PHOTO_OPS[subtype].applies(page) for subtype, severity in self.steps)


def base_captures(config: RunConfig, plan: BasePlan | None) -> list[Capture]:
    """The captures of one base, in id order: each op x severity (``degrade.per_base`` keeps the planned ones),
    then each profile. The numbering counts every op x severity, so a skipped one never renames the others."""
    out = []
    n = 0
    for entry, op in enumerate(config.degrade.ops):
        for severity in op.severities:
            n += 1
            if plan is not None and plan.degradations is not None and n not in plan.degradations:
                continue  # degrade.per_base: this base's photos are the planned ones
            # Keyed by the op's entry, not its severity: a base's severities of one op draw the same scene (the
            # ops draw their structure the same way at every severity), so a severity ablation is paired.
            out.append(Capture(f"d{n}", ((op.subtype, severity),), None, (f"degrade:{op.subtype}", entry)))
    for k, profile in enumerate(config.degrade.profiles, start=1):
        out.append(Capture(f"p{k}", tuple((s.subtype, s.severity) for s in profile.ops), profile.name,
                           (f"profile:{profile.name}",)))
    return out


def _not_applicable(stats: ShardStats, cap: Capture) -> None:
    if cap.profile is not None:
        stats.degradations[f"profile:{cap.profile}:not_applicable"] += 1
    else:
        (subtype, severity), = cap.steps
        stats.degradations[f"{subtype}:{severity}:not_applicable"] += 1


def degrade_photos(config: RunConfig, index: int, problem: Problem, variant: Variant, drawn: PageImage,
                   captures: Iterable[Capture], stats: ShardStats, *,
                   reverse: ReversePage | None = None) -> Iterator[tuple[Capture, Photo]]:
    """The degrade stage for one page: ``(capture, photo)`` for each capture that can act on ``drawn``.

    Any content is photographed the same way: the generator depends on the base and the capture only,
    so the clean control and its variants under one capture get the same sampled parameters (those
    that place marks by the page's own layout or write its own words follow that page). A capture
    that cannot act on the page (figure_marking without a figure) is skipped and counted, so the id
    of every other photo stays the same. ``reverse`` is the other side of the sheet (bleed_through),
    made here when not given; a caller photographing several pages of one base makes it once.
    """
    seed = item_seed(config.seed, index)
    if reverse is None and _needs_reverse(config):
        reverse = _reverse_page(config, index)
    text = page_text(problem, variant)  # the words handwritten_* ops write: this page's own
    for cap in captures:
        if not cap.applies(drawn.page):
            _not_applicable(stats, cap)
            continue
        with _Timer(stats, "degrade"):
            rng = stage_rng(seed, *cap.keys)
            if cap.profile is None:
                (subtype, severity), = cap.steps
                photo = degrade_photo(drawn.pixels, drawn.page, subtype, severity, rng, reverse=reverse, text=text)
            else:
                photo = capture(drawn.pixels, drawn.page, list(cap.steps), rng, reverse=reverse, text=text)
        yield cap, photo


def _needs_reverse(config: RunConfig) -> bool:
    subtypes = [op.subtype for op in config.degrade.ops] + [s.subtype for p in config.degrade.profiles for s in p.ops]
    return any(PHOTO_OPS[s].uses_reverse for s in subtypes)


def _reverse_page(config: RunConfig, index: int) -> ReversePage:
    """The other side of base ``index``'s sheet: the clean page of a problem rendered for the purpose.

    It is base ``count + index`` of the same run settings (never an item of this run), so it is a
    function of (run seed, index) like everything else, and bleed-through shows real other print.
    """
    other = config.count + index
    problem = generate_problem(config, other, ShardStats())  # its own stats are not this run's
    rcfg = config.render
    drawn = render_page(problem, clean_variant(problem), page=rcfg.page, paper=rcfg.paper, dpi=rcfg.dpi)
    return ReversePage(drawn.pixels, problem.id)


def _photo_name(item_id: str, photo: Photo) -> str:
    return f"images/{item_id}.jpg" if photo.jpeg is not None else f"images/{item_id}.png"


def _stored(photo: Photo) -> Stored:
    return photo.jpeg if photo.jpeg is not None else photo.pixels


# ------------------------------------------------------------------------- one base, one shard


def build_items(config: RunConfig, index: int, stats: ShardStats, paraphraser: Paraphraser | None = None, *,
                layout_only: bool = False) -> Iterator[tuple[Item, Stored | None]]:
    """The clean control for base ``index``, then its error and superficial variants, each followed by its photos.

    The image is pixels to store as PNG, or the encoded file itself when the photo's last op was the
    camera's JPEG encoding (``item.image`` then ends in .jpg): storing those bytes keeps the file
    exactly the degraded pixels, at a fraction of the size and of the time a PNG takes. Without
    rendering (``render.enabled: false``) items come without images and without photos.

    Photos (``<id>-d<n>``, ``<id>-p<k>``) are taken of the kinds ``degrade.apply_to`` lists. A
    variant's photo names the page it shows (``source_id``) and the clean control's photo under the
    same capture (``capture_twin``); a variant is photographed only under the captures its clean
    control was, so every twin exists. A sentence chain too long for its page makes the whole base
    worked lines (``compose_base``), so one long chain never stops a run. ``layout_only``: the items as the run
    has them (that fallback included), laid out but not drawn: no pixels, no photos (worksheets).
    """
    seed = item_seed(config.seed, index)
    plan = plan_base(config, index)
    problem, worked = contents(config, index, plan, stats)
    style, variants = write_solutions(config, index, problem, worked, stats)
    if paraphraser is not None:  # generate.paraphrase: reworded chains, kept only when every claim and label holds
        with _Timer(stats, "write_up"):
            variants = paraphraser.paraphrase(problem, style, variants, stage_rng(seed, "paraphrase"), stats.funnel)
    bid = problem.id
    rcfg = config.render
    if not rcfg.enabled:
        for item_id, variant in variants:
            yield Item(id=item_id, base_id=bid, index=index, seed=seed, problem=problem, variant=variant,
                       render=None, image=None, clean_image=None, versions=versions(), solution_style=style), None
        return
    hand = sample_hand(stage_rng(seed, "render"), style=rcfg.style, handwritten_share=rcfg.handwritten_share,
                       neatness=rcfg.neatness, writers=rcfg.writers)
    clean_image = f"images/{bid}.png"
    style, pages = compose_base(config, index, problem, worked, (style, variants), hand, stats)
    if paraphraser is not None and style == "worked":
        paraphraser.accepted.pop(bid, None)  # a page too small for the chain: the base is worked lines after all
    if layout_only:
        for item_id, variant, _ in pages:
            yield Item(id=item_id, base_id=bid, index=index, seed=seed, problem=problem, variant=variant,
                       render=None, image=None, clean_image=None, versions=versions(), solution_style=style), None
        return
    captures = base_captures(config, plan)
    reverse = _reverse_page(config, index) if captures and _needs_reverse(config) else None
    for item_id, variant, draft in pages:
        with _Timer(stats, "render"):
            drawn = draft.rasterize()
        yield Item(id=item_id, base_id=bid, index=index, seed=seed, problem=problem, variant=variant,
                   render=drawn.page, image=f"images/{item_id}.png", clean_image=clean_image,
                   versions=versions(), solution_style=style), drawn.pixels
        if variant.kind not in config.degrade.apply_to:
            continue
        clean = item_id == bid  # the clean control comes first: its captures are the ones twins may have
        taken = []
        for cap, photo in degrade_photos(config, index, problem, variant, drawn, captures, stats, reverse=reverse):
            taken.append(cap)
            photo_id = f"{item_id}-{cap.suffix}"
            yield Item(id=photo_id, base_id=bid, index=index, seed=seed, problem=problem, variant=variant,
                       render=photo.page, degradations=photo.records, profile=cap.profile,
                       image=_photo_name(photo_id, photo), clean_image=clean_image, versions=versions(),
                       source_id=item_id, capture_twin=None if clean else f"{bid}-{cap.suffix}",
                       solution_style=style), _stored(photo)
        if clean:
            captures = taken


def shard_ranges(count: int, shard_size: int) -> list[range]:
    return [range(s, min(s + shard_size, count)) for s in range(0, count, shard_size)]


def _png_bytes(name: str, pixels: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 1])
    if not ok:
        raise RunError(f"could not encode {name} as PNG")
    return buf.tobytes()


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


def produce_shard(config_data: dict[str, Any], shard: int, stage: Path | None = None) -> ShardOutput:
    """Build every item of one shard and encode its images (the write stage); with ``stage``, images go there at once.

    Pure apart from ``stage``: config and shard number in, rows and image bytes out, so any worker
    (a pool process, a Dask worker on another machine) can make it and the client commit it.
    """
    config = validate_config(config_data)
    if config.render.enabled:
        keep_image_buffers()
    with one_opencv_thread():
        return _produce(config, shard, stage)


def _produce(config: RunConfig, shard: int, stage: Path | None) -> ShardOutput:
    indices = shard_ranges(config.bases, config.output.shard_size)[shard]
    stats = ShardStats()
    # generate.paraphrase: replies are cached in the run folder (a shard's staging folder is <run>/images/.tmp-N);
    # a Dask worker, which may not see the run folder, keeps them for the shard only.
    wording = config.generate.paraphrase
    paraphraser = None if wording is None else Paraphraser(
        wording, None if stage is None else stage.parents[1] / CACHE_FOLDER)
    rows: list[str] = []
    names: list[str] = []
    digests: list[str] = []  # taken from the bytes as they are encoded: committing needs no second read
    images: list[tuple[str, bytes]] = []
    for index in indices:
        for item, image in build_items(config, index, stats, paraphraser):
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
                row = to_row(item)
                if paraphraser is not None and item.base_id in paraphraser.accepted:
                    row["paraphrased_by"] = paraphraser.accepted[item.base_id]  # the model's name, nothing else
                rows.append(dumps_row(row))
            _count(stats, item)
    return ShardOutput(shard, tuple(rows), tuple(names), tuple(digests), tuple(images), stats.as_dict())


def _count(stats: ShardStats, item: Item) -> None:
    stats.items["degraded" if item.degradations else item.variant.kind] += 1
    stats.families[item.problem.family] += 1
    # every error a variant holds (inject.errors_per_variant > 1 stacks errors beside the planned one, and the
    # earliest of them is the variant's ``error``), or its control
    labels = ((item.variant.error, *item.variant.errors) if item.variant.error is not None
              else (item.variant.control,) if item.variant.control is not None else ())
    for label in labels:
        stats.subtypes[label.subtype] += 1
        if not item.degradations:
            stats.subtype_pages[label.subtype] += 1
    for d in item.degradations:
        stats.degradations[f"{d.subtype}:{d.severity}"] += 1
