"""`select --scheduler`: the assessment's held-out runs on a Dask cluster, the same numbers as local processes;
the option is refused where there is nothing to send."""

from __future__ import annotations

import json

import pytest
from support.cli_checks import runner
from support.waiting import DASK_TIMEOUTS

from mdad.cli import app
from mdad.data import write_npz


@pytest.fixture
def data(small_sim, tmp_path):
    path = tmp_path / "sim.npz"
    write_npz(small_sim.take(models=list(range(60))), path)
    return path


def test_select_sends_its_held_out_runs_to_a_dask_cluster_with_the_same_assessment(data, tmp_path):
    dask = pytest.importorskip("dask", reason="Dask is an optional extra: pip install 'mdad[dask]'")
    distributed = pytest.importorskip("distributed", reason="Dask is an optional extra: pip install 'mdad[dask]'")
    common = ["select", "--data", str(data), "--method", "anchor-points", "--size", "20", "--assess-runs", "4"]
    local = runner.invoke(app, [*common, "--out", str(tmp_path / "local.json"), "--workers", "1"])
    assert local.exit_code == 0, local.output
    with (
        dask.config.set(DASK_TIMEOUTS),
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
    ):
        remote = runner.invoke(app, [*common, "--out", str(tmp_path / "remote.json"), "--scheduler", cluster.scheduler_address])
    assert remote.exit_code == 0, remote.output
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):  # the option is used: no cluster there, one sentence
        unreachable = runner.invoke(app, [*common, "--out", str(tmp_path / "none.json"), "--scheduler", "tcp://127.0.0.1:9"])
    assert unreachable.exit_code == 2 and "Cannot reach the Dask scheduler at tcp://127.0.0.1:9" in " ".join(unreachable.output.split())
    assert not (tmp_path / "none.json").exists()
    there, here = (json.loads((tmp_path / name).read_text()) for name in ("remote.json", "local.json"))
    assert there["items"] == here["items"]
    assert there["assessment"] == here["assessment"]  # the same runs: the same error, MDAD and calibrations


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--scheduler", "http://host:8786"], "is not a scheduler address"),
        (["--scheduler", "tcp://127.0.0.1:9", "--workers", "2"], "give one of them"),
        (["--scheduler", "tcp://127.0.0.1:9", "--assess-runs", "0"], "--assess-runs 0 asks for none; drop --scheduler"),
    ],
)
def test_select_refuses_a_scheduler_it_cannot_use(data, tmp_path, extra, said):
    out = tmp_path / "m.json"
    done = runner.invoke(app, ["select", "--data", str(data), "--method", "random", "--size", "10", "--out", str(out), *extra])
    assert done.exit_code == 2 and said in " ".join(done.output.split()) and "Traceback" not in done.output
    assert not out.exists()
