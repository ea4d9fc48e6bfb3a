"""A task or a model adapter is one new module: discovery finds it, `mathstress eval` lists and runs it.

The fixture writes each toy plugin as a file in a folder added to the plugin package's search path,
the way a new file in synth/evaluate/tasks/ or synth/evaluate/models/ is found; nothing imports it.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from synth.cli import app
from synth.evaluate import MODELS, TASKS
from synth.evaluate import models as models_package
from synth.evaluate import tasks as tasks_package
from synth.registry import DuplicateIdError, Registry

TOY_TASK = '''
    from synth.evaluate.metrics import accuracy
    from synth.evaluate.tasks import Task, register_task

    register_task(Task(
        id="toy-parity", summary="toy: is the number of shown steps even or odd?",
        template="eval/detect.j2",
        gold=lambda item: "even" if len(item.variant.steps) % 2 == 0 else "odd",
        parse=lambda text: text.strip() if text.strip() in ("even", "odd") else None,
        answer=str, labels=("even", "odd"), choices=lambda item: ("even", "odd"),
        metrics=(accuracy(),),
    ))
'''
TOY_MODEL = '''
    from synth.evaluate.models import Adapter, register_model


    @register_model("toy-oracle")
    class ToyOracle(Adapter):
        """toy: answers every item with its gold label."""

        def __init__(self, arg="", **options):
            self.id = "toy-oracle"

        async def respond(self, request):
            return request.task.answer(request.task.gold(request.item))
'''


def _add_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package: ModuleType, registry: Registry,
                name: str, source: str) -> str:
    """Put ``name``.py on ``package``'s search path and let ``registry`` discover again; returns the module name."""
    folder = tmp_path / package.__name__.rsplit(".", 1)[-1]
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
    monkeypatch.setattr(registry, "_discovered", False)   # as in a fresh process that has the new file
    return f"{package.__name__}.{name}"


@pytest.fixture
def toy_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    list(TASKS), list(MODELS)   # the packaged plugins are in before the toys are added
    modules = [_add_plugin(monkeypatch, tmp_path, tasks_package, TASKS, "toy_parity", TOY_TASK),
               _add_plugin(monkeypatch, tmp_path, models_package, MODELS, "toy_oracle", TOY_MODEL)]
    yield
    TASKS.pop("toy-parity", None)
    MODELS.pop("toy-oracle", None)
    for module in modules:
        sys.modules.pop(module, None)


def test_a_new_task_file_and_a_new_model_file_are_listed_in_eval_help(toy_plugins: None) -> None:
    result = CliRunner().invoke(app, ["eval", "--help"])
    assert result.exit_code == 0, result.output
    assert "toy-parity" in result.output and "toy-oracle" in result.output
    assert "detect" in result.output and "text-verifier" in result.output   # the packaged ones are still there


def test_a_new_task_and_model_run_end_to_end_without_any_other_edit(toy_plugins: None, tiny_run: Path,
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "eval"
    result = CliRunner().invoke(app, ["eval", str(tiny_run), "--task", "toy-parity", "--model", "toy-oracle",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "results.json").read_text())["tasks"]["toy-parity"]["metrics"]
    assert metrics["accuracy"] == 1.0 and metrics["unparsed"] == 0


def test_a_plugin_reusing_a_packaged_task_id_is_refused_naming_both_modules(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    list(TASKS)
    clash = TOY_TASK.replace('id="toy-parity"', 'id="detect"')
    module = _add_plugin(monkeypatch, tmp_path, tasks_package, TASKS, "toy_clash", clash)
    try:
        with pytest.raises(DuplicateIdError, match=r"task id 'detect' is registered twice: by synth\.evaluate\.tasks"
                                                   r"\.detect\.Task and by synth\.evaluate\.tasks\.toy_clash\.Task"):
            list(TASKS)
    finally:
        sys.modules.pop(module, None)
        monkeypatch.undo()
    assert TASKS["detect"].summary.startswith("is the shown solution correct")   # the packaged one stays
