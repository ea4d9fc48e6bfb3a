"""Glare: a specular reflection of a lamp or window that washes the print out towards white."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Rubric
from perturb.photo.fields import LightOp, bisect_coverage, coarse_content, masked_fraction
from perturb.photo.functional.lighting import Light, glare_field, glare_light, grid
from perturb.photo.measure import content_mask, luma, sparse_luma, text_ink
from synth.records import RenderedPage

# Share of the text ink washed out by more than half. 1 small spots, text legible;
# 2 strong, partly hides content; 3 content unreadable.
BINS = {1: (0.0, 0.12), 2: (0.12, 0.45), 3: (0.45, 1.0)}
_TARGET_AREA = {1: (0.02, 0.055), 2: (0.21, 0.32), 3: (0.6, 0.9)}
_PEAK = {1: (0.62, 0.8), 2: (0.98, 1.0), 3: (0.99, 1.0)}
# Share of the text's ink to wash out, when the sampler sees the photo: inside the bins with a margin.
_TARGET_INK = {1: (0.03, 0.085), 2: (0.18, 0.36), 3: (0.56, 0.85)}
_INK_POINTS = 20_000  # at most this many ink pixels to bisect on (every k-th, in raster order)


def _ink_points(image: np.ndarray, page: RenderedPage) -> np.ndarray:
    """Page coordinates of the text's ink pixels (as the measure finds them) on every fourth pixel of every fourth
    row of the photo: enough to aim at, a quarter of the measure's work."""
    b = sparse_luma(image, 2 if image.shape[1] < 1000 else 4)  # a low-resolution photo's strokes are few
    ink = text_ink(b) & content_mask(page, *b.shape)
    ys, xs = np.nonzero(ink)
    step = max(1, len(xs) // _INK_POINTS)
    sx, sy = page.width / b.shape[1], page.height / b.shape[0]
    return np.stack([(xs[::step] + 0.5) * sx, (ys[::step] + 0.5) * sy], 1).astype(np.float32)


class Glare(LightOp):
    subtype = "glare"
    family = "quality"
    rubric = Rubric("text_under_glare", BINS, "text under glare", "%", open_low=True)
    stage_rank = 1

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        return self.sample_in_scene(rng, severity, page, None)

    def sample_in_scene(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        sheet: np.ndarray | None, image: np.ndarray | None = None) -> dict[str, Any]:
        ink = None if image is None else _ink_points(image, page)
        if ink is not None and len(ink):
            # Centre the highlight on the writing itself (a pen's light strokes as well as print).
            cx, cy = ink[int(rng.integers(len(ink)))]
        else:
            lines = [b for b in page.layout if b.kind in ("question_line", "step", "choice")]
            if lines:
                b = lines[int(rng.integers(len(lines)))]
                cx, cy = b.x0 + (b.x1 - b.x0) * float(rng.uniform(0.2, 0.8)), (b.y0 + b.y1) / 2
            else:
                cx, cy = page.width * float(rng.uniform(0.3, 0.7)), page.height * float(rng.uniform(0.2, 0.5))
        params: dict[str, Any] = {
            "centre_frac": [round(float(cx) / page.width, 4), round(float(cy) / page.width, 4)],
            "angle_deg": round(float(rng.uniform(0, 180)), 2),
            "aspect": round(float(rng.uniform(1.0, 2.2)), 3),
            "peak": round(float(rng.uniform(*_PEAK[severity])), 4),
            "halo": round(float(rng.uniform(0.1, 0.25)), 4),
        }
        if ink is not None and len(ink):
            # Grow the highlight until it washes out the target share of the text's ink: what the rubric grades.
            target = float(rng.uniform(*_TARGET_INK[severity]))
            px, py = ink[:, 0], ink[:, 1]
            tolerance = 0.004
        else:  # no pixels to see (sampled from the layout alone): aim at the share of the content's area
            xs, ys, mask = coarse_content(page)
            target = float(rng.uniform(*_TARGET_AREA[severity]))
            px, py = xs[mask], ys[mask]
            tolerance = 0.001
        # At least 6 px across the core's radius: a smaller highlight (a few ink points near the centre already
        # at the target) washes out nothing the half-size measure can see on a small page.
        smallest = max(0.002, 6.0 / page.width)
        everywhere = np.ones(px.shape, bool)

        def covered(centre: list[float], radius: float) -> float:
            return masked_fraction(glare_field({**params, "centre_frac": centre, "radius_frac": radius}, px, py,
                                               page.width), everywhere)

        # Where the writing is dense (small print on a small photo of a curled, turned sheet) the smallest core
        # centred on a stroke can wash out more of the writing than the target, and more than severity 1's bin
        # (benchmarks/degrade.py's pages 183 and 586 in curled_page_flash: 0.124 and 0.182 of the ink, at a 6 px
        # core). Then the highlight sits on another of the writing's points, the first of a few that leaves room.
        if ink is not None and len(ink) and covered(params["centre_frac"], smallest) > target + tolerance:
            spare = np.random.default_rng(int(rng.integers(2**63 - 1)))  # drawn only here: other pages keep theirs
            for _ in range(8):
                x, y = ink[int(spare.integers(len(ink)))]
                centre = [round(float(x) / page.width, 4), round(float(y) / page.width, 4)]
                if covered(centre, smallest) <= target + tolerance:
                    params["centre_frac"] = centre
                    break
        radius = bisect_coverage(lambda r: glare_field({**params, "radius_frac": r}, px, py, page.width),
                                 everywhere, target, smallest, 1.5, grows=True, tolerance=tolerance)
        params["radius_frac"] = round(radius, 5)
        params["target_text_share" if ink is not None and len(ink) else "target_content_area"] = round(target, 4)
        return params

    def light(self, params: dict[str, Any], page: RenderedPage) -> Light:
        return glare_light(params, page.width, page.height)

    def measure_half(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                     page: RenderedPage) -> dict[str, Any]:
        # The sparse photo (``fields.sparse``: every fourth pixel of every fourth row of a photo 1000 px wide or more,
        # the grid the sampler aims on; else every other): the shares move by a few hundredths against full
        # resolution, inside the rubric bins' margins (bins re-checked with benchmarks/degrade.py).
        b, a = luma(before), luma(after)
        ink = text_ink(b) & content_mask(page, *b.shape)
        bi, ai = b[ink].astype(np.float32), a[ink].astype(np.float32)
        washout = (ai - bi) / np.maximum(255.0 - bi, 1.0)
        page_glare = glare_field(params, *grid(page.height, page.width, -(-max(page.height, page.width) // 32)),
                                 page.width)
        # The highlight is visible: paper under its core gets brighter (to 255 where the wash is full).
        core = cv2.resize(page_glare, (b.shape[1], b.shape[0]), interpolation=cv2.INTER_LINEAR) > 0.5
        paper = (b > 160) & core
        lift = float(np.mean(a[paper].astype(np.float32) - b[paper])) if paper.any() else None
        return {"text_under_glare": round(float((washout > 0.5).mean()), 4) if bi.size else None,
                "paper_lift": None if lift is None else round(lift, 2),
                "peak_washout": round(float(washout.max()), 4) if bi.size else None,
                "page_under_glare": round(float((page_glare > 0.5).mean()), 4)}


register(Glare())
