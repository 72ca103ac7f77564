"""The bin of accuracy difference a plan answers for, and how it is written."""

from __future__ import annotations

import numbers

import numpy as np

from mdad.defaults import DEFAULT_BIN_WIDTH
from mdad.errors import MdadError
from mdad.metrics.pairwise import bin_of

MAX_POINTS = 100.0  # accuracies lie in [0, 1], so two differ by at most 100 points


def bin_lower(detect: float) -> float:
    """Lower edge (points) of the bin of difference that holds ``detect``: 2.3 -> 2.0."""
    if isinstance(detect, bool) or not isinstance(detect, numbers.Real) or not 0 <= detect <= MAX_POINTS:
        raise MdadError(f"The difference to detect is an accuracy difference in points, from 0 to {MAX_POINTS:g}; got {detect!r}.")
    return float(bin_of(np.array([detect]), DEFAULT_BIN_WIDTH)[0]) * DEFAULT_BIN_WIDTH


def bin_label(lower: float) -> str:
    """The bin starting at ``lower`` as text: "2 to 2.5"."""
    return f"{lower:g} to {lower + DEFAULT_BIN_WIDTH:g}"
