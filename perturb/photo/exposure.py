"""Exposure: a dark room (gain and grain up, blacks lifted) or a bright lamp (clipped, bloomed) metered for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import Op, Rubric
from perturb.photo.functional.camera import add_noise
from perturb.photo.functional.lighting import Light, bloom_rows, expose, exposure_light
from perturb.photo.measure import content_mask, local_paper, median_u8, percentile_u8, sparse_luma, text_ink
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


def _curve_contrast(kind: str, k: float, gamma: float, white_point: float = 0.0, bloom: float = 0.0,
                    paper: float = _PAPER, ink: float = _INK, bloomed_ink: float | None = None) -> float:
    """The share of the ink-on-paper contrast a curve leaves, for paper and ink at these levels (0-1);
    ``bloomed_ink`` is the ink's darkness after the bloom, when it has been seen."""
    if kind == "under":
        return k * (paper**gamma - ink**gamma) / max(paper - ink, 1e-3)
    # Darkness past the white point is what is left (paper lighter than it clips); the bloom has mixed the light
    # around a stroke into it first (unseen: about a quarter of a thin stroke's darkness is left there).
    dark_ink = (1 - ink) * (1 - 0.75 * bloom) if bloomed_ink is None else bloomed_ink
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


class Exposure(Op):
    subtype = "exposure"
    family = "quality"
    rubric = Rubric("contrast_retained", BINS, "print contrast left, under or over", "%")
    stage = "camera"
    stage_rank = 0
    adds_sensor_noise = True
    samples_on_photo = True  # aims its curve at the photo's own levels (sample_in_photo)
    photo_keys = ("k", "aimed_at")

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
        aimed = self._aim(params, seen, image, probe)
        return {**aimed, "_seen": seen}

    def _aim(self, params: dict[str, Any], seen: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
             image: np.ndarray, probe: int) -> dict[str, Any]:
        if seen is None:
            return params
        b, ink, paper = seen
        p, i = median_u8(b, paper) / 255, median_u8(b, ink) / 255
        if p - i < 0.05:
            return params
        bloomed = None
        if params["kind"] == "over":  # the bloom on this photo's own strokes, on the sparse grid the measure reads
            dark = cv2.bitwise_not(b)
            spread = cv2.GaussianBlur(dark, (0, 0), max(0.5, float(params["bloom_px"]) * b.shape[1]
                                                        / (image.shape[1] * probe)))
            mixed = cv2.min(dark, cv2.addWeighted(dark, 1.0 - params["bloom"], spread, params["bloom"], 0.0))
            bloomed = median_u8(mixed, ink) / 255
        contrast = _curve_contrast(params["kind"], 1.0, params["gamma"], params.get("white_point", 0.0),
                                   params.get("bloom", 0.0), paper=p, ink=i, bloomed_ink=bloomed)
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
