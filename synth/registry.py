"""Plugins of one kind (families, injectors, photo ops, tasks, models, exports) looked up by id.

One registry per kind, one module per plugin::

    FAMILIES: Registry[type[Family]] = Registry("family", discover="synth.generators")

    @FAMILIES.register            # registered under its ``id`` attribute
    class LinearTwoStep(Family):
        id = "algebra.linear.two_step"

    FAMILIES.register(fn, id="blur")   # or under an explicit id

The contract:

- ids are unique: registering one twice raises ``DuplicateIdError`` naming both modules;
- ``registry[id]`` returns the plugin; an unknown id raises ``UnknownIdError`` (a ``KeyError``)
  naming the closest known ids;
- iteration (``for id in registry``, ``.items()``) is in sorted id order, whatever the import order;
- with ``discover``, the first read imports every module of that package whose name does not start
  with ``_`` (``pkgutil.iter_modules`` + ``importlib``), so adding a plugin is adding one module and
  nothing imports the plugins by name. Private modules (``_figure.py``) hold shared helpers.
  Discovery runs once, under a lock (worker threads may look up at the same time).

``registry[id] = obj`` is ``register(obj, id=id)`` and ``del registry[id]`` removes it: tests add a
fake plugin for one test this way (``monkeypatch.setitem``).
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class DuplicateIdError(ValueError):
    """Two plugins claim the same id."""


class UnknownIdError(KeyError):
    """No plugin has the id asked for; the message lists the closest known ids."""

    def __str__(self) -> str:  # KeyError would print the message quoted, as a key
        return str(self.args[0]) if self.args else ""


class Registry(MutableMapping[str, T], Generic[T]):
    """Plugins of one ``kind`` by id, optionally discovered from the modules of a package."""

    def __init__(self, kind: str, *, discover: str | None = None, hint: str = "") -> None:
        """``kind`` names the plugins in messages ("family"); ``hint`` ends an unknown-id message
        (where to find the list, e.g. "`mathstress taxonomy --families` lists them")."""
        self.kind = kind
        self.package = discover
        self.hint = hint
        self._items: dict[str, T] = {}
        self._discovered = discover is None
        self._discovering = False
        self._lock = threading.RLock()

    # -- registering ---------------------------------------------------------------------------

    @overload
    def register(self, obj: T, *, id: str | None = None) -> T: ...

    @overload
    def register(self, obj: None = None, *, id: str | None = None) -> Callable[[T], T]: ...

    def register(self, obj: T | None = None, *, id: str | None = None) -> T | Callable[[T], T]:
        """Register ``obj`` under ``id`` (default: its ``id`` attribute) and return it unchanged.

        Usable as ``@registry.register``, ``@registry.register(id="x")`` or ``registry.register(obj)``.
        """
        if obj is None:
            return lambda o: self.register(o, id=id)
        key = id if id is not None else getattr(obj, "id", None)
        if not isinstance(key, str) or not key:
            raise TypeError(f"a {self.kind} needs a non-empty string id: pass id=... or give "
                            f"{_origin(obj)} an `id` attribute")
        with self._lock:
            if key in self._items:
                raise DuplicateIdError(f"{self.kind} id {key!r} is registered twice: by {_origin(self._items[key])} "
                                       f"and by {_origin(obj)}; rename one of them")
            self._items[key] = obj
        return obj

    def __setitem__(self, key: str, obj: T) -> None:
        self.register(obj, id=key)

    def __delitem__(self, key: str) -> None:
        with self._lock:
            del self._items[key]

    # -- reading -------------------------------------------------------------------------------

    def __getitem__(self, key: str) -> T:
        self._discover()
        try:
            return self._items[key]
        except KeyError:
            raise UnknownIdError(self._unknown(key)) from None

    def __contains__(self, key: object) -> bool:
        self._discover()
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        self._discover()
        return iter(sorted(self._items))

    def __len__(self) -> int:
        self._discover()
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self)} registered)"

    def near(self, key: Any) -> str:
        """``; did you mean 'a', 'b'?`` for the registered ids close to ``key``, or ""."""
        self._discover()
        close = difflib.get_close_matches(str(key), self._items, n=3, cutoff=0.6)
        return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""

    def _unknown(self, key: Any) -> str:
        near = self.near(key)
        tail = f" ({len(self._items)} known; {self.hint})" if self.hint else f" (known: {sorted(self._items)})"
        return f"unknown {self.kind} {key!r}{near}{tail}"

    def _discover(self) -> None:
        """Import the package's public modules once; they register their plugins as they load."""
        if self._discovered:
            return
        with self._lock:  # another thread looking up meanwhile waits here until every module is in
            if self._discovered or self._discovering:
                return  # _discovering: a module reading the registry while it loads sees what is in so far
            self._discovering = True
            try:
                assert self.package is not None
                package = importlib.import_module(self.package)
                for info in pkgutil.iter_modules(package.__path__):
                    if not info.name.startswith("_"):
                        importlib.import_module(f"{self.package}.{info.name}")
            finally:
                self._discovering = False
            self._discovered = True  # only when every module loaded: after an error the next read tries again


def _origin(obj: Any) -> str:
    """Where a plugin comes from, for messages: ``synth.generators.algebra.LinearTwoStep``."""
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{getattr(obj, '__module__', None) or type(obj).__module__}.{name}"
