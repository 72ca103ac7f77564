"""Lasso: the k items an L1 regression of the pool accuracy on every item's scores keeps.

Once per run, the lasso path (scikit-learn's ``lasso_path``, warm-started from one penalty to
the next) of the source models' pool accuracy on their centred scores on every pool item (the
intercept unpenalised), over PATH_PENALTIES penalties from the smallest that keeps no item down to
PATH_EPS of it. For size k the items are those with a nonzero coefficient at the last penalty
before the path first keeps more than k (its first passage through k; the last penalty when it
never does); when that is fewer than k, the next items to enter the path fill the set, and after
them (when the path never keeps k, as when k exceeds the number of source models) the items whose
scores correlate most with the pool accuracy. The estimate is a ridge regression
(``mdad.methods.ridge``) on the chosen items, refitted on the source models: the lasso chooses,
the ridge estimates.

The path is followed only as far as the sizes asked need: PATH_CHUNK penalties at a time, each
chunk continuing from the last coefficients (which is bit-identical to one call over the whole
grid), until it keeps more items than the largest size asked (docs/deviations.md#lasso-path).

Items whose source scores are identical (common with few source models) are one column of the
path, represented by the lowest pool position; the others are filled only after every item that
differs: a lasso would otherwise keep one of equal columns by rounding noise. The order of entry is
decided on the path's penalty index (an integer), then on the rounded absolute correlation with
the pool accuracy (``mdad.exact.snap``), then on the pool position.
"""

from __future__ import annotations

import numpy as np

from mdad.exact import snap
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView
from mdad.methods.ridge import filled, item_means, pool_accuracy, regression_on

PATH_PENALTIES = 100  # penalties on the path (scikit-learn's default)
PATH_EPS = 1e-3  # smallest penalty / largest (scikit-learn's default)
# penalties computed at a time while the path is followed: one, so none beyond the first that keeps too many
# (docs/benchmarks.md#earlier-measurements)
PATH_CHUNK = 1


class LassoPath:
    """The lasso path of one run, computed lazily: per penalty followed so far (largest first),
    which items have a nonzero coefficient; ``items(k)`` extends it until it keeps more than k."""

    def __init__(self, xc: np.ndarray, yc: np.ndarray, alphas: np.ndarray, distinct: np.ndarray, strength: np.ndarray) -> None:
        n_items = len(strength)
        self._x = np.asfortranarray(xc[:, distinct])  # the columns of the path, laid out as coordinate descent reads them
        self._y = np.ascontiguousarray(yc)
        self._alphas = alphas
        self._distinct = distinct
        self._coef = np.zeros(len(distinct), order="F")
        self._kept: list[np.ndarray] = []  # per penalty followed, the pool positions with a nonzero coefficient
        self._first = np.full(n_items, len(alphas))  # the penalty at which each item entered (len(alphas): not yet)
        repeated = np.ones(n_items, dtype=bool)
        repeated[distinct] = False
        self._repeated = repeated
        self._strength = strength

    @property
    def followed(self) -> int:
        """How many penalties of the path have been computed."""
        return len(self._kept)

    @property
    def counts(self) -> np.ndarray:
        """Per penalty followed, how many items have a nonzero coefficient."""
        return np.array([len(kept) for kept in self._kept], dtype=np.int64)

    def _extend(self) -> None:
        """Compute the next PATH_CHUNK penalties, starting from the last coefficients."""
        from sklearn.linear_model import lasso_path  # imported on use: listing the methods does not load scikit-learn

        alphas = self._alphas[self.followed : self.followed + PATH_CHUNK]
        _, coefs, _ = lasso_path(self._x, self._y, alphas=alphas, coef_init=self._coef, precompute=False, check_input=False)
        self._coef = np.asfortranarray(coefs[:, -1])
        for column in coefs.T:
            kept = self._distinct[column != 0]
            entering = kept[self._first[kept] == len(self._alphas)]
            self._first[entering] = self.followed
            self._kept.append(kept)

    def _passage(self, k: int) -> int:
        """The index of the last penalty before the path first keeps more than k items, following it that far."""
        step = 0
        while True:
            while step < self.followed:
                if len(self._kept[step]) > k:
                    return max(step - 1, 0)
                step += 1
            if step >= len(self._alphas):
                return max(step - 1, 0)
            self._extend()

    def entry_order(self) -> np.ndarray:
        """The pool items in the order they enter the path followed so far (an item not yet entered
        counts as entering after it), then by rounded correlation with the pool accuracy, then position."""
        return np.lexsort((np.arange(len(self._first)), -self._strength, self._first, self._repeated))

    def items(self, k: int) -> np.ndarray:
        """The k items: those kept at the path's first passage through k, filled in entry order.

        The fill depends only on the penalties up to the first that keeps more than k (index p + 1
        after the passage p): that penalty keeps more than k items, so more than k minus the kept
        ones entered by it without being kept at p, and they all precede in entry order every item
        entering later; penalties followed beyond it never change the result."""
        step = self._passage(k)
        # an empty path (no item moves with the pool accuracy) keeps nothing
        kept = self._kept[step] if self.followed else np.zeros(0, dtype=np.intp)
        order = self.entry_order()
        rest = order[~np.isin(order, kept)]
        return np.sort(np.concatenate([kept, rest[: k - len(kept)]]))


def fit_path(scores: np.ndarray) -> LassoPath:
    """The lasso path (followed on demand) of the pool accuracy on the source models' centred scores on every distinct item."""
    x = filled(scores, item_means(scores))
    y = pool_accuracy(scores)
    xc, yc = x - x.mean(axis=0), y - y.mean()
    _, first_of = np.unique(x, axis=1, return_index=True)  # the lowest pool position of every distinct column
    distinct = np.sort(first_of)
    correlation = np.abs(xc.T @ yc)
    top = float(correlation.max()) / len(y)  # the smallest penalty that keeps no item
    # when top is 0 no item's scores move with the pool accuracy: the path is empty and nothing enters it
    alphas = np.geomspace(top, top * PATH_EPS, PATH_PENALTIES) if top > 0 else np.zeros(0)
    norms = np.sqrt((xc * xc).sum(axis=0))
    strength = snap(correlation / np.where(norms > 0, norms, 1.0))
    return LassoPath(xc, yc, alphas, distinct, strength)


@METHODS.register(order=82)
class Lasso(SelectionMethod):
    name = "lasso"
    description = "The k items an L1 regression of the pool accuracy on all item scores keeps; ridge refit on them."
    default = False
    fitted_estimate = True  # a regression fitted to the sources' scores on the chosen items (mdad.micro.trust)

    def prepare(self, view: SourceView, rng: np.random.Generator) -> LassoPath:
        return fit_path(view.scores)

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared: LassoPath) -> MicroBenchmark:
        return regression_on(view.scores, prepared.items(k))
