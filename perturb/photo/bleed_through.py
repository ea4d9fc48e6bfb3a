"""Bleed-through: print from the reverse side showing through thin paper, mirrored and diffused by the paper.

The reverse side is a real other page, handed in by reference (``degrade(..., reverse=...)``;
the pipeline renders a different problem for it) and recorded as ``source: reverse_page`` with
its ``reverse_ref``. It shows where its print is, mirrored as seen through the sheet (left-right for
a long-edge duplex, top-bottom for a short-edge one) and moved only by the printer's millimetre of
duplex misalignment, so it lands on the front's text and in its empty half alike; a reverse whose print
lies beside the front's text (two worksheets of short lines at the top left) is laid out behind it, the rows
and columns of its print on the text's (``_behind_text``, recorded as ``reverse_behind_text_frac``), so a
severity always says what the bleed does to the text. Without one (a
lone page in a notebook or a benchmark) the op falls back to this page's own print, mirrored
left-right about the middle of its text and dropped a millimetre at most, recorded as ``source: self_mirrored``.

Paper diffuses what soaks through it: the stronger the bleed, the wider its blur (never sharper
when darker). Severity is graded on what it does to the front text: the share of the front's text
area (paper pixels of its text boxes) that the bleed visibly darkens, by at least a tenth of the
front print's contrast. At severities 2 and 3 the op aims at a share inside the bin and sets the
strength for it when it meets the reverse page (one quantile, recorded in the measure); a reverse
page whose print barely meets the front's text cannot reach severity 3, and the record says so
(``text_obscured`` below the bin, ``strength`` at its ceiling).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo import register
from perturb.photo.base import DegradationError, Op, Rubric, quantile
from perturb.photo.functional.ink import VISIBLE_BLEED, front_levels, reverse_ink, show_through
from perturb.photo.measure import CONTENT_KINDS, luma
from synth.records import RenderedPage

# Share of the front's text area (paper pixels of its text boxes) the bleed visibly darkens: 1 slight, no
# effect; 2 heavy, partly obscures; 3 obscures the content. Mirrored reverse print meets only part of the
# front's text (a few tenths of its boxes' area on worksheets), hence the small shares.
BINS = {1: (0.0, 0.008), 2: (0.008, 0.025), 3: (0.025, 1.0)}
_TARGET = {2: (0.012, 0.017), 3: (0.05, 0.15)}
_STRENGTH = {1: (0.045, 0.08), 2: (0.12, 0.6), 3: (0.4, 1.0)}  # severity 1 as drawn; 2-3 the bounds of the solve
_DIFFUSION_AT_150 = {1: (0.8, 1.2), 2: (1.4, 2.0), 3: (2.2, 3.0)}  # Gaussian sigma, px at 150 dpi: wetter is wider
# How far the strength may be off (the photo's rounding to grey levels), and the share kept from the bin's ends.
_FUZZ, _SPARE = 0.05, 0.001


def _reverse_print(image: np.ndarray, params: dict[str, Any], duplex: str = "long_edge",
                   behind: tuple[float, float] = (0.0, 0.0)) -> tuple[np.ndarray, list[float]]:
    """The reverse side's luma as seen through the sheet (mirrored), and its offset: the duplex misalignment, plus
    ``behind`` (fractions of the page) for a reverse whose print is laid out behind the front's (``_behind_text``)."""
    h, w = image.shape[:2]
    if params["source"] == "self_mirrored":
        return cv2.flip(luma(image), 1), params["offset_frac"]
    reverse = params.get("_reverse")
    if reverse is None:
        raise DegradationError("bleed_through params say source=reverse_page; replaying them needs the same"
                               " reverse page: pass degrade(..., reverse=ReversePage(pixels, ref))")
    back = luma(reverse)
    if back.shape != (h, w):
        back = cv2.resize(back, (w, h), interpolation=cv2.INTER_AREA)
    dx, dy = params["duplex_offset_frac"]
    return cv2.flip(back, 0 if duplex == "short_edge" else 1), [dx + behind[0], dy + behind[1]]


_EDGE = 0.02  # the reverse's print, laid out behind the front's text, stays this far inside the sheet (of its size)
# A reverse is laid out behind the front's text when, as printed, it shows on less of the text than this at severity
# 3's darkest ink (1.5 times severity 3's floor: the quarter-size copy's estimate, with room for the full page's).
_BEHIND_BELOW = 1.5 * BINS[3][0]


def _backing(text: np.ndarray, ink: np.ndarray, lo: int, hi: int) -> int:
    """The shift d in [lo, hi] (pixels along one axis) that puts most of the reverse's ink profile ``ink`` on the
    front's text profile ``text`` (sum of text[r] ink[r - d]; counts, so exact), the smallest |d| among equals."""
    score = np.convolve(text, ink[::-1])  # score[d + len(ink) - 1] = sum over r of text[r] * ink[r - d]
    shifts = np.arange(lo, hi + 1)
    at = score[np.clip(shifts + len(ink) - 1, 0, len(score) - 1)]
    best = shifts[at == at.max()]
    return int(best[np.argmin(np.abs(best))])


def _behind_text(text: np.ndarray, back: np.ndarray, duplex: str) -> tuple[float, float]:
    """The shift (fractions of the page) that lays the reverse's print (``back``, its luma at the size of the front's
    text mask ``text``), as seen through the sheet, behind the front's text: the rows of its print on the rows of the
    front's text and its columns on the text's columns, as far as its print stays on its sheet. A reverse laid out so
    its print backs the front's, as a duplex printer backs up a page's text area (zero when either side has no
    print)."""
    # Seen through the sheet the reverse is mirrored: left-right on a long-edge duplex, top-bottom on a short-edge one.
    ink = cv2.flip(back, 0 if duplex == "short_edge" else 1) < 160
    if not text.any() or not ink.any():
        return 0.0, 0.0
    shift = []
    for axis in (1, 0):  # x: columns (summed over rows), then y: rows
        front, rear = text.sum(axis=1 - axis).astype(np.int64), ink.sum(axis=1 - axis).astype(np.int64)
        n, where = len(rear), np.flatnonzero(rear)
        edge = int(np.ceil(_EDGE * n))
        lo, hi = edge - int(where[0]), n - edge - int(where[-1]) - 1  # its print kept _EDGE inside the sheet
        shift.append(_backing(front, rear, lo, hi) / n if lo <= hi else 0.0)
    return round(shift[0], 4), round(shift[1], 4)


def _text_centre_shift(page: RenderedPage) -> float:
    """How far (a fraction of the width) to shift the mirrored page so it mirrors about its text's middle."""
    text = [b for b in page.layout if b.kind in CONTENT_KINDS]
    if not text:
        return 0.0
    centre = (min(b.x0 for b in text) + max(b.x1 for b in text)) / 2
    return (2 * centre - page.width) / page.width


def _text_boxes(image: np.ndarray, page: RenderedPage) -> list[tuple[int, int, int, int]]:
    """The front's text boxes (headers, question lines, options, steps, the answer line) in image px."""
    sx, sy = image.shape[1] / page.width, image.shape[0] / page.height
    return [(int(b.x0 * sx), int(b.y0 * sy), int(np.ceil(b.x1 * sx)), int(np.ceil(b.y1 * sy)))
            for b in page.layout if b.kind in CONTENT_KINDS and b.x1 > b.x0 and b.y1 > b.y0]


def _text_mask(image: np.ndarray, page: RenderedPage) -> np.ndarray:
    """The front's text boxes (``_text_boxes``) as a mask of ``image``'s pixels."""
    text = np.zeros(image.shape[:2], bool)
    for x0, y0, x1, y1 in _text_boxes(image, page):
        text[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = True
    return text


_Front = tuple[np.ndarray, np.ndarray, float]  # the paper pixels of the front's text area, their luma, print contrast


def _front(image: np.ndarray, text: np.ndarray) -> _Front | None:
    """What the bleed's strength is solved against, once per image (every way round and placement of the reverse
    shares it): the paper pixels of the front's text area (``text``, its boxes' mask), their luma, and the front
    print's contrast; None without such pixels."""
    y = luma(image)
    pick = text & (y > 200)
    if not pick.any():
        return None
    paper, darkest = front_levels(y.astype(np.float32))
    return pick, y[pick].astype(np.float32), paper - darkest


def _strength_for(front: _Front | None, ink: np.ndarray, target: float, bounds: tuple[float, float],
                  tint: list[float]) -> float:
    """The strength at which the bleed visibly darkens (by ``VISIBLE_BLEED`` of the print's contrast) a
    ``target`` share of the front's text area, within ``bounds``, kept inside the target's rubric bin. A pixel of
    luma ``y`` darkens by ``y * strength * ink * k`` (``k`` the tint's luma weight), so each pixel has the strength
    from which it shows the bleed, and the answer is one quantile of those, no search.

    Many paper pixels under one diffused stroke of the reverse need the same strength, so the share can jump at one
    strength (on page 229 of the bench, from 1.4 to 2.5 % of the text area within 2 % of strength), and the photo's
    rounding to whole grey levels moves each pixel's threshold by a few per cent: the strength is kept where 5 %
    more or less of it still lands inside the bin (with a tenth of a point to spare), else halfway (in ratio)
    between the two ends."""
    need = _needs(front, ink, tint)
    if need is None:
        return bounds[1]
    n = need.size
    # The bin the target lies in (every severity's targets do); a replayed target outside them all is aimed at as is.
    lo_share, hi_share = next((b for b in BINS.values() if b[0] <= target < b[1]), (0.0, 1.0))
    # The weakest strength that shows the bleed on more than the bin's low end, and the strongest that shows it on
    # no more than its high end (the pixels needing exactly that strength count, so it stops short of them).
    weakest = float(need[min(n - 1, int(np.ceil((lo_share + _SPARE) * n)))])
    strongest = float(need[int((hi_share - _SPARE) * n)]) * (1 - 1e-6) if hi_share - _SPARE < 1.0 else np.inf
    low, high = weakest / (1 - _FUZZ), strongest / (1 + _FUZZ)
    aim = float(np.quantile(need, target))
    strength = min(max(aim, low), high) if low <= high else float(np.sqrt(low * high))
    strength = float(np.clip(strength, *bounds))
    # The severity's weakest ink is drawn to be heavier than severity 1's, but the bin comes first: a reverse laid out
    # behind the text may show through on more than the bin allows even at that ink (photo_sweep with seed 31337,
    # page 33: 2.54 % of the text area at severity 2's 0.12, its bin 0.8-2.5 %); it gets less.
    if low <= high < strength:
        strength = high
    # A reverse whose print barely meets the front's text leaves it under the bin at the severity's strongest ink
    # (severity 2's 0.6: two of 200 pages in a scanned copy at 0.56 and 0.68 % of the text area, under 0.8 %): it
    # gets the ink the bin's floor needs, as dark as severity 3's at most, and no darker. A page inside the bin at
    # that ink keeps it (darker, a page's severity 2 read worse than its 3 by tesseract: bench page 10).
    at_most = np.searchsorted(need, strength, side="right") / n  # the share this strength shows the bleed on
    return low if at_most < lo_share and low <= _STRENGTH[3][1] else strength


def _needs(front: _Front | None, ink: np.ndarray, tint: list[float]) -> np.ndarray | None:
    """The strength from which each paper pixel of the front's text area (``_front``) shows the bleed, sorted
    (``_strength_for``); None without such pixels."""
    if front is None:
        return None
    pick, y, contrast = front
    k = float(np.dot([0.299, 0.587, 0.114], 2.0 - np.asarray(tint, float)))
    return np.sort(VISIBLE_BLEED * contrast / (y * np.maximum(ink[pick], 1e-6) * k))


def _reach(front: _Front | None, ink: np.ndarray, strength: float, tint: list[float]) -> float:
    """The share of the front's text area the bleed visibly darkens at ``strength`` (0 without text to darken)."""
    need = _needs(front, ink, tint)
    return 0.0 if need is None else float(np.searchsorted(need, strength, side="right") / need.size)


class BleedThrough(Op):
    subtype = "bleed_through"
    family = "interference"
    rubric = Rubric("text_obscured", BINS, "front text area under visible reverse print", "%")
    stage = "reverse"
    uses_reverse = True

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        # Common random numbers across severities: every draw is made at every severity in the same order, and the
        # severity only turns the page's quantiles into its own ranges.
        u_diffusion = float(rng.random())
        params: dict[str, Any] = {
            "source": "self_mirrored",
            "diffusion_px": round(quantile(_DIFFUSION_AT_150[severity], u_diffusion) * page.dpi / 150, 4),
            # The fallback's own print, mirrored about the middle of its text (a stand-in reverse laid out like
            # the front meets the front's text as a real worksheet's would) and dropped a millimetre at most so its
            # lines do not sit exactly on the front's.
            "offset_frac": [round(_text_centre_shift(page), 4),
                            round(float(rng.uniform(0.001, 0.004) * rng.choice([-1, 1])), 4)],
            # A duplex printer's front-to-back misalignment, a millimetre or two; most sheets flip on the long edge.
            "duplex_offset_frac": np.round(rng.uniform(-0.008, 0.008, 2), 4).tolist(),
            "tint": [1.0, round(float(rng.uniform(0.97, 1.0)), 4), round(float(rng.uniform(0.9, 0.97)), 4)]}
        u = float(rng.random())
        if severity == 1:
            params["strength"] = round(quantile(_STRENGTH[1], u), 4)
        else:
            params["target_text_obscured"] = round(quantile(_TARGET[severity], u), 4)
            params["strength_bounds"] = list(_STRENGTH[severity])
        # Printed on the long or the short edge: one sheet at every severity, the way that shows severity 3's share
        # of this page (its quantile, and its diffusion) with less ink, decided on meeting the reverse page, the same
        # way on every replay; the measure says which. (Chosen per severity, a page's severities 1 and 2 showed
        # different reverse text on 8 of 24 bench pages, and tesseract read the severer photo better on 4 of them.)
        params["duplex"] = "either"
        params["duplex_aim"] = [round(quantile(_TARGET[3], u), 4),
                                round(quantile(_DIFFUSION_AT_150[3], u_diffusion) * page.dpi / 150, 4)]
        return params

    def _duplex(self, image: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> tuple[str, tuple[float, float]]:
        """Which way the sheet was printed, and where the reverse's print lies on its side (``_behind_text``'s shift,
        or none): recorded, or (``either``) the way that shows the target through with less ink, judged on a
        quarter-size copy so applying and measuring agree at a small cost.

        The reverse is a real other page, laid out as it was printed, so its print often lies beside the front's
        text: a worksheet of short lines at the top left shows its reverse's short lines at the top right, in the
        empty half, at any strength. Where neither way round shows this page's severity-3 share of the front's text
        (``duplex_aim``), nor 1.5 times severity 3's floor, at severity 3's darkest ink, the reverse is laid out
        behind the front's text (``_behind_text``), for every severity of the page, if it reaches more there: the
        severity then says what the bleed does to the text, as the rubric grades it, where before a severity-2
        record could measure no text obscured at all."""
        duplex = str(params.get("duplex", "long_edge"))
        if params["source"] == "self_mirrored":  # the page's own print has one way round
            return "long_edge", (0.0, 0.0)
        if duplex != "either":
            return duplex, (0.0, 0.0)
        small = cv2.resize(image, (max(16, image.shape[1] // 4), max(16, image.shape[0] // 4)),
                           interpolation=cv2.INTER_AREA)
        reverse = params.get("_reverse")
        quarter = {**params, "_reverse": None if reverse is None else
                   cv2.resize(reverse, small.shape[1::-1], interpolation=cv2.INTER_AREA)}
        if "duplex_aim" in params:  # severity 3's share and diffusion for this page, at every severity
            target, diffusion = (float(v) for v in params["duplex_aim"])
            lo, hi = _STRENGTH[3]
        else:  # recorded before the aim: this severity's own
            target, diffusion = float(params["target_text_obscured"]), float(params["diffusion_px"])
            lo, hi = params["strength_bounds"]
        sigma = diffusion * small.shape[1] / page.width
        text = _text_mask(small, page)
        front = _front(small, text)
        ways = ("long_edge", "short_edge")
        inks = {way: reverse_ink(*_reverse_print(small, quarter, way), sigma) for way in ways}
        need = {way: _strength_for(front, inks[way], target, (float(lo), float(hi)), params["tint"]) for way in ways}
        way = "short_edge" if need["short_edge"] < need["long_edge"] - 1e-6 else "long_edge"
        if "duplex_aim" not in params or quarter["_reverse"] is None:
            return way, (0.0, 0.0)
        reach = {(w, (0.0, 0.0)): _reach(front, inks[w], float(hi), params["tint"]) for w in ways}
        if max(reach.values()) >= min(target, _BEHIND_BELOW):
            return way, (0.0, 0.0)
        back = luma(quarter["_reverse"])
        behind = {w: _behind_text(text, back, w) for w in ways}
        inks = {w: reverse_ink(*_reverse_print(small, quarter, w, behind[w]), sigma) for w in ways}
        reach.update({(w, behind[w]): _reach(front, inks[w], float(hi), params["tint"]) for w in ways})
        moved = [w for w in ways if reach[(w, behind[w])] >= target]
        if moved:  # laid out behind the text it reaches the target: the way round that needs less ink
            need = {w: _strength_for(front, inks[w], target, (float(lo), float(hi)), params["tint"]) for w in moved}
            way = min(moved, key=lambda w: (need[w], w != "long_edge"))
            return way, behind[way]
        # Neither reaches it: the placement that shows the bleed on the most text (as printed, among equals).
        return max(reach, key=lambda k: (reach[k], not any(k[1]), k[0] == "long_edge"))

    def _ink_and_strength(self, image: np.ndarray, params: dict[str, Any],
                          page: RenderedPage) -> tuple[np.ndarray, float, str]:
        sigma = float(params["diffusion_px"]) * image.shape[1] / page.width
        duplex, behind = self._duplex(image, params, page)
        ink = reverse_ink(*_reverse_print(image, params, duplex, behind), sigma)
        if "strength" in params:
            return ink, float(params["strength"]), duplex
        lo, hi = params["strength_bounds"]
        return ink, _strength_for(_front(image, _text_mask(image, page)), ink, float(params["target_text_obscured"]),
                                  (float(lo), float(hi)), params["tint"]), duplex

    def apply(self, image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> tuple[np.ndarray, RenderedPage]:
        ink, strength, _ = self._ink_and_strength(image, params, page)
        return show_through(image, ink, strength, params["tint"]), page

    def measure(self, before: np.ndarray, after: np.ndarray, params: dict[str, Any],
                page: RenderedPage) -> dict[str, Any]:
        b, a = luma(before).astype(np.float32), luma(after).astype(np.float32)
        paper_level, ink_level = front_levels(b)  # darkest front print; thin strokes at low dpi are rarely fully dark
        contrast = max(paper_level - ink_level, 1.0)
        front_paper = b > 200
        darkening = b - a
        on_paper = darkening[front_paper]
        bleed = float(np.percentile(on_paper, 99.9)) if on_paper.size else 0.0
        visible = darkening >= VISIBLE_BLEED * contrast
        text = _text_mask(before, page)
        duplex, behind = self._duplex(before, params, page)
        return {"duplex": duplex,
                # Where the reverse's print was laid out behind the front's text (``_duplex``): its shift on the page.
                **({"reverse_behind_text_frac": list(behind)} if any(behind) else {}),
                "text_obscured": round(float(visible[text & front_paper].mean()) if (text & front_paper).any()
                                       else 0.0, 4),
                "bleed_contrast": round(bleed / contrast, 4),
                "blank_obscured": round(float(visible[front_paper & ~text].mean()) if (front_paper & ~text).any()
                                        else 0.0, 4),
                "strength": round(float(on_paper.max() / max(paper_level, 1.0)) if on_paper.size else 0.0, 4),
                "blur_px_at_150": round(float(params["diffusion_px"]) * 150 / page.dpi, 3)}


register(BleedThrough())
