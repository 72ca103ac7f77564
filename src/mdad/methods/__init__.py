"""Selection methods by name."""

from __future__ import annotations

from mdad.errors import MdadError
from mdad.methods.base import MicroBenchmark, SelectionMethod, SourceView, plain_mean
from mdad.methods.per_subtask import PerSubtask, base_name, is_per_subtask
from mdad.methods.random import Random, RandomStratifiedEqual, RandomStratifiedProportional

REGISTRY: dict[str, type[SelectionMethod]] = {
    cls.name: cls
    for cls in (
        Random,
        RandomStratifiedEqual,
        RandomStratifiedProportional,
    )
}


def available() -> list[str]:
    """Names of all selection methods."""
    return list(REGISTRY)


def get(name: str) -> SelectionMethod:
    """A selection method by name (``NAME@per-subtask``: its per-subtask variant); unknown names are errors."""
    try:
        method = REGISTRY[base_name(name)]()
    except KeyError:
        raise MdadError(f"Unknown method {name!r}; known methods: {', '.join(REGISTRY)}.") from None
    return PerSubtask(method) if is_per_subtask(name) else method


__all__ = ["MicroBenchmark", "REGISTRY", "SelectionMethod", "SourceView", "available", "get", "plain_mean"]
