"""mdad.irt: gradient, recovery of known parameters, missing cells, ability estimation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from support.sim_params import TEXTBOOK_2PL

from mdad.data import simulate_with_truth
from mdad.errors import MdadError
from mdad.irt import Priors, estimate_ability, estimate_items, fit_irt, neg_log_posterior, predict_correct


def tiny(seed: int = 0, n: int = 6, m: int = 8, d: int = 3, missing: bool = True):
    rng = np.random.default_rng(seed)
    y = (rng.random((n, m)) < 0.5).astype(float)
    if missing:
        y[rng.random((n, m)) < 0.2] = np.nan
    priors = Priors(rng.normal(size=d), rng.uniform(0.5, 2.0, size=d), 0.3, 1.7)
    return y, rng.normal(size=(n, d)), rng.normal(size=(m, d)), rng.normal(size=m), priors


def brute_objective(y, theta, a, b, priors) -> float:
    """The negative log posterior written cell by cell (independent of the vectorised code)."""
    total = 0.0
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            if np.isnan(y[i, j]):
                continue
            eta = float(theta[i] @ a[j] - b[j])
            p = 1.0 / (1.0 + np.exp(-eta))
            total -= y[i, j] * np.log(p) + (1 - y[i, j]) * np.log(1 - p)
    total += 0.5 * np.sum(theta**2)
    total += 0.5 * np.sum(((a - priors.a_mean) / priors.a_scale) ** 2)
    total += 0.5 * np.sum(((b - priors.b_mean) / priors.b_scale) ** 2)
    return total


def test_objective_matches_a_cell_by_cell_computation():
    y, theta, a, b, priors = tiny()
    value, _ = neg_log_posterior(y, theta, a, b, priors)
    assert value == pytest.approx(brute_objective(y, theta, a, b, priors), rel=1e-12)


def test_blocks_of_rows_give_the_whole_arrays_values_to_rounding(monkeypatch):
    """The objective's element-wise work runs in blocks of rows (for the cache): with blocks of one
    row, and of two rows with a remainder, every value is the whole-array one to rounding (the
    logits of a block are a smaller matrix product, which BLAS may round differently)."""
    import mdad.irt.model as model

    y, theta, a, b, priors = tiny(seed=2, n=7, m=9)
    fits = {}
    for cells in (10**9, 9, 18):  # one block; one row per block; two rows, the last block one row
        monkeypatch.setattr(model, "BLOCK_CELLS", cells)
        value, grads = neg_log_posterior(y, theta, a, b, priors)
        fit = fit_irt(y, dims=3, rng=np.random.default_rng(1))
        fits[cells] = (value, grads, fit.logits())
    assert fits[9][0] == pytest.approx(brute_objective(y, theta, a, b, priors), rel=1e-12)
    for cells in (9, 18):
        assert fits[cells][0] == pytest.approx(fits[10**9][0], rel=1e-13)
        for got, whole in zip(fits[cells][1], fits[10**9][1], strict=True):
            np.testing.assert_allclose(got, whole, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fits[cells][2], fits[10**9][2], rtol=1e-6, atol=1e-6)


def test_a_point_evaluated_again_under_other_priors_gives_a_fresh_evaluations_values():
    """The fit keeps the likelihood of the last point for the next round (other priors and spread
    penalties, same point): what comes back must be what a fresh evaluation gives, to the bit."""
    from mdad.irt.model import _Posterior

    y, theta, a, b, priors = tiny(seed=4)
    other = Priors(priors.a_mean + 0.5, priors.a_scale * 2.0, -1.0, 0.4)
    rng = np.random.default_rng(3)
    spread = (spd(rng, len(theta), 3), spd(rng, len(a), 3))
    x = np.concatenate([theta.ravel(), a.ravel(), b])
    kept = _Posterior(y, len(b), 3)
    kept(x + 0.1, priors)  # another point first, then x twice
    kept(x, priors)
    for args in ((other, None), (other, spread), (priors, spread)):
        value, grad = kept(x, *args)
        fresh_value, fresh_grad = _Posterior(y, len(b), 3)(x, *args)
        assert value == fresh_value
        np.testing.assert_array_equal(grad, fresh_grad)


def spd(rng, count: int, d: int) -> np.ndarray:
    root = rng.normal(size=(count, d, d))
    return root @ root.transpose(0, 2, 1) + np.eye(d)


@pytest.mark.parametrize("with_spread", [False, True])
def test_gradient_matches_finite_differences(with_spread):
    y, theta, a, b, priors = tiny(seed=1)
    rng = np.random.default_rng(9)
    spread = (spd(rng, len(theta), 3), spd(rng, len(a), 3)) if with_spread else None
    _, grads = neg_log_posterior(y, theta, a, b, priors, spread)
    params = [theta, a, b]
    h = 1e-6
    for block, grad in enumerate(grads):
        numeric = np.zeros_like(params[block])
        for idx in np.ndindex(params[block].shape):
            up = [p.copy() for p in params]
            down = [p.copy() for p in params]
            up[block][idx] += h
            down[block][idx] -= h
            numeric[idx] = (neg_log_posterior(y, *up, priors, spread)[0] - neg_log_posterior(y, *down, priors, spread)[0]) / (2 * h)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6)


def test_spread_term_is_the_stated_quadratic():
    y, theta, a, b, priors = tiny(seed=8)
    rng = np.random.default_rng(10)
    p_theta, q_a = spd(rng, len(theta), 3), spd(rng, len(a), 3)
    base = neg_log_posterior(y, theta, a, b, priors)[0]
    extra = sum(t @ p @ t for t, p in zip(theta, p_theta, strict=True)) + sum(v @ q @ v for v, q in zip(a, q_a, strict=True))
    assert neg_log_posterior(y, theta, a, b, priors, (p_theta, q_a))[0] == pytest.approx(base + 0.5 * extra)


def test_plain_map_is_a_stationary_point_of_the_posterior():
    y = tiny(seed=12, n=25, m=30, missing=True)[0]
    fit = fit_irt(y, dims=2, priors="fixed", variational=False, max_iter=5000, tol=1e-14)
    _, grads = neg_log_posterior(y, fit.theta, fit.a, fit.b, fit.priors)
    assert max(np.abs(g).max() for g in grads) < 1e-4


def test_empirical_bayes_scale_minimises_its_objective():
    """With zero posterior variance, each scale minimises (count + 2(shape+1)) log s + (SS + 2 rate) / (2 s^2)."""
    rng = np.random.default_rng(2)
    a, b = rng.normal(0.5, 0.7, size=(40, 2)), rng.normal(-1.0, 1.3, size=40)
    prev = Priors(np.zeros(2), np.ones(2), 0.0, 1.0)
    new = Priors.empirical_bayes(a, b, np.zeros_like(a), np.zeros_like(b), prev)
    grid = np.linspace(0.05, 3.0, 200001)
    for values, mean, scale in [(a[:, 0], new.a_mean[0], new.a_scale[0]), (b, new.b_mean, new.b_scale)]:
        ss = np.sum((values - mean) ** 2)
        objective = (len(values) + 4) * np.log(grid) + (ss + 2) / (2 * grid**2)
        assert scale == pytest.approx(grid[np.argmin(objective)], abs=2e-5)
    assert new.a_mean[1] == pytest.approx(a[:, 1].sum() / (40 + 1 / 100), rel=1e-12)


def recovery(n_models: int, n_items: int, seed: int = 1):
    """(difficulty correlation, per-dimension projected ability correlations) of a D=10 fit."""
    matrix, truth = simulate_with_truth(
        n_models=n_models, n_items=n_items, n_subtasks=6, dims=4, seed=seed, with_option_probs=False, params=TEXTBOOK_2PL
    )
    fit = fit_irt(matrix.scores, dims=10, rng=np.random.default_rng(0))
    # Abilities and difficulties are identified up to a shift, so item difficulty is compared
    # as the identifiable quantity: minus the item's mean logit.
    true_logit = np.log(truth.p_correct / (1 - truth.p_correct))
    difficulty = np.corrcoef(-fit.logits().mean(axis=0), -true_logit.mean(axis=0))[0, 1]
    # Abilities are identified up to an affine map (rotation, scale, shift): project first.
    design = np.column_stack([fit.theta, np.ones(n_models)])
    projected = design @ np.linalg.lstsq(design, truth.theta, rcond=None)[0]
    ability = [np.corrcoef(projected[:, d], truth.theta[:, d])[0, 1] for d in range(truth.theta.shape[1])]
    return difficulty, np.array(ability)


def test_recovery_300_models_2000_items():
    difficulty, ability = recovery(300, 2000)
    assert difficulty > 0.95
    assert ability.min() > 0.9


def test_fit_is_deterministic_in_the_generator():
    y = tiny(seed=3, n=30, m=40, missing=True)[0]
    one = fit_irt(y, dims=3, rng=np.random.default_rng(5))
    two = fit_irt(y, dims=3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(one.logits(), two.logits())


def test_missing_cells_are_left_out_of_the_fit():
    """A masked cell's hidden value cannot matter, and predictions for it stay sensible."""
    matrix, truth = simulate_with_truth(n_models=120, n_items=300, n_subtasks=3, dims=3, seed=4, with_option_probs=False, params=TEXTBOOK_2PL)
    scores = matrix.scores.astype(float)
    hidden = np.random.default_rng(0).random(scores.shape) < 0.15
    flipped = np.where(hidden, 1 - scores, scores)
    fits = [fit_irt(np.where(hidden, np.nan, s), dims=3, rng=np.random.default_rng(0)) for s in (scores, flipped)]
    np.testing.assert_array_equal(fits[0].logits(), fits[1].logits())
    corr = np.corrcoef(fits[0].probabilities()[hidden], truth.p_correct[hidden])[0, 1]
    assert corr > 0.85


def test_fixed_priors_are_held():
    y = tiny(seed=5, n=20, m=30, missing=False)[0]
    fit = fit_irt(y, dims=2, priors="fixed", a_prior=(0.2, 0.5), b_prior=(-1.0, 2.0))
    np.testing.assert_array_equal(fit.priors.a_scale, [0.5, 0.5])
    assert (fit.priors.b_mean, fit.priors.b_scale) == (-1.0, 2.0)


def test_variational_fit_predicts_held_out_cells_better_than_map():
    """The point of the default: with D=10 the posterior mode over-fits, the means do not."""
    matrix, _ = simulate_with_truth(n_models=150, n_items=400, n_subtasks=4, dims=3, seed=6, with_option_probs=False)
    scores = matrix.scores.astype(float)
    held = np.random.default_rng(1).random(scores.shape) < 0.1
    train = np.where(held, np.nan, scores)

    def heldout(fit):
        z, y = fit.logits()[held], scores[held]
        return np.mean(y * z - np.logaddexp(0, z))

    variational = heldout(fit_irt(train, rng=np.random.default_rng(0)))
    plain = heldout(fit_irt(train, rng=np.random.default_rng(0), variational=False))
    assert variational > plain + 0.005


@pytest.mark.parametrize(
    ("responses", "kwargs", "message"),
    [
        (np.array([[0.0, 0.4], [1.0, 0.0]]), {}, "0/1"),
        (np.array([[0.0, np.nan], [1.0, np.nan]]), {}, "Item 1 has no answers"),
        (np.zeros((3, 3)), {"priors": "flat"}, "Unknown IRT priors"),
        (np.zeros((3, 3)), {"dims": 0}, "at least 1"),
    ],
)
def test_bad_input_is_one_clear_error(responses, kwargs, message):
    with pytest.raises(MdadError, match=message):
        fit_irt(responses, **kwargs)


def test_ability_matches_per_model_scipy_optimisation():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(12, 3)), rng.normal(size=12)
    y = (rng.random((5, 12)) < 0.6).astype(float)
    y[0] = 1.0  # all correct: only the prior keeps the estimate finite
    y[1, :4] = np.nan
    theta = estimate_ability(y, a, b, prior_scale=1.5)
    for i in range(len(y)):
        seen = ~np.isnan(y[i])

        def objective(t, i=i, seen=seen):
            p = predict_correct(t[None], a[seen], b[seen])[0]
            return -np.sum(y[i, seen] * np.log(p) + (1 - y[i, seen]) * np.log(1 - p)) + 0.5 * t @ t / 1.5**2

        reference = minimize(objective, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
        np.testing.assert_allclose(theta[i], reference, atol=1e-5)


def test_ability_with_missing_answers_equals_ability_on_the_answered_items():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(10, 2)), rng.normal(size=10)
    y = (rng.random((1, 10)) < 0.5).astype(float)
    y[0, [2, 5]] = np.nan
    keep = ~np.isnan(y[0])
    np.testing.assert_allclose(estimate_ability(y, a, b), estimate_ability(y[:, keep], a[keep], b[keep]), atol=1e-10)


def test_item_parameters_match_per_item_scipy_optimisation():
    """estimate_items, run to convergence, is each item's MAP under the priors (a brute-force fit per item)."""
    rng = np.random.default_rng(8)
    theta = rng.normal(size=(40, 3))
    priors = Priors(a_mean=np.array([0.3, 0.0, -0.2]), a_scale=np.array([1.0, 0.7, 0.4]), b_mean=0.5, b_scale=2.0)
    y = (rng.random((40, 6)) < 0.6).astype(float)
    y[:, 0] = 1.0  # answered correctly by every model: only the prior keeps it finite
    y[:7, 1] = np.nan
    y[:, 2] = np.nan  # no answers: the prior's mean
    a, b = estimate_items(y, theta, priors, steps=30)
    x = np.column_stack([theta, -np.ones(len(theta))])
    mean, scale = np.append(priors.a_mean, priors.b_mean), np.append(priors.a_scale, priors.b_scale)
    for j in range(y.shape[1]):
        seen = ~np.isnan(y[:, j])

        def objective(c, j=j, seen=seen):
            z = x[seen] @ c
            return np.sum(np.logaddexp(0, z) - y[seen, j] * z) + 0.5 * np.sum(((c - mean) / scale) ** 2)

        reference = minimize(objective, mean, method="BFGS", options={"gtol": 1e-10}).x
        np.testing.assert_allclose(np.append(a[j], b[j]), reference, atol=1e-5)
    np.testing.assert_allclose(np.append(a[2], b[2]), mean, atol=1e-12)


def test_item_parameters_recover_the_simulated_ones():
    """With many models of known ability the estimated items predict the true probabilities."""
    rng = np.random.default_rng(9)
    theta, a_true, b_true = rng.normal(size=(3000, 2)), rng.normal(0.0, 0.8, size=(50, 2)), rng.normal(size=50)
    y = (rng.random((3000, 50)) < predict_correct(theta, a_true, b_true)).astype(float)
    priors = Priors(a_mean=np.zeros(2), a_scale=np.ones(2), b_mean=0.0, b_scale=3.0)
    a, b = estimate_items(y, theta, priors, steps=8)
    error = np.abs(predict_correct(theta, a, b) - predict_correct(theta, a_true, b_true)).mean()
    assert error < 0.02


def test_item_parameters_reject_mismatched_abilities():
    with pytest.raises(MdadError, match="do not match"):
        estimate_items(np.zeros((2, 3)), np.zeros((4, 2)), Priors(np.zeros(2), np.ones(2), 0.0, 1.0), steps=1)


def test_ability_rejects_mismatched_items():
    with pytest.raises(MdadError, match="do not match"):
        estimate_ability(np.zeros((2, 3)), np.zeros((4, 2)), np.zeros(4))


@pytest.mark.parametrize("shape", [(12, 40), (40, 12), (15, 15)])
def test_top_singular_triplets_match_the_full_svd(shape):
    """The fit's start takes the top singular triplets from the Gram matrix on the smaller side:
    the same singular values and, up to sign, vectors as LAPACK's full SVD, each sign fixed so that
    u's largest entry is positive."""
    from mdad.irt.model import _top_singular

    rng = np.random.default_rng(5)
    matrix = rng.normal(size=shape) + np.outer(rng.normal(size=shape[0]), rng.normal(size=shape[1])) * 3
    u, s, vt = _top_singular(matrix, 4)
    full_u, full_s, full_vt = np.linalg.svd(matrix, full_matrices=False)
    np.testing.assert_allclose(s, full_s[:4], rtol=1e-10)
    signs = np.sign(np.sum(u * full_u[:, :4], axis=0))
    np.testing.assert_allclose(u, full_u[:, :4] * signs, atol=1e-8)
    np.testing.assert_allclose(vt, full_vt[:4] * signs[:, None], atol=1e-8)
    assert (u[np.argmax(np.abs(u), axis=0), np.arange(4)] > 0).all()
    # a rank-one matrix: the missing directions come out as zero vectors, not NaN
    u, s, vt = _top_singular(np.outer(np.arange(1.0, 7.0), np.ones(9)), 3)
    assert np.isfinite(u).all() and np.isfinite(vt).all()
    np.testing.assert_allclose(s[1:], 0.0, atol=1e-6)


def test_spread_matches_its_formulas_written_matrix_by_matrix():
    """The covariance update works on packed upper triangles; written out with full matrices, model
    by model and item by item, its covariances and penalties are the same."""
    from mdad.irt.model import _Posterior, sigmoid

    y, theta, a, b, priors = tiny(seed=9, n=7, m=9, d=3)
    x = np.concatenate([theta.ravel(), a.ravel(), b])
    spread = _Posterior(y, 9, 3).spread(x, priors)
    w = np.where(np.isnan(y), 0.0, sigmoid(theta @ a.T - b) * (1 - sigmoid(theta @ a.T - b)))
    first = [np.linalg.inv(sum(w[i, j] * np.outer(a[j], a[j]) for j in range(9)) + np.eye(3)) for i in range(7)]
    prior = np.diag(np.append(1 / priors.a_scale**2, 1 / priors.b_scale**2))
    design = np.column_stack([theta, -np.ones(7)])
    items = []
    for j in range(9):
        total = prior.copy()
        for i in range(7):
            second = np.outer(design[i], design[i])
            second[:3, :3] += first[i]
            total += w[i, j] * second
        items.append(np.linalg.inv(total))
    thetas = [np.linalg.inv(sum(w[i, j] * (np.outer(a[j], a[j]) + items[j][:3, :3]) for j in range(9)) + np.eye(3)) for i in range(7)]
    np.testing.assert_allclose(spread.cov_item, np.array(items), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(spread.cov_theta, np.array(thetas), rtol=1e-10, atol=1e-12)
    p_theta, q_a = spread.penalties()
    np.testing.assert_allclose(p_theta, [sum(w[i, j] * items[j][:3, :3] for j in range(9)) for i in range(7)], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(q_a, [sum(w[i, j] * thetas[i] for i in range(7)) for j in range(9)], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("priors", ["hierarchical", "fixed"])
def test_the_fit_stops_at_the_first_round_whose_probabilities_and_scales_settled(priors):
    """docs/deviations.md#irt-fit-stopping: the full schedule's rounds, recorded one by one, give per
    round the mean |change| of the observed cells' fitted probabilities and the largest relative change
    of a hierarchical scale (computed here from each round's parameters and priors); the default fit must
    stop at the first round from STOP_MIN_ROUNDS on where both are below their tolerances (else run every
    round), and return that round's fit to the bit. Here the hierarchical fit's probabilities settle while
    its scales still move (it runs every round); with fixed priors it stops early."""
    from mdad.irt.model import STOP_MIN_ROUNDS, STOP_SCALE_TOLERANCE, STOP_TOLERANCE, VARIATIONAL_SCHEDULE, sigmoid

    matrix, _ = simulate_with_truth(n_models=60, n_items=150, n_subtasks=3, dims=2, seed=5, with_option_probs=False, params=TEXTBOOK_2PL)
    y = matrix.scores.astype(float)
    y[np.random.default_rng(3).random(y.shape) < 0.1] = np.nan
    observed = ~np.isnan(y)
    rounds: list = []
    full = fit_irt(y, dims=4, rng=np.random.default_rng(2), priors=priors, stop_tol=0.0, until=lambda fit: rounds.append(fit) or False)
    assert len(rounds) == VARIATIONAL_SCHEDULE[1] and np.array_equal(full.theta, rounds[-1].theta)

    def scales(fit):
        return np.log(np.append(fit.priors.a_scale, fit.priors.b_scale))

    pairs = list(zip(rounds[:-1], rounds[1:], strict=True))  # index r - 2: round r against round r - 1
    moved = [np.abs(sigmoid(now.logits()) - sigmoid(before.logits()))[observed].mean() for before, now in pairs]
    rescaled = [np.abs(scales(now) - scales(before)).max() for before, now in pairs]
    candidates = range(STOP_MIN_ROUNDS, len(rounds))
    stop = next((r for r in candidates if moved[r - 2] < STOP_TOLERANCE and rescaled[r - 2] < STOP_SCALE_TOLERANCE), len(rounds))
    if priors == "fixed":
        assert stop < len(rounds)  # an early stop
    else:
        assert stop == len(rounds) and any(moved[r - 2] < STOP_TOLERANCE for r in candidates)  # the scales held it
    stopped = fit_irt(y, dims=4, rng=np.random.default_rng(2), priors=priors)
    assert stopped.iterations == rounds[stop - 1].iterations
    for got, want in ((stopped.theta, rounds[stop - 1].theta), (stopped.a, rounds[stop - 1].a), (stopped.b, rounds[stop - 1].b)):
        assert np.array_equal(got, want)
    assert stopped.objective == rounds[stop - 1].objective


@pytest.mark.parametrize(("count", "k"), [(1, 1), (7, 2), (300, 10), (500, 11)])
def test_spd_inverses_are_the_inverses_and_symmetric(count, k):
    """The spread's stacked inverses against LAPACK's LU inversion, matrix by matrix; the posterior
    covariances are symmetric to the bit, as a covariance must be."""
    from mdad.irt.model import spd_inverses

    rng = np.random.default_rng(count)
    factors = rng.normal(size=(count, 3 * k, k)) * rng.uniform(0.01, 10.0, size=(count, 1, k))  # ill-scaled columns
    matrices = np.einsum("nik,nil->nkl", factors, factors) + np.eye(k) * 1e-3
    original = matrices.copy()
    inverses = spd_inverses(matrices)
    np.testing.assert_array_equal(matrices, original)  # the input is left as it was
    assert inverses.shape == matrices.shape
    np.testing.assert_array_equal(inverses, np.swapaxes(inverses, 1, 2))
    for matrix, inverse in zip(matrices, inverses, strict=True):
        np.testing.assert_allclose(inverse, np.linalg.inv(matrix), rtol=1e-9, atol=1e-12 * np.abs(inverse).max())
        np.testing.assert_allclose(matrix @ inverse, np.eye(k), atol=1e-8)
