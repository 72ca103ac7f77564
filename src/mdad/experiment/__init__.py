"""The experiment grid: every (method, size, sources) cell over many random splits, stored and evaluated.

``grid``: the configuration, the plan of tasks and the run; ``splits``: targets and source models per
run; ``sizes``: micro-benchmark sizes from counts or shares; ``executors``: local processes or Dask;
``store``: one parquet file per finished cell; ``evaluate``: the metrics of stored cells.
"""

from mdad.experiment.evaluate import evaluate_cell, evaluate_frames, evaluate_store
from mdad.experiment.grid import (
    Experiment,
    ExperimentConfig,
    ExperimentResult,
    default_sizes,
    default_sources,
    default_targets,
)
from mdad.experiment.sizes import SizeRequest, parse_sizes
from mdad.experiment.splits import Splits, make_splits, n_seen_items
from mdad.experiment.store import Cell, ResultStore

__all__ = [
    "Cell",
    "Experiment",
    "ExperimentConfig",
    "ExperimentResult",
    "ResultStore",
    "SizeRequest",
    "Splits",
    "default_sizes",
    "default_sources",
    "default_targets",
    "evaluate_cell",
    "evaluate_frames",
    "evaluate_store",
    "make_splits",
    "n_seen_items",
    "parse_sizes",
]
