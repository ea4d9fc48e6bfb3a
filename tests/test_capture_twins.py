"""Errors under capture conditions: each base's clean control and its variants photographed with the same draws,
linked row to row (``source_id``, ``capture_twin``), with ids the path checks accept."""

from __future__ import annotations

from typing import Any

import pytest

from synth.config import validate_config
from synth.errors import ConfigError, UnsafePathError
from synth.manifest import schema, to_row
from synth.safepath import check_id
from synth.stages import ShardStats, build_items
from tests.conftest import tiny_config_data

# Ops that read nothing of the solution area: twins' recorded params must be equal. glare (centred on a text
# line, radius fitted to the page's content), shadow (edge slid to cover a share of the content), exposure
# (gain aimed at the photo's own paper and ink levels), noise (spread aimed at the photo's grey levels) and the
# handwritten_* ops (the page's own words, a writer drawn from the sheet's layout) fit what they read to each page;
# their other draws are the same.
CONTENT_BLIND = ["blur", "tilt", "rotation", "keystone", "paper_warp", "background", "resolution", "jpeg"]
# Fitted to the page: glare and shadow to its content, the exposure to its levels (k, the lamp's strength) and
# the lamp over its content (lamp_frac), the noise's spread to its levels (twins differ in the fourth decimal:
# a few strokes of other writing move the histogram that little).
FITTED = {"glare": {"radius_frac", "centre_frac"}, "shadow": {"offset"},
          "exposure": {"k", "aimed_at", "blowout", "lamp_frac"}, "noise": {"sigma_paper"}}


def _rows(**overrides: Any) -> list[dict[str, Any]]:
    data = tiny_config_data(count=2, render={"dpi": 50},
                            inject={"variants_per_base": 2,
                                    "subtypes": {"intermediate_propagated": 1.0, "equivalent_format": 1.0}},
                            **overrides)
    config = validate_config(data)
    stats = ShardStats()
    return [to_row(item) for index in range(config.count) for item, _ in build_items(config, index, stats)]


def _twin_rows() -> list[dict[str, Any]]:
    ops = [{"subtype": op, "severities": [2]} for op in CONTENT_BLIND]
    profile = {"name": "desk", "ops": [{"subtype": "background", "severity": 1}, {"subtype": "tilt", "severity": 2},
                                       {"subtype": "blur", "severity": 1}, {"subtype": "jpeg", "severity": 2}]}
    return _rows(degrade={"ops": ops, "profiles": [profile]})


@pytest.fixture(scope="module")
def twin_rows() -> list[dict[str, Any]]:
    return _twin_rows()


def test_apply_to_refuses_unknown_kinds_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"degrade\.apply_to\.1: .*'error'.*given 'errors'"):
        validate_config(tiny_config_data(degrade={"ops": [{"subtype": "blur"}], "apply_to": ["clean", "errors"]}))


@pytest.mark.parametrize(("kinds", "says"), [(["error"], "must include clean"),
                                              (["clean", "clean"], "more than once"),
                                              ([], "at least 1 item")])
def test_apply_to_refuses_lists_without_a_clean_twin_or_with_repeats(kinds: list[str], says: str) -> None:
    with pytest.raises(ConfigError, match=rf"degrade\.apply_to: .*{says}"):
        validate_config(tiny_config_data(degrade={"ops": [{"subtype": "blur"}], "apply_to": kinds}))


def test_apply_to_defaults_to_every_kind() -> None:
    config = validate_config(tiny_config_data(degrade={"ops": [{"subtype": "blur"}]}))
    assert config.degrade.apply_to == ["clean", "error", "superficial"]


@pytest.mark.parametrize("value", ["tiny-000003-e1-d4", "tiny-000003-s2-p1", "tiny-000003-d4", "tiny-000003-e12"])
def test_photo_ids_of_variants_pass_the_id_check(value: str) -> None:
    assert check_id(value) == value


@pytest.mark.parametrize("value", ["tiny-000003-d4-e1", "tiny-000003-e1-s2", "tiny-000003-d1-p1",
                                   "tiny-000003-e1-d4-d5", "tiny-000003-e1-x4"])
def test_ids_that_the_pipeline_never_builds_are_refused(value: str) -> None:
    with pytest.raises(UnsafePathError, match="is not a mathstress id"):
        check_id(value)


def test_every_kind_is_photographed_under_every_capture_with_deterministic_ids(twin_rows: list[dict]) -> None:
    sources = [r for r in twin_rows if r["source_id"] is None]
    photos = [r for r in twin_rows if r["source_id"] is not None]
    assert {r["variant"] for r in sources} == {"clean", "error", "superficial"}
    suffixes = [f"d{n}" for n in range(1, len(CONTENT_BLIND) + 1)] + ["p1"]
    assert sorted(r["id"] for r in photos) == sorted(f"{s['id']}-{suffix}" for s in sources for suffix in suffixes)
    assert _twin_rows() == twin_rows  # the same config gives the same rows, params and all


def test_a_photo_links_to_the_page_it_shows_and_to_the_clean_photo_under_the_same_capture(
        twin_rows: list[dict]) -> None:
    by_id = {r["id"]: r for r in twin_rows}
    for photo in (r for r in twin_rows if r["source_id"] is not None):
        source = by_id[photo["source_id"]]
        assert source["source_id"] is None and not source["degradations"]
        assert [s["text"] for s in photo["steps"]] == [s["text"] for s in source["steps"]]
        assert photo["error"] == source["error"] and photo["control"] == source["control"]
        assert photo["variant"] == ("degraded" if source["variant"] == "clean" else source["variant"])
        assert photo["clean_image"] == f"images/{photo['base_id']}.png"  # clean_image keeps its meaning
        if source["variant"] == "clean":
            assert photo["capture_twin"] is None
            continue
        twin = by_id[photo["capture_twin"]]
        assert twin["variant"] == "degraded" and twin["source_id"] == photo["base_id"]
        assert twin["id"].rsplit("-", 1)[1] == photo["id"].rsplit("-", 1)[1]
        assert twin["profile"] == photo["profile"]


def test_twins_get_the_same_sampled_params_and_the_same_file_format(twin_rows: list[dict]) -> None:
    by_id = {r["id"]: r for r in twin_rows}
    twins = [(r, by_id[r["capture_twin"]]) for r in twin_rows if r["capture_twin"]]
    assert len(twins) == 2 * 2 * (len(CONTENT_BLIND) + 1)  # 2 bases x 2 variants x captures
    for photo, twin in twins:
        assert [(d["subtype"], d["severity"], d["params"]) for d in photo["degradations"]] == \
            [(d["subtype"], d["severity"], d["params"]) for d in twin["degradations"]], photo["id"]
        assert photo["image"].rsplit(".", 1)[1] == twin["image"].rsplit(".", 1)[1]
        assert (photo["render"]["width"], photo["render"]["height"]) == \
            (twin["render"]["width"], twin["render"]["height"])


def test_content_reading_ops_keep_the_same_draws_on_the_page_s_own_content() -> None:
    rows = _rows(degrade={"ops": [{"subtype": op, "severities": [2, 3]} for op in sorted(FITTED)]})
    by_id = {r["id"]: r for r in rows}
    twins = [r for r in rows if r["capture_twin"]]
    other_shadow = 0
    for photo in twins:
        mine, theirs = photo["degradations"][0]["params"], by_id[photo["capture_twin"]]["degradations"][0]["params"]
        subtype = photo["degradations"][0]["subtype"]
        if subtype == "shadow" and mine["shape_try"] != theirs["shape_try"]:
            # The twin's shadow missed this page's bins (its content differs): another shadow, and the record says
            # which, so the pair is not silently unpaired.
            other_shadow += 1
            continue
        assert {k: v for k, v in mine.items() if k not in FITTED[subtype]} == \
            {k: v for k, v in theirs.items() if k not in FITTED[subtype]}, photo["id"]
        if subtype == "noise":  # the same sensor: the spread aimed at each page's levels, all but equal
            assert abs(mine["sigma_paper"] / theirs["sigma_paper"] - 1) < 0.01, (mine, theirs)
    assert other_shadow <= len(twins) // 10


def test_apply_to_clean_photographs_only_the_clean_control() -> None:
    rows = _rows(degrade={"ops": [{"subtype": "blur", "severities": [1]}], "apply_to": ["clean"]})
    photos = [r["id"] for r in rows if r["degradations"]]
    assert photos == ["tiny-000000-d1", "tiny-000001-d1"]


def test_photo_rows_of_every_kind_validate_against_the_manifest_schema(twin_rows: list[dict]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema())
    assert any(r["image"].endswith(".jpg") for r in twin_rows)   # the profile ends in the camera's JPEG
    for row in twin_rows:
        assert not list(validator.iter_errors(row)), row["id"]


def test_ops_that_write_the_page_s_words_write_the_photographed_variant_s_own_answer() -> None:
    rows = _rows(degrade={"ops": [{"subtype": "handwritten_answer", "severities": [1]}]})
    photos = [r for r in rows if r["degradations"]]
    assert {r["variant"] for r in photos} == {"degraded", "error", "superficial"}
    for row in photos:
        params = row["degradations"][0]["params"]
        assert row["shown_answer"] in params["written"], row["id"]
        assert params["answer_correct"] == row["is_correct"], row["id"]
