"""Bags of coloured things, what the probability families draw from, and how their working starts."""

from __future__ import annotations

import numpy as np

from synth.generators import expr as E
from synth.generators._data import reduce_steps
from synth.generators.base import Derivation

COLOURS = ("red", "blue", "green", "yellow", "white", "black", "purple")
# (container, things in it)
BAGS = (("bag", "counters"), ("jar", "marbles"), ("box", "pencils"), ("tin", "sweets"), ("drawer", "socks"),
         ("basket", "balls"), ("pot", "beads"))


def bag(rng: np.random.Generator, n_colours: int, low: int, high: int) -> tuple[list[str], list[int]]:
    picks = rng.permutation(len(COLOURS))[:n_colours]
    return [COLOURS[int(i)] for i in picks], [int(rng.integers(low, high + 1)) for _ in range(n_colours)]


def listing(colours: list[str], counts: list[int]) -> str:
    parts = [f"{n} {c}" for c, n in zip(colours, counts)]
    return ", ".join(parts[:-1]) + f" and {parts[-1]}"


def probability_steps(d: Derivation, tree: E.Node) -> None:
    try:
        reduce_steps(d, tree, first_rule="probability_formula")
    except ZeroDivisionError:  # only after an injected slip makes a total 0: the working stops there
        return
