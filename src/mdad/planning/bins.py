"""The bin of accuracy difference a plan answers for, and how it is written."""

from __future__ import annotations

import numpy as np

from mdad.defaults import DEFAULT_BIN_WIDTH
from mdad.errors import MdadError
from mdad.metrics.pairwise import bin_of


def bin_lower(detect: float) -> float:
    """Lower edge (points) of the bin of difference that holds ``detect``: 2.3 -> 2.0."""
    if detect < 0:
        raise MdadError(f"The difference to detect must be a non-negative number of points, got {detect}.")
    return float(bin_of(np.array([detect]), DEFAULT_BIN_WIDTH)[0]) * DEFAULT_BIN_WIDTH


def bin_label(lower: float) -> str:
    """The bin starting at ``lower`` as text: "2 to 2.5"."""
    return f"{lower:g} to {lower + DEFAULT_BIN_WIDTH:g}"
