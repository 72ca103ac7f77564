"""The meta-evaluation metrics besides MDAD: what one is, and the registry of them (docs/extending.md#a-metric).

Every metric registered in ``METRICS`` becomes a summary column, a column of the printed and
CSV tables, a panel of the report's figure and a number of ``mdad.assess``'s ``Assessment``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.registry import Registry, capital, foreign_failure


@dataclass(frozen=True, eq=False)
class ViewData:
    """What a metric of one view is computed from: runs x targets estimates and truths, and their
    runs x pairs differences (computed once for every metric)."""

    estimates: np.ndarray
    truth: np.ndarray
    estimate_differences: np.ndarray
    truth_differences: np.ndarray


@dataclass(frozen=True)
class Metric:
    """One number per cell and view besides MDAD: how it is computed and how it is shown.

    ``key`` is the summary column; ``label`` the table header; ``scale`` turns the stored
    value into the shown one (100: accuracy units to points); ``unit`` follows the label;
    ``digits`` rounds the shown value; ``better`` is "lower" or "higher" (figure axis label).
    """

    key: str
    label: str
    description: str
    compute: Callable[[ViewData], float]
    scale: float = 1.0
    unit: str = ""
    digits: int = 3
    better: str = "higher"

    @property
    def name(self) -> str:
        """The registry name: the summary column."""
        return self.key

    def column(self, view: str) -> str:
        """The column of the wide table, e.g. 'error seen (pts)'."""
        return f"{self.label} {view}" + (f" ({self.unit})" if self.unit else "")

    def shown(self, values):
        return np.round(self.scale * values, self.digits)

    def value(self, data: ViewData) -> float:
        """``compute(data)`` as a float, its contract checked: a metric that raises or returns anything but one
        number (a string, an array) is one error sentence naming it (and its plug-in), not a wrong column."""
        try:
            value = self.compute(data)
        except (MdadError, MemoryError):
            raise
        except Exception as exc:  # an extension's code: one sentence naming it
            raise foreign_failure(exc, METRICS.describe(self, self.key), "to compute its value") from None
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            shown = f"{type(value).__name__} {value!r}" if len(repr(value)) <= 40 else type(value).__name__
            raise MdadError(f"{capital(METRICS.describe(self, self.key))} returned {shown}, not a number.")
        return float(value)


def _not_a_metric(obj: object) -> str | None:
    """What keeps ``obj`` from being a metric (None: nothing), for a plug-in's entry point."""
    return None if isinstance(obj, Metric) else f"it names {type(obj).__name__} {obj!r}, not a mdad.metrics.base.Metric"


METRICS: Registry[Metric] = Registry("metric", package="mdad.metrics", group="mdad.metrics", problem=_not_a_metric)
"""Every metric by key; a module of mdad.metrics registers its own with ``METRICS.add(Metric(...))``."""
