"""The report of an experiment: tables, figures and the HTML page.

``tables``: the summary tables; ``figures``: the matplotlib figures; ``html``: the page and its files;
``analytic``: the exact agreement curves beside the simulated ones; ``group``: a group of pairs;
``trust``: how well the intervals and order probabilities held. Names are imported on first use,
so that the tables do not load matplotlib.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mdad.report.analytic import analytic_curves_for_store, analytic_figures
    from mdad.report.figures import FORMATS, method_styles, render
    from mdad.report.group import group_differences, group_shares
    from mdad.report.html import build_outputs
    from mdad.report.tables import NOT_REACHED, group_table, wide_summary
    from mdad.report.trust import coverage_table, decision_curves, trust_frames

_HOMES = {
    "analytic_curves_for_store": "mdad.report.analytic",
    "analytic_figures": "mdad.report.analytic",
    "FORMATS": "mdad.report.figures",
    "method_styles": "mdad.report.figures",
    "render": "mdad.report.figures",
    "group_differences": "mdad.report.group",
    "group_shares": "mdad.report.group",
    "build_outputs": "mdad.report.html",
    "NOT_REACHED": "mdad.report.tables",
    "group_table": "mdad.report.tables",
    "wide_summary": "mdad.report.tables",
    "coverage_table": "mdad.report.trust",
    "decision_curves": "mdad.report.trust",
    "trust_frames": "mdad.report.trust",
}

__all__ = [
    "FORMATS",
    "NOT_REACHED",
    "analytic_curves_for_store",
    "analytic_figures",
    "build_outputs",
    "coverage_table",
    "decision_curves",
    "group_differences",
    "group_shares",
    "group_table",
    "method_styles",
    "render",
    "trust_frames",
    "wide_summary",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module 'mdad.report' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
