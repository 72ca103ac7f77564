"""Response matrices: the data model, readers and the built-in simulator."""

from mdad.data.datasets import available_datasets, load, load_dataset
from mdad.data.matrix import ResponseMatrix
from mdad.data.npz import read_npz, write_npz
from mdad.data.simulate import SimulationTruth, simulate, simulate_with_truth

__all__ = [
    "ResponseMatrix", "SimulationTruth", "available_datasets", "load", "load_dataset",
    "read_npz", "simulate", "simulate_with_truth", "write_npz",
]
