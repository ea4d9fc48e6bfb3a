"""Exposure: a dark room (gain and grain up, blacks lifted) or a bright lamp (clipped, bloomed) metered for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op, Rubric, quantile
from perturb.photo.functional.camera import add_noise
from perturb.photo.functional.lighting import Light, bloom_rows, expose, exposure_light, lamp_patch, vignette
from perturb.photo.measure import (
    CONTENT_KINDS,
    content_mask,
    local_paper,
    median_u8,
    percentile_u8,
    sparse_luma,
    text_ink,
)
from synth.records import RenderedPage

# Share of the ink-on-paper contrast left: 1 mildly dark or bright, content visible;
# 2 severe, partly hides content; 3 nearly fully black or white.
BINS = {1: (0.5, 0.85), 2: (0.18, 0.5), 3: (0.0, 0.12)}
_TARGET = {1: (0.58, 0.76), 2: (0.25, 0.4), 3: (0.03, 0.075)}
# Print luminances as the camera's base layer leaves them (white paper at about 0.9 of its printed 249, ink
# at 25), used to aim the curve before seeing pixels.
_PAPER, _INK = 225.0 / 255, 24.0 / 255
# Under-exposure: the phone lifts its gain, so the sensor's noise grows (spread on the paper, grey levels, after
# the curve) and the blacks lift; a dark page is a grainy grey page, not a clean black one autocontrast undoes.
_NOISE_UNDER = {1: (2.5, 4.0), 2: (4.5, 7.0), 3: (7.0, 10.0)}
_LIFT = {1: (0.0, 0.02), 2: (0.02, 0.05), 3: (0.04, 0.09)}
# Over-exposure: everything lighter than the white point (darkness as a fraction) clips to 255, and light
# blooms into thin strokes (share of the blurred light mixed in, and its spread in px at 150 dpi).
_WHITE_POINT = (0.15, 0.25)
_BLOOM = {1: (0.1, 0.2), 2: (0.2, 0.35), 3: (0.35, 0.55)}
_BLOOM_PX_AT_150 = (2.0, 5.0)
_NOISE_OVER = (1.2, 2.2)
# A bright lamp over-exposes the page unevenly: the share of the darkness left that its nearest patch loses on
# top (``lighting.exposure_gain``), before ``_aim_over`` dims it to keep the graded median. Severity 1 barely; 2
# washes the writing under the patch out to a faint grey (white where it is bright enough) while the rest keeps
# its contrast, "partly hides content" (at 60-100 dpi the patch keeps a tenth to a third of the far writing's
# contrast); 3 the whole page near white and the patch white. One draw per page, turned into each severity's
# range, so a page's severity 2 is its severity 1 with the lamp brighter.
_BLOWOUT = {1: (0.0, 0.3), 2: (0.75, 0.9), 3: (0.85, 0.95)}
_LAMP_RADIUS = (0.3, 0.5)  # of the frame's width
# Share of the writing the lamp may clip to white above severity 3, as the aim predicts it (``_aim_over``); its
# bloom is seen on the sparse grid, where a thin stroke keeps more darkness than in the photo, so about 0.15 more
# clips in the photo at 60 dpi.
_HIDDEN_MAX = 0.2
_MARGIN = 0.1  # the lamp may take the median below the target, not nearer the bin's floor than this


def _lamp_over_content(page: RenderedPage, u: float, v: float) -> list[float]:
    """Where the lamp's blow-out is centred (fractions of the frame): at quantiles ``u``, ``v`` across the printed
    content's extent, so the patch it clips falls on writing, as the rubric's "partly hides content" has it (a
    patch on empty paper would leave every word at the page's contrast); across the middle of the frame on a
    page without a layout."""
    boxes = [b for b in page.layout if b.kind in CONTENT_KINDS]
    if not boxes:
        return [round(0.2 + 0.6 * u, 4), round(0.1 + 0.5 * v, 4)]
    x0, x1 = min(b.x0 for b in boxes) / page.width, max(b.x1 for b in boxes) / page.width
    y0, y1 = min(b.y0 for b in boxes) / page.height, max(b.y1 for b in boxes) / page.height
    return [round(quantile((x0, x1), u), 4), round(quantile((y0, y1), v), 4)]


def _curve_contrast(kind: str, k: float, gamma: float, white_point: float = 0.0, bloom: float = 0.0,
                    paper: float = _PAPER, ink: float = _INK) -> float:
    """The share of the ink-on-paper contrast a curve leaves, for paper and ink at these levels (0-1): an even
    exposure of the nominal print, before a photo is seen (on a photo's own levels: ``Exposure._aim``)."""
    if kind == "under":
        return k * (paper**gamma - ink**gamma) / max(paper - ink, 1e-3)
    # Darkness past the white point is what is left (paper lighter than it clips); the bloom has mixed the light
    # around a stroke into it first (unseen: about a quarter of a thin stroke's darkness is left there).
    dark_ink = (1 - ink) * (1 - 0.75 * bloom)
    left = max(dark_ink**gamma - white_point**gamma, 0.0) - max((1 - paper) ** gamma - white_point**gamma, 0.0)
    return k * max(left, 1e-6) / max(paper - ink, 1e-3)


def _levels(image: np.ndarray, page: RenderedPage, probe: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The sparse luma the measure reads, and its ink and paper masks (uint8); None without both. ``probe`` 4:
    ``image`` is already every fourth pixel of every fourth row of the photo (``PROBE``)."""
    b = sparse_luma(image, 4 // probe)
    # Ink and paper by their local contrast (a pen's blue is ink, paper in a shadow or a bend is paper), both
    # inside the printed content's boxes (never the desk around a photographed sheet).
    around = local_paper(b)
    dark = text_ink(b, around)
    local = around.astype(np.float32)
    light = b.astype(np.float32) >= 0.9 * local
    # Only where the sheet is well lit: in a bend's deep shade print and paper are too close to grade contrast on.
    lit = local >= 0.6 * percentile_u8(around, 95)
    dark, light = dark & lit, light & lit
    if page.layout:
        inside = content_mask(page, *b.shape)
        dark, light = dark & inside, light & inside
    ink, paper = dark.view(np.uint8), (light & ~dark).view(np.uint8)
    if not cv2.countNonZero(ink) or not cv2.countNonZero(paper):
        return None
    return b, ink, paper


def _aim_over(params: dict[str, Any], severity: int, b: np.ndarray, ink: np.ndarray, paper: np.ndarray,
              photo_width: int, page: RenderedPage, p: float, i: float) -> dict[str, Any]:
    """An over-exposure's ``k`` (and lamp) aimed at this photo, as the measure will read it.

    The measure takes medians over the sparse grid's ink and paper (``b``, ``ink``, ``paper``; paper and ink
    levels ``p``, ``i`` before, 0-1) of the darkness left, 1 - v' = k max(0, g d^gamma - w^gamma), with d each
    pixel's darkness after the bloom and g the exposure's light there (vignette and lamp): linear in k, so one
    evaluation aims it, with the lamp on; but away from the lamp the writing keeps at most the contrast the next
    milder severity is aimed at (a severity 2 is not darker there than a severity 1). At severities 1 and 2
    the lamp is dimmed (its blow-out lowered) until it clips at most ``_HIDDEN_MAX`` of the writing and the median
    stays ``_MARGIN`` above the bin's floor (or at the target, if that is lower): "partly hides content", the
    median below the drawn target where the lamp takes it. Severity 3 is aimed with the lamp off.
    """
    dark = cv2.bitwise_not(b)
    spread = cv2.GaussianBlur(dark, (0, 0), max(0.5, float(params["bloom_px"]) * b.shape[1] / photo_width))
    mixed = cv2.min(dark, cv2.addWeighted(dark, 1.0 - params["bloom"], spread, params["bloom"], 0.0))
    gamma, clip = float(params["gamma"]), float(params["white_point"]) ** float(params["gamma"])
    # The sparse grid is every fourth pixel of every fourth row of the photo.
    (ri, ci), (rp, cp) = np.nonzero(ink), np.nonzero(paper)
    d_ink, d_paper = (mixed[ri, ci] / 255.0) ** gamma, (mixed[rp, cp] / 255.0) ** gamma

    # ``exposure_gain`` at the ink and paper pixels, its two factors found once: vignette * (1 - blowout * patch).
    parts = [(vignette(params, c * 4.0, r * 4.0, page.width, page.height),
              lamp_patch(params, c * 4.0, r * 4.0, page.width, page.height)) for r, c in ((ri, ci), (rp, cp))]

    def gain(which: int, blowout: float) -> np.ndarray:
        v, patch = parts[which]
        return v if blowout <= 0 else (v * (1.0 - blowout * patch)).astype(np.float32)

    # Paper whose darkness stays under the white point with the lamp off clips at every blow-out (the lamp only
    # takes darkness away): its median is then left out, the same zero without sorting the paper again.
    paper_clips = not len(d_paper) or float((parts[1][0] * d_paper).max()) <= clip

    def contrast(blowout: float) -> float:  # at k = 1
        left_ink = max(float(np.median(gain(0, blowout) * d_ink)) - clip, 0.0)
        left_paper = 0.0 if paper_clips else max(float(np.median(gain(1, blowout) * d_paper)) - clip, 0.0)
        return max(left_ink - left_paper, 1e-6) / (p - i)

    def hidden(blowout: float) -> float:
        return float(np.mean(gain(0, blowout) * d_ink <= clip))

    target = float(params["target_contrast"])
    # Away from the lamp the writing keeps at most the contrast the next milder severity is aimed at.
    most = (_TARGET[severity - 1][0] if severity > 1 else BINS[1][1]) / contrast(0.0)

    def aim(blowout: float) -> float:
        return min(target / contrast(blowout), most)

    blowout = float(params["blowout"])
    if severity < 3 and blowout > 0:
        def mild(x: float) -> bool:
            return hidden(x) <= _HIDDEN_MAX and aim(x) * contrast(x) >= min(target, BINS[severity][0] + _MARGIN)

        if not mild(blowout):
            lo, hi = 0.0, blowout
            for _ in range(16):
                lo, hi = ((lo + hi) / 2, hi) if mild((lo + hi) / 2) else (lo, (lo + hi) / 2)
            blowout = np.floor(lo * 1e4) / 1e4
    # Severity 3 is aimed as if the lamp were off (the whole page at the target's faint contrast), then the lamp
    # clips its patch to white: aimed with it, writing more than half clipped asks for an unbounded k.
    k = target / contrast(0.0) if severity == 3 else aim(blowout)
    return {**params, "blowout": round(float(blowout), 4), "k": round(k, 5),
            "aimed_at": [round(p, 4), round(i, 4)]}


class Exposure(Op):
    subtype = "exposure"
    family = "quality"
    rubric = Rubric("contrast_retained", BINS, "print contrast left, under or over", "%")
    stage = "camera"
    stage_rank = 0
    adds_sensor_noise = True
    samples_on_photo = True  # aims its curve at the photo's own levels (sample_in_photo)
    photo_keys = ("k", "aimed_at", "blowout")  # the lamp is dimmed by looking at the photo too

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        kind = "under" if rng.random() < 0.5 else "over"
        gamma = float(rng.uniform(1.0, 1.6))
        target = float(rng.uniform(*_TARGET[severity]))
        params: dict[str, Any] = {"kind": kind, "gamma": round(gamma, 4), "target_contrast": round(target, 4),
                                  "hotspot_frac": [round(float(rng.uniform(0.3, 0.7)), 4),
                                                   round(float(rng.uniform(0.2, 0.6)), 4)],
                                  "falloff": round(float(rng.uniform(0.02, 0.08)), 4),
                                  "noise_seed": int(rng.integers(2**31 - 1)),
                                  # The phone's noise reduction smooths a dark shot's colour speckle away first.
                                  "chroma_frac": 0.0}
        if kind == "under":
            params["black_lift"] = round(float(rng.uniform(*_LIFT[severity])), 4)
            params["noise_paper"] = round(float(rng.uniform(*_NOISE_UNDER[severity])), 3)
            params["k"] = round(target / _curve_contrast(kind, 1.0, gamma), 5)
        else:
            white = float(rng.uniform(*_WHITE_POINT))
            params["white_point"] = round(white, 4)
            params["bloom"] = round(float(rng.uniform(*_BLOOM[severity])), 4)
            params["bloom_px"] = round(float(rng.uniform(*_BLOOM_PX_AT_150)) * page.dpi / 150, 3)
            params["noise_paper"] = round(float(rng.uniform(*_NOISE_OVER)), 3)
            params["blowout"] = round(quantile(_BLOWOUT[severity], float(rng.random())), 4)
            params["lamp_frac"] = _lamp_over_content(page, float(rng.random()), float(rng.random()))
            params["lamp_radius"] = round(float(rng.uniform(*_LAMP_RADIUS)), 4)
            params["k"] = round(target / _curve_contrast(kind, 1.0, gamma, white, params["bloom"]), 5)
        return params

    def sample_in_photo(self, rng: np.random.Generator, severity: int, page: RenderedPage,
                        image: np.ndarray, probe: int = 1) -> dict[str, Any]:
        """``sample_params``, with the curve aimed at the photo's own paper and ink levels (a bent, shaded or
        glared sheet is not the nominal print), as the measure will read them. ``probe`` 4: ``image`` is every
        fourth pixel of every fourth row of the photo (the capture lights only those before aiming)."""
        params = self.sample_params(rng, severity, page)
        seen = _levels(image, page, probe)
        # The levels just read are the ones the measure reads (the same photo before the exposure): kept for it
        # under a key that is never recorded (``_seen``), so they are found once.
        aimed = self._aim(params, severity, seen, image, probe, page)
        return {**aimed, "_seen": seen}

    def _aim(self, params: dict[str, Any], severity: int, seen: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
             image: np.ndarray, probe: int, page: RenderedPage) -> dict[str, Any]:
        if seen is None:
            return params
        b, ink, paper = seen
        p, i = median_u8(b, paper) / 255, median_u8(b, ink) / 255
        if p - i < 0.05:
            return params
        if params["kind"] == "over":
            return _aim_over(params, severity, b, ink, paper, image.shape[1] * probe, page, p, i)
        contrast = _curve_contrast(params["kind"], 1.0, params["gamma"], paper=p, ink=i)
        return {**params, "k": round(params["target_contrast"] / contrast, 5), "aimed_at": [round(p, 4), round(i, 4)]}

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        exposed, table = expose(image, params, page.width, page.height)
        return add_noise(exposed, params, table), page

    def as_light(self, params: dict[str, Any], page: RenderedPage, image: np.ndarray,
                 ) -> tuple[Callable[[slice], np.ndarray] | None, Light, np.ndarray, np.ndarray]:
        """The exposure as part of the pass that lights the scene (``profile``): the photo with its bloom band by
        band (``Light.apply``'s ``source``; None without bloom), the vignette as lighting, the tone curve looked up
        after it, and the noise spread per output level."""
        light, curve, table = exposure_light(params, page.width, page.height)
        return bloom_rows(image, params), light, curve, table

    def measure_probe(self, probe: np.ndarray, after: np.ndarray, params: dict[str, Any],
                      page: RenderedPage) -> dict[str, Any]:
        """``measure`` with the photo before the exposure known at every fourth pixel of every fourth row (the
        levels ``sample_in_photo`` read there, when it sampled these params on it)."""
        return self._measure(params["_seen"] if "_seen" in params else _levels(probe, page, 4), after, params)

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        return self._measure(params["_seen"] if "_seen" in params else _levels(before, page), after, params)

    def _measure(self, seen: tuple[np.ndarray, np.ndarray, np.ndarray] | None, after: np.ndarray,
                 params: dict[str, Any]) -> dict[str, Any]:
        # Medians over every fourth pixel of every fourth row (over 130,000 pixels of an A4 page at 150 dpi):
        # the same medians to a grey level or so, a sixteenth of the work. Histograms under uint8 masks: no
        # boolean gathers of the page.
        if seen is None:
            return {"contrast_retained": None, "paper_luma": None}
        b, ink, paper = seen
        a = sparse_luma(after, 4)
        paper_after = median_u8(a, paper)
        ink_after = median_u8(a, ink)
        c0 = median_u8(b, paper) - median_u8(b, ink)
        c1 = paper_after - ink_after
        return {"contrast_retained": round(abs(c1) / max(c0, 1.0), 4), "paper_luma": round(paper_after, 2),
                "ink_luma": round(ink_after, 2), "kind": params["kind"]}


register(Exposure())
