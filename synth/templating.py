"""jinja2 templates (problem phrasings, dataset card), always in a sandboxed environment."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from jinja2 import FileSystemLoader, StrictUndefined, TemplateNotFound
from jinja2.sandbox import SandboxedEnvironment

from synth.resources import resource_dir

PHRASING_SEPARATOR = "\n---\n"


@cache
def environment() -> SandboxedEnvironment:
    # StrictUndefined: a typo in a template variable is an error, not a silently empty string. HTML templates
    # escape every value (a number in a hand-edited results.json was a <script> in report.html); what is HTML or
    # script text already is marked safe where it is made.
    return SandboxedEnvironment(
        loader=FileSystemLoader(str(resource_dir("templates"))),
        undefined=StrictUndefined, keep_trailing_newline=False, autoescape=_is_html,
    )


def _is_html(name: str | None) -> bool:
    return bool(name) and str(name).endswith(".html.j2")


@cache
def _phrasings(family: str, inline: str | None = None) -> tuple[Any, ...]:
    env = environment()
    try:
        source, _, _ = env.loader.get_source(env, f"problems/{family}.j2")  # type: ignore[union-attr]
    except TemplateNotFound:
        if inline is None:
            raise
        source = inline  # a family module may carry its phrasings itself (then it is one file)
    parts = [p.strip() for p in source.split(PHRASING_SEPARATOR) if p.strip()]
    return tuple(env.from_string(p) for p in parts)


def render_phrasing(family: str, context: dict[str, Any], rng: np.random.Generator, inline: str | None = None) -> str:
    """One of the family's phrasings (separated by ``---`` lines), filled from ``context``.

    The phrasings come from ``templates/problems/<family>.j2``, or from ``inline`` when there is no such file.
    """
    options = _phrasings(family, inline)
    chosen = options[int(rng.integers(len(options)))]
    return " ".join(chosen.render(**context).split())


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
