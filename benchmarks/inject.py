"""Injection sweep: kept / rejected per injector and reason, and subtype shares against the requested weights.

    /work/venv/bin/python benchmarks/inject.py [--n 2000] [--seed 0] [--subtype ID ...] [--family ID ...]
    /work/venv/bin/python benchmarks/inject.py --per-family [--n 200] [--family ID ...] [--profile ID]
        [--results benchmarks/results_inject.md]

Weights are uniform over the chosen subtypes (default: every registered injector); families are
uniform over the chosen ones (default: every registered family).

``--per-family`` times, for each family, the production of N kept variants over the subtypes that
apply to it (uniform, ``sweep.applicable_subtypes``): base problems are drawn until one takes the
slot's subtype, as the sweep does. Time is process CPU time (``time.process_time``), so kept/s is a
figure per core that a loaded machine does not distort; wall time is printed beside it. The
headline ``inject kept/s`` counts the injection path only (``applies``, proposing, verifying,
resampling); ``+build`` adds building the base problems. The rejection rate of an injector is
rejected / attempted, where ``not_applicable`` is a filter and not an attempt. ``--profile ID``
runs one family under cProfile and prints the top of the injection path.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

from perturb.reasoning import REGISTRY, inject
from perturb.reasoning.base import Funnel
from perturb.reasoning.sweep import DIFFICULTIES, applicable_subtypes, quotas, sweep
from synth.generators import REGISTRY as FAMILIES
from synth.generators import get_family
from synth.seeding import stable_hash, stage_rng

TARGET = 100.0  # kept variants per second per core (issue #4)
HEALTH = 0.5  # an injector rejecting more than this share of its attempts needs a look
MAX_BASES = 40  # fresh problems a slot tries, as in perturb.reasoning.sweep


@dataclass
class Clock:
    """CPU and wall seconds of one part of the work."""

    cpu: float = 0.0
    wall: float = 0.0

    @contextmanager
    def timing(self):
        c, w = time.process_time(), time.perf_counter()
        try:
            yield
        finally:
            self.cpu += time.process_time() - c
            self.wall += time.perf_counter() - w


@dataclass
class FamilyRun:
    family: str
    subtypes: list[str]
    kept: Counter[str] = field(default_factory=Counter)
    unfilled: Counter[str] = field(default_factory=Counter)
    bases: int = 0
    build_failed: int = 0
    build: Clock = field(default_factory=Clock)
    injection: Clock = field(default_factory=Clock)
    funnel: Funnel = field(default_factory=Funnel)


def run_family(family_id: str, n: int, seed: int) -> FamilyRun:
    """N slots of ``family_id``, uniform over its applicable subtypes, each filled from fresh problems."""
    subtypes = applicable_subtypes(family_id)  # probes, outside the timing
    out = FamilyRun(family_id, subtypes)
    if not subtypes:
        return out
    plan = [s for s, q in quotas(dict.fromkeys(subtypes, 1.0), n).items() for _ in range(q)]
    key = stable_hash(family_id)
    order = stage_rng(seed, "bench:inject:order", key).permutation(len(plan))
    family = get_family(family_id)
    for slot, i in enumerate(order):
        subtype = plan[int(i)]
        for attempt in range(MAX_BASES):
            rng = stage_rng(seed, "bench:inject", key, slot, attempt)
            out.bases += 1
            with out.build.timing():
                try:
                    problem = family.build(rng, difficulty=DIFFICULTIES[int(rng.integers(3))], question_type="free",
                                           problem_id=f"bench-{slot}-{attempt}")
                except Exception:  # noqa: BLE001 - counted, as in the sweep
                    out.build_failed += 1
                    continue
            with out.injection.timing():
                if not REGISTRY[subtype].applies(family, problem):
                    continue
                variant = inject(problem, subtype, rng, funnel=out.funnel)
            if variant is not None:
                out.kept[subtype] += 1
                break
        else:
            out.unfilled[subtype] += 1
    return out


def rejection_rate(row: dict) -> tuple[int, float]:
    """(rejected attempts, rejected / attempted); ``not_applicable`` is a filter, not an attempt."""
    rejected = sum(v for k, v in row["rejected"].items() if k != "not_applicable")
    return rejected, rejected / row["attempted"] if row["attempted"] else 0.0


def per_family(families: list[str], n: int, seed: int, results: str | None = None) -> None:
    print(f"{n} kept variants per family, uniform over its applicable subtypes; CPU seconds (wall in brackets)\n")
    print(f"{'family':38} {'subt':>4} {'kept':>5} {'unfill':>6} {'bases':>6} {'inject s':>15} {'build s':>15} "
          f"{'inject kept/s':>13} {'+build kept/s':>13}")
    funnel, rates, runs = Funnel(), {}, []
    for family_id in families:
        try:
            r = run_family(family_id, n, seed)
        except Exception as exc:  # noqa: BLE001 - a family being edited must not hide the others' figures
            print(f"{family_id:38} failed: {type(exc).__name__}: {exc}", flush=True)
            continue
        runs.append(r)
        kept = sum(r.kept.values())
        rate = kept / r.injection.cpu if r.injection.cpu else float("nan")
        both = kept / (r.injection.cpu + r.build.cpu) if r.injection.cpu else float("nan")
        rates[family_id] = rate
        print(f"{family_id:38} {len(r.subtypes):4d} {kept:5d} {sum(r.unfilled.values()):6d} {r.bases:6d} "
              f"{r.injection.cpu:6.2f} ({r.injection.wall:6.2f}) {r.build.cpu:6.2f} ({r.build.wall:6.2f}) "
              f"{rate:13.1f} {both:13.1f}", flush=True)
        if r.unfilled:
            print(f"{'':38} unfilled: {dict(sorted(r.unfilled.items()))}")
        for name in r.funnel.as_dict():
            funnel.attempted[name] += r.funnel.attempted[name]
            funnel.kept[name] += r.funnel.kept[name]
            for reason, c in r.funnel.rejected.get(name, Counter()).items():
                funnel.rejected.setdefault(name, Counter())[reason] += c
    finite = [v for v in rates.values() if v == v]
    kept = sum(sum(r.kept.values()) for r in runs)
    cpu = sum(r.injection.cpu for r in runs)
    print(f"\nmedian inject kept/s per family {statistics.median(finite):.1f}; overall {kept / cpu:.1f} "
          f"({kept} kept in {cpu:.1f} CPU s of injection, {sum(r.build.cpu for r in runs):.1f} CPU s of building)")
    under = {f: round(v, 1) for f, v in sorted(rates.items(), key=lambda kv: kv[1]) if not v >= TARGET}
    print(f"families under {TARGET:.0f} kept/s: {len(under)} of {len(rates)}", under if under else "")
    print(f"\n{'injector':44} {'attempted':>9} {'kept':>6} {'rejected':>8} {'rate':>6}  not_applicable; reasons")
    for name, row in funnel.as_dict().items():
        rejected, share = rejection_rate(row)
        flag = " !" if share > HEALTH else "  "
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(row["rejected"].items(), key=lambda kv: -kv[1])
                            if k != "not_applicable")
        print(f"{name:44} {row['attempted']:9d} {row['kept']:6d} {rejected:8d} {share:6.1%}{flag}"
              f"{row['rejected'].get('not_applicable', 0)}; {reasons}")
    over = [name for name, row in funnel.as_dict().items() if rejection_rate(row)[1] > HEALTH]
    print(f"injectors rejecting more than {HEALTH:.0%} of attempts: {over or 'none'}")
    if results:
        write_results(results, families, n, seed, funnel, rates, runs)


def write_results(path: str, families: list[str], n: int, seed: int, funnel: Funnel, rates: dict[str, float],
                  runs: list[FamilyRun]) -> None:
    """The per-injector rejection rates (and the kept/s summary) as a markdown file."""
    finite = sorted(v for v in rates.values() if v == v)
    kept = sum(sum(r.kept.values()) for r in runs)
    unfilled = sum(sum(r.unfilled.values()) for r in runs)
    lines = ["# Injection funnel: rejection rate per injector", "",
             f"`python benchmarks/inject.py --per-family --n {n} --seed {seed} --results {path}`: {n} kept variants "
             f"per family over {len(families)} families, uniform over each family's applicable subtypes, each slot "
             f"drawing fresh base problems until one takes it ({kept} kept, {unfilled} slots unfilled). The rate is "
             "rejected / attempted; `not_applicable` (the injector's own applies() said no) is a filter, not an "
             f"attempt. Injection kept/s per family per CPU second: median {statistics.median(finite):.0f}, lowest "
             f"{finite[0]:.0f}.", "",
             "| injector | attempted | kept | rejected | rate | main reasons |", "|---|---:|---:|---:|---:|---|"]
    for name, row in funnel.as_dict().items():
        rejected, share = rejection_rate(row)
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(row["rejected"].items(), key=lambda kv: -kv[1])
                            if k != "not_applicable")
        lines.append(f"| {name} | {row['attempted']} | {row['kept']} | {rejected} | {share:.1%} | {reasons} |")
    over = [name for name, row in funnel.as_dict().items() if rejection_rate(row)[1] > HEALTH]
    lines += ["", f"Injectors rejecting more than {HEALTH:.0%} of their attempts: {', '.join(over) or 'none'}."]
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def profile(family_id: str, n: int, seed: int, top: int = 30) -> None:
    """cProfile one family's run; listed by cumulative time, then by time spent in each function itself."""
    profiler = cProfile.Profile()
    profiler.enable()
    r = run_family(family_id, n, seed)
    profiler.disable()
    print(f"{family_id}: {sum(r.kept.values())} kept, inject {r.injection.cpu:.2f} CPU s, build {r.build.cpu:.2f}")
    for order in ("cumulative", "tottime"):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats(order).print_stats(top)
        print(text.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="slots (default 2000; 200 per family with --per-family)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--subtype", action="append", default=None)
    parser.add_argument("--family", action="append", default=None)
    parser.add_argument("--per-family", action="store_true", help="kept/s per family and rejection rate per injector")
    parser.add_argument("--profile", metavar="FAMILY", default=None, help="cProfile one family's per-family run")
    parser.add_argument("--results", metavar="PATH", default=None,
                        help="with --per-family: write the rejection rates as markdown too (results_inject.md)")
    args = parser.parse_args()
    families = args.family or sorted(FAMILIES)
    unknown = sorted(set(families + ([args.profile] if args.profile else [])) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown family id(s) {unknown}; `mathstress taxonomy --families` lists them")
    if args.profile:
        profile(args.profile, args.n or 200, args.seed)
        return
    if args.per_family:
        per_family(families, args.n or 200, args.seed, args.results)
        return
    args.n = args.n or 2000
    subtypes = args.subtype or sorted(REGISTRY)
    weights = {s: 1.0 for s in subtypes}
    start = time.perf_counter()
    result = sweep({f: 1.0 for f in families}, weights, args.n, args.seed)
    seconds = time.perf_counter() - start
    print(f"{args.n} slots, {len(subtypes)} subtypes, {len(families)} families, {result.bases_tried} base problems "
          f"tried, {seconds:.1f} s ({args.n / seconds:.1f} variants/s)")
    if result.build_failed:
        print("families that failed to build:", dict(result.build_failed))
    print(f"\n{'subtype':26} {'requested':>9} {'kept':>7} {'share':>7} {'delta pp':>9} {'unfilled':>8}")
    shares = result.shares()
    for s in subtypes:
        requested = 1 / len(subtypes)
        share = shares.get(s, 0.0)
        print(f"{s:26} {requested:9.3%} {result.kept[s]:7d} {share:7.3%} {100 * (share - requested):9.2f} "
              f"{result.unfilled[s]:8d}")
    print(f"\n{'injector':44} {'attempted':>9} {'kept':>6}  rejected by reason")
    for name, row in result.funnel.as_dict().items():
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(row["rejected"].items(), key=lambda kv: -kv[1]))
        print(f"{name:44} {row['attempted']:9d} {row['kept']:6d}  {reasons}")


if __name__ == "__main__":
    main()
