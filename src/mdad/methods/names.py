"""A method's name as the user writes it: a registered method, or ``NAME@per-subtask`` for its per-subtask variant,
``NAME@estimator=EST`` for its items with another estimator (mdad.estimators.base), or an adaptive test with options,
``NAME@stop-se=S`` (a stopping rule) and ``NAME@randomesque=R`` (exposure control).

The suffixes are read here and nowhere else: every other module asks ``parse(name)``. They may come
in any order; a name is written back in one canonical order (that of :data:`SUFFIXES`). A suffix's
value is ASCII (digits within stated bounds, or a registered name), so that a name means one thing everywhere it is written
(micro.json, the results folder, the report). One more suffix is one more entry of :data:`SUFFIXES`
and one more field of :class:`MethodName`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from mdad.errors import MdadError
from mdad.methods.base import METHODS, Design, SelectionMethod

MAX_RANDOMESQUE = 100_000  # more than any pool: the next item drawn uniformly among the unasked ones
_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


def _read_whole(text: str) -> int:
    """A whole number from 1 to MAX_RANDOMESQUE, in ASCII digits (a very long text is refused before it is converted)."""
    if not _WHOLE.fullmatch(text) or len(text.lstrip("0")) > len(str(MAX_RANDOMESQUE)) or not 1 <= int(text) <= MAX_RANDOMESQUE:
        raise ValueError
    return int(text)


def _read_sd(text: str) -> float:
    """A posterior standard deviation strictly between 0 and 1, as an ASCII decimal (0.3, .25)."""
    if not _DECIMAL.fullmatch(text) or not 0 < float(text) < 1:
        raise ValueError
    return float(text)


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _read_name(text: str) -> str:
    """A registered name's spelling (letters, digits, '.', '_' and '-'); whether it is registered is asked where it is used."""
    if not _NAME.fullmatch(text):
        raise ValueError
    return text


def _write_sd(value: float) -> str:
    """The shortest decimal that reads back as ``value`` (never an exponent: 0.00001, not 1e-05)."""
    return np.format_float_positional(value, trim="-")


@dataclass(frozen=True)
class Suffix:
    """One ``@KEY`` or ``@KEY=VALUE`` suffix of a method name, and the :class:`MethodName` field it sets."""

    key: str
    field: str
    takes: str  # what the value is, for messages ("" for a flag suffix, which takes none)
    read: Callable[[str], Any] | None = None  # value text -> value (ValueError: outside ``takes``); None for a flag
    write: Callable[[Any], str] = str

    def text(self, value: Any) -> str:
        """The suffix as written in a name."""
        return f"@{self.key}" if self.read is None else f"@{self.key}={self.write(value)}"

    def usage(self) -> str:
        return f"@{self.key}" if self.read is None else f"@{self.key}=VALUE ({self.takes})"


SUFFIXES: tuple[Suffix, ...] = (
    Suffix("per-subtask", "per_subtask", ""),
    Suffix("estimator", "estimator", "the name of an estimator (mdad methods lists them), such as krr", _read_name),
    Suffix("stop-se", "stop_se", "a posterior sd of the ability, a decimal strictly between 0 and 1 such as 0.3", _read_sd, _write_sd),
    Suffix("randomesque", "randomesque", f"a whole number of items from 1 to {MAX_RANDOMESQUE:,}", _read_whole),
)
SUFFIX = "@per-subtask"  # as other modules write the per-subtask variant's name
ESTIMATOR = "@estimator="  # as `mdad methods` shows how to pair a selection with an estimator
STOP_SE = "@stop-se="  # as `mdad run --stop-se` writes a stopping rule into a name (then read back by parse)


@dataclass(frozen=True, order=True)
class MethodName:
    """The registered method ``base`` and whether the name asks for its per-subtask variant."""

    base: str
    per_subtask: bool = False
    stop_se: float = 0.0  # an adaptive test's stopping rule (0: none; docs/adaptive.md)
    randomesque: int = 1  # an adaptive test's exposure control
    estimator: str = ""  # a registered estimator fitted on the items instead of the method's own ("": its own)

    def __str__(self) -> str:
        defaults = {f.name: f.default for f in fields(self)}
        return self.base + "".join(s.text(getattr(self, s.field)) for s in SUFFIXES if getattr(self, s.field) != defaults[s.field])

    @property
    def method_class(self) -> type[SelectionMethod]:
        """The class registered as ``base`` (an unknown name is one error sentence)."""
        return METHODS.get(self.base)

    @property
    def design(self) -> Design | None:
        """The random design the named items follow: the base's, and "stratified" for the per-subtask
        variant of a random design (it draws within each subtask); None when not random, not registered or
        estimated by another estimator than the plain mean."""
        if self.estimator or self.base not in METHODS or METHODS.get(self.base).design is None:
            return None
        return "stratified" if self.per_subtask else METHODS.get(self.base).design

    def variant(self) -> MethodName:
        """The name of the per-subtask variant (the same estimator)."""
        return replace(self, per_subtask=True)


def _shown(text: str) -> str:
    """A text quoted as given, cut when long (a 5,000-digit value is not echoed whole)."""
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text):,} characters)"


def _usage() -> str:
    return ", ".join(s.usage() for s in SUFFIXES)


def parse(name: str) -> MethodName:
    """Split a method name into its base and its suffixes, in any order (no check that the base is registered).

    >>> str(parse("adaptive-1d@randomesque=4@stop-se=.30"))
    'adaptive-1d@stop-se=0.3@randomesque=4'
    """
    base, *parts = name.split("@")
    by_key = {s.key: s for s in SUFFIXES}
    values: dict[str, Any] = {}
    for part in parts:
        key, has_value, text = part.partition("=")
        suffix = by_key.get(key)
        if suffix is None:
            raise MdadError(f"The method name {_shown(name)} has an unknown suffix {_shown('@' + part)}; a name takes {_usage()}, in any order.")
        if suffix.field in values:
            raise MdadError(f"The method name {_shown(name)} gives @{key} twice.")
        if suffix.read is None:
            if has_value:
                raise MdadError(f"@{key} takes no value, got {_shown('@' + part)} in {_shown(name)}.")
            values[suffix.field] = True
            continue
        try:
            values[suffix.field] = suffix.read(text)
        except ValueError:
            raise MdadError(f"@{key} takes {suffix.takes}, got {_shown(text)} in {_shown(name)}.") from None
    return MethodName(base, **values)


def canonical(name: str) -> str:
    """The one spelling of a method name (suffixes in the order of :data:`SUFFIXES`, values as written back),
    under which it is stored and keyed: the same method, the same items whatever order the user wrote."""
    return str(parse(name))
