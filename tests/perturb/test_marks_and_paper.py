"""Marks where people make them and paper that behaves like paper (issue 20): question and figure marks,
bleed-through, the handwritten question, paper warp."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from perturb.photo import OPS, degrade
from perturb.photo.handwritten import page_text
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.evaluate.tasks.solvable import REFUSED, _solvable_credit, _solvable_gold
from synth.generators import get_family
from synth.manifest import to_row
from synth.records import Item


@cache
def worksheet(family: str, seed: int, dpi: int = 60):
    p = get_family(family).build(np.random.default_rng(seed), difficulty="medium", question_type="free",
                                 problem_id=f"m{seed}")
    v = clean_variant(p)
    r = render_page(p, v, dpi=dpi)
    return p, v, r.pixels, r.page, page_text(p, v)


NUMBERS = ("arithmetic.order_of_operations", 3)  # "Simplify 18 ÷ 2 − 7 + ..." : most tokens are givens


def test_question_marks_never_hide_a_given_at_severities_1_and_2() -> None:
    for family, seed in (NUMBERS, ("geometry.triangle.angle_sum", 1), ("statistics.mean.bar_chart", 2)):
        _, _, img, page, text = worksheet(family, seed)
        for severity in (1, 2):
            for r in range(6):
                rec = degrade(img, page, "question_marking", severity, np.random.default_rng(r), text=text)[2]
                assert rec.measured["givens_known"]
                assert rec.measured["hidden_tokens"] == [] and rec.measured["hidden_givens"] == [], (family, r)


def test_a_circle_counts_for_the_words_it_rings_not_for_the_line_above() -> None:
    """A circle round "M, is" on a question's second line reaches into the gap above it; beyond those words' ends
    its top was nearer to "KLM" on the first line, and the measure counted KLM as marked too (a severity-2 photo
    measured 4 marked tokens for 3, over its bin: 6 of 200 records on the bench's pages at 150 dpi). Each stroke
    now counts for the line it is drawn on (the line holding its middle, or the one above an underline)."""
    p = get_family("geometry.triangle.angle_sum").build(np.random.default_rng(70), difficulty="medium",
                                                         question_type="free", problem_id="bench70")
    v = clean_variant(p)
    r = render_page(p, v, dpi=150)
    rec = degrade(r.pixels, r.page, "question_marking", 2, np.random.default_rng(70), text=page_text(p, v))[2]
    drawn = sorted({t for m in rec.params["marks"] for t in m["tokens"]}, key=int)
    assert drawn == ["19", "20", "27"]  # a circle round two words of the second line and a line under a third
    assert rec.measured["marked_refs"] == drawn and rec.measured["marked_tokens"] == 3


def test_a_blotted_given_makes_the_row_unsolvable_and_names_it() -> None:
    p, v, img, page, text = worksheet(*NUMBERS)
    blotted = []
    for r in range(40):
        rec = degrade(img, page, "question_marking", 3, np.random.default_rng(r), text=text)[2]
        scribbled = [m["tokens"][0] for m in rec.params["marks"] if m["kind"] == "scribble"]
        if scribbled:
            blotted.append(rec)
            given = text.question_tokens[int(scribbled[0])]
            assert rec.measured["hidden_givens"] == [given]
        else:
            assert rec.measured["hidden_givens"] == []
    assert 4 <= len(blotted) <= 24  # about 30 % of severity-3 photos
    item = Item(id="x-d1", base_id="x", index=0, seed=0, problem=p, variant=v, render=page,
                degradations=(blotted[0],))
    row = to_row(item)
    assert row["solvable"] is False and row["hidden_givens"] == blotted[0].measured["hidden_givens"]
    assert _solvable_gold(item) == REFUSED
    assert _solvable_credit(item, REFUSED) == 1.0 and _solvable_credit(item, p.answer_value) == 0.0
    clean = Item(id="x", base_id="x", index=0, seed=0, problem=p, variant=v, render=page)
    assert to_row(clean)["solvable"] is True and _solvable_gold(clean) == p.answer_value


def _bleed_sharpness(before: np.ndarray, after: np.ndarray) -> float:
    """Edge energy of the bleed layer per unit of its strength: lower is more diffused."""
    import cv2

    layer = (before.astype(np.float32) - after.astype(np.float32)).mean(axis=2)
    return float(cv2.Laplacian(layer, cv2.CV_32F).var() / max(layer.var(), 1e-9))


def test_bleed_through_gets_blurrier_as_it_gets_stronger_and_lands_where_the_reverse_print_is() -> None:
    from perturb.photo.base import ReversePage

    _, _, img, page, _ = worksheet("geometry.triangle.angle_sum", 1, dpi=100)
    _, _, back, _, _ = worksheet("statistics.mean.bar_chart", 2, dpi=100)
    reverse = ReversePage(back, "bars")
    op = OPS["bleed_through"]
    for seed in range(3):
        sharp, strength = [], []
        for severity in (1, 2, 3):
            rec = degrade(img, page, "bleed_through", severity, np.random.default_rng(seed), reverse=reverse)[2]
            out = op.apply(img, {**rec.params, "_reverse": back}, page)[0]  # the op alone, no camera on top
            sharp.append(_bleed_sharpness(img, out))
            strength.append(rec.measured["strength"])
            assert rec.measured["text_obscured"] >= 0.0 and rec.params["duplex_offset_frac"][0] ** 2 < 0.01 ** 2
        assert strength[0] < strength[1] < strength[2], strength
        assert sharp[0] >= sharp[1] >= sharp[2], (seed, sharp)
    # The reverse's bar chart shows through where its bars are: mirrored left-right on a long-edge sheet.
    out = op.apply(img, {**rec.params, "duplex": "long_edge", "_reverse": back}, page)[0]
    bars = [b for b in _worksheet_page("statistics.mean.bar_chart", 2).layout if b.kind == "figure_bar"]
    dark = (img.astype(int) - out.astype(int)).sum(axis=2)
    for b in bars:
        x0, x1 = page.width - b.x1, page.width - b.x0  # mirrored
        inside = dark[int(b.y0) + 4:int(b.y1) - 4, int(x0) + 4:int(x1) - 4]
        assert inside.mean() > 30, b.ref


def _worksheet_page(family: str, seed: int):
    return worksheet(family, seed, dpi=100)[3]


def test_bleed_through_severity_is_graded_on_the_front_text_it_obscures() -> None:
    from perturb.photo.base import ReversePage
    from perturb.photo.bleed_through import BINS

    _, _, img, page, _ = worksheet("geometry.triangle.angle_sum", 1)
    _, _, back, _, _ = worksheet("arithmetic.order_of_operations", 3)
    for severity in (1, 2, 3):
        for seed in range(4):
            rec = degrade(img, page, "bleed_through", severity, np.random.default_rng(seed),
                          reverse=ReversePage(back, "r"))[2]
            lo, hi = BINS[severity]
            assert lo <= rec.measured["text_obscured"] <= hi, (severity, seed, rec.measured)


def test_a_reverse_printed_beside_the_front_text_is_laid_out_behind_it_so_severity_says_what_it_hides() -> None:
    """Two worksheets of short lines at the top left: mirrored through the sheet the reverse's lines land at the top
    right, beside the front's, and at severity 2's darkest ink the bleed hid 0.3 % of the text area, under the bin's
    0.8 % (capture_profiles with seed 4242: 13 of 40 severity-2 records measured under their bin, 9 of them 0.0).
    Such a reverse is laid out behind the front's text, the record says so, and every severity lands in its bin."""
    from perturb.photo.base import ReversePage
    from perturb.photo.bleed_through import BINS

    _, _, img, page, _ = worksheet("algebra.linear.two_step", 1, dpi=100)
    _, _, back, _, _ = worksheet("algebra.linear.two_step", 2, dpi=100)
    for seed in range(3):
        shifts = set()
        for severity in (1, 2, 3):
            rec = degrade(img, page, "bleed_through", severity, np.random.default_rng(seed),
                          reverse=ReversePage(back, "r"))[2]
            lo, hi = BINS[severity]
            assert lo <= rec.measured["text_obscured"] <= hi, (severity, seed, rec.measured)
            shifts.add(tuple(rec.measured["reverse_behind_text_frac"]))
        assert len(shifts) == 1  # one sheet at every severity of the page


def _vertices_px(problem, page) -> dict[str, tuple[float, float]]:
    """The triangle's true vertices in page px: the figure spec's points mapped onto the polygon's box."""
    pts = problem.figure.spec["points"]
    box = next(b for b in page.layout if b.kind == "figure_polygon")
    xs, ys = [p[0] for p in pts.values()], [p[1] for p in pts.values()]
    return {k: (box.x0 + (x - min(xs)) / (max(xs) - min(xs)) * (box.x1 - box.x0),
                box.y1 - (y - min(ys)) / (max(ys) - min(ys)) * (box.y1 - box.y0)) for k, (x, y) in pts.items()}


@pytest.mark.parametrize("dpi", [60, 100, 150])
def test_a_hatch_is_one_mark_at_every_resolution(dpi: int) -> None:
    """A hatch is one pen path, its strokes turning into each other inside the region: clipped at the region's edge,
    its parallel strokes about 0.07 in apart came out as separate blobs at 100-150 dpi (two or three marks for one
    hatch: photo_sweep, rendered at 150 dpi, had 7 of 46 figure_marking records out of their bin per seed)."""
    import cv2

    op = OPS["figure_marking"]
    for family, seed in (("statistics.mean.bar_chart", 2), ("geometry.triangle.angle_sum", 1)):
        _, _, img, page, _ = worksheet(family, seed, dpi=dpi)
        hatches = 0
        for r in range(40):
            rec = degrade(img, page, "figure_marking", 1, np.random.default_rng(r))[2]
            if rec.params["marks"][0]["kind"] != "hatch":
                continue
            hatches += 1
            pen = (op.apply(img, rec.params, page)[0].astype(int) - img).any(axis=2).astype(np.uint8)
            n, _, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(pen, np.ones((3, 3), np.uint8)))
            assert rec.measured["marks"] == 1 and (stats[1:, cv2.CC_STAT_AREA] >= 9).sum() == 1, (family, r)
        assert hatches >= 2, family


def test_figure_marks_sit_on_the_primitives_they_mark() -> None:
    import cv2

    op = OPS["figure_marking"]
    for family in ("geometry.triangle.angle_sum", "statistics.mean.bar_chart"):
        p, _, img, page, _ = worksheet(family, 1, dpi=100)
        dark = img.min(axis=2) < 128
        vertices = _vertices_px(p, page) if family.startswith("geometry") else {}
        triangle = np.float32(list(vertices.values())).reshape(-1, 1, 2)
        bars = {f"figure_bar:{b.ref}": b for b in page.layout if b.kind == "figure_bar"}
        for seed in range(8):
            rec = degrade(img, page, "figure_marking", 3, np.random.default_rng(seed))[2]
            for mark in rec.params["marks"]:
                cx, cy = mark["centre"]
                if mark["kind"] == "circle":  # a circle rings something printed
                    r = 0.7 * mark["radius"]
                    ring = dark[int(cy - r):int(cy + r) + 1, int(cx - r):int(cx + r) + 1]
                    assert ring.any(), (family, seed, mark["element"])
                if ":vertex" in mark["element"]:  # ... and a vertex circle rings a vertex
                    assert min(np.hypot(cx - x, cy - y) for x, y in vertices.values()) < 0.6 * mark["radius"]
                if mark["kind"] == "hatch":  # shading stays inside the shape it shades
                    alone = op.apply(img, {**rec.params, "marks": [mark]}, page)[0]
                    ys, xs = np.nonzero((img.astype(int) - alone.astype(int)).sum(axis=2) > 30)
                    assert xs.size
                    if mark["element"].startswith("figure_polygon"):
                        inside = [cv2.pointPolygonTest(triangle, (float(x), float(y)), True) for x, y in zip(xs, ys)]
                        assert min(inside) > 1.0, (seed, min(inside))
                    else:
                        bar = bars[mark["element"].removesuffix(":inside")]
                        assert bar.x0 < xs.min() and xs.max() < bar.x1 and bar.y0 < ys.min() and ys.max() < bar.y1


def test_paper_warp_is_graded_on_how_curved_the_text_lines_are() -> None:
    from perturb.photo.paper_warp import BINS

    for family, seed in (NUMBERS, ("statistics.mean.bar_chart", 2)):
        _, _, img, page, _ = worksheet(family, seed)
        for r in range(3):
            bows = []
            for severity in (1, 2, 3):
                rec = degrade(img, page, "paper_warp", severity, np.random.default_rng(r))[2]
                lo, hi = BINS[severity]
                assert lo <= rec.measured["text_line_curvature_frac"] <= hi, (family, r, severity, rec.measured)
                bows.append(rec.measured["text_line_curvature_frac"])
            assert bows[0] < bows[1] < bows[2]


def test_a_messy_hand_keeps_every_digit_on_its_baseline() -> None:
    from perturb.photo.base import sample
    from perturb.photo.functional.handwriting import ROLE_SCALE, ROLE_SHIFT_EM, question_marks
    from render.ink import InkGlyph

    _, _, img, page, text = worksheet(*NUMBERS)  # "(3 − 3)" and two-digit numbers
    op = OPS["handwritten_question"]
    checked = 0
    for r in range(12):
        params = sample(op, np.random.default_rng(r), 3, page, text)
        size = float(params["size_px"])
        by_token: dict[str, list[InkGlyph]] = {}
        for key, mark in question_marks(params):
            if isinstance(mark, InkGlyph) and mark.text.isdigit():
                by_token.setdefault(key.split("|")[0], []).append(mark)
        for glyphs in by_token.values():
            if len(glyphs) < 2:
                continue
            ys = [g.y for g in glyphs]
            sizes = [g.size for g in glyphs]
            # Neighbouring digits of one number sit on one baseline (drift along a few letters is tiny) ...
            assert max(ys) - min(ys) <= (2 * ROLE_SHIFT_EM + 0.05) * size, (r, ys)
            # ... at one size: none shrinks into an exponent or an index.
            assert max(sizes) / min(sizes) <= ROLE_SCALE[1] / ROLE_SCALE[0] + 1e-6
            checked += 1
    assert checked >= 12


def test_handwritten_question_at_severity_3_is_messier_than_at_1() -> None:
    from perturb.photo.base import sample

    _, _, img, page, text = worksheet("geometry.triangle.angle_sum", 1, dpi=100)
    op = OPS["handwritten_question"]
    spread = {}
    for severity in (1, 3):
        params = sample(op, np.random.default_rng(0), severity, page, text)
        from perturb.photo.functional.handwriting import question_marks
        from render.ink import InkGlyph

        turns = [m.rotate for _, m in question_marks(params) if isinstance(m, InkGlyph)]
        spread[severity] = float(np.std(turns))
    assert spread[3] > 3 * spread[1]


def test_bleed_through_severity_2_stays_in_its_bin_where_the_share_jumps() -> None:
    """Under one diffused stroke of the reverse many paper pixels need the same strength to show it, so the share of
    the text area it darkens can jump within a few per cent of strength; aimed at the share's quantile (with a 2 %
    cushion) two of benchmarks/degrade.py's pages 200-399 landed past severity 2's bin (pages 229 and 333: 0.0251 and
    0.0255 > 0.025). The strength is now kept where a few per cent either way stays inside the bin."""
    from perturb.photo.bleed_through import BINS
    from tests.conftest import benchmark

    bench = benchmark("degrade")
    lo, hi = BINS[2]
    for number in (229, 333):
        sheet = bench.sheets(1, 60, number)[0]
        rec = degrade(sheet.pixels, sheet.page, "bleed_through", 2, np.random.default_rng(number), text=sheet.text,
                      reverse=sheet.reverse)[2]
        assert lo <= rec.measured["text_obscured"] <= hi, (number, rec.measured)


def test_a_bleed_that_shows_on_more_than_its_bin_at_its_weakest_ink_gets_less_ink() -> None:
    """The bin comes before the severity's ink floor: photo_sweep with seed 31337, page 33 (a reverse laid out behind
    the text) showed the bleed on 2.54 % of the text area at severity 2's weakest ink, 0.12, over its bin's 2.5 %."""
    from perturb.photo.bleed_through import _STRENGTH, BINS, _reach, _strength_for
    from perturb.photo.functional.ink import VISIBLE_BLEED

    # A front's text area of 10,000 paper pixels at luma 230 under print of contrast 200, and reverse ink behind it
    # whose pixels need every strength from 0.05 to 2 to show (3.6 % of them by 0.12).
    need = np.linspace(0.05, 2.0, 10_000)
    tint = [1.0, 1.0, 1.0]
    y, contrast = np.full(need.size, 230.0, np.float32), 200.0
    ink = (VISIBLE_BLEED * contrast / (y * need)).astype(np.float32)
    front = (np.ones(need.size, bool), y, contrast)
    assert _reach(front, ink, _STRENGTH[2][0], tint) > BINS[2][1]
    strength = _strength_for(front, ink, 0.0169, _STRENGTH[2], tint)
    assert strength < _STRENGTH[2][0]
    assert BINS[2][0] <= _reach(front, ink, strength, tint) <= BINS[2][1]
