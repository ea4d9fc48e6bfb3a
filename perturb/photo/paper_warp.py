"""Paper warp: a bent, folded or curling sheet, as one displacement field with matching shading."""

from __future__ import annotations

from typing import Any

import numpy as np

from perturb.photo import register
from perturb.photo.fields import FIELD_STEP, grid
from perturb.photo.fusion import GeometricOp, Warp
from perturb.photo.geometry import sample_desk
from synth.records import RenderedPage

# Largest deviation of a printed straight line from straight, as a fraction of page width.
# 1 minor fold, no impact; 2 moderate warp; 3 severe bending or curling.
BINS = {1: (0.002, 0.01), 2: (0.01, 0.03), 3: (0.03, 0.15)}
_TARGET = {1: (0.003, 0.008), 2: (0.013, 0.026), 3: (0.036, 0.07)}
_KINDS = {1: ("fold", "bend"), 2: ("fold", "bend", "curl"), 3: ("bend", "curl")}
_S = np.linspace(-1.0, 1.0, 1025)  # profile coordinate, in page widths from the centre
_CREASE_WIDTH = 0.004  # a fold's dark crease line, page widths


def _profile(params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Height (fraction of width) along the profile axis, and its slope, tabulated over _S."""
    kind, s0 = params["kind"], float(params["s0"])
    if kind == "bend":
        f = np.cos(2 * np.pi * _S / float(params["period"]) + float(params["phase"]))
    elif kind == "fold":  # a crease: two flat panels meeting at s0, ridge or valley
        f = -np.abs(_S - s0) * float(params["ridge"])
    else:  # curl: the sheet lifts off the desk quadratically past s0
        f = np.maximum(0.0, _S - s0) ** 2 * 4
    h = float(params["amplitude"]) * f
    return h, np.gradient(h, _S)


def _foreshortening(slope: np.ndarray) -> np.ndarray:
    """How far each profile point moves towards the centre as the sheet tilts out of the page plane."""
    fore = np.cumsum(1.0 - 1.0 / np.sqrt(1.0 + slope**2)) * (_S[1] - _S[0])
    return fore - np.interp(0.0, _S, fore)


def forward_map(params: dict[str, Any], page: RenderedPage):
    """Page pixel -> photo pixel: parallax of the lifted sheet plus foreshortening along the profile."""
    h_tab, slope = _profile(params)
    fore = _foreshortening(slope)
    a = np.deg2rad(float(params["axis_deg"]))
    n = np.array([np.cos(a), np.sin(a)])
    w = float(page.width)
    c = np.array([page.width / 2, page.height / 2])
    zoom = float(params.get("zoom", 1.0))  # the camera backs off so the lifted sheet stays in frame

    def forward(p: np.ndarray) -> np.ndarray:
        d = p - c
        s = (d @ n) / w
        h = np.interp(s, _S, h_tab)
        return c + zoom * (d * (1.0 + h)[:, None] - np.outer(np.interp(s, _S, fore) * w, n))

    return forward, h_tab, slope, n


def shading(params: dict[str, Any], s: np.ndarray, h_tab: np.ndarray, slope: np.ndarray,
            min_crease: float = 0.0) -> np.ndarray:
    """Lambertian light on the bent sheet, relative to a flat sheet, plus a dark crease for folds.

    The shading is sampled on a grid of the page (fusion.sheet_shading), so a crease narrower than about a
    grid spacing would alias into dashes: ``min_crease`` (page widths) widens it, keeping its total darkening.
    """
    sl = np.interp(s, _S, slope)
    shade = (1.0 - sl * float(params["light_slant"])) / np.sqrt(1.0 + sl**2)
    if params["kind"] == "fold":
        width = max(_CREASE_WIDTH, min_crease)
        depth = 0.12 * _CREASE_WIDTH / width
        shade = shade * (1.0 - depth * np.exp(-(((s - float(params["s0"])) / width) ** 2)))
    # Facets turned to the light cannot get much whiter than white paper.
    return np.clip(shade, 0.3, 1.03)


def line_bow(forward, page: RenderedPage, zoom: float = 1.0) -> float:
    """Largest deviation from straight of mapped page rows and columns, in photographed page widths."""
    t = np.linspace(0, 1, 41)
    f = np.linspace(0.05, 0.95, 10)
    rows = np.stack(np.broadcast_arrays(t[None, :] * page.width, f[:, None] * page.height), -1)
    cols = np.stack(np.broadcast_arrays(f[:, None] * page.width, t[None, :] * page.height), -1)
    lines = np.concatenate([rows, cols])  # (20 lines, 41 points, xy), mapped in one call
    q = forward(lines.reshape(-1, 2)).reshape(lines.shape)
    chord = q[:, -1] - q[:, 0]
    normal = np.stack([-chord[:, 1], chord[:, 0]], 1) / np.maximum(np.linalg.norm(chord, axis=1), 1e-9)[:, None]
    deviation = np.abs(np.einsum("lpk,lk->lp", q - q[:, :1], normal))
    return float(deviation.max()) / page.width / zoom


def inverse_map(params: dict[str, Any], page: RenderedPage):
    """Photo point -> page point.

    The forward map moves a point along the profile axis n by a function of its profile coordinate
    s alone, u(s) = s (1 + h(s)) - fore(s), and scales its other coordinate by 1 + h(s). So the inverse
    reads s back from a table of u (one interpolation), then undoes the scale: exact to the tables'
    resolution, and one polishing step of the fixed-point iteration takes it below 1e-4 px. Where
    u(s) is not increasing (never for the sampled ranges) it falls back to iterating from scratch.
    """
    forward, h_tab, slope, n = forward_map(params, page)
    u_tab = _S * (1.0 + h_tab) - _foreshortening(slope)
    w = float(page.width)
    c = np.array([page.width / 2, page.height / 2])
    zoom = float(params.get("zoom", 1.0))
    perp = np.array([-n[1], n[0]])
    monotonic = bool(np.all(np.diff(u_tab) > 0))

    def inverse(q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, np.float64)
        if monotonic:
            d = q - c
            u = (d @ n) / (zoom * w)
            s = np.interp(u, u_tab, _S)
            # Beyond the table the forward map is affine (h and fore held at their end values).
            below, above = u < u_tab[0], u > u_tab[-1]
            s[below] = _S[0] + (u[below] - u_tab[0]) / (1.0 + h_tab[0])
            s[above] = _S[-1] + (u[above] - u_tab[-1]) / (1.0 + h_tab[-1])
            across = (d @ perp) / (zoom * (1.0 + np.interp(s, _S, h_tab)))
            p = c + np.outer(s * w, n) + np.outer(across, perp)
            rounds = 1
        else:
            p, rounds = np.array(q), 12
        for _ in range(rounds):
            step = q - forward(p)
            p += step
            if np.abs(step).max() < 1e-4:  # pixels; converged long before the map's interpolation error
                break
        return p

    return inverse


def shade_map(params: dict[str, Any], page: RenderedPage):
    """Lighting gain at photo points, from where on the sheet they come from (``p``)."""
    _, h_tab, slope, n = forward_map(params, page)
    centre = np.array([page.width / 2, page.height / 2])

    # 1.25 spacings of the FIELD_STEP grid the shading is applied on (fusion.sheet_shading).
    min_crease = 1.25 * FIELD_STEP / page.width

    def shade(p: np.ndarray) -> np.ndarray:
        return shading(params, ((p - centre) @ n) / page.width, h_tab, slope, min_crease)

    return shade


def _amplitude_for(params: dict[str, Any], page: RenderedPage, target: float) -> float:
    """The amplitude whose line bow is ``target``, by regula falsi (Illinois) on the bracket [0, 0.6].

    The bow grows with the amplitude and almost in proportion, so this takes 4-8 evaluations of the map
    where bisection to the same 1e-6 took 20; the bracket is kept, so it cannot diverge.
    """
    def excess(amplitude: float) -> float:
        return line_bow(forward_map({**params, "amplitude": amplitude}, page)[0], page) - target

    a, fa, b, fb = 0.0, -target, 0.6, excess(0.6)
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


class PaperWarp(GeometricOp):
    subtype = "paper_warp"
    family = "perspective"
    stage_rank = 0  # the sheet's own shape comes before the camera's pose

    def sample_params(self, rng: np.random.Generator, severity: int, page: RenderedPage) -> dict[str, Any]:
        kind = str(rng.choice(_KINDS[severity]))
        axis = float(rng.choice([0.0, 90.0, 180.0, 270.0]) + rng.normal(0, 6 if kind != "fold" else 2))
        params: dict[str, Any] = {
            "kind": kind, "axis_deg": round(axis, 3),
            "s0": round(float(rng.uniform(-0.15, 0.15) if kind == "fold" else rng.uniform(0.05, 0.3)), 4),
            "period": round(float(rng.uniform(1.0, 2.2)), 4), "phase": round(float(rng.uniform(-0.6, 0.6)), 4),
            "ridge": 1.0 if rng.random() < 0.5 else -1.0,
            "light_slant": round(float(rng.uniform(-0.5, 0.5)), 4),
            **sample_desk(rng),
        }
        target = float(rng.uniform(*_TARGET[severity]))
        params["amplitude"] = round(_amplitude_for(params, page, target), 6)
        if kind == "curl":  # a lifted edge turns away from overhead light, so it darkens
            params["light_slant"] = abs(params["light_slant"]) + 0.2
        # Zoom out until the warped outline fits the frame with a small desk margin.
        t = np.linspace(0, 1, 64)
        w, h = page.width, page.height
        border = np.concatenate([np.stack([t * w, 0 * t], 1), np.stack([t * w, 0 * t + h], 1),
                                 np.stack([0 * t, t * h], 1), np.stack([0 * t + w, t * h], 1)])
        ext = np.abs(forward_map(params, page)[0](border) - [w / 2, h / 2]).max(axis=0)
        margin = 0.015 * w
        fit = min((w / 2 - margin) / ext[0], (h / 2 - margin) / ext[1])
        params["zoom"] = round(min(float(rng.uniform(0.93, 0.985)), fit), 5)
        return params

    def warp(self, params: dict[str, Any], page: RenderedPage) -> Warp:
        return Warp(page.width, page.height, forward_map(params, page)[0], inverse_map(params, page),
                    shade=shade_map(params, page), bends=True)

    def measure_warp(self, params: dict[str, Any], page: RenderedPage, warp: Warp,
                     outline: np.ndarray) -> dict[str, Any]:
        xs, ys = grid(page.height, page.width, 32)
        pts = np.stack([xs.ravel(), ys.ravel()], 1)
        moved = warp.forward(pts) - pts
        shade = warp.shade(warp.inverse(pts))
        zoom = float(params.get("zoom", 1.0))
        return {"kind": params["kind"], "line_bow_frac": round(line_bow(warp.forward, page, zoom), 5),
                "max_displacement_frac": round(float(np.linalg.norm(moved, axis=1).max()) / page.width, 5),
                "shade_range": [round(float(shade.min()), 4), round(float(shade.max()), 4)]}


register(PaperWarp())
