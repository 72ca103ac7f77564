"""Selection methods by name."""

from __future__ import annotations

from mdad.errors import MdadError
from mdad.methods.adaptive import Adaptive, Adaptive1D
from mdad.methods.aipw import AIPW
from mdad.methods.anchor_points import AnchorPoints
from mdad.methods.base import MicroBenchmark, SelectionMethod, SourceView, plain_mean
from mdad.methods.diversity import Diversity
from mdad.methods.per_subtask import PerSubtask, base_name, is_per_subtask
from mdad.methods.random import Random, RandomStratifiedEqual, RandomStratifiedProportional
from mdad.methods.stratified_confidence import StratifiedConfidence
from mdad.methods.tinybenchmarks import TinyBenchmarks, TinyBenchmarksGPIRT, TinyBenchmarksPIRT

REGISTRY: dict[str, type[SelectionMethod]] = {
    cls.name: cls
    for cls in (
        Random,
        RandomStratifiedEqual,
        RandomStratifiedProportional,
        StratifiedConfidence,
        AnchorPoints,
        Diversity,
        TinyBenchmarks,
        TinyBenchmarksPIRT,
        TinyBenchmarksGPIRT,
        Adaptive,
        Adaptive1D,
        AIPW,
    )
}


def available() -> list[str]:
    """Names of all selection methods."""
    return list(REGISTRY)


def defaults() -> list[str]:
    """Names of the methods run when none are named: all but the adaptive family (docs/adaptive.md)."""
    return [name for name, cls in REGISTRY.items() if cls.default]


def get(name: str) -> SelectionMethod:
    """A selection method by name (``NAME@per-subtask``: its per-subtask variant); unknown names are errors."""
    try:
        method = REGISTRY[base_name(name)]()
    except KeyError:
        raise MdadError(f"Unknown method {name!r}; known methods: {', '.join(REGISTRY)}.") from None
    if is_per_subtask(name) and method.adaptive:
        raise MdadError(f"{base_name(name)} chooses items per model from its answers; it has no per-subtask variant.")
    return PerSubtask(method) if is_per_subtask(name) else method


__all__ = ["MicroBenchmark", "REGISTRY", "SelectionMethod", "SourceView", "available", "defaults", "get", "plain_mean"]
