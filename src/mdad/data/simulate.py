"""A simulated leaderboard with known truth: multidimensional IRT abilities and items.

Each model has an ability vector theta (general skill plus D-1 specific skills, shifted
by its size class and by instruction tuning); each item has a discrimination vector
a (loading mostly on its subtask's skill) and a difficulty b. For every option the
model's logit is eta = a.theta - b for the gold option and 0 for the others, plus
Gumbel noise; the reported option probabilities are the softmax of the noisy
logits and the answer is their argmax. So 0/1 correctness is exactly "gold has the
highest probability", and P(correct) = softmax(eta, 0, ..., 0)[gold].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdad.data.matrix import ResponseMatrix

SIZE_CLASSES = {"1b": -1.2, "7b": -0.3, "13b": 0.2, "70b": 1.0}
TUNING = {"base": -0.2, "instruct": 0.25}


@dataclass(frozen=True)
class SimulationTruth:
    """The parameters behind a simulated matrix."""

    theta: np.ndarray  # models x D abilities
    a: np.ndarray  # items x D discriminations
    b: np.ndarray  # items difficulties
    p_correct: np.ndarray  # models x items, probability of a correct answer


def simulate_with_truth(
    n_models: int = 400,
    n_items: int = 1000,
    n_subtasks: int = 6,
    dims: int = 4,
    seed: int = 0,
    with_option_probs: bool = True,
) -> tuple[ResponseMatrix, SimulationTruth]:
    """A realistic simulated leaderboard and the truth it was drawn from (deterministic in ``seed``)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x51A]))
    sizes = rng.choice(list(SIZE_CLASSES), size=n_models, p=[0.15, 0.45, 0.2, 0.2])
    tuning = rng.choice(list(TUNING), size=n_models, p=[0.4, 0.6])
    shift = np.array([SIZE_CLASSES[s] for s in sizes]) + np.array([TUNING[t] for t in tuning])

    theta = rng.normal(0.0, 0.5, size=(n_models, dims))
    theta[:, 0] = shift + rng.normal(0.0, 0.6, size=n_models)

    subtask = np.sort(rng.integers(0, n_subtasks, size=n_items))
    skill_of_subtask = 1 + np.arange(n_subtasks) % max(dims - 1, 1) if dims > 1 else np.zeros(n_subtasks, int)
    a = np.abs(rng.normal(0.0, 0.25, size=(n_items, dims)))
    a[:, 0] = rng.lognormal(np.log(1.2), 0.35, size=n_items)
    if dims > 1:
        a[np.arange(n_items), skill_of_subtask[subtask]] += rng.lognormal(np.log(0.8), 0.3, size=n_items)
    b = rng.normal(-0.8, 1.2, size=n_items) + rng.normal(0.0, 0.5, size=n_subtasks)[subtask]

    n_options = np.where(np.arange(n_subtasks) % 2 == 0, 4, 10)[subtask]
    max_options = int(n_options.max())
    gold = rng.integers(0, n_options)
    eta = theta @ a.T - b

    logits = np.zeros((n_models, n_items, max_options))
    logits[:, np.arange(n_items), gold] = eta
    valid = np.arange(max_options)[None, :] < n_options[:, None]
    logits = np.where(valid[None], logits + rng.gumbel(size=logits.shape), -np.inf)
    logits -= logits.max(axis=2, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=2, keepdims=True)
    correct = (probs.argmax(axis=2) == gold[None, :]).astype(np.float32)
    p_correct = 1.0 / (1.0 + (n_options[None, :] - 1) * np.exp(-eta))

    names = [f"sim-{s}-{t}-{i:03d}" for i, (s, t) in enumerate(zip(sizes, tuning))]
    groups = {
        f"{s}_{t}": [n for n, ms, mt in zip(names, sizes, tuning) if ms == s and mt == t]
        for s in SIZE_CLASSES for t in TUNING
    }
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
    return matrix, SimulationTruth(theta=theta, a=a, b=b, p_correct=p_correct)


def simulate(seed: int = 0, **kwargs) -> ResponseMatrix:
    """The built-in default data: a simulated leaderboard (see ``simulate_with_truth``)."""
    return simulate_with_truth(seed=seed, **kwargs)[0]
