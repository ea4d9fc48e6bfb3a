"""Untrusted YAML: every hostile shape is refused in bounded time with one short, located message."""

from __future__ import annotations

import time

import pytest
import yaml

from synth.errors import ConfigError
from synth.yamlsafe import MAX_DEPTH, PySafeBoundedLoader, SafeBoundedLoader, load_yaml, preview

# libyaml's loader (the default) and the pure-Python fallback must refuse the same things.
LOADERS = pytest.mark.parametrize("loader", [SafeBoundedLoader, PySafeBoundedLoader], ids=["libyaml", "python"])


def alias_bomb(levels: int) -> str:
    """Billion laughs: each level lists the previous one ten times, so ``levels`` 9 is 10^10 strings."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\nname: *a{levels}\n"


@LOADERS
def test_alias_bomb_is_refused_before_it_expands(loader: type) -> None:
    text = alias_bomb(9)
    assert len(text) < 1000
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"more than 20,000 values once aliases \(\*name\) are expanded") as err:
        load_yaml(text, loader=loader)
    assert time.perf_counter() - start < 5  # about a millisecond; generous for a loaded machine
    assert "at a4" in str(err.value)  # where the budget ran out


@LOADERS
def test_aliases_within_the_budget_and_merge_keys_still_load(loader: type) -> None:
    text = "base: &b {dpi: 50, paper: lined}\nrender: {<<: *b, paper: grid}\nboth: [*b, *b]\n"
    assert load_yaml(text, loader=loader) == {"base": {"dpi": 50, "paper": "lined"},
                                              "render": {"dpi": 50, "paper": "grid"},
                                              "both": [{"dpi": 50, "paper": "lined"}] * 2}


@LOADERS
@pytest.mark.parametrize("text", ["name: " + "[" * 10_000 + "]" * 10_000,
                                  "name: " + "{a: " * 10_000 + "1" + "}" * 10_000,
                                  "- " * 10_000 + "x"],
                         ids=["flow lists", "flow mappings", "block lists"])
def test_deep_nesting_is_one_config_error_not_a_recursion_error(loader: type, text: str) -> None:
    with pytest.raises(ConfigError, match=f"nests deeper than {MAX_DEPTH} levels") as err:
        load_yaml(text, loader=loader)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


@LOADERS
def test_aliases_that_nest_past_the_depth_limit_are_refused(loader: type) -> None:
    text = "a: &a " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 40 + "*a" + "]" * 40 + "\n"
    with pytest.raises(ConfigError, match=f"nests deeper than {MAX_DEPTH} levels once aliases are expanded"):
        load_yaml(text, loader=loader)


@LOADERS
def test_recursive_alias_is_refused_naming_where(loader: type) -> None:
    with pytest.raises(ConfigError, match=r"alias at a\.b\.c \(line 1\) refers to a list or mapping that contains it"):
        load_yaml("a: &a {b: {c: *a}}\n", loader=loader)


@LOADERS
def test_duplicate_key_names_the_key_and_both_lines(loader: type) -> None:
    text = "name: x\ninject:\n  subtypes:\n    final_number: 1\n    sign_error: 1\n    final_number: 2\n"
    with pytest.raises(ConfigError, match=r"inject\.subtypes\.final_number is given twice \(lines 4 and 6\)"):
        load_yaml(text, loader=loader)


@LOADERS
def test_keys_spelled_differently_but_equal_are_duplicates(loader: type) -> None:
    with pytest.raises(ConfigError, match=r"given twice \(lines 1 and 2\)"):
        load_yaml("1: a\n+1: b\n", loader=loader)


@LOADERS
def test_anchor_defined_twice_is_refused(loader: type) -> None:
    with pytest.raises(ConfigError, match=r"anchor &x is defined twice \(lines 1 and 2\)"):
        load_yaml("a: &x 1\nb: &x 2\nc: *x\n", loader=loader)


@LOADERS
def test_python_tags_are_refused_not_constructed(loader: type) -> None:
    with pytest.raises(ConfigError, match="not valid YAML at line 1.*could not determine a constructor"):
        load_yaml("name: !!python/object/apply:os.system ['echo hi']\n", loader=loader)


def test_number_past_pythons_digit_limit_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"a value cannot be read \(.*5,?000 digits\)"):
        load_yaml("count: " + "9" * 5000 + "\n")


def test_bounded_loader_is_safe_through_yaml_load_too() -> None:
    with pytest.raises(yaml.YAMLError, match="20,000 values"):
        yaml.load(alias_bomb(9), Loader=SafeBoundedLoader)  # our loader, reached through yaml.load


def test_preview_cuts_long_text_and_says_how_long_it_was() -> None:
    shown = preview("x" * 1_000_000)
    assert len(shown) < 100 and shown.endswith("... (1,000,000 characters)")
    assert preview("short") == "'short'"


def test_preview_of_a_huge_or_self_containing_list_is_bounded() -> None:
    assert preview(list(range(100_000))) == "[0, 1, 2, 3, 4, 5, ...] (a list of 100,000 items)"
    loop: list = []
    loop.append(loop)
    assert len(preview(loop)) < 100


@pytest.mark.parametrize("text", ["count: 010", "seed: 1:20", "dpi: 0x64", "seed: 0b101"])
def test_an_int_yaml_1_1_reads_as_octal_hex_binary_or_base_60_is_refused(text: str) -> None:
    # count: 010 made a run of 8 bases, seed: 1:20 a seed of 80: nothing said.
    with pytest.raises(ConfigError, match="write it in decimal"):
        load_yaml(text)
    assert load_yaml("count: 10") == {"count": 10} and load_yaml('seed: "010"') == {"seed": "010"}
