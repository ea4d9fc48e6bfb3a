"""Ink kernels: what is on or through the sheet before light falls on it.

Pen marks (question and figure marking) are drawn as anti-aliased polylines into a coverage mask and
multiplied onto the print (pen ink over print is darker than either); the reverse page's print shows
through the paper mirrored, shifted and diffused. Every stroke's wobble comes from a seed recorded in
the params, so a replay draws the same ink.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from synth.records import Box, RenderedPage

_SHIFT = 4  # cv2 draws anti-aliased polylines with sub-pixel coordinates in 1/16 px


def pen_lines(mask: np.ndarray, lines: list[np.ndarray], thickness: int) -> None:
    """Draw polylines (image px) into an 8-bit coverage ``mask`` in place, anti-aliased."""
    for line in lines:
        cv2.polylines(mask, [np.round(line * (1 << _SHIFT)).astype(np.int32)], False, 255, thickness=thickness,
                      lineType=cv2.LINE_AA, shift=_SHIFT)


def ink_over(image: np.ndarray, mask: np.ndarray, rgb: list[int]) -> np.ndarray:
    """``image`` with pen ink of colour ``rgb`` where ``mask`` covers it; only the inked band is touched."""
    out = image.copy()
    ys, xs = np.nonzero(mask.any(axis=1))[0], np.nonzero(mask.any(axis=0))[0]
    if ys.size == 0:
        return out
    region = np.s_[ys[0]:ys[-1] + 1, xs[0]:xs[-1] + 1]
    alpha = mask[region].astype(np.float32) / 255.0
    pen = 1.0 - np.asarray(rgb, np.float32) / 255.0
    gain = 1.0 - alpha[..., None] * pen  # pen ink multiplies with the print under it
    out[region] = cv2.multiply(image[region], gain, dtype=cv2.CV_8U)
    return out


# ------------------------------------------------------------------------------ question marking


def question_token_lines(page: RenderedPage) -> list[tuple[Box, Box]]:
    """Question tokens in reading order, each with the question line that holds it."""
    lines = [b for b in page.layout if b.kind == "question_line"]
    out = []
    for t in sorted((b for b in page.layout if b.kind == "question_token"), key=lambda b: int(b.ref)):
        line = next((ln for ln in lines if ln.y0 <= (t.y0 + t.y1) / 2 <= ln.y1), t)
        out.append((t, line))
    return out


def token_stroke(kind: str, x0: float, x1: float, y0: float, y1: float, rng: np.random.Generator) -> np.ndarray:
    """A pen stroke of ``kind`` over the token span x0..x1 of a line y0..y1 (image px)."""
    h = y1 - y0
    if kind == "circle":
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        rx, ry = (x1 - x0) / 2 + 0.3 * h, h / 2 + 0.12 * h
        start = rng.uniform(0, 2 * np.pi)
        t = np.linspace(start, start + 2 * np.pi + rng.uniform(0.2, 0.5), 60)
        wob = 1 + 0.04 * np.sin(3 * t + rng.uniform(0, 6)) + np.linspace(0, 0.06, t.size)
        return np.stack([cx + rx * wob * np.cos(t), cy + ry * wob * np.sin(t)], 1)
    if kind == "scribble":
        # Back-and-forth zigzag across the word's height, as when a student scratches a word out.
        n = max(3, int(round((x1 - x0) / (0.38 * h))))
        t = np.linspace(0, 1, 2 * n + 1)
        xs = x0 - 0.1 * h + (x1 - x0 + 0.2 * h) * t + rng.uniform(-0.06, 0.06, t.size) * h
        ys = np.where(np.arange(t.size) % 2 == 0, y0 + 0.12 * h, y1 - 0.1 * h) + rng.uniform(-0.08, 0.08, t.size) * h
        return np.stack([xs, ys], 1)
    y = y1 + 0.1 * h if kind == "underline" else (y0 + y1) / 2 - 0.05 * h
    t = np.linspace(0, 1, 24)
    xs = x0 - 0.15 * h + (x1 - x0 + 0.3 * h) * t
    ys = y + (rng.uniform(-0.08, 0.08) * h) * (t - 0.5) * 2 + 0.04 * h * np.sin(t * rng.uniform(4, 9))
    return np.stack([xs, ys], 1)


def mark_question(image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> np.ndarray:
    """Underlines, circles, strike-throughs and scribbles over the recorded runs of question tokens."""
    by_ref = {t.ref: (t, line) for t, line in question_token_lines(page)}
    h, w = image.shape[:2]
    sx, sy = w / page.width, h / page.height
    mask = np.zeros((h, w), np.uint8)
    thickness = max(1, round(float(params["width_px"]) * sx))
    for mark in params["marks"]:
        boxes = [by_ref[r] for r in mark["tokens"]]
        x0, x1 = min(t.x0 for t, _ in boxes) * sx, max(t.x1 for t, _ in boxes) * sx
        y0, y1 = boxes[0][1].y0 * sy, boxes[0][1].y1 * sy
        pen_lines(mask, [token_stroke(mark["kind"], x0, x1, y0, y1, np.random.default_rng(int(mark["seed"])))],
                  thickness)
    return ink_over(image, mask, params["rgb"])


# ------------------------------------------------------------------------------ figure marking


def figure_mark_lines(mark: dict[str, Any], rng: np.random.Generator) -> list[np.ndarray]:
    """Polylines of one mark in page units."""
    cx, cy = mark["centre"]
    r = float(mark["radius"])
    kind = mark["kind"]
    if kind == "circle":
        start = rng.uniform(0, 2 * np.pi)
        t = np.linspace(start, start + 2 * np.pi + rng.uniform(0.25, 0.6), 72)
        wob = 0.78 + 0.04 * np.sin(3 * t + rng.uniform(0, 6)) + np.linspace(0, 0.08, t.size)
        squash = rng.uniform(0.85, 1.0)
        return [np.stack([cx + r * wob * np.cos(t), cy + r * squash * wob * np.sin(t)], 1)]
    if kind == "arc":
        mid = np.deg2rad(float(mark["toward_deg"]))
        span = np.deg2rad(rng.uniform(55, 85))
        t = np.linspace(mid - span / 2, mid + span / 2, 32)
        rr = 0.8 * r * (1 + 0.03 * np.sin(t * 5 + rng.uniform(0, 6)))
        return [np.stack([cx + rr * np.cos(t), cy + rr * np.sin(t)], 1)]
    if kind == "tick":
        a = np.deg2rad(float(mark["tick_deg"]))
        u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])  # across, along the side
        n = int(mark.get("count", 2))
        lines = []
        for i in range(n):
            off = (i - (n - 1) / 2) * 0.35 * r
            base = np.array([cx, cy]) + v * off
            t = np.linspace(-0.8 * r, 0.8 * r, 8)[:, None]
            lines.append(base + t * u + v * rng.uniform(-0.04, 0.04) * r * t / r)
        return lines
    # scribble: back-and-forth hatching over the shape, one continuous pen path
    a = rng.uniform(0, np.pi)
    u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    passes = int(rng.integers(6, 11))
    pts = []
    for i in range(passes + 1):
        s = -1 + 2 * i / passes
        half = np.sqrt(max(0.0, 1 - s * s)) * rng.uniform(0.85, 1.0)
        end = half if i % 2 == 0 else -half
        pts.append(np.array([cx, cy]) + r * (s * v + end * u))
    path = np.array(pts)
    # Round the turns a little: a real scribble is a smooth zig-zag, not a polygon.
    fine = np.concatenate([np.linspace(path[i], path[i + 1], 8, endpoint=False) for i in range(len(path) - 1)])
    return [cv2.GaussianBlur(fine.astype(np.float64).reshape(-1, 1, 2), (1, 5), 1.0).reshape(-1, 2)]


def side_direction(image: np.ndarray, box: list[float], sx: float, sy: float) -> float | None:
    """Direction of the printed side near the box centre (principal axis of its ink), degrees."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2 * sx, (y0 + y1) / 2 * sy
    rad = max(4, int(0.05 * max((x1 - x0) * sx, (y1 - y0) * sy, 40)))
    win = image[max(0, int(cy) - rad):int(cy) + rad + 1, max(0, int(cx) - rad):int(cx) + rad + 1]
    ys, xs = np.nonzero(win.min(axis=2) < 128)
    if xs.size < 4:
        return None
    cov = np.cov(np.stack([xs, ys]).astype(np.float64))
    vals, vecs = np.linalg.eigh(cov)
    d = vecs[:, 1]
    return float(np.degrees(np.arctan2(d[1], d[0])))


def mark_figure(image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> np.ndarray:
    """Circles, arcs, ticks and scribbles on the figure; ticks cross the printed side they mark."""
    h, w = image.shape[:2]
    sx, sy = w / page.width, h / page.height
    mask = np.zeros((h, w), np.uint8)
    thickness = max(1, round(float(params["width_px"]) * sx))
    for mark in params["marks"]:
        mark = dict(mark)
        if mark["kind"] == "tick":
            seg = side_direction(image, mark["box"], sx, sy)
            mark["tick_deg"] = 90.0 + (seg if seg is not None else 0.0)
        pen_lines(mask, [line * [sx, sy] for line in figure_mark_lines(mark, np.random.default_rng(int(mark["seed"])))],
                  thickness)
    return ink_over(image, mask, params["rgb"])


# ------------------------------------------------------------------------------ bleed-through


def show_through(image: np.ndarray, back: np.ndarray, offset: tuple[float, float],
                 params: dict[str, Any]) -> np.ndarray:
    """The reverse side's print (its luma ``back``, already mirrored) showing through the sheet: shifted by
    ``offset`` (fractions of the page), diffused by the paper and darkening the front by ``strength``."""
    h, w = image.shape[:2]
    dx, dy = offset
    shift = np.float32([[1, 0, dx * w], [0, 1, dy * h]])
    back = cv2.warpAffine(back, shift, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    sigma = float(params["diffusion_px"])
    back = cv2.GaussianBlur(back, (0, 0), sigmaX=sigma, sigmaY=sigma).astype(np.float32)
    paper = float(np.percentile(back[:: 8, :: 8], 90))
    dark = np.clip(1.0 - back / max(paper, 1.0), 0.0, 1.0)
    # Normalise by the reverse print's own darkest strokes, so strength means the same at any dpi.
    peak = max(float(dark.max()), 0.05)
    ink = np.minimum(dark / peak, 1.0) * np.float32(params["strength"])
    tint = np.asarray(params["tint"], np.float32)  # light through paper fibres is warm
    gain = 1.0 - ink[..., None] * (2.0 - tint)
    return cv2.multiply(image, gain, dtype=cv2.CV_8U)
