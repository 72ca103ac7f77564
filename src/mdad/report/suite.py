"""The HTML report of ``mdad run --suite`` (mdad.suite.experiment.run_suite): the suite average's error, Kendall tau,
MDAD and coverage per allocation, each benchmark's rows, and the average's agreement curves, written atomically.

It reuses the experiment report's style, its agreement-curve figure (each allocation drawn as a method is) and its
table and code helpers, so the two pages read alike.
"""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from mdad.outputs import write_text
from mdad.report import figures
from mdad.report.html import Figure, _html_table, code_spans
from mdad.suite.experiment import SuiteRun
from mdad.suite.suite import Suite
from mdad.wording import points


def summary_table(result: SuiteRun, names: list[str]) -> pd.DataFrame:
    """The terminal's table of the suite average (one row per allocation), formatted as it prints it."""
    rows = []
    for row in result.summary.to_dict("records"):
        mdad = "not reached" if np.isnan(row["mdad"]) else f"{row['mdad']:g} [{row['mdad_low']:g}, {row['mdad_high']:g}]"
        rows.append(
            {
                "allocation": row["allocation"],
                "items": ", ".join(str(row[f"items_{name}"]) for name in names),
                "error": f"{row['error']:.2f}",
                "RMSE": f"{row['rmse']:.2f}",
                "Kendall tau": f"{row['kendall_tau']:.3f}",
                "MDAD [95%]": mdad,
                "coverage": f"{100 * row['coverage']:.1f}%",
                "top fifth": f"{100 * row['coverage_top_fifth']:.1f}%",
            }
        )
    return pd.DataFrame(rows)


def benchmark_table(result: SuiteRun) -> pd.DataFrame:
    """Each benchmark's rows (allocation, benchmark, items, error, Kendall tau), formatted."""
    frame = result.benchmarks.copy()
    frame["error"] = frame["error"].map(lambda v: f"{v:.2f}")
    frame["kendall_tau"] = frame["kendall_tau"].map(lambda v: f"{v:.3f}")
    return frame.rename(columns={"kendall_tau": "Kendall tau"})


def agreement_figure(result: SuiteRun, budget: int, threshold: float) -> Figure:
    """The average's agreement curves, one line per allocation (the experiment report's figure)."""
    curves = result.curves.rename(columns={"allocation": "method"}).assign(view="seen", sources=0, size=budget)
    marks = result.summary.rename(columns={"allocation": "method"})[["method", "mdad"]]
    marks = marks.assign(view="seen", sources=0, size=budget, mdad_reached=marks["mdad"].notna())
    fig = figures.agreement_curves(curves, marks, [budget], threshold=threshold)
    fig.suptitle("The suite average's agreement with the full benchmarks by difference of averages, per allocation", fontsize=11)
    png = figures.render(fig, ("png",))["png"]
    title = f"Agreement by difference of averages, {budget} items"
    return Figure("suite-agreement", title, None, base64.b64encode(png).decode(), figures.css_width(png))


def sentences(result: SuiteRun, names: list[str]) -> list[str]:
    """One plain sentence per allocation."""
    out = []
    for row in result.summary.to_dict("records"):
        items = ", ".join(f"{name} {row[f'items_{name}']}" for name in names)
        mdad = "is not reached" if np.isnan(row["mdad"]) else f"is {points(row['mdad'])}"
        out.append(
            f"{row['allocation']} ({items}): the average errs by {row['error']:.2f} points on average; its MDAD {mdad}; "
            f"its intervals held {100 * row['coverage']:.1f}% of the true averages ({100 * row['coverage_top_fifth']:.1f}% in the top fifth)."
        )
    return out


def write_suite_report(
    result: SuiteRun,
    suite: Suite,
    path: str | Path,
    *,
    method: str,
    budget: int,
    runs: int,
    targets: int,
    seed: int,
    threshold: float,
    level: float,
    command: str,
) -> Path:
    """Write the page to ``path`` (atomically) and return it."""
    env = Environment(loader=PackageLoader("mdad.report"), autoescape=select_autoescape(["html"]))
    env.filters["code"] = code_spans
    html = env.get_template("suite_report.html").render(
        benchmarks=suite.names,
        weights=", ".join(f"{name} {w:.3g}" for name, w in zip(suite.names, suite.weights, strict=True)),
        normalised=", ".join(f"{n} {b:g}" for n, b in suite.baselines.items()),
        models=int(suite.complete.sum()),
        method=method,
        budget=budget,
        runs=runs,
        targets=targets,
        seed=seed,
        threshold=threshold,
        level=f"{100 * level:g}%",
        sentences=sentences(result, suite.names),
        figures=[agreement_figure(result, budget, threshold)],
        summary=_html_table(summary_table(result, suite.names)),
        per_benchmark=_html_table(benchmark_table(result)),
        command=command,
    )
    write_text(path, html, "the report")
    return Path(path)
