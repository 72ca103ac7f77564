"""A selection paired with another estimator: any method's items, estimated by any registered estimator.

``NAME@estimator=EST`` (mdad.methods.names) chooses the items as method ``NAME`` does (its
``prepare`` and ``choose``, from the same generators, so the items are the method's own) and
then fits estimator ``EST`` (mdad.estimators.base.ESTIMATORS) on the source models' answers on
those items, in place of the method's own estimator. No class is written per pair: a new method
pairs with every estimator, and a new estimator with every method (docs/protocol.md#paired-estimators).

The pair is learned from the sources whatever the selection, so it has no random design and its
intervals are calibrated on the held-out assessment, as for every learned method. An adaptive
test chooses items per target from its answers, so it cannot be paired.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mdad.errors import MdadError
from mdad.estimators.base import Estimator
from mdad.methods.base import MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.names import MethodName


def stricter(first: str, second: str) -> str:
    """The data two parts need together: "either" gives way to the other's need; two different needs are refused."""
    if first == "either" or first == second:
        return second
    if second == "either":
        return first
    raise MdadError(f"One part needs {first} scores and the other {second}; they cannot be paired.")


class Paired(SelectionMethod):
    """Method ``base``'s items with ``estimator`` fitted on them (see the module docstring)."""

    interval = "calibrated"
    design = None
    fitted_estimate = True  # every estimator is fitted to the sources' scores on the chosen items (mdad.micro.trust)

    def __init__(self, base: SelectionMethod, estimator: Estimator) -> None:
        if base.adaptive:
            raise MdadError(f"{base.name} chooses items per model from its answers, so it cannot be paired with an estimator.")
        self.base = base
        self.estimator = estimator
        self.name = str(MethodName(base.name, estimator=estimator.name))
        self.description = f"{base.name}'s items; {estimator.name} estimator: {estimator.description}"
        self.preparation = base.preparation
        self.scores = stricter(base.scores, estimator.scores)  # type: ignore[assignment]
        self.bounded = estimator.bounded

    def prepare(self, view: SourceView, rng: np.random.Generator) -> Any:
        return self.base.prepare(view, rng)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared: Any) -> MicroBenchmark:
        items = np.asarray(self.base.choose(view, k, rng, prepared).items, dtype=np.int64)
        return self.estimator.fit(view, items, rng)
