"""Any two models compared on a micro-benchmark (SelectedMicroBenchmark.compare, mdad estimate --compare):
the exact mid-p McNemar test against direct enumeration of the binomial, and the order probability
of any pair against the neighbour code."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

import mdad
from mdad.data import ResponseMatrix
from mdad.errors import MdadError
from mdad.micro.comparison import format_probability, mcnemar_mid_p


def _mid_p_by_enumeration(b: int, c: int) -> float:
    """Two-sided mid-p (twice the one-sided one, at most 1; Fagerland, Lydersen and Laake 2013): under
    Binomial(b + c, 1/2), the outcomes below the smaller count plus half the smaller count's own
    probability, enumerated outcome by outcome in exact fractions."""
    n, low = b + c, min(b, c)
    pmf = [Fraction(comb(n, i), 2**n) for i in range(n + 1)]
    return float(min(Fraction(1), 2 * (sum(pmf[:low]) + pmf[low] / 2)))


def test_the_mid_p_value_is_below_the_exact_one_and_one_at_an_even_split():
    assert mcnemar_mid_p(3, 3) == 1.0
    assert mcnemar_mid_p(0, 6) == pytest.approx(2 * 0.5 * 0.5**6)  # half the exact test's 2 * 0.5**6


@pytest.mark.parametrize("b, c", [(b, c) for b in range(9) for c in range(9) if b + c])
def test_mcnemar_mid_p_equals_direct_enumeration(b, c):
    assert mcnemar_mid_p(b, c) == pytest.approx(_mid_p_by_enumeration(b, c), abs=1e-12)
    assert mcnemar_mid_p(b, c) == mcnemar_mid_p(c, b)


def test_no_discordant_item_has_no_p_value():
    assert np.isnan(mcnemar_mid_p(0, 0))


def _matrix(scores: np.ndarray) -> ResponseMatrix:
    return ResponseMatrix(
        scores=scores.astype(float),
        models=[f"m{i}" for i in range(len(scores))],
        items=[f"t/{j}" for j in range(scores.shape[1])],
        subtasks=["t"] * scores.shape[1],
        source="small",
    )


def test_compare_counts_the_items_only_one_model_got_right():
    matrix = mdad.simulate(seed=2, n_models=12, n_items=60)
    micro = mdad.select(matrix, "random", 20, seed=0)
    scores = micro.item_scores(matrix)[0]
    result = micro.compare(matrix, matrix.models[0], matrix.models[5])
    assert result.first_only == int(((scores[0] == 1) & (scores[5] == 0)).sum())
    assert result.second_only == int(((scores[0] == 0) & (scores[5] == 1)).sum())
    assert result.p_value == mcnemar_mid_p(result.first_only, result.second_only)
    estimates = micro.estimate(matrix)
    assert result.gap == pytest.approx(100 * (estimates.iloc[0] - estimates.iloc[5]))
    frame = result.to_frame()
    assert list(frame["first"]) == [matrix.models[0]] and frame["p_value"].iloc[0] == result.p_value


@pytest.mark.parametrize("method", ["random", "random-stratified-proportional"])
def test_the_order_probability_of_neighbours_is_the_neighbour_codes(method):
    matrix = mdad.simulate(seed=4, n_models=16, n_items=120, n_subtasks=3)
    micro = mdad.select(matrix, method, 30, seed=1)
    orders = micro.order_probabilities(matrix)
    for first, second, probability in zip(orders.first, orders.second, orders.probability, strict=True):
        result = micro.compare(matrix, second, first)  # asked in either order: the same pair
        if result.tied:
            continue
        assert result.order_probability == pytest.approx(probability, abs=1e-12)


def test_a_non_neighbouring_pair_gets_its_own_order_probability():
    matrix = mdad.simulate(seed=4, n_models=16, n_items=120)
    micro = mdad.select(matrix, "random", 30, seed=1)
    orders = micro.order_probabilities(matrix)
    top, bottom = orders.first[0], orders.second[-1]
    far = micro.compare(matrix, top, bottom)
    assert far.gap > 0 and far.order_probability > orders.probability[0]
    # the same pair made neighbours (the models between them left out) gets the same probability
    keep = [i for i, model in enumerate(matrix.models) if model in (top, bottom)]
    assert micro.order_probabilities(matrix.take(models=keep)).probability[0] == pytest.approx(far.order_probability)


def test_a_truly_tied_pair_is_tied_even_on_the_whole_pool():
    rng = np.random.default_rng(0)
    scores = (rng.random((8, 30)) < 0.5).astype(float)
    scores[1] = scores[0]
    matrix = _matrix(scores)
    micro = mdad.select(matrix, "random", 30, seed=0)  # k = N
    result = micro.compare(matrix, "m0", "m1")
    assert result.tied and result.gap == 0 and np.isnan(result.p_value) and np.isnan(result.order_probability)
    assert "tied" in result.describe()


def test_unknown_models_are_named_with_the_models_present():
    matrix = mdad.simulate(seed=2, n_models=5, n_items=40)
    micro = mdad.select(matrix, "random", 10, seed=0)
    with pytest.raises(MdadError) as caught:
        micro.compare(matrix, "nope", matrix.models[0])
    assert "'nope'" in str(caught.value) and all(str(m) in str(caught.value) for m in matrix.models)


def test_probabilities_near_certainty_are_not_printed_as_certain():
    assert format_probability(0.9996) == "> 0.99" and format_probability(0.0004) == "< 0.01"
    assert format_probability(0.5) == "0.50" and format_probability(float("nan")) == ""


def test_the_micro_benchmark_has_a_short_repr():
    micro = mdad.select(mdad.simulate(seed=0, n_models=40, n_items=2000), "adaptive", 20, seed=0)
    assert len(repr(micro)) < 200 and "adaptive" in repr(micro)


@pytest.mark.parametrize("method", ["random", "random-stratified-proportional"])
def test_a_pair_tied_on_the_full_benchmark_with_discordant_items_is_tied_when_every_item_is_drawn(method):
    """Equal accuracy, different answers (4 items only m0 right, 4 only m1): with the whole pool drawn the full
    benchmark ties them, so no order probability (it would be 0 for either order) and the sentence says 'tied'."""
    rng = np.random.default_rng(1)
    scores = (rng.random((6, 30)) < 0.5).astype(float)
    scores[1] = scores[0]
    ones, zeros = np.flatnonzero(scores[0] == 1)[:4], np.flatnonzero(scores[0] == 0)[:4]
    scores[1, ones], scores[1, zeros] = 0.0, 1.0
    matrix = _matrix(scores)
    whole = mdad.select(matrix, method, 30, seed=0)
    result = whole.compare(matrix, "m0", "m1")
    assert (result.first_only, result.second_only) == (4, 4) and result.gap == 0
    assert result.tied and np.isnan(result.order_probability) and result.p_value == 1.0
    assert "tied on the full benchmark" in result.describe() and "P(" not in result.describe()
    assert bool(result.to_frame()["tied"].iloc[0])
    # drawn from part of the pool the same counts do not tie the full benchmark: an order probability is given
    part = mdad.select(matrix, "random", 20, seed=8).compare(matrix, "m0", "m1")
    assert (part.first_only, part.second_only) == (4, 4)
    assert not part.tied and 0 < part.order_probability < 1 and "P(" in part.describe()
