"""Shared fixtures: small configs and finished runs, built once per session where possible."""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from synth.config import RunConfig, validate_config
from synth.pipeline import run


@cache
def benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (its pages and tables, without running its main), loaded once."""
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tiny_config_data(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "tiny",
        "seed": 7,
        "count": 6,
        "generate": {"families": {"arithmetic.order_of_operations": 1.0, "algebra.linear.two_step": 1.0}},
        "inject": {"variants_per_base": 1,
                   "subtypes": {"intermediate_propagated": 1.0, "final_number": 1.0,
                                "intermediate_corrected": 1.0}},
        "render": {"dpi": 50},
        # Clean pages only: the shared runs keep 4 items per base (clean, error, 2 photos), which many tests count;
        # tests/test_capture_twins.py and tests/exports/test_anonymize.py photograph every kind (the default).
        "degrade": {"ops": [{"subtype": "blur", "severities": [1, 3]}], "apply_to": ["clean"]},
        "output": {"shard_size": 2},
    }
    for key, value in overrides.items():
        data[key] = value
    return data


def tiny_config(**overrides: Any) -> RunConfig:
    return validate_config(tiny_config_data(**overrides))


def folder_hashes(run_dir: Path) -> dict[str, str]:
    """sha256 of manifest.jsonl and every image (PNG and JPEG), keyed by relative path."""
    files = [run_dir / "manifest.jsonl", *sorted(p for p in (run_dir / "images").rglob("*") if p.is_file())]
    return {str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "tiny"
    run(tiny_config(), out)
    return out
