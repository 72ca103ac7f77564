"""``disco``: the k items on which the source models disagree most; the nearest source models' accuracy.

DISCO (Rubinstein, Raible, Gubri and Oh, ICLR 2026, arXiv 2510.07959) keeps the top-k items by
the source models' disagreement and predicts from a model's "signature", its raw outputs on them.

Disagreement is the Jensen-Shannon divergence of the source models' distributions over the two
outcomes "gold option" and "another option": with p_m the gold-option probability of source m
(its 0/1 score on data without option probabilities), JSD = H(mean p) - mean H(p_m), H the
binary entropy in nats. On 0/1 scores it is the entropy of the share of sources that are right,
largest when half of them are. mdad holds only the gold option's probability, not the whole
option distribution the paper uses (docs/protocol.md#disco says why JSD and not the paper's
predictive diversity score). A missing cell is left out of the means.

The divergence is rounded (``mdad.exact.snap``) before ranking; equal divergences, common on 0/1
scores where it depends only on how many sources are right, are ordered by a random permutation
of the pool drawn once per run, so that ties do not favour the first subtasks of the pool. The
estimate is the ``knn`` estimator (mdad.estimators.neighbours) fitted on the chosen items.
"""

from __future__ import annotations

import numpy as np

from mdad.estimators.neighbours import neighbours_on
from mdad.exact import snap
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView


def binary_entropy(p: np.ndarray) -> np.ndarray:
    """-p log p - (1 - p) log(1 - p) in nats (0 at 0 and 1); NaN stays NaN."""
    p = np.asarray(p, dtype=np.float64)
    inside = np.clip(p, 1e-300, 1.0)
    outside = np.clip(1.0 - p, 1e-300, 1.0)
    return -(p * np.log(inside) + (1.0 - p) * np.log(outside))


def disagreement(gold_prob: np.ndarray) -> np.ndarray:
    """Per item, the Jensen-Shannon divergence of the source models' gold / other distributions (``gold_prob``:
    sources x items; missing cells left out, 0 for an item nobody answered)."""
    values = np.asarray(gold_prob, dtype=np.float64)
    answered = ~np.isnan(values)
    counts = np.maximum(answered.sum(axis=0), 1)
    present = np.where(answered, values, 0.0)
    mean = present.sum(axis=0) / counts
    own = np.where(answered, binary_entropy(present), 0.0).sum(axis=0) / counts
    return np.where(answered.any(axis=0), np.maximum(binary_entropy(mean) - own, 0.0), 0.0)


@METHODS.register(order=85)
class Disco(SelectionMethod):
    name = "disco"
    description = (
        "The k items of largest Jensen-Shannon divergence among the source models' gold-option probabilities "
        "(0/1 answers without them); mean pool accuracy of the nearest source models by their answers on the items."
    )
    default = False  # run when named, as the other regression baselines: the default run stays the paper's
    fitted_estimate = True  # the nearest sources' mean accuracy by their scores on the chosen items (mdad.micro.trust)

    def prepare(self, view: SourceView, rng: np.random.Generator) -> np.ndarray:
        """The pool by divergence, largest first, equal divergences in a random order: shared by all sizes."""
        tiebreak = rng.permutation(view.n_items)
        return np.lexsort((tiebreak, -snap(disagreement(view.gold_prob))))

    def choose(self, view: SourceView, k: int, rng: np.random.Generator, order: np.ndarray) -> MicroBenchmark:
        return neighbours_on(view, np.sort(order[:k]))
