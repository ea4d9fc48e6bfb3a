"""Config validation: every malformed config fails with one readable, field-naming error."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from synth.cli import app
from synth.config import load_config, validate_config
from synth.errors import ConfigError
from tests.conftest import tiny_config_data
from tests.test_yamlsafe import alias_bomb


def _with(path: str, value: Any) -> dict[str, Any]:
    data = tiny_config_data()
    keys = path.split(".")
    node = data
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value
    return data


def _without(path: str) -> dict[str, Any]:
    data = tiny_config_data()
    keys = path.split(".")
    node = data
    for k in keys[:-1]:
        node = node[k]
    del node[keys[-1]]
    return data


MALFORMED: list[tuple[str, Any, str]] = [
    ("count is a string", _with("count", "many"), "count"),
    ("negative count", _with("count", -3), "count"),
    ("zero count", _with("count", 0), "count"),
    ("seed negative", _with("seed", -1), "seed"),
    ("seed is a float", _with("seed", 1.5), "seed"),
    ("unknown top-level key", {**tiny_config_data(), "colour": "red"}, "colour"),
    ("unknown nested key", _with("render.colour", "red"), "render.colour"),
    ("missing name", _without("name"), "name"),
    ("missing generate", _without("generate"), "generate"),
    ("name with a slash", _with("name", "../escape"), "name"),
    ("unknown family", _with("generate.families", {"algebra.quartic.magic": 1.0}), "generate.families"),
    ("empty families", _with("generate.families", {}), "generate.families"),
    ("negative family weight", _with("generate.families", {"algebra.linear.two_step": -1}), "generate.families"),
    ("unknown difficulty", _with("generate.difficulties", ["insane"]), "generate.difficulties"),
    ("unoffered question type", _with("generate.question_types", ["mcq"]), "generate"),
    ("severity 7", _with("degrade.ops", [{"subtype": "blur", "severities": [7]}]), "degrade.ops.0.severities.0"),
    ("unknown degradation", _with("degrade.ops", [{"subtype": "smudge"}]), "degrade.ops.0.subtype"),
    ("unknown error subtype", _with("inject.subtypes", {"telepathy": 1.0}), "inject.subtypes"),
    ("variants per base negative", _with("inject.variants_per_base", -1), "inject.variants_per_base"),
    ("placement word", _with("inject.placement", "sideways"), "inject.placement"),
    ("dpi too low", _with("render.dpi", 5), "render.dpi"),
    ("unknown paper", _with("render.paper", "papyrus"), "render.paper"),
    ("shard size zero", _with("output.shard_size", 0), "output.shard_size"),
    ("degrade without render", _with("render.enabled", False), "degrade"),
    ("top level is a list", [1, 2, 3], "top level"),
    # Strict types: nothing is coerced. Counts are ints, weights are int or float numbers, flags are bools.
    ("count is a quoted number", _with("count", "2"), "count"),
    ("count is a float", _with("count", 2.0), "count"),
    ("count is a bool", _with("count", True), "count"),
    ("seed is a quoted number", _with("seed", "7"), "seed"),
    ("family weight is a quoted number", _with("generate.families", {"algebra.linear.two_step": "1.0"}),
     "generate.families.algebra.linear.two_step"),
    ("family weight is a bool", _with("generate.families", {"algebra.linear.two_step": True}),
     "generate.families.algebra.linear.two_step"),
    ("subtype weight is a quoted number", _with("inject.subtypes", {"final_number": "0.5"}),
     "inject.subtypes.final_number"),
    ("difficulty weight is a bool", _with("generate.difficulties", {"easy": True}), "generate.difficulties"),
    ("variants per base is a bool", _with("inject.variants_per_base", True), "inject.variants_per_base"),
    ("placement index is a float", _with("inject.placement", 2.0), "inject.placement"),
    ("propagate is a number", _with("inject.propagate", 1), "inject.propagate"),
    ("render enabled is a string", _with("render.enabled", "true"), "render.enabled"),
    ("dpi is a float", _with("render.dpi", 100.0), "render.dpi"),
    ("neatness is a quoted number", _with("render.neatness", "2"), "render.neatness"),
    ("handwritten share is a quoted number", _with("render", {"style": "mixed", "handwritten_share": "0.5"}),
     "render.handwritten_share"),
    ("severity is a bool", _with("degrade.ops", [{"subtype": "blur", "severities": [True]}]),
     "degrade.ops.0.severities.0"),
    ("op weight is a quoted number", _with("degrade.ops", [{"subtype": "blur", "weight": "2"}]),
     "degrade.ops.0.weight"),
    ("profile severity is a float", _with("degrade.profiles", [{"name": "p", "ops": [{"subtype": "blur",
                                                                                     "severity": 1.0}]}]),
     "degrade.profiles.0.ops.0.severity"),
    ("shard size is a quoted number", _with("output.shard_size", "8"), "output.shard_size"),
    ("name is a number", _with("name", 2024), "name"),
    ("empty subtypes", _with("inject.subtypes", {}), "inject.variants_per_base: 0"),
    ("empty image roles", _with("generate", {"families": {"algebra.linear.two_step": 1.0}, "allocation": "quota",
                                             "image_roles": {}}), "generate.image_roles"),
]


@pytest.mark.parametrize(("label", "data", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_config_exits_2_naming_the_field_and_writes_nothing(
        tmp_path: Path, label: str, data: Any, field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["generate", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "error:" in result.output
    assert field in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_missing_config_file_names_the_path(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["generate", str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "nope.yaml" in result.output and "does not exist" in result.output


def test_invalid_yaml_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\ncount: [1,\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line"):
        load_config(path)


def test_unwritable_output_folder_is_rejected_before_anything_is_written(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(tiny_config_data()), encoding="utf-8")
    result = CliRunner().invoke(app, ["generate", str(path), "--out", str(blocker / "run")])
    assert result.exit_code == 2
    assert "--out" in result.output


def test_yaml_tags_are_not_executed(tmp_path: Path) -> None:
    path = tmp_path / "evil.yaml"
    path.write_text("name: !!python/object/apply:os.system ['echo hi']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)


def test_quickstart_is_packaged_and_valid() -> None:
    cfg = load_config("quickstart")
    assert cfg.name == "quickstart" and cfg.count > 0


def _cli(tmp_path: Path, text: str | bytes) -> tuple[int, str, float]:
    path = tmp_path / "hostile.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    start = time.perf_counter()
    result = CliRunner().invoke(app, ["generate", str(path), "--out", str(tmp_path / "run")])
    assert not (tmp_path / "run").exists()
    return result.exit_code, result.output, time.perf_counter() - start


def test_alias_bomb_is_refused_in_a_moment_with_one_line(tmp_path: Path) -> None:
    code, output, seconds = _cli(tmp_path, alias_bomb(9))  # 10^10 strings once expanded
    assert code == 2, output
    assert seconds < 5  # a few ms in-process; generous for a loaded machine
    assert "aliases" in output and "20,000" in output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1


def test_nesting_ten_thousand_deep_is_one_line_exit_2(tmp_path: Path) -> None:
    code, output, _ = _cli(tmp_path, f"name: {'[' * 10_000}{']' * 10_000}\n")
    assert code == 2, output
    assert "nests deeper than" in output and "RecursionError" not in output and "Traceback" not in output
    assert len(output.strip().splitlines()) == 1


def test_45_mb_config_is_refused_by_its_size_naming_the_limit(tmp_path: Path) -> None:
    text = b"name: x\npad: " + b"x" * 45_000_000 + b"\n"
    code, output, seconds = _cli(tmp_path, text)
    assert code == 2, output
    assert f"{len(text):,} bytes" in output and "1 MiB" in output
    assert seconds < 5 and len(output) < 400


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_endless_input_is_read_only_up_to_the_limit() -> None:
    with pytest.raises(ConfigError, match=r"more than 1,048,576 bytes"):
        load_config("/dev/zero")  # stat says 0 bytes; the read stops one byte past the limit


def test_duplicate_key_in_a_config_names_it_and_both_lines(tmp_path: Path) -> None:
    text = yaml.safe_dump(tiny_config_data(), sort_keys=False) + "count: 600\n"
    code, output, _ = _cli(tmp_path, text)
    assert code == 2
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith("count:"))
    assert f"count is given twice (lines {line} and {len(text.splitlines())})" in output


def test_empty_subtypes_says_how_to_turn_injection_off(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"inject\.subtypes: is empty.*set inject\.variants_per_base: 0"):
        validate_config(_with("inject.subtypes", {}))
    data = _with("inject", {"variants_per_base": 0})
    assert validate_config(data).inject.variants_per_base == 0  # the way to make clean controls only


def test_whole_numbers_are_accepted_as_weights_and_shares() -> None:
    data = _with("generate.families", {"algebra.linear.two_step": 2, "arithmetic.order_of_operations": 1})
    data["render"] = {"dpi": 50, "style": "mixed", "handwritten_share": 1}
    cfg = validate_config(data)
    assert cfg.generate.families == {"algebra.linear.two_step": 2.0, "arithmetic.order_of_operations": 1.0}
    assert cfg.render.handwritten_share == 1.0


@pytest.mark.parametrize("given", ["x" * 200_000, list(range(10_000)), {f"k{i}": i for i in range(5000)}],
                         ids=["long string", "long list", "big mapping"])
def test_echoed_values_are_cut_to_a_short_preview(tmp_path: Path, given: Any) -> None:
    code, output, _ = _cli(tmp_path, yaml.safe_dump(_with("seed", given)))
    assert code == 2
    assert "seed" in output and len(output) < 600, output[:1000]
    assert "characters)" in output or "items)" in output or "keys)" in output


def test_long_unknown_key_and_family_id_are_cut_in_the_message(tmp_path: Path) -> None:
    data = _with("generate.families", {"f" * 100_000: 1.0})
    data["k" * 100_000] = 1
    code, output, _ = _cli(tmp_path, yaml.safe_dump(data, width=10**9))
    assert code == 2
    assert "unknown key" in output and "unknown family" in output
    assert len(output) < 3000 and "100,000 characters" in output


def test_a_thousand_bad_values_list_the_first_twenty(tmp_path: Path) -> None:
    code, output, _ = _cli(tmp_path, yaml.safe_dump(_with("degrade.ops", [{"subtype": "blur",
                                                                             "severities": [7] * 1000}])))
    assert code == 2
    assert "degrade.ops.0.severities.19" in output and "degrade.ops.0.severities.20" not in output
    assert "... and 980 more" in output


def test_packaged_configs_load_strictly_and_their_resolved_yaml_reloads_the_same(tmp_path: Path) -> None:
    from synth.resources import packaged_configs

    assert packaged_configs()
    for name in packaged_configs():
        resolved = load_config(name).to_yaml()
        again = tmp_path / f"{name}.yaml"
        again.write_text(resolved, encoding="utf-8")  # what a run folder stores as config.yaml
        assert load_config(again).to_yaml() == resolved, name


def test_a_severity_listed_twice_is_refused() -> None:
    # blur severities [2, 2] made two byte-identical photos, two items of one condition.
    data = tiny_config_data(degrade={"ops": [{"subtype": "blur", "severities": [2, 2]}], "apply_to": ["clean"]})
    with pytest.raises(ConfigError, match="severity 2 is listed twice"):
        validate_config(data)


def test_a_misspelt_family_is_answered_with_the_close_one_not_every_id(tmp_path: Path) -> None:
    # CONTRIBUTING promises "an unknown id is answered with the close ones": a config listed all 55 ids instead.
    code, output, _ = _cli(tmp_path, yaml.safe_dump(_with("generate.families", {"geometry.pythagora": 1.0})))
    assert code == 2 and "did you mean 'geometry.pythagoras'?" in output
    assert "algebra.exponents.simplify" not in output
    result = CliRunner().invoke(app, ["check-families", "--family", "geometry.pythagora"])
    assert result.exit_code == 2 and "did you mean 'geometry.pythagoras'?" in result.output


def test_a_folder_named_like_a_packaged_config_does_not_hide_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    # `mathstress generate quickstart` beside a quickstart/ folder said "config 'quickstart' is a folder".
    from synth.config import load_config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "quickstart").mkdir()
    assert load_config("quickstart").name == "quickstart"
    with pytest.raises(ConfigError, match="is a folder"):
        load_config("./quickstart")


def test_a_placement_past_any_solution_s_length_is_refused() -> None:
    # placement: 10**29 was taken and the run made no error variant at all, with a warning.
    with pytest.raises(ConfigError, match="inject.placement"):
        validate_config(_with("inject.placement", 10**29))
    assert validate_config(_with("inject.placement", 3)).inject.placement == 3
