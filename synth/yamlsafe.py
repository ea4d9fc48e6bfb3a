"""Untrusted YAML in bounded time and memory: size, node and depth budgets, duplicate keys refused."""

from __future__ import annotations

import os
import re
import reprlib
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.events import AliasEvent, MappingEndEvent, ScalarEvent, SequenceEndEvent, SequenceStartEvent, StreamEndEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from synth.errors import ConfigError

MAX_BYTES = 1 << 20  # 1 MiB; the packaged configs are 1-3 KB
# Values after alias expansion: an alias counts as a full copy of its anchor, as it is for everything
# downstream (validation, error messages). A run config holds a few hundred; 20,000 is refused in well
# under a second, even from libyaml's events on a loaded machine.
MAX_NODES = 20_000
MAX_DEPTH = 64  # a run config nests about 7 deep
PREVIEW = 60

_MERGE_TAG = "tag:yaml.org,2002:merge"

_repr = reprlib.Repr()
_repr.maxlevel = 3
_repr.maxstring = _repr.maxother = _repr.maxlong = PREVIEW
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 6


def preview(value: Any, limit: int = PREVIEW) -> str:
    """A repr cut to ``limit`` characters that says how long the whole is; bounded work for any input.

    ``preview("ab" * 500)`` is ``'ababab...`` (60 characters) followed by `` (1,000 characters)``.
    """
    size = None
    if isinstance(value, str):
        shown, size, cut = repr(value[:limit]), f"{len(value):,} characters", len(value) > limit
        shown = shown if not cut else shown[:-1]  # open quote: the text goes on
    else:
        try:
            shown = _repr.repr(value)  # reprlib stops at a few items per level and a few levels
        except Exception:  # a repr that refuses (an int past Python's digit limit) still gets a name
            shown = f"<{type(value).__name__}>"
        cut = "..." in shown  # reprlib left something out
        if isinstance(value, dict):
            size = f"a mapping of {len(value):,} key{'s' * (len(value) != 1)}"
        elif isinstance(value, (list, tuple, set)):
            size = f"a list of {len(value):,} item{'s' * (len(value) != 1)}"
    if len(shown) > limit + 2 * isinstance(value, str):  # a string's quotes are not counted
        shown, cut = shown[:limit - 3] + "...", True
    elif cut and isinstance(value, str):
        shown += "..."
    if not cut:
        return shown
    return shown + (f" ({size})" if size else "")


class _Refused(yaml.YAMLError):
    """Raised inside the loader; load_yaml turns it into a ConfigError naming the source."""


class _Open:
    """A list or mapping being composed: its node, values so far (aliases expanded), levels below it."""

    __slots__ = ("node", "label", "values", "height", "key", "keys")

    def __init__(self, node: Node, label: str) -> None:
        self.node, self.label = node, label
        self.values, self.height = 1, 1
        self.key: Node | None = None  # a mapping's key waiting for its value
        self.keys: dict[Any, Node] = {}


class _BoundedComposer:
    """Composes nodes from parser events in one loop (no recursion), refusing as soon as a budget is passed.

    An alias counts as a full copy of its anchor, as it will be for everything downstream (construction is
    shared, but validation and error messages walk copies), so a billion-laughs file stops after MAX_NODES
    events instead of expanding. Works over libyaml's events and the pure-Python parser's alike.
    """

    def get_single_node(self) -> Node | None:
        p: Any = self
        p.get_event()  # stream start
        root = None
        if not p.check_event(StreamEndEvent):
            p.get_event()  # document start
            root = self._compose()
            p.get_event()  # document end
        if not p.check_event(StreamEndEvent):
            event = p.get_event()
            raise ComposerError("expected a single document in the stream", root.start_mark if root else None,
                                "but found another document", event.start_mark)
        p.get_event()
        return root

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        return None if node is None else self.construct_document(node)  # type: ignore[attr-defined]

    def _compose(self) -> Node:
        p: Any = self
        anchors: dict[str, Node] = {}
        done: dict[int, tuple[int, int]] = {}  # id(node) -> (values, levels) once closed
        stack: list[_Open] = []

        def where(label: str | None = None) -> str:
            labels = [f.label for f in stack[1:]] + ([label] if label is not None and stack else [])
            return _dotted(labels)

        def label_of_next() -> str:
            top = stack[-1] if stack else None
            if top is None:
                return ""
            if isinstance(top.node, SequenceNode):
                return str(len(top.node.value))
            key = top.key
            return _key_label(key) if key is not None else "(key)"

        def attach(node: Node, values: int, height: int) -> Node | None:
            if not stack:
                return node
            top = stack[-1]
            top.values += values
            top.height = max(top.height, height + 1)
            if top.values > MAX_NODES:
                raise _Refused(f"holds more than {MAX_NODES:,} values once aliases (*name) are expanded (reached at"
                               f" {where()}); a run config holds a few hundred. Look for aliases of aliases")
            if len(stack) - 1 + top.height > MAX_DEPTH:
                raise _Refused(f"nests deeper than {MAX_DEPTH} levels once aliases are expanded (at {where()});"
                               " a run config nests about 7 deep")
            if isinstance(top.node, SequenceNode):
                top.node.value.append(node)
            elif top.key is None:
                top.key = node
                if isinstance(node, ScalarNode) and node.tag != _MERGE_TAG:
                    # Keys compared as the mapping will hold them: 1, 0x1 and true are one key to a Python dict.
                    first = top.keys.setdefault(p.construct_object(node), node)
                    if first is not node:
                        raise _Refused(f"{where(_cut(_key_label(node), PREVIEW))} is given twice (lines"
                                       f" {first.start_mark.line + 1} and {node.start_mark.line + 1}); YAML would"
                                       " silently keep the last one. Remove one")
            else:
                top.node.value.append((top.key, node))
                top.key = None
            return None

        while True:
            event = p.get_event()
            root: Node | None = None
            if isinstance(event, AliasEvent):
                node = anchors.get(event.anchor)  # type: ignore[arg-type]
                if node is None:
                    raise ComposerError(None, None, f"found undefined alias {preview(event.anchor)}", event.start_mark)
                size = (1, 1) if isinstance(node, ScalarNode) else done.get(id(node))
                if size is None:
                    raise _Refused(f"the alias at {where(label_of_next())} (line {event.start_mark.line + 1}) refers to"
                                   " a list or mapping that contains it; write the value out instead")
                root = attach(node, *size)
            elif isinstance(event, (SequenceEndEvent, MappingEndEvent)):
                top = stack.pop()
                top.node.end_mark = event.end_mark
                done[id(top.node)] = (top.values, top.height)
                root = attach(top.node, top.values, top.height)
            else:
                anchor = event.anchor  # type: ignore[attr-defined]
                if anchor is not None and anchor in anchors:
                    raise _Refused(f"anchor &{_cut(anchor, PREVIEW)} is defined twice (lines"
                                   f" {anchors[anchor].start_mark.line + 1} and {event.start_mark.line + 1});"
                                   " rename one and the aliases meant for it")
                tag = event.tag  # type: ignore[attr-defined]
                if isinstance(event, ScalarEvent):
                    if tag is None or tag == "!":
                        tag = p.resolve(ScalarNode, event.value, event.implicit)
                    node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
                    if anchor is not None:
                        anchors[anchor] = node
                    root = attach(node, 1, 1)
                else:
                    kind = SequenceNode if isinstance(event, SequenceStartEvent) else MappingNode
                    if tag is None or tag == "!":
                        tag = p.resolve(kind, None, event.implicit)  # type: ignore[attr-defined]
                    node = kind(tag, [], event.start_mark, None,
                                flow_style=event.flow_style)  # type: ignore[attr-defined]
                    if anchor is not None:
                        anchors[anchor] = node  # before its children, so a self-reference is caught as one
                    if len(stack) + 1 > MAX_DEPTH:
                        raise _Refused(f"nests deeper than {MAX_DEPTH} levels (at {where(label_of_next())}, line"
                                       f" {event.start_mark.line + 1}); a run config nests about 7 deep")
                    stack.append(_Open(node, label_of_next()))
                    continue
            if root is not None:
                return root


_DECIMAL_INT = re.compile(r"[-+]?(?:0|[1-9][0-9_]*)")


def _decimal_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    """An int written in decimal. YAML 1.1 reads ``010`` as octal 8, ``1:20`` as base-60 80 and ``0x10`` as 16:
    nothing in a config is written that way on purpose (``count: 010`` made 8 bases)."""
    value = yaml.SafeLoader.construct_yaml_int(loader, node)
    if not _DECIMAL_INT.fullmatch(node.value):
        raise _Refused(f"{node.value!r} at line {node.start_mark.line + 1} is read by YAML 1.1 as {value} (an octal, "
                       f"hexadecimal, binary or base-60 number); write it in decimal, or quote it if it is text")
    return value


class PySafeBoundedLoader(_BoundedComposer, yaml.SafeLoader):
    """The pure-Python safe loader, bounded (the fallback when PyYAML is built without libyaml)."""


PySafeBoundedLoader.add_constructor("tag:yaml.org,2002:int", _decimal_int)

if getattr(yaml, "__with_libyaml__", False):
    class SafeBoundedLoader(_BoundedComposer, yaml.CSafeLoader):
        """libyaml's safe loader (several times faster), bounded."""

    SafeBoundedLoader.add_constructor("tag:yaml.org,2002:int", _decimal_int)
else:  # pragma: no cover - PyYAML built without libyaml
    SafeBoundedLoader = PySafeBoundedLoader  # type: ignore[misc,assignment]


def read_yaml_file(path: str | Path, *, max_bytes: int = MAX_BYTES) -> Any:
    """Parse one YAML document from a file of at most ``max_bytes``, refusing anything out of budget."""
    path = Path(path)
    limit = f"{max_bytes:,} bytes ({max_bytes / (1 << 20):g} MiB)"
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ConfigError(f"{path}: the file is {size:,} bytes; configs are limited to {limit}. Run configs"
                              " are a few KB: check the path, or split the file")
        # Opened without waiting: a FIFO nobody writes to blocked open() forever; read as a file it is empty (a
        # pipe from <(...) has its writer and is read whole).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(max_bytes + 1)  # stat can understate (pipes, devices, a growing file)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc}); check the path and its permissions") \
            from None
    if len(raw) > max_bytes:
        raise ConfigError(f"{path}: more than {limit} to read; configs are limited to {limit}. Check the path")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file; save it as UTF-8") from None
    return load_yaml(text, source=str(path))


def load_yaml(text: str, *, source: str = "config", loader: type[yaml.SafeLoader] | None = None) -> Any:
    """Parse one YAML document with the safe loader, within MAX_NODES values and MAX_DEPTH levels.

    Aliases are fine within the budget; duplicate keys, recursive aliases and any Python tag are refused.
    """
    cls = loader or SafeBoundedLoader
    parser = cls(text)
    try:
        root = parser.get_single_node()
        if root is None:
            return None
        return parser.construct_document(root)
    except _Refused as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        if "maximum nesting depth" in problem:  # libyaml's own limit, met while it scans ahead of our count
            raise ConfigError(f"{source}: nests deeper than {MAX_DEPTH} levels{where}; a run config nests about"
                              " 7 deep") from None
        context = getattr(exc, "context", None)
        raise ConfigError(f"{source}: not valid YAML{where}: {_cut(f'{context}: {problem}' if context else problem)}"
                          ) from None
    except (ValueError, OverflowError) as exc:  # a constructor's own refusal (an int past Python's digit limit)
        reason = str(exc).split(";")[0]
        raise ConfigError(f"{source}: a value cannot be read ({_cut(reason)}); shorten or correct it") from None
    finally:
        parser.dispose()


def _cut(text: str, limit: int = 2 * PREVIEW) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit - 3]}... ({len(text):,} characters)"


def _dotted(labels: list[str]) -> str:
    return _cut(".".join(labels), 2 * PREVIEW) if labels else "(top level)"


def _key_label(node: Node) -> str:
    return str(node.value) if isinstance(node, ScalarNode) else "?"


