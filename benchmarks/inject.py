"""Injection sweep: kept / rejected per injector and reason, and subtype shares against the requested weights.

    /work/venv/bin/python benchmarks/inject.py [--n 2000] [--seed 0] [--subtype ID ...] [--family ID ...]

Weights are uniform over the chosen subtypes (default: every registered injector); families are
uniform over the chosen ones (default: every registered family).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path and benchmarks/render.py would hide the `render` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from perturb.reasoning import REGISTRY
from perturb.reasoning.sweep import sweep
from synth.generators import REGISTRY as FAMILIES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--subtype", action="append", default=None)
    parser.add_argument("--family", action="append", default=None)
    args = parser.parse_args()
    subtypes = args.subtype or sorted(REGISTRY)
    families = args.family or sorted(FAMILIES)
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
