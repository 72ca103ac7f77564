"""gp-IRT's lambda on a large pool: the held-out fit on VALIDATION_ITEMS items and the other items'
parameters given the training sources' abilities, against the held-out fit on the whole pool.

    python benchmarks/bench_gpirt_lambda.py --bias 6 [--real DATA_DIR]
    python benchmarks/bench_gpirt_lambda.py --estimates 20 [--real DATA_DIR [--force 250]]
    python benchmarks/bench_gpirt_lambda.py --cost 3

"Before" is the same code with ``VALIDATION_ITEMS`` at least the pool size (the whole-pool fit, with
its own stopping rule), so every comparison runs both in one one-thread process, alternating
(process CPU time; the machine may be shared, so read the ratios).

``--bias S``: ``pirt_bias`` (lambda's error, points) on the simulated 400 x 12,000 matrix of
MMLU-Pro's shape (bench_select.py's; its first 350 models, the sources of a held-out run) for
generator seeds 0..S-1, before and now, with its CPU seconds; and the same with 2 Newton steps or
2,000 items. With ``--real``: GPQA, MuSR and MATH-hard (pools under 1,000 items: unchanged), also
with the subset forced down to 250 items, to see the extension where the model misfits; and the two
real pools above 1,000 items (GSM8K, 41 x 1,319; MMLU-Pro, 31 x 12,032 with missing cells).

``--estimates R``: tinybenchmarks-gpirt at k = 10, 50, 100 on R held-out runs
(``mdad.assessment.held_out_runs``, every model but the targets as sources, the same splits for
both) of the simulated matrix and, with ``--real``, the real ones: the mean absolute error of the
targets' pool accuracy (points), the difference now - before paired over the runs with its
standard error, and lambda (mean over the runs) before and now. The real pools under 1,000 items
do not change; ``--force N`` runs them again with ``VALIDATION_ITEMS`` = N to see the new path on
them, and GSM8K (1,319 items, 41 models) takes it as it is.

``--cost R``: ``mdad select --size 100``'s work at 400 x 12,000: CPU seconds of the selection on
every model and per held-out run (seeds 0..R-1), before and now, and what the command takes on two
cores (the selection, then 20 runs shared by two workers).
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.methods import tinybenchmarks as tb

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_select import MODELS, SIZE, SUBTASKS, TEN_OPTIONS  # noqa: E402

REAL = ("oll2-gpqa", "oll2-musr", "oll2-math-hard")
LARGE_REAL = ("gsm8k-zeroeval", "mmlu-pro-tiger")  # pools above 1,000 items (few models; MMLU-Pro's with missing cells)
SIZES = (10, 50, 100)
METHOD = "tinybenchmarks-gpirt"


@contextmanager
def setting(**values):
    """tinybenchmarks' constants set to ``values`` for the block."""
    saved = {name: getattr(tb, name) for name in values}
    for name, value in values.items():
        setattr(tb, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(tb, name, value)


BEFORE = {"VALIDATION_ITEMS": 10**9}


def simulated():
    from mdad.data import simulate

    return simulate(seed=0, n_models=MODELS, n_items=12_000, n_subtasks=SUBTASKS, params=TEN_OPTIONS)


def real(data: Path | None, names=REAL):
    from mdad.data.npz import read_npz

    for name in names if data is not None else ():
        path = data / name / "responses.npz"
        if path.is_file():
            yield name, read_npz(path)


def timed_bias(scores: np.ndarray, seed: int, **values) -> tuple[float, float]:
    with setting(**values):
        start = time.process_time()
        found = tb.pirt_bias(scores, tb.DIMS, np.random.default_rng(seed))
        return 100 * found, time.process_time() - start


def biases(seeds: int, data: Path | None) -> None:
    matrices = [
        (
            "simulated 350 x 12,000",
            simulated().scores[:350].astype(float),
            {
                "3 Newton steps": {"ITEM_NEWTON_STEPS": 3},
                "500 items": {"VALIDATION_ITEMS": 500},
                "2,000 items": {"VALIDATION_ITEMS": 2000},
            },
        )
    ]
    matrices += [(name, matrix.scores.astype(float), {"subset of 250 items": {"VALIDATION_ITEMS": 250}}) for name, matrix in real(data)]
    matrices += [(name, matrix.scores.astype(float), {}) for name, matrix in real(data, LARGE_REAL)]
    for label, scores, variants in matrices:
        print(f"\n{label}: lambda's error (points) and CPU per seed")
        rows: dict[str, list[tuple[float, float]]] = {}
        for seed in range(seeds):
            rows.setdefault("before", []).append(timed_bias(scores, seed, **BEFORE))
            rows.setdefault("now", []).append(timed_bias(scores, seed))
            for name, values in variants.items():
                rows.setdefault(name, []).append(timed_bias(scores, seed, **values))
        before = np.array([b for b, _ in rows["before"]])
        for name, found in rows.items():
            bias, cpu = np.array([b for b, _ in found]), np.array([c for _, c in found])
            diff = bias - before
            print(
                f"  {name:22s} {' '.join(f'{b:.3f}' for b in bias)}  mean {bias.mean():.3f}, "
                f"- before {diff.mean():+.3f} +- {diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0:.3f}, CPU {cpu.mean():.2f} s",
                flush=True,
            )


def lambdas_and_errors(matrix, runs: int, **values) -> tuple[dict[int, np.ndarray], dict[int, float]]:
    from mdad.assessment import held_out_runs

    seen: dict[int, list[float]] = {}
    kept = tb.TinyPreparation.gpirt_lambda

    def recorded(self, k):
        value = kept(self, k)
        seen.setdefault(k, []).append(value)
        return value

    with setting(**values):
        tb.TinyPreparation.gpirt_lambda = recorded  # type: ignore[method-assign]
        try:
            found = held_out_runs(matrix, METHOD, SIZES, runs=runs)
        finally:
            tb.TinyPreparation.gpirt_lambda = kept  # type: ignore[method-assign]
    errors = {k: 100 * np.abs(found.estimates[k] - found.truths).mean(axis=1) for k in SIZES}
    return errors, {k: float(np.mean(v)) for k, v in seen.items()}


def estimates(runs: int, data: Path | None, force: int, with_simulated: bool = True) -> None:
    print(f"\n{'matrix':32s} {'k':>4s} {'error before':>12s} {'now':>7s} {'now - before (paired)':>22s} {'lambda before / now':>20s}")
    cases = [("simulated 400 x 12,000", simulated(), {})] if with_simulated else []
    cases += [(name, matrix, {}) for name, matrix in real(data, (*REAL, "gsm8k-zeroeval"))]
    if force:
        cases += [(f"{name}, subset of {force}", matrix, {"VALIDATION_ITEMS": force}) for name, matrix in real(data)]
    for label, matrix, values in cases:
        before, lam_before = lambdas_and_errors(matrix, runs, **BEFORE)
        now, lam_now = lambdas_and_errors(matrix, runs, **values)
        for k in SIZES:
            diff = now[k] - before[k]
            se = diff.std(ddof=1) / np.sqrt(len(diff))
            print(
                f"{label:32s} {k:4d} {before[k].mean():12.3f} {now[k].mean():7.3f} {diff.mean():+13.3f} +- {se:.3f} "
                f"{lam_before[k]:10.4f} / {lam_now[k]:.4f}",
                flush=True,
            )


def cost(runs: int) -> None:
    from mdad.assessment import assess
    from mdad.defaults import ASSESS_RUNS
    from mdad.micro.selected import select

    matrix = simulated()
    cpu = {"before": [0.0, 0.0], "now": [0.0, 0.0]}
    for label, values in (("before", BEFORE), ("now", {})):
        with setting(**values):
            start = time.process_time()
            select(matrix, METHOD, SIZE, seed=0)
            cpu[label][0] = time.process_time() - start
    for seed in range(runs):
        for label, values in (("before", BEFORE), ("now", {})):
            with setting(**values):
                start = time.process_time()
                assess(matrix, METHOD, SIZE, runs=1, seed=seed, workers=1)
                spent = time.process_time() - start
            cpu[label][1] += spent / runs
            print(f"  run {seed} {label:6s} {spent:.2f} s CPU", flush=True)
    total = {label: chosen + ASSESS_RUNS * run / 2 for label, (chosen, run) in cpu.items()}
    (bs, br), (ns, nr) = cpu["before"], cpu["now"]
    print(
        f"{METHOD}: selection {bs:.1f} / {ns:.1f} s, per run {br:.2f} / {nr:.2f} s, saved per run {br - nr:.2f} s; "
        f"2 cores {total['before']:.0f} / {total['now']:.0f} s ({total['before'] / total['now']:.2f}x); "
        f"CPU of selection + 20 runs {bs + ASSESS_RUNS * br:.0f} / {ns + ASSESS_RUNS * nr:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", type=Path, default=None, help="folder of the real datasets (oll2-gpqa, ...)")
    parser.add_argument("--bias", type=int, default=0, metavar="S")
    parser.add_argument("--estimates", type=int, default=0, metavar="R")
    parser.add_argument("--cost", type=int, default=0, metavar="R")
    parser.add_argument("--real-only", action="store_true", help="with --estimates: the real matrices only")
    parser.add_argument("--force", type=int, default=0, metavar="N", help="with --estimates: the real matrices again with VALIDATION_ITEMS = N")
    args = parser.parse_args()
    with threadpool_limits(1):
        if args.bias:
            biases(args.bias, args.real)
        if args.estimates:
            estimates(args.estimates, args.real, args.force, not args.real_only)
        if args.cost:
            cost(args.cost)


if __name__ == "__main__":
    main()
