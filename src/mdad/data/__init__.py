"""Response matrices: the data model, readers, the built-in real datasets and the simulator."""

from mdad.data.builtin import BUILTIN, BuiltinDataset
from mdad.data.datasets import DEFAULT_DATASET, DatasetEntry, available_datasets, convert, dataset_catalogue, load, load_dataset
from mdad.data.describe import describe, format_description
from mdad.data.frames import from_frame, to_frame
from mdad.data.matrix import ResponseMatrix, fingerprint
from mdad.data.npz import read_npz, write_npz
from mdad.data.readers import detect_format, read_source
from mdad.data.simulate import SimulationTruth, simulate, simulate_with_truth

__all__ = [
    "BUILTIN",
    "BuiltinDataset",
    "DEFAULT_DATASET",
    "DatasetEntry",
    "ResponseMatrix",
    "SimulationTruth",
    "available_datasets",
    "convert",
    "dataset_catalogue",
    "describe",
    "detect_format",
    "fingerprint",
    "format_description",
    "from_frame",
    "load",
    "load_dataset",
    "read_npz",
    "read_source",
    "simulate",
    "simulate_with_truth",
    "to_frame",
    "write_npz",
]
