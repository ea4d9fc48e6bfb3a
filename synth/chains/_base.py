"""What the worded styles share: step kinds, phrasing banks, reading steps, and the re-verified relabelling.

A styled chain restates the verified worked lines one per step, each inside a sentence chosen from a
bank of sandboxed jinja2 phrasings (``templates/chains/<style>/<kind>.j2``, separated by ``---`` lines),
and adds steps a person writes but a derivation trace does not: the values read from the question and
the figure, and the conclusion. The chosen phrasing of a step is a function of the base seed, the
style and a stable key of the step (its kind, rule and occurrence), so the clean twin and every
variant of a base read alike except at the edit. Each step's ``math`` is the claim the verifier
checks; ``spans`` say where that claim (or, in a reading step, each value) stands inside ``text``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

from jinja2 import TemplateNotFound

from synth.chains._asked import asked
from synth.generators import get_family
from synth.generators._figure_words import RELATION_WORDS, element_words
from synth.generators._method_words import FRAMES, MethodWords, method_words
from synth.generators.base import Family
from synth.records import ErrorLabel, Given, Problem, Step, Variant
from synth.templating import PHRASING_SEPARATOR, environment
from synth.verification import (
    DECLARE_RULE,
    FIGURE_PARAM,
    READING_RULE,
    REMARK_RULE,
    Verdict,
    Worked,
    figure_value,
    verify,
)

CONCLUDE_RULE = "conclude"

# Coarse step kinds, each with its own bank of phrasings per style. ``ask`` opens the chain (what the
# question wants), ``given`` restates the question's values, ``read`` reads the figure; ``concept``, ``assume``,
# ``infer`` and ``asked`` say in words, at a conceptual error's line, the method used, a statement taken as true,
# a conclusion drawn or what the question asks for (synth.generators._method_words); the others restate one
# worked line each.
KINDS = ("ask", "given", "read", "setup", "substitute", "compute", "transform", "simplify", "convert",
         "conclude", "name", *FRAMES.values())
LINE_KINDS = ("setup", "substitute", "compute", "transform", "simplify", "convert")

# A worked rule's kind: the first pattern that matches the rule name wins (rules are ~200 names such as
# ``add_both_sides``, ``cone_volume``, ``evaluate:+``); anything else is a computation.
_KIND_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"(^|_)(cm2?3?_to|to_m2?|to_litres|to_minutes)|conversion|convert|seconds_in|hours_to|first_factor"
     r"|second_factor|total_minutes|times_in_minutes", "convert"),
    (r"both_sides|rearrange|move_term|solve_linear|zero_product|state_solution|equations|multiply_equation"
     r"|undo_operands", "transform"),
    (r"substitut|read_values", "substitute"),
    (r"simplif|cancel|collect|gather|factor|expand|distribute|multiply_out|combine|split|identity|rationalise"
     r"|rewrite|keep_leading|place_decimal|remove_decimal|align_decimal", "simplify"),
    (r"formula|_rule$|^product_rule|^chain_rule|^power_rule|area|volume|surface|perimeter|circumference|^arc"
     r"|angle_sum|pythagoras|trapezium|^triangle|co_interior|corresponding|alternate|straight_line|isosceles"
     r"|scale_factor|unitary|total_parts|one_percent|set_up|sector|^ratio|mean_formula|rows_times|division_size"
     r"|similar_|l_shape|wheel|cylinder_space|cuboid|capacity|end_areas|sphere|cone|hemisphere|annulus",
     "setup"),
)
_KIND_RES = tuple((re.compile(p), k) for p, k in _KIND_PATTERNS)


@cache
def rule_kind(rule: str) -> str:
    """The step kind of a worked rule name (``add_both_sides`` -> transform, ``cone_volume`` -> setup)."""
    for pattern, kind in _KIND_RES:
        if pattern.search(rule):
            return kind
    return "compute"


def line_kind(rule: str, position: int) -> str:
    """A worked line's kind; the first line of a chain sets the working up unless it moves terms of an equation."""
    kind = rule_kind(rule)
    if position == 1 and kind in ("compute", "simplify", "substitute"):
        return "setup"
    return kind


# ---------------------------------------------------------------- phrasing banks

_MARK = re.compile("\x01(\\d+)\x02")


def mark(i: int) -> str:
    """The placeholder a phrasing carries for math fragment ``i`` (replaced after rendering, so spans are exact)."""
    return f"\x01{i}\x02"


@cache
def bank(style: str, kind: str) -> tuple[Any, ...]:
    """The compiled phrasings of one kind in one style (``templates/chains/<style>/<kind>.j2``)."""
    env = environment()
    try:
        source, _, _ = env.loader.get_source(env, f"chains/{style}/{kind}.j2")  # type: ignore[union-attr]
    except TemplateNotFound:
        raise ValueError(f"style {style!r} has no phrasings for step kind {kind!r}: add "
                         f"templates/chains/{style}/{kind}.j2 (phrasings separated by '---' lines)") from None
    parts = [p.strip() for p in source.split(PHRASING_SEPARATOR) if p.strip() and not p.strip().startswith("{#")]
    return tuple(env.from_string(p) for p in parts)


@lru_cache(maxsize=65536)
def _rendered(style: str, kind: str, index: int, context: tuple[tuple[str, Any], ...]) -> str:
    """Phrasing ``index`` rendered, whitespace collapsed. Math stands in it as placeholders, so a phrasing's
    output depends on a few words of context only and most renderings are cache hits (jinja is the cost)."""
    return " ".join(bank(style, kind)[index].render(**dict(context)).split())


def choice(seed: int, style: str, key: str, n: int) -> int:
    """A stable pick in ``range(n)`` from the base seed and a step key (no generator state: order-free)."""
    digest = hashlib.blake2b(f"{seed}|{style}|{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % n


def phrase(style: str, kind: str, key: str, seed: int, context: dict[str, Any],
           fragments: Sequence[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """One phrasing filled in: the sentence and the spans of ``fragments`` (placed where ``mark(i)`` stands)."""
    options = bank(style, kind)
    raw = _rendered(style, kind, choice(seed, style, key, len(options)), tuple(sorted(context.items())))
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    length = 0
    for m in _MARK.finditer(raw):
        before = raw[at:m.start()]
        out.append(before)
        length += len(before)
        frag = fragments[int(m.group(1))]
        spans.append((length, length + len(frag)))
        out.append(frag)
        length += len(frag)
        at = m.end()
    out.append(raw[at:])
    text = "".join(out)
    if text[:1].islower() and not (spans and spans[0][0] == 0):
        text = text[0].upper() + text[1:]
    return text, tuple(spans)


# ---------------------------------------------------------------- family-aware nouns

_FIGURE_NOUNS = {
    "clock": "the clocks", "object_array": "the picture", "number_line": "the number line",
    "coordinate_grid": "the graph", "plane_geometry": "the diagram", "solid": "the diagram",
    "table": "the table", "line_chart": "the line graph", "bar_chart": "the bar chart", "pie_chart": "the pie chart",
}


def nouns(problem: Problem) -> dict[str, Any]:
    """The family-aware words every phrasing may use."""
    units = [g.unit for g in problem.givens if g.unit and g.unit != "°"]
    return {
        "asked": asked(problem),
        "figure": _FIGURE_NOUNS.get(problem.figure.kind, "the figure") if problem.figure else "the question",
        "unit": str(problem.params.get("answer_unit") or (units[0] if units else "")),
        "var": str(problem.params.get("var") or "x"),
        "domain": problem.domain,
    }


# ---------------------------------------------------------------- reading steps

@dataclass(frozen=True)
class Fact:
    """One thing read: a given's name and its value(s), or a point read as (x, y)."""

    name: str
    values: tuple[str, ...]
    unit: str = ""
    point: bool = False
    say: str = ""  # a figure reading's words, "{}" where the value stands (``there are {} bars``)
    shown: str = ""  # how that value is written there when not as in the claim (``the ends of the tube``)

    @property
    def claim(self) -> str:
        shown = f"({', '.join(self.values)})" if self.point else ", ".join(self.values)
        return f"{self.name} = {shown}"


def facts(givens: Sequence[Given]) -> list[Fact]:
    """Givens grouped by name in order, with ``Px``/``Py`` pairs read as the point P."""
    grouped: dict[str, list[Given]] = {}
    for g in givens:
        grouped.setdefault(g.name, []).append(g)
    out: list[Fact] = []
    done: set[str] = set()
    for name, gs in grouped.items():
        if name in done:
            continue
        m = re.fullmatch(r"([A-Z])x", name)
        if m and f"{m.group(1)}y" in grouped and len(gs) == 1 and len(grouped[f"{m.group(1)}y"]) == 1:
            done.add(f"{m.group(1)}y")
            out.append(Fact(m.group(1), (gs[0].value, grouped[f"{m.group(1)}y"][0].value), point=True))
            continue
        out.append(Fact(name, tuple(g.value for g in gs), gs[0].unit))
    return out


def _minus(text: str) -> str:
    return re.sub(r"(?<![A-Za-z])-", "−", text)


_SYMBOL = re.compile(r"[A-Za-z]{1,2}\d?|[a-z]\([^)]*\)")


def fact_words(fact: Fact, i: int) -> tuple[str, str]:
    """(words with ``mark(i)`` where the value stands, the value as written)."""
    if fact.say:
        return fact.say.format(mark(i)), fact.shown or _minus(", ".join(fact.values))
    if fact.point:
        return f"point {fact.name} is at {mark(i)}", _minus(f"({', '.join(fact.values)})")
    value = _minus(", ".join(fact.values))
    unit = f" {fact.unit}" if fact.unit and fact.unit != "°" else fact.unit
    if _SYMBOL.fullmatch(fact.name):
        return f"{mark(i)}{unit}", f"{_minus(fact.name)} = {value}"
    if len(fact.values) > 1:
        return f"the values for {fact.name} are {mark(i)}{unit}", value
    if fact.name[0].isupper():
        return f"the value for {fact.name} is {mark(i)}{unit}", value
    return f"the {fact.name} is {mark(i)}{unit}", value


def join_words(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def from_figure(problem: Problem, given: Given) -> bool:
    """Whether a solver takes this given from the figure (drawn there, or shown there too on a useful figure)."""
    return given.source.startswith("figure:") or (problem.figure is not None and problem.image_role == "useful")


def shown_givens(family: Family, problem: Problem, variant: Variant) -> tuple[Given, ...]:
    """The givens as this variant's solver read them: a visual misread's values, the true ones otherwise."""
    label = variant.error
    if label is None or label.family != "visual_perception":
        return problem.givens
    changes = {c["param"]: c["to"] for c in label.edit.get("changes", ()) if "param" in c}
    if not changes and "param" in label.edit:
        changes = {label.edit["param"]: label.edit["to"]}
    try:
        return family.givens({**problem.params, **changes})
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
        return problem.givens


# ---------------------------------------------------------------- figure readings the givens do not state

@dataclass(frozen=True)
class Declared:
    """A figure parameter a reading step states because no given shows it (a scale, a grid step, a relation,
    how many bars): ``count`` reads how many elements a list has (a miscount leaves one out)."""

    param: str
    element: str
    count: str  # "" (the value itself), "count" (how many items) or "columns" (how many columns each row has)

    @property
    def name(self) -> str:
        return f"{self.count}({FIGURE_PARAM}{self.param})" if self.count else f"{FIGURE_PARAM}{self.param}"


_ERRORS = (ArithmeticError, ValueError, TypeError, KeyError, IndexError)


def declared_readings(family: Family, problem: Problem, variants: Sequence[Variant]) -> tuple[Declared, ...]:
    """The figure parameters the base's visual misreads change while the givens' reading steps stay true (a scale,
    rise and run counted in squares, a relation, a bar or a column left out): each gets a reading step of its own,
    in the clean twin and every variant of the base alike, so the misread is first wrong at a reading step.

    Taken from the variants' labels (``edit.changes``, ``edit.element``: the family's ``figure_readings``, as the
    injector chose them), not by asking the family for every reading again: that re-derives a solution per
    misread and would cost the write-up more than the rest of the item.
    """
    if problem.figure is None:
        return ()
    true = {f.name: f for f in facts(problem.givens)}
    out: dict[str, Declared] = {}
    for variant in variants:
        changes = _changed_params(variant.error)
        if not changes:
            continue
        assert variant.error is not None
        element = str(variant.error.edit.get("element") or "")
        try:
            shown = facts(family.givens({**problem.params, **changes}))
        except _ERRORS:
            shown = []
        if any(true.get(f.name) != f for f in shown):  # a given's reading shows this misread already
            continue
        for key, to in changes.items():
            value = problem.params.get(key)
            count = _left_out(value, to)
            d = Declared(key, element, count)
            slot = f"{count} {_count_noun(element)}" if count else key  # one count per noun
            if slot in out or figure_value(problem, d.name) is None:
                continue
            if isinstance(value, str) and "," in value:
                continue
            out[slot] = d
    return tuple(out.values())


_COUNT_NOUNS = {"bar": "bars", "wedge": "sectors", "point": "points", "label": "groups", "tray": "groups"}
# How a relation (a parameter whose value is a word) reads as a sentence; "{what}" is the element in words.
_RELATION_SAY = {
    "ce_matches": ("side CE matches side {}", False), "touches": ("the balls touch {}", True),
    "counted": ("the group asked about is the one labelled {}", False),
    "angle_of": ("the angle at the centre is the angle of the {}", False), "given": ("the length marked is {}", True),
    "same_as": ("the marked sector is the same size as {}", False),
}


def _left_out(value: Any, to: Any) -> str:
    """How a misread leaves items out: "count" (fewer items), "columns" (every row one shorter) or ""."""
    if not (isinstance(value, (list, tuple)) and isinstance(to, (list, tuple))):
        return ""
    if len(to) < len(value):
        return "count"
    rows = list(zip(value, to))
    if rows and len(to) == len(value) and all(isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))
                                              and len(b) < len(a) for a, b in rows):
        return "columns"
    return ""


def _count_noun(element: str) -> str:
    head = element.split("_")[0]
    if head == "cell":
        return "columns" if element.startswith("cell_0_") else "rows"
    return _COUNT_NOUNS.get(head, "values")


def declared_fact(problem: Problem, d: Declared, params: dict[str, Any]) -> Fact:
    """What a reading step says of ``d`` when the solver takes the figure's parameters as ``params``."""
    value = params.get(d.param)
    what = element_words(problem, d.element)
    if d.count:
        n = len(value) if isinstance(value, (list, tuple)) else 0
        if d.count == "columns":
            n = len(value[0]) if n else 0
        return Fact(d.name, (str(n),), say=f"there are {{}} {_count_noun(d.element)}")
    if isinstance(value, str):
        frame, worded = _RELATION_SAY.get(d.param, ("{what} is {}", False))
        return Fact(d.name, (value,), say=frame.replace("{what}", what),
                    shown=RELATION_WORDS.get(value, value) if worded else value)
    values = tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else (str(value),)
    if d.param == "scale":
        return Fact(d.name, values, say="each number stands for {}")
    return Fact(d.name, values, say=f"{what} is {{}}")


def _changed_params(label: ErrorLabel | None) -> dict[str, Any]:
    if label is None or label.family != "visual_perception":
        return {}
    changes = {c["param"]: c["to"] for c in label.edit.get("changes", ()) if "param" in c}
    if not changes and "param" in label.edit:
        changes = {label.edit["param"]: label.edit["to"]}
    return changes


# ---------------------------------------------------------------- the chain of one variant

@dataclass(frozen=True)
class Chain:
    """A styled chain and where each step comes from.

    ``origin[j]`` is the worked line (1-based) styled step j + 1 restates (the conclusion restates the
    last line), or None for a reading step; ``wrong_readings`` are the reading steps (1-based) whose
    values differ from the truth.
    """

    steps: tuple[Step, ...]
    origin: tuple[int | None, ...]
    wrong_readings: tuple[int, ...]


def _rule_keys(steps: Sequence[Step]) -> list[tuple[str, str, int]]:
    """(kind, rule, how often that rule came before) of each line."""
    seen: dict[str, int] = {}
    out = []
    for i, s in enumerate(steps, start=1):
        n = seen.get(s.rule, 0)
        seen[s.rule] = n + 1
        out.append((line_kind(s.rule, i), s.rule, n))
    return out


@lru_cache(maxsize=4096)
def _clean_keys(clean: tuple[Step, ...]) -> tuple[tuple[str, str, int], ...]:
    return tuple(_rule_keys(clean))


def _occurrence_keys(steps: Sequence[Step], clean: Sequence[Step]) -> list[tuple[str, str]]:
    """(kind, phrasing key) of each worked line: keyed by its clean rule and how often that rule came before,
    so a variant's lines pick the phrasings of its twin's lines; a line doing what the twin's line in its place
    does takes that line's key (a longer or shorter working before it does not shift it). A line whose rule the
    twin never uses this often
    (a mal-rule's line, the working a mistaken method leads to) takes the key of the twin's line in its place:
    the same words where the kind of step is the same."""
    twin = _clean_keys(tuple(clean))
    known = {(rule, n) for _, rule, n in twin}
    out = []
    for i, (kind, rule, n) in enumerate(_rule_keys(steps), start=1):
        if i <= len(twin) and rule == twin[i - 1][1]:  # the twin's step in the same place: its words
            _, rule, n = twin[i - 1]
        elif (rule.startswith("mal:") or (rule, n) not in known) and i <= len(twin):
            _, rule, n = twin[i - 1]
            kind = line_kind(rule, i) if steps[i - 1].rule.startswith("mal:") else kind
        out.append((kind, f"{kind}|{rule}|{n}"))
    return out


# ---------------------------------------------------------------- conceptual errors in words

def concept_words(family: str, label: ErrorLabel | None) -> tuple[int, MethodWords] | None:
    """(the worked line a conceptual error is said at in words - its first wrong line -, its words), if any:
    only a mal-rule with curated words (``synth.generators._method_words``) is said."""
    if label is None or label.family != "conceptual":
        return None
    step, rule = label.edit.get("step"), label.edit.get("rule")
    if not isinstance(step, int) or not isinstance(rule, str):
        return None
    words = method_words(family, rule)
    return (step, words) if words is not None else None


def said_words(family: str, label: ErrorLabel | None,
               concepts: Mapping[int, MethodWords] | None) -> tuple[int, MethodWords] | None:
    """:func:`concept_words`, unless the base's chains say another method at that line in another frame (two
    conceptual errors of one base at one line): the twin cannot say both, and a sentence its twin lacks would mark
    the error, so this error is left in its math under the twin's sentence (its label then records no words)."""
    said = concept_words(family, label)
    if said is None or concepts is None:
        return said
    there = concepts.get(said[0])
    return None if there is not None and there.frame != said[1].frame else said


def concept_lines(family: str, variants: Sequence[Variant]) -> dict[int, MethodWords]:
    """The worked lines where the base's conceptual errors apply their method, with the words said there: every
    chain of the base (the clean twin too) says in words, at each such line, the method it uses. Where two
    variants err at one line, the first one's frame and right method are what the other chains say."""
    out: dict[int, MethodWords] = {}
    for v in variants:
        said = concept_words(family, v.error)
        if said is not None:
            out.setdefault(*said)
    return out


def usual_concept(problem: Problem, seed: int) -> dict[int, MethodWords]:
    """Where no conceptual error of the base says its method, its chains still say one, as people do: the right
    method of one of the family's conceptual mal-rules that applies to this problem, at the line that mal-rule
    would change. Saying a method in words is then a habit of every chain, not a mark of the bases that hold a
    conceptual error (a classifier reading rows one by one would learn that mark). The subtype is drawn first,
    like the injection's quota draws it, then a rule of it (base seed), so the frames said ("Since ...", "The
    question asks for ...") come in the shares a conceptual error's twin says them."""
    family = get_family(problem.family)
    by_subtype: dict[str, list[str]] = {}
    for r in family.malrules:
        if method_words(problem.family, r.id) is not None:
            by_subtype.setdefault(r.subtype, []).append(r.id)
    subtypes = sorted(by_subtype)
    first = choice(seed, "concept", "subtype", len(subtypes)) if subtypes else 0
    for j in range(len(subtypes)):
        rules = by_subtype[subtypes[(first + j) % len(subtypes)]]
        start = choice(seed, "concept", "rule", len(rules))
        for i in range(len(rules)):
            rule = rules[(start + i) % len(rules)]
            try:
                drafts = family.derive_mal(problem.params, rule)
            except _ERRORS:
                continue
            at = _mal_line(drafts or [], problem.steps)
            if at is not None:
                words = method_words(problem.family, rule)
                assert words is not None
                return {at: words}
    return {}


def _mal_line(drafts: Sequence[Any], clean: Sequence[Step]) -> int | None:
    """The clean line a mal-rule's working departs at: its line tagged ``mal:``, else its first changed line."""
    for i, d in enumerate(drafts, start=1):
        if d.rule.startswith("mal:"):
            return i if i <= len(clean) else None
    for i, d in enumerate(drafts[:len(clean)], start=1):
        if d.text != clean[i - 1].text:
            return i
    return None


def clean_lines(variant: Variant) -> list[int | None] | None:
    """For a control that adds a line (a declaration, a side remark) or leaves one out: the clean line each of its
    lines restates (None for the added line), so it takes that line's words; None for any other variant."""
    edit = variant.control.edit if variant.control is not None else {}
    n = len(variant.steps)
    if isinstance(edit.get("omitted_step"), int):
        k = edit["omitted_step"]
        return [i if i < k else i + 1 for i in range(1, n + 1)]
    for key in ("declared_step", "inserted_step"):
        if isinstance(edit.get(key), int):
            k = edit[key]
            return [i if i < k else None if i == k else i - 1 for i in range(1, n + 1)]
    return None


def names_unknown(problem: Problem, seed: int, variants: Sequence[Variant]) -> bool:
    """Whether the base's chains say which letter stands for the unknown ("Let a stand for the unknown."): always
    where a variant renames it (its declaration is then the same sentence with its own letter), else in about half
    of the bases with a letter for the unknown, by the base seed: naming the unknown is a habit of the chains, not
    the mark of a rename."""
    if not isinstance(problem.params.get("var"), str):
        return False
    if any(v.control is not None and v.control.subtype == "variable_rename" for v in variants):
        return True
    return choice(seed, "name", "habit", 2) == 0


def compose(style: str, problem: Problem, variant: Variant, seed: int, *,
            reads_per_step: int = 2, concepts_in_words: bool = False,
            declared: tuple[Declared, ...] | None = None, concepts: Mapping[int, MethodWords] | None = None,
            named: bool = False) -> Chain:
    """``variant``'s worked lines written in ``style``: readings, the lines in sentences, the conclusion.

    ``declared`` is :func:`declared_readings` of the base's variants, ``concepts`` :func:`concept_lines` of them
    (of this variant alone when not given). With ``concepts_in_words`` each concept line says its method in words
    in the same frame and phrasing in every chain of the base: the right method, or, at this variant's own
    conceptual error, the wrong one (the mal-rule's curated words: only the method's content differs)."""
    family = get_family(problem.family)
    if declared is None:
        declared = declared_readings(family, problem, [variant])
    ctx = nouns(problem)
    shown = shown_givens(family, problem, variant)
    true_facts = {f.name: f for f in facts(problem.givens)}
    taken = {**problem.params, **_changed_params(variant.error)}
    true_facts.update((d.name, declared_fact(problem, d, problem.params)) for d in declared)
    text_facts = facts([g for g in shown if not from_figure(problem, g)])
    figure_facts = [declared_fact(problem, d, taken) for d in declared]
    figure_facts += facts([g for g in shown if from_figure(problem, g)])
    steps: list[Step] = []
    origin: list[int | None] = []
    wrong: list[int] = []
    opening = True

    def opened(text: str, spans: tuple[tuple[int, int], ...]) -> tuple[str, tuple[tuple[int, int], ...]]:
        """The first step begins with what the question asks for."""
        nonlocal opening
        if not opening:
            return text, spans
        opening = False
        lead, _ = phrase(style, "ask", "ask", seed, ctx, [])
        shift = len(lead) + 1
        return f"{lead} {text}", tuple((a + shift, b + shift) for a, b in spans)

    def add(kind: str, key: str, rule: str, value: str, math: str, latex: str, fragments: list[str],
            extra: dict[str, Any], inputs: tuple[str, ...] = (), source: int | None = None) -> None:
        text, spans = opened(*phrase(style, kind, key, seed, {**ctx, **extra}, fragments))
        steps.append(Step(index=len(steps) + 1, rule=rule, value=value, text=text, latex=latex, inputs=inputs,
                          math=math, spans=spans))
        origin.append(source)

    def read(group: list[Fact], kind: str, key: str) -> None:
        words, frags = [], []
        for i, f in enumerate(group):
            w, frag = fact_words(f, i)
            words.append(w)
            frags.append(frag)
        claim = "; ".join(f.claim for f in group)
        add(kind, key, READING_RULE, claim, claim, _latex_claim(group), frags, {"facts": join_words(words)})
        if any(true_facts.get(f.name) != f for f in group):
            wrong.append(len(steps))

    if text_facts:
        read(text_facts, "given", "given")
    for j in range(0, len(figure_facts), reads_per_step):
        read(figure_facts[j:j + reads_per_step], "read", f"read|{j // reads_per_step}")
    if concepts is None:
        concepts = concept_lines(problem.family, [variant])
    concepts = concepts if concepts_in_words else {}
    mine = said_words(problem.family, variant.error, concepts) if concepts_in_words else None
    aligned = clean_lines(variant)
    if aligned is None:
        keys = _occurrence_keys(variant.steps, problem.steps)
        said = dict(concepts)
    else:  # a control's lines take the words of the clean lines they restate; its added line is phrased below
        twin = _clean_keys(tuple(problem.steps))
        keys = [(twin[j - 1][0], "|".join(map(str, twin[j - 1]))) if j else ("compute", "") for j in aligned]
        # a method said at a line the control leaves out is said at the line after it
        said = {next((i for i, j in enumerate(aligned, start=1) if j is not None and j >= c), c): w
                for c, w in concepts.items()}
    letter = str(problem.params.get("var")) if named else ""
    what = "the variable" if problem.family.startswith("calculus.") else "the unknown"  # what the letter stands for
    if letter and any(s.rule == DECLARE_RULE for s in variant.steps):
        letter = ""  # the declaration names it
    for i, (s, (kind, key)) in enumerate(zip(variant.steps, keys), start=1):
        if s.rule in (REMARK_RULE, DECLARE_RULE) and s.math:
            # a side calculation reads like the chain's other lines; a declaration in the words the chains name
            # the unknown with ("Let m stand for the unknown.")
            if s.rule == REMARK_RULE:
                text, spans = phrase(style, "compute", "compute|remark", seed, {**ctx, "math": mark(0)}, [s.math])
            else:
                named_ctx = {**ctx, "letter": mark(0), "what": what}
                text, spans = phrase(style, "name", "name", seed, named_ctx, [s.math.split(" = ")[0]])
            text, spans = opened(text, spans)
            steps.append(replace(s, index=len(steps) + 1, text=text, spans=spans))
            origin.append(i)
            continue
        if is_worded(s):  # a side line already in words: written as the injector wrote it
            text, spans = opened(s.text, s.spans or own_spans(s))
            steps.append(replace(s, index=len(steps) + 1, text=text, math=s.math or s.text, spans=spans))
            origin.append(i)
            continue
        extra: dict[str, Any] = {"math": mark(0), "last": i == len(variant.steps), "first": i == 1}
        if mine is not None and i == mine[0]:
            extra["reason"] = mine[1].wrong
            kind, key = mine[1].bank, f"concept|{i}"
        elif i in said:
            extra["reason"] = said[i].right
            kind, key = said[i].bank, f"concept|{i if aligned is None else aligned[i - 1]}"
        if letter and re.search(rf"(?<![A-Za-z\\]){re.escape(letter)}(?![A-Za-z])", s.text):
            # the chain names its unknown before the first line using it, as a rename's declaration stands there
            lead, _ = opened(*phrase(style, "name", "name", seed, {**ctx, "letter": mark(0), "what": what}, [letter]))
            letter = ""
            text, spans = phrase(style, kind, key, seed, {**ctx, **extra}, [s.text])
            shift = len(lead) + 1
            steps.append(Step(index=len(steps) + 1, rule=s.rule, value=s.value, text=f"{lead} {text}", latex=s.latex,
                              inputs=s.inputs, math=s.text, spans=tuple((a + shift, b + shift) for a, b in spans)))
            origin.append(i)
            continue
        add(kind, key, s.rule, s.value, s.text, s.latex, [s.text], extra, s.inputs, i)
    last = next((s for s in reversed(variant.steps) if not is_worded(s)), variant.steps[-1])
    add("conclude", "conclude", CONCLUDE_RULE, last.value, last.text, last.latex, [last.text],
        {"math": mark(0)}, (), len(variant.steps))
    return Chain(tuple(steps), tuple(origin), tuple(wrong))


def _latex_claim(group: Sequence[Fact]) -> str:
    def name(n: str) -> str:
        return n if _SYMBOL.fullmatch(n) else rf"\text{{{n}}}"

    return r";\ ".join(f"{name(f.name)} = {f.claim.split(' = ', 1)[1]}" for f in group)


def is_worded(step: Step) -> bool:
    """Whether a line is already worded by its injector (a side remark, a declaration, words around its claim)."""
    return step.rule in (REMARK_RULE, DECLARE_RULE) or bool(step.math and step.math != step.text)


def own_spans(step: Step) -> tuple[tuple[int, int], ...]:
    """Where a worded line's claim stands in its text (the whole text when it is not there verbatim)."""
    claim = step.math or step.text
    at = step.text.find(claim)
    return ((at, at + len(claim)),) if at >= 0 else ((0, len(step.text)),)


def worked_chain(variant: Variant) -> tuple[Step, ...]:
    """The worked lines as they are, with ``math`` and ``spans`` saying the whole text is the claim
    (a line its injector worded keeps its own claim and spans)."""
    return tuple(replace(s, math=s.math or s.text, spans=s.spans or own_spans(s)) if is_worded(s)
                 else replace(s, math=s.text, spans=((0, len(s.text)),)) for s in variant.steps)


# ---------------------------------------------------------------- labels: remapped, then proved again

_INDEX_KEYS = ("step", "from_step", "swapped_with")


def remap_label(label: ErrorLabel, chain: Chain, verdict: Verdict, primary: bool) -> ErrorLabel:
    """``label`` with its step numbers moved to the chain's: the verifier's for the variant's first label, the
    styled steps of its own wrong lines for a stacked one (edit keys too; the worked line stays as worked_step)."""
    if primary:
        first, steps = verdict.first_error_step or 0, verdict.error_steps
    else:
        mine = set(label.error_steps)
        steps = tuple(j for j in verdict.error_steps if chain.origin[j - 1] in mine)
        first = next((j for j, o in enumerate(chain.origin, start=1) if o == label.first_error_step), 0)
    return replace(label, first_error_step=first, error_steps=steps, edit=remap_edit(label.edit, chain),
                   explanation=_STEP_NUMBER.sub(lambda m: _renumbered(m, _positions(chain)), label.explanation))


_STEP_NUMBER = re.compile(r"\b([Ss]tep) (\d+)\b")


def _renumbered(match: re.Match[str], pos: dict[int, int]) -> str:
    # An explanation names the worked line ("Step 3 computes 18"); the reader counts the chain's steps.
    return f"{match.group(1)} {pos.get(int(match.group(2)), int(match.group(2)))}"


def _positions(chain: Chain) -> dict[int, int]:
    """Worked line -> the chain's step that restates it (its own step, not the conclusion that restates it)."""
    pos: dict[int, int] = {}
    for j, o in enumerate(chain.origin, start=1):
        if o is not None:
            pos.setdefault(o, j)
    return pos


def remap_edit(edit: dict[str, Any], chain: Chain) -> dict[str, Any]:
    """An injector's edit with its line numbers moved to the chain's (the worked line kept as ``worked_<key>``)."""
    pos = _positions(chain)
    edit = dict(edit)
    for key in _INDEX_KEYS:
        if isinstance(edit.get(key), int) and edit[key] in pos:
            edit[f"worked_{key}"] = edit[key]
            edit[key] = pos[edit[key]]
    if isinstance(edit.get("steps"), list) and all(isinstance(v, int) for v in edit["steps"]):
        edit["steps"] = [pos.get(v, v) for v in edit["steps"]]
    return edit


def _origins(chain: Chain, steps: Sequence[int]) -> set[int | str]:
    """The worked lines (or "read", for a reading step) the styled steps restate."""
    return {"read" if chain.origin[j - 1] is None else chain.origin[j - 1] for j in steps}  # type: ignore[misc]


def disagreement(problem: Problem, variant: Variant, chain: Chain,
                 context: Worked | None = None) -> tuple[str | None, Variant]:
    """Re-verify a styled chain: (None, the styled variant with its labels moved to the chain) or (the reason,
    ``variant``).

    The verifier judges the styled steps' claims; they must say what the worked lines' labels say: the
    misdisplayed lines, the first wrong one (a wrong reading, for a misread), every wrong one, propagation
    over the computed lines and the answer. The written labels are then the verifier's on the chain.
    """
    family = context.family if context is not None else get_family(problem.family)
    verdict = verify(problem, chain.steps, family=family, context=context)
    labels = (variant.error, *variant.errors) if variant.error is not None else ()
    shown_wrong = [j for j, ok in enumerate(verdict.parses, start=1) if not ok]
    meant = {int(e.edit["step"]) for e in labels if e.family == "notational" and isinstance(e.edit.get("step"), int)}
    if _origins(chain, shown_wrong) != meant:
        return "display_mismatch", variant
    if variant.error is None:
        if not verdict.fully_correct:
            return "clean_not_correct", variant
        control = variant.control
        if control is not None:
            control = replace(control, edit=remap_edit(control.edit, chain))
        return None, replace(variant, steps=chain.steps, control=control)
    label = variant.error
    first = verdict.first_error_step
    if first is None:
        return "no_op", variant
    reading_flags = {j for j in verdict.error_steps if chain.origin[j - 1] is None}
    if reading_flags != set(chain.wrong_readings):
        return "reading_mismatch", variant
    if _origins(chain, [first]) != ({"read"} if chain.wrong_readings else {label.first_error_step}):
        return "first_step_mismatch", variant
    wanted: set[int | str] = {i for e in labels for i in e.error_steps}
    if chain.wrong_readings:
        wanted.add("read")
    if _origins(chain, verdict.error_steps) != wanted:
        return "error_steps_mismatch", variant
    if verdict.propagated != label.propagated:
        return "propagation_mismatch", variant
    if verdict.answer_correct == label.answer_changed:
        return "answer_mismatch", variant
    errors = tuple(remap_label(e, chain, verdict, primary=False) for e in variant.errors)
    styled = replace(variant, steps=chain.steps, error=remap_label(label, chain, verdict, primary=True), errors=errors)
    return None, styled
