"""The built wheel carries the templates and configs, and finds them without the checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    # No build isolation: the dev extra installs setuptools, so this needs no network.
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(dist), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = dist.glob("mathstress-*.whl")
    target = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    return target


def test_wheel_contains_configs_templates_and_schema(unpacked_wheel: Path) -> None:
    for rel in ("synth/configs/quickstart.yaml", "synth/templates/dataset_card.md.j2",
                "synth/templates/problems/algebra.linear.two_step.j2", "synth/manifest.schema.json"):
        assert (unpacked_wheel / rel).is_file(), rel


def test_installed_package_finds_its_own_configs(unpacked_wheel: Path, tmp_path: Path) -> None:
    code = ("from synth.resources import resource_dir, packaged_config; "
            "print(resource_dir('configs')); print(packaged_config('quickstart'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(unpacked_wheel), "PATH": "/usr/bin:/bin"}).stdout.split()
    assert out[0] == str(unpacked_wheel / "synth" / "configs")
    assert out[1].endswith("synth/configs/quickstart.yaml")


def test_wheel_carries_every_package_of_the_checkout(unpacked_wheel: Path) -> None:
    # A package missing from pyproject's `packages` list imports from a checkout but not from a wheel.
    for init in sorted(ROOT.glob("*/**/__init__.py")):
        rel = init.relative_to(ROOT)
        if rel.parts[0] in ("synth", "perturb", "render"):
            assert (unpacked_wheel / rel).is_file(), f"{rel.parent} is not in pyproject's packages list"
