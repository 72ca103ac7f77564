"""Vectorised metrics against per-pair loops, scipy, and a binomial bootstrap check."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau
from support.naive_metrics import naive_bootstrap_interval, naive_curve, naive_kendall_tau_b, naive_mdad, naive_pairs

from mdad.errors import MdadError
from mdad.metrics import (
    agreement_curve,
    bin_of,
    estimation_error,
    kendall_tau,
    mdad_from_curve,
    pairwise_agreement,
)


def coarse_arrays(rng, runs, targets, levels=20):
    """Estimates and truths on a coarse grid, so ties in both occur often."""
    est = rng.integers(0, levels, size=(runs, targets)) / levels
    truth = rng.integers(0, 3 * levels, size=(runs, targets)) / (3 * levels)
    return est, truth


@given(st.integers(0, 10_000), st.integers(2, 12), st.integers(1, 4))
@settings(max_examples=60, deadline=None)
def test_pairwise_agreement_matches_loop(seed, targets, runs):
    est, truth = coarse_arrays(np.random.default_rng(seed), runs, targets)
    agree, diff = pairwise_agreement(est, truth)
    for r in range(runs):
        expected = naive_pairs(est[r], truth[r])
        assert agree[r].tolist() == [a for a, _ in expected]
        np.testing.assert_allclose(np.abs(diff[r]), [d for _, d in expected])


def test_ties_count_as_disagreement():
    est = np.array([[0.5, 0.5, 0.7]])
    truth = np.array([[0.6, 0.4, 0.4]])
    agree, _ = pairwise_agreement(est, truth)
    # pairs (0,1): estimate tie -> no; (0,2): 0.5<0.7 but 0.6>0.4 -> no; (1,2): truth tie -> no
    assert agree.tolist() == [[False, False, False]]


@given(st.integers(0, 10_000), st.integers(3, 15))
@settings(max_examples=60, deadline=None)
def test_kendall_tau_equals_scipy_and_loop(seed, targets):
    est, truth = coarse_arrays(np.random.default_rng(seed), 3, targets, levels=5)
    taus = kendall_tau(est, truth).per_run
    for r in range(3):
        ref = kendalltau(est[r], truth[r]).statistic
        loop = naive_kendall_tau_b(est[r], truth[r])
        if np.isnan(ref):
            assert np.isnan(taus[r]) and np.isnan(loop)
        else:
            assert taus[r] == pytest.approx(ref, abs=1e-12)
            assert loop == pytest.approx(ref, abs=1e-12)


def test_estimation_error_is_mean_absolute_error():
    est = np.array([[0.1, 0.5], [0.3, 0.3]])
    truth = np.array([[0.2, 0.2], [0.3, 0.0]])
    error = estimation_error(est, truth)
    assert error.mean == pytest.approx((0.1 + 0.3 + 0.0 + 0.3) / 4)
    assert error.per_run == pytest.approx([0.2, 0.15])
    assert error.bias == pytest.approx((-0.1 + 0.3 + 0.0 + 0.3) / 4)


def test_bins_floor_exact_point_boundaries():
    # 0.035 in float is 0.034999...; it must still fall in the 3.5-point bin
    diffs = np.array([0.035, 0.0349, 0.005, 0.0, 0.02]) * 100
    assert bin_of(diffs).tolist() == [7, 6, 1, 0, 4]


@given(st.integers(0, 10_000), st.integers(5, 25), st.integers(1, 5), st.sampled_from([0.6, 0.8, 0.9]))
@settings(max_examples=50, deadline=None)
def test_curve_and_mdad_match_loop(seed, targets, runs, threshold):
    est, truth = coarse_arrays(np.random.default_rng(seed), runs, targets)
    agree, diff = pairwise_agreement(est, truth)
    curve = agreement_curve(agree, diff)
    expected = naive_curve(est, truth)
    assert curve.lower.tolist() == pytest.approx(list(expected))
    assert curve.pairs.tolist() == [p for p, _ in expected.values()]
    assert curve.agreed.tolist() == [a for _, a in expected.values()]
    result = mdad_from_curve(curve, threshold=threshold, rng=np.random.default_rng(0), n_boot=200)
    ref = naive_mdad(est, truth, threshold)
    if ref is None:
        assert not result.reached and str(result) == "not reached"
    else:
        assert result.value == pytest.approx(ref)
        assert result.low <= result.value
        assert np.isnan(result.high) or result.high >= result.value


def test_mdad_not_reached_is_marked_not_a_number():
    est = np.zeros((2, 6))  # every estimate tied: nothing is ever ordered
    truth = np.linspace(0, 0.5, 6)[None].repeat(2, 0)
    agree, diff = pairwise_agreement(est, truth)
    result = mdad_from_curve(agreement_curve(agree, diff))
    assert not result.reached and np.isnan(result.value)
    assert str(result) == "not reached"


def test_binomial_bootstrap_interval_matches_resampling_pairs():
    rng = np.random.default_rng(5)
    # one bin of 400 pairs with 70% agreement; a second far bin always agrees
    agreements = rng.random(400) < 0.7
    diff = np.r_[np.full(400, 1.2), np.full(50, 9.0)]
    agree = np.r_[agreements, np.ones(50, bool)]
    curve = agreement_curve(agree, diff)
    lo_ref, hi_ref = naive_bootstrap_interval(agreements, np.random.default_rng(1), n_boot=4000)
    boot = np.random.default_rng(2).binomial(400, curve.rate[0], size=4000) / 400
    lo, hi = np.quantile(boot, [0.025, 0.975])
    assert lo == pytest.approx(lo_ref, abs=0.01) and hi == pytest.approx(hi_ref, abs=0.01)
    result = mdad_from_curve(curve, threshold=0.75, rng=np.random.default_rng(3))
    # bin 1.0 agrees 70%: its upper bound (~74.5%) may or may not reach 0.75; the mean does not
    assert result.value == 9.0 and result.high == 9.0


def test_metrics_refuse_estimates_and_truths_of_different_shapes():
    for metric in (estimation_error, kendall_tau, pairwise_agreement):
        with pytest.raises(MdadError, match=r"same runs x targets shape, got \(2, 3\) and \(2, 4\)"):
            metric(np.zeros((2, 3)), np.zeros((2, 4)))
