"""The registry helper: unique ids, helpful lookups, sorted iteration, plugins found by discovery."""

from __future__ import annotations

import sys
import textwrap
import threading

import pytest

from synth.registry import DuplicateIdError, Registry, UnknownIdError


class Blur:
    id = "blur"


class Glare:
    id = "glare"


def test_a_duplicate_id_is_refused_naming_both_modules() -> None:
    reg: Registry[type] = Registry("photo op")
    reg.register(Blur)
    Other = type("Other", (), {"id": "blur", "__module__": "perturb.photo.other"})
    with pytest.raises(DuplicateIdError, match=r"'blur' is registered twice: by tests\.test_registry\.Blur "
                                                r"and by perturb\.photo\.other\.Other"):
        reg.register(Other)
    assert reg["blur"] is Blur


def test_an_unknown_id_names_the_close_ones_and_is_a_key_error() -> None:
    reg: Registry[type] = Registry("photo op", hint="`mathstress taxonomy` lists them")
    reg.register(Blur)
    reg.register(Glare)
    with pytest.raises(KeyError) as caught:
        reg["blurr"]
    assert isinstance(caught.value, UnknownIdError)
    assert str(caught.value) == ("unknown photo op 'blurr'; did you mean 'blur'? "
                                 "(2 known; `mathstress taxonomy` lists them)")
    assert "blurr" not in reg and reg.get("blurr") is None


def test_iteration_is_sorted_whatever_the_registration_order() -> None:
    reg: Registry[object] = Registry("thing")
    for key in ("zeta", "alpha", "mid"):
        reg.register(object(), id=key)
    assert list(reg) == ["alpha", "mid", "zeta"]
    assert [k for k, _ in reg.items()] == ["alpha", "mid", "zeta"] and len(reg) == 3


def test_register_works_as_a_decorator_with_or_without_an_explicit_id() -> None:
    reg: Registry[object] = Registry("model")

    @reg.register
    class Echo:
        id = "echo"

    @reg.register(id="random")
    def pick() -> None: ...

    assert reg["echo"] is Echo and reg["random"] is pick
    with pytest.raises(TypeError, match="needs a non-empty string id"):
        reg.register(object())


def test_a_fake_added_by_item_assignment_can_be_removed_again() -> None:
    reg: Registry[type] = Registry("family")
    reg.register(Blur)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(reg, "test.fake", Glare)
        assert reg["test.fake"] is Glare
    assert "test.fake" not in reg and list(reg) == ["blur"]


def _package(tmp_path, name: str, modules: dict[str, str]) -> None:
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(f"""
        from synth.registry import Registry
        REGISTRY = Registry("widget", discover={name!r})
    """))
    for mod, body in modules.items():
        (pkg / f"{mod}.py").write_text(textwrap.dedent(body))


def test_discovery_imports_each_public_module_once_and_skips_private_ones(tmp_path, monkeypatch) -> None:
    plugin = """
        from {pkg} import REGISTRY
        from {pkg}._shared import shape

        @REGISTRY.register
        class W:
            id = "{id}"
            kind = shape()
    """
    _package(tmp_path, "widgets_a", {
        "round": plugin.format(pkg="widgets_a", id="round"),
        "square": plugin.format(pkg="widgets_a", id="square"),
        "_shared": "def shape():\n    return 'shape'\n",
        "_draft": "raise RuntimeError('a private module is never imported by discovery')\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    import widgets_a

    assert "widgets_a.round" not in sys.modules  # nothing is imported before the first read
    assert list(widgets_a.REGISTRY) == ["round", "square"]
    assert widgets_a.REGISTRY["round"].kind == "shape"
    assert "widgets_a._draft" not in sys.modules
    assert len(widgets_a.REGISTRY) == 2  # a second read does not import (and register) again


def test_threads_reading_at_once_all_see_every_plugin(tmp_path, monkeypatch) -> None:
    slow = """
        import time
        from widgets_b import REGISTRY
        time.sleep(0.05)

        @REGISTRY.register
        class W:
            id = "{id}"
    """
    _package(tmp_path, "widgets_b", {f"w{i}": slow.format(id=f"w{i}") for i in range(4)})
    monkeypatch.syspath_prepend(str(tmp_path))
    import widgets_b

    seen: list[int] = []
    threads = [threading.Thread(target=lambda: seen.append(len(widgets_b.REGISTRY))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [4, 4, 4, 4]


def test_every_family_module_is_found_without_being_listed() -> None:
    from synth.generators import REGISTRY, get_family

    assert len(REGISTRY) >= 55
    family = get_family("geometry.pythagoras")
    assert type(family).id == "geometry.pythagoras"
    with pytest.raises(KeyError, match="did you mean 'geometry.pythagoras'"):
        get_family("geometry.pythagoras_theorem")
