"""Locate the templates/ and configs/ folders, in a checkout or in an installed package."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def resource_dir(name: str) -> Path:
    """The folder ``templates`` or ``configs``: installed as ``synth/<name>``, or in the checkout."""
    # Installed wheels place the folders at synth/<name> (namespace packages, so importlib's
    # files() would give a MultiplexedPath); a checkout or editable install has them at the root.
    installed = Path(__file__).resolve().parent / name
    if installed.is_dir():
        return installed
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"mathstress resource folder {name!r} is missing from this installation")


def packaged_config(name: str) -> Path | None:
    """A packaged config by bare name (``quickstart`` or ``quickstart.yaml``), if it exists."""
    if "/" in name or "\\" in name:
        return None
    stem = name[:-5] if name.endswith(".yaml") else name
    path = resource_dir("configs") / f"{stem}.yaml"
    return path if path.is_file() else None


def packaged_configs() -> list[str]:
    return sorted(p.stem for p in resource_dir("configs").glob("*.yaml"))
