"""Exact integer shares: largest remainder for one margin, fitted and max-flow-rounded tables for two.

Pure arithmetic over weights and counts (no families, no injectors), so every layer can use it:
the quota planner (``synth.allocation``) and the subtype sweep (``perturb.reasoning.sweep``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from synth.errors import ConfigError

IPF_ITERATIONS = 5000
IPF_TOLERANCE = 1e-6


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
                 *, what: str, cap: Mapping[str, int] | None = None) -> dict[tuple[str, str], int]:
    """Integer counts per (row, column) with the given row and column sums, zero where ``prior`` is 0.

    Rows are families; columns are the values of one dimension. The fractional table comes from
    iterative proportional fitting of ``prior`` (so values spread over the families they suit, in
    proportion); it is rounded by max-flow, which keeps both margins exact. Raises ConfigError,
    naming the values that cannot be placed, when no table has these margins.

    ``cap`` bounds every cell of a row (a base takes an error subtype at most once, so a cell holds
    at most its bases): the fitting clips to it, and rounding stays within it (a cell is rounded to
    its floor or ceiling, both at most an integer cap). Tables that never reach a cap are unchanged.
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
    bound = np.array([cap[r] for r in rows], dtype=float)[:, None] if cap is not None else None
    for _ in range(IPF_ITERATIONS):
        x *= (s / np.maximum(x.sum(axis=1), 1e-300))[:, None]
        x *= (d / np.maximum(x.sum(axis=0), 1e-300))[None, :]
        if bound is not None and (x > bound).any():
            x = np.minimum(x, bound)
            continue
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
