"""A subtype-first sweep: N error variants whose subtype shares match the requested weights."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from perturb.reasoning import REGISTRY, inject
from perturb.reasoning.base import Funnel
from perturb.reasoning.fit import DIFFICULTIES, subtype_fit
from synth.generators import get_family
from synth.quotas import largest_remainder as quotas
from synth.records import Problem, Variant
from synth.seeding import stage_rng


def applicable_subtypes(family_id: str) -> list[str]:
    """The subtypes a quota plan would give ``family_id``: some probe problem (any difficulty) takes one kept
    injection of each (``synth.allocation.subtype_fit``), so a per-family sweep never plans a slot it cannot fill."""
    return [s for s in sorted(REGISTRY) if any(subtype_fit(family_id, d, s) > 0 for d in DIFFICULTIES)]


@dataclass
class SweepResult:
    kept: Counter[str] = field(default_factory=Counter)
    unfilled: Counter[str] = field(default_factory=Counter)
    bases_tried: int = 0
    build_failed: Counter[str] = field(default_factory=Counter)
    funnel: Funnel = field(default_factory=Funnel)
    variants: list[tuple[Problem, Variant]] = field(default_factory=list)

    def shares(self) -> dict[str, float]:
        total = sum(self.kept.values()) + sum(self.unfilled.values())
        return {k: self.kept[k] / total for k in sorted(set(self.kept) | set(self.unfilled))}


def sweep(families: dict[str, float], weights: dict[str, float], n: int, seed: int, *,
          max_bases: int = 40, keep_variants: bool = False) -> SweepResult:
    """Fill ``n`` slots, each with its planned subtype, drawing base problems until one takes it.

    The plan is fixed by ``quotas`` and shuffled by ``seed``; a slot tries up to ``max_bases``
    fresh problems (families by weight), so a subtype that applies to few families still gets
    its share, and ``unfilled`` says when it could not.
    """
    unknown = sorted(set(weights) - set(REGISTRY))
    if unknown:
        raise KeyError(f"unknown error subtype(s) {unknown}; available: {sorted(REGISTRY)}")
    plan = [s for s, q in quotas(weights, n).items() for _ in range(q)]
    order = np.random.default_rng(seed).permutation(len(plan))
    fams = sorted(families)
    p = np.array([families[f] for f in fams], dtype=float)
    result = SweepResult()
    for slot, i in enumerate(order):
        subtype = plan[int(i)]
        for attempt in range(max_bases):
            rng = stage_rng(seed, "sweep", slot, attempt)
            family_id = fams[int(rng.choice(len(fams), p=p / p.sum()))]
            family = get_family(family_id)
            result.bases_tried += 1
            try:
                problem = family.build(rng, difficulty=DIFFICULTIES[int(rng.integers(3))], question_type="free",
                                       problem_id=f"sweep-{slot}-{attempt}")
            except Exception:  # noqa: BLE001 - a family still in progress must not stop the sweep; it is counted
                result.build_failed[family_id] += 1
                continue
            if not REGISTRY[subtype].applies(family, problem):
                continue
            variant = inject(problem, subtype, rng, funnel=result.funnel)
            if variant is not None:
                result.kept[subtype] += 1
                if keep_variants:
                    result.variants.append((problem, variant))
                break
        else:
            result.unfilled[subtype] += 1
    return result
