"""Quota allocation: exact shares of families, difficulties, question types, image roles, subtypes and photos.

With ``generate.allocation: quota`` nothing is drawn independently per item. The whole run is
planned first: each dimension gets exact counts by largest remainder, the counts that depend on
the family (a subtype applies to some families only, MCQ is offered by some, a figure is needed
for figure marks) are split over families by iterative proportional fitting and rounded by a
small max-flow so both margins stay exact, and the bases receive their values through seeded
permutations. The plan is a pure function of the resolved config, so every shard, worker and
resumed run computes the same plan, and base ``index`` always gets the same ``BasePlan``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import numpy as np

from synth.config import RunConfig, validate_config
from synth.errors import ConfigError
from synth.seeding import stage_rng

PROBES_PER_CELL = 3
DIFFICULTIES = ("easy", "medium", "hard")  # probe order of subtype_kept
IPF_ITERATIONS = 5000
IPF_TOLERANCE = 1e-6
# Runs smaller than this use the first ``count`` bases of a plan this size: a handful of bases cannot
# hold every share exactly (a subtype may need a family that got no base), and a preview run with
# --limit should still work. At and above it, every share is exact within rounding.
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


def largest_remainder(weights: Mapping[str, float], n: int) -> dict[str, int]:
    """Integer shares of ``n`` proportional to ``weights``, each within one of its exact share.

    >>> largest_remainder({"a": 2, "b": 1}, 10)
    {'a': 7, 'b': 3}
    """
    keys = sorted(weights)
    total = float(sum(weights[k] for k in keys))
    exact = {k: n * weights[k] / total for k in keys}
    out = {k: int(exact[k]) for k in keys}
    by_remainder = sorted(keys, key=lambda k: (-(exact[k] - out[k]), k))
    for k in by_remainder[: n - sum(out.values())]:
        out[k] += 1
    return out


def joint_counts(supply: Mapping[str, int], demand: Mapping[str, int], prior: Callable[[str, str], float],
                 *, what: str) -> dict[tuple[str, str], int]:
    """Integer counts per (row, column) with the given row and column sums, zero where ``prior`` is 0.

    Rows are families; columns are the values of one dimension. The fractional table comes from
    iterative proportional fitting of ``prior`` (so values spread over the families they suit, in
    proportion); it is rounded by max-flow, which keeps both margins exact. Raises ConfigError,
    naming the values that cannot be placed, when no table has these margins.
    """
    rows = [r for r in sorted(supply) if supply[r] > 0]
    cols = [c for c in sorted(demand) if demand[c] > 0]
    if sum(supply[r] for r in rows) != sum(demand[c] for c in cols):
        raise ValueError(f"{what}: supply and demand differ")
    x = np.array([[prior(r, c) for c in cols] for r in rows], dtype=float)
    s = np.array([supply[r] for r in rows], dtype=float)
    d = np.array([demand[c] for c in cols], dtype=float)
    dead = [c for j, c in enumerate(cols) if not x[:, j].any()]
    if dead:
        raise ConfigError(f"{what}: {dead} fit none of the families in generate.families; add families they"
                          " apply to, or remove them")
    for _ in range(IPF_ITERATIONS):
        x *= (s / np.maximum(x.sum(axis=1), 1e-300))[:, None]
        x *= (d / np.maximum(x.sum(axis=0), 1e-300))[None, :]
        if np.abs(x.sum(axis=1) - s).max() < IPF_TOLERANCE * max(1.0, s.sum()):
            break
    else:
        # Fill every row exactly; the columns left short are the values too few families take.
        x *= (s / np.maximum(x.sum(axis=1), 1e-300))[:, None]
        short = {c: (int(d[j]), float(x[:, j].sum())) for j, c in enumerate(cols) if d[j] - x[:, j].sum() > 0.5}
        if not short:  # converging slowly but feasible: rounding by max-flow settles the rest
            return _round_table(rows, cols, x, s, d, what)
        listed = ", ".join(f"{c} wants {want} but about {got:.0f} fit" for c, (want, got) in
                           sorted(short.items(), key=lambda kv: kv[1][1] - kv[1][0]))
        raise ConfigError(f"{what}: the requested shares cannot all be met with generate.families as weighted"
                          f" ({listed}); raise the weights of families these apply to, or lower their weights")
    return _round_table(rows, cols, x, s, d, what)


def _round_table(rows: list[str], cols: list[str], x: np.ndarray, s: np.ndarray, d: np.ndarray,
                 what: str) -> dict[tuple[str, str], int]:
    base = np.floor(x + 1e-9).astype(int)
    need_r = (s.round().astype(int) - base.sum(axis=1)).tolist()
    need_c = (d.round().astype(int) - base.sum(axis=0)).tolist()
    frac = x - base
    # Bipartite flow: row i may pass one unit to column j where the fraction is positive; the
    # fractional table itself is such a flow, so an integral one saturating both sides exists.
    edges = {i: [j for j in np.argsort(-frac[i], kind="stable").tolist() if frac[i, j] > 1e-9]
             for i in range(len(rows))}
    used: set[tuple[int, int]] = set()
    owner: dict[int, list[int]] = {j: [] for j in range(len(cols))}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if (i, j) in used or j in seen:
                continue
            seen.add(j)
            if len(owner[j]) < need_c[j]:
                used.add((i, j))
                owner[j].append(i)
                return True
            for k in list(owner[j]):
                if augment(k, seen):
                    # k moved its unit elsewhere; i takes k's place at column j.
                    owner[j].remove(k)
                    used.discard((k, j))
                    used.add((i, j))
                    owner[j].append(i)
                    return True
        return False

    for i in range(len(rows)):
        for _ in range(need_r[i]):
            if not augment(i, set()):
                raise ConfigError(f"{what}: could not round the allocation exactly (family {rows[i]!r});"
                                  " change the weights slightly or the count")
    out = {(rows[i], cols[j]): int(base[i, j]) for i in range(len(rows)) for j in range(len(cols))}
    for i, j in used:
        out[(rows[i], cols[j])] += 1
    return {k: v for k, v in out.items() if v}


# -- what fits which family ----------------------------------------------------------------------


@cache
def _probes(family_id: str, difficulty: str) -> tuple[Any, Any]:
    """The family and a few of its problems, from fixed seeds independent of the run, to test which
    subtypes fit it (the visual injectors memoise each problem's figure readings themselves)."""
    from synth.generators import get_family

    family = get_family(family_id)
    problems = tuple(family.build(stage_rng(k, f"allocation:probe:{family_id}:{difficulty}"), difficulty=difficulty,
                                  question_type="free", problem_id=f"probe-{k}") for k in range(PROBES_PER_CELL))
    return family, problems


@cache
def subtype_kept(family_id: str, subtype: str) -> bool:
    """Whether one real injection of ``subtype`` into a probe problem of ``family_id`` passes the verifier.

    ``applies`` only says an injector finds something to edit; some edits are always refused
    (renaming the variable of a derivative changes what the notation means), and a subtype planned
    there could never be filled. One injection per (family, subtype) tells the two apart; a refused
    one is retried on the first fitting probe of each other difficulty (a subtype may need a longer
    solution), and a refusal costs ``inject``'s resampling, so no more is tried.
    """
    from perturb.reasoning import REGISTRY, inject

    injector = REGISTRY[subtype]
    for difficulty in DIFFICULTIES:
        family, problems = _probes(family_id, difficulty)
        fitting = [k for k, problem in enumerate(problems) if injector.applies(family, problem)]
        if fitting:
            rng = stage_rng(fitting[0], f"allocation:keep:{family_id}:{subtype}:{difficulty}")
            if inject(problems[fitting[0]], subtype, rng) is not None:
                return True
    return False


@cache
def subtype_fit(family_id: str, difficulty: str, subtype: str) -> float:
    """Share of probe problems of ``family_id`` at ``difficulty`` that injector ``subtype`` can act on,
    0 when no injection of it into the family is ever kept (see ``subtype_kept``)."""
    from perturb.reasoning import REGISTRY

    family, problems = _probes(family_id, difficulty)
    share = sum(bool(REGISTRY[subtype].applies(family, p)) for p in problems) / len(problems)
    return share if share and subtype_kept(family_id, subtype) else 0.0


def _needs_figure(op_subtype: str) -> bool:
    from perturb.photo import REGISTRY

    return "figure" in REGISTRY[op_subtype].requirement


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


@dataclass(frozen=True)
class Allocation:
    plans: tuple[BasePlan, ...]

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


def allocate(config: RunConfig) -> Allocation:
    """The plan of every base of a quota run (``generate.allocation: quota``), in base order."""
    from synth.generators import REGISTRY

    gen, n, seed = config.generate, max(config.count, MIN_PLAN_BASES), config.seed
    fam_counts = largest_remainder(gen.families, n)
    order = [f for f in sorted(fam_counts) for _ in range(fam_counts[f])]
    perm = stage_rng(seed, "allocation:families").permutation(n)
    family_of = [order[int(i)] for i in perm]
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

    def per_cell(dim: str, weights: dict[str, float], per_base: int,
                 fits: Callable[[str, str, str], float]) -> dict[int, list[str]]:
        demand = largest_remainder(weights, n * per_base)
        supply = {names[c]: len(bases_of[c]) * per_base for c in cells}
        table = joint_counts(supply, demand, lambda row, v: fits(*cell_of[row], v) * weights[v], what=dim)
        out: dict[int, list[str]] = {}
        for k, cell in enumerate(cells):
            values = [v for (row, v), c in sorted(table.items()) if row == names[cell] for _ in range(c)]
            out.update(_deal(values, bases_of[cell], per_base, stage_rng(seed, f"allocation:{dim}", k)))
        return out

    qtypes = per_cell("generate.question_types", _weights(gen.question_types), 1,
                      lambda f, d, q: float(q in REGISTRY[f].question_types))
    roles = (per_cell("generate.image_roles", dict(gen.image_roles), 1,
                      lambda f, d, r: float(r in REGISTRY[f].image_roles)) if gen.image_roles else None)
    v = config.inject.variants_per_base
    subtypes = per_cell("inject.subtypes", dict(config.inject.subtypes), v, subtype_fit) if v else None
    slots = degradation_slots(config)
    per_base = config.degrade.per_base
    degr = None
    if per_base and slots:
        kind = {str(pos): op for pos, op, _, _ in slots}
        degr = per_cell("degrade.ops", {str(pos): w for pos, _, _, w in slots}, per_base,
                        lambda f, d, pos: float(REGISTRY[f].figure_kind is not None or not _needs_figure(kind[pos])))
    plans = tuple(BasePlan(
        family=family_of[i], difficulty=difficulty_of[i], question_type=qtypes[i][0],
        image_role=roles[i][0] if roles else None, subtypes=tuple(subtypes[i]) if subtypes else (),
        degradations=frozenset(int(p) for p in degr[i]) if degr else None) for i in range(config.count))
    return Allocation(plans)


@lru_cache(maxsize=4)
def _allocation_of(config_json: str) -> Allocation:
    import json

    return allocate(validate_config(json.loads(config_json)))


def plan_base(config: RunConfig, index: int) -> BasePlan | None:
    """Base ``index``'s plan in a quota run; None for weighted runs and for bases beyond ``count``
    (reverse pages for bleed-through), which draw as before."""
    if config.generate.allocation != "quota" or not 0 <= index < config.count:
        return None
    return _allocation_of(config.model_dump_json()).plans[index]
