"""A problem family with a figure is one new module: discovery finds it, `mathstress taxonomy` lists it,
a run config can ask for it, and its pages are drawn with the figure.

The fixture writes the toy family as a file in a folder added to `synth.generators`' search path, the way a
new file in synth/generators/ is found; nothing imports it and nothing else is edited (its question phrasings
travel in the module, as the `phrasings` class attribute).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import synth.generators as generators_package
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.cli import app
from synth.config import validate_config
from synth.generators import REGISTRY, get_family
from synth.resources import resource_dir

TOY_ID = "geometry.toy.angle_sum"
SOURCE = Path(generators_package.__file__).parent / "triangle_angle_sum.py"


@pytest.fixture
def toy_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    list(REGISTRY)   # the packaged families are in before the toy is added
    phrasings = (resource_dir("templates") / "problems" / "geometry.triangle.angle_sum.j2").read_text()
    source = SOURCE.read_text().replace('id = "geometry.triangle.angle_sum"',
                                        f'id = "{TOY_ID}"\n    phrasings = {phrasings!r}')
    source = source.replace("class TriangleAngleSum(", "class ToyAngleSum(")
    folder = tmp_path / "toy_generators"
    folder.mkdir()
    (folder / "toy_angle_sum.py").write_text(source)
    monkeypatch.setattr(generators_package, "__path__", [*generators_package.__path__, str(folder)])
    monkeypatch.setattr(REGISTRY, "_discovered", False)   # as in a fresh process that has the new file
    yield
    REGISTRY.pop(TOY_ID, None)
    sys.modules.pop("synth.generators.toy_angle_sum", None)


def test_a_new_family_file_is_listed_by_taxonomy(toy_family: None) -> None:
    result = CliRunner().invoke(app, ["taxonomy", "--families", "--json"])
    assert result.exit_code == 0, result.output
    ids = {row["family"] if "family" in row else row["id"] for row in json.loads(result.output)}
    assert TOY_ID in ids and "geometry.triangle.angle_sum" in ids


def test_a_new_family_file_builds_verified_problems_with_a_drawn_figure(toy_family: None) -> None:
    family = get_family(TOY_ID)
    problem = family.build(np.random.default_rng(3), difficulty="easy", question_type="free", problem_id="toy-1")
    assert problem.family == TOY_ID and problem.figure is not None and problem.question_text
    page = render_page(problem, clean_variant(problem), dpi=60)
    assert any(box.kind.startswith("figure_") for box in page.page.layout)
    validate_config({"name": "toy", "seed": 1, "count": 2, "generate": {"families": {TOY_ID: 1.0}}})
