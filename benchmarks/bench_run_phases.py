"""The timeline of `mdad run` on the paper's GPQA grid (parent and workers), and paired wall times against a base commit.

    python benchmarks/bench_run_phases.py --timeline [--workers 2]
    python benchmarks/bench_run_phases.py --pairs 10 --base REV [--workers 2]

``--timeline`` runs the command of ``bench_gpqa_paper.py`` once in a fresh interpreter whose functions of
interest are wrapped as their modules are imported (an import hook, so the order of the imports is the
command's own) and prints, per process, what ran when, in seconds from the moment the interpreter was
started, with each process's CPU time so far (a worker's tasks of one kind on one line); then each parallel
phase's span (the cells, the evaluation, the report's sections) and the cores its workers kept busy. The
marks are written with one ``write`` per line to a file that every process appends to; ``time.perf_counter``
is one clock for the parent and its forked workers.

``--pairs N --base REV [--new REV2]`` alternates N times the command from ``REV``'s ``src`` (exported with
``git archive``) and from this checkout's (or ``REV2``'s), each time in a fresh output folder, and prints the medians of wall and
CPU time and the median of the per-pair ratio (base / new): on a machine other work shares, alternating
exposes both to the same load. Both write to the same folder (the report shows the command, and with it
the folder); the outputs of the last pair (summary.csv, report.html, table.csv, curves.csv) are compared
byte for byte.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METHODS = "random,random-stratified-equal,random-stratified-proportional,stratified-confidence,anchor-points,diversity"
OUTPUTS = ("summary.csv", "curves.csv", "table.csv", "report.html")

# module -> (attribute path, label): the functions whose calls the timeline shows
MARKS = {
    "mdad.cli": [("_commands", "import the command's modules")],
    "mdad.cli.common": [("load_matrix", "load the data")],
    "mdad.cli.run": [("print_start", "print what will run"), ("print_results", "print the results")],
    "mdad.workflow": [("_load_report", "import the report's modules")],
    "mdad.experiment.grid": [("Experiment.open_store", "open the store"), ("_truths", "targets' true accuracies")],
    "mdad.experiment.executors": [("_init_worker", "worker start"), ("_run_in_worker", "task"), ("_call_item", "item")],
    "mdad.experiment.evaluate": [("evaluate_store_with", "evaluation (parent)"), ("evaluate_cell", "evaluate a cell")],
    "mdad.report.trust": [("cell_trust", "trust checks of a cell")],
    "mdad.report.analytic": [("exact_curves_of_run", "exact curves"), ("exact_mdads", "exact MDADs"), ("exact_mdad_table", "exact table")],
    "mdad.report.html": [("build_outputs", "report (parent)"), ("_rendered", "draw a section's figures"), ("_write_figures", "write figures")],
    "jinja2.environment": [("Template.render", "render the HTML")],
}

DRIVER = r"""
import os, sys, time, functools, importlib.abc, importlib.machinery
T0 = float(sys.argv[1]); LOG = sys.argv[2]; MARKS = eval(sys.argv[3]); sys.argv = ["mdad", *sys.argv[4:]]
fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
def mark(label, start, end):
    cpu = time.process_time()
    os.write(fd, f"{os.getpid()}\t{os.getppid()}\t{label}\t{start - T0:.4f}\t{end - T0:.4f}\t{cpu:.3f}\n".encode())
mark("interpreter and driver", T0, time.perf_counter())
def wrapped(func, label):
    @functools.wraps(func)
    def inner(*args, **kwargs):
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            name = label
            if label == "item" and args:
                name = "item: " + getattr(args[0], "__qualname__", "?")
            mark(name, start, time.perf_counter())
    return inner
def patch(module):
    for path, label in MARKS.get(module.__name__, ()):
        owner, *rest = path.split(".")
        if rest:
            cls = getattr(module, owner)
            setattr(cls, rest[0], wrapped(getattr(cls, rest[0]), label))
        else:
            setattr(module, owner, wrapped(getattr(module, owner), label))
class Loader(importlib.abc.Loader):
    def __init__(self, inner): self.inner = inner
    def create_module(self, spec): return self.inner.create_module(spec)
    def exec_module(self, module):
        self.inner.exec_module(module); patch(module)
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in MARKS: return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None: spec.loader = Loader(spec.loader)
        return spec
sys.meta_path.insert(0, Finder())
import atexit
atexit.register(lambda: mark("exit", time.perf_counter(), time.perf_counter()) if os.getpid() == PARENT else None)
PARENT = os.getpid()
from mdad.cli import main
main()
"""


def command(out: Path, workers: int) -> list[str]:
    return ["run", "--dataset", "gpqa", "--methods", METHODS, "--runs", "50", "--sources", "300", "--out", str(out), "--workers", str(workers)]


def environment(src: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(src))


def timeline(workers: int, tmp: Path) -> None:
    log = tmp / "marks.tsv"
    out = tmp / "out"
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, repr(start), str(log), repr(MARKS), *command(out, workers)],
        env=environment(ROOT / "src"),
        capture_output=True,
        text=True,
        check=False,
    )
    end = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"mdad run failed:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    rows = [line.split("\t") for line in log.read_text().splitlines()]
    parent = int(rows[0][0])
    print(f"wall {end:.2f} s (from before the interpreter's start to the command's end), CPU of the whole command {cpu_of_children():.2f} s")
    for pid in dict.fromkeys(int(r[0]) for r in rows):
        marks = sorted(((float(r[3]), float(r[4]), float(r[5]), r[2]) for r in rows if int(r[0]) == pid), key=lambda m: m[0])
        if pid != parent:  # a worker: its tasks, without what each task contains, consecutive ones of a kind on one line
            items = any(label.startswith("item") for *_, label in marks)
            marks = [m for m in marks if m[3] in ("worker start", "task") or (items and m[3].startswith("item"))]
            marks = [m for m in marks if not (items and m[3] == "task")]
        print(f"\n{'parent' if pid == parent else f'worker {pid}'}:")
        for group in runs_of(marks):
            first, last = group[0], group[-1]
            busy = sum(e - s for s, e, _, _ in group)
            count = f" x{len(group)}" if len(group) > 1 else ""
            print(f"  {first[0]:6.2f} - {last[1]:6.2f}  busy {busy:5.2f} s  CPU so far {last[2]:5.2f} s  {first[3]}{count}")
    print(f"  {end:6.2f}  the command's end (after the interpreter's exit)")
    phases(rows, parent)


def runs_of(marks: list[tuple[float, float, float, str]]) -> list[list[tuple[float, float, float, str]]]:
    """Consecutive marks of one label, grouped."""
    groups: list[list[tuple[float, float, float, str]]] = []
    for mark in marks:
        if groups and groups[-1][-1][3] == mark[3]:
            groups[-1].append(mark)
        else:
            groups.append([mark])
    return groups


def phases(rows: list[list[str]], parent: int) -> None:
    """Each parallel phase's span and the cores its workers kept busy: the cells (the first pool's tasks),
    the evaluation's cells and the report's sections (the later pools' items)."""
    item_pids = {int(r[0]) for r in rows if r[2].startswith("item")}
    kinds = {
        "cells": [r for r in rows if r[2] == "task" and int(r[0]) not in item_pids and int(r[0]) != parent],
        "evaluation": [r for r in rows if r[2].startswith("item: evaluate")],
        "report's sections": [r for r in rows if r[2].startswith("item: build_outputs")],
    }
    print("\nparallel phases:")
    for kind, marks in kinds.items():
        if marks:
            first, last = min(float(r[3]) for r in marks), max(float(r[4]) for r in marks)
            busy = sum(float(r[4]) - float(r[3]) for r in marks)
            print(
                f"  {kind:18s} {first:6.2f} - {last:6.2f}  span {last - first:5.2f} s  busy {busy:5.2f} worker-s  ({busy / (last - first):.2f} cores)"
            )


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def export(rev: str, folder: Path) -> Path:
    """``rev``'s src folder, exported to ``folder``."""
    archive = folder.with_suffix(".tar")
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev, "src"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def run_once(src: Path, out: Path, workers: int) -> tuple[float, float]:
    """Wall and CPU seconds of one whole command (its interpreter's start included)."""
    mdad = str(Path(sys.executable).with_name("mdad"))
    cpu = cpu_of_children()
    start = time.perf_counter()
    done = subprocess.run([mdad, *command(out, workers)], env=environment(src), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"mdad run failed:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return wall, cpu_of_children() - cpu


def pairs(n: int, rev: str, new: str | None, workers: int, tmp: Path) -> None:
    sides = {"base": export(rev, tmp / "base-src"), "new": export(new, tmp / "new-src") if new else ROOT / "src"}
    times: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    for i in range(n):
        for side in sides if i % 2 == 0 else reversed(list(sides)):  # each side first in half the pairs
            out = tmp / "out"  # one folder: the report shows the command, and with it the folder
            times[side].append(run_once(sides[side], out, workers))
            kept = tmp / side
            shutil.rmtree(kept, ignore_errors=True)
            out.rename(kept)  # the outputs of the last pair are compared
        (b_wall, b_cpu), (n_wall, n_cpu) = times["base"][-1], times["new"][-1]
        print(
            f"pair {i + 1}: base {b_wall:5.2f} s ({b_cpu:5.2f} CPU s)  new {n_wall:5.2f} s ({n_cpu:5.2f} CPU s)  load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    for side, values in times.items():
        print(f"{side}: median wall {statistics.median(w for w, _ in values):.2f} s, median CPU {statistics.median(c for _, c in values):.2f} s")
    ratios = [b[0] / m[0] for b, m in zip(times["base"], times["new"], strict=True)]
    saved = [b[0] - m[0] for b, m in zip(times["base"], times["new"], strict=True)]
    print(f"per pair: median wall ratio base/new {statistics.median(ratios):.3f}, median saving {statistics.median(saved):.2f} s")
    same = [name for name in OUTPUTS if filecmp.cmp(tmp / "base" / name, tmp / "new" / name, shallow=False)]
    print(f"outputs identical to the base's: {', '.join(same) or 'none'}; differing: {', '.join(set(OUTPUTS) - set(same)) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeline", action="store_true", help="Print the phase timeline of one run.")
    parser.add_argument("--pairs", type=int, default=0, help="Alternate this many base and new runs.")
    parser.add_argument("--base", default="HEAD", help="The base revision of --pairs.")
    parser.add_argument("--new", help="The new revision of --pairs (default: this checkout's src as it is).")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.timeline:
            timeline(args.workers, tmp)
        if args.pairs:
            pairs(args.pairs, args.base, args.new, args.workers, tmp)


if __name__ == "__main__":
    main()
