"""One seed determines everything: independent generators keyed by what they are for."""

from __future__ import annotations

import hashlib

import numpy as np


def _key(part: object) -> int:
    if isinstance(part, (int, np.integer)) and part >= 0:
        return int(part)
    digest = hashlib.sha256(str(part).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def rng_for(seed: int, *purpose: object) -> np.random.Generator:
    """A generator for (seed, purpose...), e.g. ``rng_for(0, "select", "random", k, run)``.

    The same key always gives the same stream, whatever the order or the worker in which
    work is done, so results do not depend on the number of workers.
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([_key(seed), *map(_key, purpose)])))
