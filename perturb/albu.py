"""Every photo op and capture profile as an albumentations transform: composable, seeded, serialisable, measured.

One class per registered op, named after its subtype (``Tilt``, ``PaperWarp``, ``Jpeg``...), plus
``PhotoOp(subtype=...)`` and ``CaptureProfile`` for a packaged profile by name or a list of steps::

    import albumentations as A
    from perturb.albu import CaptureProfile, Tilt

    t = A.Compose([A.HorizontalFlip(p=0.5), Tilt(severity=2, p=1.0), CaptureProfile("desk_lamp_tilted", p=1.0)],
                  bbox_params=A.BboxParams(format="pascal_voc", label_fields=["labels"]), seed=7)
    out = t(image=rgb, bboxes=[(40, 60, 300, 90)], labels=["question"])
    out["degradations"]   # one record per applied op: subtype, family, severity, params, measured

Sampling is albumentations': each transform draws from its own ``random_generator`` (seeded by
``A.Compose(seed=...)``), keyed by its subtype so two of our ops in one Compose never share draws.
Applying is ours, unchanged: the op's kernel, its measure, and its way of moving layout boxes
(``bboxes``, ``keypoints``, ``mask`` and our own ``layout`` target move through the op's warp; ops
that only change colours leave them). An image is a page of ``dpi`` dots per inch (default 150),
which is what the ops scale pixel sizes by. Layout-aware ops (question and figure marking) need our
layout boxes, passed as ``layout=[{"kind", "ref", "bbox"}, ...]`` (a manifest row's ``layout``; only our
transforms move it: albumentations' own geometric transforms (a flip, a crop, a resize) leave it where it was,
so put them after ours, or pass the boxes as ``bboxes``);
handwriting ops also need ``page_text`` (``perturb.photo.handwritten.page_text``). Without them
those ops refuse with a ``NotApplicableError`` naming what is missing.
"""

from __future__ import annotations

import os

# Importing albumentations asks pypi.org for a newer version unless this is set; runs and tests are offline.
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

import types  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import replace  # noqa: E402
from functools import cache  # noqa: E402
from typing import Any  # noqa: E402

import albumentations as A  # noqa: E402
import cv2  # noqa: E402
import numpy as np  # noqa: E402
from albumentations.core.bbox_utils import denormalize_bboxes, normalize_bboxes  # noqa: E402
from albumentations.core.transforms_interface import BaseTransformInitSchema  # noqa: E402
from pydantic import Field, StrictInt  # noqa: E402

from perturb.photo import OPS  # noqa: E402
from perturb.photo.base import (  # noqa: E402
    DegradationError,
    PageText,
    Photo,
    check_level,
    get_op,
    require_applicable,
    sample,
)
from perturb.photo.functional.geometric import Warp, chain_maps, compose_forward, moved_page  # noqa: E402
from perturb.photo.profile import Step, capture, degrade_photo, geometry_warps, physical_order  # noqa: E402
from synth.records import Box, DegradationRecord, RenderedPage, from_jsonable, to_jsonable  # noqa: E402
from synth.resources import packaged_configs, resource_dir  # noqa: E402
from synth.seeding import stable_hash  # noqa: E402
from synth.yamlsafe import read_yaml_file  # noqa: E402

DEFAULT_DPI = 150
RECORDS_KEY = "degradations"  # the key of the returned dict (and of the applied params) holding our records
_MAX_SEED = 2**63 - 1


# ------------------------------------------------------------------------- capture profiles by name


@cache
def packaged_profiles() -> dict[str, tuple[Step, ...]]:
    """The capture profiles of the packaged configs by name (``capture_profiles.yaml`` first, then the others)."""
    names = sorted(packaged_configs(), key=lambda n: (n != "capture_profiles", n))
    found: dict[str, tuple[Step, ...]] = {}
    for name in names:
        data = read_yaml_file(resource_dir("configs") / f"{name}.yaml")
        degrade = data.get("degrade") if isinstance(data, dict) else None
        for profile in (degrade or {}).get("profiles") or ():
            steps = tuple((str(s["subtype"]), int(s["severity"])) for s in profile["ops"])
            found.setdefault(str(profile["name"]), steps)
    return found


def named_profile(name: str) -> tuple[Step, ...]:
    """The steps of a packaged capture profile (``desk_lamp_tilted`` -> ``(("background", 1), ...)``)."""
    profiles = packaged_profiles()
    if name not in profiles:
        raise DegradationError(f"unknown capture profile {name!r}; packaged profiles: {sorted(profiles)} "
                               "(or give the steps: CaptureProfile(ops=[('tilt', 1), ('blur', 2)]))")
    return profiles[name]


# ------------------------------------------------------------------------- pages, warps and targets


def page_for(width: int, height: int, dpi: int, layout: Any = None) -> RenderedPage:
    """The page an external image stands for: its size, an assumed dpi, and our layout boxes if given."""
    return RenderedPage(style="photo", font="unknown", paper="unknown", ink="unknown", dpi=dpi,
                        width=width, height=height, layout=layout_boxes(layout))


def layout_boxes(layout: Any) -> tuple[Box, ...]:
    """Manifest-style layout entries (``{"kind", "ref", "bbox": [x0, y0, x1, y1]}``) as Boxes."""
    if layout is None:
        return ()
    boxes = []
    try:
        for entry in layout:
            if isinstance(entry, Box):
                boxes.append(entry)
                continue
            x0, y0, x1, y1 = (float(v) for v in entry["bbox"])
            boxes.append(Box(str(entry["kind"]), str(entry["ref"]), x0, y0, x1, y1))
    except (TypeError, KeyError, ValueError):
        raise DegradationError("layout: give a list of {'kind': str, 'ref': str, 'bbox': [x0, y0, x1, y1]} in"
                               " pixels (a manifest row's layout)") from None
    return tuple(boxes)


def photo_warps(records: Sequence[DegradationRecord], page: RenderedPage) -> list[Warp]:
    """The warps the geometric ops among ``records`` applied, rebuilt from their recorded params, in order (the
    camera's framing included: ``profile.geometry_warps``)."""
    return geometry_warps(records, page)


def _remap_nearest(mask: np.ndarray, warps: Sequence[Warp], page: RenderedPage) -> np.ndarray:
    """A label mask moved through ``warps`` without blending labels (nearest neighbour, 0 off the sheet), in its own
    dtype: OpenCV has no bool or 64-bit remap (a bool mask raised, an int64 one came back int32)."""
    if mask.dtype == bool:
        return _remap_nearest(mask.view(np.uint8), warps, page).astype(bool)
    if mask.dtype.kind in "iu" and mask.dtype.itemsize == 8:
        if mask.size and (int(mask.min()) < -(2**31) or int(mask.max()) >= 2**31):
            raise DegradationError("mask: labels of 64 bits beyond int32's range cannot be moved (OpenCV remaps "
                                   "at most 32-bit integers); renumber them")
        return _remap_nearest(mask.astype(np.int32), warps, page).astype(mask.dtype)
    h, w = mask.shape[:2]
    scale = w / page.width
    out_w, out_h = max(1, round(warps[-1].width * scale)), max(1, round(warps[-1].height * scale))
    if all(wp.matrix is not None for wp in warps):
        m = np.eye(3)
        for wp in warps:
            m = np.asarray(wp.matrix, np.float64) @ m
        to_px = np.diag([scale, scale, 1.0])
        return cv2.warpPerspective(mask, to_px @ m @ np.linalg.inv(to_px), (out_w, out_h), flags=cv2.INTER_NEAREST,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    map_x, map_y = chain_maps(warps, scale, out_w, out_h, (w, h))
    return cv2.remap(mask, map_x, map_y, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def _page_text(value: Any) -> PageText | None:
    if value is None or isinstance(value, PageText):
        return value
    raise DegradationError(f"page_text: give a perturb.photo.base.PageText (perturb.photo.handwritten.page_text), "
                           f"got {type(value).__name__}")


# ------------------------------------------------------------------------- the transforms


class _Photo(A.DualTransform):
    """What every op transform and the profile transform share: applying, recording and moving targets.

    Subclasses sample in ``get_params_dependent_on_data`` and take the photo in ``_photo``.
    """

    dpi: int

    @property
    def targets(self) -> dict[str, Any]:
        return {**super().targets, "layout": self.apply_to_layout, "page_text": self.apply_to_page_text}

    def _photo(self, image: np.ndarray, params: dict[str, Any], text: PageText | None) -> Photo:
        raise NotImplementedError

    def _page(self, params: dict[str, Any], data: dict[str, Any]) -> RenderedPage:
        if "image" not in data:
            raise DegradationError(f"{type(self).__name__} takes one page as image=...; batches (images=...) are "
                                   "not supported: call the transform once per image")
        h, w = params["shape"][:2]
        return page_for(int(w), int(h), self.dpi, data.get("layout"))

    def _rng(self, key: str) -> np.random.Generator:
        # One draw from albumentations' generator, keyed by the op: two of our transforms in one Compose
        # get the same seed from it, and must not make the same draws from that seed.
        base = int(self.random_generator.integers(_MAX_SEED))
        return np.random.default_rng(np.random.SeedSequence(base, spawn_key=(stable_hash(key),)))

    def __call__(self, *args: Any, force_apply: bool = False, **kwargs: Any) -> Any:
        # ``degradations`` is in the result whether or not the op fired (p < 1): it was missing half the time.
        result = super().__call__(*args, force_apply=force_apply, **kwargs)
        if isinstance(result, dict) and RECORDS_KEY not in result:
            result[RECORDS_KEY] = list(kwargs.get(RECORDS_KEY) or ())
        return result

    def apply_with_params(self, params: dict[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        # The image first, whatever order the caller's keywords come in: the targets move as the photo says.
        if kwargs.get("image") is None:
            raise DegradationError(f"{type(self).__name__} needs the page as image=...")
        # The params albumentations keeps (``applied_transforms``, ``get_applied_params``, ReplayCompose) are plain
        # JSON values: the page is rebuilt from them here, and the handwriting's text is the call's own target.
        page = from_jsonable(RenderedPage, params["page"])
        photo = self._photo(kwargs["image"], {**params, "page": page}, _page_text(kwargs.get("page_text")))
        records = [to_jsonable(r) for r in photo.records]
        params[RECORDS_KEY] = records  # seen by A.Compose(save_applied_params=True) and get_applied_params()
        result = super().apply_with_params({**params, "page": page, "photo": photo}, *args, **kwargs)
        result[RECORDS_KEY] = [*(kwargs.get(RECORDS_KEY) or ()), *records]
        return result

    def apply(self, img: np.ndarray, photo: Photo, **params: Any) -> np.ndarray:
        return photo.pixels

    def apply_to_mask(self, mask: np.ndarray, photo: Photo, page: RenderedPage, **params: Any) -> np.ndarray:
        warps = photo_warps(photo.records, page)
        return _remap_nearest(mask, warps, page) if warps else mask

    def apply_to_bboxes(self, bboxes: np.ndarray, photo: Photo, page: RenderedPage, **params: Any) -> np.ndarray:
        warps = photo_warps(photo.records, page)
        if not warps or not len(bboxes):
            return bboxes
        boxes = denormalize_bboxes(bboxes[:, :4], (page.height, page.width))
        held = replace(page, layout=tuple(Box("bbox", str(i), *b) for i, b in enumerate(boxes.tolist())))
        moved = moved_page(held, warps)  # hull of each box's mapped outline, as our layout boxes move
        out = bboxes.copy()
        out[:, :4] = normalize_bboxes(np.array([[b.x0, b.y0, b.x1, b.y1] for b in moved.layout]),
                                      (moved.height, moved.width))
        return out

    def apply_to_keypoints(self, keypoints: np.ndarray, photo: Photo, page: RenderedPage,
                           **params: Any) -> np.ndarray:
        warps = photo_warps(photo.records, page)
        if not warps or not len(keypoints):
            return keypoints
        forward = compose_forward(warps)
        xy = keypoints[:, :2].astype(np.float64)
        out = keypoints.copy()
        out[:, :2] = forward(xy)
        if keypoints.shape[1] >= 5:  # albumentations' own columns: x, y, z, angle (radians, y down), scale
            # The map's Jacobian at each point (central differences, half a pixel): a keypoint's direction turns
            # as the sheet turns there, and its scale grows as the sheet's area does (a bent sheet's differ).
            step = np.array([[0.5, 0.0]]), np.array([[0.0, 0.5]])
            d_x, d_y = ((forward(xy + e) - forward(xy - e)) for e in step)
            angle = keypoints[:, 3].astype(np.float64)
            turned = d_x * np.cos(angle)[:, None] + d_y * np.sin(angle)[:, None]
            out[:, 3] = np.mod(np.arctan2(turned[:, 1], turned[:, 0]), 2 * np.pi)
            out[:, 4] = keypoints[:, 4] * np.sqrt(np.abs(d_x[:, 0] * d_y[:, 1] - d_x[:, 1] * d_y[:, 0]))
        return out

    def apply_to_layout(self, layout: Any, photo: Photo, **params: Any) -> list[dict[str, Any]]:
        return [{"kind": b.kind, "ref": b.ref, "bbox": [round(b.x0, 2), round(b.y0, 2), round(b.x1, 2), round(b.y1, 2)]}
                for b in photo.page.layout]

    def apply_to_page_text(self, page_text: Any, **params: Any) -> Any:
        return page_text


class PhotoOp(_Photo):
    """One photo op at one severity (or a severity drawn from a range each call), by subtype id.

    ``PhotoOp(subtype="tilt", severity=2)`` is ``Tilt(severity=2)``; ``severity=(1, 3)`` draws one of the
    op's severities 1-3 per call. Severity 0 is the identity (still recorded).
    """

    subtype: str

    class InitSchema(BaseTransformInitSchema):
        subtype: str
        severity: StrictInt | tuple[StrictInt, StrictInt] = 1  # True and "2" were taken as 1 and 2
        dpi: StrictInt = Field(default=DEFAULT_DPI, ge=30, le=1200)

    def __init__(self, subtype: str, severity: int | tuple[int, int] = 1, dpi: int = DEFAULT_DPI, p: float = 0.5):
        super().__init__(p=p)
        get_op(subtype)
        self.subtype = subtype
        self.severity = severity
        self.dpi = dpi
        self._levels = _levels(subtype, severity)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("subtype", "severity", "dpi")

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        page = self._page(params, data)
        rng = self._rng(self.subtype)
        levels = self._levels
        severity = levels[0] if len(levels) == 1 else int(levels[int(rng.integers(len(levels)))])
        if severity == 0:
            return {"page": to_jsonable(page), "severity": 0, "op_params": {}}
        op = get_op(self.subtype)
        require_applicable(op, page)
        return {"page": to_jsonable(page), "severity": severity,
                "op_params": to_jsonable(sample(op, rng, severity, page, _page_text(data.get("page_text"))))}

    def _photo(self, image: np.ndarray, params: dict[str, Any], text: PageText | None) -> Photo:
        return degrade_photo(image, params["page"], self.subtype, params["severity"], None,  # type: ignore[arg-type]
                             params=params["op_params"])


def _levels(subtype: str, severity: Any) -> tuple[int, ...]:
    """The severities a transform may apply: one, or every level of the op within an inclusive range."""
    op = get_op(subtype)
    if isinstance(severity, (tuple, list)):
        lo, hi = (int(v) for v in severity)
        if not 0 <= lo <= hi <= 3:
            raise DegradationError(f"{subtype}: severity range must be (lo, hi) with 0 <= lo <= hi <= 3, "
                                   f"got {tuple(severity)}")
        levels = tuple(s for s in (0, *op.levels) if lo <= s <= hi)
        if not levels:
            raise DegradationError(f"{subtype} has severities 0 and {op.levels}; none lies in {lo}-{hi}")
        return levels
    if not isinstance(severity, int) or isinstance(severity, bool) or not 0 <= severity <= 3:
        raise DegradationError(f"{subtype}: severity must be an integer 0-3 or a range (lo, hi), got {severity!r}")
    if severity:
        check_level(op, severity)
    return (severity,)


class _OpTransform(PhotoOp):
    """Base of the per-op classes: the subtype is the class's, the rest as ``PhotoOp``."""

    class InitSchema(BaseTransformInitSchema):
        severity: StrictInt | tuple[StrictInt, StrictInt] = 1  # True and "2" were taken as 1 and 2
        dpi: StrictInt = Field(default=DEFAULT_DPI, ge=30, le=1200)

    def __init__(self, severity: int | tuple[int, int] = 1, dpi: int = DEFAULT_DPI, p: float = 0.5):
        super().__init__(type(self).subtype, severity, dpi, p)

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("severity", "dpi")


class CaptureProfile(_Photo):
    """Several ops in one photo, in physical order with geometry fused (``perturb.photo.profile.capture``).

    ``CaptureProfile("desk_lamp_tilted")`` takes a packaged profile; ``CaptureProfile(ops=[("tilt", 1),
    ("blur", 2)])`` any list of (subtype, severity). Each call draws one seed from albumentations'
    generator and the profile samples every op from it (recorded per op, replayable).
    """

    class InitSchema(BaseTransformInitSchema):
        name: str | None = None
        ops: list[tuple[str, StrictInt]] | None = None
        dpi: StrictInt = Field(default=DEFAULT_DPI, ge=30, le=1200)

    def __init__(self, name: str | None = None, ops: Sequence[tuple[str, int]] | None = None,
                 dpi: int = DEFAULT_DPI, p: float = 0.5):
        super().__init__(p=p)
        if ops is None:
            if name is None:
                raise DegradationError("CaptureProfile needs a packaged profile name or ops=[(subtype, severity), ...]")
            ops = named_profile(name)
        steps = [(str(s), int(v)) for s, v in ops]
        physical_order(steps)  # unknown ops, bad severities and repeats are refused here, not at the first call
        self.name = name or "custom"
        self.ops = [list(s) for s in steps]
        self.dpi = dpi

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("name", "ops", "dpi")

    def get_params_dependent_on_data(self, params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        page = self._page(params, data)
        for subtype, severity in self.ops:
            if severity:
                require_applicable(get_op(subtype), page)
        _page_text(data.get("page_text"))  # a wrong kind of page_text is refused before anything is drawn
        seed = int(self._rng(f"profile:{self.name}").integers(_MAX_SEED))
        return {"page": to_jsonable(page), "seed": seed}

    def _photo(self, image: np.ndarray, params: dict[str, Any], text: PageText | None) -> Photo:
        return capture(image, params["page"], [tuple(s) for s in self.ops], np.random.default_rng(params["seed"]),
                       text=text)


def class_name(subtype: str) -> str:
    """The transform class of an op: ``paper_warp`` -> ``PaperWarp``."""
    return "".join(part.capitalize() for part in subtype.split("_"))


def _op_class(subtype: str) -> type[PhotoOp]:
    op = get_op(subtype)
    name = class_name(subtype)
    doc = (f"``{subtype}`` ({op.family}) as an albumentations transform: ``{name}(severity=1, dpi=150, p=0.5)``; "
           f"severity levels {op.levels} graded by {op.rubric.describe()}.")

    def body(ns: dict[str, Any]) -> None:
        ns.update({"subtype": subtype, "__module__": __name__, "__qualname__": name, "__doc__": doc})

    return types.new_class(name, (_OpTransform,), exec_body=body)


# One class per registered op, derived from the registry (a new op module gets its transform for free).
TRANSFORMS: dict[str, type[PhotoOp]] = {subtype: _op_class(subtype) for subtype in OPS}
globals().update({class_name(s): cls for s, cls in TRANSFORMS.items()})

__all__ = ["RECORDS_KEY", "TRANSFORMS", "CaptureProfile", "PhotoOp", "named_profile", "packaged_profiles", "page_for",
           "photo_warps", *sorted(class_name(s) for s in TRANSFORMS)]
