"""Derive the simulator's default parameters from IRT fits to the built-in real matrices.

For each of gpqa, musr and math-hard: the guessing floor c of each subtask (the 2nd percentile
of the models' accuracy on it), then a 3-dimensional 2PL fit (``mdad.irt.fit_irt``) of what the
models knew, P(correct) = c + (1 - c) sigmoid(a.theta - b): a stochastic EM that alternates a
fit to the "known" indicators with a draw of them (a wrong answer was not known; a right one
was known with probability (1 - c) s / (c + (1 - c) s), s the fitted sigmoid), so that the floor
is not absorbed into low discriminations. The fit is read in its principal axes (the SVD of the
item-centred logit matrix, so the summary does not depend on the fit's arbitrary rotation):

- general discrimination: the items' loadings on the first axis (abilities scaled to sd 1):
  median of |a|, sd of log |a|, share of items loading negatively;
- specific skills: root-mean-square loading on the other axes relative to the general one,
  and the share of that loading explained by the subtask (1 = each subtask has its own skill);
- ability: skewness of the models' general ability;
- difficulty: b = -(mean logit over models), its sd within subtasks and between subtasks,
  and each subtask's mean fitted probability of knowing the answer (accuracy above the floor).

It prints each matrix's summary and the pooled defaults: the item parameters pooled over the
2,098 items of the three matrices, the subtask share as the median over the two with subtasks,
and the floors and accuracies above the floor of the 9 real subtasks, which the simulation's 9
subtasks take in turn. They are written as the defaults of ``SimulationParams`` in
``mdad/data/simulate.py`` (a slow test checks that they match). The simulation's abilities have
the fit's dimensionality (D = 3: a general ability and two specific skills); the skewness of
the fitted general ability is printed for comparison.

    python benchmarks/calibrate_simulator.py
"""

from __future__ import annotations

import numpy as np
from scipy.stats import skew

from mdad.data import load_dataset
from mdad.irt import fit_irt

DATASETS = ("gpqa", "musr", "math-hard")
FLOOR_QUANTILE = 0.02
DIMS = 3
EM_ROUNDS = 5


def principal_axes(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """General abilities (sd 1) and item loadings (items x D) on the principal axes of the centred logits."""
    centred = logits - logits.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    n = logits.shape[0]
    ability = u * np.sqrt(n)
    loadings = vt.T * s / np.sqrt(n)
    if loadings[:, 0].mean() < 0:  # the general axis points towards the stronger models
        ability[:, 0], loadings[:, 0] = -ability[:, 0], -loadings[:, 0]
    return ability, loadings


def knowledge_logits(scores: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """a.theta - b of the fitted knowledge part (models x items), by stochastic EM over who knew what."""
    rng = np.random.default_rng(0)
    known = scores
    for _ in range(EM_ROUNDS if floor.any() else 1):
        logits = fit_irt(known, dims=DIMS, rng=np.random.default_rng(0)).logits()
        s = 1 / (1 + np.exp(-logits))
        share_known = (1 - floor) * s / (floor + (1 - floor) * s)
        known = scores * (rng.random(scores.shape) < share_known)
    return logits


def summarise(name: str) -> dict:
    matrix = load_dataset(name)
    scores = matrix.scores.astype(np.float64)
    codes = matrix.subtask_codes
    floors = []
    for t in range(len(matrix.subtask_names)):
        acc = scores[:, codes == t].mean(axis=1)
        floor = float(np.quantile(acc, FLOOR_QUANTILE))
        floors.append(floor)
    logits = knowledge_logits(scores, np.array(floors)[codes])
    ability, loadings = principal_axes(logits)
    general = loadings[:, 0]
    rest = loadings[:, 1:DIMS]
    specific = float(np.sqrt((rest**2).sum(axis=1).mean()) / np.sqrt((general**2).mean()))
    if len(matrix.subtask_names) > 1:
        means = np.array([rest[codes == t].mean(axis=0) for t in range(len(matrix.subtask_names))])
        between = ((means[codes] - rest.mean(axis=0)) ** 2).sum()
        subtask_share = float(between / ((rest - rest.mean(axis=0)) ** 2).sum())
    else:
        subtask_share = float("nan")
    knew = 1 / (1 + np.exp(-logits))
    above = [float(knew[:, codes == t].mean()) for t in range(len(matrix.subtask_names))]
    b = -logits.mean(axis=0)
    b_means = np.array([b[codes == t].mean() for t in range(len(matrix.subtask_names))])
    return {
        "name": name,
        "floors": floors,
        "above_floor": above,
        "general": general,
        "b_within": b - b_means[codes],
        "rest": rest,
        "a_median": float(np.median(np.abs(general))),
        "a_log_sd": float(np.std(np.log(np.abs(general)))),
        "a_negative": float((general < 0).mean()),
        "specific_ratio": specific,
        "subtask_share": subtask_share,
        "ability_skew": float(skew(ability[:, 0])),
        "b_within_sd": float(np.std(b - b_means[codes])),
        "b_between_sd": float(np.std(b_means)) if len(b_means) > 1 else float("nan"),
    }


def main() -> None:
    rows = [summarise(name) for name in DATASETS]
    keys = ["a_median", "a_log_sd", "a_negative", "specific_ratio", "subtask_share", "ability_skew", "b_within_sd", "b_between_sd"]
    print(f"{'':16s}" + "".join(f"{k:>15s}" for k in keys))
    for row in rows:
        print(f"{row['name']:16s}" + "".join(f"{row[k]:15.3f}" for k in keys))
        print(f"{'':16s}floors {np.round(row['floors'], 3).tolist()}; accuracy above floor {np.round(row['above_floor'], 3).tolist()}")
    print("\npooled defaults (item parameters over the items of all three matrices; subtask share: median):")
    for key, value in pooled(rows).items():
        print(f"  {key} = {value}")


def pooled(rows: list[dict]) -> dict:
    """The simulator's defaults (SimulationParams fields, rounded as stored) from the per-matrix summaries."""
    general = np.concatenate([row["general"] for row in rows])
    rest = np.concatenate([row["rest"] for row in rows])
    return {
        "discrimination_median": round(float(np.median(np.abs(general))), 2),
        "discrimination_log_sd": round(float(np.std(np.log(np.abs(general)))), 2),
        "negative_share": round(float((general < 0).mean()), 2),
        "specific_ratio": round(float(np.sqrt((rest**2).sum(axis=1).mean() / (general**2).mean())), 2),
        "subtask_share": round(float(np.nanmedian([row["subtask_share"] for row in rows])), 2),
        "difficulty_sd": round(float(np.std(np.concatenate([row["b_within"] for row in rows]))), 2),
        "floors": tuple(round(f, 2) for row in rows for f in row["floors"]),
        "above_floor": tuple(round(a, 3) for row in rows for a in row["above_floor"]),
    }


if __name__ == "__main__":
    main()
