"""What the printed text promises of each interval is what the interval does (docs/intervals.md#what-each-interval-promises).

The mid-p interval covers a given accuracy less often than its level for some accuracies, so no
sentence may promise it for any one model; the per-model promise belongs to Clopper-Pearson, and
where a text sends a user to a random design for a model unlike the sources it names that option.
Coverage here is summed from scipy's hypergeometric pmf, independently of mdad's own table.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import hypergeom
from support.paths import ROOT

from mdad.intervals.finite import count_interval
from mdad.intervals.random_designs import exact_bounds
from mdad.micro.trust import OFF_POPULATION_MARK


def exact_coverage(N: int, k: int, level: float, mid_p: bool) -> np.ndarray:
    """P_M(interval covers M) for every pool count M, summed over the counts drawn."""
    x = np.arange(k + 1)
    low, high = count_interval(N, k, x, level=level, mid_p=mid_p)
    pmf = hypergeom.pmf(x[None, :], N, np.arange(N + 1)[:, None], k)
    return (pmf * ((low[None, :] <= np.arange(N + 1)[:, None]) & (np.arange(N + 1)[:, None] <= high[None, :]))).sum(axis=1)


def test_mid_p_holds_on_average_and_clopper_pearson_for_every_accuracy():
    mid, cp = exact_coverage(448, 25, 0.9, True), exact_coverage(448, 25, 0.9, False)
    assert mid.mean() >= 0.9 and mid.min() < 0.86 and (mid < 0.9).mean() > 0.2
    assert cp.min() >= 0.9


def test_the_texts_promise_each_interval_what_it_holds():
    scores = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]])
    design = np.array([40]), np.array([4]), np.zeros(4, np.int64)
    mid_how = exact_bounds(*design, scores, level=0.9)[2]
    cp_how = exact_bounds(*design, scores, level=0.9, mid_p=False)[2]
    assert "on average over accuracies" in mid_how and "--clopper-pearson" in mid_how  # the per-model option offered
    assert mid_how.split("every accuracy")[0].endswith("at least nominal coverage for ")
    assert "at least nominal coverage for every accuracy" in cp_how
    # the off-population mark sends users to a random design: it names the per-model option, and no text says
    # that the default interval holds for any model
    assert "--clopper-pearson" in OFF_POPULATION_MARK and "every accuracy" in OFF_POPULATION_MARK
    for text in (OFF_POPULATION_MARK, *(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])):
        flat = " ".join(text.split()).lower()
        assert "holds for any model" not in flat and "valid for every model" not in flat
