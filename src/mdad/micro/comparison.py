"""Two models compared on one micro-benchmark: both estimates, the gap, P(the full benchmark orders them the
same way) and an exact paired test on the micro-benchmark's items.

The paired test is McNemar's, exact, with the mid-p correction: only the items where exactly one of
the two models is right say anything about which is better; under "equally good" each of them is
equally likely to favour either model, so the count favouring the first is Binomial(discordant, 1/2).
Both models answered the same items, so an unpaired test (two proportions) would throw the pairing
away and be needlessly weak.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pandas as pd

from mdad.estimates import written
from mdad.wording import plural


@lru_cache(maxsize=100_000)  # every pair of a leaderboard (--pairs all) has one of few pairs of counts
def mcnemar_mid_p(first_only: int, second_only: int) -> float:
    """Two-sided mid-p value of the exact McNemar test (twice the one-sided one, at most 1; Fagerland,
    Lydersen and Laake 2013); NaN when no item is discordant (the pair is tied).

    ``first_only``/``second_only``: items only the first / only the second model got right."""
    n = first_only + second_only
    if n == 0:
        return float("nan")
    low = min(first_only, second_only)
    below, term = 0, 1  # sum of C(n, i) for i < low, and C(n, low): whole numbers, so an even split gives 1 exactly
    for i in range(low):
        below += term
        term = term * (n - i) // (i + 1)
    return float(min(Fraction(1), Fraction(2 * below + term, 2**n)))


@dataclass(frozen=True)
class Comparison:
    """Two models ``first`` and ``second`` (as asked) on one micro-benchmark.

    ``estimate_first``/``estimate_second``: estimated full-benchmark accuracies (fractions); ``gap``:
    first minus second (points); ``order_probability``: P(the full benchmark orders them as the
    estimates do; NaN when the micro-benchmark carries nothing to compute it from, or for a tied pair)
    with ``order_how`` saying where it comes from; ``first_only``/``second_only``: the micro-benchmark's
    items only one of them got right (-1: not 0/1 scores, or an adaptive test); ``p_value``: the exact
    mid-p McNemar test on those items (NaN when it does not apply, or when no item separates them);
    ``whole_pool``: the micro-benchmark is every item of the pool (a random design drawn whole), so its counts
    are the full benchmark's; ``mark``: why the order probability may not hold for this pair ("" where nothing
    is known against it; the pairs of a model whose interval is marked, docs/intervals.md#models-better-than-the-sources)."""

    first: str
    second: str
    estimate_first: float
    estimate_second: float
    gap: float
    order_probability: float
    order_how: str
    first_only: int
    second_only: int
    p_value: float
    whole_pool: bool = False
    mark: str = ""

    @property
    def tied(self) -> bool:
        """Every item of the pool is drawn and each got as many right as the other: the full benchmark ties them (as the
        estimate table says; two models that merely got the same items of a smaller draw right get an order probability
        there and here alike)."""
        return self.whole_pool and self.first_only == self.second_only

    @property
    def paired_test(self) -> bool:
        """Whether the exact paired test applies (0/1 scores on a fixed set of items)."""
        return self.first_only >= 0

    def describe(self) -> str:
        """One sentence: both estimates, the gap, how sure the full benchmark agrees, what the paired test says."""
        head = f"{self.first} {100 * self.estimate_first:.1f}% vs {self.second} {100 * self.estimate_second:.1f}% (gap {self.gap:.1f} points)"
        if self.tied and self.first_only:
            return (
                f"{head}: tied on the full benchmark, every item of which is drawn: {plural(self.first_only, 'item')} only "
                f"{self.first} got right and as many only {self.second}, so neither is ranked above the other "
                f"(exact McNemar mid-p = {format_p(self.p_value)})."
            )
        if self.tied:
            return f"{head}: tied on the full benchmark, every item of which is drawn: they got exactly the same items right."
        if self.order_probability == self.order_probability:
            order = (
                f"P(the full benchmark orders them the same way) {format_probability(self.order_probability)}"
                if self.gap
                else f"P(the full benchmark ranks {self.first} above {self.second}) {format_probability(self.order_probability)}"
            )
        else:
            order = "no order probability (" + self.order_how.removeprefix("no order probability: ") + ")"
        if self.mark and self.order_probability == self.order_probability:
            order = f"{order} ! {self.mark}"
        if not self.paired_test:
            return f"{head}; {order}; the paired test needs 0/1 scores on a fixed set of items."
        if not self.first_only and not self.second_only:
            return f"{head}; {order}; they got exactly the same items right, so no item separates them and the paired test has nothing to test."
        return (
            f"{head}; {order}; {plural(self.first_only, 'item')} only {self.first} got right, {self.second_only} only "
            f"{self.second}: exact McNemar mid-p = {format_p(self.p_value)}."
        )

    def row(self) -> dict:
        """first, second, both estimates, gap, order probability, discordant items, p-value, tied and the mark ("" when
        nothing is known against the order probability): one row of the comparisons CSV, the numbers as computed
        (:func:`comparisons_frame` rounds them for output)."""
        return {
            "first": self.first,
            "second": self.second,
            "estimate_first": self.estimate_first,
            "estimate_second": self.estimate_second,
            "gap": self.gap,
            "order_probability": self.order_probability,
            "first_only": self.first_only if self.paired_test else np.nan,
            "second_only": self.second_only if self.paired_test else np.nan,
            "p_value": self.p_value,
            "tied": self.tied,
            "mark": self.mark,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row (:meth:`row`)."""
        return comparisons_frame([self])


def comparisons_frame(comparisons: list[Comparison]) -> pd.DataFrame:
    """One row per comparison (:meth:`Comparison.row`), the columns the same when there is none; estimates and gaps as
    output files hold them (mdad.estimates.written)."""
    frame = pd.DataFrame([c.row() for c in comparisons], columns=list(COLUMNS))
    for column in ("estimate_first", "estimate_second", "gap"):
        frame[column] = written(frame[column].to_numpy(np.float64), points=column == "gap")
    return frame


COLUMNS = ("first", "second", "estimate_first", "estimate_second", "gap", "order_probability", "first_only", "second_only", "p_value", "tied", "mark")


def format_p(p: float) -> str:
    """A p-value as printed: two significant digits, '< 0.001' below that."""
    if p != p:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.2g}"


def format_probability(p: float) -> str:
    """A probability as printed in two decimals, never rounded up to a certainty: '> 0.99', '< 0.01'."""
    if p != p:
        return ""
    if p > 0.99:
        return "> 0.99"
    if p < 0.01:
        return "< 0.01"
    return f"{p:.2f}"
