"""Capture profiles: several ops applied together in physical order, consecutive geometry fused.

A profile is a list of (subtype, severity). ``degrade_profile`` orders it by ``base.STAGES``
(marks -> reverse -> lighting -> geometry -> camera, then each op's ``stage_rank``), gives each op
its own generator keyed by its subtype (so adding an op to a profile does not reshuffle the
others), applies the non-geometric ops one by one and every run of consecutive geometric ops as
ONE remap, and returns one record per op in applied order. Replaying needs the same steps and
the recorded params.

Consecutive lighting ops (shadow, glare) are fused too: their ``Light`` maps compose into one, applied
in one pass together with a bent sheet's shading when geometry follows. Each is still measured from
pixels: the run is replayed stage by stage on every other pixel of every other row (``measure.half``),
which is what the lighting measures sample.

Measuring is off the pixels' path: each op's effect is measured on a worker thread (``worker``) while the
next op applies (measures are pure functions of the op's input, output and params, and OpenCV and numpy release
the GIL), and the records are collected in applied order at the end. The photo and its records are the
same bytes as measuring inline; a capture just finishes sooner.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

from perturb.photo.base import (
    STAGES,
    DegradationError,
    Op,
    PageText,
    Photo,
    ReversePage,
    check_image,
    check_level,
    check_severity,
    get_op,
    replayable,
    require_applicable,
    sample,
    strip_private,
    with_reverse,
)
from perturb.photo.fields import LightOp
from perturb.photo.functional.geometric import move_boxes, moved_page, page_outline, remap_chain
from perturb.photo.functional.lighting import Light
from perturb.photo.fusion import GeometricOp, desk_of
from perturb.photo.measure import half
from perturb.photo.worker import done, later
from synth.records import DegradationRecord, RenderedPage
from synth.seeding import stable_hash

Step = tuple[str, int]


def physical_order(steps: Sequence[Step]) -> list[Step]:
    """The steps sorted into the order light and paper see them; severity-0 steps dropped."""
    seen: set[str] = set()
    for subtype, severity in steps:
        get_op(subtype)
        check_severity(severity)
        if severity:
            check_level(get_op(subtype), severity)
        if subtype in seen:
            raise DegradationError(f"profile lists {subtype!r} twice; give each op once with one severity")
        seen.add(subtype)
    live = [(s, v) for s, v in steps if v > 0]
    return sorted(live, key=lambda sv: (STAGES.index(get_op(sv[0]).stage), get_op(sv[0]).stage_rank, sv[0]))


def op_rng(rng: np.random.Generator, subtypes: Sequence[str]) -> dict[str, np.random.Generator]:
    base = int(rng.integers(2**63 - 1))
    return {s: np.random.default_rng(np.random.SeedSequence(base, spawn_key=(stable_hash(s),))) for s in subtypes}


def degrade_profile(image: np.ndarray, page: RenderedPage, steps: Sequence[Step], rng: np.random.Generator | None,
                    *, params: Sequence[dict[str, Any]] | None = None, reverse: ReversePage | None = None,
                    fuse: bool = True, text: PageText | None = None,
                    ) -> tuple[np.ndarray, RenderedPage, tuple[DegradationRecord, ...]]:
    """Apply a capture profile. ``params`` (one dict per applied op, in applied order) replays a recording.

    ``fuse=False`` applies geometric ops one remap each (for benchmarks and comparisons). ``text`` is
    what the page says, for the ops that write it by hand (see ``base.degrade``).
    """
    photo = capture(image, page, steps, rng, params=params, reverse=reverse, fuse=fuse, text=text)
    return photo.pixels, photo.page, photo.records


def capture(image: np.ndarray, page: RenderedPage, steps: Sequence[Step], rng: np.random.Generator | None,
            *, params: Sequence[dict[str, Any]] | None = None, reverse: ReversePage | None = None,
            fuse: bool = True, text: PageText | None = None) -> Photo:
    """``degrade_profile`` as a ``Photo``: with the camera's JPEG file when the profile ends with jpeg."""
    check_image(image)
    ordered = physical_order(steps)
    if params is not None and len(params) != len(ordered):
        raise DegradationError(f"replaying a profile needs one params dict per applied op ({len(ordered)}),"
                               f" got {len(params)}")
    if params is None and rng is None:
        raise DegradationError("degrade_profile needs an rng to sample with, or params to replay")
    rngs = op_rng(rng, [s for s, _ in ordered]) if params is None else {}
    measured: list[Future[list[DegradationRecord]]] = []  # one per run of ops, in applied order
    encoded: bytes | None = None
    light: Light | None = None  # lighting of the flat sheet not yet applied
    i = 0
    while i < len(ordered):
        op = get_op(ordered[i][0])
        j = _run_end(ordered, i, GeometricOp if isinstance(op, GeometricOp) else LightOp)
        if fuse and isinstance(op, LightOp):
            light, recs = _lighting(image, page, ordered[i:j], rngs, params[i:j] if params else None)
            if j == len(ordered) or not isinstance(get_op(ordered[j][0]), GeometricOp):
                image, light = light.apply(image), None
            encoded = None
        elif isinstance(op, GeometricOp):
            image, page, geometric = _geometry(image, page, ordered[i:j], rngs, params[i:j] if params else None,
                                               fuse, light)
            recs, light, encoded = done(geometric), None, None
        else:
            j = i + 1
            image, page, recs, encoded = _single(op, image, page, ordered[i][1], rngs.get(op.subtype),
                                                 params[i] if params else None, reverse, text)
        measured.append(recs)
        i = j
    return Photo(image, page, tuple(r for recs in measured for r in recs.result()), encoded)


def _single(op: Op, image: np.ndarray, page: RenderedPage, severity: int, rng: np.random.Generator | None,
            params: dict[str, Any] | None, reverse: ReversePage | None, text: PageText | None = None,
            ) -> tuple[np.ndarray, RenderedPage, Future[list[DegradationRecord]], bytes | None]:
    require_applicable(op, page)
    p = params if params is not None else sample(op, rng, severity, page, text)
    p = with_reverse(op, p, reverse)
    with replayable(op):
        out, new_page, encoded = op.apply_encoded(image, p, page)
    return out, new_page, later(lambda: [DegradationRecord(op.subtype, op.family, severity, strip_private(p),
                                                            op.measure(image, out, p, page))]), encoded


def _run_end(ordered: Sequence[Step], i: int, kind: type) -> int:
    """End of the run of consecutive ops of ``kind`` starting at ``i`` (at least one op)."""
    j = i + 1
    while j < len(ordered) and isinstance(get_op(ordered[j][0]), kind):
        j += 1
    return j


def _lighting(image: np.ndarray, page: RenderedPage, steps: Sequence[Step], rngs: dict[str, np.random.Generator],
              params: Sequence[dict[str, Any]] | None) -> tuple[Light, Future[list[DegradationRecord]]]:
    """Compose a run of lighting ops into one ``Light``; measure each on the half-size page, stage by stage."""
    light, stages = Light(), []
    for k, (subtype, severity) in enumerate(steps):
        op = get_op(subtype)
        assert isinstance(op, LightOp)
        require_applicable(op, page)
        p = params[k] if params is not None else sample(op, rngs[subtype], severity, page, None)
        with replayable(op):
            step = op.light(p, page)
        stages.append((op, severity, p, step))
        light = light.then(step)

    def measure() -> list[DegradationRecord]:
        records, before = [], half(image)
        for op, severity, p, step in stages:
            after = step.apply(before)
            records.append(DegradationRecord(op.subtype, op.family, severity, strip_private(p),
                                             op.measure_half(before, after, p, page)))
            before = after
        return records

    return light, later(measure)


def _geometry(image: np.ndarray, page: RenderedPage, steps: Sequence[Step], rngs: dict[str, np.random.Generator],
              params: Sequence[dict[str, Any]] | None, fuse: bool, light: Light | None = None,
              ) -> tuple[np.ndarray, RenderedPage, list[DegradationRecord]]:
    """Sample each geometric op on the frame the previous ones leave (tracking the sheet's outline),
    then remap once, lighting the flat sheet first; unfused, remap op by op, each laying the sheet on
    its own desk."""
    outline = page_outline(page)
    current = page
    warps, all_params, records = [], [], []
    for k, (subtype, severity) in enumerate(steps):
        op = get_op(subtype)
        assert isinstance(op, GeometricOp)
        p = params[k] if params is not None else op.sample_in_chain(rngs[subtype], severity, current, outline)
        with replayable(op):
            warp = op.warp(p, current)
        records.append(DegradationRecord(subtype, op.family, severity, p, op.measure_warp(p, current, warp, outline)))
        warps.append(warp)
        all_params.append(p)
        outline = warp.forward(outline)
        # Only sizes and the layout matter for sampling the next op; the final boxes move once, below.
        current = move_boxes(current, warp.forward, warp.width, warp.height, edge_samples=9 if warp.bends else 2)
    if fuse:
        return remap_chain(image, page, warps, desk_of(all_params), light), moved_page(page, warps), records
    frame = page
    for warp, p in zip(warps, all_params, strict=True):
        image, frame = remap_chain(image, frame, [warp], desk_of([p])), moved_page(frame, [warp])
    return image, frame, records
