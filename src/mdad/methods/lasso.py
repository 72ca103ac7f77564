"""Lasso: the k items an L1 regression of the pool accuracy on every item's scores keeps.

Once per run, the lasso path (scikit-learn's ``lasso_path``, warm-started from one penalty to
the next) of the source models' pool accuracy on their centred scores on every pool item (the
intercept unpenalised), over PATH_PENALTIES penalties from the smallest that keeps no item down to
PATH_EPS of it. For size k the items are those with a nonzero coefficient at the smallest
penalty of the path that keeps at most k; when that is fewer than k, the next items to enter
the path fill the set, and after them (when the path never keeps k, as when k exceeds the
number of source models) the items whose scores correlate most with the pool accuracy. The
estimate is a ridge regression (``mdad.methods.ridge``) on the chosen items, refitted on the
source models: the lasso chooses, the ridge estimates.

Items whose source scores are identical (common with few source models) are one column of the
path, represented by the lowest pool position; the others are filled only after every item that
differs: a lasso would otherwise keep one of equal columns by rounding noise. The order of entry is
decided on the path's penalty index (an integer), then on the rounded absolute correlation with
the pool accuracy (``mdad.exact.snap``), then on the pool position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.exact import snap
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.ridge import filled, item_means, pool_accuracy, regression_on

PATH_PENALTIES = 100  # penalties on the path (scikit-learn's default)
PATH_EPS = 1e-3  # smallest penalty / largest (scikit-learn's default)


@dataclass(frozen=True, eq=False)
class LassoPath:
    """Per path penalty (largest first), how many items have a nonzero coefficient, and the
    pool items in the order they enter the path (then by correlation with the pool accuracy)."""

    active: np.ndarray  # items x penalties, bool
    counts: np.ndarray  # penalties
    entry_order: np.ndarray  # pool positions, every item once

    def items(self, k: int) -> np.ndarray:
        """The k items: those kept at the smallest penalty keeping at most k, filled in entry order."""
        within = np.flatnonzero(self.counts <= k)
        step = int(within.max()) if within.size else 0
        kept = np.flatnonzero(self.active[:, step])
        rest = self.entry_order[~np.isin(self.entry_order, kept)]
        return np.sort(np.concatenate([kept, rest[: k - len(kept)]]))


def fit_path(scores: np.ndarray) -> LassoPath:
    """The lasso path of the pool accuracy on the source models' centred scores on every distinct item."""
    from sklearn.linear_model import lasso_path  # imported on use: listing the methods does not load scikit-learn

    x = filled(scores, item_means(scores))
    y = pool_accuracy(scores)
    xc, yc = x - x.mean(axis=0), y - y.mean()
    n_items = x.shape[1]
    _, first_of = np.unique(x, axis=1, return_index=True)  # the lowest pool position of every distinct column
    distinct = np.sort(first_of)
    correlation = np.abs(xc.T @ yc)
    top = float(correlation.max()) / len(y)  # the smallest penalty that keeps no item
    active = np.zeros((n_items, PATH_PENALTIES), dtype=bool)
    if top > 0:  # otherwise no item's scores move with the pool accuracy: nothing enters the path
        _, coefs, _ = lasso_path(xc[:, distinct], yc, alphas=np.geomspace(top, top * PATH_EPS, PATH_PENALTIES))
        active[distinct] = coefs != 0
    counts = active.sum(axis=0)
    first = np.where(active.any(axis=1), active.argmax(axis=1), PATH_PENALTIES)
    repeated = np.ones(n_items, dtype=bool)
    repeated[distinct] = False
    norms = np.sqrt((xc * xc).sum(axis=0))
    strength = snap(correlation / np.where(norms > 0, norms, 1.0))
    entry = np.lexsort((np.arange(n_items), -strength, first, repeated))
    return LassoPath(active=active, counts=counts, entry_order=entry)


@METHODS.register(order=82)
class Lasso(SelectionMethod):
    name = "lasso"
    description = "The k items an L1 regression of the pool accuracy on all item scores keeps; ridge refit on them."
    default = False

    def prepare(self, view: SourceView, rng: np.random.Generator) -> LassoPath:
        return fit_path(view.scores)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared: LassoPath) -> MicroBenchmark:
        return regression_on(view.scores, prepared.items(k))
