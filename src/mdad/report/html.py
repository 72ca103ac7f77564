"""The self-contained HTML report and the files beside it, rebuilt from the results store alone."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from mdad.experiment.evaluate import evaluate_store
from mdad.experiment.store import ResultStore
from mdad.report import figures
from mdad.report.tables import wide_summary


@dataclass(frozen=True)
class Outputs:
    summary: pd.DataFrame
    curves: pd.DataFrame
    report: Path


def summary_sentences(summary: pd.DataFrame, threshold: float) -> list[str]:
    """One plain sentence per method: the MDAD at its largest size, on seen items."""
    seen = summary[(summary["view"] == "seen") & (summary["sources"] == summary["sources"].max())]
    out = []
    for method, rows in seen.groupby("method", sort=True):
        parts = []
        for _, row in rows.sort_values("size").iterrows():
            if row["mdad_reached"]:
                parts.append(f"with {row['size']} items it orders models at least {row['mdad']:g} points apart correctly "
                             f"{threshold:.0%} of the time")
            else:
                parts.append(f"with {row['size']} items it does not reach {threshold:.0%} agreement at any difference")
        out.append(f"{method}: " + "; ".join(parts) + ".")
    return out


def _png(fig) -> str:
    return base64.b64encode(figures.to_png(fig)).decode()


def build_outputs(out_dir: str | Path, threshold: float | None = None) -> Outputs:
    """Recompute the metrics of every stored cell; write summary/curves (parquet, CSV) and report.html."""
    store = ResultStore(out_dir)
    config = store.read_config()
    threshold = threshold if threshold is not None else config.get("threshold", 0.8)
    summary, curves = evaluate_store(store, threshold, config.get("seed", 0))
    root = Path(out_dir)
    for name, frame in (("summary", summary), ("curves", curves)):
        frame.to_parquet(root / f"{name}.parquet", index=False)
        frame.to_csv(root / f"{name}.csv", index=False)
    table = wide_summary(summary)
    table.to_csv(root / "table.csv", index=False)
    figs = []
    if not summary.empty:
        for view in ("seen", "unseen"):
            figs.append({"title": f"MDAD vs number of items ({view} items)",
                         "data": _png(figures.mdad_vs_size(summary, view))})
        sizes = sorted(summary["size"].unique())
        for size in sorted({sizes[0], sizes[-1]}):
            figs.append({"title": f"Agreement vs accuracy difference, {size} items",
                         "data": _png(figures.agreement_curves(curves, size, threshold=threshold))})
    env = Environment(loader=PackageLoader("mdad.report"), autoescape=select_autoescape(["html"]))
    html = env.get_template("report.html").render(
        data_source=config.get("data_source"), simulated=config.get("simulated", False),
        n_models=config.get("n_models"), n_items=config.get("n_items"), n_seen=config.get("n_seen"),
        runs=config.get("runs"), targets=config.get("targets"), group=config.get("group"),
        seed=config.get("seed"), threshold=threshold, command=config.get("command", ""),
        inputs=("option probabilities (gold-option probability)" if config.get("has_option_probs")
                else "0/1 correctness (no option probabilities in the data)"),
        sentences=summary_sentences(summary, threshold) if not summary.empty else ["No finished cells yet."],
        figures=figs, table_html=table.to_html(index=False, border=0, na_rep="-"),
    )
    report = root / "report.html"
    report.write_text(html, encoding="utf-8")
    return Outputs(summary=summary, curves=curves, report=report)
