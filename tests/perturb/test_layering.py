"""The perturb layer's shape: imports at the top and only downwards, modules small enough to read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PERTURB = sorted((ROOT / "perturb").rglob("*.py"))
FIRST_PARTY = ("perturb", "synth", "render")
# The layers above perturb (DESIGN section 2): cli -> pipeline, evaluate, forms -> perturb -> render -> generators.
ABOVE = ("synth.cli", "synth.pipeline", "synth.evaluate", "synth.forms", "synth.export", "synth.show",
         "synth.distributed", "synth.__main__")


def _imports(tree: ast.AST) -> list[tuple[ast.stmt, str]]:
    found: list[tuple[ast.stmt, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node, node.module))
    return found


def _in_function(tree: ast.AST) -> set[int]:
    """ids of the import statements that sit inside a function body."""
    inner: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner |= {id(n) for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return inner


@pytest.mark.parametrize("path", [*PERTURB, ROOT / "synth" / "taxonomy.py"], ids=lambda p: str(p.relative_to(ROOT)))
def test_first_party_modules_are_imported_at_the_top_never_inside_a_function(path: Path) -> None:
    tree = ast.parse(path.read_text())
    inner = _in_function(tree)
    late = [f"line {node.lineno}: {name}" for node, name in _imports(tree)
            if id(node) in inner and name.split(".")[0] in FIRST_PARTY]
    assert late == [], f"{path.name} imports inside a function (move them to the top): {late}"


@pytest.mark.parametrize("path", PERTURB, ids=lambda p: str(p.relative_to(ROOT)))
def test_perturb_never_imports_the_layers_above_it(path: Path) -> None:
    upward = [name for _, name in _imports(ast.parse(path.read_text()))
              if any(name == top or name.startswith(top + ".") for top in ABOVE)]
    assert upward == [], f"{path.name} imports from above the perturb layer: {upward}"


def test_taxonomy_is_core_and_imports_nothing_first_party() -> None:
    tree = ast.parse((ROOT / "synth" / "taxonomy.py").read_text())
    assert [name for _, name in _imports(tree) if name.split(".")[0] in FIRST_PARTY] == []


@pytest.mark.parametrize("path", PERTURB, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_perturb_module_is_over_800_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 800
