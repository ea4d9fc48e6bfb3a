"""Quota allocation: exact shares of families, difficulties, question types, image roles, subtypes and photos.

With ``generate.allocation: quota`` nothing is drawn independently per item. The whole run is
planned first: each dimension gets exact counts by largest remainder, the counts that depend on
the family (a subtype applies to some families only, MCQ is offered by some, a figure is needed
for figure marks) are split over families by iterative proportional fitting and rounded by a
small max-flow so both margins stay exact, and the bases receive their values through seeded
permutations. The plan is a pure function of the resolved config, so every shard, worker and
resumed run computes the same plan, and base ``index`` always gets the same ``BasePlan``. The
arithmetic is ``synth.quotas``; which subtypes fit which family is ``perturb.reasoning.fit``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from perturb.photo import REGISTRY as PHOTO_OPS
from perturb.reasoning.fit import DIFFICULTIES, subtype_fit, subtype_kept
from synth.config import RunConfig, validate_config
from synth.errors import ConfigError
from synth.generators import REGISTRY as FAMILIES
from synth.quotas import joint_counts, largest_remainder
from synth.seeding import stage_rng
from synth.taxonomy import SUBTYPES

# Re-exported: the planner's building blocks, where callers of the plan look for them.
__all__ = ["DIFFICULTIES", "MIN_PLAN_BASES", "Allocation", "BasePlan", "allocate", "degradation_slots", "family_plan",
           "joint_counts", "largest_remainder", "plan_base", "plan_notes", "subtype_fit", "subtype_kept"]

# Runs smaller than this use the first ``count`` bases of a plan this size: a handful of bases cannot
# hold every share exactly (a subtype may need a family that got no base), and a preview run with
# --limit should still work. At and above it, every share is exact within rounding. Either way a run of at
# least as many bases as families has every family (``_every_family_once``, ``_families_first``).
MIN_PLAN_BASES = 100


@dataclass(frozen=True)
class BasePlan:
    """What base ``index`` must be: the problem's family and labels, and what its variants are."""

    family: str
    difficulty: str
    question_type: str
    image_role: str | None                 # None: whatever the family samples
    subtypes: tuple[str, ...]              # one per variant slot, in slot order
    degradations: frozenset[int] | None    # 1-based positions in the ops x severities list; None: all


def _needs_figure(op_subtype: str) -> bool:
    return "figure" in PHOTO_OPS[op_subtype].requirement


# -- the plan ------------------------------------------------------------------------------------


def _weights(value: list[str] | dict[str, float]) -> dict[str, float]:
    return dict(value) if isinstance(value, dict) else dict.fromkeys(value, 1.0)


def degradation_slots(config: RunConfig) -> list[tuple[int, str, int, float]]:
    """(position, op, severity, weight) for every op x severity of ``degrade.ops``, positions 1-based.

    An op's weight is shared equally by its severities; position ``n`` is the ``-d{n}`` item id.
    """
    out, n = [], 0
    for op in config.degrade.ops:
        for severity in op.severities:
            n += 1
            out.append((n, op.subtype, severity, op.weight / len(op.severities)))
    return out


def _deal(values: list[str], bases: list[int], per_base: int, rng: np.random.Generator) -> dict[int, list[str]]:
    """Hand ``per_base`` values to each base: shuffled, and round-robin so a base gets distinct values
    whenever no value is needed more often than there are bases."""
    order = sorted(values)
    perm = rng.permutation(len(bases))
    out: dict[int, list[str]] = {b: [] for b in bases}
    for j, v in enumerate(order):
        out[bases[int(perm[j % len(bases)])]].append(v)
    shuffled = {}
    for b in bases:
        got = out[b]
        shuffled[b] = [got[int(i)] for i in rng.permutation(len(got))]
    if any(len(v) != per_base for v in shuffled.values()):
        raise ValueError("dealing mismatch")
    return shuffled


def _every_family_once(counts: dict[str, int], count: int) -> dict[str, int]:
    """``counts`` (bases per family in the plan) with every family at least once when the run has as many bases
    as families: a family its weight rounds to 0 takes a base from the family with the most (the first by name
    among equals). Shorter runs keep the plan as it was."""
    out = dict(counts)
    if count < len(out):
        return out
    for family in sorted(f for f, c in out.items() if c == 0):
        donor = min(out, key=lambda f: (-out[f], f))
        out[donor] -= 1
        out[family] += 1
    return out


def _families_first(count: int, family_of: list[str]) -> list[str]:
    """``family_of`` (a plan's families in base order) with every family among the first ``count`` bases, the
    ones a run of ``count`` takes from a larger plan, when there are as many bases as families.

    A family missing there trades its first base after them with the last of the first ``count`` bases of the
    family they hold most often (the first by name among equals): the plan's family counts stay as they are,
    and a run whose first bases already hold every family keeps its plan. Deterministic (a pure function of the
    plan and ``count``); a run whose first bases need no trade keeps exactly the plan it had."""
    families = sorted(set(family_of))
    if count >= len(family_of) or count < len(families):
        return family_of
    out = list(family_of)
    held = Counter(out[:count])
    for family in families:
        if held[family]:
            continue
        donor = min(held, key=lambda f: (-held[f], f))
        i = max(k for k in range(count) if out[k] == donor)
        j = next(k for k in range(count, len(out)) if out[k] == family)
        out[i], out[j] = out[j], out[i]
        held[donor] -= 1
        held[family] += 1
    return out


@dataclass(frozen=True)
class Allocation:
    plans: tuple[BasePlan, ...]
    # What the plan could not do as asked, one sentence each (e.g. the control share not equal per cell).
    notes: tuple[str, ...] = ()

    def shares(self) -> dict[str, Counter[str]]:
        """Planned counts per dimension (family, difficulty, question_type, image_role, subtype, degradation)."""
        out: dict[str, Counter[str]] = {k: Counter() for k in
                                        ("family", "difficulty", "question_type", "image_role", "subtype",
                                         "degradation")}
        for p in self.plans:
            out["family"][p.family] += 1
            out["difficulty"][p.difficulty] += 1
            out["question_type"][p.question_type] += 1
            if p.image_role is not None:
                out["image_role"][p.image_role] += 1
            out["subtype"].update(p.subtypes)
            out["degradation"].update(str(n) for n in (p.degradations or ()))
        return out


def family_plan(config: RunConfig) -> list[str]:
    """The family of every base of the plan (``max(count, MIN_PLAN_BASES)`` bases; a run takes the first
    ``count``), the first dimension ``allocate`` deals."""
    n = max(config.count, MIN_PLAN_BASES)
    fam_counts = _every_family_once(largest_remainder(config.generate.families, n), config.count)
    order = [f for f in sorted(fam_counts) for _ in range(fam_counts[f])]
    perm = stage_rng(config.seed, "allocation:families").permutation(n)
    return _families_first(config.count, [order[int(i)] for i in perm])


def allocate(config: RunConfig) -> Allocation:
    """The plan of every base of a quota run (``generate.allocation: quota``), in base order."""
    gen, n, seed = config.generate, max(config.count, MIN_PLAN_BASES), config.seed
    family_of = family_plan(config)
    diff_counts = largest_remainder(_weights(gen.difficulties), n)
    diffs = [d for d in sorted(diff_counts) for _ in range(diff_counts[d])]
    diff_perm = stage_rng(seed, "allocation:difficulties").permutation(n)
    difficulty_of = [diffs[int(i)] for i in diff_perm]
    # Rows of the joint tables are (family, difficulty) cells: whether a subtype applies can
    # depend on both (a hard polygon has the shape a mal-rule needs, an easy one may not).
    bases_of: dict[tuple[str, str], list[int]] = {}
    for index in range(n):
        bases_of.setdefault((family_of[index], difficulty_of[index]), []).append(index)
    cells = sorted(bases_of)
    names = {cell: f"{cell[0]}|{cell[1]}" for cell in cells}
    cell_of = {name: cell for cell, name in names.items()}
    notes: list[str] = []

    def what(dim: str) -> str:  # the counts an error quotes are the plan's, which a small run takes its bases from
        return dim if n == config.count else f"{dim} (over the plan's {n} bases)"

    def solve(dim: str, supply: dict[str, int], demand: dict[str, int], prior: Callable[[str, str], float],
              cap: dict[str, int] | None) -> dict[tuple[str, str], int]:
        try:
            return joint_counts(supply, demand, prior, what=what(dim), cap=cap)
        except ConfigError as exc:
            if cap is None:
                raise
            # Some value fits fewer bases than it is asked for: it must come twice on some bases, where the
            # inject stage redraws the problem until the two read differently (or counts the slot unfilled).
            notes.append(f"{exc}. A base takes a subtype once when it can, so its variants differ; these come twice on"
                         " some bases instead, where the inject stage redraws the problem until the two variants"
                         " differ or counts the slot unfilled (stats.json: rejections.generate,"
                         " allocation:<subtype>:unfilled)")
            return joint_counts(supply, demand, prior, what=what(dim))

    def per_cell(dim: str, weights: dict[str, float], per_base: int,
                 fits: Callable[[str, str, str], float], *, once_per_base: bool = False,
                 control: Callable[[str], bool] | None = None) -> dict[int, list[str]]:
        demand = largest_remainder(weights, n * per_base)
        supply = {names[c]: len(bases_of[c]) * per_base for c in cells}
        # once_per_base: no cell holds a value more often than it has bases, so _deal gives each base distinct
        # values (two slots of one subtype on one base often read alike: a problem has one mal-rule to show).
        cap = {names[c]: len(bases_of[c]) for c in cells} if once_per_base and per_base > 1 else None

        def prior(row: str, v: str) -> float:
            return fits(*cell_of[row], v) * weights[v]

        table = by_class(dim, supply, demand, prior, cap, control) if control is not None else None
        if table is None:
            table = solve(dim, supply, demand, prior, cap)
        out: dict[int, list[str]] = {}
        for k, cell in enumerate(cells):
            values = [v for (row, v), c in sorted(table.items()) if row == names[cell] for _ in range(c)]
            out.update(_deal(values, bases_of[cell], per_base, stage_rng(seed, f"allocation:{dim}", k)))
        return out

    def by_class(dim: str, supply: dict[str, int], demand: dict[str, int], prior: Callable[[str, str], float],
                 cap: dict[str, int] | None, control: Callable[[str], bool]) -> dict[tuple[str, str], int] | None:
        """The table with the same control share in every cell that can take both classes, or None.

        One joint table lets the values that fit few cells (figure misreads) take those cells' slots first
        and pushes the controls elsewhere, so a cell's family would say error vs no error. Here each cell's
        slots are split first, by largest remainder, in the run's control share; then each class is fitted
        within its slots. None when there is nothing to split or the split cannot be filled (a note says so,
        and the caller plans one joint table as before)."""
        ctrl = {v: c for v, c in demand.items() if c and control(v)}
        err = {v: c for v, c in demand.items() if c and not control(v)}
        if not ctrl or not err:
            return None
        rows = sorted(r for r in supply if supply[r])
        takes_ctrl = {r for r in rows if any(prior(r, v) > 0 for v in ctrl)}
        takes_err = {r for r in rows if any(prior(r, v) > 0 for v in err)}
        flex = [r for r in rows if r in takes_ctrl and r in takes_err]
        ctrl_slots = {r: supply[r] for r in rows if r in takes_ctrl and r not in takes_err}
        left = sum(ctrl.values()) - sum(ctrl_slots.values())
        try:
            if not set(rows) <= takes_ctrl | takes_err or not 0 <= left <= sum(supply[r] for r in flex):
                raise ConfigError(f"{dim}: the control share cannot be met in the cells that take controls")
            if flex:
                ctrl_slots.update(largest_remainder({r: supply[r] for r in flex}, left))
            err_slots = {r: supply[r] - ctrl_slots.get(r, 0) for r in rows}
            return (solve(dim, ctrl_slots, ctrl, prior, cap) | solve(dim, err_slots, err, prior, cap))
        except ConfigError as exc:
            notes.append(f"{dim}: the control share is not the same in every family and difficulty ({exc});"
                         " planned as one joint table")
            return None

    qtypes = per_cell("generate.question_types", _weights(gen.question_types), 1,
                      lambda f, d, q: float(q in FAMILIES[f].question_types))
    roles = (per_cell("generate.image_roles", dict(gen.image_roles), 1,
                      lambda f, d, r: float(r in FAMILIES[f].image_roles)) if gen.image_roles else None)
    v = config.inject.variants_per_base
    subtypes = (per_cell("inject.subtypes", dict(config.inject.subtypes), v, subtype_fit, once_per_base=True,
                         control=lambda s: not SUBTYPES[s].is_error) if v else None)
    slots = degradation_slots(config)
    per_base = config.degrade.per_base
    degr = None
    if per_base and slots:
        kind = {str(pos): op for pos, op, _, _ in slots}
        degr = per_cell("degrade.ops", {str(pos): w for pos, _, _, w in slots}, per_base,
                        lambda f, d, pos: float(FAMILIES[f].figure_kind is not None or not _needs_figure(kind[pos])))
    plans = tuple(BasePlan(
        family=family_of[i], difficulty=difficulty_of[i], question_type=qtypes[i][0],
        image_role=roles[i][0] if roles else None, subtypes=tuple(subtypes[i]) if subtypes else (),
        degradations=frozenset(int(p) for p in degr[i]) if degr else None) for i in range(config.count))
    return Allocation(plans, tuple(notes))


@lru_cache(maxsize=4)
def _allocation_of(config_json: str) -> Allocation:
    return allocate(validate_config(json.loads(config_json)))


def plan_notes(config: RunConfig) -> tuple[str, ...]:
    """What a quota run's plan could not do as asked (``Allocation.notes``); nothing for a weighted run."""
    return _allocation_of(config.model_dump_json()).notes if config.generate.allocation == "quota" else ()


def plan_base(config: RunConfig, index: int) -> BasePlan | None:
    """Base ``index``'s plan in a quota run; None for weighted runs and for bases beyond ``count``
    (reverse pages for bleed-through), which draw as before."""
    if config.generate.allocation != "quota" or not 0 <= index < config.count:
        return None
    return _allocation_of(config.model_dump_json()).plans[index]
