"""Fit py-irt's multidimensional 2PL to a response matrix; run inside an environment with py-irt.

Reads ``responses`` (models x items, NaN = held out) from an npz file, trains exactly as the
tinyBenchmarks reference does (multidim_2pl, hierarchical priors, lr 0.1, seed 42,
deterministic), and writes the fitted point estimates and the training time (wall clock and
process CPU) to another npz.
py-irt's logit is sum_d disc_d * (ability_d - diff_d). py-irt's SVI can stop on a NaN
(invalid Gamma parameters); the output then holds the best parameters before the failure,
the number of epochs done and the error, so the benchmark can say so.

    python pyirt_fit.py IN.npz OUT.npz --dims 10 --epochs 2000 --threads 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyro
import torch
from py_irt.config import IrtConfig
from py_irt.dataset import Dataset
from py_irt.training import IrtModelTrainer
from pyro.infer import SVI


def to_dataset(responses: np.ndarray) -> Dataset:
    """py-irt's long format: one observation per evaluated cell, ids q{j} and s{i}."""
    rows, cols = np.nonzero(~np.isnan(responses))
    n_models, n_items = responses.shape
    return Dataset(
        item_ids={f"q{j}" for j in range(n_items)},
        subject_ids={f"s{i}" for i in range(n_models)},
        item_id_to_ix={f"q{j}": j for j in range(n_items)},
        ix_to_item_id={j: f"q{j}" for j in range(n_items)},
        subject_id_to_ix={f"s{i}": i for i in range(n_models)},
        ix_to_subject_id={i: f"s{i}" for i in range(n_models)},
        observation_subjects=rows.tolist(),
        observation_items=cols.tolist(),
        observations=responses[rows, cols].astype(float).tolist(),
        training_example=[True] * len(rows),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--dims", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=2000)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    pyro.set_rng_seed(args.seed)
    done = [0]
    step = SVI.step

    def counted_step(self, *a, **k):
        loss = step(self, *a, **k)
        done[0] += 1
        return loss

    SVI.step = counted_step
    responses = np.load(args.input)["responses"]
    config = IrtConfig(
        model_type="multidim_2pl",
        dims=args.dims,
        lr=args.lr,
        epochs=args.epochs,
        priors="hierarchical",
        seed=args.seed,
        deterministic=True,
        log_every=200,
    )
    start, cpu_start = time.perf_counter(), time.process_time()
    trainer = IrtModelTrainer(data_path=None, config=config, dataset=to_dataset(responses), verbose=False)
    error = ""
    try:
        trainer.train(epochs=args.epochs, device="cpu")
    except ValueError as exc:
        error = str(exc).splitlines()[0]
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    best = trainer.best_params
    np.savez(
        args.output,
        ability=np.array(best["ability"]),
        diff=np.array(best["diff"]),
        disc=np.array(best["disc"]),
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        epochs=done[0],
        threads=args.threads,
        seed=args.seed,
        error=error,
    )
    print(f"py-irt: {done[0]} epochs in {seconds:.1f} s ({cpu_seconds:.1f} s CPU){'; stopped: ' + error if error else ''}")


if __name__ == "__main__":
    main()
