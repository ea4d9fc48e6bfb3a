"""Solution styles: a base's verified worked lines written as today's lines, a student's answer, or a model's chain.

Styles are plugins (one module each, registered by id in ``STYLES``)::

    worked    today's lines, one rewrite per line (``math == text``)
    student   what is asked, the values read from the question and figure, each line with a few words,
              the conclusion with its unit (ErrorRadar's chains)
    cot       a model's chain of thought in paragraphs (MMErroR, ProcessBench)

:func:`write_contents` styles a base's clean control and every variant after injection and verification,
with the phrasing choices of the base seed (twin and variants read alike except at the edit), moves
every label's step numbers to the styled chain, and verifies the styled chain again: a variant whose
styled labels disagree with its proved ones is dropped and counted, never written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import ClassVar

from synth.chains._base import (
    KINDS,
    LINE_KINDS,
    Chain,
    Declared,
    MethodWords,
    bank,
    compose,
    concept_lines,
    declared_readings,
    disagreement,
    names_unknown,
    rule_kind,
    said_words,
    usual_concept,
    worked_chain,
)
from synth.generators import get_family
from synth.records import Problem, Variant
from synth.registry import Registry
from synth.verification import worked as worked_context


class ChainStyle:
    """One solution style. ``write`` returns the styled chain of a variant, or None to keep its worked lines."""

    id: ClassVar[str]
    reads_per_step: ClassVar[int] = 2  # figure values read per reading step

    def write(self, problem: Problem, variant: Variant, seed: int, *, concepts_in_words: bool = False,
              declared: tuple[Declared, ...] | None = None,
              concepts: Mapping[int, MethodWords] | None = None, named: bool = False) -> Chain | None:
        return compose(self.id, problem, variant, seed, reads_per_step=self.reads_per_step,
                       concepts_in_words=concepts_in_words, declared=declared, concepts=concepts, named=named)


STYLES: Registry[ChainStyle] = Registry("solution style", discover="synth.chains",
                                        hint="styles are worked, student and cot (synth/chains/)")


def register(style: type[ChainStyle]) -> type[ChainStyle]:
    """Register a style class by its ``id`` (``@register`` above the class)."""
    STYLES.register(style(), id=style.id)
    return style


@dataclass
class Styled:
    """A base's contents in one style: the style actually used, the kept contents, and what was dropped, by reason."""

    style: str
    contents: list[tuple[str, Variant]]
    rejected: Counter[str] = field(default_factory=Counter)


def write_contents(problem: Problem, contents: list[tuple[str, Variant]], style: str, seed: int, *,
                   concepts_in_words: bool = False) -> Styled:
    """The clean control (first) and its variants written in ``style``, each re-verified.

    ``concepts_in_words``: where a conceptual error of the base applies its mistaken method, every chain of the
    base says in words the method it uses there, in the same frame and phrasing: the clean twin and the other
    variants the right one ("Here I use πr² for the area: ..."), the error variant the mistaken one ("Here I use
    2πr for the area: ...", words curated per mal-rule in synth.generators._method_words); the error's label
    records both (``edit.said``, ``edit.instead_of``). A base without a conceptual error says a right method too
    (:func:`usual_concept`), so the habit marks no base. A variant whose styled chain the verifier labels otherwise
    than its worked lines is dropped
    (``rejected[<reason>]``). Should the clean control's chain itself fail, the whole base keeps the
    worked style (``rejected["clean_kept_worked"]``), so a base never loses its control.
    """
    writer = STYLES[style]
    # the verifier context is derived once per base
    family = get_family(problem.family)
    context = worked_context(problem, family) if style != "worked" else None
    declared = declared_readings(family, problem, [v for _, v in contents]) if style != "worked" else ()
    concepts = concept_lines(problem.family, [v for _, v in contents])
    if concepts_in_words and style != "worked" and not concepts:
        concepts = usual_concept(problem, seed)
    named = style != "worked" and names_unknown(problem, seed, [v for _, v in contents])
    rejected: Counter[str] = Counter()
    out: list[tuple[str, Variant]] = []
    for item_id, variant in contents:
        chain = writer.write(problem, variant, seed, concepts_in_words=concepts_in_words, declared=declared,
                             concepts=concepts, named=named)
        if chain is None:
            out.append((item_id, _as_worked(variant)))
            continue
        reason, styled = disagreement(problem, variant, chain, context)
        if reason is not None:
            if variant.kind == "clean":
                rejected["clean_kept_worked"] += 1
                return Styled("worked", [(i, _as_worked(v)) for i, v in contents], rejected)
            rejected[reason] += 1
            continue
        if concepts_in_words and style != "worked":
            styled = _said(problem.family, styled, concepts)
        out.append((item_id, styled))
    return Styled(style, out, rejected)


def _said(family: str, variant: Variant, concepts: Mapping[int, MethodWords]) -> Variant:
    """A conceptual error said in words records them in its edit: what its chain says at the mal-rule's line and
    what its twin says there instead (the textual part of the edit; the verifier proves the math part)."""
    if variant.error is None:
        return variant
    words = said_words(family, variant.error, concepts)
    if words is None:
        return variant
    edit = {**variant.error.edit, "said": words[1].wrong, "instead_of": words[1].right}
    return replace(variant, error=replace(variant.error, edit=edit))


def _as_worked(variant: Variant) -> Variant:
    return replace(variant, steps=worked_chain(variant))


__all__ = ["KINDS", "LINE_KINDS", "STYLES", "Chain", "ChainStyle", "Styled", "bank", "register", "rule_kind",
           "write_contents"]
