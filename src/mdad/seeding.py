"""One seed determines everything: independent generators keyed by what they are for.

The seed rule lives here: a whole number smaller than 2**64 in size, as numpy's generators take it
and as a micro.json records it; every command and every generator checks it with :func:`check_seed`.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np

from mdad.errors import MdadError

SEED_LIMIT = 2**64  # seeds are whole numbers below this in size


def check_seed(seed: object, what: str = "A seed") -> int:
    """The seed as an int, or one error sentence (about ``what``) when it is not a whole number smaller than 2**64 in size."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or abs(int(seed)) >= SEED_LIMIT:
        text = repr(seed)
        shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text):,} characters)"
        raise MdadError(f"{what} must be a whole number smaller than 2**64 in size, not {shown}.")
    return int(seed)


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
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([_key(check_seed(seed)), *map(_key, purpose)])))
