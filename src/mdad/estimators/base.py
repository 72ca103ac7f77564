"""The estimator protocol: how a target's answers on chosen items become an estimate of its pool accuracy.

An estimator is fitted on the source models once the items are chosen, so that any selection can
be paired with any estimator (``NAME@estimator=EST``, mdad.methods.names; docs/extending.md#an-estimator).
Each estimator lives in its own module of this package and registers itself with
``@ESTIMATORS.register()``; the registry imports every module of the package on its first
lookup, and installed packages add theirs through the ``mdad.estimators`` entry points.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from mdad.registry import Registry

if TYPE_CHECKING:
    from mdad.methods.base import MicroBenchmark, ScoresNeeded, SourceView


class Estimator(ABC):
    """Fits the micro-benchmark's estimator on the source models' answers on the chosen items.

    ``scores`` says what data it needs ("binary", "option-probabilities" or "either", as a
    selection method's), and ``bounded`` whether its estimates lie in [0, 1].
    """

    name: ClassVar[str]
    description: ClassVar[str]
    scores: ClassVar[ScoresNeeded] = "either"
    bounded: ClassVar[bool] = True

    @abstractmethod
    def fit(self, view: SourceView, items: np.ndarray, rng: np.random.Generator) -> MicroBenchmark:
        """The micro-benchmark of ``items`` (pool positions) whose ``estimate`` predicts a target's pool
        accuracy, fitted on the source models of ``view``; randomness only from ``rng``."""


ESTIMATORS: Registry[type[Estimator]] = Registry("estimator", package="mdad.estimators", group="mdad.estimators")
"""Every estimator class by name; a module of mdad.estimators registers its classes with
``@ESTIMATORS.register()`` (docs/extending.md#an-estimator)."""
