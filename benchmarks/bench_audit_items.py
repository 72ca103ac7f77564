"""Audit items: the price of validity for stronger models (`select --audit-items m`, docs/intervals.md#audit-items).

Off-population split: the best tenth of the models by full-benchmark accuracy are the new models,
the other nine tenths the sources. Per repetition (seed), a learned method chooses k items on the
sources and is assessed on them (held-out runs, as `select` does: its calibrated 90% interval);
m audit items are then drawn uniformly from the items it did not choose, and every new model's
corrected estimate and 90% design-based interval are computed (SelectedMicroBenchmark.audited).
Printed per dataset, method, k and m: coverage of the learned interval and of the corrected one
(pooled over repetitions, ± the standard error between repetitions, as the models of one
repetition share its items), their mean widths, the learned and corrected mean error, and the
share of new models whose learned estimate the audit flags as off by more than its noise.

    python benchmarks/bench_audit_items.py
    python benchmarks/bench_audit_items.py --datasets gpqa --methods anchor-points --reps 2
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np
from bench_beyond_sources import cell, ratio

import mdad
from mdad.micro.audit import AuditItems, without_unasked_audit

DATASETS = ("gpqa", "musr", "math-hard")
METHODS = ("anchor-points", "tinybenchmarks-gpirt", "stratified-confidence", "adaptive-1d")
SIZES = (50, 100)
AUDITS = (10, 25, 50)
LEVEL = 0.9


def asked_only(micro, new):
    """The new models' results as they would come back: an adaptive test's answers on the items it asks only
    (the test replayed on their full answers); a fixed micro-benchmark's whole results."""
    if not micro.adaptive:
        return new
    column = {item: j for j, item in enumerate(new.items)}
    cols = np.array([column[item] for item in micro.item_ids])
    kept = without_unasked_audit(micro.micro, new.scores[:, cols].astype(np.float64), np.ones(len(cols), dtype=bool))
    scores = np.full(new.scores.shape, np.nan, dtype=np.float32)
    scores[:, cols] = kept
    return replace(new, scores=scores)


def with_audit(answered, new, positions):
    """``answered`` with the new models' answers on the audit items (pool positions) added."""
    scores = np.array(answered.scores)
    scores[:, positions] = new.scores[:, positions]
    return replace(answered, scores=scores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--assess-runs", type=int, default=10)
    args = parser.parse_args()
    print(
        f"Best tenth as new models, the rest as sources; {args.reps} repetitions, {args.assess_runs} assessment runs each; "
        f"90% intervals; coverage %, ± SE between repetitions; widths and errors in points (mean over models)\n"
    )
    print(
        "| dataset | method | k | m | items | learned coverage | corrected coverage | learned width | corrected width "
        "| learned error | corrected error | flagged off |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets.split(","):
        matrix = mdad.load(name)
        accuracy = np.asarray(matrix.scores, dtype=np.float64).mean(axis=1)
        order = np.argsort(-accuracy, kind="stable")
        n_new = max(matrix.n_models // 10, 1)
        new, sources = matrix.take(models=np.sort(order[:n_new])), matrix.take(models=np.sort(order[n_new:]))
        truth = np.asarray(new.scores, dtype=np.float64).mean(axis=1)
        for method in args.methods.split(","):
            for k in SIZES:
                learned = {key: np.zeros((2, args.reps)) for key in ("covered",)}
                width, error = [], []
                audited = {m: {"covered": np.zeros((2, args.reps)), "width": [], "error": [], "off": []} for m in AUDITS}
                for rep in range(args.reps):
                    micro = mdad.select(sources, method, k, seed=rep)
                    micro = micro.with_assessment(mdad.assess(sources, method, k, runs=args.assess_runs, seed=rep))
                    answered = asked_only(micro, new)
                    intervals = micro.intervals(answered, level=LEVEL)
                    hit = (intervals.low <= truth) & (truth <= intervals.high)
                    learned["covered"][:, rep] = hit.sum(), len(truth)
                    width.extend(100 * (intervals.high - intervals.low))
                    error.extend(100 * (intervals.estimate - truth))
                    for m in AUDITS:
                        audit = AuditItems.draw(sources, micro.fixed_positions, m, seed=rep, method=method, size=k)
                        given = answered if not micro.adaptive else with_audit(answered, new, audit.positions)
                        frame = replace(micro, audit=audit).audited(given, level=LEVEL, learned=intervals.estimate)
                        low, high, corrected = (frame[c].to_numpy() for c in ("low", "high", "corrected"))
                        audited[m]["covered"][:, rep] = ((low <= truth) & (truth <= high)).sum(), len(truth)
                        audited[m]["width"].extend(100 * (high - low))
                        audited[m]["error"].extend(100 * (corrected - truth))
                        audited[m]["off"].extend((intervals.estimate < low) | (intervals.estimate > high))
                for m in AUDITS:
                    a = audited[m]
                    cells = [
                        name,
                        method,
                        str(k),
                        str(m),
                        f"{k} + {m}",
                        cell(ratio(*learned["covered"])),
                        cell(ratio(*a["covered"])),
                        f"{np.mean(width):.1f}",
                        f"{np.mean(a['width']):.1f}",
                        f"{np.mean(error):+.1f}",
                        f"{np.mean(a['error']):+.1f}",
                        f"{100 * np.mean(a['off']):.0f}%",
                    ]
                    print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
