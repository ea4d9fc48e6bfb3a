"""Turn an item into a page image and a layout of boxes (question tokens, steps, figure primitives, answer area).

The names below load their module on first use (PEP 562), so importing a light submodule such as
``render.describe`` (the manifest writes figure descriptions) does not load the page composer, fonts
and matplotlib with it: ``mathstress eval --help`` and the task registry stay quick.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the names are, for type checkers and readers; at run time __getattr__ loads them
    from render.handwriting import Writer, sample_writer, write
    from render.page import PageImage, compose_page, render_page, sample_hand

_HOME = {"PageImage": "render.page", "compose_page": "render.page", "render_page": "render.page",
         "sample_hand": "render.page", "Writer": "render.handwriting", "sample_writer": "render.handwriting",
         "write": "render.handwriting"}

__all__ = ["PageImage", "Writer", "compose_page", "render_page", "sample_hand", "sample_writer", "write"]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'render' has no attribute {name!r}")
    value = getattr(import_module(_HOME[name]), name)
    globals()[name] = value  # looked up once
    return value
