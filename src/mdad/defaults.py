"""The defaults every part of mdad shares, and the checks of the values that replace them.

One home for each: the agreement rate that defines MDAD, the width of the bins of accuracy
difference, the confidence of every interval (docs/protocol.md#mdad).
"""

from __future__ import annotations

import numbers

from mdad.errors import MdadError

DEFAULT_THRESHOLD = 0.8  # agreement rate that defines MDAD
DEFAULT_BIN_WIDTH = 0.5  # points of accuracy difference per bin of the agreement curve
DEFAULT_CONFIDENCE = 0.95  # of the bootstrap intervals of MDAD
DEFAULT_BOOTSTRAP = 1000  # resamples behind those intervals


def check_threshold(threshold: float) -> float:
    """The agreement threshold, or an error when it is not strictly between 0 and 1."""
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 < threshold < 1:
        raise MdadError(f"The agreement threshold must lie strictly between 0 and 1, got {threshold!r}.")
    return float(threshold)
