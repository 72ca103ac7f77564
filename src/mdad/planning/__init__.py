"""Planning a micro-benchmark: how many items it needs, and which comparisons it can be trusted with.

:func:`plan` answers "how many items to order models D points apart" (or "what MDAD at k items")
exactly for the random designs and by a quick simulation for the other methods
(docs/intervals.md#report-and-plan); :func:`compare` gives every pair of chosen models its
probability of keeping its order.
"""

from mdad.planning.answer import PlanAnswer, plan
from mdad.planning.exact import ExactMdadAtSize, ExactSmallestSize, exact_mdad_at_size, exact_smallest_size
from mdad.planning.pairs import PairComparison, compare
from mdad.planning.result import Plan, PlanRow
from mdad.planning.simulated import SimulatedMdadAtSize, SimulatedPlan, simulated_mdad_at_size, simulated_plan
from mdad.planning.sources import SourcesCurve, sources_curve
from mdad.planning.stored import StoredAnswer, plan_from_results, plans_from_results

__all__ = [
    "ExactMdadAtSize",
    "ExactSmallestSize",
    "PairComparison",
    "Plan",
    "PlanAnswer",
    "PlanRow",
    "SimulatedMdadAtSize",
    "SimulatedPlan",
    "SourcesCurve",
    "StoredAnswer",
    "compare",
    "exact_mdad_at_size",
    "exact_smallest_size",
    "plan",
    "plan_from_results",
    "plans_from_results",
    "simulated_mdad_at_size",
    "simulated_plan",
    "sources_curve",
]
