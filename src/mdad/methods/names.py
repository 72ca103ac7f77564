"""A method's name as the user writes it: a registered method, or ``NAME@per-subtask`` for its per-subtask variant.

The suffix is read here and nowhere else: every other module asks ``parse(name)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdad.methods.base import METHODS, Design, SelectionMethod

SUFFIX = "@per-subtask"


@dataclass(frozen=True, order=True)
class MethodName:
    """The registered method ``base`` and whether the name asks for its per-subtask variant."""

    base: str
    per_subtask: bool = False

    def __str__(self) -> str:
        return self.base + SUFFIX if self.per_subtask else self.base

    @property
    def method_class(self) -> type[SelectionMethod]:
        """The class registered as ``base`` (an unknown name is one error sentence)."""
        return METHODS.get(self.base)

    @property
    def design(self) -> Design | None:
        """The random design the named items follow: the base's, and "stratified" for the per-subtask
        variant of a random design (it draws within each subtask); None when not random or not registered."""
        if self.base not in METHODS or METHODS.get(self.base).design is None:
            return None
        return "stratified" if self.per_subtask else METHODS.get(self.base).design

    def variant(self) -> MethodName:
        """The name of the per-subtask variant."""
        return MethodName(self.base, per_subtask=True)


def parse(name: str) -> MethodName:
    """Split a method name into its base and the per-subtask flag (no check that the base is registered)."""
    if name.endswith(SUFFIX):
        return MethodName(name[: -len(SUFFIX)], per_subtask=True)
    return MethodName(name)
