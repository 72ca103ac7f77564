"""Named extension points: selection methods, readers and metrics by name (docs/extending.md).

A ``Registry`` holds the objects of one kind under their names. Each object is registered
where it is defined (``REGISTRY.add(obj)`` or the ``@REGISTRY.register()`` decorator); on the
first lookup or listing the registry imports every module of its package (so a new module is
all a new entry needs) and then the installed plug-ins of its entry-point group, once. A plug-in
that fails to load is reported in one sentence (a warning of the "mdad" logger) and left out.
Listing follows each entry's ``order`` (built-ins give one, to keep their order whatever the
module discovery order), then registration order.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import math
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

from mdad.errors import MdadError

T = TypeVar("T")
LOG = logging.getLogger("mdad")


def own_name(obj: Any) -> str:
    """The ``name`` attribute of a registered object (a method class, a reader)."""
    return obj.name


@dataclass(frozen=True)
class _Entry(Generic[T]):
    obj: T
    order: float
    sequence: int


class Registry(Generic[T]):
    """Objects of one kind by name, in listing order.

    Parameters
    ----------
    kind : str
        What the objects are, for messages ("method", "reader", "metric").
    package : str, optional
        The package whose modules are imported before the first lookup.
    group : str, optional
        The entry-point group of installed plug-ins (e.g. "mdad.methods"). An entry point
        names a module that registers its objects on import, or an object to register
        under the entry point's name.
    name_of : callable
        The name of an object registered without one (default: its ``name`` attribute).
    """

    def __init__(self, kind: str, *, package: str | None = None, group: str | None = None, name_of: Callable[[T], str] = own_name) -> None:
        self.kind = kind
        self.package = package
        self.group = group
        self._name_of = name_of
        self._entries: dict[str, _Entry[T]] = {}
        self._loaded = False

    def add(self, obj: T, *, name: str | None = None, order: float = math.inf) -> T:
        """Register ``obj`` (under ``name``, default its own name) and return it; a taken name is an error."""
        key = self._name_of(obj) if name is None else name
        if not isinstance(key, str) or not key:
            raise MdadError(f"A {self.kind} needs a non-empty name, got {key!r}.")
        if key in self._entries and self._entries[key].obj is not obj:
            raise MdadError(f"Two {self.kind}s are registered under the name {key!r}; rename one.")
        self._entries[key] = _Entry(obj, order, len(self._entries))
        return obj

    def register(self, *, name: str | None = None, order: float = math.inf) -> Callable[[T], T]:
        """A decorator form of :meth:`add`."""
        return lambda obj: self.add(obj, name=name, order=order)

    def remove(self, name: str) -> None:
        """Forget the entry ``name`` (an entry added for a while, e.g. in a test)."""
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        """The object named ``name``; an unknown name is one error sentence listing the known ones."""
        self.load()
        try:
            return self._entries[name].obj
        except (KeyError, TypeError):
            raise MdadError(f"Unknown {self.kind} {name!r}; known {self.kind}s: {', '.join(self.names())}.") from None

    __getitem__ = get

    def names(self) -> list[str]:
        """Every name, in listing order."""
        return [name for name, _ in self.items()]

    def items(self) -> list[tuple[str, T]]:
        """(name, object) pairs, in listing order."""
        self.load()
        ordered = sorted(self._entries.items(), key=lambda pair: (pair[1].order, pair[1].sequence))
        return [(name, entry.obj) for name, entry in ordered]

    def __iter__(self) -> Iterator[T]:
        return iter([obj for _, obj in self.items()])

    def __len__(self) -> int:
        self.load()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._entries

    def load(self) -> None:
        """Import the package's modules and the installed plug-ins (once)."""
        if self._loaded:
            return
        self._loaded = True
        if self.package is not None:
            package = importlib.import_module(self.package)
            for module in sorted(info.name for info in pkgutil.iter_modules(package.__path__)):
                if not module.startswith("_"):
                    importlib.import_module(f"{self.package}.{module}")
        if self.group is not None:
            for point in sorted(importlib.metadata.entry_points(group=self.group), key=lambda p: p.name):
                self._load_plugin(point)

    def _load_plugin(self, point: importlib.metadata.EntryPoint) -> None:
        """Register one installed plug-in; one that fails is reported in one sentence and left out,
        so that a broken package does not stop the rest of mdad."""
        try:
            loaded = point.load()
            if not isinstance(loaded, ModuleType) and not any(e.obj is loaded for e in self._entries.values()):
                self.add(loaded, name=point.name)
        except Exception as exc:  # any failure of foreign code is reported as one sentence naming it
            reason = str(exc).rstrip(".") or type(exc).__name__
            LOG.warning(f"The {self.kind} plug-in {point.name!r} ({point.value}) could not be loaded: {reason}; it is left out.")
