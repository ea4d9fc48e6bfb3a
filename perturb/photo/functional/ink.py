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


def run_room(refs: list[str], page: RenderedPage) -> tuple[tuple[float, float, float, float], float, float, float]:
    """A run of question tokens (page px): its box (the tokens across, their line's height down), and the
    room a pen may use round it without coming nearer another token than this run: to the side (half
    the gap to the neighbouring token on the line), above and below (half the gap to the next ink)."""
    tokens = question_token_lines(page)
    index = {t.ref: i for i, (t, _) in enumerate(tokens)}
    run = [tokens[index[r]] for r in refs]
    x0, x1 = min(t.x0 for t, _ in run), max(t.x1 for t, _ in run)
    y0, y1 = min(min(t.y0, ln.y0) for t, ln in run), max(max(t.y1, ln.y1) for t, ln in run)
    h = y1 - y0
    line = run[0][1]
    same = [t for t, ln in tokens if ln == line and t.ref not in refs]
    gaps = [t.x0 - x1 for t in same if t.x0 >= x1 - 1] + [x0 - t.x1 for t in same if t.x1 <= x0 + 1]
    side = 0.5 * min(gaps, default=0.8 * h)
    others = [b for b in page.layout if b.kind != "figure" and b.x0 < x1 and b.x1 > x0
              and (b.y0 >= y1 - 1 or b.y1 <= y0 + 1) and not (b.kind == "question_token" and b.ref in refs)]
    below = 0.5 * min([b.y0 - y1 for b in others if b.y0 >= y1 - 1] + [1.6 * h])
    above = 0.5 * min([y0 - b.y1 for b in others if b.y1 <= y0 + 1] + [1.6 * h])
    return (x0, y0, x1, y1), max(side, 0.0), max(above, 0.0), max(below, 0.0)


def token_stroke(kind: str, box: tuple[float, float, float, float], room: tuple[float, float, float],
                 rng: np.random.Generator, pen: float = 1.0) -> list[np.ndarray]:
    """Pen strokes of ``kind`` round a run of tokens (image px): ``box`` is its ink, ``room`` the space
    (side, above, below) the pen may use without coming nearer another token.

    Underlines and circles keep clear of the glyphs: an underline runs a third of the way into the
    room below, and a circle is a rounded oval (a superellipse) a little way into the room round the
    box, with its wobble only outwards. A ``scribble`` is the one mark that goes over the glyphs: a
    dense zigzag that blots the token out.
    """
    x0, y0, x1, y1 = box
    side, above, below = room
    h = y1 - y0
    if kind == "circle":
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        # The oval goes at most 75 % into the room round the run, and its wobble 20 % more, outwards only.
        free_x, free_y = max(side - pen / 2, 0.0), max(min(above, below) - pen / 2, 0.0)
        # ... but never so little that the stroke's inner edge touches the run's own glyphs.
        a = (x1 - x0) / 2 + max(pen / 2 + 0.75, min(0.35 * h, 0.75 * free_x))
        b = h / 2 + max(pen / 2 + 0.75, min(0.3 * h, 0.75 * free_y))
        n = 4.0
        while ((x1 - x0) / 2 / a) ** n + (h / 2 / b) ** n > 0.95 and n < 24:  # the corners stay inside
            n += 2.0
        start = rng.uniform(0, 2 * np.pi)
        t = np.linspace(start, start + 2 * np.pi + rng.uniform(0.25, 0.5), 96)
        c, s = np.cos(t), np.sin(t)
        out = (0.5 * (1 + np.sin(3 * t + rng.uniform(0, 6))) + np.linspace(0, 1, t.size)) / 2  # 0..1
        xs = cx + (a + 0.2 * free_x * out) * np.sign(c) * np.abs(c) ** (2 / n)
        ys = cy + (b + 0.2 * free_y * out) * np.sign(s) * np.abs(s) ** (2 / n)
        return [np.stack([xs, ys], 1)]
    if kind == "scribble":
        # A student blotting a number out: a tight zigzag over the whole token, then back again.
        n = max(4, int(round((x1 - x0) / (0.15 * h))))
        t = np.linspace(0, 1, 2 * n + 1)
        xs = x0 - 0.05 * h + (x1 - x0 + 0.1 * h) * t + rng.uniform(-0.03, 0.03, t.size) * h
        ys = np.where(np.arange(t.size) % 2 == 0, y0 + 0.05 * h, y1 - 0.05 * h) + rng.uniform(-0.04, 0.04, t.size) * h
        there = np.stack([xs, ys], 1)
        back = there[::-1] + rng.uniform(-0.06, 0.06, there.shape) * h
        return [np.concatenate([there, back])]
    t = np.linspace(0, 1, 24)
    reach = max(0.0, min(0.15 * h, side - pen))
    xs = x0 - reach + (x1 - x0 + 2 * reach) * t
    lines = []
    double = kind == "double_underline" and 0.45 * (below - pen) >= 1.8 * pen  # two lines, not one bar
    for k in range(2 if double else 1):
        y = y1 + pen / 2 + 0.5 + ((0.25 + 0.45 * k) * (below - pen) if double else 0.3 * (below - pen))
        ys = y + (rng.uniform(-0.05, 0.05) * (below - pen)) * (t - 0.5) * 2
        lines.append(np.stack([xs, ys], 1))
    return lines


def _tick(x: float, y: float, size: float, rng: np.random.Generator) -> list[np.ndarray]:
    """A check mark whose box is ``size`` high with its top left corner at (x, y)."""
    low = np.array([x + 0.35 * size, y + size]) + rng.normal(0, 0.04 * size, 2)
    down = np.linspace([x, y + 0.5 * size], low, 5)
    up = np.linspace(low, [x + 0.95 * size, y + rng.uniform(-0.05, 0.1) * size], 8)
    return [np.vstack([down, up[1:]])]


def _star(x: float, y: float, size: float, rng: np.random.Generator) -> list[np.ndarray]:
    cx, cy, r = x + size / 2, y + size / 2, size / 2
    return [np.array([[cx + r * np.cos(a), cy + r * np.sin(a)], [cx - r * np.cos(a), cy - r * np.sin(a)]])
            for a in np.deg2rad(rng.uniform(-10, 10) + np.array([90.0, 30.0, -30.0]))]


def question_pen(shape: tuple[int, int], params: dict[str, Any], page: RenderedPage) -> np.ndarray:
    """The pen's coverage (uint8, 255 = full ink) of a question_marking application on a raster of ``shape``."""
    by_ref = {t.ref: (t, line) for t, line in question_token_lines(page)}
    h, w = shape
    sx, sy = w / page.width, h / page.height
    mask = np.zeros((h, w), np.uint8)
    pen = float(params["width_px"]) * sx
    thickness = max(1, round(pen))
    for mark in params["marks"]:
        rng = np.random.default_rng(int(mark["seed"]))
        kind = mark["kind"]
        if kind in ("tick", "star"):
            x, y, size = (v * sx for v in mark["at"])
            pen_lines(mask, (_tick if kind == "tick" else _star)(x, y, size, rng), thickness)
        elif kind == "note":
            x, y, size = (v * sx for v in mark["at"])
            scale = size / 22.0  # Hershey script glyphs are about 22 units tall at scale 1
            cv2.putText(mask, str(mark["text"]), (int(round(x)), int(round(y + size))),
                        cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, scale, 255, thickness, cv2.LINE_AA)
        else:
            box, side, above, below = run_room(list(mark["tokens"]), page)
            if kind == "scribble":  # over the token's own ink, not its line's height
                t = by_ref[mark["tokens"][0]][0]
                box = (t.x0, t.y0, t.x1, t.y1)
            x0, y0, x1, y1 = box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy
            strokes = token_stroke(kind, (x0, y0, x1, y1), (side * sx, above * sy, below * sy), rng, pen)
            pen_lines(mask, strokes, max(thickness, round(1.6 * pen)) if kind == "scribble" else thickness)
    return mask


def mark_question(image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> np.ndarray:
    """Underlines, circles, margin ticks and notes in blank space (and, when recorded, a blotted given)."""
    return ink_over(image, question_pen(image.shape[:2], params, page), params["rgb"])


# ------------------------------------------------------------------------------ figure marking


def figure_mark_lines(mark: dict[str, Any], rng: np.random.Generator) -> list[np.ndarray]:
    """Polylines of one mark in page units (a hatch's lines before they are clipped to its region)."""
    cx, cy = mark["centre"]
    r = float(mark["radius"])
    kind = mark["kind"]
    if kind == "circle":  # a loop round its anchor, closing with a little overlap, wobble outwards only
        start = rng.uniform(0, 2 * np.pi)
        t = np.linspace(start, start + 2 * np.pi + rng.uniform(0.25, 0.6), 72)
        wob = 0.8 + 0.04 * (1 + np.sin(3 * t + rng.uniform(0, 6))) + np.linspace(0, 0.1, t.size)
        squash = rng.uniform(0.88, 1.0)
        return [np.stack([cx + r * wob * np.cos(t), cy + r * squash * wob * np.sin(t)], 1)]
    if kind == "underline":
        t = np.linspace(-1, 1, 24)
        return [np.stack([cx + r * t, cy + rng.uniform(-0.03, 0.03) * r * t + 0.01 * r * np.sin(5 * t)], 1)]
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
    # hatch: back-and-forth shading of the region, one continuous pen path: parallel strokes across it, each turning
    # into the next just inside its edge, as a hand shades without lifting the pen (clipped to the region later)
    region = np.asarray(mark["region"], float)
    x0, y0 = region.min(axis=0)
    x1, y1 = region.max(axis=0)
    a = rng.uniform(0.6, 1.2)  # strokes lean like a right-handed student's
    u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    c = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    dpi = float(mark.get("dpi", 100))
    half = 0.55 * float(np.hypot(x1 - x0, y1 - y0))  # the strokes cover the whole box at any lean
    passes = max(4, int(2 * half / max(0.07 * dpi, 1.0)))  # strokes ~2 mm apart
    inset = _HATCH_INSET_IN * dpi  # the turns stay inside the edge, so clipping leaves them joining the strokes
    path: list[np.ndarray] = []
    for i in range(passes + 1):
        base = c + (-half + 2 * half * i / passes) * v
        chord = _chord(region, base, u)
        if chord is None or chord[1] - chord[0] <= 2 * inset:
            continue
        ends = [base + (chord[0] + inset) * u, base + (chord[1] - inset) * u]
        path.extend(ends if len(path) % 4 == 0 else ends[::-1])
    return [np.array(path)] if len(path) >= 2 else []


_HATCH_INSET_IN = 0.015  # a hatch's turns run this far inside its region's edge (half the widest pen and a little)


def _chord(region: np.ndarray, base: np.ndarray, u: np.ndarray) -> tuple[float, float] | None:
    """Where the line ``base + t u`` crosses the polygon ``region`` (its first and last crossing, in t); None if it
    misses it."""
    ts = []
    for p, q in zip(region, np.roll(region, -1, axis=0), strict=True):
        e = q - p
        det = u[0] * -e[1] - u[1] * -e[0]
        if abs(det) < 1e-12:
            continue
        d = p - base
        t = (d[0] * -e[1] - d[1] * -e[0]) / det
        s = (u[0] * d[1] - u[1] * d[0]) / det
        if -1e-9 <= s <= 1 + 1e-9:
            ts.append(float(t))
    return (min(ts), max(ts)) if len(ts) >= 2 else None


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


def snapped_centre(image: np.ndarray, mark: dict[str, Any], sx: float, sy: float) -> tuple[float, float]:
    """A spare circle's centre moved onto the print within a quarter of its radius (the centre of that
    ink), so it rings something printed."""
    cx, cy = mark["centre"]
    reach = 0.25 * float(mark["radius"])  # spares keep two gaps apart, so two snapped ones stay one gap apart
    x0, y0 = max(0, int((cx - reach) * sx)), max(0, int((cy - reach) * sy))
    win = image[y0:int((cy + reach) * sy) + 1, x0:int((cx + reach) * sx) + 1]
    ys, xs = np.nonzero(win.min(axis=2) < 128) if win.size else (np.array([]), np.array([]))
    if not xs.size:
        return cx, cy
    return float((xs.mean() + x0) / sx), float((ys.mean() + y0) / sy)


def figure_pen(image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> np.ndarray:
    """The pen's coverage (uint8) of a figure_marking application on ``image``'s raster. Ticks cross the
    printed side they mark, spare circles ring the nearest print, and a hatch is clipped to its region."""
    h, w = image.shape[:2]
    sx, sy = w / page.width, h / page.height
    mask = np.zeros((h, w), np.uint8)
    thickness = max(1, round(float(params["width_px"]) * sx))
    for mark in params["marks"]:
        mark = {**mark, "dpi": page.dpi}
        if mark["kind"] == "tick" and "tick_deg" not in mark:
            seg = side_direction(image, mark["box"], sx, sy)
            mark["tick_deg"] = 90.0 + (seg if seg is not None else 0.0)
        if mark["kind"] == "circle" and mark["element"].endswith("spare"):
            mark["centre"] = list(snapped_centre(image, mark, sx, sy))
        lines = [line * [sx, sy] for line in figure_mark_lines(mark, np.random.default_rng(int(mark["seed"])))]
        if mark["kind"] != "hatch":
            pen_lines(mask, lines, thickness)
            continue
        strokes = np.zeros_like(mask)
        pen_lines(strokes, lines, thickness)
        inside = np.zeros_like(mask)
        cv2.fillPoly(inside, [np.round(np.asarray(mark["region"]) * [sx, sy] * 16).astype(np.int32)], 255,
                     cv2.LINE_AA, 4)
        cv2.max(mask, cv2.min(strokes, inside), dst=mask)
    return mask


def mark_figure(image: np.ndarray, params: dict[str, Any], page: RenderedPage) -> np.ndarray:
    """Circles, ticks, underlines and hatching on the figure, as ink over the print."""
    return ink_over(image, figure_pen(image, params, page), params["rgb"])


# ------------------------------------------------------------------------------ bleed-through


VISIBLE_BLEED = 0.1  # bleed darker than this share of the front print's contrast reads as ink to the eye


def reverse_ink(back: np.ndarray, offset: tuple[float, float], sigma: float) -> np.ndarray:
    """How dark the reverse print is through the sheet, 0-1 (its own darkest strokes 1): the reverse's luma
    ``back`` (already mirrored) shifted by ``offset`` (fractions of the page) and diffused by the paper."""
    h, w = back.shape[:2]
    dx, dy = offset
    shift = np.float32([[1, 0, dx * w], [0, 1, dy * h]])
    back = cv2.warpAffine(back, shift, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    back = cv2.GaussianBlur(back, (0, 0), sigmaX=sigma, sigmaY=sigma).astype(np.float32)
    paper = float(np.percentile(back[:: 8, :: 8], 90))
    dark = np.clip(1.0 - back / max(paper, 1.0), 0.0, 1.0)
    # Normalised by the reverse print's own darkest strokes, so strength means the same at any dpi.
    return np.minimum(dark / max(float(dark.max()), 0.05), 1.0)


def front_levels(front_luma: np.ndarray) -> tuple[float, float]:
    """The front's paper level (median of its light pixels) and its darkest print."""
    light = front_luma[front_luma > 200]
    return (float(np.median(light)) if light.size else 255.0), float(front_luma.min())


def show_through(image: np.ndarray, ink: np.ndarray, strength: float, tint: list[float]) -> np.ndarray:
    """The front ``image`` darkened by the reverse print's ``ink`` (0-1) at ``strength``; light through
    paper fibres is warm, so blue is held back a little more (``tint``)."""
    amount = ink * np.float32(strength)
    gain = 1.0 - amount[..., None] * (2.0 - np.asarray(tint, np.float32))
    return cv2.multiply(image, gain, dtype=cv2.CV_8U)
