"""Selection methods by name."""

from __future__ import annotations

from mdad.errors import MdadError
from mdad.methods.base import MicroBenchmark, SelectionMethod, SourceView, plain_mean
from mdad.methods.random import Random, RandomStratifiedEqual, RandomStratifiedProportional
from mdad.methods.tinybenchmarks import TinyBenchmarks, TinyBenchmarksGPIRT, TinyBenchmarksPIRT

REGISTRY: dict[str, type[SelectionMethod]] = {
    cls.name: cls
    for cls in (
        Random,
        RandomStratifiedEqual,
        RandomStratifiedProportional,
        TinyBenchmarks,
        TinyBenchmarksPIRT,
        TinyBenchmarksGPIRT,
    )
}


def available() -> list[str]:
    """Names of all selection methods."""
    return list(REGISTRY)


def get(name: str) -> SelectionMethod:
    """A selection method by name; an unknown name is an error listing the known ones."""
    try:
        return REGISTRY[name]()
    except KeyError:
        raise MdadError(f"Unknown method {name!r}; known methods: {', '.join(REGISTRY)}.") from None


__all__ = ["MicroBenchmark", "REGISTRY", "SelectionMethod", "SourceView", "available", "get", "plain_mean"]
