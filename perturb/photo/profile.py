"""Capture profiles: several ops applied together in physical order, consecutive geometry fused.

A profile is a list of (subtype, severity). ``degrade_profile`` orders it by ``base.STAGES``
(marks -> reverse -> geometry -> lighting -> camera, then each op's ``stage_rank``), gives each op
its own generator keyed by its subtype (so adding an op to a profile does not reshuffle the
others), applies the non-geometric ops one by one and every run of consecutive geometric ops as
ONE remap, and returns one record per op in applied order. Replaying needs the same steps and
the recorded params. One op alone (``degrade``, ``degrade_photo``) is a capture of one step, so it is here
too (``base`` holds the op contract every module builds on, and imports none of them).

The geometry ends in the camera's frame (3:4 or 9:16, portrait or landscape, the page's pixel count):
unless an op places the sheet itself (background), the chain's scene params (drawn by its last desk op,
never from its severity) scale and place the sheet's outline in it, before any quarter turn. The desk is
drawn in the sheet's plane and warped by the same homography.

Light falls on the photographed scene after the geometry: the camera's base layer (the room's uneven
light on desk and sheet, and on the sheet only its own shading and paper texture) and the lighting ops
(shadow, glare) compose into one ``Light`` on the photo, applied in one pass. Each op is still measured
from pixels: the run is replayed stage by stage on a sparse grid of the photo's pixels
(``fields.sparse``). Every photo gets the base layer, and its grain (before a jpeg) unless an op is the
sensor's noise itself (noise, exposure). An exposure's noise is the sensor's: followed by optics (blur, resolution)
or a noise op, it goes on after them (before the noise op's grain or the jpeg, or last), so no lens blur smooths a
sensor's grain; alone or before a jpeg, in the light pass itself. The base layer's seed is drawn from the
capture's own generator (never from a severity) and recorded with the first op's params.

Measuring is off the pixels' path: each op's effect is measured on a worker thread (``worker``) while the
next op applies (measures are pure functions of the op's input, output and params, and OpenCV and numpy release
the GIL), and the records are collected in applied order at the end. When the capture ends with an encoding op
(jpeg), the measures of the ops before it are held back and handed to the worker as it starts (``Deferred``): the
codec keeps one core and the ops before it use two. The photo and its records are the same bytes as measuring
inline; a capture just finishes sooner.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
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
    check_page,
    check_severity,
    get_op,
    replayable,
    require_applicable,
    sample,
    strip_private,
    with_reverse,
)
from perturb.photo.fields import LightOp, sparse
from perturb.photo.functional.camera import add_noise, grain_band
from perturb.photo.functional.geometric import (
    Warp,
    compose_forward,
    frame_warp,
    move_boxes,
    moved_page,
    page_outline,
    remap_chain,
    sheet_light,
)
from perturb.photo.functional.lighting import Light, sample_base
from perturb.photo.fusion import GeometricOp, desk_of
from perturb.photo.measure import every, text_lean
from perturb.photo.worker import Deferred, done, later
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
    what the page says, for the ops that write it by hand (see ``degrade``).
    """
    photo = capture(image, page, steps, rng, params=params, reverse=reverse, fuse=fuse, text=text)
    return photo.pixels, photo.page, photo.records


def degrade(image: np.ndarray, page: RenderedPage, subtype: str, severity: int,
            rng: np.random.Generator, *, params: dict[str, Any] | None = None,
            reverse: ReversePage | None = None,
            text: PageText | None = None) -> tuple[np.ndarray, RenderedPage, DegradationRecord]:
    """Apply one op at one severity; pass ``params`` to replay a recorded application.

    ``reverse`` is the clean page printed on the other side of the sheet; ops that show it
    (bleed_through) use it, the others ignore it. ``text`` is what the page says; ops that write
    it by hand (handwritten_*) need it to sample, the others ignore it.
    """
    photo = degrade_photo(image, page, subtype, severity, rng, params=params, reverse=reverse, text=text)
    return photo.pixels, photo.page, photo.records[0]


def degrade_photo(image: np.ndarray, page: RenderedPage, subtype: str, severity: int,
                  rng: np.random.Generator, *, params: dict[str, Any] | None = None,
                  reverse: ReversePage | None = None, text: PageText | None = None) -> Photo:
    """``degrade``, as a ``Photo`` that keeps the encoded file of an op that writes one (jpeg)."""
    op = get_op(subtype)
    check_severity(severity)
    check_image(image)
    if severity == 0:
        return Photo(image, page, (DegradationRecord(subtype, op.family, 0, {}, {}),))
    check_level(op, severity)
    require_applicable(op, page)
    if params is None and op.samples_on_photo:
        return capture(image, page, [(subtype, severity)], rng, reverse=reverse, text=text)
    if params is None:
        # The op draws from ``rng`` itself; the base layer's seed is the one a capture of this rng would draw
        # (from a copy, so the op's draws are untouched), never from the severity.
        camera = int(op_rng(copy.deepcopy(rng), [BASE])[BASE].integers(2**63 - 1))
        params = {**sample(op, rng, severity, page, text), CAMERA_SEED: camera}
    return capture(image, page, [(subtype, severity)], None, params=[params], reverse=reverse, text=text)


@dataclass(frozen=True)
class Scene:
    """Where the sheet is in the photo so far: the flat page, the warps that moved it, its outline now."""

    page: RenderedPage  # the flat sheet
    warps: tuple[Warp, ...]
    sheet: np.ndarray  # the sheet's outline in the current frame (page units)
    textured: bool = False  # the paper's mottle went on the flat page with the remap (a bent sheet's pass)


def capture(image: np.ndarray, page: RenderedPage, steps: Sequence[Step], rng: np.random.Generator | None,
            *, params: Sequence[dict[str, Any]] | None = None, reverse: ReversePage | None = None,
            fuse: bool = True, text: PageText | None = None) -> Photo:
    """``degrade_profile`` as a ``Photo``: with the camera's JPEG file when the profile ends with jpeg, and the
    camera's base layer (room light, paper texture, sensor grain) that every photo gets, whatever its ops."""
    check_image(image)
    check_page(page, image)
    # OpenCV writes into arrays laid out as the input is: a transposed or np.rot90 view crashed most ops.
    image = np.ascontiguousarray(image)
    ordered = physical_order(steps)
    if params is not None and len(params) != len(ordered):
        raise DegradationError(f"replaying a profile needs one params dict per applied op ({len(ordered)}),"
                               f" got {len(params)}")
    if params is None and rng is None:
        raise DegradationError("degrade_profile needs an rng to sample with, or params to replay")
    rngs = op_rng(rng, [s for s, _ in ordered] + [BASE]) if params is None else {}
    given: list[dict[str, Any] | None] = list(params) if params is not None else [None] * len(ordered)
    scene = Scene(page, (), page_outline(page))
    if ordered and given[0] is None:
        first = get_op(ordered[0][0])
        # An op that aims at the photo the base layer makes (exposure) samples when it applies; the others
        # sample the flat page here.
        if not (first.samples_on_photo and not isinstance(first, (LightOp, GeometricOp))):
            given[0] = _sample(first, ordered[0][1], rngs, page, scene, text, image)
    seed = base_seed(ordered, given[0] if ordered else None, rngs)
    base = sample_base(np.random.default_rng(seed))
    noisy = any(get_op(s).adds_sensor_noise for s, _ in ordered)
    measured: list[Future[list[DegradationRecord]]] = []  # one per run of ops, in applied order
    # The measures of the ops before the last one that encodes (jpeg) are held back until it starts: its codec runs
    # on one core, and the ops before it use both (``in_halves``). The same records, measured at another time.
    encoder = max((k for k, (s, _) in enumerate(ordered) if get_op(s).encodes), default=-1)
    held = Deferred()
    encoded: bytes | None = None
    lit = grained = False
    sensor: tuple[dict[str, Any], np.ndarray] | None = None  # an exposure's noise, left for the sensor's stage
    i = 0
    while i < len(ordered):
        subtype, severity = ordered[i]
        op = get_op(subtype)
        if not lit and STAGES.index(op.stage) >= STAGES.index("lighting"):
            # Light falls on the scene the geometry left: the base layer, then the lighting ops, in one pass.
            j = _run_end(ordered, i, LightOp) if isinstance(op, LightOp) else i
            # An exposure right after the light (its vignette and tone curve are lighting too) joins its pass.
            exposing = j < len(ordered) and hasattr(get_op(ordered[j][0]), "as_light")
            # Its noise is the sensor's, which comes after the optics: with a blur, a resolution or a noise op after
            # it, its grain goes on after them (before the noise op's own grain, or before the file is encoded, or
            # last), sharp as a sensor's grain is, where the lens's blur would have smoothed it.
            after_optics = exposing and any(not get_op(s).encodes for s, _ in ordered[j + 1:])
            image, recs, sensor = _lighting(image, page, ordered[i:j], rngs, given[i:j], scene, base, fuse,
                                            (ordered[j], given[j]) if exposing else None, after_optics,
                                            held if i < encoder else later)
            measured.append(recs)
            lit, encoded, i = True, None, j + exposing
            continue
        if sensor is not None and (op.encodes or op.adds_sensor_noise):  # the sensor, after the optics
            image, sensor = add_noise(image, *sensor), None
        if op.encodes and not (noisy or grained):
            image, grained = grain(image, base), True
        if isinstance(op, GeometricOp):
            j = _run_end(ordered, i, GeometricOp)
            image, page, geometric, scene = _geometry(image, page, ordered[i:j], rngs, given[i:j], fuse, base)
            recs, encoded = done(geometric), None
        else:
            j = i + 1
            if i == encoder:
                held.flush()
            image, page, recs, encoded = _single(op, image, page, severity, rngs.get(subtype), given[i], reverse,
                                                 text, held if i < encoder else later)
        measured.append(recs)
        i = j
    if not lit:
        image = Light(base_gain(scene, page, base)).apply(image)
    if sensor is not None:
        image, encoded = add_noise(image, *sensor), None
    if not (noisy or grained):
        image, encoded = grain(image, base), None
    records = [r for recs in measured for r in recs.result()]
    # The base layer's seed rides on the first op's record, so replaying the records reproduces it.
    for k, rec in enumerate(records):
        if ordered and rec.subtype == ordered[0][0]:
            records[k] = dataclasses.replace(rec, params={**rec.params, CAMERA_SEED: seed})
    return Photo(image, page, tuple(records), encoded, base)


PROBE = 4  # an exposure joining the light pass reads the lit photo at every PROBE-th pixel of every PROBE-th row
BASE = "camera_base"  # the base layer's own generator, beside the ops' (an op-free capture samples it there)


def _sample(op: Op, severity: int, rngs: dict[str, np.random.Generator], page: RenderedPage, scene: Scene,
            text: PageText | None, image: np.ndarray) -> dict[str, Any]:
    """An op's params sampled where the capture would sample them (the first op: on the flat page)."""
    require_applicable(op, page)
    rng = rngs[op.subtype]
    if isinstance(op, GeometricOp):
        return op.sample_in_chain(rng, severity, page, page_outline(page), area=float(page.width * page.height))
    if isinstance(op, LightOp):
        return op.sample_in_scene(rng, severity, page, scene.sheet, image)
    if op.samples_on_photo:
        return op.sample_in_photo(rng, severity, page, image)  # type: ignore[attr-defined]
    return sample(op, rng, severity, page, text)


CAMERA_SEED = "camera_seed"  # the base layer's seed, recorded with the first op's params


def base_seed(ordered: Sequence[Step], seeding: dict[str, Any] | None,
              rngs: dict[str, np.random.Generator]) -> int:
    """The base layer's seed: the one the first op's record carries (replaying), else the capture's own base
    generator's first draw. That generator is keyed by the capture, never by the ops' severities, so a page's
    severities of one op share the room light, paper texture and grain (common random numbers: the severities
    differ only by the op). Records written before the seed was recorded get it from the first op's params,
    as they were made."""
    if seeding is not None and CAMERA_SEED in seeding:
        return int(seeding[CAMERA_SEED])
    if BASE in rngs:
        return int(rngs[BASE].integers(2**63 - 1))
    if ordered:
        # Leaving out which reverse page an op shows (added to its record when applied: base.with_reverse) and
        # what an op aimed at by looking at the photo (``Op.photo_keys``).
        skip = ("source", "reverse_ref", *get_op(ordered[0][0]).photo_keys)
        first = {k: v for k, v in strip_private(seeding or {}).items() if k not in skip}
        return stable_hash(json.dumps([ordered[0][0], first], sort_keys=True, default=str))
    return 0


def camera_base(image: np.ndarray, page: RenderedPage, records: Sequence[DegradationRecord]) -> np.ndarray:
    """``image`` through the camera's base layer alone, as a capture with these records (none geometric) gives it:
    the same room light, paper texture and grain. What an op did is then ``photo != camera_base(input, ...)``.

    >>> changed = (photo.pixels != camera_base(image, page, photo.records)).any(axis=2)
    """
    if any(isinstance(get_op(r.subtype), GeometricOp) for r in records):
        raise DegradationError("camera_base: a capture with geometry frames the sheet differently; compare photos"
                               " of the same records instead")
    steps = [(r.subtype, r.severity) for r in records if r.severity]
    ordered = physical_order(steps)
    by = {r.subtype: r.params for r in records}
    seeding = by[ordered[0][0]] if ordered else None
    base = sample_base(np.random.default_rng(base_seed(ordered, seeding, {})))
    out = Light(base_gain(Scene(page, (), page_outline(page)), page, base)).apply(image)
    if any(get_op(s).adds_sensor_noise for s, _ in ordered):
        return out
    return grain(out, base)


def base_gain(scene: Scene, page: RenderedPage, base: dict[str, Any]) -> np.ndarray:
    """The base layer's light on the current frame (``page`` is the photo's layout, in page units)."""
    return sheet_light(scene.page, scene.warps, page.height, page.width, 1.0, base, scene.textured)


def grain(image: np.ndarray, base: dict[str, Any]) -> np.ndarray:
    """The base layer's sensor grain: mild shot and read noise, for photos whose ops add none of their own."""
    return add_noise(image, {"sigma_paper": base["noise_sigma"], "chroma_frac": 0.25, "noise_seed": base["noise_seed"]})


def _single(op: Op, image: np.ndarray, page: RenderedPage, severity: int, rng: np.random.Generator | None,
            params: dict[str, Any] | None, reverse: ReversePage | None, text: PageText | None = None,
            submit: Callable[[Callable[[], list[DegradationRecord]]], Future[list[DegradationRecord]]] = later,
            ) -> tuple[np.ndarray, RenderedPage, Future[list[DegradationRecord]], bytes | None]:
    require_applicable(op, page)
    if params is not None:
        p = params
    elif op.samples_on_photo:  # aims at the photo it is applied to (noise)
        p = op.sample_in_photo(rng, severity, page, image)  # type: ignore[attr-defined]
    else:
        p = sample(op, rng, severity, page, text)
    p = with_reverse(op, p, reverse)
    with replayable(op):
        out, new_page, encoded = op.apply_encoded(image, p, page)
    return out, new_page, submit(lambda: [DegradationRecord(op.subtype, op.family, severity, strip_private(p),
                                                            op.measure(image, out, p, page))]), encoded


def _run_end(ordered: Sequence[Step], i: int, kind: type) -> int:
    """End of the run of consecutive ops of ``kind`` starting at ``i``."""
    j = i
    while j < len(ordered) and isinstance(get_op(ordered[j][0]), kind):
        j += 1
    return j


def _lighting(image: np.ndarray, page: RenderedPage, steps: Sequence[Step], rngs: dict[str, np.random.Generator],
              given: Sequence[dict[str, Any] | None], scene: Scene, base: dict[str, Any], fuse: bool,
              exposure: tuple[Step, dict[str, Any] | None] | None = None, noise_later: bool = False,
              submit: Callable[[Callable[[], list[DegradationRecord]]], Future[list[DegradationRecord]]] = later,
              ) -> tuple[np.ndarray, Future[list[DegradationRecord]], tuple[dict[str, Any], np.ndarray] | None]:
    """The base layer's light and a run of lighting ops (maybe none) composed into one ``Light`` on the photo,
    applied in one pass; each op is measured on the sparse photo (``fields.sparse``), stage by stage, knowing where the
    sheet is. Unfused (``fuse`` False), the base layer and each op light the photo one after another.

    ``exposure`` (its step and given params) joins the pass: its vignette composes into the ``Light`` and its
    tone curve is looked up in the same pass, then its sensor noise is added, unless ``noise_later``: then the
    noise (the exposure's params and spread per level) is returned for the capture to add after the optics. It
    aims at, and is measured against, the lit photo at every fourth pixel of every fourth row
    (``Exposure.sample_in_photo``'s probe): the only pixels of the lit photo it reads."""
    base_light = Light(base_gain(scene, page, base))
    light, stages = base_light, []
    for k, (subtype, severity) in enumerate(steps):
        op = get_op(subtype)
        assert isinstance(op, LightOp)
        require_applicable(op, page)
        p = given[k] if given[k] is not None else op.sample_in_scene(rngs[subtype], severity, page, scene.sheet,
                                                                       image)
        with replayable(op):
            step = op.light(p, page)
        stages.append((op, severity, p, step))
        light = light.then(step)
    photo = image
    if not fuse:  # lit stage by stage; an exposure then lights that photo
        photo = base_light.apply(image)
        for _, _, _, step in stages:
            photo = step.apply(photo)
        light = Light()
    exposed: list[tuple[Op, int, dict[str, Any], np.ndarray]] = []
    sensor = None
    if exposure is not None:
        (subtype, severity), p = exposure
        op = get_op(subtype)
        require_applicable(op, page)
        probe = light.apply(every(photo, PROBE))
        if p is None:
            p = op.sample_in_photo(rngs[subtype], severity, page, probe, probe=PROBE)  # type: ignore[attr-defined]
        with replayable(op):
            bloomed, vignette, curve, table = op.as_light(p, page, photo)  # type: ignore[attr-defined]
        if noise_later and float(p["chroma_frac"]) == 0:  # (an exposure with colour noise keeps it where it was)
            out, sensor = light.then(vignette).apply(photo, curve, source=bloomed), (p, table)
        elif float(p["chroma_frac"]) == 0:  # its sensor noise grains each band of the lit photo as it is lit
            out = light.then(vignette).apply(photo, curve, then=grain_band(p, table), source=bloomed)
        else:
            out = add_noise(light.then(vignette).apply(photo, curve, source=bloomed), p, table)
        exposed.append((op, severity, p, probe))
    else:
        out = light.apply(photo)

    def measure() -> list[DegradationRecord]:
        records, before = [], base_light.apply(sparse(image))
        for op, severity, p, step in stages:
            after = step.apply(before)
            records.append(DegradationRecord(op.subtype, op.family, severity, strip_private(p),
                                             op.measure_half(before, after, {**p, "_sheet": scene.sheet}, page)))
            before = after
        for op, severity, p, probe in exposed:
            records.append(DegradationRecord(op.subtype, op.family, severity, strip_private(p),
                                             op.measure_probe(probe, out, p, page)))  # type: ignore[attr-defined]
        return records

    return out, submit(measure), sensor


def _geometry(image: np.ndarray, page: RenderedPage, steps: Sequence[Step], rngs: dict[str, np.random.Generator],
              given: Sequence[dict[str, Any] | None], fuse: bool, base: dict[str, Any] | None = None,
              ) -> tuple[np.ndarray, RenderedPage, list[DegradationRecord], Scene]:
    """Sample each geometric op on the frame the previous ones leave, frame the sheet in the camera's frame,
    then remap once; unfused, remap warp by warp, each laying the sheet on its own desk. A bent sheet is shaded
    on the flat page before the remap: the base layer's paper texture goes on in that same pass (``base``)."""
    warps, desks, records, outline = _chain(page, steps, rngs, given)
    new_page = moved_page(page, warps)
    textured = fuse and base is not None and any(w.shade is not None for w in warps)
    scene = Scene(page, tuple(warps), outline, textured)
    if fuse:
        desk = desk_of([d for d in desks if d is not None])
        return remap_chain(image, page, warps, desk, base if textured else None), new_page, records, scene
    frame_page = page
    for warp, desk in zip(warps, desks, strict=True):
        image, frame_page = remap_chain(image, frame_page, [warp], desk), moved_page(frame_page, [warp])
    return image, frame_page, records, scene


def geometry_warps(records: Sequence[DegradationRecord], page: RenderedPage) -> list[Warp]:
    """The warps a capture applied to ``page``, rebuilt from its records (the geometric ones, in applied order),
    the camera's framing included: what moves boxes, keypoints and masks exactly as the photo moved."""
    steps = [(r.subtype, r.severity) for r in records if r.severity and isinstance(get_op(r.subtype), GeometricOp)]
    params = [r.params for r in records if r.severity and isinstance(get_op(r.subtype), GeometricOp)]
    return _chain(page, steps, {}, params)[0] if steps else []


def _chain(page: RenderedPage, steps: Sequence[Step], rngs: dict[str, np.random.Generator],
           given: Sequence[dict[str, Any] | None],
           ) -> tuple[list[Warp], list[dict[str, Any] | None], list[DegradationRecord], np.ndarray]:
    """A run of geometric ops as warps: each sampled (unless given) on the frame the previous ones leave
    (tracking the sheet's outline), and the camera's frame (unless an op places the sheet itself, background)
    before any quarter turn. Also the desk each warp lays the sheet on alone, the records, the final outline."""
    area = float(page.width * page.height)
    outline = page_outline(page)
    current = page
    unmoved: list[Warp] = []  # warps the boxes of ``current`` have not moved through yet
    warps: list[Warp] = []
    desks: list[dict[str, Any] | None] = []
    records = []
    framed = False

    def add(warp: Warp, desk: dict[str, Any] | None) -> None:
        nonlocal outline
        warps.append(warp)
        desks.append(desk)
        unmoved.append(warp)
        outline = warp.forward(outline)

    def now() -> RenderedPage:
        """The page as the next op finds it. Only sizes and the layout matter for sampling it; the boxes move
        when an op needs them (never after the last one: the final boxes move once, in the caller)."""
        nonlocal current
        for warp in unmoved:
            current = move_boxes(current, warp.forward, warp.width, warp.height, edge_samples=9 if warp.bends else 2)
        unmoved.clear()
        return current

    def frame() -> None:
        scene = desk_of([d for d in desks if d is not None])
        if scene is not None and not framed:
            add(frame_warp(scene, outline, area, (page.width, page.height)), scene)

    for k, (subtype, severity) in enumerate(steps):
        op = get_op(subtype)
        assert isinstance(op, GeometricOp)
        if op.after_frame:
            frame()
            framed = True
        before = now()
        lean = text_lean(compose_forward(warps), page) if op.reads_lean and warps else None
        p = given[k] if given[k] is not None else op.sample_in_chain(rngs[subtype], severity, before, outline,
                                                                       area=area, lean=lean)
        with replayable(op):
            warp = op.warp(p, before)
        records.append(DegradationRecord(subtype, op.family, severity, p,
                                         op.measure_in_chain(p, before, warp, outline, lean=lean)))
        add(warp, desk_of([p]))
        framed = framed or op.frames
    frame()
    return warps, desks, records, outline
