"""The grid end to end: reproducibility, workers, the store, and the GPQA numbers against brute force."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from support.naive_metrics import naive_kendall_tau_b, naive_mdad
from support.waiting import BOUND, DASK_TIMEOUTS, ctrl_c_as_in_a_terminal

from mdad.errors import MdadError
from mdad.experiment import grid
from mdad.experiment.evaluate import cell_arrays, evaluate_cell
from mdad.experiment.grid import Experiment, ExperimentConfig, plan_tasks
from mdad.experiment.splits import make_splits
from mdad.experiment.store import Cell, ResultStore

RANDOMS = ("random", "random-stratified-equal", "random-stratified-proportional")


def test_same_results_whatever_the_number_of_workers(small_sim):
    config = ExperimentConfig(methods=RANDOMS, sizes=(10, 40), sources=(20, 60), runs=6, targets=15, seed=3)
    one = Experiment(small_sim, config).run(workers=1).frames
    two = Experiment(small_sim, config).run(workers=2).frames
    assert one.keys() == two.keys()
    for cell in one:
        pd.testing.assert_frame_equal(one[cell], two[cell])


def test_model_based_methods_give_the_same_results_whatever_the_workers(small_sim):
    """k-means, k-medoids, the DPP and the IRT fit run with one thread per worker but all cores in
    one process: the numbers must not depend on it."""
    methods = ("stratified-confidence", "anchor-points", "diversity", "tinybenchmarks-gpirt")
    config = ExperimentConfig(methods=methods, sizes=(10, 60), sources=(60,), runs=4, targets=15, seed=7)
    one = Experiment(small_sim, config).run(workers=1).frames
    two = Experiment(small_sim, config).run(workers=2).frames
    for cell in one:
        pd.testing.assert_frame_equal(one[cell], two[cell])


WORKER_THREADS_SCRIPT = """
import json, sys
from threadpoolctl import threadpool_info
from mdad.data import simulate
from mdad.experiment.executors import execute
from mdad.experiment.grid import ExperimentConfig, plan_tasks
from mdad.experiment.splits import make_splits

def worker_threads(matrix, splits, task, on_run=None):
    import sklearn.cluster  # loads its OpenMP runtime inside the worker, as a task does
    return max(pool["num_threads"] for pool in threadpool_info())

if __name__ == "__main__":
    assert "sklearn" not in sys.modules
    matrix = simulate(seed=0, n_models=30, n_items=40, n_subtasks=2)
    splits = make_splits(matrix, runs=2, n_targets=10)
    tasks = plan_tasks(ExperimentConfig(methods="random", sizes=10, sources=10, runs=2, targets=10), runs_per_task=1)
    print(json.dumps([threads for _, threads in execute(worker_threads, matrix, splits, tasks, 2)]))
"""


def test_worker_processes_share_the_cores_instead_of_each_taking_all(tmp_path):
    """With as many workers as cores, each worker's BLAS / OpenMP pools get one thread, also
    those of libraries a task loads later: otherwise every worker's k-means starts one thread
    per core. Run in a fresh interpreter, where scikit-learn is not loaded before the workers start."""
    script = tmp_path / "workers.py"
    script.write_text(WORKER_THREADS_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    assert json.loads(done.stdout) == [max(1, (os.cpu_count() or 1) // 2)] * 2


def test_methods_share_splits_and_truths(small_sim):
    config = ExperimentConfig(methods=RANDOMS, sizes=(10,), sources=(50,), runs=4, targets=12, seed=0)
    frames = Experiment(small_sim, config).run().frames
    first = frames[Cell("random", 10, 50)]
    for frame in frames.values():
        assert frame[["run", "model", "seen", "unseen", "full"]].equals(first[["run", "model", "seen", "unseen", "full"]])


def test_plain_mean_estimates_are_averages_and_full_size_is_exact(small_sim):
    n_seen = make_splits(small_sim, runs=1, n_targets=10).n_seen
    assert n_seen == sum(n // 2 for n in np.bincount(small_sim.subtask_codes))
    frames = Experiment(small_sim, ExperimentConfig(methods=("random",), sizes=(7, n_seen), sources=(30,), runs=5, targets=10)).run().frames
    k7 = frames[Cell("random", 7, 30)]
    np.testing.assert_allclose(k7["estimate"] * 7, np.round(k7["estimate"] * 7), atol=1e-9)
    full = frames[Cell("random", n_seen, 30)]
    np.testing.assert_allclose(full["estimate"], full["seen"], atol=1e-12)


def test_bad_requests_are_refused_before_any_work(small_sim):
    with pytest.raises(MdadError, match="Size 500 is larger than the pool of 199"):
        Experiment(small_sim, ExperimentConfig(methods=("random",), sizes=(500,), sources=(30,), runs=2, targets=10))
    with pytest.raises(MdadError, match="Unknown method 'anchor'"):
        ExperimentConfig(methods=("anchor",), sizes=(10,))
    with pytest.raises(MdadError, match="200 source models were asked for"):
        Experiment(small_sim, ExperimentConfig(methods=("random",), sizes=(10,), sources=(200,), runs=2, targets=10))


def test_store_skips_finished_cells_and_refuses_other_experiments(small_sim, tmp_path):
    config = ExperimentConfig(methods=RANDOMS, sizes=(10, 20), sources=(30,), runs=3, targets=10, seed=1)
    store = ResultStore(tmp_path)
    Experiment(small_sim, config, store=store).run()
    assert len(store.cells()) == 6
    stamps = {c: (tmp_path / c.relative_path).stat().st_mtime_ns for c in store.cells()}
    bigger = ExperimentConfig(methods=RANDOMS, sizes=(10, 20, 40), sources=(30,), runs=3, targets=10, seed=1)
    experiment = Experiment(small_sim, bigger, store=store)
    assert [t.sizes for t in experiment.pending_tasks()] == [(40,)] * 3
    new = experiment.run().frames
    assert set(new) == {Cell(m, k, 30) for m in RANDOMS for k in (10, 20, 40)}  # stored cells are read, not rerun
    assert all((tmp_path / c.relative_path).stat().st_mtime_ns == t for c, t in stamps.items())
    with pytest.raises(MdadError, match="different experiment \\(seed"):
        Experiment(small_sim, ExperimentConfig(methods=RANDOMS, sizes=(10,), sources=(30,), runs=3, targets=10, seed=2), store=store).run()


def test_tasks_group_methods_sharing_a_preparation():
    config = ExperimentConfig(methods=RANDOMS, sizes=(10, 20), sources=(30, 60))
    tasks = plan_tasks(config)
    assert len(tasks) == 6 and all(len(t.methods) == 1 for t in tasks)
    done = {Cell("random", 10, 30), Cell("random", 20, 30)}
    assert len(plan_tasks(config, done.__contains__)) == 5


def test_gpqa_random_mdad_decreases_with_size_and_matches_brute_force(gpqa):
    sizes = (10, 25, 50, 100, 200)
    config = ExperimentConfig(methods=("random",), sizes=sizes, sources=(300,), runs=50, targets=50, seed=0)
    frames = Experiment(gpqa, config).run().frames
    values = []
    for k in sizes:
        cell = Cell("random", k, 300)
        rows, _ = evaluate_cell(cell, frames[cell])
        seen = next(r for r in rows if r["view"] == "seen")
        arrays = cell_arrays(frames[cell])
        assert seen["mdad"] == naive_mdad(arrays["estimate"], arrays["seen"])
        taus = [naive_kendall_tau_b(e, t) for e, t in zip(arrays["estimate"], arrays["seen"], strict=True)]
        assert seen["kendall_tau"] == pytest.approx(np.mean(taus))
        assert seen["error"] == pytest.approx(np.mean(np.abs(arrays["estimate"] - arrays["seen"])))
        values.append(seen["mdad"])
    assert all(a >= b for a, b in pairwise(values)), values
    assert values[0] >= 10 and values[-1] <= 5, values


def test_dask_cluster_gives_the_same_results(small_sim):
    dask = pytest.importorskip("dask", reason="Dask is an optional extra: pip install 'mdad[dask]'")
    distributed = pytest.importorskip("distributed", reason="Dask is an optional extra: pip install 'mdad[dask]'")
    config = ExperimentConfig(methods=RANDOMS, sizes=(10, 40), sources=(20, 60), runs=4, targets=15, seed=9)
    local = Experiment(small_sim, config).run().frames
    with (
        dask.config.set(DASK_TIMEOUTS),
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
    ):
        remote = Experiment(small_sim, config).run(scheduler=cluster.scheduler_address).frames
    assert local.keys() == remote.keys()
    for cell in local:
        pd.testing.assert_frame_equal(local[cell], remote[cell])


def test_unreachable_scheduler_is_one_sentence(small_sim):
    dask = pytest.importorskip("dask", reason="Dask is an optional extra")
    pytest.importorskip("distributed", reason="Dask is an optional extra")
    config = ExperimentConfig(methods=("random",), sizes=(10,), sources=(20,), runs=2, targets=10)
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "2s"}),
        pytest.raises(MdadError, match="Cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
    ):
        Experiment(small_sim, config).run(scheduler="tcp://127.0.0.1:9")


def test_blocks_of_runs_give_the_same_cells(small_sim, tmp_path):
    config = ExperimentConfig(methods=("random", "anchor-points"), sizes=(10, 30), sources=(40,), runs=7, targets=12, seed=2)
    whole = Experiment(small_sim, config).run().frames
    tasks = plan_tasks(config, runs_per_task=3)
    assert [(t.first_run, t.stop_run) for t in tasks] == [(0, 3), (3, 6), (6, 7)] * 2
    store = ResultStore(tmp_path)
    blocked = Experiment(small_sim, config, store=store).run(runs_per_task=3).frames
    assert blocked.keys() == whole.keys() and len(store.cells()) == 4
    for cell in whole:
        pd.testing.assert_frame_equal(blocked[cell], whole[cell])
        pd.testing.assert_frame_equal(store.read(cell), whole[cell])


def test_an_interrupted_run_keeps_every_finished_block_of_runs(small_sim, tmp_path):
    """Kill the run inside its third block of 5 runs: the first two blocks are kept and not recomputed."""
    config = ExperimentConfig(methods=("random", "anchor-points"), sizes=(10,), sources=(40,), runs=20, targets=12, seed=5)
    clean = Experiment(small_sim, config).run().frames
    store = ResultStore(tmp_path)
    done_runs = []

    def stop_in_third_block(cells):
        done_runs.append(cells)
        if len(done_runs) == 12:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Experiment(small_sim, config, store=store).run(on_cells=stop_in_third_block)
    assert store.cells() == []
    kept = sorted(str(p.relative_to(tmp_path / "cells")) for p in tmp_path.glob("cells/*/partial/*.npy"))
    assert kept == ["random/partial/k10-s40-r0-5.npy", "random/partial/k10-s40-r5-10.npy"]  # tasks run in order

    computed = []
    original = grid.run_task

    def counting_run_task(matrix, splits, task, on_run=None):
        computed.append((task.methods[0], task.first_run, task.stop_run))
        return original(matrix, splits, task, on_run)

    progress = []
    with mock.patch.object(grid, "run_task", counting_run_task):
        resumed = Experiment(small_sim, config, store=store).run(on_cells=progress.append).frames
    blocks = [(0, 5), (5, 10), (10, 15), (15, 20)]
    assert computed == [("random", 10, 15), ("random", 15, 20)] + [("anchor-points", *b) for b in blocks]
    assert sum(progress) == pytest.approx(2.0)  # the two cells, stored blocks included
    assert not list(tmp_path.glob("cells/*/partial"))
    for cell, frame in clean.items():
        pd.testing.assert_frame_equal(resumed[cell], frame)
        pd.testing.assert_frame_equal(store.read(cell), frame)


def test_one_method_size_or_source_count_may_be_given_alone():
    config = ExperimentConfig(methods="random", sizes=10, sources=30, runs=2, targets=10)
    assert (config.methods, config.sizes, config.sources) == (("random",), (10,), (30,))
    assert ExperimentConfig(methods=["random"], sizes=[10, 20], sources=[30]).sizes == (10, 20)


def test_blocks_left_beside_a_finished_cell_are_removed_on_resume(small_sim, tmp_path):
    """A run killed after writing a cell but before removing its blocks leaves both: the next run tidies up."""
    config = ExperimentConfig(methods="random", sizes=10, sources=40, runs=10, targets=12, seed=5)
    store = ResultStore(tmp_path)
    Experiment(small_sim, config, store=store).run()
    cell = Cell("random", 10, 40)
    store.write_block(cell, 0, 5, np.zeros((5, 12)))  # as a kill at that moment leaves it
    assert store.n_blocks() == 1
    again = Experiment(small_sim, config, store=store)
    again.open_store()
    assert store.n_blocks() == 0 and store.has(cell)


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs (not gone, not a zombie awaiting its parent)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0]
    except (FileNotFoundError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return not Path("/proc").is_dir()
    return state != "Z"


def test_an_interruption_between_results_stops_the_workers_at_once(small_sim, tmp_path):
    """Ctrl-C can land while the parent stores a finished block: the workers must stop then, not
    linger (ignoring Ctrl-C) until the interpreter exits."""
    import multiprocessing

    config = ExperimentConfig(methods=("random", "anchor-points"), sizes=(10,), sources=(40,), runs=40, targets=12, seed=5)
    store = ResultStore(tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    earlier = set(multiprocessing.active_children())  # children of earlier tests that may still be exiting
    release = multiprocessing.Event()  # another child of the user's program, running until this test ends
    bystander = multiprocessing.Process(target=release.wait, args=(BOUND,))
    bystander.start()
    try:
        with mock.patch.object(store, "write_block", interrupted), pytest.raises(KeyboardInterrupt):
            Experiment(small_sim, config, store=store).run(workers=2)
        # the workers are gone (asked of the system: a Process object can miss that its process was reaped)
        assert not [child for child in set(multiprocessing.active_children()) - earlier - {bystander} if running(child.pid)]
        assert bystander.is_alive() and running(bystander.pid)  # the bystander is not
    finally:
        release.set()
        bystander.join()


def test_ctrl_c_during_a_store_write_lands_after_it():
    """A Ctrl-C that arrives while a result file is written is held until the write is done."""
    from mdad.experiment.store import uninterrupted

    finished = []
    with ctrl_c_as_in_a_terminal(), pytest.raises(KeyboardInterrupt), uninterrupted():
        signal.raise_signal(signal.SIGINT)  # delivered to this thread before the call returns
        finished.append(True)
    assert finished == [True]
