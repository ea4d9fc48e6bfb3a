"""The generators layer keeps its place: the verifier core knows no generator, generators know nothing above them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import synth

ROOT = Path(synth.__file__).resolve().parent
GENERATORS = sorted((ROOT / "generators").glob("*.py"))
FIRST_PARTY = ("synth", "perturb", "render")


def _loaded_after(code: str) -> list[str]:
    """First-party modules loaded by a fresh interpreter after running ``code``."""
    probe = f"import sys\n{code}\nprint('\\n'.join(m for m in sys.modules if m.split('.')[0] in {FIRST_PARTY!r}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return out.stdout.split()


def test_the_verifier_core_and_the_presentation_checker_load_no_generator() -> None:
    loaded = _loaded_after("import synth.verification, synth.presentation, synth.slips, synth.registry")
    assert not [m for m in loaded if m.startswith("synth.generators")], loaded


def test_every_family_loads_without_perturb_render_or_the_layers_above() -> None:
    loaded = _loaded_after("from synth.generators import REGISTRY\nassert len(REGISTRY) >= 55")
    assert "synth.generators.pythagoras" in loaded  # discovery ran
    above = [m for m in loaded if m.split(".")[0] in ("perturb", "render")
             or m in ("synth.verifier", "synth.pipeline", "synth.cli", "synth.config", "synth.forms")
             or m.startswith("synth.evaluate")]
    assert not above, above


def _imports(path: Path) -> list[tuple[ast.ImportFrom | ast.Import, bool]]:
    """Every import statement of a module, and whether it sits at the top level."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    return [(node, id(node) in top) for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def _first_party(node: ast.Import | ast.ImportFrom) -> bool:
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return any(n.split(".")[0] in FIRST_PARTY for n in names)


def test_no_first_party_import_hides_inside_a_function() -> None:
    modules = [*GENERATORS, ROOT / "verification.py", ROOT / "verifier.py", ROOT / "presentation.py"]
    hidden = [f"{p.name}:{node.lineno}" for p in modules for node, top in _imports(p) if not top and _first_party(node)]
    assert not hidden, hidden


def test_generator_modules_share_only_public_names_and_stay_small() -> None:
    private = [f"{p.name}:{node.lineno} {a.name}" for p in GENERATORS for node, _ in _imports(p)
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("synth.generators.")
               for a in node.names if a.name.startswith("_")]
    assert not private, private
    long = {p.name: n for p in GENERATORS if (n := len(p.read_text().splitlines())) > 800}
    assert not long, long
