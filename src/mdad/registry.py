"""Named extension points: selection methods, readers and metrics by name (docs/extending.md).

A ``Registry`` holds the objects of one kind under their names. Each object is registered
where it is defined (``REGISTRY.add(obj)`` or the ``@REGISTRY.register()`` decorator); on the
first lookup or listing the registry imports every module of its package (so a new module is
all a new entry needs) and then the installed plug-ins of its entry-point group, once. A plug-in
that fails to load, or names something that is not of the registry's kind, is reported in one
sentence naming its entry point and module (a warning of the "mdad" logger) and left out; each entry
remembers the plug-in it came from, so that a later failure of its code can name it too (``describe``).
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
    plugin: str = ""  # "'NAME' (module:object)": the entry point it came from; "" for mdad's own


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
    problem : callable, optional
        What is wrong with a plug-in's object, as the end of a sentence ("is not a Reader"), or None when it
        is one this registry can hold; a plug-in with a problem is left out.
    """

    def __init__(
        self,
        kind: str,
        *,
        package: str | None = None,
        group: str | None = None,
        name_of: Callable[[T], str] = own_name,
        problem: Callable[[Any], str | None] | None = None,
    ) -> None:
        self.kind = kind
        self.package = package
        self.group = group
        self._name_of = name_of
        self._problem = problem
        self._entries: dict[str, _Entry[T]] = {}
        self._loaded = False
        self._loading = ""  # the plug-in being loaded: what it registers is marked as its own

    def add(self, obj: T, *, name: str | None = None, order: float = math.inf) -> T:
        """Register ``obj`` (under ``name``, default its own name) and return it; a taken name is an error."""
        key = self._name_of(obj) if name is None else name
        if not isinstance(key, str) or not key:
            raise MdadError(f"A {self.kind} needs a non-empty name, got {key!r}.")
        problem = self._problem(obj) if self._loading and self._problem is not None else None
        if problem:  # a plug-in registering something this registry cannot hold: left out with it (see _load_plugin)
            raise MdadError(problem.replace("it names", f"{key!r} is", 1))
        if key in self._entries and self._entries[key].obj is not obj:
            raise MdadError(f"Two {self.kind}s are registered under the name {key!r}; rename one.")
        self._entries[key] = _Entry(obj, order, len(self._entries), self._loading)
        return obj

    def register(self, *, name: str | None = None, order: float = math.inf) -> Callable[[T], T]:
        """A decorator form of :meth:`add`."""
        return lambda obj: self.add(obj, name=name, order=order)

    def plugin_of(self, obj: object) -> str:
        """The plug-in ``obj`` came from, as "'NAME' (module:object)"; "" for mdad's own (or an unregistered object)."""
        return next((entry.plugin for entry in self._entries.values() if entry.obj is obj), "")

    def describe(self, obj: object, name: str) -> str:
        """How messages name ``obj`` (registered as ``name``): "the method 'x'", or "the method plug-in 'x' (module:object)"."""
        plugin = self.plugin_of(obj)
        return f"the {self.kind} plug-in {plugin}" if plugin else f"the {self.kind} {name!r}"

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
        """Register one installed plug-in; one that fails (even by ``sys.exit()`` or a KeyboardInterrupt of its
        own while it is imported) or is not of this registry's kind is reported in one sentence and left out,
        with whatever it registered, so that a broken package does not stop the rest of mdad."""
        self._loading = f"{point.name!r} ({point.value})"
        before = set(self._entries)
        try:
            loaded = point.load()
            if not isinstance(loaded, ModuleType) and not any(e.obj is loaded for e in self._entries.values()):
                problem = self._problem(loaded) if self._problem is not None else None
                if problem:
                    raise MdadError(problem)
                self.add(loaded, name=point.name)
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # foreign code: one sentence naming it
            for name in set(self._entries) - before:
                del self._entries[name]
            reason = _reason(exc)
            LOG.warning(f"The {self.kind} plug-in {self._loading} could not be loaded: {reason}; it is left out.")
        finally:
            self._loading = ""


def _reason(exc: BaseException) -> str:
    """A plug-in's failure in words: its message, or what it raised."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({'' if exc.code is None else repr(exc.code)}) while imported"
    if isinstance(exc, KeyboardInterrupt):
        return "it raised KeyboardInterrupt while imported"
    return str(exc).rstrip(".") or type(exc).__name__


def foreign_failure(exc: Exception, who: str, doing: str) -> MdadError:
    """One sentence for an error raised by an extension's code (a plug-in's method, reader or metric): ``who``
    (e.g. "the method plug-in 'x' (m:X)") failed ``doing`` (e.g. "to choose 10 items"), with what it raised."""
    message = str(exc).rstrip(".")
    raised = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return MdadError(f"{capital(who)} failed {doing} ({raised}).")


def capital(text: str) -> str:
    """``text`` with its first letter a capital (the rest as it is: names keep their case)."""
    return text[:1].upper() + text[1:]
