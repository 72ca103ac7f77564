"""Where a response matrix came from, recorded so that it can be read again exactly.

A stored experiment keeps this beside its results (config.json), so that ``mdad report DIR``
rebuilds the same page from any folder: the absolute path of the results (or the dataset
name and the simulator's seed) and every reading option. The fingerprint of the data (see
:func:`mdad.data.matrix.fingerprint`) tells whether what is read again is what was used.
"""

from __future__ import annotations

from pathlib import Path

from mdad.data.datasets import load, load_dataset
from mdad.data.matrix import ResponseMatrix, fingerprint
from mdad.errors import MdadError


def data_spec(
    *,
    dataset: str | None,
    path: str | Path | None,
    metric: str | None = None,
    filter_name: str | None = None,
    missing: str = "error",
    seed: int = 0,
    reruns: str = "latest",
) -> dict:
    """What to record: the absolute ``path`` of the results, or the ``dataset`` name (and the seed of
    the simulated one), with the reading options and the missing-cell policy."""
    return {
        "path": str(Path(path).resolve()) if path is not None else None,
        "dataset": None if path is not None else dataset,
        "metric": metric,
        "filter": filter_name,
        "missing": missing,
        "seed": seed,
        "reruns": reruns,
    }


def read_again(spec: dict, expected_fingerprint: str) -> tuple[ResponseMatrix | None, str]:
    """The matrix ``spec`` describes if it still has ``expected_fingerprint``: (matrix, ""), or
    (None, a sentence naming why it cannot be had)."""
    where = spec.get("path") or spec.get("dataset")
    if spec.get("path") and not Path(spec["path"]).exists():
        return None, f"the run's data ({where}) no longer exists"
    try:
        if spec.get("path"):
            matrix = load(spec["path"], metric=spec.get("metric"), filter_name=spec.get("filter"), reruns=spec.get("reruns") or "latest")
        else:
            matrix = load_dataset(str(spec.get("dataset")), seed=int(spec.get("seed") or 0))
        matrix = matrix.require_complete(spec.get("missing") or "error")
    except (MdadError, OSError) as exc:
        return None, f"the run's data ({where}) cannot be read again: {str(exc).rstrip('.')}"
    if fingerprint(matrix) != expected_fingerprint:
        return None, (
            f"the data at {where} is not the data the run used (its fingerprint differs from {expected_fingerprint}): it has changed since the run"
        )
    return matrix, ""
