"""Measuring an op's effect: image statistics on the page before and after, sampled where that is exact enough.

An op's ``measure`` (or ``measure_half``/``measure_warp``) records what it did from pixels and params
alone, with these; the rubric bins (``Op.rubric``) are checked against those records. Nothing here
draws random numbers or changes an image.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import cv2
import numpy as np

from synth.records import RenderedPage

# Boxes that hold printed content; question tokens are covered by their lines.
CONTENT_KINDS = frozenset({"header", "question_line", "choice", "step", "answer_area"})


def half(image: np.ndarray) -> np.ndarray:
    """Every other pixel of every other row, contiguous: what measures sample (``image[::2, ::2]`` of an
    even-sized image; an odd last row or column is left out).

    OpenCV's nearest-neighbour halving picks exactly those pixels, several times faster than numpy's
    strided copy; the even crop is a view, not a copy.
    """
    h, w = image.shape[:2]
    even = image[:h - h % 2, :w - w % 2]
    return cv2.resize(even, (max(1, w // 2), max(1, h // 2)), interpolation=cv2.INTER_NEAREST)


def every(image: np.ndarray, step: int, offset: int = 0) -> np.ndarray:
    """Every ``step``-th pixel of every ``step``-th row from (``offset``, ``offset``): ``h // step`` rows of
    ``w // step`` (``image[offset::step, offset::step]`` cut to that size), contiguous.

    OpenCV's nearest-neighbour warp by an integer matrix reads exactly those pixels (whole coordinates are exact in
    its fixed point), three to four times faster than numpy's strided copy of a page (1.3 ms against 0.4)."""
    h, w = image.shape[:2]
    rows, cols = h // step, w // step
    if not rows or not cols or offset + step * (rows - 1) >= h or offset + step * (cols - 1) >= w:
        return np.ascontiguousarray(image[offset::step, offset::step][:rows, :cols])
    m = np.array([[step, 0, offset], [0, step, offset]], np.float64)
    return cv2.warpAffine(image, m, (cols, rows), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP)


def sparse_luma(image: np.ndarray, step: int = 2) -> np.ndarray:
    """The luma of every ``step``-th pixel of every ``step``-th row (``luma(half(image))`` for step 2): the
    rows' luma from a strided view (no copy), then every ``step``-th column by nearest-neighbour resizing."""
    h, w = image.shape[:2]
    rows = cv2.cvtColor(image[:h - h % step:step, :w - w % step], cv2.COLOR_RGB2GRAY)
    return cv2.resize(rows, (max(1, w // step), rows.shape[0]), interpolation=cv2.INTER_NEAREST)


def block_means(gray: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Mean of a 2-D ``gray`` over a (rows x cols) grid of equal square blocks, as float32.

    The image is padded (edge pixels repeated) to whole blocks first: OpenCV's area resize takes a
    fast path for an integer factor and a slow general one otherwise (5-10 ms on an A4 page).
    """
    h, w = gray.shape[:2]
    step = max(-(-h // rows), -(-w // cols), 1)
    padded = cv2.copyMakeBorder(gray, 0, rows * step - h, 0, cols * step - w, cv2.BORDER_REPLICATE)
    return cv2.resize(padded, (cols, rows), interpolation=cv2.INTER_AREA).astype(np.float32)


def luma(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)


def content_mask(page: RenderedPage, height: int, width: int, kinds: frozenset[str] = CONTENT_KINDS) -> np.ndarray:
    """Boolean mask of printed-content boxes, drawn on a (height, width) raster of the page."""
    sx, sy = width / page.width, height / page.height
    mask = np.zeros((height, width), bool)
    for b in page.layout:
        if b.kind in kinds:
            x0, x1 = int(np.floor(b.x0 * sx)), int(np.ceil(b.x1 * sx))
            y0, y1 = int(np.floor(b.y0 * sy)), int(np.ceil(b.y1 * sy))
            mask[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = True
    return mask


def local_paper(gray: np.ndarray) -> np.ndarray:
    """The brightest pixel within 4 pixels of each pixel: the paper around it (``text_ink``)."""
    return cv2.dilate(gray, np.ones((9, 9), np.uint8))


INK_SHARE = 0.7  # ink is darker than this share of the paper around it


@cache
def _ink_below() -> np.ndarray:
    """For each paper level p (uint8), the first grey level that is not ink on it: gray < 0.7 p in float32 (as
    ``text_ink`` compares) holds exactly for the grey levels below it."""
    bound = np.float32(INK_SHARE) * np.arange(256, dtype=np.float32)  # the float32 products the comparison makes
    return np.minimum(np.ceil(bound), 255).astype(np.uint8)


def text_ink(gray: np.ndarray, paper: np.ndarray | None = None) -> np.ndarray:
    """Ink: pixels clearly darker than the paper around them (the brightest pixel within 4 pixels), so printed
    black and a pen's blue count alike (a ballpoint's stroke sits near 150 on paper at 225), and paper in a
    shadow does not. ``paper`` is ``local_paper(gray)`` when the caller has it already.

    ``gray < 0.7 * paper`` in float32, on bytes: each paper level's bound looked up (``_ink_below``) and compared,
    two byte passes for four float32 ones."""
    paper = local_paper(gray) if paper is None else paper
    return gray < cv2.LUT(paper, _ink_below())


def psnr(before: np.ndarray, after: np.ndarray) -> float:
    return round(float(cv2.PSNR(before, after)), 3)


def pooled_std(values: np.ndarray) -> float:
    """Standard deviation over every element of a (h, w) or (h, w, c) array.

    From OpenCV's sum of squares (cv2.norm) and sum: exact for integer arrays, and ~15x faster than
    cv2.meanStdDev on an int16 page.
    """
    n = values.size
    if n == 0:
        return 0.0
    mean = sum(cv2.sumElems(values)) / n
    return float(np.sqrt(max(cv2.norm(values, cv2.NORM_L2SQR) / n - mean * mean, 0.0)))


def median_u8(values: np.ndarray, mask: np.ndarray | None = None) -> float:
    """Median of uint8 values from their histogram (the lower median for an even count), without sorting.

    ``mask`` (uint8, nonzero = counted) picks the values in place: OpenCV's masked histogram, no gather.
    The caller checks that the mask selects something.
    """
    if mask is None:
        counts = np.bincount(values.ravel(), minlength=256)
    else:
        counts = cv2.calcHist([np.ascontiguousarray(values)], [0], mask, [256], [0, 256]).ravel()
    return float(np.searchsorted(np.cumsum(counts), (int(counts.sum()) + 1) // 2))


def percentile_u8(values: np.ndarray, q: float) -> float:
    """``float(np.percentile(values.astype(np.float32), q))`` of uint8 values, from their histogram: the two order
    statistics around the percentile's position found in the cumulative counts (no sort, no float copy), then
    numpy's own linear interpolation between them, in the same float32 arithmetic (so the same float)."""
    counts = cv2.calcHist([np.ascontiguousarray(values)], [0], None, [256], [0, 256]).ravel()
    cumulative = np.cumsum(counts.astype(np.int64))
    n = int(cumulative[-1])
    index = (n - 1) * (q / 100)
    below = int(np.floor(index))
    t = index - below
    a, b = (np.float32(np.searchsorted(cumulative, k, side="right")) for k in (below, min(below + 1, n - 1)))
    return float(b - (b - a) * (1 - t)) if t >= 0.5 else float(a + (b - a) * t)


PEN_LUMA = 13  # a pixel got pen ink when it got at least this much darker


def pen_mask(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Pixels where pen ink was added: clearly darker than before (pen over black print adds nothing)."""
    return cv2.subtract(luma(before), luma(after)) > PEN_LUMA


def kernel_spread(kernel: np.ndarray) -> float:
    """Standard deviation of the kernel along its widest direction, in pixels."""
    ys, xs = np.mgrid[0:kernel.shape[0], 0:kernel.shape[1]].astype(np.float64)
    w = kernel.astype(np.float64)
    mx, my = (w * xs).sum(), (w * ys).sum()
    cov = np.array([[(w * (xs - mx) ** 2).sum(), (w * (xs - mx) * (ys - my)).sum()],
                    [(w * (xs - mx) * (ys - my)).sum(), (w * (ys - my) ** 2).sum()]])
    return float(np.sqrt(np.linalg.eigvalsh(cov).max()))


_BAND = 32  # rows per band of the image the sharpness is measured on (every fourth band)


def sharpness(image: np.ndarray) -> float:
    """Variance of the luma's 3x3 Laplacian over every fourth band of 32 rows: a quarter of the work, and an
    unbiased sample of the same figure (each band is read with a row of context above and below, so its
    Laplacian is the whole image's there; images under 8 bands tall are measured whole)."""
    h = image.shape[0]
    if h < 8 * _BAND:
        return pooled_std(cv2.Laplacian(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), cv2.CV_16S)) ** 2
    n = total = squares = 0.0
    for top in range(1, h - _BAND, 4 * _BAND):
        # The 3x3 Laplacian of 8-bit pixels fits int16 exactly (|value| <= 1020): the same figure as float32.
        lap = cv2.Laplacian(cv2.cvtColor(image[top - 1:top + _BAND + 1], cv2.COLOR_RGB2GRAY), cv2.CV_16S)[1:-1]
        n += lap.size
        total += cv2.sumElems(lap)[0]
        squares += cv2.norm(lap, cv2.NORM_L2SQR)
    mean = total / n
    return max(squares / n - mean * mean, 0.0)


# ------------------------------------------------------------------------------ geometry


def corner_angle_deg(corners: np.ndarray) -> float:
    """Counter-clockwise angle of the page's top edge (corners in TL, TR, BR, BL order)."""
    dx, dy = corners[1] - corners[0]
    return float(np.degrees(np.arctan2(-dy, dx)))


def keystone_ratio(quad: np.ndarray) -> float:
    edges = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)  # top, right, bottom, left
    return float(min(min(edges[0], edges[2]) / max(edges[0], edges[2]),
                     min(edges[1], edges[3]) / max(edges[1], edges[3])))


def page_lines(page: RenderedPage) -> np.ndarray:
    """Points along 10 rows and 10 columns of the page (20 lines of 41 points, xy), for ``line_bow``."""
    t = np.linspace(0, 1, 41)
    f = np.linspace(0.05, 0.95, 10)
    rows = np.stack(np.broadcast_arrays(t[None, :] * page.width, f[:, None] * page.height), -1)
    cols = np.stack(np.broadcast_arrays(f[:, None] * page.width, t[None, :] * page.height), -1)
    return np.concatenate([rows, cols])  # (20 lines, 41 points, xy), mapped in one call


def _bow(forward: Callable[[np.ndarray], np.ndarray], lines: np.ndarray, reach: float | None = None) -> float:
    """Largest deviation from straight (pixels) of ``lines`` (lines, points, xy) once mapped by ``forward``.

    With ``reach`` (pixels of the mapped image), each line's deviation is taken relative to its own chord and
    scaled to a line ``reach`` long: sag * reach / chord, the sag a line of the same shape would show at that
    length."""
    q = forward(lines.reshape(-1, 2)).reshape(lines.shape)
    chord = q[:, -1] - q[:, 0]
    length = np.maximum(np.linalg.norm(chord, axis=1), 1e-9)
    normal = np.stack([-chord[:, 1], chord[:, 0]], 1) / length[:, None]
    deviation = np.abs(np.einsum("lpk,lk->lp", q - q[:, :1], normal)).max(axis=1)
    if reach is not None:
        deviation = deviation * (reach / length)
    return float(deviation.max())


def line_bow(forward: Callable[[np.ndarray], np.ndarray], page: RenderedPage, zoom: float = 1.0) -> float:
    """Largest deviation from straight of mapped page rows and columns, in photographed page widths."""
    return _bow(forward, page_lines(page)) / page.width / zoom


TEXT_LINE_KINDS = frozenset({"header", "question_line", "choice", "step", "answer_area"})


def text_lines(page: RenderedPage, *, rows_only: bool = False) -> np.ndarray:
    """Points along the page's text lines (each text box's middle row, from its left to its right end, 33 points:
    (lines, points, xy)); the page's rows and columns (``page_lines``) when it has no text box an inch wide, its
    rows alone with ``rows_only`` (where a line's direction matters: a column is not a line of writing)."""
    lines = np.array([(b.x0, b.x1, (b.y0 + b.y1) / 2) for b in page.layout
                      if b.kind in TEXT_LINE_KINDS and b.x1 - b.x0 >= page.dpi], np.float64).reshape(-1, 3)
    if not len(lines):
        every_line = page_lines(page)
        return every_line[:len(every_line) // 2] if rows_only else every_line
    t = np.linspace(0.0, 1.0, 33)
    x0, x1, y = lines[:, :1], lines[:, 1:2], lines[:, 2:]
    return np.stack(np.broadcast_arrays(x0 + (x1 - x0) * t, y), -1)  # (lines, points, xy)


def text_line_bow(forward: Callable[[np.ndarray], np.ndarray], page: RenderedPage, zoom: float = 1.0,
                  lines: np.ndarray | None = None) -> float:
    """Largest deviation from straight of the page's mapped text lines (each text box's middle row, from its
    left to its right end), in photographed page widths: how curved the writing reads. Pages without text
    boxes an inch wide fall back to ``line_bow`` over the whole page. ``lines`` is ``text_lines(page)`` when the
    caller maps the same page many times."""
    return _bow(forward, text_lines(page) if lines is None else lines) / page.width / zoom


def text_lean(forward: Callable[[np.ndarray], np.ndarray], page: RenderedPage,
              lines: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How the writing leans once mapped by ``forward``: the angle (degrees, counter-clockwise as
    ``corner_angle_deg``, within +-90) of every short piece of the page's text lines (``text_lines``), and each
    piece's mapped length (its weight). On a bent or keystoned sheet the pieces lean differently; flat, all alike.
    A page without text boxes (an image of your own) leans as its rows do."""
    src = text_lines(page, rows_only=True) if lines is None else lines
    q = forward(src.reshape(-1, 2)).reshape(src.shape)
    d = np.diff(q, axis=1).reshape(-1, 2)
    angle = (np.degrees(np.arctan2(-d[:, 1], d[:, 0])) + 90.0) % 180.0 - 90.0
    return angle, np.linalg.norm(d, axis=1)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The value below which a share ``q`` of the weight lies (the lower one at an exact tie)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    return float(values[order][min(int(np.searchsorted(cum, q * cum[-1])), len(cum) - 1)])


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    return weighted_quantile(values, weights, 0.5)


# A line across the text column, between the render's margins, in page widths: the length at which the writing's
# curvature is expressed as a sag (``text_line_curvature``).
TEXT_COLUMN = 0.8


def text_line_curvature(forward: Callable[[np.ndarray], np.ndarray], page: RenderedPage, zoom: float = 1.0,
                        lines: np.ndarray | None = None) -> float:
    """How curved the writing is: the page's most curved text line, its sag taken relative to its own length, as
    the sag in photographed page widths of a line across the text column (``TEXT_COLUMN`` of the page width)
    curved the same way. A line's shape does not depend on its size, so a worksheet of short lines ("2t + 3 = 11")
    is graded on how bent its lines look, where ``text_line_bow`` (the sag itself, which grows with the line's
    length) made such a page be bent into waves half a page long, a corrugated sheet, to reach severity 3. On a
    line across the text column it is ``text_line_bow``; ``lines`` as there."""
    reach = TEXT_COLUMN * page.width * zoom
    return _bow(forward, text_lines(page) if lines is None else lines, reach) / page.width / zoom


_NP_TURNS = {"upright": 0, "90ccw": 1, "180": 2, "90cw": 3}  # np.rot90 turns counter-clockwise


def _thumb(image: np.ndarray) -> np.ndarray:
    """A 64 x 64 grey thumbnail of the centred crop that is a whole number of blocks each way: OpenCV's area
    resize takes a fast path for integer factors (a non-integer one cost 15-20 ms on an A4 page), and a
    centred crop turns with the page."""
    gray = luma(image)
    h, w = gray.shape
    fy, fx = max(1, h // 64), max(1, w // 64)
    oy, ox = max(0, (h - 64 * fy) // 2), max(0, (w - 64 * fx) // 2)
    crop = gray[oy:oy + 64 * fy, ox:ox + 64 * fx]
    return cv2.resize(crop, (64, 64), interpolation=cv2.INTER_AREA).astype(np.float32)


def quarter_turn_between(before: np.ndarray, after: np.ndarray) -> str:
    """Which quarter turn of ``before`` reproduces ``after`` (upright, 90cw, 90ccw, 180), on thumbnails."""
    target, small = _thumb(after), _thumb(before)
    errors = {name: float(np.abs(np.rot90(small, k) - target).mean()) for name, k in _NP_TURNS.items()}
    return min(errors, key=errors.get)
