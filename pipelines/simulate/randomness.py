"""Counter-based randomness: uniform(key, counter) in [0, 1), vectorized and platform independent,
so an offer's draw at an hour does not depend on other offers, the start or the chunking."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

U64 = np.uint64


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer over uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + U64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> U64(30))) * U64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> U64(27))) * U64(0x94D049BB133111EB)
        return x ^ (x >> U64(31))


def uniform(key, counter) -> np.ndarray:
    """A uniform [0, 1) draw for each (key, counter) pair, broadcast like numpy."""
    k = np.asarray(key, dtype=np.uint64)
    c = np.asarray(counter, dtype=np.int64).view(np.uint64)
    return (mix(k ^ mix(c)) >> U64(11)).astype(np.float64) * 2.0 ** -53


def offer_keys(offer_ids: Iterable[str], seed: int) -> np.ndarray:
    return np.array([int.from_bytes(hashlib.sha256(f"{seed}|{o}".encode()).digest()[:8], "little")
                     for o in offer_ids], dtype=np.uint64)


# Salts: independent streams per purpose.
S_KNOT, S_PHASE, S_LEVEL, S_ABLOCK, S_APHASE, S_AVAIL, S_OFFSET, S_CHURN = (
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88)
LEVEL_WINDOW = 4   # the noise level is a moving average of this many knot draws: a slow walk
