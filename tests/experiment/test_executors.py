"""What the executors send to workers."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest
from support.waiting import wait_until

from mdad.data import simulate
from mdad.errors import MdadError
from mdad.experiment.executors import execute, task_data


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


def _wait_for_go(folder, splits, task):
    """A task that says it has started, then waits for the parent's go (the file 'go')."""
    (folder / f"started-{task}").write_text("")
    wait_until(lambda: (folder / "go").exists(), "the parent's go")
    return task * 10


def test_this_process_works_meanwhile_while_the_workers_run_the_tasks(tmp_path):
    """``meanwhile`` runs here once every task is handed to the workers: it sees a task started (the
    workers are running) and only then lets the tasks finish; every result comes back once."""

    def meanwhile():
        wait_until(lambda: list(tmp_path.glob("started-*")), "a worker to start a task")
        (tmp_path / "go").write_text("")

    found = dict(execute(_wait_for_go, tmp_path, None, [1, 2, 3], workers=2, meanwhile=meanwhile))
    assert found == {1: 10, 2: 20, 3: 30}


@pytest.mark.parametrize("error", [MdadError("the selection failed"), KeyboardInterrupt()], ids=["error", "interrupt"])
def test_an_error_meanwhile_stops_the_workers_and_reaches_the_caller(tmp_path, error):
    """The tasks wait for a go that never comes; an error or an interrupt (Ctrl-C, SIGTERM) of the work
    done meanwhile ends them at once and reaches the caller."""
    before = {child.pid for child in multiprocessing.active_children()}

    def meanwhile():
        wait_until(lambda: list(tmp_path.glob("started-*")), "a worker to start a task")
        raise error

    with pytest.raises(type(error)):
        list(execute(_wait_for_go, tmp_path, None, [1, 2], workers=2, meanwhile=meanwhile))
    assert {child.pid for child in multiprocessing.active_children()} <= before


@pytest.mark.parametrize("method", ["tinybenchmarks-gpirt", "anchor-points"])
def test_select_chooses_the_same_items_and_numbers_with_the_workers_running_meanwhile(method):
    """``build_selection`` chooses the items in this process while workers run the held-out runs: the file's
    items, weights and assessment are those of one worker, which chooses first."""
    from mdad.micro.selection import build_selection

    matrix = simulate(seed=5, n_models=40, n_items=120, n_subtasks=2)
    one, two = (build_selection(matrix, method, 10, seed=3, runs=4, workers=w) for w in (1, 2))
    assert one.chosen.to_json() == two.chosen.to_json()
