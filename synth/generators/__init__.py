"""Problem families, looked up by id (``algebra.linear.two_step``): one module per family, found by discovery.

A family module defines a ``Family`` subclass decorated with ``@register``; the registry imports every
module of this package whose name does not start with ``_`` the first time it is read, so adding a
family is adding one file. Helpers several families share live in ``_``-prefixed modules
(``_figure``, ``_data``) under public names.
"""

from __future__ import annotations

from synth.generators.base import Family
from synth.registry import Registry

REGISTRY: Registry[type[Family]] = Registry("family", discover=__name__,
                                            hint="`mathstress taxonomy --families` lists them")
register = REGISTRY.register


def get_family(family_id: str) -> Family:
    """A fresh instance of the family registered as ``family_id`` (``UnknownIdError`` names close ids)."""
    return REGISTRY[family_id]()
