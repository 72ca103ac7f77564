"""``mrmr-krr``: items by minimum redundancy, maximum relevance; kernel ridge regression to the pool accuracy.

The method of Bowyer, Locatelli and Cao (arXiv 2605.25773). Items are chosen greedily, as the
reference's MID scheme: the first is the item most relevant to the source models' pool accuracy;
each next one maximises its relevance minus its mean redundancy with the items already chosen.
The estimate is the kernel ridge regression of ``krr`` (mdad.estimators.krr) fitted on the
source models' scores on the chosen items.

Relevance and redundancy are Gaussian mutual information, -1/2 log(1 - r^2), of the Pearson
correlation r between an item's source scores and the pool accuracy (relevance) or another
item's scores (redundancy): one estimate in nats for 0/1 and continuous scores, where the
reference uses Ross's nearest-neighbour estimator, a discrete count or a corrected KSG estimator
by the kind of data (docs/protocol.md#mrmr-krr says why). The correlations are exact: the
standardised scores are rounded to integers (``mdad.exact.product_bits``) whose products sum
exactly whatever the BLAS kernel, and r^2 is capped at 1 - 2**-20. The scores are rounded
(``mdad.exact.snap``) before the largest is taken, and ties go to the lower pool position. Items
that every source answers alike carry no information about the sources: they come after every
item that varies. A missing cell counts with its item's mean over the sources.

The greedy order is nested (the items for size k are the first k of it), so one order serves
every size of a run: it is extended on demand to the largest size asked.
"""

from __future__ import annotations

import numpy as np

from mdad.estimators.krr import kernel_ridge_on
from mdad.exact import product_bits, snap
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.ridge import filled, item_means, pool_accuracy

R2_CAP = 1.0 - 2.0**-20  # identical items: information capped at about 6.9 nats instead of infinite


def standardised_integers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Each column of ``values`` centred and scaled to unit norm, as integers of ``product_bits`` bits
    (float64), whether it is constant, and the bits: the sum of products of two columns is exact."""
    values = np.asarray(values, dtype=np.float64)
    centred = values - values.mean(axis=0)
    norms = np.sqrt((centred * centred).sum(axis=0))
    constant = np.ptp(values, axis=0) == 0 if values.size else np.zeros(values.shape[1], dtype=bool)
    z = centred / np.where(constant, 1.0, norms)
    z[:, constant] = 0.0
    bits = product_bits(values.shape[0])
    return np.rint(np.ldexp(z, bits)), constant, bits


def gaussian_information(products: np.ndarray, bits: int) -> np.ndarray:
    """-1/2 log(1 - r^2) for correlations given as exact integer products in units of 4**-bits."""
    r = np.ldexp(products, -2 * bits)
    return -0.5 * np.log1p(-np.minimum(r * r, R2_CAP))


class GreedyOrder:
    """The mRMR order of one run's pool, extended on demand: ``items(k)`` is its first k."""

    def __init__(self, scores: np.ndarray) -> None:
        x = filled(scores, item_means(scores))
        self._q, self._constant, self._bits = standardised_integers(x)
        accuracy_q, _, _ = standardised_integers(pool_accuracy(scores)[:, None])
        self.relevance = gaussian_information(self._q.T @ accuracy_q[:, 0], self._bits)
        self._redundancy = np.zeros(x.shape[1])  # the sum of each item's information with the chosen ones
        self._taken = np.zeros(x.shape[1], dtype=bool)
        self.order: list[int] = []

    def _next(self) -> int:
        """The next item: largest rounded relevance minus mean redundancy, varying items first, lowest position of equals."""
        chosen = len(self.order)
        gain = snap(self.relevance - self._redundancy / chosen) if chosen else snap(self.relevance)
        varying_left = bool((~self._taken & ~self._constant).any())
        gain = np.where(self._taken | (self._constant & varying_left), -np.inf, gain)
        return int(np.argmax(gain))  # the first of the largest: the lowest pool position

    def items(self, k: int) -> np.ndarray:
        """The first k items of the order (sorted by pool position)."""
        while len(self.order) < k:
            pick = self._next()
            self.order.append(pick)
            self._taken[pick] = True
            self._redundancy += gaussian_information(self._q.T @ self._q[:, pick], self._bits)
        return np.sort(np.asarray(self.order[:k], dtype=np.int64))


@METHODS.register(order=84)
class MRMRKernelRidge(SelectionMethod):
    name = "mrmr-krr"
    description = (
        "Greedy minimum redundancy, maximum relevance (Gaussian mutual information of the source scores with the "
        "pool accuracy and with the chosen items); kernel ridge regression (polynomial kernel) to the pool accuracy."
    )
    default = False  # run when named, as the other regression baselines: the default run stays the paper's
    fitted_estimate = True  # a regression fitted to the sources' scores on the chosen items (mdad.micro.trust)

    def prepare(self, view: SourceView, rng: np.random.Generator) -> GreedyOrder:
        return GreedyOrder(view.scores)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared: GreedyOrder) -> MicroBenchmark:
        return kernel_ridge_on(view.scores, prepared.items(k))
