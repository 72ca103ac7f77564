"""mdad: build language-model micro-benchmarks and measure how reliably they rank models.

The public API, thin over the library:

    import mdad
    matrix = mdad.load("path/to/responses.npz")           # or mdad.simulate()
    micro = mdad.select(matrix, "random", 100)             # one micro-benchmark from all models
    frames = mdad.Experiment(matrix, mdad.ExperimentConfig(("random",), (10, 100))).run()
"""

from mdad import metrics, methods
from mdad.data import ResponseMatrix, load, simulate
from mdad.errors import MdadError
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.microbenchmark import SelectedMicroBenchmark, select

__version__ = "0.1.0"

__all__ = [
    "Experiment", "ExperimentConfig", "MdadError", "ResponseMatrix", "SelectedMicroBenchmark",
    "load", "methods", "metrics", "select", "simulate",
]
