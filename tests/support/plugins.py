"""A fresh Python in a subprocess, and a plug-in package installed as pip would: for the tests of extending mdad."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


def run_python(code: str, pythonpath: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pythonpath), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


PLUGIN = """
import numpy as np

from mdad.methods.base import SelectionMethod, plain_mean


class EveryOther(SelectionMethod):
    name = "every-other"
    description = "Every other pool item from a random start; plain mean."

    def choose(self, view, k, rng, prepared):
        start = int(rng.integers(view.n_items - 2 * (k - 1))) if view.n_items > 2 * (k - 1) else 0
        step = 2 if view.n_items > 2 * (k - 1) else 1
        return plain_mean(np.arange(start, start + step * k, step)[:k])
"""

PLUGIN_METRIC = """
import numpy as np

from mdad.metrics.base import METRICS, Metric

METRICS.add(Metric("bias", "bias", "mean estimate - accuracy", lambda d: float(np.mean(d.estimates - d.truth)),
                   scale=100.0, unit="pts", better="lower"))
"""


def installed_plugin(site: Path, entry_points: str, modules: dict[str, str] | None = None) -> None:
    """A package as pip would install it: its modules (``modules``: more of them, by name) and a dist-info folder
    with entry points."""
    (site / "mdad_every_other").mkdir(parents=True)
    (site / "mdad_every_other" / "__init__.py").write_text(PLUGIN)
    (site / "mdad_every_other" / "metric.py").write_text(PLUGIN_METRIC)
    for name, code in (modules or {}).items():
        (site / "mdad_every_other" / f"{name}.py").write_text(textwrap.dedent(code))
    info = site / "mdad_every_other-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mdad-every-other\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
