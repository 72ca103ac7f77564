"""A suite micro-benchmark: one micro-benchmark per benchmark of a suite, from one budget (``select_suite``).

Each benchmark's items are chosen by the method from that benchmark alone, with every one of its models as a
source (mdad.micro.selection.build_selection, so each part carries its own assessment); the allocation of the
budget comes from mdad.suite.allocation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import ASSESS_RUNS, DEFAULT_LEVEL, DEFAULT_THRESHOLD
from mdad.errors import MdadError
from mdad.micro.notes import Note, describe_assessment
from mdad.micro.selected import SelectedMicroBenchmark
from mdad.micro.selection import build_selection
from mdad.suite import file
from mdad.suite.allocation import Allocation, AverageReliability, allocate, average_model, check_allocation, equal_counts
from mdad.suite.estimation import SuiteEstimate, estimate_suite
from mdad.suite.suite import Suite, check_baselines, check_weights
from mdad.wording import points


@dataclass(frozen=True, eq=False, repr=False)
class SuiteMicroBenchmark:
    """One micro-benchmark per benchmark (``parts``, in the suite's order) with the suite's ``weights`` (summing to 1),
    normalisation ``baselines`` and the ``allocation`` kind that split the budget."""

    parts: dict[str, SelectedMicroBenchmark]
    weights: np.ndarray
    baselines: dict[str, float] = field(default_factory=dict)
    allocation: str = "equal"

    def __repr__(self) -> str:
        split = ", ".join(f"{name} {part.size}" for name, part in self.parts.items())
        return f"<SuiteMicroBenchmark {self.method}: {self.size} items ({split}; {self.allocation})>"

    @property
    def names(self) -> list[str]:
        """The benchmarks' names, in the suite's order."""
        return list(self.parts)

    @property
    def size(self) -> int:
        """Items each new model answers, over every benchmark."""
        return sum(part.size for part in self.parts.values())

    @property
    def method(self) -> str:
        """The selection method of the parts ('a, b' when they differ)."""
        return ", ".join(dict.fromkeys(part.method for part in self.parts.values()))

    def to_json(self) -> dict:
        """The suite.json object (mdad.suite.file)."""
        return {
            "format": file.FORMAT,
            "benchmarks": {name: part.to_json() for name, part in self.parts.items()},
            "weights": dict(zip(self.names, self.weights.tolist(), strict=True)),
            "normalisation": dict(self.baselines),
            "allocation": {name: part.size for name, part in self.parts.items()},
            "allocation_kind": self.allocation,
        }

    def save(self, path: str | Path) -> None:
        """Write the suite micro-benchmark to ``path`` (atomically)."""
        file.write(self.to_json(), path)

    @classmethod
    def load(cls, path: str | Path) -> SuiteMicroBenchmark:
        """Read a suite micro-benchmark ``save`` wrote; one sentence for a broken or foreign file."""
        data = file.read(path)
        names = list(data["parts"])
        try:
            weights = check_weights(data["weights"], names)
            baselines = check_baselines(data.get("normalisation") or {}, names)
        except MdadError as exc:
            raise MdadError(f"{path}: {exc}") from None
        parts = {name: SelectedMicroBenchmark(**fields) for name, fields in data["parts"].items()}
        return cls(parts, weights, baselines, str(data.get("allocation_kind", "")))

    def estimate(self, results: Mapping[str, ResponseMatrix | str | Path], *, level: float = DEFAULT_LEVEL) -> SuiteEstimate:
        """Each benchmark's estimate of the models in ``results`` (benchmark -> its results, any readable format) and
        the suite average, with intervals, order probabilities and P(best) (mdad.suite.estimation)."""
        return estimate_suite(self.parts, results, weights=self.weights, baselines=self.baselines, level=level)


@dataclass(frozen=True, eq=False)
class SuiteSelection:
    """A suite micro-benchmark with how its budget was split (``allocation``) and how reliable the average is with it
    and with an equal split (``reliability``, ``equal``): exact for the uniform random design, from the held-out
    curves of an optimal allocation measured on held-out runs; None otherwise."""

    chosen: SuiteMicroBenchmark
    suite: Suite
    allocation: Allocation
    reliability: AverageReliability | None
    equal: AverageReliability | None

    def report(self, out: str | Path) -> list[Note]:
        """What was written where, the allocation, and the average's expected MDAD and error beside an equal split's."""
        chosen, allocation = self.chosen, self.allocation
        notes = [Note(f"{chosen.method}: {chosen.size} items over {len(chosen.parts)} benchmarks written to {out}.")]
        notes.extend(Note(text, warning=True) for text in self.suite.notes)
        pools = dict(zip(allocation.names, allocation.pools, strict=True))
        split = ", ".join(f"{name} {k} of {pools[name]}" for name, k in allocation.as_dict().items())
        weights = ", ".join(f"{name} {w:.3g}" for name, w in zip(chosen.names, chosen.weights, strict=True))
        normalised = "; normalised above " + ", ".join(f"{n} {b:g}" for n, b in chosen.baselines.items()) if chosen.baselines else ""
        notes.append(Note(f"Allocation ({allocation.kind}): {split}. Weights: {weights}{normalised}."))
        if self.reliability is not None and self.equal is not None:
            n = int(self.suite.complete.sum())
            basis = f"error curves fitted to {allocation.curves[0].runs} held-out runs per benchmark" if allocation.curves else "exact variances"
            notes.append(
                Note(
                    f"Suite average over the {n} models in every benchmark ({basis}, normal approximation): "
                    f"MDAD {_points(self.reliability.mdad)}, mean error {self.reliability.error:.2f} points; "
                    f"an equal split: MDAD {_points(self.equal.mdad)}, mean error {self.equal.error:.2f} points."
                )
            )
        for name, k, curves in zip(allocation.names, allocation.counts, allocation.curves, strict=False):
            notes.append(
                Note(
                    f"{name}: on held-out runs a pair's difference errs by {100 * np.sqrt(float(curves.pairs(k))):.2f} points (root mean "
                    f"square) at {k} items, the curve fitted at {', '.join(map(str, curves.pairs.sizes))} items falling as "
                    f"k^-{curves.pairs.power:.2f} (1 - k/N)."
                )
            )
        for name, part in chosen.parts.items():
            if part.assessment is not None:
                notes.append(Note(f"{name}: {describe_assessment(part.assessment)}"))
        return notes


def _points(value: float) -> str:
    return "not reached" if np.isnan(value) else points(value)


def select_suite(
    suite: Suite,
    budget: int,
    *,
    method: str = "random",
    allocation: str = "optimal",
    seed: int = 0,
    runs: int = ASSESS_RUNS,
    threshold: float = DEFAULT_THRESHOLD,
    workers: int = 1,
    on_benchmark: Callable[[str], None] | None = None,
) -> SuiteSelection:
    """Split ``budget`` items across the benchmarks of ``suite`` (``allocation``: equal, proportional or optimal;
    mdad.suite.allocation) and choose each benchmark's items with ``method`` and ``seed``, every model of that
    benchmark a source, each part assessed on ``runs`` held-out runs (0: none). The optimal allocation of a method
    other than uniform random items is measured on as many held-out runs per benchmark (mdad.suite.curves).

    Examples
    --------
    >>> import mdad
    >>> suite = mdad.Suite.load("gpqa,musr,math-hard")
    >>> selection = mdad.select_suite(suite, 600, allocation="optimal", runs=0)
    >>> selection.allocation.describe()
    'gpqa 250, musr 232, math-hard 118 (optimal)'
    >>> selection.reliability.mdad < selection.equal.mdad       # the average orders closer models than an equal split
    True
    """
    check_allocation(suite, budget, allocation, method=method, runs=runs)
    split = allocate(suite, budget, allocation, method=method, runs=runs, seed=seed, workers=workers)
    parts = {}
    for name, k in split.as_dict().items():
        if on_benchmark is not None:
            on_benchmark(name)
        matrix = suite.benchmarks[name]
        parts[name] = build_selection(matrix, method, k, seed=seed, runs=runs, threshold=threshold, workers=workers).chosen
    chosen = SuiteMicroBenchmark(parts, suite.weights, dict(suite.baselines), allocation)
    model = average_model(suite, split, method)
    reliability = equal = None
    if model is not None:
        reliability = model.reliability(split.counts, threshold=threshold)
        equal = model.reliability(equal_counts(np.array(split.pools), budget), threshold=threshold)
    return SuiteSelection(chosen, suite, split, reliability, equal)
