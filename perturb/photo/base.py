"""Degradation contract: sample parameters from (rng, severity, page), then apply them purely."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.errors import MathstressError
from synth.records import DegradationRecord, RenderedPage
from synth.registry import Registry
from synth.taxonomy import DEGRADATION_FAMILIES, DegradationSubtype

# Physical order of a capture: ink and marks on the sheet, then what shows through it from the
# reverse side, then the sheet's shape and the camera's pose (one fused remap, the desk around the sheet),
# then light falling on that scene, then the camera's own processing. Light belongs to the scene, not to the
# sheet: shadow, glare and the room's gradient are fields in photo coordinates, applied after the geometry,
# so they fall on desk and sheet alike (a bent sheet's own shading still moves with the sheet).
STAGES = ("marks", "reverse", "geometry", "lighting", "camera")


class DegradationError(MathstressError, ValueError):
    """Bad input to a degradation op (severity, image shape, layout)."""


class NotApplicableError(DegradationError):
    """The op cannot act on this page (figure_marking on a page without a figure, ...).

    Callers that sweep ops over many pages check ``op.applies(page)`` first and record a skip;
    calling ``degrade`` anyway raises this, so a skipped op can never pass for an applied one.
    """


@dataclass(frozen=True)
class ReversePage:
    """The clean page printed on the other side of the sheet, and which page it is (recorded)."""

    pixels: np.ndarray
    ref: str


@dataclass(frozen=True)
class PageText:
    """What the page says, for ops that write it by hand: a page's layout has boxes, not words.

    Built from the problem and the shown solution (``perturb.photo.handwritten.page_text``). The
    ops record every word they write in their params, so replaying needs only the params.
    """

    question_tokens: tuple[str, ...]  # in the order of the page's question_token refs 0, 1, ...
    choices: tuple[str, ...] | None
    answer_latex: str  # the final answer the student writes: the shown solution's
    answer_correct: bool  # whether that answer is the problem's correct answer
    choice: str | None  # the option letter the student picks (MCQ), None when no option matches
    steps: tuple[str, ...]  # the shown solution's step latex, in order


@dataclass(frozen=True)
class Rubric:
    """How an op's severities are told apart: one measured quantity and its bin at each severity.

    The op module states it beside the constants it samples from (``Rubric("quality", QUALITY, "JPEG
    quality")``), and everything that shows or checks the severities reads it: the degradation table
    (``mathstress taxonomy --degradations``), the bin tests, the benchmarks. A category (rotation) has
    a value per severity instead of a range.
    """

    measured: str  # the key of the op's measured record that the bins grade
    bins: Mapping[int, tuple[float, float]] | Mapping[int, str]
    what: str  # the quantity in words, for tables: "content in shadow"
    unit: str = ""  # "%" shows fractions as percent; "deg", "dB", "px at 150 dpi", ...
    open_low: bool = False  # lower edges are exclusive: a zero effect is not severity 1
    names: Mapping[int, str] | None = None  # words for the levels, shown instead of the bins ("neat", ...)

    def holds(self, severity: int, value: Any) -> bool:
        """Whether a measured ``value`` lands in the bin of ``severity``."""
        edges = self.bins[severity]
        if isinstance(edges, str):
            return value == edges
        lo, hi = edges
        return lo < value <= hi if self.open_low else lo <= value <= hi

    def describe(self) -> str:
        """The bins in words: ``content in shadow 1-30 / 30-60 / 60-100 %``, ``marked question tokens 1 / 2-3 / 4+``."""
        levels = " / ".join(self._level(s) for s in sorted(self.bins))
        return f"{self.what} {levels} {self.unit}" if self.unit and self.names is None else f"{self.what} {levels}"

    def _level(self, severity: int) -> str:
        edges = self.bins[severity]
        if self.names is not None:
            return self.names[severity]
        if isinstance(edges, str):
            return edges
        scale = 100 if self.unit.startswith("%") else 1
        lo, hi = (f"{round(v * scale, 6):g}" for v in edges)
        if edges[1] >= 10_000:  # open-ended counts
            return f"{lo}+"
        return lo if lo == hi else f"{lo}-{hi}"


class Op:
    subtype: str
    family: str
    stage: str = "camera"
    stage_rank: int = 0  # order within the stage (lower first)
    uses_reverse: bool = False  # shows the reverse page (bleed_through)
    uses_text: bool = False  # writes the page's own words by hand (handwritten_*): sample_params takes text=
    reads_text: bool = False  # reads the words when given (question_marking: which tokens are givens): text= or None
    levels: tuple[int, ...] = (1, 2, 3)  # the severities the rubric has (handwritten_answer is 0/1: only 1)
    requirement: str = ""  # what the page needs when ``applies`` can be False, for error messages
    rubric: Rubric  # what is measured and the bin it lands in at each severity
    adds_sensor_noise: bool = False  # the op is the sensor's noise (noise, exposure): no base-layer grain on top
    encodes: bool = False  # the op is the camera's file encoding (jpeg): the base layer's grain comes before it
    samples_on_photo: bool = False  # sampled inside the capture, seeing the photo (lighting ops: profile.capture)
    photo_keys: tuple[str, ...] = ()  # params an op aims by looking at the photo (left out of the base layer's seed)

    def applies(self, page: RenderedPage) -> bool:
        return True

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        raise NotImplementedError

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        """Pure: the same image and params always give the same bytes."""
        raise NotImplementedError

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return {}

    def apply_encoded(self, image: np.ndarray, params: dict[str, Any],
                      page: RenderedPage) -> tuple[np.ndarray, RenderedPage, bytes | None]:
        """``apply``, plus the encoded file for ops that are the camera's file encoding (jpeg).

        Decoding that file gives exactly the returned pixels, so a photo whose last op is the
        encoding is stored as those bytes: no second, lossy or slow, encode at write time.
        """
        out, new_page = self.apply(image, params, page)
        return out, new_page, None


# Every op module of this package registers its ops as it loads; the first lookup imports them all
# (``synth.registry``), so adding an op is adding one module.
OPS: Registry[Op] = Registry("degradation", discover="perturb.photo",
                             hint="`mathstress taxonomy --degradations` lists them")


def register(op: Op) -> Op:
    """Register ``op`` under its subtype id; a subtype registered twice is an error naming both modules.

    The op must say what it is in the taxonomy's terms: a family of DESIGN section 7, a stage of
    ``STAGES``, and a rubric with a bin for each of its severities.
    """
    name = f"{type(op).__module__}.{type(op).__qualname__}"
    if op.family not in DEGRADATION_FAMILIES:
        raise ValueError(f"{name}: family {op.family!r} is not one of {DEGRADATION_FAMILIES}")
    if op.stage not in STAGES:
        raise ValueError(f"{name}: stage {op.stage!r} is not one of {STAGES}")
    rubric = getattr(op, "rubric", None)
    if not isinstance(rubric, Rubric) or sorted(rubric.bins) != sorted(op.levels):
        raise ValueError(f"{name}: give the op a Rubric with one bin for each of its severities {op.levels}"
                         " (rubric = Rubric(measured_key, BINS, what, unit))")
    return OPS.register(op, id=op.subtype)


def degradation_subtypes() -> tuple[DegradationSubtype, ...]:
    """The degradation taxonomy as the registered ops state it: family, subtype and what each severity means,
    grouped by family in DESIGN order (``mathstress taxonomy --degradations`` prints it)."""
    ops = sorted(OPS.values(), key=lambda op: (DEGRADATION_FAMILIES.index(op.family), op.subtype))
    return tuple(DegradationSubtype(op.family, op.subtype, op.rubric.describe()) for op in ops)


@dataclass(frozen=True)
class Photo:
    """A degraded page: its pixels, the moved layout, one record per applied op, the camera's
    file when the last op encoded one (``jpeg``: JPEG bytes that decode to ``pixels``), and the
    camera's base layer every photo gets (``functional.lighting.sample_base``): None only for an
    undegraded page (severity 0). The base layer's params follow from the first op's recorded
    params, so replaying the records reproduces it."""

    pixels: np.ndarray
    page: RenderedPage
    records: tuple[DegradationRecord, ...]
    jpeg: bytes | None = None
    base: dict[str, Any] | None = None


def quantile(bounds: tuple[float, float], u: float) -> float:
    """The value at ``u`` (0-1) along ``bounds``: how an op turns one draw of a page into whichever severity's range
    it is sampled at (common random numbers: the same ``u`` at every severity, so severity 3 is severity 1 made
    worse)."""
    return bounds[0] + (bounds[1] - bounds[0]) * u


def check_image(image: np.ndarray) -> None:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        shape = getattr(image, "shape", None)
        raise DegradationError(f"image: degradations take H x W x 3 uint8 RGB images, got shape {shape}"
                               f" and dtype {getattr(image, 'dtype', type(image).__name__)}; convert first"
                               " (cv2.cvtColor with COLOR_GRAY2RGB or COLOR_RGBA2RGB, and floats in 0-1 with"
                               " (image * 255).round().astype(np.uint8))")
    if min(image.shape[:2]) < 16:
        raise DegradationError(f"image: too small to degrade ({image.shape[1]}x{image.shape[0]} px); ops need at"
                               " least 16 px on each side")


def check_page(page: RenderedPage, image: np.ndarray) -> None:
    """The page must describe the image: its size in pixels and a positive dpi (a page of another size put the
    layout in the wrong place, and a zero-sized one divided by zero in a measure)."""
    h, w = image.shape[:2]
    if (page.width, page.height) != (w, h):
        raise DegradationError(f"page: its size {page.width}x{page.height} is not the image's {w}x{h}; describe the "
                               "image itself (perturb.albu.page_for(width, height, dpi))")
    if not page.dpi > 0:
        raise DegradationError(f"page: dpi must be positive, got {page.dpi}")


def get_op(subtype: str) -> Op:
    if subtype not in OPS:
        raise DegradationError(f"unknown degradation {subtype!r}; available: {list(OPS)}")
    return OPS[subtype]


def check_severity(severity: Any) -> None:
    if not isinstance(severity, int) or isinstance(severity, bool) or not 0 <= severity <= 3:
        kind = "" if isinstance(severity, int) or not hasattr(severity, "dtype") else " (a numpy number: pass int(...))"
        raise DegradationError(f"severity must be an integer 0-3, got {severity!r}{kind}")


def check_level(op: Op, severity: int) -> None:
    if severity not in op.levels:
        raise DegradationError(f"{op.subtype} has severities 0 and {', '.join(map(str, op.levels))} in the rubric,"
                               f" got {severity}; list only those for it in degrade.ops / degrade.profiles")


def require_applicable(op: Op, page: RenderedPage) -> None:
    if not op.applies(page):
        raise NotApplicableError(f"{op.subtype} does not apply to this page: it {op.requirement}")


@contextmanager
def replayable(op: Op) -> Iterator[None]:
    """Turn a params dict that lacks a key the op needs (a recording from an older version, a
    hand-written dict) into a named error instead of a KeyError from deep inside the op."""
    try:
        yield
    except KeyError as missing:
        raise DegradationError(f"{op.subtype}: params lack {missing}; replay params recorded by this version"
                               " of mathstress (see the record's versions), or pass an rng to sample new ones")\
            from None


def sample(op: Op, rng: np.random.Generator, severity: int, page: RenderedPage,
           text: PageText | None) -> dict[str, Any]:
    """Sample an op's params, handing the page's words to the ops that write them."""
    if not op.uses_text:
        if op.reads_text:
            return op.sample_params(rng, severity, page, text=text)  # type: ignore[call-arg]
        return op.sample_params(rng, severity, page)
    if text is None:
        raise DegradationError(f"{op.subtype} writes the problem's own words by hand and needs them: pass"
                               " text=perturb.photo.handwritten.page_text(problem, variant) to degrade")
    return op.sample_params(rng, severity, page, text=text)  # type: ignore[call-arg]


def with_reverse(op: Op, params: dict[str, Any], reverse: ReversePage | None) -> dict[str, Any]:
    """Hand the reverse page to an op that shows it; its pixels go under a key that is never recorded."""
    if reverse is None or not op.uses_reverse:
        return params
    check_image(reverse.pixels)
    return {**params, "source": "reverse_page", "reverse_ref": reverse.ref, "_reverse": reverse.pixels}


def strip_private(params: dict[str, Any]) -> dict[str, Any]:
    """Recorded params: everything but the pixel arrays handed in for applying (``_``-prefixed keys)."""
    return {k: v for k, v in params.items() if not k.startswith("_")}
