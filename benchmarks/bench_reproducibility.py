"""The same seed, the same micro-benchmark: whole commands under several BLAS kernels and worker counts.

    python benchmarks/bench_reproducibility.py [--dataset gpqa] [--runs 5] [--keep DIR]
    python benchmarks/bench_reproducibility.py --smoke      # one kernel, 1 against 2 threads and workers, random

Runs `mdad run` (every method, the adaptive family and aipw included, and a per-subtask
variant) and `mdad select` for every method as a user would, once per configuration: each
OpenBLAS kernel that runs on this CPU (``OPENBLAS_CORETYPE``; the first is also run with 1 and
2 BLAS threads) with ``--workers 1`` and ``--workers 2``. It then compares every configuration's
files with the first one's, byte for byte: the chosen items (`micro.json`'s item ids, and the
adaptive tests' first item), `summary.csv`, `curves.csv` and `table.csv`, `report.html` (but for
the command it names, whose output folder and ``--workers`` differ), and every cell's estimates
(`cells/`; the largest difference when their bytes differ). Prints one table
(docs/reproducibility.md says what is guaranteed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import suite

from mdad import methods as method_registry
from mdad.micro import SelectedMicroBenchmark

KERNELS = ("Haswell", "SkylakeX", "Sandybridge", "Nehalem", "Prescott")
MDAD = [sys.executable, "-m", "mdad.cli"]


def architecture(kernel: str) -> str | None:
    """The OpenBLAS kernel a process runs with ``OPENBLAS_CORETYPE=kernel`` (None: it does not run here)."""
    probe = (
        "import numpy, threadpoolctl; a = numpy.arange(4096.0).reshape(64, 64); a @ a; "
        "print(next((i.get('architecture') for i in threadpoolctl.threadpool_info() "
        "if i.get('internal_api') == 'openblas'), ''))"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, OPENBLAS_CORETYPE=kernel), capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def mdad(args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(MDAD + args, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"mdad {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def configuration(folder: Path, dataset: str, runs: int, kernel: str, threads: int, workers: int, chosen: list[str]) -> Path:
    """Every command of one configuration (``chosen`` methods), its outputs in ``folder``."""
    env = dict(os.environ, OPENBLAS_CORETYPE=kernel, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    methods = [*chosen, "anchor-points@per-subtask"]
    mdad(
        [
            "run",
            "--dataset",
            dataset,
            "--methods",
            ",".join(methods),
            "--sizes",
            "10,50",
            "--runs",
            str(runs),
            "--workers",
            str(workers),
            "--out",
            str(folder / "run"),
        ],
        env,
    )
    for method in chosen:
        mdad(
            [
                "select",
                "--dataset",
                dataset,
                "--method",
                method,
                "--size",
                "25",
                "--assess-runs",
                "3",
                "--workers",
                str(workers),
                "--out",
                str(folder / f"select-{method}.json"),
            ],
            env,
        )
    return folder


def chosen_items(path: Path) -> list[str]:
    """The item ids a micro-benchmark file chose; for an adaptive test, the first item it asks."""
    micro = SelectedMicroBenchmark.load(path)
    return [micro.first_item()] if micro.adaptive else micro.item_ids.tolist()


def numbers(value: object, path: str = "") -> dict[str, float]:
    """Every number of a JSON value by its path."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in numbers(item, f"{path}.{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in numbers(item, f"{path}[{i}]").items()}
    return {path: float(value)} if isinstance(value, (int, float)) and not isinstance(value, bool) else {}


def file_differences(first: Path, other: Path) -> tuple[set[str], float]:
    """The fields whose numbers differ between two JSON files, and the largest relative difference."""
    if first.read_bytes() == other.read_bytes():
        return set(), 0.0
    a, b = numbers(json.loads(first.read_text())), numbers(json.loads(other.read_text()))
    moved = {k: abs(a[k] - b[k]) / max(abs(a[k]), 1e-300) for k in a if k in b and a[k] != b[k]}
    return {re.sub(r"\[\d+\]", "", k).strip(".") for k in moved}, max(moved.values(), default=0.0)


def compare(first: Path, other: Path) -> dict[str, str]:
    """Per kind of output: 'identical', or how it differs from ``first``."""
    out = {}
    same_items = [chosen_items(path) == chosen_items(other / path.name) for path in sorted(first.glob("select-*.json"))]
    out["select: chosen items"] = "identical" if all(same_items) else f"{same_items.count(False)} methods differ"
    files = [file_differences(path, other / path.name) for path in sorted(first.glob("select-*.json"))]
    fields = sorted(set().union(*(moved for moved, _ in files)))
    out["select: other numbers of micro.json"] = (
        "identical"
        if not fields
        else f"{sum(1 for moved, _ in files if moved)} of {len(files)} files: {', '.join(fields)} by at most "
        f"{max(rel for _, rel in files):.0e} (relative)"
    )
    for name in ("summary.csv", "curves.csv", "table.csv"):
        same = (first / "run" / name).read_bytes() == (other / "run" / name).read_bytes()
        out[f"run: {name}"] = "identical" if same else "bytes differ"
    pages = [
        re.sub(r"--workers \d+", "--workers N", (folder / "run" / "report.html").read_text().replace(str(folder), "DIR")) for folder in (first, other)
    ]
    out["run: report.html"] = "identical" if pages[0] == pages[1] else "differs"
    cells = sorted((first / "run" / "cells").rglob("*.parquet"))
    differing, largest = 0, 0.0
    for path in cells:
        twin = other / "run" / path.relative_to(first / "run")
        if path.read_bytes() != twin.read_bytes():
            differing += 1
            a, b = pd.read_parquet(path), pd.read_parquet(twin)
            numeric = a.select_dtypes("number").columns
            largest = max(largest, float(np.nanmax(np.abs(a[numeric].to_numpy() - b[numeric].to_numpy()))))
    out["run: cells"] = "identical" if not differing else f"{differing} of {len(cells)} files' bytes differ, estimates by at most {largest:.1e}"
    return out


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--dataset", default="gpqa")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--methods", default=None, help="comma-separated (default: every registered method)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the outputs here (default: a temporary folder)")
    args = parser.parse_args()
    chosen = args.methods.split(",") if args.methods else method_registry.available()
    kernels = [kernel for kernel in KERNELS if architecture(kernel) == kernel][:3]
    if not kernels:
        raise SystemExit("numpy does not use OpenBLAS here: there are no kernels to compare.")
    configs = [(kernels[0], 1, 1), (kernels[0], 2, 2)] + [(kernel, 1, workers) for kernel in kernels[1:] for workers in (1, 2)]
    if args.smoke:  # one kernel, 1 thread and worker against 2 of each; random alone, one run
        configs, chosen, args.runs = configs[:2], ["random"], 1
    with suite.Session("bench_reproducibility", args) as session, suite.folder(args.keep) as root:
        folders = []
        for kernel, threads, workers in configs:
            folder = root / f"{kernel}-threads{threads}-workers{workers}"
            print(f"running {folder.name} ...", file=sys.stderr, flush=True)
            timing = suite.measure(lambda: folders.append(configuration(folder, args.dataset, args.runs, kernel, threads, workers, chosen)))  # noqa: B023
            session.add(folder.name, wall_s=timing.wall, cpu_s=timing.cpu)
        rows = {folder.name: compare(folders[0], folder) for folder in folders[1:]}
        for name, row in rows.items():
            session.add(f"{name} against {folders[0].name}", identical=all(value == "identical" for value in row.values()), **row)
    table = pd.DataFrame(rows).T
    print(f"{args.dataset}, {args.runs} runs; every configuration against {folders[0].name}:\n")
    print("| configuration | " + " | ".join(table.columns) + " |")
    print("|---" * (len(table.columns) + 1) + "|")
    for name, row in table.iterrows():
        print(f"| {name} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
