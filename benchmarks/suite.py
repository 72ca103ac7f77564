"""The shared harness of the maintained benchmark scripts: options, timing, and one JSON record per run.

Every script builds its parser with :func:`parser` (which adds ``--smoke``, ``--threads`` and ``--out``),
opens a :class:`Session` with the parsed arguments and adds its numbers to it::

    args = suite.parser(__doc__).parse_args()
    with suite.Session("bench_plan", args) as session:
        timing = suite.paired(baseline, candidate, repeats=3)
        session.add("plan oll2-gpqa", **timing.fields())

Why this shape:

- On a shared machine a wall time alone says little. :func:`paired` runs a baseline and the code under
  test alternately in the same process (the order swapped every repeat) and reports their ratio, which
  a busy neighbour inflates on both sides alike; :func:`measure` gives CPU time (this process and every
  child it waited for, so commands run as subprocesses count) beside wall time.
- BLAS threads are set once for the whole script (``--threads 1`` pins them, through threadpoolctl).
- The record says which code made the numbers: commit (and whether the tree had changes), machine,
  date (UTC) and the command as typed, plus the load average before and after. A full run appends it to
  ``benchmarks/results/<script>.json`` (one record per run, written atomically); ``--smoke`` runs tiny
  inputs in seconds and writes only where ``--out`` says.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_info, threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DATA_DIR = Path(os.environ.get("MDAD_DATA_DIR", str(ROOT.parent / "shared" / "data")))  # the real leaderboards, beside the repository
RECORD_KEYS = ("script", "command", "commit", "dirty", "machine", "date", "smoke", "threads", "load", "total", "results")


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with the options every maintained script shares."""
    text = doc or ""
    made = argparse.ArgumentParser(description=text.splitlines()[0] if text else None)
    made.add_argument("--smoke", action="store_true", help="tiny inputs, seconds: checks that the script still runs")
    made.add_argument("--threads", type=int, default=None, help="BLAS and OpenMP threads of this process (default: the library's)")
    made.add_argument(
        "--out", type=Path, default=None, help="JSON file the record is appended to (default: benchmarks/results/<script>.json; none with --smoke)"
    )
    return made


@dataclass(frozen=True)
class Timing:
    """Wall and CPU seconds of one call; CPU counts this process and the children it waited for."""

    wall: float
    cpu: float


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of every child process it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(call: Callable[[], Any]) -> Timing:
    """Time one call of ``call``."""
    cpu, wall = cpu_seconds(), time.perf_counter()
    call()
    return Timing(wall=time.perf_counter() - wall, cpu=cpu_seconds() - cpu)


@dataclass(frozen=True)
class Paired:
    """Medians of a baseline and a candidate timed alternately, and the median of their per-repeat ratios."""

    baseline: Timing
    candidate: Timing
    cpu_ratio: float  # candidate / baseline: below 1 the candidate is faster
    wall_ratio: float
    repeats: int

    def fields(self) -> dict[str, float | int]:
        """The flat fields of a result record."""
        return {
            "baseline_wall_s": self.baseline.wall,
            "baseline_cpu_s": self.baseline.cpu,
            "wall_s": self.candidate.wall,
            "cpu_s": self.candidate.cpu,
            "cpu_ratio": self.cpu_ratio,
            "wall_ratio": self.wall_ratio,
            "repeats": self.repeats,
        }


def paired(baseline: Callable[[], Any], candidate: Callable[[], Any], repeats: int = 3, warmup: bool = False) -> Paired:
    """Time ``baseline`` and ``candidate`` ``repeats`` times each, alternating which goes first.

    Each repeat's ratio compares two calls made back to back, so a change of load between repeats moves
    both; the medians drop one disturbed repeat. ``warmup`` first calls each once untimed (imports, caches
    and first-touch page faults would otherwise count against whichever goes first)."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if warmup:
        baseline()
        candidate()
    base: list[Timing] = []
    cand: list[Timing] = []
    for repeat in range(repeats):
        if repeat % 2 == 0:
            base.append(measure(baseline))
            cand.append(measure(candidate))
        else:
            cand.append(measure(candidate))
            base.append(measure(baseline))
    return Paired(
        baseline=Timing(statistics.median(t.wall for t in base), statistics.median(t.cpu for t in base)),
        candidate=Timing(statistics.median(t.wall for t in cand), statistics.median(t.cpu for t in cand)),
        cpu_ratio=statistics.median(c.cpu / max(b.cpu, 1e-9) for b, c in zip(base, cand, strict=True)),
        wall_ratio=statistics.median(c.wall / max(b.wall, 1e-9) for b, c in zip(base, cand, strict=True)),
        repeats=repeats,
    )


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def machine() -> dict[str, Any]:
    """What the numbers depend on: processor, cores, system, Python, numpy and the BLAS libraries."""
    import numpy as np

    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")]
        model = names[0] if names else model
    return {
        "name": os.environ.get("MDAD_BENCH_MACHINE", platform.node()),
        "cpu": model,
        "cores": os.cpu_count(),
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": sorted({f"{info.get('internal_api')} {info.get('version')} ({info.get('architecture')})" for info in threadpool_info()}),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
    }


class Session:
    """One run of a benchmark script: sets its threads, gathers its results and writes its record."""

    def __init__(self, script: str, args: argparse.Namespace) -> None:
        self.script = script
        self.smoke = bool(args.smoke)
        self.threads = args.threads
        self.out: Path | None = args.out if args.out is not None else (None if self.smoke else RESULTS / f"{script}.json")
        self.results: list[dict[str, Any]] = []
        self._limits: Any = None

    def add(self, name: str, **fields: Any) -> None:
        """Add one named result (timings in seconds as ``wall_s``/``cpu_s``, ratios, or any measured value)."""
        self.results.append({"name": name, **fields})

    def __enter__(self) -> Session:
        if self.threads is not None:
            self._limits = threadpool_limits(self.threads)
        self._load = os.getloadavg()[0]
        self._date = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._commit = _git("rev-parse", "HEAD")  # the code measured: read before the run, not after
        self._dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
        self._cpu, self._wall = cpu_seconds(), time.perf_counter()
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if self._limits is not None:
            self._limits.unregister()
        if error is not None:
            return
        record = {
            "script": self.script,
            "command": shlex.join(["python", f"benchmarks/{self.script}.py", *sys.argv[1:]]),
            "commit": self._commit,
            "dirty": self._dirty,
            "machine": machine(),
            "date": self._date,
            "smoke": self.smoke,
            "threads": self.threads,
            "load": [round(self._load, 2), round(os.getloadavg()[0], 2)],
            "total": {"wall_s": time.perf_counter() - self._wall, "cpu_s": cpu_seconds() - self._cpu},
            "results": self.results,
        }
        if self.out is not None:
            append(self.out, record)
            print(f"record appended to {self.out}", file=sys.stderr)


def plain(value: Any) -> Any:
    """``value`` as strict JSON holds it: numpy scalars as Python numbers, NaN and infinities as null."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if hasattr(value, "item") and callable(value.item):  # a numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def append(path: Path, record: dict[str, Any]) -> None:
    """Append ``record`` to the JSON list in ``path``, replacing the file atomically."""
    records = json.loads(path.read_text()) if path.exists() else []
    records.append(plain(record))
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as handle:
        json.dump(records, handle, indent=1, allow_nan=False)
        handle.write("\n")
    os.replace(handle.name, path)


@contextmanager
def folder(keep: Path | None = None) -> Iterator[Path]:
    """``keep`` if given, else a temporary folder removed afterwards."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="mdad-bench-") as tmp:
        yield Path(tmp)
