"""Paper warp: a bent, folded or curling sheet, as one displacement field with matching shading."""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.base import Rubric, quantile
from perturb.photo.functional.geometric import Warp, bent_sheet_warp, forward_map, max_amplitude
from perturb.photo.functional.lighting import grid
from perturb.photo.fusion import GeometricOp, sample_desk
from perturb.photo.measure import line_bow, text_line_bow, text_line_curvature, text_lines
from synth.records import RenderedPage

# How curved the writing is (``text_line_curvature``): the most curved text line's sag relative to its length, as
# the sag of a line across the text column, in page widths: graded on how bent the writing looks, not on the sheet's
# edges, nor on the sag itself (which needs a worksheet of short lines bent into a corrugated sheet to reach
# severity 3). 1 minor fold, no impact; 2 moderate warp; 3 severe bending or curling.
BINS = {1: (0.002, 0.01), 2: (0.01, 0.03), 3: (0.03, 0.15)}
# Severities 1 and 2 are aimed apart (a reader's response to a step up in curvature on a page of short lines is
# small; benchmarks/results_cer.md), each inside its bin.
_TARGET = {1: (0.003, 0.006), 2: (0.018, 0.028), 3: (0.036, 0.07)}
_KINDS = {1: ("fold", "bend"), 2: ("bend", "curl"), 3: ("bend", "curl")}
# The sheet's shape is drawn once per page, whatever the severity (common random numbers: severity 3 is the same
# sheet as severity 1, bent further): a kind the severity's rubric does not have becomes a bend (a curl is not a
# minor fold, a fold is not severe bending). A fold is minor only: from severity 2 the page is bent, as at 3, so a
# page's severities 2 and 3 are always one shape (a fold at 2 and a bend at 3 framed the sheet at different
# sizes, and a reader read the severer photo better: benchmarks/results_cer.md).
_KIND_WEIGHTS = {"bend": 0.45, "fold": 0.3, "curl": 0.25}
# A bend's period as sampled, then shortened in turn if need be.
_WAVES = {"bend": (1.0, 0.7, 0.5, 0.35), "fold": (1.0,), "curl": (1.0,)}


def _amplitude_for(params: dict[str, Any], page: RenderedPage, target: float, lines: np.ndarray) -> float:
    """The amplitude whose text-line curvature is ``target``, by regula falsi (Illinois) on the bracket from 0 to the
    amplitude that lifts the sheet MAX_LIFT (``max_amplitude``); ``lines`` is ``text_lines(page)``.

    The curvature grows with the amplitude and almost in proportion, so this takes 4-8 evaluations of the map
    where bisection to the same 1e-6 took 20; the bracket is kept, so it cannot diverge.
    """
    def excess(amplitude: float) -> float:
        return text_line_curvature(forward_map({**params, "amplitude": amplitude}, page)[0], page, lines=lines) - target

    top = max_amplitude(params, page)
    a, fa, b, fb = 0.0, -target, top, excess(top)
    if fb <= 0:
        return b
    side = 0
    for _ in range(40):
        c = (a * fb - b * fa) / (fb - fa)
        fc = excess(c)
        if abs(fc) <= 1e-5 * target or b - a < 1e-7:
            return c
        if fc > 0:
            b, fb = c, fc
            fa, side = (fa / 2, -1) if side == -1 else (fa, -1)
        else:
            a, fa = c, fc
            fb, side = (fb / 2, 1) if side == 1 else (fb, 1)
    return (a + b) / 2


def _kind_at(kind: str, severity: int) -> str:
    """The page's drawn kind as severity ``severity`` has it: a bend where the rubric has no such kind."""
    return kind if kind in _KINDS[severity] else "bend"


def _start(kind: str, u: float) -> float:
    """Where a sheet's bend starts (``s0``) at quantile ``u``: a fold's crease near the middle, a curl from a little
    before or past it (rolled up from further out, its last few centimetres would stand up like a wall)."""
    return round(-0.15 + 0.3 * u if kind == "fold" else -0.1 + 0.2 * u if kind == "curl" else 0.05 + 0.25 * u, 4)


class PaperWarp(GeometricOp):
    subtype = "paper_warp"
    family = "perspective"
    rubric = Rubric("text_line_curvature_frac", BINS,
                    "text-line curvature, as the bow of a line across the text column,", "% of the width")
    stage_rank = 0  # the sheet's own shape comes before the camera's pose

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        # Every draw is made in the same order with the same distribution at every severity, and severity only
        # turns the page's quantiles into its own range: a page's severities are one sheet, bent more each time.
        drawn = str(rng.choice(list(_KIND_WEIGHTS), p=list(_KIND_WEIGHTS.values())))
        kind = _kind_at(drawn, severity)
        turns = [float(t) for t in rng.permutation([0.0, 90.0, 180.0, 270.0])]
        # A crease, and a curled edge, run along the sheet's edge (a curl turned 6 degrees spends its lift on a corner
        # off the writing); a bend's axis wanders more. A page drawn to curl has the curl's axis at every severity, as
        # the bend it is at severity 1 (or where the curl cannot reach its writing).
        axis = turns[0] + float(rng.normal(0, 1)) * (2 if kind == "fold" or drawn == "curl" else 6)
        u_s0 = float(rng.random())
        params: dict[str, Any] = {
            "kind": kind, "axis_deg": round(axis, 3),
            "s0": _start(kind, u_s0),
            "period": round(float(rng.uniform(1.0, 2.2)), 4), "phase": round(float(rng.uniform(-0.6, 0.6)), 4),
            "ridge": 1.0 if rng.random() < 0.5 else -1.0,
            "light_slant": round(float(rng.uniform(-0.35, 0.35)), 4),
            **sample_desk(rng),
        }
        u_target = float(rng.random())
        target = quantile(_TARGET[severity], u_target)
        # The turn and wave of a kind are chosen for the strongest bow this page's sheet is asked for at any severity
        # that has the kind, so a page bent (or curled) at several severities has one turn and wave at all of them,
        # whichever kind was drawn and whichever kinds the writing made it fall back on; only the amplitude changes.

        # A curl lifts one edge only, and on a worksheet written at the top it can bow the writing less than a bend
        # (MAX_CURL_LIFT): it is asked for its severities' lowest targets, and a page curled further than the sheet
        # can curl is curled as far as it can (``_amplitude_for`` stops at the lift), inside severity 3's bin still.
        def reach_of(shape: str) -> float:
            u = 0.0 if shape == "curl" else u_target
            return max(quantile(_TARGET[s], u) for s in _TARGET if shape in _KINDS[s])

        # A sheet bent about an axis along the writing shifts its lines without bowing them, and a curl that
        # lifts only a margin bends no writing: of the four turns (and, for a curl, starts nearer the middle),
        # take the one whose text lines bow most for how much the whole sheet bows, among those that can reach
        # the kind's ``reach_of``. A page whose writing the drawn kind cannot reach takes the severity's other kinds
        # in turn; the most bowing turn when none can.
        # A sheet lifts MAX_LIFT at most, so a bend that cannot bow the writing enough that way is bent in shorter
        # waves (the same lift, more of it along each line) before the most bowing turn is taken.
        # (params, the writing's curvature, it / sheet bow, what its kind must reach); the ratio is only compared among
        # the turns that reach, so it is found for those alone.
        found: list[tuple[dict[str, Any], float, float | None, float]] = []
        lines = text_lines(page)  # the page's text lines, mapped by every turn tried
        shapes = [kind] + [k for k in _KINDS[severity] if k != kind]
        for shape, period in ((k, params["period"] * f) for k in shapes for f in _WAVES[k]):
            if any(bow >= 1.05 * r for _, bow, _, r in found):
                break
            reach = reach_of(shape)
            s0 = _start(shape, u_s0)  # where this kind starts, from the page's one draw: as the severities of that kind
            starts = [s0] + ([round(s0 - d, 4) for d in (0.2, 0.4, 0.6)] if shape == "curl" else [])
            for start, turn in ((st, t) for st in starts for t in turns):
                trial = {**params, "kind": shape, "s0": start, "axis_deg": round(turn + axis - turns[0], 3),
                         "period": round(period, 4)}
                forward = forward_map({**trial, "amplitude": max_amplitude(trial, page)}, page)[0]
                bow = text_line_curvature(forward, page, lines=lines)
                found.append((trial, bow, bow / max(line_bow(forward, page), 1e-9) if bow >= 1.05 * reach else None,
                              reach))
        reaching = [f for f in found if f[1] >= 1.05 * f[3]]
        params = max(reaching, key=lambda f: f[2])[0] if reaching else max(found, key=lambda f: f[1])[0]
        params["amplitude"] = round(_amplitude_for(params, page, target, lines), 6)
        if params["kind"] == "curl":  # a lifted edge turns away from overhead light, so it darkens
            params["light_slant"] = round(abs(params["light_slant"]) + 0.1, 4)
        # Zoom out until the warped outline fits the frame with a small desk margin.
        t = np.linspace(0, 1, 64)
        w, h = page.width, page.height
        border = np.concatenate([np.stack([t * w, 0 * t], 1), np.stack([t * w, 0 * t + h], 1),
                                 np.stack([0 * t, t * h], 1), np.stack([0 * t + w, t * h], 1)])
        ext = np.abs(forward_map(params, page)[0](border) - [w / 2, h / 2]).max(axis=0)
        margin = 0.015 * w
        fit = min((w / 2 - margin) / ext[0], (h / 2 - margin) / ext[1])
        params["zoom"] = round(float(min(float(rng.uniform(0.93, 0.985)), fit)), 5)  # a JSON number
        return params

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        return bent_sheet_warp(params, page)

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        xs, ys = grid(page.height, page.width, 32)
        pts = np.stack([xs.ravel(), ys.ravel()], 1)
        moved = warp.forward(pts) - pts
        shade = warp.shade(warp.inverse(pts))
        zoom = float(params.get("zoom", 1.0))
        return {"kind": params["kind"],
                "text_line_curvature_frac": round(text_line_curvature(warp.forward, page, zoom), 5),
                "text_line_bow_frac": round(text_line_bow(warp.forward, page, zoom), 5),
                "line_bow_frac": round(line_bow(warp.forward, page, zoom), 5),
                "max_displacement_frac": round(float(np.linalg.norm(moved, axis=1).max()) / page.width, 5),
                "shade_range": [round(float(shade.min()), 4), round(float(shade.max()), 4)]}


register(PaperWarp())
