"""Our photo ops as a plugin for ../shared/bench/degrade_anchors.py, timed side by side with the anchors.

    PYTHONPATH=. python ../shared/bench/degrade_anchors.py --libs floor,albumentations,mathstress \
        --plugin mathstress=benchmarks.anchor_ops:ops --ops pipeline_phone

(`benchmarks/anchors.py` runs exactly that and writes results_anchors.md.) The anchor page is a
synthetic A4 page at 150 dpi with no layout, so the plugin finds its text lines from the ink once
and hands our ops a ``RenderedPage`` with those boxes: the ops that measure against the layout
(shadow coverage of text, text under glare) sample as they would on a page we rendered. Every call
samples, applies and measures, as the pipeline does.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from perturb.photo import degrade
from perturb.photo.profile import degrade_profile
from synth.memory import keep_image_buffers
from synth.records import Box, RenderedPage
from synth.stages import one_opencv_thread

# The phone chain of the issue (tilt + keystone + warp + shadow + glare + exposure + motion blur + noise
# + jpeg), each at severity 1, the anchors' own "phone photo" settings being mild too.
PHONE_CHAIN = (("tilt", 1), ("keystone", 1), ("paper_warp", 1), ("shadow", 1), ("glare", 1), ("exposure", 1),
               ("blur", 1), ("noise", 1), ("jpeg", 1))

# anchor op name -> (our subtype, severity)
SINGLE = {
    "gaussian_blur": ("blur", 1), "exposure": ("exposure", 1), "shadow": ("shadow", 2), "glare": ("glare", 2),
    "tilt_rotate": ("tilt", 1), "rot90": ("rotation", 1), "perspective": ("keystone", 1),
    "paper_warp": ("paper_warp", 2), "jpeg": ("jpeg", 1), "noise": ("noise", 1), "markings": ("question_marking", 1),
}


def _runs(mask: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """(first, last) index of each run of True, runs closer than ``gap`` merged."""
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return []
    cuts = np.flatnonzero(np.diff(idx) > gap)
    return list(zip(np.r_[idx[0], idx[cuts + 1]].tolist(), np.r_[idx[cuts], idx[-1]].tolist(), strict=True))


def layout_from_ink(image: np.ndarray) -> tuple[Box, ...]:
    """Boxes around the page's lines of ink (bands of rows with dark pixels) and, in the upper half (the
    questions), around its words, so the marking ops find tokens to underline, circle or strike."""
    dark = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) < 160
    boxes, token = [], 0
    for k, (a, b) in enumerate(_runs(dark.any(axis=1), 4)):
        words = _runs(dark[a:b + 1].any(axis=0), 12)
        boxes.append(Box("step", f"line{k}", float(words[0][0]), float(a), float(words[-1][1] + 1), float(b + 1)))
        if b < image.shape[0] // 2:
            for x0, x1 in words:
                boxes.append(Box("question_token", str(token), float(x0), float(a), float(x1 + 1), float(b + 1)))
                token += 1
    return tuple(boxes)


_PAGES: dict[bytes, RenderedPage] = {}


def page_for(image: np.ndarray) -> RenderedPage:
    """The page's layout, found once per distinct page (keyed by its shape and a sparse sample of pixels)."""
    key = bytes(str(image.shape), "ascii") + image[::37, ::41].tobytes()
    if key not in _PAGES:
        h, w = image.shape[:2]
        _PAGES[key] = RenderedPage(style="printed", font="anchor", paper="plain", ink="black", dpi=150, width=w,
                                   height=h, layout=layout_from_ink(image))
    return _PAGES[key]


def _single(subtype: str, severity: int) -> Callable[[np.ndarray, int], np.ndarray]:
    def run(image: np.ndarray, seed: int) -> np.ndarray:
        rgb = np.ascontiguousarray(image)
        return degrade(rgb, page_for(rgb), subtype, severity, np.random.default_rng(seed))[0]
    return run


def phone(image: np.ndarray, seed: int) -> np.ndarray:
    rgb = np.ascontiguousarray(image)
    # As a pipeline worker runs a capture (``synth.stages.produce_shard``): OpenCV on one thread, the capture's own
    # two threads (``perturb.photo.worker``) using both cores; OpenCV's pool beside them only spins (the same wall
    # time, a tenth more CPU). The previous thread count is restored after the call, so the floor and
    # albumentations, timed in this process too, run with OpenCV's default.
    with one_opencv_thread():
        return degrade_profile(rgb, page_for(rgb), PHONE_CHAIN, np.random.default_rng(seed))[0]


def ops() -> dict[str, Callable[[np.ndarray, int], np.ndarray]]:
    # Pipeline workers run with this allocator setting; it holds for the whole bench process, so the
    # floor and albumentations, timed in the same process, get it too.
    keep_image_buffers()
    table: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {name: _single(*spec) for name, spec in SINGLE.items()}
    table["pipeline_phone"] = phone
    return table
