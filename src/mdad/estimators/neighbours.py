"""``knn``: the pool accuracy of the source models whose answers on the chosen items are nearest the target's.

DISCO's prediction from a "model signature" (Rubinstein et al., arXiv 2510.07959): a model's
signature is its raw outputs on the chosen items, here its gold-option probabilities when the
data has option probabilities and its scores otherwise (the only outputs mdad holds); a missing
cell counts with its item's mean over the sources. The estimate is the mean pool accuracy of
the k source models whose signatures are nearest the target's in Euclidean distance (scikit-learn's
``KNeighborsRegressor`` with uniform weights), with k from NEIGHBOURS (at most the sources less
one) of least mean absolute leave-one-out error over the source models.

Neighbours are ordered by squared distance, rounded (``mdad.exact.snap``), then by source
position: on 0/1 signatures distances tie often, and scikit-learn leaves the order of tied
neighbours to its search algorithm. Leave-one-out errors are rounded before the least is taken,
ties going to the fewer neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.estimators.base import ESTIMATORS, Estimator
from mdad.exact import snap
from mdad.methods.base import MicroBenchmark, SourceView
from mdad.methods.ridge import filled, item_means, pool_accuracy

NEIGHBOURS = (1, 2, 3, 5, 8, 13, 21)
BLOCK_ELEMENTS = 2**22  # differences per block of the element-wise distances (32 MB)


def squared_distances(x: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance between every row of ``x`` and every row of ``train``, element-wise and
    rounded (``snap`` on a fixed scale: the number of coordinates), so that a row's values and their ties
    do not depend on the other rows or the machine."""
    x = np.asarray(x, dtype=np.float64)
    train = np.asarray(train, dtype=np.float64)
    out = np.empty((len(x), len(train)))
    rows = max(1, BLOCK_ELEMENTS // max(train.size, 1))
    for start in range(0, len(x), rows):
        block = x[start : start + rows, None, :] - train[None, :, :]
        out[start : start + rows] = (block * block).sum(axis=2)
    scale = float(max(train.shape[1], 1))
    return snap(np.append(out.ravel(), scale))[:-1].reshape(out.shape)


def neighbour_order(distances: np.ndarray) -> np.ndarray:
    """Per row, the columns from nearest to farthest, equal distances by column position."""
    columns = np.broadcast_to(np.arange(distances.shape[1]), distances.shape)
    return np.lexsort((columns, distances), axis=1)


def loo_errors(train: np.ndarray, accuracy: np.ndarray, neighbours: tuple[int, ...]) -> np.ndarray:
    """Mean absolute leave-one-out error of the k-nearest-neighbour mean for each k of ``neighbours``."""
    distances = squared_distances(train, train)
    np.fill_diagonal(distances, np.inf)  # a model is not its own neighbour
    order = neighbour_order(distances)[:, :-1]
    return np.array([np.mean(np.abs(accuracy[order[:, :k]].mean(axis=1) - accuracy)) for k in neighbours])


@dataclass(frozen=True, kw_only=True, eq=False)
class NeighboursEstimate(MicroBenchmark):
    """Estimate = the mean pool accuracy of the ``n_neighbors`` source models whose signatures (``train``) are
    nearest the target's; ``uses_gold_prob`` says whether a signature is gold-option probabilities or scores."""

    train: np.ndarray  # sources x k
    accuracy: np.ndarray  # sources
    n_neighbors: int
    fill: np.ndarray

    kind = "nearest-neighbours"

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        values = gold_prob if (self.uses_gold_prob and gold_prob is not None) else scores
        signatures = filled(np.atleast_2d(values), np.asarray(self.fill, dtype=np.float64))
        order = neighbour_order(squared_distances(signatures, self.train))[:, : int(self.n_neighbors)]
        return np.asarray(self.accuracy, dtype=np.float64)[order].mean(axis=1)


def neighbours_on(view: SourceView, items: np.ndarray) -> NeighboursEstimate:
    """The nearest-neighbour estimator of the pool accuracy from the source models' signatures on ``items``."""
    items = np.asarray(items, dtype=np.int64)
    accuracy = pool_accuracy(view.scores)
    if len(accuracy) < 2:
        raise MdadError(f"Nearest neighbours among the source models need at least 2 of them, got {len(accuracy)}.")
    raw = view.gold_prob if view.has_option_probs else view.scores
    fill = item_means(raw[:, items])
    train = filled(raw[:, items], fill)
    choices = tuple(k for k in NEIGHBOURS if k < len(accuracy)) or (1,)
    best = choices[int(np.argmin(snap(loo_errors(train, accuracy, choices))))]  # the first of equals: fewer neighbours
    return NeighboursEstimate(
        items=items,
        weights=np.full(len(items), 1.0 / max(len(items), 1)),
        uses_gold_prob=bool(view.has_option_probs),
        train=train,
        accuracy=accuracy,
        n_neighbors=int(best),
        fill=fill,
    )


@ESTIMATORS.register(order=30)
class NeighboursEstimator(Estimator):
    name = "knn"
    description = "mean pool accuracy of the nearest source models by their answers on the items (k by leave-one-out error)."

    def fit(self, view: SourceView, items: np.ndarray, rng: np.random.Generator) -> MicroBenchmark:
        return neighbours_on(view, items)
