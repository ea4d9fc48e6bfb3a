"""Conceptual errors said in words (issue 19): each mal-rule's curated wrong/right method in one frame, the error
chain and its twin differing only at the edit slot, every label still the verifier's."""

from __future__ import annotations

import re
from functools import cache

import pytest

from perturb.reasoning import inject
from perturb.reasoning.base import clean_variant
from perturb.reasoning.conceptual import CONCEPTUAL
from synth.chains import bank, write_contents
from synth.chains._base import KINDS
from synth.generators import REGISTRY, get_family
from synth.generators._method_words import FRAMES, METHOD_WORDS, method_words
from synth.records import Problem, Step, Variant
from synth.seeding import stage_rng

WORDED = ("student", "cot")
CONCEPTUAL_FAMILIES = sorted(f for f in REGISTRY if any(r.subtype in CONCEPTUAL for r in get_family(f).malrules))
# what a method said in words must never look like: a rule id, SymPy or plain-syntax powers and products
_NOT_WORDS = re.compile(r"_|\*\*|\^|\bmal\b|sqrt|\bpi\b")


def test_every_conceptual_mal_rule_has_curated_words() -> None:
    missing = [(f, r.id) for f in sorted(REGISTRY) for r in get_family(f).malrules
               if r.subtype in CONCEPTUAL and method_words(f, r.id) is None]
    assert missing == [], f"add (frame, wrong, right) for these to synth/generators/_method_words.py: {missing}"


def test_no_words_for_a_mal_rule_that_does_not_exist() -> None:
    known = {(f, r.id) for f in REGISTRY for r in get_family(f).malrules if r.subtype in CONCEPTUAL}
    assert [(f, r) for f, rules in METHOD_WORDS.items() for r in rules if (f, r) not in known] == []


def test_words_are_plain_and_wrong_differs_from_right() -> None:
    for family, rules in METHOD_WORDS.items():
        for rule, words in rules.items():
            assert words.frame in FRAMES, (family, rule)
            for said in (words.wrong, words.right):
                assert said and said == said.strip() and not _NOT_WORDS.search(said), (family, rule, said)
                assert said[0].islower() or said[0] in "+−0123456789", (family, rule, said)  # mid-sentence
            assert words.wrong != words.right, (family, rule)
            # same register and length: neither is more than twice as long as the other (plus a few words)
            assert len(words.wrong.split()) <= 2 * len(words.right.split()) + 3, (family, rule)
            assert len(words.right.split()) <= 2 * len(words.wrong.split()) + 3, (family, rule)


@pytest.mark.parametrize("style", WORDED)
def test_every_frame_has_five_phrasings(style: str) -> None:
    for kind in FRAMES.values():
        assert kind in KINDS
        assert len(bank(style, kind)) >= 5


def _prose(step: Step) -> str:
    out, at = [], 0
    for a, b in step.spans:
        out.append(step.text[at:a])
        at = b
    out.append(step.text[at:])
    return "…".join(out)


def _cut(text: str, words: str) -> str:
    """``text`` with its last occurrence of ``words`` (the slot's filler, after any opener) cut out."""
    head, sep, tail = text.rpartition(words)
    assert sep, (words, text)
    return head + "…" + tail


@cache
def _conceptual_variants(family_id: str) -> tuple[tuple[Problem, Variant], ...]:
    """A few conceptual variants of the family, of different mal-rules where it has them."""
    family = get_family(family_id)
    subtypes = sorted({r.subtype for r in family.malrules if r.subtype in CONCEPTUAL})
    found: dict[str, tuple[Problem, Variant]] = {}
    for seed in range(4):
        for d, difficulty in enumerate(("easy", "medium", "hard")):
            problem = family.build(stage_rng(seed, "test_concepts", d), difficulty=difficulty,
                                   question_type="free", problem_id=f"{family_id}-{seed}-{difficulty}")
            for subtype in subtypes:
                for attempt in range(3):
                    variant = inject(problem, subtype, stage_rng(seed, "test_concepts_inject", d, attempt))
                    if variant is not None and variant.error is not None:
                        found.setdefault(variant.error.edit["rule"], (problem, variant))
        if len(found) == sum(r.subtype in CONCEPTUAL for r in family.malrules):
            break
    return tuple(found.values())


@pytest.mark.parametrize("family_id", CONCEPTUAL_FAMILIES)
def test_error_and_twin_differ_only_at_the_slot_that_says_the_method(family_id: str) -> None:
    variants = _conceptual_variants(family_id)
    assert variants, f"no conceptual variant of {family_id}"
    for problem, variant in variants:
        words = method_words(family_id, variant.error.edit["rule"])
        for style in WORDED:
            contents = [(problem.id, clean_variant(problem)), (f"{problem.id}-e", variant)]
            styled = write_contents(problem, contents, style, 7, concepts_in_words=True)
            assert styled.style == style and not styled.rejected, (variant.error.edit["rule"], styled.rejected)
            (_, twin), (_, wrong) = styled.contents
            k = wrong.error.first_error_step
            worked_k = wrong.error.edit["worked_step"]
            twin_slot, wrong_slot = twin.steps[k - 1], wrong.steps[k - 1]  # the lines before are the same
            assert words.wrong in wrong_slot.text and words.right in twin_slot.text, (family_id, style)
            # one frame and phrasing: only the method's words (and the math) differ
            assert _cut(_prose(wrong_slot), words.wrong) == _cut(_prose(twin_slot), words.right)
            assert not _NOT_WORDS.search(_prose(twin_slot)), twin_slot.text
            # elsewhere the same step reads the same: a line doing what the twin's line there does is worded as
            # it; the only other lines that differ are the mistaken working's own steps (another operation)
            for i, (a, b) in enumerate(zip(twin.steps, wrong.steps), start=1):
                if i != k and a.rule == b.rule:
                    assert _prose(a) == _prose(b), (family_id, style, variant.error.edit["rule"], i)
            assert worked_k == variant.error.edit["step"]
            assert wrong.error.edit["said"] == words.wrong and wrong.error.edit["instead_of"] == words.right


@pytest.mark.parametrize("style", WORDED)
def test_a_base_without_a_conceptual_error_still_says_a_right_method(style: str) -> None:
    # saying a method in words must not mark the bases that hold a conceptual error
    family = get_family("geometry.triangle.angle_sum")
    problem = family.build(stage_rng(2, "test_concepts_usual"), difficulty="easy", question_type="free",
                           problem_id="usual")
    variant = inject(problem, "final_number", stage_rng(2, "test_concepts_usual_inject"))
    assert variant is not None
    contents = [(problem.id, clean_variant(problem)), ("e", variant)]
    styled = write_contents(problem, contents, style, 7, concepts_in_words=True)
    (_, twin), (_, wrong) = styled.contents
    rights = [w.right for w in METHOD_WORDS[problem.family].values()]
    said = [r for r in rights if any(r in s.text for s in twin.steps)]
    assert len(said) == 1
    assert any(said[0] in s.text for s in wrong.steps)  # the error variant says the same right method
    assert "said" not in wrong.error.edit
    off = write_contents(problem, contents, style, 7, concepts_in_words=False)
    assert not any(r in s.text for r in rights for _, v in off.contents for s in v.steps)
