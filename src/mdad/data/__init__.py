"""Response matrices: the data model, readers and the built-in simulator."""

from mdad.data.datasets import available_datasets, convert, load, load_dataset
from mdad.data.describe import describe, format_description
from mdad.data.matrix import ResponseMatrix
from mdad.data.npz import read_npz, write_npz
from mdad.data.readers import detect_format, read_source
from mdad.data.simulate import SimulationTruth, simulate, simulate_with_truth

__all__ = [
    "ResponseMatrix", "SimulationTruth", "available_datasets", "convert", "describe", "detect_format",
    "format_description", "load", "load_dataset", "read_npz", "read_source", "simulate",
    "simulate_with_truth", "write_npz",
]
