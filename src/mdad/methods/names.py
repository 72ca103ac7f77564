"""A method's name as the user writes it: a registered method, or ``NAME@per-subtask`` for its per-subtask variant,
``NAME@estimator=EST`` for its items with another estimator (mdad.estimators.base), or an adaptive test with options,
``NAME@stop-se=S`` (a stopping rule) and ``NAME@randomesque=R`` (exposure control).

The suffixes are read here and nowhere else: every other module asks ``parse(name)``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mdad.errors import MdadError
from mdad.methods.base import METHODS, Design, SelectionMethod

SUFFIX = "@per-subtask"
STOP_SE = "@stop-se="
RANDOMESQUE = "@randomesque="
ESTIMATOR = "@estimator="


@dataclass(frozen=True, order=True)
class MethodName:
    """The registered method ``base`` and whether the name asks for its per-subtask variant."""

    base: str
    per_subtask: bool = False
    stop_se: float = 0.0  # an adaptive test's stopping rule (0: none; docs/adaptive.md)
    randomesque: int = 1  # an adaptive test's exposure control
    estimator: str = ""  # a registered estimator fitted on the items instead of the method's own ("": its own)

    def __str__(self) -> str:
        text = self.base + (SUFFIX if self.per_subtask else "")
        text += f"{ESTIMATOR}{self.estimator}" if self.estimator else ""
        text += f"{STOP_SE}{self.stop_se:g}" if self.stop_se else ""
        return text + ("" if self.randomesque == 1 else f"{RANDOMESQUE}{self.randomesque}")

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


def parse(name: str) -> MethodName:
    """Split a method name into its base, the per-subtask flag, the estimator and the adaptive options (no check that
    the base or the estimator is registered)."""
    stop_se, randomesque, estimator = 0.0, 1, ""
    if ESTIMATOR in name:
        head, tail = name.split(ESTIMATOR, 1)
        estimator, _, rest = tail.partition("@")
        if not estimator:
            raise MdadError(f"{ESTIMATOR[1:]} takes the name of an estimator, got nothing in {head + ESTIMATOR + tail!r}.")
        name = head + ("@" + rest if rest else "")
    if RANDOMESQUE in name:
        name, value = name.split(RANDOMESQUE, 1)
        if not value.isdigit() or int(value) < 1:
            raise MdadError(f"{RANDOMESQUE[1:]} takes a whole number of items of at least 1, got {value!r}.")
        randomesque = int(value)
    if STOP_SE in name:
        name, value = name.split(STOP_SE, 1)
        try:
            stop_se = float(value)
        except ValueError:
            stop_se = -1.0
        if not stop_se > 0:
            raise MdadError(f"{STOP_SE[1:]} takes a positive standard deviation of the ability, got {value!r}.")
    if name.endswith(SUFFIX):
        return MethodName(name[: -len(SUFFIX)], per_subtask=True, stop_se=stop_se, randomesque=randomesque, estimator=estimator)
    return MethodName(name, stop_se=stop_se, randomesque=randomesque, estimator=estimator)
