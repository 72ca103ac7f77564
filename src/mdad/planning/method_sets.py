"""Which methods a plan answers: ``all`` (every registered method the data can serve), ``paper`` or a list (docs/plan.md#choose-for-me)."""

from __future__ import annotations

from collections.abc import Sequence

from mdad import methods as method_registry
from mdad.data.matrix import ResponseMatrix
from mdad.errors import MdadError
from mdad.metrics.analytic import has_exact_answer
from mdad.planning.result import BASELINE

SETS = ("all", "paper")  # "all": every registered method the data can serve; "paper": the paper's set (what `mdad run` runs by default)


def _names(methods: str | Sequence[str]) -> list[str]:
    names = [n.strip() for n in methods.split(",")] if isinstance(methods, str) else [str(n).strip() for n in methods]
    return [n for n in names if n]


def asks_all(methods: str | Sequence[str]) -> bool:
    """Whether ``methods`` names a set (``"all"`` or ``"paper"``) rather than methods: then the methods the
    data cannot serve are left out and named, not refused."""
    return _names(methods) in ([name] for name in SETS)


def unmet_scores(name: str, matrix: ResponseMatrix) -> str | None:
    """Why ``matrix`` cannot serve the method ``name``, by the scores the method declares it needs
    (``SelectionMethod.scores``); None when it can."""
    needed = method_registry.get(name).scores
    if needed == "binary" and not matrix.is_binary:
        return f"needs 0/1 correctness and {matrix.source} holds continuous scores"
    if needed == "option-probabilities" and not matrix.has_option_probs:
        return f"needs option probabilities and {matrix.source} holds none"
    return None


def servable(matrix: ResponseMatrix, names: list[str], everything: bool) -> tuple[list[str], tuple[tuple[str, str], ...]]:
    """The methods the data can serve, and (method, why) for the others: with ``everything`` ("all") they
    are left out and named (the simulated ones too when cells are missing); a method the user named is
    refused with one sentence."""
    unmet = [(name, why) for name in names if (why := unmet_scores(name, matrix)) is not None]
    if everything and matrix.n_missing:  # named methods meet the refusal of plan_methods, which says what to do
        incomplete = (
            f"can only be simulated on complete results and {matrix.source} has cells that were not evaluated: "
            "--missing drop-items or drop-models answers it"
        )
        unmet += [(name, incomplete) for name in names if not has_exact_answer(name) and all(name != n for n, _ in unmet)]
    if unmet and not everything:
        name, why = unmet[0]
        raise MdadError(f"{name} {why}; leave it out of --method (--method all answers the methods these data can serve).")
    left_out = {name for name, _ in unmet}
    return [n for n in names if n not in left_out], tuple(unmet)


def method_names(methods: str | Sequence[str]) -> list[str]:
    """``"all"`` (every registered method, plug-ins included), ``"paper"`` (the paper's set: the methods ``mdad run``
    runs by default), a comma list, or a sequence of names; uniform random first."""
    names = _names(methods)
    if names == ["all"]:
        names = method_registry.available()
    elif names == ["paper"]:
        names = method_registry.defaults()
    if not names:
        raise MdadError("Name at least one method, or 'all'.")
    for name in names:
        method_registry.get(name)  # an unknown name is one clear error
    unique = list(dict.fromkeys(names))
    return [BASELINE, *[n for n in unique if n != BASELINE]]
