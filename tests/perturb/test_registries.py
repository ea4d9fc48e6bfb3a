"""Injectors and photo ops are found by discovery, ids are unique, and every table is derived from them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perturb.photo import REGISTRY as OPS
from perturb.photo import Rubric, degradation_subtypes, register
from perturb.photo.base import Op
from perturb.photo.jpeg import QUALITY
from perturb.reasoning import REGISTRY as INJECTORS
from perturb.reasoning.base import Injector
from perturb.reasoning.base import register as register_injector
from perturb.reasoning.conceptual import malrule_counts
from synth.cli import app
from synth.generators import REGISTRY as FAMILIES
from synth.registry import DuplicateIdError
from synth.taxonomy import DEGRADATION_FAMILIES, ERROR_SUBTYPES

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, plugin_dir: Path) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter, after ``plugin_dir`` joins the package it names as PACKAGE."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={"PATH": "/usr/bin:/bin", "PLUGINS": str(plugin_dir)})


SMUDGE = '''
import numpy as np
from perturb.photo import Rubric, register
from perturb.photo.base import Op

BINS = {1: (0.0, 0.1), 2: (0.1, 0.3), 3: (0.3, 1.0)}


class Smudge(Op):
    subtype = "smudge"
    family = "quality"
    rubric = Rubric("darkened", BINS, "page darkened by", "%")

    def sample_params(self, rng, severity, page):
        return {"amount": round(float(rng.uniform(*BINS[severity])), 4)}

    def apply(self, image, params, page):
        return (image * (1 - params["amount"])).astype(np.uint8), page

    def measure(self, before, after, params, page):
        return {"darkened": params["amount"]}


register(Smudge())
'''


def test_a_new_photo_op_module_is_found_applied_and_listed_with_no_other_edit(tmp_path: Path) -> None:
    (tmp_path / "smudge.py").write_text(SMUDGE)
    result = _run('''
        import json, os
        import numpy as np
        import perturb.photo
        perturb.photo.__path__.append(os.environ["PLUGINS"])  # as if smudge.py were dropped into perturb/photo
        from perturb.photo import REGISTRY, degrade, degradation_subtypes
        from synth.records import RenderedPage
        page = RenderedPage("printed", "f", "plain", "black", 100, 64, 48)
        out, _, record = degrade(np.full((48, 64, 3), 200, np.uint8), page, "smudge", 2, np.random.default_rng(0))
        rows = {d.subtype: [d.family, d.levels] for d in degradation_subtypes()}
        print(json.dumps({"ops": len(REGISTRY), "pixel": int(out[0, 0, 0]), "measured": record.measured,
                          "row": rows["smudge"]}))
    ''', tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout)
    assert found["ops"] == len(OPS) + 1
    assert 0.1 <= found["measured"]["darkened"] <= 0.3 and found["pixel"] < 200
    assert found["row"] == ["quality", "page darkened by 0-10 / 10-30 / 30-100 %"]


def test_a_second_injector_for_a_subtype_is_refused_naming_both_modules(tmp_path: Path) -> None:
    (tmp_path / "twin.py").write_text("from perturb.reasoning import Injector, register\n\n\n"
                                      "class SignTwin(Injector):\n    subtype = 'sign_error'\n\n\n"
                                      "register(SignTwin())\n")
    result = _run('''
        import os
        import perturb.reasoning
        perturb.reasoning.__path__.append(os.environ["PLUGINS"])
        from perturb.reasoning import REGISTRY
        "sign_error" in REGISTRY
    ''', tmp_path)
    assert result.returncode != 0
    assert re.search(r"DuplicateIdError: error subtype id 'sign_error' is registered twice: by "
                     r"perturb\.reasoning\.computational\.\w+ and by perturb\.reasoning\.twin\.SignTwin", result.stderr)


def test_a_photo_op_registered_twice_is_refused_and_the_first_stays() -> None:
    blur = OPS["blur"]
    twin = type("BlurTwin", (type(blur),), {"__module__": "perturb.photo.blur_twin"})()
    with pytest.raises(DuplicateIdError, match=r"'blur' is registered twice: by perturb\.photo\.blur\.Blur and by "
                                               r"perturb\.photo\.blur_twin\.BlurTwin"):
        register(twin)
    assert OPS["blur"] is blur


@pytest.mark.parametrize(("attrs", "message"), [
    ({"family": "lens"}, r"family 'lens' is not one of \('quality', 'perspective', 'interference', 'camera'\)"),
    ({"stage": "darkroom"}, r"stage 'darkroom' is not one of"),
    ({"rubric": Rubric("x", {1: (0, 1), 2: (1, 2)}, "x")}, r"one bin for each of its severities \(1, 2, 3\)"),
])
def test_an_op_that_does_not_state_its_place_in_the_taxonomy_is_refused(attrs: dict, message: str) -> None:
    op = type("Vague", (Op,), {"subtype": "vague", "family": "camera", "rubric": Rubric("x", QUALITY, "x"),
                               **attrs})()
    with pytest.raises(ValueError, match=message):
        register(op)
    assert "vague" not in OPS


def test_an_injector_for_a_subtype_outside_the_taxonomy_is_refused() -> None:
    made_up = type("MadeUp", (Injector,), {"subtype": "rounding_error"})()
    with pytest.raises(ValueError, match=r"claims subtype 'rounding_error', which is not in synth\.taxonomy"):
        register_injector(made_up)
    assert "rounding_error" not in INJECTORS


def test_the_degradation_table_takes_each_ops_ranges_from_the_op_itself() -> None:
    rows = degradation_subtypes()
    assert [d.subtype for d in rows] == sorted(OPS, key=lambda s: (DEGRADATION_FAMILIES.index(OPS[s].family), s))
    by = {d.subtype: d for d in rows}
    assert by["jpeg"].levels == "JPEG quality " + " / ".join(f"{lo}-{hi}" for lo, hi in QUALITY.values())
    assert by["shadow"].levels == "content in shadow 1-30 / 30-60 / 60-100 %"
    assert by["rotation"].levels == "turned 90cw / 90ccw / 180"
    assert by["question_marking"].levels == "marked question tokens 1 / 2-3 / 4+"
    assert all(by[s].family == OPS[s].family and by[s].levels == OPS[s].rubric.describe() for s in OPS)


def test_mathstress_taxonomy_prints_the_registries() -> None:
    wide = {"COLUMNS": "250"}
    degradations = CliRunner().invoke(app, ["taxonomy", "--degradations"], env=wide)
    assert degradations.exit_code == 0
    for d in degradation_subtypes():
        assert f"{d.subtype} " in degradations.output and d.levels in degradations.output
    errors = CliRunner().invoke(app, ["taxonomy"], env=wide)
    rules = malrule_counts()
    # The footer may wrap at the console's width: compare with the line breaks taken out.
    text = " ".join(errors.output.split())
    assert errors.exit_code == 0 and f"hold {sum(rules.values())} mal-rules" in text
    assert f"{len(INJECTORS)} of {len(ERROR_SUBTYPES)} subtypes have an injector" in text
    assert f"formula_misuse {rules['formula_misuse']}" in text


def test_the_malrule_count_is_every_registered_familys_catalogue() -> None:
    rules = malrule_counts()
    assert sum(rules.values()) == sum(len(FAMILIES[f].malrules) for f in FAMILIES) > 100
    assert set(rules) <= {s.subtype for s in ERROR_SUBTYPES if s.family == "conceptual"} | {"unit_conversion"}


def test_the_readme_counts_are_the_registries_counts() -> None:
    readme = (ROOT / "README.md").read_text()
    assert int(re.search(r"mal-rules \((\d+) in\s+all", readme).group(1)) == sum(malrule_counts().values())
    assert int(re.search(r"\*\*(\d+) problem families\*\*", readme).group(1)) == len(FAMILIES)
    degradations = re.search(r"Photographic degradations \(MathReal's subtypes.*?\n\n", readme, re.S).group(0)
    assert [s for s in OPS if not re.search(rf"\b{s}\b", degradations)] == []
    assert [s for s in INJECTORS if f" {s}" not in readme] == []


def test_every_rubric_has_an_ordered_range_or_a_value_per_severity() -> None:
    for subtype, op in OPS.items():
        bins = op.rubric.bins
        assert sorted(bins) == list(op.levels), subtype
        if not isinstance(bins[op.levels[0]], str):
            assert all(lo <= hi for lo, hi in bins.values()), subtype

