"""benchmarks/cer_severity.py's tables: what its figures mean, on made-up CERs (no OCR is run)."""

from __future__ import annotations

import math

from tests.conftest import benchmark

cs = benchmark("cer_severity")


def test_a_page_counts_as_non_decreasing_only_if_no_severity_reads_better_than_the_one_before() -> None:
    per_sev = [[0.0, 0.0, 0.0], [0.1, 0.1, 0.3], [0.2, 0.1, 0.2], [0.3, 0.1, 0.9]]  # pages: rises, ties, falls
    assert cs.non_decreasing_share(per_sev) == 100.0 * 2 / 3
    assert cs.non_decreasing_share([[0.0], [0.1004], [0.1], [0.2]]) == 100.0  # equal to 3 decimals is a tie


def test_instability_reads_each_photo_on_its_own_and_measures_the_spread_between_them() -> None:
    # One op, two pages, two photos per page and severity (severity 0 first, as one_op returns them).
    op = [[[0.0, 0.0], [0.0, 0.0]],
          [[0.1, 0.1], [0.5, 0.0]],   # page 2's photos at severity 1 read 0.5 and 0.0
          [[0.2, 0.2], [0.3, 0.3]],
          [[0.3, 0.31], [0.6, 0.6]]]
    lines = cs.instability_section({"tesseract": {"blur": op}}, 2)
    row = next(ln for ln in lines if ln.startswith("| blur"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # Photo 0: page 2 falls 0.5 -> 0.3; photo 1: both rise; the means (0.25, 0.3, 0.6) rise.
    assert cells[1] == "50% / 100%" and cells[2] == "100%"
    # Six (page, severity) readings: 0.5 apart once; 0.01 apart once (not > 0.05).
    assert cells[3] == "17%" and cells[4] == "17%"


def test_independent_photos_are_reported_as_replications_of_the_acceptance_run() -> None:
    # With --redraw every photo d is the whole acceptance run again (params and camera drawn afresh): the section
    # says so, and photo d's share is the share of that replication, page by page as before.
    op = [[[0.0, 0.0, 0.0]],
          [[0.1, 0.4, 0.1]],
          [[0.2, 0.3, 0.2]],
          [[0.3, 0.5, 0.1]]]  # one page: photo 0 rises, photo 1 falls s1 -> s2, photo 2 falls s2 -> s3
    lines = cs.instability_section({"rapidocr": {"paper_warp": op}}, 3, redraw=True)
    assert lines[0] == "## Replications: independent photos of the same pages"
    row = next(ln for ln in lines if ln.startswith("| paper_warp"))
    assert [c.strip() for c in row.strip("|").split("|")][1] == "100% / 0% / 0%"


def test_one_runs_chance_of_passing_is_the_chance_of_at_most_the_allowed_falls() -> None:
    # 24 pages at 90 %: 22 must hold, so at most 2 may fall; every page falling at 10 % is a binomial count.
    binomial = sum(math.comb(24, j) * 0.1**j * 0.9 ** (24 - j) for j in range(3))
    assert abs(cs.pass_chance([0.1] * 24) - binomial) < 1e-12
    assert cs.pass_chance([0.0] * 24) == 1.0
    # 20 pages: 90 % is exactly 18, so 2 may fall (a float 0.9 * 20 = 18.000000000000004 must not ask for 19).
    assert abs(cs.pass_chance([0.0] * 17 + [1.0] * 3) - 0.0) < 1e-12
    assert abs(cs.pass_chance([0.0] * 18 + [1.0] * 2) - 1.0) < 1e-12
    # Pages that differ: two certain falls leave no room for a third.
    assert abs(cs.pass_chance([1.0, 1.0] + [0.5] + [0.0] * 21) - 0.5) < 1e-12


def test_replications_are_pooled_per_page_with_an_interval_and_one_runs_chance_of_passing() -> None:
    # Ten pages, three replications each: page 0 falls in every one, page 1 in one of three, the rest never.
    rises = [[0.1, 0.1, 0.1], [0.2, 0.2, 0.2], [0.3, 0.3, 0.3]]
    falls = [[0.3, 0.3, 0.3], [0.2, 0.2, 0.2], [0.1, 0.1, 0.1]]
    once = [[0.3, 0.1, 0.1], [0.2, 0.2, 0.2], [0.1, 0.3, 0.3]]
    pages = [falls, once] + [rises] * 8
    op = [[[0.0] * 3 for _ in pages]] + [[p[s] for p in pages] for s in range(3)]
    lines = cs.instability_section({"tesseract": {"blur": op}}, 3, redraw=True)
    row = next(ln for ln in lines if ln.startswith("| blur"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "80% / 90% / 90%"
    pooled = (0 + 2 / 3 + 8) / 10  # 86.7 %
    assert cells[5].startswith(f"{100 * pooled:.0f}% (")
    lo, hi = (int(x) for x in cells[5].split("(")[1].rstrip(")").split("-"))
    assert lo <= 100 * pooled <= hi and hi <= 100
    # 10 pages at 90 %: one may fall; page 0 always does, so page 1 must hold (2/3).
    assert cells[6] == "67%"
    summary = next(ln for ln in lines if ln.startswith("Pooled:"))
    assert "1 cells" in summary and summary.rstrip().endswith("67%.")
