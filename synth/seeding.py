"""Per-item, per-stage random generators derived from (run seed, item index, stage name)."""

from __future__ import annotations

import hashlib

import numpy as np


def stable_hash(text: str) -> int:
    """A 32-bit hash of ``text`` that is the same in every process (unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "little")


def item_seed(run_seed: int, index: int) -> int:
    """The seed of base problem ``index``; the item can be regenerated from it alone."""
    state = np.random.SeedSequence(run_seed, spawn_key=(index,)).generate_state(2, dtype=np.uint32)
    return int(state[0]) | (int(state[1] & 0x7FFFFFFF) << 32)


def stage_rng(seed: int, stage: str, *keys: int) -> np.random.Generator:
    """An independent generator for one stage of one item.

    Changing how many numbers one stage draws never shifts another stage's stream, because
    each stage's stream is keyed by its name rather than drawn from a shared generator.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stable_hash(stage), *keys)))
