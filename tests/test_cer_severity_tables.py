"""benchmarks/cer_severity.py's tables: what its figures mean, on made-up CERs (no OCR is run)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "cer_severity", Path(__file__).resolve().parent.parent / "benchmarks" / "cer_severity.py")
cs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cs)


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
