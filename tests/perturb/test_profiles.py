"""Capture profiles: physical order, replay, per-op records in their bins, and profiles in a run."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from perturb.photo import OPS, tilt
from perturb.photo.base import DegradationError, ReversePage
from perturb.photo.functional.geometric import compose_forward
from perturb.photo.measure import text_lean, weighted_median
from perturb.photo.profile import degrade_profile, geometry_warps, physical_order
from synth.config import load_config
from synth.manifest import read_manifest
from synth.pipeline import run
from tests.conftest import benchmark, tiny_config
from tests.perturb.test_figure_marking import figure_pages
from tests.perturb.test_photo_ops import pages

DESK_LAMP = [("jpeg", 1), ("tilt", 2), ("glare", 2), ("background", 1), ("question_marking", 1),
             ("bleed_through", 1)]


def test_ops_run_in_physical_order_whatever_order_they_are_listed_in() -> None:
    # Light falls on the scene the geometry leaves (desk and sheet alike), so glare comes after tilt.
    assert [s for s, _ in physical_order(DESK_LAMP)] == ["question_marking", "bleed_through", "tilt", "background",
                                                         "glare", "jpeg"]
    assert physical_order([("blur", 0), ("noise", 1)]) == [("noise", 1)]


def test_an_op_listed_twice_is_refused() -> None:
    with pytest.raises(DegradationError, match="'blur' twice"):
        physical_order([("blur", 1), ("blur", 2)])


def test_profile_records_every_op_and_replays_to_the_same_bytes() -> None:
    img, page = pages()[0]
    back, _ = pages()[1]
    rev = ReversePage(back, "other-page")
    out, new_page, recs = degrade_profile(img, page, DESK_LAMP, np.random.default_rng(9), reverse=rev)
    again, again_page, again_recs = degrade_profile(img, page, DESK_LAMP, None, params=[r.params for r in recs],
                                                    reverse=rev)
    assert out.tobytes() == again.tobytes() and new_page == again_page
    assert [r.subtype for r in recs] == [s for s, _ in physical_order(DESK_LAMP)]
    assert [r.measured for r in recs] == [r.measured for r in again_recs]
    assert json.loads(json.dumps([r.params for r in recs])) == [r.params for r in recs]
    bleed = next(r for r in recs if r.subtype == "bleed_through")
    assert bleed.params["source"] == "reverse_page" and bleed.params["reverse_ref"] == "other-page"


def test_each_op_in_a_profile_still_lands_in_its_own_bin() -> None:
    for seed in range(6):
        img, page = pages()[seed % 3]
        _, _, recs = degrade_profile(img, page, [("tilt", 3), ("shadow", 2), ("background", 2)],
                                     np.random.default_rng(seed))
        by = {r.subtype: r.measured for r in recs}
        assert tilt.BINS[3][0] < by["tilt"]["abs_angle_deg"] <= tilt.BINS[3][1]
        assert 0.30 <= by["shadow"]["content_coverage"] <= 0.60


def test_bleed_through_shows_the_reverse_page_not_the_front() -> None:
    img, page = pages()[0]
    blank = np.full_like(img, 250)
    out_blank, _, rec = degrade_profile(img, page, [("bleed_through", 3)], np.random.default_rng(0),
                                        reverse=ReversePage(blank, "blank"))
    out_real, _, _ = degrade_profile(img, page, [("bleed_through", 3)], None, params=[rec[0].params],
                                     reverse=ReversePage(pages()[2][0], "page-2"))
    # A blank reverse side darkens almost nothing; a printed one shows through (pixels clearly darker than the
    # paper around them, beyond the camera's grain and light).
    paper = img.min(axis=2) > 200

    def shows(out: np.ndarray) -> float:
        luma = cv2.cvtColor(out, cv2.COLOR_RGB2GRAY).astype(int)
        return float((luma < cv2.blur(luma.astype(np.uint8), (15, 15)).astype(int) - 12)[paper].mean())

    assert shows(out_blank) < 0.002 < shows(out_real)


def test_replaying_a_reverse_page_bleed_without_the_page_says_what_to_pass() -> None:
    img, page = pages()[0]
    _, _, recs = degrade_profile(img, page, [("bleed_through", 2)], np.random.default_rng(0),
                                 reverse=ReversePage(pages()[1][0], "p1"))
    with pytest.raises(DegradationError, match="pass degrade\\(..., reverse="):
        degrade_profile(img, page, [("bleed_through", 2)], None, params=[recs[0].params])


def test_packaged_profiles_config_is_valid_and_names_six_profiles() -> None:
    cfg = load_config("capture_profiles")
    assert [p.name for p in cfg.degrade.profiles][:3] == ["desk_lamp_tilted", "dim_phone_shot", "scanned_copy"]
    assert len(cfg.degrade.profiles) == 6


def test_a_run_with_profiles_writes_one_item_per_profile_with_ordered_records(tmp_path) -> None:
    lamp = {"name": "lamp", "ops": [{"subtype": "tilt", "severity": 1}, {"subtype": "bleed_through", "severity": 1},
                                    {"subtype": "jpeg", "severity": 1}]}
    cfg = tiny_config(count=2, degrade={"ops": [{"subtype": "figure_marking", "severities": [1]}], "profiles": [lamp]})
    run(cfg, tmp_path / "r")
    rows = list(read_manifest(tmp_path / "r"))
    prof = [r for r in rows if r["id"].endswith("-p1")]
    # apply_to's default photographs every page: each base's clean control and its error variant, once each
    pages = [r["id"] for r in rows if not r["degradations"]]
    assert len(pages) == 4 and sorted(r["source_id"] for r in prof) == sorted(pages)
    assert all([d["subtype"] for d in r["degradations"]] == ["bleed_through", "tilt", "jpeg"] for r in prof)
    for r in prof:
        index = int(r["base_id"].rsplit("-", 1)[1])
        assert r["degradations"][0]["params"]["reverse_ref"] == f"tiny-{2 + index:06d}"
    # The worksheets have no figure: figure_marking is skipped and counted, never faked.
    assert not [r for r in rows if r["id"].endswith("-d1")]
    stats = json.loads((tmp_path / "r" / "stats.json").read_text())
    assert stats["counts"]["degradations"]["figure_marking:1:not_applicable"] == 2


def test_figure_pages_take_figure_marking_inside_a_profile() -> None:
    img, page = figure_pages()[0]
    _, _, recs = degrade_profile(img, page, [("figure_marking", 2), ("keystone", 1)], np.random.default_rng(1))
    assert recs[0].subtype == "figure_marking" and 2 <= recs[0].measured["marks"] <= 3


def _profile_records(name: str, number: int) -> dict:
    """The records of capture profile ``name`` on benchmarks/degrade.py's page ``number`` (the bin tables' pages)."""
    bench = benchmark("degrade")
    profile = {p.name: p for p in load_config(bench.PROFILES).degrade.profiles}[name]
    sheet = bench.sheets(1, 60, number)[0]
    steps = [(s.subtype, s.severity) for s in profile.ops]
    recs = degrade_profile(sheet.pixels, sheet.page, steps, np.random.default_rng(number), reverse=sheet.reverse,
                           text=sheet.text)[2]
    return {r.subtype: r for r in recs}


def test_noise_after_a_shadow_is_aimed_at_the_photo_it_lands_on() -> None:
    """Noise's spread grows with the grey level (shot noise), so a spread aimed at paper under the base layer's light
    reads cleaner on a shadowed photo: in dim_phone_shot (shadow 2, then noise 2) benchmarks/degrade.py's pages 479
    and 509 read 30.3 and 30.1 dB, past severity 2's bin (24-30). The spread is now aimed at the photo's own levels,
    and lands within a few tenths of a dB of its target."""
    from perturb.photo.noise import BINS

    for number in (479, 509):
        rec = _profile_records("dim_phone_shot", number)["noise"]
        assert BINS[2][0] <= rec.measured["psnr_db"] < BINS[2][1], (number, rec.measured)
        assert abs(rec.measured["psnr_db"] - rec.params["target_psnr_db"]) < 0.4, (number, rec.measured, rec.params)


def test_bleed_through_reaches_severity_2_where_the_reverse_barely_meets_the_text() -> None:
    """Pages 469 and 529 in scanned_copy: at severity 2's strongest ink (0.6) the reverse print darkened 0.56 and
    0.68 % of the front's text area, under the bin's 0.8 %; they now get the ink the bin's floor needs."""
    from perturb.photo.bleed_through import BINS

    for number in (469, 529):
        rec = _profile_records("scanned_copy", number)["bleed_through"]
        assert BINS[2][0] <= rec.measured["text_obscured"] < BINS[2][1], (number, rec.measured)


@pytest.mark.parametrize("level", [60, 150, 252])
def test_noise_spread_aimed_on_a_photo_gives_its_psnr_in_shade_and_at_white(level: int) -> None:
    """Dark paper has less shot noise; paper lit nearly to white has half of each grain clipped away: both read
    cleaner than paper at the base layer's light for the same spread, and the aim accounts for both."""
    from perturb.photo.functional.camera import add_noise
    from perturb.photo.noise import sigma_for_psnr, sigma_on_photo

    image = np.full((400, 300, 3), level, np.uint8)
    image[100:110, 40:260] = 30  # a line of print
    for target in (27.0, 20.0):
        sigma = sigma_on_photo(image, target)
        out = add_noise(image, {"sigma_paper": sigma, "chroma_frac": 0.25, "noise_seed": 3})
        assert abs(cv2.PSNR(image, out) - target) < 0.3, (level, target, sigma)
        if level != 150:  # the open-loop spread, aimed at paper at 232, misses here
            naive = add_noise(image, {"sigma_paper": sigma_for_psnr(target), "chroma_frac": 0.25, "noise_seed": 3})
            assert abs(cv2.PSNR(image, naive) - target) > 0.5


def test_a_glare_on_dense_writing_moves_to_where_its_smallest_core_fits_severity_1() -> None:
    """On a small photo of a curled, turned sheet the writing is dense: a 6 px glare core centred on a stroke washed
    out 0.124 and 0.182 of the ink (pages 183 and 586 in curled_page_flash), past severity 1's 0.12."""
    from perturb.photo.glare import BINS

    for number in (183, 586):
        rec = _profile_records("curled_page_flash", number)["glare"]
        assert BINS[1][0] <= rec.measured["text_under_glare"] < BINS[1][1], (number, rec.measured)


@pytest.mark.parametrize("tilt_severity", [1, 2, 3])
def test_a_bent_sheets_tilt_is_its_writings_and_keeps_the_writing_in_the_bin(tilt_severity: int) -> None:
    # A sheet bent in an S leans its lines near the bend by several degrees more than the sheet itself: turned by
    # the angle drawn for a flat sheet, 16 of 40 curled_page_flash photos (paper_warp 2 + tilt 1, seed 8675309)
    # had writing at 16-29 degrees under a severity-1 record. The writing's angle, read from the photo's own map
    # (the records replayed), is what the record says (its length-weighted median) and lies in the bin wherever
    # the bend leaves room for it (a severely curled sheet's writing can spread wider than a bin).
    lo, hi = tilt.BINS[tilt_severity]
    for seed in range(9):
        img, page = pages()[seed % 3]
        _, _, recs = degrade_profile(img, page, [("paper_warp", 1 + seed % 2), ("tilt", tilt_severity)],
                                     np.random.default_rng(seed))
        angles, weights = text_lean(compose_forward(geometry_warps(recs, page)), page)
        rec = next(r.measured for r in recs if r.subtype == "tilt")
        assert rec["abs_angle_deg"] == pytest.approx(abs(weighted_median(angles, weights)), abs=0.01)
        assert OPS["tilt"].rubric.holds(tilt_severity, rec["abs_angle_deg"])
        spread = float(angles.max() - angles.min())
        if spread <= (2 * hi if tilt_severity == 1 else hi - lo) - 2 * tilt.LEAN_MARGIN_DEG:
            assert np.abs(angles).max() <= hi and (tilt_severity == 1 or np.abs(angles).min() >= lo), (seed, rec)
        assert rec["text_angle_range_deg"] == pytest.approx([np.abs(angles).min(), np.abs(angles).max()], abs=0.01)


def test_a_flat_sheets_tilt_is_the_angle_it_drew() -> None:
    img, page = pages()[0]
    _, _, recs = degrade_profile(img, page, [("tilt", 2), ("background", 1)], np.random.default_rng(3))
    rec = recs[0]
    assert rec.measured["angle_deg"] == rec.params["angle_deg"] and "sheet_angle_deg" not in rec.measured


@pytest.mark.parametrize("before", ["paper_warp", "keystone"])
def test_a_tilt_after_a_bend_on_an_image_without_layout_leans_as_its_rows(before: str) -> None:
    # An image of your own has no text boxes: the writing's lean fell back to the page's rows and columns, and the
    # columns (at +-90 degrees) outweighed the rows, so a severity-1 tilt turned the sheet 45 degrees, or recorded 90.
    from perturb.albu import page_for

    page = page_for(800, 1100, 100)
    img = np.full((1100, 800, 3), 245, np.uint8)
    img[200:900:40, 100:700] = 30  # rows of "writing"
    for seed in range(4):
        _, _, recs = degrade_profile(img, page, [(before, 2), ("tilt", 1)], np.random.default_rng(seed))
        rec = next(r for r in recs if r.subtype == "tilt")
        assert OPS["tilt"].rubric.holds(1, rec.measured["abs_angle_deg"]), rec.measured
        assert abs(rec.params["angle_deg"]) <= 15, rec.params
