"""Calculation chains in solutions we did not write: their claims, labels from our verifier, planted slips.

A chain is a solution's lines and the closed arithmetic claims they make: GSM8K's annotations
(``48/2 = <<48/2=24>>24``) where a line has them, else every ``<numbers and operators> = <numbers>``
stretch of it (``3 × 4 = 12 apples``). Lines without one are prose. A chain "parses" when every
claim goes through our whitelist parser (``synth.verification.parse_step``; nothing is sympified).
``verify_chain`` hands the claims to ``synth.verification.verify`` as the steps of a solution whose
family judges each one: locally valid when the claim holds, globally correct when its result is the
reference's at that step (without a reference, when it holds). ``offline_error`` plants one of our
computational slips (``synth.slips``) or an operator swap, and keeps it only when the verifier's
labels are the edit's intent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import numpy as np
import sympy
from sympy.core.relational import Relational

from synth.mathparse import MathParseError, parse_math
from synth.records import Problem, Step
from synth.slips import apply_slip
from synth.taxonomy import SUBTYPES, projections
from synth.verification import is_true_statement, parse_step, same_value, verify

_ANNOTATION = re.compile(r"<<([^<>=]{1,200})(=)([^<>=]{1,60})>>")
_FINAL = re.compile(r"^\s*####\s*(.+?)\s*$")
_ENUMERATOR = re.compile(r"^\s*(?:step\s*)?\d{1,3}\s*[.):]\s+", re.IGNORECASE)
_MATH_CHARS = set("0123456789 .,+-*/×÷−–·()^$%\u00a0")
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])"
_NUMBER = re.compile(r"(?<![\d.,])" + _DIGITS)
# A written result with its sign: a negative result rewritten through ``_NUMBER`` kept its minus and gained
# ``number_text``'s (``-4`` slipped to ``--9``).
_SIGNED_NUMBER = re.compile(r"(?<![\d.,])[-−]?" + _DIGITS)
_SWAPS = {"+": "-", "-": "+", "*": "/", "/": "*", "×": "÷", "÷": "×", "−": "+"}
_MAX_CLAIMS = 80


def plain(text: str) -> str:
    """Math as the parser reads it: ASCII operators, no currency signs, no thousands separators."""
    text = text.replace("×", "*").replace("·", "*").replace("÷", "/").replace("−", "-").replace("–", "-")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text.replace("$", "").replace("\u00a0", " "))
    return " ".join(text.split())


@dataclass(frozen=True)
class Claim:
    """One claim in a line: ``line[start:end] == lhs + eq + rhs``; GSM8K's shown result at ``display``."""

    line: int
    start: int
    end: int
    lhs: str
    eq: str
    rhs: str
    display: tuple[int, int] | None = None
    meant: str | None = None            # what a notational edit meant to write (the verifier judges the text)

    @property
    def math(self) -> str:
        return f"{plain(self.lhs)} = {plain(self.rhs)}"


@dataclass(frozen=True)
class Chain:
    lines: tuple[str, ...]
    claims: tuple[Claim, ...]
    final: str | None = None            # GSM8K's ``#### 72``


def _closed(text: str) -> Relational | None | bool:
    """The claim parsed (a closed relation), None when it is not one (a variable in it), False when it fails."""
    try:
        value = parse_step(plain(text))
    except (MathParseError, ValueError, TypeError):
        return False
    return value if isinstance(value, Relational) and not value.free_symbols else None


# Words (and LaTeX operators, read as their names: ``3 \cdot 4 = 12`` ends in ``4 = 12``) after which a number is
# the right operand of a longer expression.
_ARITHMETIC_WORDS = {"times", "plus", "minus", "by", "of", "x", "over", "and", "per", "into", "cdot", "div", "ast",
                     "pm", "mp", "bmod", "mod"}


def _fragment(line: str, start: int, lhs: str, end: int) -> bool:
    """Whether the claim ``line[start:end]`` is only part of a longer expression: it starts with an
    operator, touches a letter (``2x + 3``, ``f(3)``, ``= 13x``) or follows an arithmetic word (``5 times``)."""
    word = re.search(r"([A-Za-z]+)$", line[:start].rstrip())
    return (lhs[:1] in set("+*/×÷·^") or (lhs[:1] in "-−" and bool(word))
            or (start > 0 and line[start - 1].isalpha()) or (end < len(line) and line[end].isalpha())
            or (word is not None and word.group(1).lower() in _ARITHMETIC_WORDS))


def _claims(line: str, index: int) -> list[Claim] | None:
    notes = list(_ANNOTATION.finditer(line))
    found: list[Claim] = []
    if notes:
        for m in notes:
            if _closed(f"{m.group(1)}={m.group(3)}") in (None, False):
                return None
            shown = re.match(r"\s*(-?[\d,]*\.?\d+)", line[m.end():])
            display = (m.end() + shown.start(1), m.end() + shown.end(1)) if shown else None
            found.append(Claim(index, m.start(1), m.end(3), m.group(1), "=", m.group(3), display))
        return found
    body = _ENUMERATOR.match(line)
    skip = body.end() if body else 0
    for eq in (i for i, ch in enumerate(line) if ch == "=" and i >= skip):
        a = eq
        while a > skip and line[a - 1] in _MATH_CHARS:
            a -= 1
        b = eq + 1
        while b < len(line) and line[b] in _MATH_CHARS:
            b += 1
        lhs, rhs = line[a:eq], line[eq + 1:b]
        lead = len(lhs) - len(lhs.lstrip(" ,.\u00a0"))
        rhs_kept = rhs.rstrip(" .,+-*/×÷−–·\u00a0")
        lhs_kept = lhs[lead:].rstrip()
        if not re.search(r"\d", lhs_kept) or not re.search(r"\d", rhs_kept) \
                or _fragment(line, a + lead, lhs_kept, eq + 1 + len(rhs_kept)):
            continue  # `x = 5`, `2x + 3 = 13`, `f(3) = 9`, `5 times 3 = 15`: not a closed calculation to us
        gap_l, gap_r = lhs[lead + len(lhs_kept):], rhs[:len(rhs_kept) - len(rhs_kept.lstrip())]
        parsed = _closed(f"{lhs_kept}={rhs_kept}")
        if parsed is False:
            return None
        if parsed is not None:
            found.append(Claim(index, a + lead, eq + 1 + len(rhs_kept), lhs_kept, gap_l + "=" + gap_r,
                               rhs_kept.strip()))
    return found


def parse_chain(lines: Sequence[str]) -> Chain | None:
    """The chain of a solution's lines (a ``#### answer`` last line is the final answer), or None when a
    calculation in it does not parse."""
    shown = [line.rstrip() for line in lines if line.strip()]
    final = None
    if shown and (m := _FINAL.match(shown[-1])):
        final, shown = m.group(1).replace(",", ""), shown[:-1]
    claims: list[Claim] = []
    for i, line in enumerate(shown):
        found = _claims(line, i)
        if found is None:
            return None
        claims.extend(found)
    if len(claims) > _MAX_CLAIMS:
        return None
    return Chain(tuple(shown), tuple(claims), final)


# ------------------------------------------------------------------------- labels from the verifier


@dataclass(frozen=True)
class _ClaimFamily:
    """``synth.verification.SolutionFamily`` for a chain of claims (one claim per verifier step)."""

    reference: tuple[sympy.Basic | None, ...] | None
    truth: sympy.Basic

    def initial(self, params: dict[str, Any]) -> sympy.Basic:
        return sympy.Integer(0)

    def target(self, params: dict[str, Any]) -> sympy.Basic:
        return self.truth

    def answer_of(self, value: sympy.Basic) -> sympy.Basic:
        return value.rhs if isinstance(value, Relational) else value

    def judge_step(self, params: dict[str, Any], value: sympy.Basic, previous: sympy.Basic,
                   earlier: tuple[sympy.Basic, ...]) -> tuple[bool, bool]:
        holds = is_true_statement(value)
        if self.reference is None:
            return holds, holds
        k = len(earlier)
        ref = self.reference[k] if k < len(self.reference) else None
        return holds, ref is not None and isinstance(value, Relational) and same_value(value.rhs, ref)

    def vocabulary(self, params: dict[str, Any]) -> None:
        return None


@dataclass(frozen=True)
class ChainVerdict:
    first_error_claim: int | None       # 0-based claim index
    error_claims: tuple[int, ...]
    propagated: bool
    first_error_line: int | None        # 1-based line of the shown solution
    error_lines: tuple[int, ...]


def value_of(text: str) -> sympy.Rational | None:
    try:
        value = parse_math(plain(text))
    except (MathParseError, ValueError, TypeError):
        return None
    return value if isinstance(value, sympy.Rational) else None


def verify_chain(chain: Chain, *, reference: Sequence[sympy.Basic | None] | None, truth: str) -> ChainVerdict:
    """What our verifier finds in the chain's claims (against a reference chain's results, if given)."""
    steps = tuple(Step(index=k + 1, rule="claim", value=c.meant or c.math, text=c.math, latex="")
                  for k, c in enumerate(chain.claims))
    family = _ClaimFamily(tuple(reference) if reference is not None else None, value_of(truth) or sympy.Integer(0))
    problem = Problem(id="chain", family="external.chain", domain="external", subdomain="chain", grade_band="unknown",
                      difficulty="unknown", question_type="free", image_role="not_required", question_text="",
                      question_latex="", answer_text=truth, answer_latex="", answer_value=truth, steps=())
    verdict = verify(problem, steps, family=family)  # type: ignore[arg-type]
    errors = tuple(i - 1 for i in verdict.error_steps)
    first = None if verdict.first_error_step is None else verdict.first_error_step - 1
    lines = tuple(sorted({chain.claims[i].line + 1 for i in errors}))
    return ChainVerdict(first, errors, verdict.propagated,
                        None if first is None else chain.claims[first].line + 1, lines)


# ------------------------------------------------------------------------- planting an error offline


def number_text(value: sympy.Rational) -> str:
    """``24``, ``2.5``, or ``7/3`` when the decimal does not end."""
    value = sympy.Rational(value)
    if value.q == 1:
        return str(value.p)
    q, twos, fives = int(value.q), 0, 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    if q == 1:
        return format(Decimal(int(value.p)) / Decimal(int(value.q)), f".{max(twos, fives)}f")
    return f"{value.p}/{value.q}"


def _operand(value: sympy.Rational) -> str:
    text = number_text(value)
    return text if re.fullmatch(r"\d+(?:\.\d+)?", text) else f"({text})"


def _swap_numbers(text: str, old: dict[sympy.Rational, sympy.Rational]) -> str:
    """``text`` with every number whose value is a key of ``old`` written as its new value."""
    def sub(m: re.Match[str]) -> str:
        value = sympy.Rational(m.group(0).replace(",", ""))
        return _operand(old[value]) if value in old else m.group(0)

    return _NUMBER.sub(sub, text)


def _with_result(rhs: str, value: sympy.Rational) -> str:
    """The written result ``rhs`` (``$15``, ``24``) showing ``value`` instead."""
    return _SIGNED_NUMBER.sub(lambda m: number_text(value), rhs, count=1)


def _shown_copy(text: str, old: str, new: str) -> str:
    """GSM8K's visible copy of an annotation's left side (``0.2 x 50 = $<<0.2*50=10>>``) edited as the annotation
    was: the same expression respaced, else its numbers one for one."""
    loose = re.compile(r"\s*".join(re.escape(ch) for ch in old.replace(" ", "")))
    found = list(loose.finditer(text))
    if found:  # keep the visible copy's own spacing: change its numbers, or its characters one for one
        m = found[-1]
        shown, tight = m.group(0), new.replace(" ", "")
        if _NUMBER.sub("#", tight) == _NUMBER.sub("#", old.replace(" ", "")):
            numbers = iter(_NUMBER.findall(new))
            shown = _NUMBER.sub(lambda _: next(numbers), shown)
        elif len(tight) == len(old.replace(" ", "")):
            chars = iter(tight)
            shown = "".join(ch if ch.isspace() else next(chars) for ch in shown)
        else:
            shown = new
        return text[:m.start()] + shown + text[m.end():]
    olds, news = _NUMBER.findall(old), _NUMBER.findall(new)
    if len(olds) != len(news):
        return text
    swap = {a: b for a, b in zip(olds, news) if a != b}
    return _NUMBER.sub(lambda m: swap.get(m.group(0), m.group(0)), text)


def _rewrite(chain: Chain, edits: dict[int, tuple[str, str]]) -> Chain | None:
    """The chain with claim k written as ``edits[k] = (lhs, rhs)`` (annotation, shown result and the line's
    visible copy of the left side too), re-read; None when the rewritten chain no longer parses alike."""
    lines = list(chain.lines)
    for k in sorted(edits, key=lambda k: -chain.claims[k].start):
        c = chain.claims[k]
        lhs, rhs = edits[k]
        line = lines[c.line]
        if c.display is not None:
            line = line[:c.display[0]] + _with_result(line[c.display[0]:c.display[1]], value_of(rhs) or 0) + \
                line[c.display[1]:]
        line = line[:c.start] + lhs + c.eq + rhs + line[c.end:]
        if c.display is not None and lhs != c.lhs:  # GSM8K also shows the left side before the annotation
            floor = max((o.end for o in chain.claims if o.line == c.line and o.end <= c.start), default=0)
            line = line[:floor] + _shown_copy(line[floor:c.start - 2], c.lhs, lhs) + line[c.start - 2:]
        lines[c.line] = line
    edited = parse_chain([*lines, *([f"#### {chain.final}"] if chain.final is not None else [])])
    if edited is None or len(edited.claims) != len(chain.claims):
        return None
    return edited


@dataclass(frozen=True)
class Planted:
    """An offline error and its labels, all from the verifier."""

    subtype: str
    family: str
    lines: tuple[str, ...]
    final_answer: str
    first_error_line: int
    error_lines: tuple[int, ...]
    propagated: bool
    answer_changed: bool
    explanation: str
    edit: dict[str, Any]
    projections: dict[str, str | None]


Edit = tuple[Chain, str, dict[str, Any], set[int]]  # edited chain, final answer, edit record, claims meant wrong


def _slip(chain: Chain, values: list[sympy.Rational | None], rng: np.random.Generator, k: int,
          carry: bool) -> Edit | str:
    old = values[k]
    if old is None:
        return "result_not_a_number"
    slipped = apply_slip(old, rng)
    if slipped is None:
        return "no_slip_fits"
    kind, wrong = slipped
    c = chain.claims[k]
    edits = {k: (c.lhs, _with_result(c.rhs, wrong))}
    changed, new_values = {k}, {old: wrong}
    if carry:
        for j in range(k + 1, len(chain.claims)):
            cj = chain.claims[j]
            lhs = _swap_numbers(cj.lhs, new_values)
            if lhs == cj.lhs:
                continue
            value = value_of(lhs)
            if value is None or values[j] is None:
                return "carried_value_not_a_number"
            edits[j] = (lhs, _with_result(cj.rhs, value))
            changed.add(j)
            new_values[values[j]] = value
    final = chain.final
    last = len(chain.claims) - 1
    if carry and last in changed and final is not None and value_of(final) == values[last]:
        final = number_text(new_values[values[last]])
    edited = _rewrite(chain, edits)
    if edited is None:
        return "edit_breaks_the_chain"
    record = {"claim": k + 1, "from": c.math, "to": edited.claims[k].math, "slip": kind}
    # The manifest's one error_steps rule: a right claim right after a wrong one is an error step too (it carries on
    # from the correct value, not the written one).
    after = {j + 1 for j in changed if j + 1 < len(chain.claims) and j + 1 not in changed}
    return edited, final or "", record, changed | after


def _operator_swap(chain: Chain, rng: np.random.Generator) -> Edit | str:
    options = [(k, m.start()) for k, c in enumerate(chain.claims)
               for m in re.finditer(r"(?<=[\d)\s])[-+*/×÷−](?=[\s\d(])", c.lhs)]
    for pick in rng.permutation(len(options)):
        k, at = options[int(pick)]
        c = chain.claims[k]
        lhs = c.lhs[:at] + _SWAPS[c.lhs[at]] + c.lhs[at + 1:]
        if value_of(lhs) is None or value_of(lhs) == value_of(c.lhs):
            continue
        edited = _rewrite(chain, {k: (lhs, c.rhs)})
        if edited is None:
            continue
        claims = list(edited.claims)
        claims[k] = replace(claims[k], meant=c.math)  # the line means the old operator; the text says the new one
        record = {"claim": k + 1, "from": c.math, "to": claims[k].math, "operator": f"{c.lhs[at]} -> {lhs[at]}"}
        return replace(edited, claims=tuple(claims)), chain.final or "", record, {k}
    return "no_operator_to_swap" if not options else "every_swap_is_a_no_op"


def _edit(subtype: str, chain: Chain, values: list[sympy.Rational | None], rng: np.random.Generator) -> Edit | str:
    last = len(chain.claims) - 1
    if subtype == "operator_swap":
        return _operator_swap(chain, rng)
    if subtype == "final_number":
        return _slip(chain, values, rng, last, carry=True)
    if last < 1:
        return "one_calculation_only"
    k = int(rng.integers(last))  # an intermediate claim
    return _slip(chain, values, rng, k, carry=subtype == "intermediate_propagated")


OFFLINE_SUBTYPES = ("intermediate_propagated", "final_number", "intermediate_corrected", "operator_swap")


def offline_error(chain: Chain, gold: str, rng: np.random.Generator, attempt: Callable[[str], None],
                  reject: Callable[[str, str], None], subtypes: Sequence[str] = OFFLINE_SUBTYPES) -> Planted | None:
    """Plant one error in a correct chain; the first edit whose verified labels equal its intent is kept.

    Intent: the edited claim is the first error; a propagated slip makes exactly the claims it changed
    wrong and changes the final answer; a corrected slip and an operator swap leave one wrong claim and
    the answer right. Every edit tried is counted (``attempt``) and every one refused with its reason
    (``reject``), so the offline funnel reads like our injectors'.
    """
    if value_of(gold) is None:  # "4 cm", NaN, true: whether an edit changes the answer cannot be told
        reject("reference", "gold_not_a_number")
        return None
    values = [value_of(c.rhs) for c in chain.claims]
    reference = [value_of(c.rhs) for c in chain.claims]
    clean = verify_chain(chain, reference=reference, truth=gold)
    if clean.first_error_claim is not None:
        reject("reference", "reference_has_a_false_claim")
        return None
    for subtype in (OFFLINE_SUBTYPES[int(i)] for i in rng.permutation(len(OFFLINE_SUBTYPES))):
        if subtype not in subtypes:  # the same draws whatever is asked: a narrower --types keeps the others' picks
            continue
        attempt(subtype)
        made = _edit(subtype, chain, values, rng)
        if isinstance(made, str):
            reject(subtype, made)
            continue
        edited, final, record, meant_wrong = made
        verdict = verify_chain(edited, reference=reference, truth=gold)
        changes_answer = subtype in ("intermediate_propagated", "final_number")
        last_value = value_of(edited.claims[-1].rhs)
        shown_final = final or (number_text(last_value) if last_value is not None else gold)
        answer_changed = value_of(shown_final) != value_of(gold)
        if verdict.first_error_claim != record["claim"] - 1 or set(verdict.error_claims) != meant_wrong:
            reject(subtype, "verifier_labels_differ")
            continue
        if answer_changed != changes_answer:
            reject(subtype, "answer_changed" if answer_changed else "answer_unchanged")
            continue
        line = verdict.first_error_line
        assert line is not None
        return Planted(subtype, SUBTYPES[subtype].family, edited.lines, shown_final, line, verdict.error_lines,
                       verdict.propagated, answer_changed, f"step {line}: {record['from']} written as {record['to']}",
                       record, projections(subtype))
    return None
