"""Geometric ops: the ``GeometricOp`` contract, fused by type into one remap per run (``profile``).

A geometric op samples its params (knowing where earlier ops in the chain left the sheet:
``sample_in_chain``), describes them as a ``Warp`` (``functional.geometric``) and measures the warp
itself, so a fused chain needs no intermediate image to measure from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from perturb.photo.base import Op
from perturb.photo.functional.geometric import Warp, moved_page, page_outline, remap_chain
from synth.records import RenderedPage

# Desk and table tops seen around a photographed page, by material: base colours the texture varies around.
DESK_RGB = {"wood": ((168, 128, 88), (98, 68, 46), (140, 112, 84), (186, 150, 110)),
            "laminate": ((122, 121, 116), (214, 210, 200), (180, 176, 168), (200, 188, 160)),
            "fabric": ((64, 70, 82), (52, 84, 66), (120, 40, 44), (150, 150, 146))}
DESK_KINDS = ("wood", "laminate", "fabric")
CLUTTER = ("pencil", "pen", "eraser", "notebook", "sticky_note", "phone")
APERTURE_MM = (2.0, 4.0)
_LENS_STREAM = 0x1E45


def sample_desk(rng: np.random.Generator) -> dict[str, Any]:
    """The scene a geometric op lays the sheet in: the desk (material, colour, texture seed, something left at
    the frame's edge) and the camera's frame (3:4 or 9:16, portrait or landscape, how much of it the sheet
    fills and where). None of it depends on the op's severity, so the frame says nothing about it. One photo in
    ten is landscape (it was one in four): a portrait worksheet is mostly shot with the phone upright (a quarter
    turn of the whole photo is the rotation op's), and sideways it is a small sheet in a wide frame, where
    rapidocr at the evaluator's 640 px lost whole pages at paper_warp severity 1 (benchmarks/results_cer.md).
    ``frame_scale`` is a rule, not a draw (``frame_warp``): records made before it frame as they did; records
    made before the lens (``aperture_mm``, ``focus_frac``) are photographed in focus everywhere, as they were."""
    kind = DESK_KINDS[int(rng.choice(3, p=[0.45, 0.3, 0.25]))]
    colours = DESK_RGB[kind]
    base = np.array(colours[int(rng.integers(len(colours)))], float)
    rgb = np.clip(base * rng.uniform(0.85, 1.1), 0, 255).round().astype(int).tolist()
    clutter = CLUTTER[int(rng.integers(len(CLUTTER)))] if rng.random() < 0.45 else None
    seed = int(rng.integers(2**31 - 1))
    scene = {"desk_kind": kind, "desk_rgb": rgb, "desk_seed": seed,
             "desk_grain_angle_deg": round(float(rng.uniform(-20, 20)), 2), "clutter": clutter,
             "frame_aspect": "3:4" if rng.random() < 0.7 else "9:16", "frame_landscape": bool(rng.random() < 0.1),
             "frame_fill": round(float(rng.uniform(0.8, 1.03)), 4),
             "frame_offset": np.round(rng.uniform(-0.8, 0.8, 2), 4).tolist(), "frame_scale": "flat_sheet"}
    # The lens (``depth_of_field``): drawn from the desk's seed, not from ``rng``, so every draw an op makes after
    # its scene is the one it made before the lens was modelled. A phone's main camera (4-7 mm at f/1.7-2.0) has
    # an aperture of 2-4 mm; it focuses near the frame's centre.
    lens = np.random.default_rng([seed, _LENS_STREAM])
    return {**scene, "aperture_mm": round(float(lens.uniform(*APERTURE_MM)), 3),
            "focus_frac": np.round(0.5 + lens.uniform(-0.1, 0.1, 2), 4).tolist()}


class GeometricOp(Op):
    """An op that moves pixels; ``apply`` is the one-op case of a fused chain (``remap_chain``)."""

    stage = "geometry"
    frames = False  # the op places the sheet in the camera's frame itself (background); else the chain frames it
    after_frame = False  # the op turns the framed photo (rotation): it comes after the framing

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        raise NotImplementedError

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        raise NotImplementedError

    reads_lean = False  # the op is graded on how the writing leans (tilt): the chain gives it ``lean``

    def sample_in_chain(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        outline: np.ndarray, area: float | None = None,
                        lean: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
        """Sample knowing where the sheet is in the current frame (after earlier geometric ops); ``area`` is the
        flat page's (the photo's area, in page units); ``lean``, for an op that ``reads_lean`` after earlier
        geometric ops, is how the writing leans in the current frame (``measure.text_lean``)."""
        return self.sample_params(rng, severity, page)

    def measure_in_chain(self, params: dict[str, Any], page: RenderedPage, warp: Warp, outline: np.ndarray,
                         lean: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
        """``measure_warp`` inside a chain (``lean`` as in ``sample_in_chain``)."""
        return self.measure_warp(params, page, warp, outline)

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        warp = self.warp(params, page)
        return remap_chain(image, page, [warp], desk_of([params])), moved_page(page, [warp])

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return self.measure_warp(params, page, self.warp(params, page), page_outline(page))


def desk_of(params_list: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The scene the sheet lies in (desk and frame): the last op in the chain that sampled one (the framing
    op, background, when there is one)."""
    return next((p for p in reversed(params_list) if "desk_rgb" in p), None)
