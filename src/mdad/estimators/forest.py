"""``forest``: a random forest from a target's answers on the chosen items (its signature) to its pool accuracy.

DISCO's other predictor (Rubinstein et al., arXiv 2510.07959: scikit-learn's
``RandomForestRegressor`` with 100 trees). The signature is the one of ``knn``
(mdad.estimators.neighbours): gold-option probabilities when the data has them, scores otherwise,
a missing cell counted with its item's mean over the sources. The forest's settings (the least
number of source models in a leaf, the share of items each split considers; SETTINGS) are those
of least mean absolute out-of-bag error over the source models (each model predicted by the trees
that did not draw it: cross-validation that costs no extra fit); the errors are rounded
(``mdad.exact.snap``) before the least is taken, the earlier setting on a tie. The forest's seed
is drawn from the run's generator, and it is fitted in one thread, so the trees are the same on
every machine.

The trees are kept as arrays (children, split item, threshold, leaf value), so that a saved
micro-benchmark holds no pickled object; a target's estimate is the mean of its leaves' values,
found as scikit-learn does (the signature cast to float32, left when at most the threshold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.errors import MdadError
from mdad.estimators.base import ESTIMATORS, Estimator
from mdad.exact import snap
from mdad.methods.base import MicroBenchmark, SourceView
from mdad.methods.ridge import filled, item_means, pool_accuracy

TREES = 100  # the reference's best forest
SETTINGS = ((1, 1.0), (5, 1.0), (1, 1.0 / 3.0), (5, 1.0 / 3.0))  # (min_samples_leaf, max_features)
LEAF = -1  # scikit-learn's mark of a leaf's missing children


@dataclass(frozen=True, kw_only=True, eq=False)
class ForestEstimate(MicroBenchmark):
    """Estimate = the mean over trees of the value of the leaf the target's signature reaches.

    Every tree's nodes are stored one tree after the other; ``roots`` is where each tree starts,
    ``left`` and ``right`` the children's positions (-1 at a leaf), ``feature`` the item a node
    splits on and ``threshold`` where, ``value`` a leaf's mean pool accuracy."""

    roots: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray
    fill: np.ndarray

    kind = "random-forest"

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        values = gold_prob if (self.uses_gold_prob and gold_prob is not None) else scores
        x = filled(np.atleast_2d(values), np.asarray(self.fill, dtype=np.float64)).astype(np.float32).astype(np.float64)
        left, right = np.asarray(self.left, dtype=np.int64), np.asarray(self.right, dtype=np.int64)
        feature, threshold = np.asarray(self.feature, dtype=np.int64), np.asarray(self.threshold, dtype=np.float64)
        nodes = np.broadcast_to(np.asarray(self.roots, dtype=np.int64), (len(x), len(self.roots))).copy()
        rows = np.arange(len(x))[:, None]
        while True:
            inner = left[nodes] != LEAF
            if not inner.any():
                break
            goes_left = x[rows, np.where(inner, feature[nodes], 0)] <= threshold[nodes]
            nodes = np.where(inner, np.where(goes_left, left[nodes], right[nodes]), nodes)
        return np.clip(np.asarray(self.value, dtype=np.float64)[nodes].mean(axis=1), 0.0, 1.0)


def forest_arrays(forest) -> dict[str, np.ndarray]:
    """The fitted trees of a scikit-learn forest as the arrays of ``ForestEstimate``."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in ("left", "right", "feature", "threshold", "value")}
    roots, start = [], 0
    for tree in (t.tree_ for t in forest.estimators_):
        roots.append(start)
        leaf = tree.children_left == LEAF
        parts["left"].append(np.where(leaf, LEAF, tree.children_left + start))
        parts["right"].append(np.where(leaf, LEAF, tree.children_right + start))
        parts["feature"].append(np.where(leaf, 0, tree.feature))
        parts["threshold"].append(np.where(leaf, 0.0, tree.threshold))
        parts["value"].append(tree.value[:, 0, 0])
        start += tree.node_count
    return {"roots": np.asarray(roots, dtype=np.int64), **{name: np.concatenate(arrays) for name, arrays in parts.items()}}


def forest_on(view: SourceView, items: np.ndarray, rng: np.random.Generator) -> ForestEstimate:
    """The random-forest estimator of the pool accuracy from the source models' signatures on ``items``."""
    from sklearn.ensemble import RandomForestRegressor  # imported on use: listing the methods does not load scikit-learn

    items = np.asarray(items, dtype=np.int64)
    accuracy = pool_accuracy(view.scores)
    if len(accuracy) < 3:
        raise MdadError(f"A random forest on the source models needs at least 3 of them (some out of each tree's draw), got {len(accuracy)}.")
    raw = view.gold_prob if view.has_option_probs else view.scores
    fill = item_means(raw[:, items])
    signatures = filled(raw[:, items], fill)
    seed = int(rng.integers(2**31 - 1))
    errors, forests = [], []
    for leaf, share in SETTINGS:
        forest = RandomForestRegressor(
            n_estimators=TREES, min_samples_leaf=leaf, max_features=share, oob_score=True, random_state=seed, n_jobs=1
        ).fit(signatures, accuracy)
        predicted = np.asarray(forest.oob_prediction_, dtype=np.float64)
        drawn_everywhere = np.isnan(predicted)  # a model every tree drew: no out-of-bag prediction, left out
        errors.append(float(np.mean(np.abs(predicted[~drawn_everywhere] - accuracy[~drawn_everywhere]))) if (~drawn_everywhere).any() else np.inf)
        forests.append(forest)
    best = forests[int(np.argmin(snap(np.asarray(errors))))]  # the first of equals
    return ForestEstimate(
        items=items,
        weights=np.full(len(items), 1.0 / max(len(items), 1)),
        uses_gold_prob=bool(view.has_option_probs),
        fill=fill,
        **forest_arrays(best),
    )


@ESTIMATORS.register(order=40)
class ForestEstimator(Estimator):
    name = "forest"
    description = "a random forest (100 trees; leaf size and split share by out-of-bag error) from the answers on the items to the pool accuracy."

    def fit(self, view: SourceView, items: np.ndarray, rng: np.random.Generator) -> MicroBenchmark:
        return forest_on(view, items, rng)
