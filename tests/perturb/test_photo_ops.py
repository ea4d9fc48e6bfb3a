"""Photographic ops: identity at 0, replayable, graded into the rubric bins, boxes follow geometry."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache

import cv2
import numpy as np
import pytest

from perturb.photo import REGISTRY, degrade
from perturb.photo.base import DegradationError
from perturb.photo.functional import lighting
from perturb.photo.rotation import ROTATION_BY_SEVERITY
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.generators import get_family
from synth.records import RenderedPage
from tests.perturb.test_figure_marking import with_figure

OPS = sorted(REGISTRY)
GEOMETRIC = ["rotation", "tilt", "keystone", "paper_warp", "background"]
SEEDS = range(30)


@cache
def pages() -> tuple[tuple[np.ndarray, RenderedPage], ...]:
    """Small real worksheets with a triangle figure (60 dpi keeps the suite fast; params scale with dpi)."""
    out = []
    for i, (family, qtype) in enumerate([("arithmetic.order_of_operations", "free"),
                                         ("algebra.linear.two_step", "mcq"),
                                         ("algebra.linear.two_step", "free")]):
        p = get_family(family).build(np.random.default_rng(i), difficulty="hard", question_type=qtype,
                                     problem_id=f"p{i}")
        r = render_page(p, clean_variant(p), dpi=60)
        out.append(with_figure(r.pixels, r.page, np.random.default_rng(50 + i)))
    return tuple(out)


@pytest.mark.parametrize("op", OPS)
def test_severity_zero_returns_the_input_unchanged(op: str) -> None:
    img, page = pages()[0]
    out, new_page, rec = degrade(img, page, op, 0, np.random.default_rng(1))
    assert out is img and new_page == page and rec.severity == 0 and rec.params == {}


# The handwritten_* ops need the page's words; tests/perturb/test_handwritten_ops.py replays them.
@pytest.mark.parametrize("op", [s for s in OPS if not REGISTRY[s].uses_text])
def test_same_seed_gives_same_bytes_and_replay_reproduces_them(op: str) -> None:
    img, page = pages()[1]
    out, new_page, rec = degrade(img, page, op, 2, np.random.default_rng(11))
    again, _, _ = degrade(img, page, op, 2, np.random.default_rng(11))
    replay, replay_page, replay_rec = degrade(img, page, op, 2, np.random.default_rng(999), params=rec.params)
    assert out.tobytes() == again.tobytes() == replay.tobytes()
    assert replay_page == new_page and replay_rec.measured == rec.measured
    assert json.loads(json.dumps(rec.params)) == rec.params and json.dumps(rec.measured)
    assert out.dtype == np.uint8 and out.ndim == 3 and out.tobytes() != img.tobytes()


# Every op states its rubric; the ops that write the page's own words are checked in test_handwritten_ops.py.
@pytest.mark.parametrize("op", [s for s in OPS if not REGISTRY[s].uses_text])
@pytest.mark.parametrize("severity", [1, 2, 3])
def test_measured_effect_lands_in_the_severity_bin(op: str, severity: int) -> None:
    rubric = REGISTRY[op].rubric
    for seed in SEEDS:
        img, page = pages()[seed % len(pages())]
        _, _, rec = degrade(img, page, op, severity, np.random.default_rng(seed))
        value = rec.measured[rubric.measured]
        assert rubric.holds(severity, value), \
            f"{op} severity {severity} seed {seed}: measured {value} outside {rubric.bins[severity]}"


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_rotation_is_detected_from_the_pixels(severity: int) -> None:
    img, page = pages()[0]
    _, new_page, rec = degrade(img, page, "rotation", severity, np.random.default_rng(0))
    assert rec.measured["rotation"] == ROTATION_BY_SEVERITY[severity]
    if severity < 3:
        assert (new_page.width, new_page.height) == (page.height, page.width)


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_question_marking_marks_exactly_the_chosen_tokens(severity: int) -> None:
    for seed in range(10):
        img, page = pages()[seed % len(pages())]
        _, _, rec = degrade(img, page, "question_marking", severity, np.random.default_rng(seed))
        chosen = sorted((r for m in rec.params["marks"] for r in m["tokens"]), key=int)
        assert rec.measured["marked_refs"] == chosen


def test_harm_grows_with_severity_for_the_camera_ops() -> None:
    img, page = pages()[0]
    for op in ("jpeg", "noise", "resolution"):
        db = [degrade(img, page, op, s, np.random.default_rng(3))[2].measured["psnr_db"] for s in (1, 2, 3)]
        assert db[0] > db[1] > db[2], (op, db)


def _ink_only(img: np.ndarray, page: RenderedPage, ref: str) -> tuple[np.ndarray, np.ndarray]:
    """The blank paper, and the paper with only step ``ref`` printed on it."""
    paper = np.empty_like(img)
    paper[:] = np.median(img.reshape(-1, 3), axis=0).astype(np.uint8)
    box = next(b for b in page.layout if b.kind == "step" and b.ref == ref)
    one = paper.copy()
    y0, y1, x0, x1 = int(box.y0), int(np.ceil(box.y1)), int(box.x0), int(np.ceil(box.x1))
    one[y0:y1, x0:x1] = img[y0:y1, x0:x1]
    return paper, one


@pytest.mark.parametrize("op", GEOMETRIC)
@pytest.mark.parametrize("severity", [1, 2, 3])
def test_step_boxes_move_with_the_page(op: str, severity: int) -> None:
    for seed in range(4):
        img, page = pages()[seed % len(pages())]
        _, new_page, rec = degrade(img, page, op, severity, np.random.default_rng(seed))
        for ref in ("1", "3"):
            paper, one = _ink_only(img, page, ref)
            blank_out, _, _ = degrade(paper, page, op, severity, None, params=rec.params)
            ink_out, _, _ = degrade(one, page, op, severity, None, params=rec.params)
            ink = (blank_out.astype(int) - ink_out.astype(int)).sum(axis=2) > 90
            box = next(b for b in new_page.layout if b.kind == "step" and b.ref == ref)
            inside = np.zeros_like(ink)
            y0, x0 = max(0, int(box.y0) - 1), max(0, int(box.x0) - 1)
            inside[y0:int(np.ceil(box.y1)) + 2, x0:int(np.ceil(box.x1)) + 2] = True
            assert ink.sum() > 20, f"{op} seed {seed}: step {ref} left no ink"
            assert (ink & ~inside).sum() <= 0.01 * ink.sum(), f"{op} seed {seed}: step {ref} ink outside its box"


@pytest.mark.parametrize("op", GEOMETRIC)
def test_geometric_boxes_stay_inside_the_output(op: str) -> None:
    img, page = pages()[2]
    out, new_page, _ = degrade(img, page, op, 3, np.random.default_rng(4))
    assert (new_page.height, new_page.width) == out.shape[:2]
    assert len(new_page.layout) == len(page.layout)
    assert all(0 <= b.x0 <= b.x1 <= new_page.width and 0 <= b.y0 <= b.y1 <= new_page.height for b in new_page.layout)


@pytest.mark.parametrize("severity", [1, 3])
def test_tilt_photo_is_a_camera_frame_with_the_page_pixel_count(severity: int) -> None:
    img, page = pages()[0]
    out, _, rec = degrade(img, page, "tilt", severity, np.random.default_rng(2))
    # The photo is the camera's frame (3:4 or 9:16, either way round), not the turned sheet's bounding box, and
    # has the page's pixel count (to rounding), so later ops cost what they do on the flat page.
    h, w = out.shape[:2]
    assert round(min(h, w) / max(h, w), 2) in (0.75, 0.56)
    assert out.shape[0] * out.shape[1] == pytest.approx(img.shape[0] * img.shape[1], rel=0.01)
    assert rec.measured["abs_angle_deg"] > 0


@pytest.mark.parametrize("op", OPS)
def test_bad_severity_and_one_channel_images_are_named(op: str) -> None:
    img, page = pages()[0]
    with pytest.raises(DegradationError, match="severity must be an integer 0-3, got 7"):
        degrade(img, page, op, 7, np.random.default_rng(0))
    with pytest.raises(DegradationError, match="H x W x 3 uint8"):
        degrade(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), page, op, 1, np.random.default_rng(0))


def test_question_marking_without_question_tokens_says_so() -> None:
    img, page = pages()[0]
    with pytest.raises(DegradationError, match="question_token boxes"):
        degrade(img, replace(page, layout=()), "question_marking", 1, np.random.default_rng(0))


@pytest.mark.parametrize("op", ["shadow", "keystone", "question_marking"])
@pytest.mark.parametrize("severity", [1, 3])
def test_replaying_recorded_params_reproduces_every_severity(op: str, severity: int) -> None:
    img, page = pages()[2]
    out, new_page, rec = degrade(img, page, op, severity, np.random.default_rng(21))
    replay, replay_page, _ = degrade(img, page, op, severity, None, params=rec.params)
    assert replay.tobytes() == out.tobytes() and replay_page == new_page


def _mean_measured(op: str, key: str, severity: int, seeds: range = range(6)) -> float:
    return float(np.mean([degrade(*pages()[s % 3], op, severity, np.random.default_rng(s))[2].measured[key]
                          for s in seeds]))


def test_shadow_gets_darker_as_it_covers_more() -> None:
    darkest = []
    for severity in (1, 2, 3):
        ratios = []
        for seed in range(6):
            img, page = pages()[seed % 3]
            out, _, _ = degrade(img, page, "shadow", severity, np.random.default_rng(seed))
            before = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY).astype(float)
            after = cv2.cvtColor(out, cv2.COLOR_RGB2GRAY).astype(float)
            paper = before > 200  # light falling on blank paper, not on ink
            ratios.append(np.percentile(after[paper] / before[paper], 2))
        darkest.append(float(np.mean(ratios)))
    assert darkest[0] > darkest[1] > darkest[2], darkest


def test_shadow_lands_on_the_content_coverage_it_aims_at_150_dpi() -> None:
    """At 150 dpi (the packaged configs' resolution) the measured content coverage is the aimed one: the aim once ran
    on a grid twice as coarse as the measure's and missed by up to 0.066 where the shadow's edge ran along a text line
    (benchmarks/degrade.py's page 6 at severity 2: 0.066 over; photo_sweep with seed 4242 measured 0.603 aimed at
    0.545, out of severity 2's bin, whose margin is 0.05)."""
    p = get_family("geometry.triangle.angle_sum").build(np.random.default_rng(6), difficulty="easy",
                                                        question_type="free", problem_id="bench6")
    r = render_page(p, clean_variant(p), dpi=150)
    for severity in (1, 2, 3):
        _, _, rec = degrade(r.pixels, r.page, "shadow", severity, np.random.default_rng(6))
        miss = rec.measured["content_coverage"] - rec.params["target_content_coverage"]
        assert abs(miss) <= 0.02, (severity, rec.measured, rec.params["target_content_coverage"])


def test_shadow_penumbra_is_soft_and_widens_away_from_the_occluder() -> None:
    params = {"direction_deg": 0.0, "edge_waves": [], "offset": 0.0, "unevenness": 0.0, "leak_phase": 0.0,
              "penumbra_near": 0.04, "penumbra_growth": 3.0, "near_end": 1}
    width, height = 1000, 1400
    xs = np.arange(width, dtype=np.float32)

    def transition_px(y: float) -> float:  # 10 % -> 90 % of the shadow across the edge
        s = lighting.shadow_strength(params, xs, np.full_like(xs, y), width, height)
        return float(np.argmax(s > 0.9) - np.argmax(s > 0.1))

    near, far = transition_px(100.0), transition_px(1300.0)
    assert 15 < min(near, far) and 1.8 * min(near, far) < max(near, far), (near, far)


def test_keystone_far_side_shrinks_with_severity() -> None:
    area = [_mean_measured("keystone", "page_area_frac", s) for s in (1, 2, 3)]
    assert area[0] > area[1] > area[2], area


@pytest.mark.parametrize("side", ["top", "left"])
def test_keystone_sees_the_sheet_as_a_pinhole_camera_does(side: str) -> None:
    """The tipped sheet's length on the photo against its near edge's width is what a pinhole camera
    CAMERA_DISTANCE widths from the sheet's middle sees when the edges' depths differ by the keystone ratio
    (projected here independently, the tip found by bisection). The rule before (0.55 + 0.45 ratio of the length)
    made the sheet 18 % too long at ratio 0.55, the near rows magnified beyond what the camera sees."""
    from perturb.photo.functional.geometric import CAMERA_DISTANCE, keystone_quad

    page = RenderedPage("printed", "f", "plain", "black", 150, 1240, 1754)
    length, width = (page.height, page.width) if side == "top" else (page.width, page.height)
    distance = CAMERA_DISTANCE * page.width
    for ratio in (0.93, 0.75, 0.55):
        def edges(theta: float) -> tuple[float, float, float]:  # near width, far width, length on the photo
            near, far = distance - length / 2 * np.sin(theta), distance + length / 2 * np.sin(theta)
            return width / near, width / far, length / 2 * np.cos(theta) * (1 / near + 1 / far)

        lo, hi = 0.0, np.pi / 2 - 1e-3
        for _ in range(60):
            mid = (lo + hi) / 2
            n, f, _ = edges(mid)
            lo, hi = (mid, hi) if f / n > ratio else (lo, mid)
        n, f, seen = edges(lo)
        expected = (seen / length) / (n / width)  # the photo's length per unit length, against the near edge's scale
        q = keystone_quad({"short_side": side, "ratio": ratio, "margin_frac": 0.0, "corner_jitter": [[0, 0]] * 4},
                          page)
        if side == "top":  # TL, TR, BR, BL: the bottom edge is near
            near_w, photo_len = q[2, 0] - q[3, 0], q[2, 1] - q[1, 1]
        else:  # the right edge is near
            near_w, photo_len = q[2, 1] - q[1, 1], q[1, 0] - q[0, 0]
        got = (photo_len / length) / (near_w / width)
        assert abs(got / expected - 1) < 0.01, (side, ratio, got, expected)


def test_question_marking_underlines_at_1_and_never_covers_a_glyph_without_the_words() -> None:
    # Without the page's words the op cannot tell a given from a word, so it draws nothing over glyphs.
    recs = {s: [degrade(*pages()[seed % 3], "question_marking", s, np.random.default_rng(seed))[2]
                for seed in range(6)] for s in (1, 3)}
    kinds = {s: [m["kind"] for r in recs[s] for m in r.params["marks"]] for s in (1, 3)}
    assert set(kinds[1]) <= {"underline", "circle"}
    assert "scribble" not in kinds[3] and "double_underline" in kinds[3]
    assert all(r.measured["hidden_tokens"] == [] and not r.measured["givens_known"] for s in (1, 3) for r in recs[s])
    ink = [_mean_measured("question_marking", "pen_pixel_frac", s) for s in (1, 2, 3)]
    assert ink[0] < ink[1] < ink[2], ink
