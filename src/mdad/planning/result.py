"""What `plan --method ...` returns: one row per method and the plan that holds them (docs/plan.md#choose-for-me)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from mdad.errors import MdadError
from mdad.planning.sources import SourcesCurve
from mdad.wording import plural

BASELINE = "random"  # the baseline of every rule: uniform random, answered exactly
POPULATION_TEXT = {"like-sources": "new models like the sources", "stronger": "new models stronger than the sources"}


@dataclass(frozen=True)
class PlanRow:
    """One method's answer to the plan's question.

    Attributes
    ----------
    items : int or None
        ``detect``: the fewest items that reach the threshold (None: no size tried does);
        ``size``/``budget``: the size asked about.
    value : float
        ``detect``/``budget``: probability (share, when simulated) of ordering pairs of the bin
        correctly at ``items``; ``size``: the MDAD in points (NaN: not reached).
    low, high : float
        ``size``: the MDAD's interval (exact designs: the value itself; NaN high: not reached);
        otherwise value -/+ PLAN_NOISE_SE standard errors.
    stderr : float
        Monte Carlo standard error of ``value`` (0 for an exact answer, NaN for an MDAD): between
        runs, never below the binomial error of the pairs behind it.
    random_value : float
        Uniform random's exact answer at the same number of items, for the rule.
    beats_random : bool
        Whether the rule counts this method's advantage over uniform random as beyond the noise.
    ladder : tuple of int
        Rungs of the ladder the simulation tried (empty for an exact answer); between the two
        rungs that bracket the answer, sizes about 10% apart are tried too, on the same runs.
    error : float
        ``size``: mean |estimate - accuracy| in points at ``items`` (simulated methods: over the held-out
        runs; uniform random: exact; NaN where no exact value is known).
    bracket : tuple of int, optional
        ``detect``, simulated: the answer lies above the first size and at most ``items``.
    """

    method: str
    exact: bool
    items: int | None
    value: float
    low: float
    high: float
    stderr: float
    random_value: float
    beats_random: bool
    ladder: tuple[int, ...]
    pairs: int
    error: float = math.nan  # size: the estimation error in points (simulated: mean over runs; uniform random: exact)
    bracket: tuple[int, int] | None = None  # detect, simulated: (largest size tried that falls short, items), sizes between rungs included


@dataclass(frozen=True, eq=False)
class Plan:
    """Every method's answer to one question on one matrix, and the recommendation by :attr:`rule`."""

    question: str  # "detect", "size" or "budget"
    source: str
    detect: float | None
    size: int | None
    threshold: float
    runs: int
    rows: tuple[PlanRow, ...]
    recommended: str
    recommendation: str
    rule: str
    sources_curves: tuple[SourcesCurve, ...] = ()  # with ``sources_curve=True``: one per learned method
    not_answered: tuple[tuple[str, str], ...] = ()  # ``"all"``: (method, why) for each method the data cannot serve
    tied: tuple[str, ...] = ()  # the methods tied within noise with the leading one (fewest items, smallest MDAD or highest share), simplest first
    judged: tuple[str, ...] = ()  # the methods the tie rule compared on paired differences: the leader, uniform random, the runner-up
    new_models: str = "like-sources"  # the population the rows answer for: "like-sources" or "stronger"
    populations: tuple[Plan, ...] = ()  # with new_models="both": the plan of each population, each with its own recommendation

    @property
    def stronger(self) -> Plan | None:
        """With ``new_models="both"``: the answers for new models stronger than the sources."""
        return next((p for p in self.populations if p.new_models == "stronger"), None)

    def row(self, method: str) -> PlanRow:
        """The answer of one method."""
        for row in self.rows:
            if row.method == method:
                return row
        raise MdadError(f"The plan holds no answer for {method!r}; it answered {', '.join(r.method for r in self.rows)}.")

    def to_frame(self) -> pd.DataFrame:
        """One row per method: how it was answered, its answer, uniform random's at the same size, the rule's verdict."""
        return pd.DataFrame(
            {
                "method": [r.method for r in self.rows],
                "answer": ["exact" if r.exact else "simulated" for r in self.rows],
                "items": pd.array([r.items for r in self.rows], dtype="Int64"),
                "value": [r.value for r in self.rows],
                "low": [r.low for r in self.rows],
                "high": [r.high for r in self.rows],
                "stderr": [r.stderr for r in self.rows],
                "random_value": [r.random_value for r in self.rows],
                "beats_random": [r.beats_random for r in self.rows],
                "sizes_tried": [",".join(map(str, r.ladder)) for r in self.rows],
                "error_points": [r.error for r in self.rows],
                "short_at": pd.array([r.bracket[0] if r.bracket else None for r in self.rows], dtype="Int64"),
            }
        )


def items_text(row: PlanRow) -> str:
    """A row's size as text, with its bracket when simulated: "130 items (121-130)"."""
    short = None if row.bracket is None else row.bracket[0] + 1
    size = f"{row.items} items" if row.items is None else plural(row.items, "item")  # None: not reached
    return size + ("" if short is None or short == row.items else f" ({short}-{row.items})")
