"""Frozen records that flow between pipeline stages, with lossless JSON round-trip."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

QuestionType = Literal["free", "mcq", "fill"]
ImageRole = Literal["required", "useful", "not_required", "insufficient"]
VariantKind = Literal["clean", "error", "superficial"]


@dataclass(frozen=True)
class Given:
    """A quantity the problem states, and where it lives (``text`` or ``figure:<element id>``)."""

    name: str
    value: str
    source: str = "text"
    unit: str = ""


@dataclass(frozen=True)
class Step:
    """One solution step: a machine-checkable value, the rule that produced it and how it reads.

    ``value`` is written in the safe parser's grammar (see ``synth.mathparse``); ``text`` and
    ``latex`` are rendered from the family's display template, never from SymPy's printer.

    ``math`` is the step's mathematical claim in plain syntax (what the verifier parses; empty means
    ``text`` is the claim). ``spans`` are half-open ``[start, end)`` character spans of the math
    fragments inside ``text``; the words between them are prose. An empty ``spans`` means the whole
    ``text`` is math (the ``worked`` style, and records written before solution styles existed).
    ``latex`` is the LaTeX of the whole claim.
    """

    index: int
    rule: str
    value: str
    text: str
    latex: str
    inputs: tuple[str, ...] = ()
    math: str = ""
    spans: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Figure:
    kind: str
    spec: dict[str, Any]


@dataclass(frozen=True)
class Problem:
    id: str
    family: str
    domain: str
    subdomain: str
    grade_band: str
    difficulty: str
    question_type: QuestionType
    image_role: ImageRole
    question_text: str
    question_latex: str
    answer_text: str
    answer_latex: str
    answer_value: str
    steps: tuple[Step, ...]
    givens: tuple[Given, ...] = ()
    choices: tuple[str, ...] | None = None
    figure: Figure | None = None
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorLabel:
    family: str
    subtype: str
    first_error_step: int
    error_steps: tuple[int, ...]
    propagated: bool
    answer_changed: bool
    shown_answer: str
    explanation: str
    injector: str
    edit: dict[str, Any]
    projections: dict[str, str | None]
    # The shown answer is right as asked (number, unit and requested form); ``answer_changed`` is the number only.
    answer_correct: bool = False


@dataclass(frozen=True)
class Control:
    subtype: str
    injector: str
    edit: dict[str, Any]


@dataclass(frozen=True)
class Variant:
    """The solution as shown: clean, with verified errors, or a superficial no-error edit.

    ``error`` is the error that comes first in the solution; ``errors`` holds any others
    (``inject.errors_per_variant`` above 1), in the order of their first wrong step.
    """

    kind: VariantKind
    steps: tuple[Step, ...]
    shown_answer: str
    is_correct: bool
    error: ErrorLabel | None = None
    control: Control | None = None
    errors: tuple[ErrorLabel, ...] = ()


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in page pixels; ``kind`` says what it holds, ``ref`` which one."""

    kind: str
    ref: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class RenderedPage:
    style: str
    font: str
    paper: str
    ink: str
    dpi: int
    width: int
    height: int
    layout: tuple[Box, ...] = ()
    neatness: int | None = None  # the writer's 1 neat / 2 irregular / 3 messy; None for printed pages
    show_solution: bool = True  # False: question, figure and empty working space only (render.show_solution)
    handwritten_question: bool = False  # the question too is written by the page's writer


@dataclass(frozen=True)
class DegradationRecord:
    subtype: str
    family: str
    severity: int
    params: dict[str, Any]
    measured: dict[str, Any]


@dataclass(frozen=True)
class Item:
    """One manifest row: a problem, the solution as shown, how it was drawn and degraded."""

    id: str
    base_id: str
    index: int
    seed: int
    problem: Problem
    variant: Variant
    render: RenderedPage | None = None
    degradations: tuple[DegradationRecord, ...] = ()
    image: str | None = None
    clean_image: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    profile: str | None = None  # the capture profile (degrade.profiles name) that took this photo, if any
    # A photo's links (None on an unphotographed item): the item whose page it shows, and the clean control's
    # photo under the same capture and sampled params (None on a photo of the clean control itself).
    source_id: str | None = None
    capture_twin: str | None = None
    solution_style: str = "worked"  # synth.chains style the steps are written in (same for every variant of a base)


# ---------------------------------------------------------------- JSON round-trip


def to_jsonable(record: Any) -> Any:
    """Records to plain JSON values (tuples become lists); keys keep declaration order."""
    if dataclasses.is_dataclass(record):
        return {f.name: to_jsonable(getattr(record, f.name)) for f in dataclasses.fields(record)}
    if isinstance(record, (list, tuple)):
        return [to_jsonable(v) for v in record]
    if isinstance(record, dict):
        return {str(k): to_jsonable(v) for k, v in record.items()}
    return record


def from_jsonable(cls: type, data: Any) -> Any:
    """Rebuild a record of type ``cls`` from :func:`to_jsonable` output."""
    return _build(cls, data)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _build(tp: Any, data: Any) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any or data is None:
        return data
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return _build(options[0], data) if len(options) == 1 else data
    if origin is Literal:
        return data
    if origin is tuple:
        (inner, *_rest) = typing.get_args(tp)
        return tuple(_build(inner, v) for v in data)
    if origin is dict:
        return dict(data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        known = {f.name for f in dataclasses.fields(tp)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"{tp.__name__} has no field(s) {sorted(unknown)}")
        return tp(**{k: _build(hints[k], v) for k, v in data.items()})
    return data


def dumps(record: Any) -> str:
    """Compact, key-order-stable JSON (the byte-identical-output contract relies on it)."""
    return json.dumps(to_jsonable(record), ensure_ascii=False, separators=(",", ":"))


def loads(cls: type, text: str) -> Any:
    return from_jsonable(cls, json.loads(text))
