"""Selection methods by name.

Every module of this package registers its method classes with ``@METHODS.register()``
(mdad.methods.base); installed packages add theirs through the ``mdad.methods`` entry points
(docs/extending.md).
"""

from __future__ import annotations

from mdad.errors import MdadError
from mdad.estimators.base import ESTIMATORS
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod, SourceView, plain_mean
from mdad.methods.names import MethodName, parse
from mdad.methods.paired import Paired
from mdad.methods.per_subtask import PerSubtask

REGISTRY = METHODS  # the name older code and plug-ins use


def available() -> list[str]:
    """Names of all selection methods."""
    return METHODS.names()


def defaults() -> list[str]:
    """Names of the methods run when none are named: all but the adaptive family (docs/adaptive.md) and the
    plug-ins that do not ask to be (``runs_by_default``)."""
    return [name for name, cls in METHODS.items() if runs_by_default(cls)]


def on_request() -> list[str]:
    """Names of the methods run only when named (the adaptive family, AIPW, and most plug-ins)."""
    return [name for name, cls in METHODS.items() if not runs_by_default(cls)]


def runs_by_default(cls: type[SelectionMethod]) -> bool:
    """Whether ``cls`` runs when no methods are named: its ``default``; for an installed plug-in only when one of
    its own classes (not one of mdad's) sets ``default = True``, so that installing a package does not silently
    change what ``mdad run`` computes (docs/extending.md#an-installed-package)."""
    if not METHODS.plugin_of(cls):
        return bool(cls.default)
    declared = any("default" in vars(c) for c in cls.__mro__ if c.__module__.partition(".")[0] != "mdad")
    return declared and bool(cls.default)


def designs() -> tuple[str, ...]:
    """Names of the methods that declare an exact random design (``exact_design``: analytic curves, mdad plan's exact answers)."""
    return tuple(name for name, cls in METHODS.items() if cls.exact_design() is not None)


def estimators() -> list[str]:
    """Names of the estimators any selection can be paired with (``NAME@estimator=EST``)."""
    return ESTIMATORS.names()


def get(name: str) -> SelectionMethod:
    """A selection method by name (``NAME@per-subtask``: its per-subtask variant; ``NAME@estimator=EST``: its items
    with estimator EST); unknown names are errors."""
    spec = parse(name)
    if spec.base not in METHODS:
        raise MdadError(f"Unknown method {name!r}; known methods: {', '.join(METHODS.names())}.")
    if spec.estimator and spec.estimator not in ESTIMATORS:
        raise MdadError(f"Unknown estimator {spec.estimator!r} in {name!r}; known estimators: {', '.join(ESTIMATORS.names())}.")
    method = spec.method_class()
    if spec.per_subtask and method.adaptive:
        raise MdadError(f"{spec.base} chooses items per model from its answers; it has no per-subtask variant.")
    if spec.estimator:
        method = Paired(method, ESTIMATORS.get(spec.estimator)())
    if spec.stop_se or spec.randomesque != 1:
        if not method.adaptive:
            raise MdadError(f"{spec.base} is not an adaptive test, so it has no stopping rule or exposure control.")
        return method.with_options(spec.stop_se or None, spec.randomesque)  # type: ignore[attr-defined]
    return PerSubtask(method) if spec.per_subtask else method


__all__ = [
    "METHODS",
    "MethodName",
    "MicroBenchmark",
    "REGISTRY",
    "SelectionMethod",
    "SourceView",
    "available",
    "defaults",
    "designs",
    "estimators",
    "get",
    "on_request",
    "parse",
    "plain_mean",
]
