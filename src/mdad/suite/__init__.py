"""Suites: several benchmarks averaged into one leaderboard score, a budget split across them (docs/suites.md).

``Suite`` holds the benchmarks (models matched by name, weights, normalisation); ``select_suite`` splits a
budget (mdad.suite.allocation) and chooses each benchmark's items; ``SuiteMicroBenchmark`` is the result,
saved as suite.json, whose ``estimate`` gives each benchmark's estimate and the suite average's.
"""

from mdad.suite.allocation import Allocation, allocate
from mdad.suite.micro import SuiteMicroBenchmark, SuiteSelection, select_suite
from mdad.suite.suite import Suite

__all__ = ["Allocation", "Suite", "SuiteMicroBenchmark", "SuiteSelection", "allocate", "select_suite"]
