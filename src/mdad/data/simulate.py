"""A simulated leaderboard with known truth, calibrated to real ones: multidimensional IRT with a guessing floor.

Each model has an ability vector theta: a general ability (shifted by its size class and by
instruction tuning, then scaled to mean 0 and sd 1) and D-1 specific skills (sd 1). Each item
has a discrimination vector a (a general loading, negative for a share of items, as on real
leaderboards where some items favour weaker models, and specific loadings partly shared by the
items of a subtask) and a difficulty b. The probability of a correct answer is

    P = c + (1 - c) * sigmoid(a.theta - b)

with c the guessing floor of the item's subtask. Multiple-choice options make that exact: the
gold option's logit is eta = log((n - 1) P / (1 - P)) and the n - 1 others' are 0; with Gumbel
noise added, the reported option probabilities are the softmax of the noisy logits and the
answer is their argmax, so 0/1 correctness is exactly "gold has the highest probability" and
P(correct) = P. A subtask without a floor (free response) still shows n options.

The default parameters (``SimulationParams``) summarise 3-dimensional IRT fits
(``mdad.irt.fit_irt``) to the three built-in real matrices (gpqa, musr, math-hard):
``benchmarks/calibrate_simulator.py`` derives and prints them, and benchmarks/results/simulator.md
compares the MDAD of the methods on the simulation and on the real matrices (docs/data.md#calibration).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.errors import MdadError

SIZE_CLASSES = {"1b": -1.2, "7b": -0.3, "13b": 0.2, "70b": 1.0}
TUNING = {"base": -0.2, "instruct": 0.25}
DEFAULT_OPTIONS = 4  # options shown on a subtask without a guessing floor


@dataclass(frozen=True)
class SimulationParams:
    """Summary parameters of a leaderboard; the defaults are calibrated to the built-in real matrices.

    Discriminations: |general loading| is log-normal (``discrimination_median``,
    ``discrimination_log_sd``), negative for ``negative_share`` of the items; the specific
    loadings' root mean square is ``specific_ratio`` times the general one's, and
    ``subtask_share`` of their variance is a mean per subtask. Difficulty: sd
    ``difficulty_sd`` within a subtask; each subtask's level is set so that the models'
    mean accuracy above its floor, (accuracy - floor) / (1 - floor), is its entry of
    ``above_floor``. Subtask t has guessing floor ``floors[t]`` and accuracy above it
    ``above_floor[t]`` (both lists cycled).
    """

    discrimination_median: float = 1.06
    discrimination_log_sd: float = 1.11
    negative_share: float = 0.17
    specific_ratio: float = 0.48
    subtask_share: float = 0.08
    difficulty_sd: float = 1.67
    floors: tuple[float, ...] = (0.23, 0.48, 0.22, 0.24, 0.0, 0.0, 0.0, 0.0, 0.0)
    above_floor: tuple[float, ...] = (0.113, 0.072, 0.155, 0.163, 0.027, 0.02, 0.057, 0.122, 0.024)

    def __post_init__(self) -> None:
        if not self.floors or not self.above_floor:
            raise MdadError("floors and above_floor need at least one value each.")
        if any(not 0 <= c < 1 for c in self.floors):
            raise MdadError(f"Guessing floors must lie in [0, 1), got {self.floors}.")
        if any(not 0 < v < 1 for v in self.above_floor):
            raise MdadError(f"Accuracies above the floor must lie strictly between 0 and 1, got {self.above_floor}.")
        if not 0 <= self.negative_share < 1 or not 0 <= self.subtask_share <= 1:
            raise MdadError("negative_share must lie in [0, 1) and subtask_share in [0, 1].")


@dataclass(frozen=True)
class SimulationTruth:
    """The parameters behind a simulated matrix."""

    theta: np.ndarray  # models x D abilities
    a: np.ndarray  # items x D discriminations
    b: np.ndarray  # items difficulties
    floor: np.ndarray  # items guessing floors
    p_correct: np.ndarray  # models x items, probability of a correct answer


def _level(z: np.ndarray, target: float) -> float:
    """The shift s with mean(sigmoid(z - s)) = target (bisection; the mean falls as s grows)."""
    lo, hi = -30.0, 30.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.mean(1 / (1 + np.exp(-(z - mid)))) > target else (lo, mid)
    return (lo + hi) / 2


def simulate_with_truth(
    *,
    n_models: int = 400,
    n_items: int = 1000,
    n_subtasks: int = 9,
    dims: int = 3,
    seed: int = 0,
    with_option_probs: bool = True,
    params: SimulationParams | None = None,
) -> tuple[ResponseMatrix, SimulationTruth]:
    """A simulated leaderboard and the truth it was drawn from (deterministic in ``seed``)."""
    p = SimulationParams() if params is None else params
    if dims < 1:
        raise MdadError(f"The simulator needs at least 1 ability dimension, got {dims}.")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x51A]))
    sizes = rng.choice(list(SIZE_CLASSES), size=n_models, p=[0.15, 0.45, 0.2, 0.2])
    tuning = rng.choice(list(TUNING), size=n_models, p=[0.4, 0.6])
    general = np.array([SIZE_CLASSES[s] for s in sizes]) + np.array([TUNING[t] for t in tuning])
    general += rng.normal(0.0, 0.6, size=n_models)
    theta = rng.normal(0.0, 1.0, size=(n_models, dims))
    theta[:, 0] = (general - general.mean()) / general.std()

    subtask = np.sort(rng.integers(0, n_subtasks, size=n_items))
    a = np.empty((n_items, dims))
    magnitude = rng.lognormal(np.log(p.discrimination_median), p.discrimination_log_sd, size=n_items)
    a[:, 0] = np.where(rng.random(n_items) < p.negative_share, -magnitude, magnitude)
    if dims > 1:
        mean_square = p.discrimination_median**2 * np.exp(2 * p.discrimination_log_sd**2)  # E[a^2], log-normal
        scale = p.specific_ratio * np.sqrt(mean_square / (dims - 1))
        shared = rng.normal(0.0, scale * np.sqrt(p.subtask_share), size=(n_subtasks, dims - 1))
        a[:, 1:] = shared[subtask] + rng.normal(0.0, scale * np.sqrt(1 - p.subtask_share), size=(n_items, dims - 1))
    floors = np.array([p.floors[t % len(p.floors)] for t in range(n_subtasks)])
    above = np.array([p.above_floor[t % len(p.above_floor)] for t in range(n_subtasks)])
    b = rng.normal(0.0, p.difficulty_sd, size=n_items)
    z = theta @ a.T - b
    for t in range(n_subtasks):
        cols = subtask == t
        if cols.any():
            shift = _level(z[:, cols], above[t])
            b[cols] += shift
            z[:, cols] -= shift
    floor = floors[subtask]
    p_correct = floor + (1 - floor) / (1 + np.exp(-z))

    n_options = np.where(floors > 0, np.maximum(2, np.round(1 / np.maximum(floors, 1e-9))), DEFAULT_OPTIONS)
    n_options = n_options.astype(int)[subtask]
    max_options = int(n_options.max())
    gold = rng.integers(0, n_options)
    # eta = log((n - 1) P / (1 - P)), in logs so that P near 0 or 1 stays finite
    with np.errstate(divide="ignore"):
        log_floor, log_rest = np.log(floor), np.log1p(-floor)
    log_p = np.logaddexp(log_floor, log_rest - np.logaddexp(0, -z))
    eta = np.log(n_options - 1) + log_p - (log_rest - np.logaddexp(0, z))
    logits = np.zeros((n_models, n_items, max_options))
    logits[:, np.arange(n_items), gold] = eta
    valid = np.arange(max_options)[None, :] < n_options[:, None]
    logits = np.where(valid[None], logits + rng.gumbel(size=logits.shape), -np.inf)
    logits -= logits.max(axis=2, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=2, keepdims=True)
    correct = (probs.argmax(axis=2) == gold[None, :]).astype(np.float32)

    names = [f"sim-{s}-{t}-{i:03d}" for i, (s, t) in enumerate(zip(sizes, tuning, strict=True))]
    groups = {f"{s}_{t}": [n for n, ms, mt in zip(names, sizes, tuning, strict=True) if ms == s and mt == t] for s in SIZE_CLASSES for t in TUNING}
    matrix = ResponseMatrix(
        scores=correct,
        models=np.array(names),
        items=np.array([f"sim/{j}" for j in range(n_items)]),
        subtasks=np.array([f"subtask_{s}" for s in subtask]),
        option_probs=probs.astype(np.float32) if with_option_probs else None,
        gold=gold if with_option_probs else None,
        source=f"simulated (seed {seed})",
        simulated=True,
        groups={k: v for k, v in groups.items() if len(v) >= 2},
    )
    return matrix, SimulationTruth(theta=theta, a=a, b=b, floor=floor, p_correct=p_correct)


def simulate(*, seed: int = 0, **kwargs) -> ResponseMatrix:
    """The built-in simulated data: a leaderboard calibrated to real ones (options of ``simulate_with_truth``).

    Examples
    --------
    >>> simulate(seed=0, n_models=30, n_items=60, n_subtasks=2)
    ResponseMatrix(30 models x 60 items, 2 subtasks, simulated)
    """
    return simulate_with_truth(seed=seed, **kwargs)[0]
