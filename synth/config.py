"""Run configuration: YAML validated by pydantic, with errors that name the field and the fix."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from perturb.photo import REGISTRY as PHOTO_OPS
from perturb.reasoning import REGISTRY as INJECTORS
from synth.chains import STYLES
from synth.errors import ConfigError
from synth.generators import REGISTRY as FAMILIES
from synth.resources import packaged_config
from synth.taxonomy import RETIRED
from synth.yamlsafe import preview, read_yaml_file

Severity = Annotated[int, Field(ge=0, le=3)]
Weight = Annotated[float, Field(gt=0, le=1e6)]
Difficulty = Literal["easy", "medium", "hard"]
QuestionType = Literal["free", "mcq", "fill"]
ImageRole = Literal["required", "useful", "not_required", "insufficient"]


class _Strict(BaseModel):
    # strict: no coercion. Counts are ints (not true, 2.0 or "2"), weights are int or float numbers (not
    # "1.0" or true), flags are true/false (not 1 or "yes"), text is text.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ParaphraseConfig(_Strict):
    """generate.paraphrase: reword student / cot chains with a language model (synth.paraphrase); off unless given.

    The key is read from the environment variable ``api_key_env`` when the stage runs, never from the config.
    """

    model: str = Field(min_length=1, max_length=200)
    base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")   # a local server (vLLM, Ollama ...)
    api_key_env: str = Field(default="OPENAI_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
    styles: list[str] = Field(default_factory=lambda: ["student", "cot"], min_length=1)
    share: float = Field(default=1.0, ge=0, le=1)   # of the bases written in those styles, drawn per base
    temperature: float = Field(default=0.0, ge=0, le=2)
    seed: int | None = Field(default=None, ge=0, lt=2**31)
    max_retries: int = Field(default=4, ge=0, le=20)   # the openai client's own (429, 5xx, dropped connections)
    timeout: float = Field(default=60.0, gt=0, le=3600)   # seconds the endpoint may stay silent, per attempt
    max_tokens: int = Field(default=2048, ge=64, le=32768)

    @field_validator("styles")
    @classmethod
    def _worded_styles(cls, value: list[str]) -> list[str]:
        bad = [s for s in value if s not in STYLES or s == "worked"]
        if bad:
            raise ValueError(f"cannot paraphrase {preview(bad)}: list worded styles from "
                             f"{sorted(s for s in STYLES if s != 'worked')} (worked lines have no words to reword)")
        return value


class GenerateConfig(_Strict):
    families: dict[str, Weight] = Field(min_length=1)
    # A list is drawn uniformly; a mapping gives weights (shares, with allocation: quota).
    difficulties: (Annotated[list[Difficulty], Field(min_length=1)]
                   | Annotated[dict[Difficulty, Weight], Field(min_length=1)]) = ["easy", "medium", "hard"]
    question_types: (Annotated[list[QuestionType], Field(min_length=1)]
                     | Annotated[dict[QuestionType, Weight], Field(min_length=1)]) = ["free"]
    # quota (default): the run is planned so the shares of families, difficulties, question types and
    # subtypes (and image_roles', and degrade.per_base's) are exact (synth/allocation.py); a subtype is then only
    # given to families it applies to. weighted: each base draws them independently, so subtypes that fit few
    # families come out far under their weight (issue 18: 9 variable_rename against 246 at equal weights).
    allocation: Literal["weighted", "quota"] = "quota"
    image_roles: Annotated[dict[ImageRole, Weight], Field(min_length=1)] | None = None
    # How solutions are written (synth.chains): one style, or styles by weight, drawn per base problem
    # (a base's clean control and variants share it): worked lines, a student's answer, a model's chain.
    solution_style: str | Annotated[dict[str, Weight], Field(min_length=1)] = "worked"
    # student / cot: where a base's conceptual error applies its mistaken method, every chain of the base says the
    # method it uses there in words (the twin the right one, the error variant the wrong one, in the same frame:
    # synth.generators._method_words; synth.chains). false: those lines are written like any other.
    concepts_in_words: bool = True
    # Reword student / cot chains with a language model, kept only when every claim and label survives
    # (synth.paraphrase); None (the default) is left out of the resolved config, so older run folders still resume.
    paraphrase: ParaphraseConfig | None = None

    @model_serializer(mode="wrap")
    def _without_paraphrase_off(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if self.paraphrase is None:
            data.pop("paraphrase", None)
        return data

    @field_validator("solution_style")
    @classmethod
    def _known_styles(cls, value: str | dict[str, float]) -> str | dict[str, float]:
        unknown = [s for s in ([value] if isinstance(value, str) else value) if s not in STYLES]
        if unknown:
            raise ValueError(f"unknown solution style(s) {preview(unknown)}; choose from {sorted(STYLES)}: one name"
                             " (solution_style: student) or names with weights ({worked: 1, student: 1, cot: 1})")
        return value

    @field_validator("families")
    @classmethod
    def _known_families(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = [f for f in value if f not in FAMILIES]
        if unknown:
            raise ValueError(f"unknown family id(s) {preview(unknown)}{FAMILIES.near(unknown[0])} "
                             f"(`mathstress taxonomy --families` lists the {len(FAMILIES)} known ones)")
        return value

    @model_validator(mode="after")
    def _question_types_offered(self) -> GenerateConfig:
        if self.image_roles is not None and self.allocation != "quota":
            raise ValueError("image_roles needs allocation: quota (roles are sampled by each family otherwise);"
                             " set generate.allocation: quota or remove generate.image_roles")
        for qtype in self.question_types:
            lacking = [f for f in self.families if qtype not in FAMILIES[f].question_types]
            if self.allocation == "quota" and len(lacking) < len(self.families):
                continue  # quota plans give each question type only to families that offer it
            if lacking:
                offered = {f: list(FAMILIES[f].question_types) for f in lacking}
                raise ValueError(f"question type {qtype!r} is not offered by {offered}; remove it from"
                                 " generate.question_types or choose other families")
        return self


class InjectConfig(_Strict):
    variants_per_base: int = Field(default=1, ge=0, le=50)
    subtypes: dict[str, Weight] = Field(default_factory=lambda: {"intermediate_propagated": 1.0})
    # a step number: no family's solution is longer than a few dozen lines (10**29 was taken, and no variant made)
    placement: Literal["any", "early", "middle", "late"] | Annotated[int, Field(ge=1, le=100)] = "any"
    max_attempts: int = Field(default=8, ge=1, le=100)
    # false: the student carries on from the correct value after the wrong line (conceptual, copy,
    # unit and visual errors; computational slips choose this through intermediate_corrected).
    propagate: bool = True
    # Errors in one shown solution: the first of any subtype, the others notational or presentation
    # errors stacked on its lines (perturb.reasoning.multi); the manifest lists them in `errors`.
    errors_per_variant: int = Field(default=1, ge=1, le=4)

    @field_validator("subtypes")
    @classmethod
    def _known_subtypes(cls, value: dict[str, float]) -> dict[str, float]:
        if not value:
            raise ValueError("is empty, so no variant could be given an error or a superficial change; to make"
                             " clean controls only, set inject.variants_per_base: 0 and leave subtypes out;"
                             " otherwise list at least one subtype with its weight")
        unknown = [s for s in value if s not in INJECTORS]
        retired = [f"{s}: {RETIRED[s]}" for s in unknown if s in RETIRED]
        if retired:
            raise ValueError(f"{'; '.join(retired)}; remove it from inject.subtypes")
        if unknown:
            raise ValueError(
                f"unknown or not yet available error subtype(s) {preview(unknown)}; available: {sorted(INJECTORS)}"
            )
        return value

    @model_validator(mode="after")
    def _something_to_stack(self) -> InjectConfig:
        if self.errors_per_variant > 1 and not any(INJECTORS[s].edits_text for s in self.subtypes):
            stackable = sorted(s for s, inj in INJECTORS.items() if inj.edits_text)
            raise ValueError(f"errors_per_variant: {self.errors_per_variant} stacks notational or presentation errors"
                             f" on the first one, but inject.subtypes has none; add one of {stackable} or set"
                             " errors_per_variant: 1")
        return self


Neatness = Annotated[int, Field(ge=1, le=3)]
WriterFont = Literal["kalam", "caveat", "indie_flower", "shadows_into_light"]


class RenderConfig(_Strict):
    enabled: bool = True
    # mixed: each base problem (with all its variants) is handwritten with probability handwritten_share
    style: Literal["printed", "handwritten", "mixed"] = "printed"
    handwritten_share: float | None = Field(default=None, ge=0, le=1)
    neatness: Neatness | list[Neatness] = 1  # 1 neat, 2 irregular, 3 messy (MathReal); a list is sampled
    writers: list[WriterFont] = Field(default=["kalam", "caveat", "indie_flower", "shadows_into_light"],
                                      min_length=1)
    paper: Literal["plain", "lined", "grid", "exam"] = "plain"
    page: Literal["a4", "phone"] = "a4"
    dpi: int = Field(default=100, ge=50, le=600)
    # false: question (and figure) over blank working space and an empty answer area, no steps: the
    # photo MathReal and Seeing Is Solving take. Error variants need shown steps (see RunConfig).
    show_solution: bool = True
    # handwritten pages: the writer copies the question out by hand too (printed pages keep it printed)
    handwritten_question: bool = False

    @field_validator("neatness")
    @classmethod
    def _neatness_listed(cls, value: int | list[int]) -> int | list[int]:
        if isinstance(value, list) and not value:
            raise ValueError("give at least one neatness level (1 neat, 2 irregular, 3 messy)")
        return value

    @model_validator(mode="after")
    def _share_needs_mixed(self) -> RenderConfig:
        if self.handwritten_share is not None and self.style != "mixed":
            raise ValueError(f"handwritten_share only applies with style: mixed (style is {self.style!r});"
                             " remove it or set render.style: mixed")
        if self.handwritten_question and self.style == "printed":
            raise ValueError("handwritten_question needs a writer: set render.style: handwritten or mixed, or"
                             " remove handwritten_question")
        return self


def _known_degradation(value: str) -> str:
    if value not in PHOTO_OPS:
        raise ValueError(f"unknown degradation {preview(value)}; available: {sorted(PHOTO_OPS)}")
    return value


def _twice(values: list[Any]) -> list[Any]:
    """The values a list holds more than once, sorted."""
    return sorted({v for v in values if values.count(v) > 1})


class DegradeOp(_Strict):
    subtype: str
    severities: list[Severity] = Field(default=[1, 2, 3], min_length=1)
    # With degrade.per_base (quota runs): this op's share of degraded photos, split equally over its severities.
    weight: Weight = 1.0

    _known_op = field_validator("subtype")(_known_degradation)

    @field_validator("severities")
    @classmethod
    def _each_severity_once(cls, value: list[int]) -> list[int]:
        # [2, 2] made two byte-identical photos counted as two items, doubling one condition in every statistic.
        twice = _twice(value)
        if twice:
            raise ValueError(f"severity {twice[0]} is listed twice; list each severity once, e.g. [1, 2, 3]")
        return value


class ProfileStep(_Strict):
    subtype: str
    severity: Annotated[int, Field(ge=1, le=3)]

    _known_op = field_validator("subtype")(_known_degradation)


class CaptureProfile(_Strict):
    """Several ops applied together to one photo, in physical order (one degraded item per base)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]{0,47}$")
    ops: list[ProfileStep] = Field(min_length=1)

    @model_validator(mode="after")
    def _each_op_once(self) -> CaptureProfile:
        twice = _twice([s.subtype for s in self.ops])
        if twice:
            raise ValueError(f"profile {self.name!r} lists {twice} more than once; give each op once with one"
                             " severity")
        return self


class DegradeConfig(_Strict):
    ops: list[DegradeOp] = Field(default_factory=list)
    profiles: list[CaptureProfile] = Field(default_factory=list)
    # None: every base gets every op x severity. N (generate.allocation: quota): each base gets N of
    # them, with exact shares by op weight (a MathReal-like mix instead of a full sweep).
    per_base: int | None = Field(default=None, ge=1, le=1000)
    # Which contents are photographed, each under the same ops, severities and profiles with the same sampled
    # params as its base's clean page: capture condition and content are two crossed factors.
    apply_to: list[Literal["clean", "error", "superficial"]] = Field(
        default_factory=lambda: ["clean", "error", "superficial"], min_length=1)

    @field_validator("apply_to")
    @classmethod
    def _each_kind_once(cls, kinds: list[str]) -> list[str]:
        twice = _twice(kinds)
        if twice:
            raise ValueError(f"lists {twice} more than once; give each kind once")
        if "clean" not in kinds:
            raise ValueError("must include clean: a photographed variant is paired with its clean control's photo"
                             " under the same capture (its capture_twin); add clean")
        return kinds

    @model_validator(mode="after")
    def _unique_profile_names(self) -> DegradeConfig:
        names = [p.name for p in self.profiles]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"degrade.profiles names {twice} more than once; profile names must be unique")
        return self


class OutputConfig(_Strict):
    root: str = Field(default="outputs", min_length=1, max_length=4096)
    shard_size: int = Field(default=8, ge=1, le=100_000)

    @field_validator("root")
    @classmethod
    def _plain_path(cls, value: str) -> str:
        # a NUL crashed the run, a newline made a folder with one in its name
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError("a folder path without control characters (NUL, newline, tab); write the path plainly")
        return value


class RunConfig(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    seed: int = Field(ge=0, lt=2**63)
    count: int = Field(ge=1, le=10_000_000, description="number of base problems")
    # ``generate --limit N``: make only the first N bases of the run ``count`` plans, so they are the same items (ids,
    # labels, pixels) as in the whole run; written to config.yaml only when set
    limit: int | None = Field(default=None, ge=1, le=10_000_000)
    generate: GenerateConfig
    inject: InjectConfig = InjectConfig()
    render: RenderConfig = RenderConfig()
    degrade: DegradeConfig = DegradeConfig()
    output: OutputConfig = OutputConfig()

    @model_validator(mode="after")
    def _quota_settings(self) -> RunConfig:
        if self.degrade.per_base is not None:
            if self.generate.allocation != "quota":
                raise ValueError("degrade.per_base needs generate.allocation: quota; set it or remove per_base")
            pairs = sum(len(op.severities) for op in self.degrade.ops)
            if self.degrade.per_base > pairs:
                raise ValueError(f"degrade.per_base is {self.degrade.per_base} but degrade.ops lists only {pairs}"
                                 " op x severity pairs; lower per_base or add ops")
        return self

    @model_validator(mode="after")
    def _degrade_needs_render(self) -> RunConfig:
        if (self.degrade.ops or self.degrade.profiles) and not self.render.enabled:
            raise ValueError("degrade.ops and degrade.profiles need render.enabled: true (degradations act on"
                             " images)")
        if not self.render.show_solution and self.inject.variants_per_base > 0:
            raise ValueError(f"render.show_solution: false draws no steps, so the {self.inject.variants_per_base}"
                             " error variant(s) per base would look exactly like their clean control; set"
                             " inject.variants_per_base: 0 for question-only pages, or show_solution: true")
        return self

    @property
    def bases(self) -> int:
        """How many base problems the run makes: ``count``, or the first ``limit`` of them."""
        return self.count if self.limit is None else min(self.limit, self.count)

    def to_yaml(self) -> str:
        data = self.model_dump(mode="json")
        if data["limit"] is None:
            del data["limit"]  # the config.yaml of a whole run reads as before
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


# What to write instead when strict validation refuses a coercible value ("2", 2.0, true, 1).
_TYPE_HINTS = {
    "int_type": "write a whole number without quotes or a decimal point, e.g. 3",
    "float_type": "write a number without quotes, e.g. 0.5 or 1",
    "bool_type": "write true or false, without quotes",
    "string_type": "write text; quote it if it looks like a number or true/false, e.g. '2024'",
}
_MAX_LISTED = 20


def _describe(err: dict[str, Any]) -> str:
    path = ".".join(preview(p) if isinstance(p, str) and len(p) > 60 else str(p) for p in err["loc"]) or "(top level)"
    kind = err["type"]
    shown = preview(err.get("input"))
    if kind == "extra_forbidden":
        return f"{path}: unknown key (given {shown}); remove it or check its spelling"
    if kind == "missing":
        return f"{path}: required field is missing; add it"
    msg = re.sub(r"^Value error, ", "", err["msg"])
    hint = f"; {_TYPE_HINTS[kind]}" if kind in _TYPE_HINTS else ""
    return f"{path}: {msg} (given {shown}){hint}"


def validate_config(data: Any, *, source: str = "config") -> RunConfig:
    """Validate a parsed YAML mapping; raise ConfigError listing every bad field (the first 20)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys, got {type(data).__name__}")
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        lines = [_describe(e) for e in errors[:_MAX_LISTED]]
        if len(errors) > _MAX_LISTED:
            lines.append(f"... and {len(errors) - _MAX_LISTED:,} more")
        raise ConfigError(f"{source} is invalid:\n  " + "\n  ".join(lines)) from None


def load_config(path_or_name: str | Path) -> RunConfig:
    """Load a YAML config from a path, or a packaged config by name (``quickstart``)."""
    path = Path(path_or_name)
    if not path.exists():
        packaged = packaged_config(str(path_or_name))
        if packaged is None:
            raise ConfigError(
                f"config file {str(path_or_name)!r} does not exist; pass a YAML path or a packaged"
                " config name (`mathstress configs` lists them)"
            )
        path = packaged
    if path.is_dir():
        # `mathstress generate quickstart` from a folder holding a quickstart/ (the run's own default --out root is
        # outputs/, but a user's folder can be named so): the packaged config is meant
        packaged = packaged_config(str(path_or_name)) if Path(path_or_name).name == str(path_or_name) else None
        if packaged is None:
            raise ConfigError(f"config {str(path)!r} is a folder; pass a YAML file")
        path = packaged
    return validate_config(read_yaml_file(path), source=str(path))
