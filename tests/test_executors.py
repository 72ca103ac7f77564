"""What the executors send to workers."""

from __future__ import annotations

import numpy as np

from mdad.data import simulate
from mdad.experiment.executors import task_data


def test_a_cluster_gets_the_gold_option_probabilities_only():
    matrix = simulate(seed=2, n_models=20, n_items=50, n_subtasks=2)
    sent = task_data(matrix)
    assert sent.option_probs.shape == (20, 50, 1)
    options = matrix.option_probs.shape[2]
    assert options > 1 and sent.option_probs.nbytes * options <= matrix.option_probs.nbytes * 1.01  # one column of them
    np.testing.assert_array_equal(sent.gold_prob(), matrix.gold_prob())
    np.testing.assert_array_equal(sent.scores, matrix.scores)
    np.testing.assert_array_equal(sent.subtask_codes, matrix.subtask_codes)
    assert sent.has_option_probs and list(sent.models) == list(matrix.models)
    binary = simulate(seed=2, n_models=20, n_items=50, with_option_probs=False)
    assert task_data(binary) is binary


def test_items_without_options_keep_their_scores_on_a_cluster():
    matrix = simulate(seed=3, n_models=12, n_items=20, n_subtasks=2)
    gold = np.array(matrix.gold)
    gold[::3] = -1  # generation items among multiple-choice ones
    mixed = type(matrix)(
        scores=matrix.scores, models=matrix.models, items=matrix.items, subtasks=matrix.subtasks, option_probs=matrix.option_probs, gold=gold
    )
    np.testing.assert_array_equal(task_data(mixed).gold_prob(), mixed.gold_prob())
    np.testing.assert_array_equal(mixed.gold_prob()[:, ::3], mixed.scores[:, ::3])
