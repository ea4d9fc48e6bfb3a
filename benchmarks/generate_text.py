"""Problems with verification per second, per family: build + verify, one core, median of 3 runs.

    /work/venv/bin/python benchmarks/generate_text.py [--n 60] [--runs 3] [--family ID ...] [--profile ID]
        [--clock cpu] [--question-type mcq]

``--clock cpu`` counts this process's CPU seconds instead of wall seconds: on a shared machine
(load above the core count) wall time mostly measures the neighbours, CPU time measures us.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time

import numpy as np

from synth.generators import REGISTRY, get_family
from synth.generators.base import DIFFICULTIES
from synth.verifier import verify


def one_run(family_id: str, n: int, offset: int, clock: str = "wall",
            question_type: str = "free") -> tuple[float, float]:
    """(problems per second, mean steps) for n problems cycling through the difficulties."""
    family = get_family(family_id)
    steps = 0
    now = time.process_time if clock == "cpu" else time.perf_counter
    start = now()
    for i in range(n):
        seed = offset + i
        problem = family.build(np.random.default_rng(seed), difficulty=DIFFICULTIES[i % 3],
                               question_type=question_type, problem_id=f"b{seed}")
        verdict = verify(problem, problem.steps, family=family)
        if not verdict.fully_correct:
            raise AssertionError(f"{family_id} seed {seed} does not verify")
        steps += len(problem.steps)
    return n / (now() - start), steps / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="problems per run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--family", nargs="*", default=sorted(REGISTRY))
    parser.add_argument("--profile", help="profile one family instead of timing all")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="seconds to divide by")
    parser.add_argument("--question-type", choices=("free", "mcq", "fill"), default="free")
    args = parser.parse_args()
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        one_run(args.profile, args.n, 0)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        return
    families = [f for f in args.family if args.question_type in REGISTRY[f].question_types]
    for fid in families:  # warm caches (templates, sympy) outside the timed runs
        one_run(fid, 3, 10_000, args.clock, args.question_type)
    rows = []
    for fid in families:
        results = [one_run(fid, args.n, run * args.n, args.clock, args.question_type) for run in range(args.runs)]
        rows.append((fid, statistics.median(r[0] for r in results), results[0][1]))
    width = max(len(r[0]) for r in rows)
    print(f"{'family':<{width}}  {'problems/s':>10}  {'mean steps':>10}")
    for fid, rate, steps in rows:
        print(f"{fid:<{width}}  {rate:>10.1f}  {steps:>10.1f}")
    rates = [r[1] for r in rows]
    print(f"{'median family':<{width}}  {statistics.median(rates):>10.1f}")


if __name__ == "__main__":
    main()
