"""Handwritten math: writer styles from four OFL handwriting fonts, per-glyph jitter, hand-drawn symbols.

A :class:`Writer` is sampled once per item from an rng (font, size, slant, letter spacing, ink,
pressure, neatness). Text and restricted LaTeX go through the same layout engine as print
(:mod:`render.mathlayout`), so fractions, exponents and radicals are real math; the writer then moves,
turns and scales every glyph a little, lets the baseline drift, draws fraction bars, radicals and
tall brackets as wobbly pen strokes, and draws the symbols its font lacks (π, √, ≤, Greek, ...) as
strokes too, never as typeset fallbacks. Neatness 1-3 follows MathReal: neat, irregular, messy.

Other code writes onto an existing page with :func:`write` (e.g. a handwritten answer or working)::

    writer = sample_writer(rng, neatness=2)
    pixels, boxes = write(pixels, r"x = \\frac{3}{4}", x=120, y=600, writer=writer, rng=rng, latex=True)
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
from fontTools.ttLib import TTFont

from render.ink import InkGlyph, InkLayer, InkMark, InkStroke, delim_strokes, font, ink_rows, lay_ink
from render.latex import Row, Sym, parse
from render.mathlayout import DelimOp, GlyphOp, Laid, Op, PathOp, RuleOp, layout

# writer id -> (pip module, file under <module>.ROOT / "files")
WRITER_FONTS = {
    "kalam": ("fontpkg_kalam", "Kalam-Regular.ttf"),
    "caveat": ("fontpkg_caveat", "Caveat[wght].ttf"),
    "indie_flower": ("fontpkg_indie_flower", "IndieFlower-Regular.ttf"),
    "shadows_into_light": ("fontpkg_shadows_into_light", "ShadowsIntoLight.ttf"),
}
WRITER_NAMES = {"kalam": "Kalam", "caveat": "Caveat", "indie_flower": "Indie Flower",
                "shadows_into_light": "Shadows Into Light"}
INKS = {"blue": (30, 50, 135), "black": (32, 32, 40), "pencil": (88, 88, 96)}
INK_WEIGHTS = {"blue": 0.45, "black": 0.35, "pencil": 0.2}
DIGIT_HEIGHT_EM = 0.7  # every writer's median digit is normalised to this height, so fonts differ in shape only


@dataclass(frozen=True)
class Jitter:
    """How far a hand strays, in em (positions), degrees (angles) and log-scale (sizes)."""

    position: float
    rotate: float
    size: float
    slant: float
    drift: float  # baseline drift amplitude along a line
    wobble: float  # stroke wobble (fraction bars, radicals, hand-drawn symbols)
    cross_out: float  # chance that a line starts with a crossed-out false start


WORD_CALM = 0.4  # letters inside a written word stray this much of a symbol's jitter: a messy word stays a word
NEATNESS = {
    1: Jitter(position=0.018, rotate=1.5, size=0.03, slant=1.5, drift=0.03, wobble=0.012, cross_out=0.0),
    2: Jitter(position=0.045, rotate=4.0, size=0.07, slant=3.5, drift=0.09, wobble=0.03, cross_out=0.06),
    3: Jitter(position=0.08, rotate=7.0, size=0.12, slant=6.0, drift=0.18, wobble=0.055, cross_out=0.15),
}


@dataclass(frozen=True)
class Writer:
    """One person's hand: sampled once per item so the clean page and its variants share it."""

    font: str  # a WRITER_FONTS id
    neatness: int
    size: float  # relative to the nominal handwriting size
    slant: float  # degrees, positive leans forward
    spacing: float  # letter-spacing factor
    ink: str  # an INKS id
    pressure: float  # ink opacity, 0-1
    pen: float  # stroke width in em for hand-drawn strokes

    @property
    def name(self) -> str:
        return WRITER_NAMES[self.font]

    @property
    def rgb(self) -> tuple[int, int, int]:
        return INKS[self.ink]


def sample_writer(rng: np.random.Generator, *, neatness: int = 1,
                  fonts: tuple[str, ...] = tuple(WRITER_FONTS)) -> Writer:
    """Draw a writer: font from ``fonts``, then size, slant, spacing, ink and pressure."""
    if neatness not in NEATNESS:
        raise ValueError(f"neatness must be 1 (neat), 2 (irregular) or 3 (messy), got {neatness!r}")
    unknown = [f for f in fonts if f not in WRITER_FONTS]
    if unknown or not fonts:
        raise ValueError(f"unknown writer font(s) {unknown or fonts}; choose from {sorted(WRITER_FONTS)}")
    font = fonts[int(rng.integers(len(fonts)))]
    inks = sorted(INK_WEIGHTS)
    p = np.array([INK_WEIGHTS[k] for k in inks])
    ink = inks[int(rng.choice(len(inks), p=p / p.sum()))]
    return Writer(font=font, neatness=neatness, size=float(rng.uniform(0.92, 1.1)),
                  slant=float(rng.uniform(-4.0, 12.0)), spacing=float(rng.uniform(0.97, 1.1)), ink=ink,
                  pressure=float(rng.uniform(0.72, 0.9) if ink == "pencil" else rng.uniform(0.85, 1.0)),
                  pen=float(rng.uniform(0.045, 0.062)))


@cache
def font_path(font: str) -> str:
    module, name = WRITER_FONTS[font]
    return str(importlib.import_module(module).ROOT / "files" / name)


@cache
def _cmap(path: str) -> frozenset[int]:
    return frozenset(TTFont(path, lazy=True).getBestCmap())


# ------------------------------------------------------------------------------ hand-drawn symbols
# (advance in em, strokes as polylines in em with y up from the baseline)


def _arc(cx: float, cy: float, rx: float, ry: float, a0: float, a1: float, n: int = 12) -> list[tuple[float, float]]:
    t = np.linspace(np.deg2rad(a0), np.deg2rad(a1), n)
    return list(zip((cx + rx * np.cos(t)).tolist(), (cy + ry * np.sin(t)).tolist()))


STROKES: dict[str, tuple[float, list[list[tuple[float, float]]]]] = {
    "−": (0.62, [[(0.08, 0.3), (0.54, 0.3)]]),
    "+": (0.62, [[(0.31, 0.06), (0.31, 0.54)], [(0.07, 0.3), (0.55, 0.3)]]),
    "×": (0.6, [[(0.13, 0.12), (0.47, 0.48)], [(0.13, 0.48), (0.47, 0.12)]]),
    "÷": (0.62, [[(0.08, 0.3), (0.54, 0.3)], _arc(0.31, 0.5, 0.035, 0.035, 0, 360, 8),
                 _arc(0.31, 0.1, 0.035, 0.035, 0, 360, 8)]),
    "=": (0.62, [[(0.08, 0.4), (0.54, 0.4)], [(0.08, 0.2), (0.54, 0.2)]]),
    "±": (0.62, [[(0.31, 0.18), (0.31, 0.6)], [(0.08, 0.39), (0.54, 0.39)], [(0.08, 0.05), (0.54, 0.05)]]),
    "·": (0.3, [_arc(0.15, 0.3, 0.03, 0.03, 0, 360, 8)]),
    "°": (0.34, [_arc(0.16, 0.6, 0.09, 0.09, 0, 360, 12)]),
    "≤": (0.62, [[(0.52, 0.58), (0.1, 0.4), (0.52, 0.22)], [(0.1, 0.06), (0.52, 0.06)]]),
    "≥": (0.62, [[(0.1, 0.58), (0.52, 0.4), (0.1, 0.22)], [(0.1, 0.06), (0.52, 0.06)]]),
    "<": (0.6, [[(0.5, 0.54), (0.1, 0.3), (0.5, 0.06)]]),
    ">": (0.6, [[(0.1, 0.54), (0.5, 0.3), (0.1, 0.06)]]),
    "≠": (0.62, [[(0.08, 0.4), (0.54, 0.4)], [(0.08, 0.2), (0.54, 0.2)], [(0.42, 0.6), (0.2, 0.0)]]),
    "≈": (0.62, [_arc(0.2, 0.4, 0.12, 0.06, 180, 0, 6) + _arc(0.42, 0.4, 0.1, 0.06, 180, 360, 6),
                 _arc(0.2, 0.2, 0.12, 0.06, 180, 0, 6) + _arc(0.42, 0.2, 0.1, 0.06, 180, 360, 6)]),
    "√": (0.62, [[(0.02, 0.32), (0.12, 0.38), (0.26, 0.0), (0.5, 0.8), (0.62, 0.8)]]),
    "π": (0.62, [[(0.04, 0.46), (0.14, 0.52), (0.58, 0.5)], [(0.2, 0.5), (0.16, 0.0)],
                 [(0.44, 0.5), (0.44, 0.08), (0.54, 0.0)]]),
    "∞": (0.78, [_arc(0.22, 0.28, 0.16, 0.14, 0, 360, 14), _arc(0.54, 0.28, 0.16, 0.14, 180, 540, 14)]),
    "→": (0.7, [[(0.06, 0.3), (0.62, 0.3)], [(0.48, 0.42), (0.63, 0.3), (0.48, 0.18)]]),
    "⇒": (0.74, [[(0.06, 0.4), (0.56, 0.4)], [(0.06, 0.2), (0.56, 0.2)], [(0.46, 0.55), (0.66, 0.3), (0.46, 0.05)]]),
    "α": (0.62, [_arc(0.26, 0.24, 0.2, 0.23, 20, 340, 14) + [(0.5, 0.46)], [(0.46, 0.16), (0.58, 0.0)]]),
    "β": (0.6, [[(0.12, -0.24), (0.12, 0.56)] + _arc(0.27, 0.56, 0.15, 0.16, 180, -60, 8)
                + _arc(0.28, 0.2, 0.2, 0.2, 60, -170, 10)]),
    "γ": (0.6, [[(0.04, 0.42), (0.16, 0.46), (0.32, 0.1), (0.24, -0.2), (0.3, -0.24), (0.36, -0.1), (0.54, 0.46)]]),
    "δ": (0.58, [[(0.44, 0.72), (0.22, 0.7), (0.18, 0.58), (0.42, 0.44)] + _arc(0.3, 0.22, 0.2, 0.22, 60, 420, 14)]),
    "ε": (0.5, [_arc(0.28, 0.36, 0.16, 0.12, 60, 270, 8) + _arc(0.28, 0.12, 0.18, 0.12, 90, 300, 8)]),
    "θ": (0.58, [_arc(0.29, 0.36, 0.2, 0.36, 90, 450, 16), [(0.12, 0.36), (0.46, 0.36)]]),
    "λ": (0.6, [[(0.1, 0.72), (0.24, 0.66), (0.54, 0.0)], [(0.32, 0.36), (0.06, 0.0)]]),
    "μ": (0.62, [[(0.1, -0.24), (0.12, 0.48)], [(0.12, 0.2)] + _arc(0.28, 0.16, 0.16, 0.16, 180, 360, 8)
                 + [(0.44, 0.48)], [(0.44, 0.48), (0.46, 0.06), (0.56, 0.0)]]),
    "ρ": (0.58, [[(0.12, -0.26), (0.12, 0.24)] + _arc(0.3, 0.24, 0.18, 0.22, 180, -180, 14)]),
    "σ": (0.6, [_arc(0.26, 0.22, 0.18, 0.22, 70, 430, 14) + [(0.58, 0.46)]]),
    "τ": (0.56, [[(0.04, 0.42), (0.1, 0.46), (0.52, 0.46)], [(0.28, 0.46), (0.26, 0.06), (0.36, 0.0)]]),
    "φ": (0.64, [_arc(0.32, 0.24, 0.24, 0.22, 0, 360, 14), [(0.36, 0.62), (0.28, -0.26)]]),
    "ω": (0.76, [[(0.12, 0.46)] + _arc(0.24, 0.18, 0.14, 0.2, 180, 360, 8)[:-1]
                 + _arc(0.52, 0.18, 0.14, 0.2, 180, 360, 8) + [(0.64, 0.46)]]),
    "Δ": (0.7, [[(0.35, 0.72), (0.06, 0.0), (0.64, 0.0), (0.35, 0.72)]]),
    "Σ": (0.62, [[(0.56, 0.72), (0.08, 0.72), (0.36, 0.36), (0.08, 0.0), (0.56, 0.0)]]),
    "Ω": (0.7, [[(0.06, 0.0), (0.24, 0.02)] + _arc(0.35, 0.42, 0.24, 0.3, 235, -55, 14) + [(0.46, 0.02), (0.64, 0.0)]]),
    "Θ": (0.68, [_arc(0.34, 0.36, 0.26, 0.36, 90, 450, 16), [(0.2, 0.36), (0.48, 0.36)]]),
    "Π": (0.68, [[(0.06, 0.72), (0.62, 0.72)], [(0.16, 0.72), (0.16, 0.0)], [(0.52, 0.72), (0.52, 0.0)]]),
    "Φ": (0.7, [_arc(0.35, 0.36, 0.26, 0.24, 0, 360, 14), [(0.35, 0.72), (0.35, 0.0)]]),
}


def stroked(path: str, char: str) -> bool:
    """Whether ``char`` is drawn by hand as strokes: always for the symbols a font lacks."""
    return char in STROKES and ord(char) not in _cmap(path)


@cache
def _digit_height(path: str, size: int) -> float:
    """Median ink height of the ten digits: some fonts draw a small 0 and tall 4-9, so one digit misleads."""
    heights = [bottom - top for top, bottom in (ink_rows(path, size, d) for d in "0123456789")]
    return max(1.0, float(np.median(heights)))


class HandFace:
    """Layout metrics for one writer: the font's glyphs, normalised to a common digit height."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.path = font_path(writer.font)
        self._ref = 200
        self.norm = DIGIT_HEIGHT_EM * self._ref / _digit_height(self.path, self._ref)  # font size per em
        self.axis = 0.3
        self.rule = writer.pen
        self._cache: dict[str, tuple[float, float, float]] = {}

    def metrics(self, text: str, kind: str) -> tuple[float, float, float]:
        if text in self._cache:
            return self._cache[text]
        adv = asc = desc = 0.0
        for ch in text:
            a, up, down = self._char(ch)
            adv, asc, desc = adv + a, max(asc, up), max(desc, down)
        self._cache[text] = (adv, asc, desc)
        return self._cache[text]

    def _char(self, ch: str) -> tuple[float, float, float]:
        return _char_metrics(self.path, ch, self._ref, self.norm, self.writer.spacing, self.writer.pen)


@lru_cache(maxsize=16384)  # per font and writer: a page of prose asks for the same letters again and again
def _char_metrics(path: str, ch: str, size: int, norm: float, spacing: float, pen: float) -> tuple[float, float, float]:
    if ch == " ":
        return 0.3, 0.0, 0.0
    if stroked(path, ch):
        adv, strokes = STROKES[ch]
        ys = [y for s in strokes for _, y in s]
        return adv * spacing, max(ys) + pen, max(0.0, -min(ys)) + pen
    top, bottom = ink_rows(path, size, ch)
    adv = font(path, size).getlength(ch) * norm / size
    return adv * spacing, max(0.0, -top) * norm / size, max(0.0, bottom) * norm / size


# ------------------------------------------------------------------------------ the hand


@dataclass(frozen=True)
class Line:
    """Baseline drift of one written line: a slow wave plus a slope, both in em."""

    amplitude: float
    wavelength: float
    phase: float
    slope: float

    def offset(self, dx_em: float) -> float:
        return self.amplitude * math.sin(2 * math.pi * dx_em / self.wavelength + self.phase) + self.slope * dx_em


def sample_line(rng: np.random.Generator, writer: Writer) -> Line:
    j = NEATNESS[writer.neatness]
    return Line(amplitude=float(rng.uniform(0.3, 1.0) * j.drift), wavelength=float(rng.uniform(6.0, 14.0)),
                phase=float(rng.uniform(0, 2 * math.pi)), slope=float(rng.normal(0, j.drift / 12)))


class Hand:
    """Turns laid-out ops into jittered ink marks. All randomness comes from the rng it is given."""

    def __init__(self, writer: Writer, rng: np.random.Generator) -> None:
        self.writer, self.rng = writer, rng
        self.face = HandFace(writer)
        self.jit = NEATNESS[writer.neatness]
        self.shear = math.tan(math.radians(writer.slant))

    def word_size(self, size: float) -> float:
        """The em a whole word is written at: a hand varies its size word by word, not letter by letter."""
        return size * float(np.exp(self.rng.normal(0.0, self.jit.size * 0.5)))

    def word_marks(self, ops: tuple[Op, ...], x: float, y: float, size: float, line: Line) -> list[InkMark]:
        """Ink for a prose word: the word moves as a whole, its letters stray only a little (``WORD_CALM``)."""
        j = self.jit
        dy = float(self.rng.normal(0.0, j.position * size))
        calm = Jitter(position=j.position * WORD_CALM, rotate=j.rotate * WORD_CALM, size=j.size * WORD_CALM,
                      slant=j.slant * WORD_CALM, drift=j.drift, wobble=j.wobble, cross_out=j.cross_out)
        self.jit = calm
        try:
            return self.marks(ops, x, y + dy, size, line)
        finally:
            self.jit = j

    def marks(self, ops: tuple[Op, ...], x: float, y: float, size: float, line: Line) -> list[InkMark]:
        """Ink for ``ops`` laid out with the origin at (x, y); ``size`` is the line's em in px."""
        out: list[InkMark] = []
        for op in ops:
            if isinstance(op, GlyphOp):
                out.extend(self._glyphs(op, x, y, size, line))
            elif isinstance(op, RuleOp):
                out.append(self._bar(x + op.x0, x + op.x1, y + op.y + self._drift(line, op.x0, size), size))
            elif isinstance(op, PathOp):
                pts = tuple((x + px, y + py + self._drift(line, px, size)) for px, py in op.points)
                out.append(self._stroke(pts, size))
            elif isinstance(op, DelimOp):
                dy = self._drift(line, op.x, size)
                out.extend(self._stroke(pts, size) for pts in delim_strokes(op, x, y + dy))
        return out

    def _drift(self, line: Line, dx: float, size: float) -> float:
        return line.offset(dx / size) * size

    def _glyphs(self, op: GlyphOp, x: float, y: float, size: float, line: Line) -> list[InkMark]:
        out: list[InkMark] = []
        cx = op.x
        for ch in op.text:
            adv = self.face.metrics(ch, op.kind)[0] * op.size
            if ch != " ":
                out.extend(self._char(ch, x + cx, y + op.y + self._drift(line, cx, size), op.size))
            cx += adv
        return out

    def _char(self, ch: str, x: float, y: float, size: float) -> list[InkMark]:
        j, r = self.jit, self.rng
        dx, dy = r.normal(0, j.position * size, 2)
        scale = float(np.exp(r.normal(0, j.size)))
        angle = float(r.normal(0, j.rotate))
        shear = math.tan(math.radians(self.writer.slant + r.normal(0, j.slant)))
        alpha = self.writer.pressure * float(r.uniform(0.88, 1.0))
        if stroked(self.face.path, ch):
            return self._symbol(ch, x + dx, y + dy, size * scale, angle, shear, alpha)
        return [InkGlyph(self.face.path, ch, x + dx, y + dy, size * scale * self.face.norm, angle, shear, alpha)]

    def _symbol(self, ch: str, x: float, y: float, size: float, angle: float, shear: float,
                alpha: float) -> list[InkMark]:
        _, strokes = STROKES[ch]
        th = math.radians(angle)
        c, s = math.cos(th), math.sin(th)
        out: list[InkMark] = []
        for stroke in strokes:
            pts = []
            for ex, ey in stroke:
                px, py = ex * size, -ey * size  # y down
                px -= shear * py
                pts.append((x + c * px + s * py, y - s * px + c * py))
            out.append(self._stroke(tuple(pts), size, alpha))
        return out

    def _bar(self, x0: float, x1: float, y: float, size: float) -> InkMark:
        r, j = self.rng, self.jit
        n = max(3, int((x1 - x0) / (0.5 * size)) + 2)
        xs = np.linspace(x0, x1, n) + np.r_[r.normal(0, j.position * size), np.zeros(n - 2),
                                            r.normal(0, j.position * size)]
        tilt = r.normal(0, j.rotate / 3) * math.pi / 180
        ys = y + (xs - x0) * tilt + _smooth_noise(r, n, j.wobble * size)
        return InkStroke(tuple(zip(xs.tolist(), ys.tolist())), self._width(size),
                         self.writer.pressure * float(r.uniform(0.9, 1.0)))

    def _stroke(self, pts: tuple[tuple[float, float], ...], size: float, alpha: float | None = None) -> InkMark:
        """A pen stroke through ``pts``: subdivided, then every point nudged by a smooth wobble."""
        r = self.rng
        arr = np.asarray(pts, float)
        fine = [arr[0]]
        for a, b in zip(arr[:-1], arr[1:]):
            k = max(1, int(np.hypot(*(b - a)) / (0.25 * size)))
            fine.extend(a + (b - a) * t for t in np.linspace(0, 1, k + 1)[1:])
        fine_arr = np.asarray(fine)
        wob = self.jit.wobble * size
        fine_arr += np.stack([_smooth_noise(r, len(fine_arr), wob), _smooth_noise(r, len(fine_arr), wob)], axis=1)
        a = self.writer.pressure * float(r.uniform(0.9, 1.0)) if alpha is None else alpha
        return InkStroke(tuple(map(tuple, fine_arr.tolist())), self._width(size), a)

    def _width(self, size: float) -> float:
        return max(1.2, self.writer.pen * size)

    def cross_out(self, x: float, y: float, size: float, line: Line) -> tuple[list[InkMark], list[InkMark], float]:
        """A false start and the strokes through it; returns (word marks, strike marks, width in px)."""
        r = self.rng
        word = "".join(str(int(d)) for d in r.integers(0, 10, int(r.integers(1, 4))))
        laid = layout(Row((Sym(word, "ord"),)), self.face, size)
        word_marks = self.marks(laid.ops, x, y, size, line)
        mid = y - 0.3 * size + self._drift(line, 0.0, size)
        strikes = []
        for k in range(int(r.integers(1, 3))):
            off = (k - 0.5) * 0.14 * size
            strikes.append(self._stroke(((x - 0.1 * size, mid + off + r.normal(0, 0.08 * size)),
                                         (x + laid.width + 0.1 * size, mid + off + r.normal(0, 0.08 * size))), size))
        return word_marks, strikes, laid.width + 0.45 * size


def _smooth_noise(rng: np.random.Generator, n: int, sd: float) -> np.ndarray:
    """Correlated noise: a random walk low-passed, so strokes bend instead of jittering."""
    if n <= 1 or sd <= 0:
        return np.zeros(n)
    walk = np.cumsum(rng.normal(0, 1, n))
    walk -= np.linspace(walk[0], walk[-1], n) * 0.5
    walk -= walk.mean()
    peak = np.abs(walk).max()
    return walk / peak * sd if peak > 0 else walk


# ------------------------------------------------------------------------------ public helpers


def hand_layout(content: str, face: HandFace, size: float, *, latex: bool) -> Laid:
    """Lay out a LaTeX line (``latex=True``) or plain words with the writer's metrics."""
    node = parse(content) if latex else Row((Sym(content, "text"),))
    return layout(node, face, size)


def write(pixels: np.ndarray, content: str, *, x: float, y: float, writer: Writer, rng: np.random.Generator,
          size: float | None = None, latex: bool = False, key: str = "handwriting") -> tuple[np.ndarray, dict]:
    """Write ``content`` by hand onto a copy of ``pixels`` with its baseline starting at (x, y).

    ``size`` is the em in px (default: 2.8% of the page width times the writer's size, about the
    handwriting size of :func:`render.page.render_page`). Returns the new pixels and
    ``{key: (x0, y0, x1, y1)}``, the extent of the new ink.
    """
    h, w = pixels.shape[:2]
    size = float(size if size is not None else 0.028 * w * writer.size)
    hand = Hand(writer, rng)
    laid = hand_layout(content, hand.face, size, latex=latex)
    layer = InkLayer(h, w)
    for mark in hand.marks(laid.ops, x, y, size, sample_line(rng, writer)):
        layer.draw(key, mark)
    return lay_ink(pixels, layer.a, writer.rgb), layer.boxes()

