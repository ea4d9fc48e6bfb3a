"""Background: the sheet photographed lying on a desk, table or cloth, its edges in the frame.

Severity is how much of the photo the sheet fills: the further the phone is held, the more desk
shows and the fewer pixels the print gets. The frame is the camera's (3:4 or 9:16, portrait or
landscape, the page's pixel count), so the print's effective resolution falls with the sheet's share of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.base import Rubric
from perturb.photo.functional.geometric import Warp, frame_size, page_outline, placement_warp, polygon_area
from perturb.photo.fusion import GeometricOp, sample_desk
from synth.records import RenderedPage

# Share of the photo's area covered by the sheet: 1 edges visible, sheet fills most of the frame;
# 2 sheet about half the frame; 3 sheet small in a desk scene.
BINS = {1: (0.70, 0.90), 2: (0.45, 0.70), 3: (0.20, 0.45)}
_TARGET = {1: (0.72, 0.88), 2: (0.48, 0.67), 3: (0.23, 0.42)}
# A hand-placed sheet is never exactly square to the frame, but stays well inside tilt's level 0.
_MAX_ANGLE_DEG = 1.0
_MARGIN_FRAC = 0.01  # smallest gap between the sheet and the frame edge, fraction of frame width


def visible_area(polygon: np.ndarray, width: float, height: float) -> float:
    """Area of a simple polygon inside the frame [0, width] x [0, height] (Sutherland-Hodgman clipping)."""
    pts = [tuple(p) for p in np.asarray(polygon, float)]
    for axis, bound, keep_below in ((0, 0.0, False), (0, float(width), True), (1, 0.0, False),
                                    (1, float(height), True)):
        def inside(p: tuple[float, float], a: int = axis, b: float = bound, k: bool = keep_below) -> bool:
            return p[a] <= b if k else p[a] >= b

        out: list[tuple[float, float]] = []
        for k, cur in enumerate(pts):
            prev = pts[k - 1]
            if inside(cur) != inside(prev):
                t = (bound - prev[axis]) / (cur[axis] - prev[axis])
                out.append((prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])))
            if inside(cur):
                out.append(cur)
        pts = out
        if not pts:
            return 0.0
    return polygon_area(np.array(pts))


class Background(GeometricOp):
    subtype = "background"
    family = "camera"
    rubric = Rubric("page_area_frac", BINS, "sheet covers", "% of the photo")
    stage_rank = 3  # framing: after the sheet's shape and the camera's tilt, before the quarter turn

    frames = True  # it places the sheet in the camera's frame itself, at the area its severity asks for

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        return self.sample_in_chain(rng, severity, page, page_outline(page))

    def sample_in_chain(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        outline: np.ndarray, area: float | None = None,
                        lean: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
        scene = sample_desk(rng)
        area = area or float(page.width * page.height)
        target = float(rng.uniform(*_TARGET[severity]))
        angle = float(rng.uniform(-_MAX_ANGLE_DEG, _MAX_ANGLE_DEG))
        lo, hi = outline.min(axis=0), outline.max(axis=0)
        anchor = (lo + hi) / 2
        a = np.deg2rad(angle)
        rot = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
        half = np.abs((outline - anchor) @ rot.T).max(axis=0)
        # The frame the camera was held in, unless the sheet cannot fill the share asked of it there (a portrait
        # sheet in a landscape frame covers at most about half of it): then the other way round, then 3:4.
        for change in ({}, {"frame_landscape": not scene["frame_landscape"]},
                       {"frame_landscape": bool(half[0] > half[1]), "frame_aspect": "3:4"}):
            scene = {**scene, **change}
            w, h = (float(v) for v in frame_size(scene, area))
            margin = _MARGIN_FRAC * w
            most = min((w / 2 - margin) / half[0], (h / 2 - margin) / half[1]) ** 2 * polygon_area(outline) / (w * h)
            if most >= target:
                break
        scale = float(np.sqrt(target * w * h / polygon_area(outline)))
        # Largest scale at which the turned outline still fits the frame with a margin.
        fit = min(float((w / 2 - margin) / half[0]), float((h / 2 - margin) / half[1]))
        room = np.array([w / 2, h / 2]) - half * min(scale, fit) - margin
        centre = np.array([w / 2, h / 2]) + rng.uniform(-1, 1, 2) * np.maximum(room, 0) * 0.8
        if scale > fit:
            # A turned sheet cannot fill this much of any frame whole: the camera moves in and crops its corners,
            # centred, until what shows of it covers the target share.
            centre = np.array([w / 2, h / 2])
            turned = (outline - anchor) @ rot.T

            def shows(k: float) -> float:
                return visible_area(turned * k + centre, w, h) / (w * h)

            lo_k, hi_k = fit, 2.0 * fit
            for _ in range(30):
                mid = (lo_k + hi_k) / 2
                lo_k, hi_k = (mid, hi_k) if shows(mid) < target else (lo_k, mid)
            scale = (lo_k + hi_k) / 2
        else:
            scale = min(scale, fit)
        return {"target_page_frac": round(target, 4), "scale": round(scale, 5), "angle_deg": round(angle, 3),
                "anchor": np.round(anchor, 3).tolist(), "centre_frac": [round(float(centre[0] / w), 5),
                                                                        round(float(centre[1] / h), 5)],
                "frame_size": [int(w), int(h)], **scene}

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        return placement_warp(params, page)

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        placed = warp.forward(outline)
        frac = visible_area(placed, warp.width, warp.height) / (warp.width * warp.height)
        lo, hi = placed.min(axis=0), placed.max(axis=0)
        gaps = [lo[0], lo[1], warp.width - hi[0], warp.height - hi[1]]
        return {"page_area_frac": round(frac, 4), "print_scale": params["scale"],
                "effective_dpi": round(page.dpi * float(params["scale"]), 1),
                "min_edge_gap_frac": round(float(min(gaps)) / warp.width, 4)}


register(Background())
