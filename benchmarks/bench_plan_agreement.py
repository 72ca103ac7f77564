"""Does `mdad plan --method all --size K` agree with a full `mdad run` of the same methods at K?

    python benchmarks/bench_plan_agreement.py [--datasets gpqa,musr,math-hard] [--sizes 10,50,250]
                                               [--methods all] [--runs 20] [--run-runs 20] [--workers 2]

For each dataset and size: `mdad.plan(matrix, size=K, methods=...)` (exact MDAD for the random
designs, simulated on --runs held-out runs with its interval for the others, every non-target
model a source, the whole pool) and `mdad.Experiment` with the same methods at K (--run-runs
runs, the library's default targets and sources, the seen half as the pool: the paper's
protocol), whose seen-view MDAD, interval and robust MDAD are set beside the plan's. A size
larger than the seen half is replaced by the seen half's largest default size. "agree" means
the two intervals overlap (an exact answer's interval is its value); both "not reached" agree.
Prints a markdown table, then each dataset's and size's recommendation; the record keeps every cell.
``--smoke``: gpqa, 10 items, two methods, 2 runs (and the --rule table on as little).

    python benchmarks/bench_plan_agreement.py --rule --cells DIR [--datasets ...] [--questions "detect 2.0,detect 5.0,size 25,size 100"]
                                               [--methods all] [--runs 20] [--truth-runs 100] [--truth-methods judged|all]
                                               [--missing error|drop-items|drop-models] [--workers 2]

``--rule``: the recommendation of `plan --method all` for each dataset, question and population of new
models against a --truth-runs experiment of the methods it compared (``--truth-methods all``: every method it
answered, several times the CPU), at the size the rule compared and
the sizes about 10% below and above, on the same pool plan uses (the whole benchmark) and with fresh
held-out runs (another seed). The rule's error rate: of the recommendations that named one method, how
often it was truly not better (its share of pairs in the compared bin at the compared size, over the
truth runs, no larger) than a method it was said to beat (uniform random, the runner-up). Each cell is
kept in --cells as it is done, so an interrupted measurement resumes.
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from pathlib import Path

import suite

import mdad
from mdad.errors import MdadError
from mdad.experiment.splits import n_seen_items
from mdad.planning.simulated import simulated_plans
from mdad.planning.ties import simplest_first


def interval(low: float, high: float) -> tuple[float, float]:
    return (low if not math.isnan(low) else math.inf, high if not math.isnan(high) else math.inf)


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def show(value: float) -> str:
    return "n.r." if math.isnan(value) else f"{value:g}"


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--datasets", default="gpqa,musr,math-hard")
    parser.add_argument("--sizes", default="10,50,250")
    parser.add_argument("--methods", default="all")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--run-runs", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rule", action="store_true", help="The recommendations against 100-run experiments and the rule's error rate.")
    parser.add_argument("--cells", type=Path, default=None, help="With --rule: folder keeping each finished cell (resumable).")
    parser.add_argument("--questions", default=",".join(QUESTIONS))
    parser.add_argument("--truth-runs", type=int, default=100)
    parser.add_argument(
        "--missing",
        choices=("error", "drop-items", "drop-models"),
        default="error",
        help="With --rule: a leaderboard with cells not evaluated as it is (the learned methods refuse it) or without them.",
    )
    parser.add_argument(
        "--truth-methods",
        choices=("judged", "all"),
        default="judged",
        help="With --rule: the truth of the methods the answer compared (leader, uniform random, runner-up, tied set) or of all.",
    )
    args = parser.parse_args()
    if args.rule and args.cells is None and not args.smoke:
        parser.error("--rule keeps its cells in a folder: give --cells DIR")
    if args.smoke:
        args.datasets, args.sizes, args.methods, args.runs, args.run_runs, args.workers = "gpqa", "10", "random,stratified-confidence", 2, 2, 1
        args.questions, args.truth_runs = "detect 5.0,size 25", 2
    with suite.Session("bench_plan_agreement", args) as session:
        if args.smoke or not args.rule:
            measure(args, session)
        if args.smoke or args.rule:
            rule_table(args, session)


QUESTIONS = {"detect 2.0": {"detect": 2.0}, "detect 5.0": {"detect": 5.0}, "size 25": {"size": 25}, "size 100": {"size": 100}}
TRUTH_SEED = 1000  # the truth's held-out runs are not the plan's


def rule_table(args, session: suite.Session) -> None:
    """Every (dataset, question, population) cell, from --cells when already done; the table and the error rate."""
    named = wrong = 0
    cells = []
    print("\n| dataset | question | new models | answer | compared at | truth: share of the named or leading method, of those judged |")
    print("|---|---|---|---|---|---|", flush=True)
    for name in args.datasets.split(","):
        loaded = mdad.load(name)
        matrix = loaded if args.missing == "error" else loaded.require_complete(args.missing)  # "error": as it is, plan says what it refuses
        shown = name if matrix is loaded else f"{name} ({args.missing})"  # its cells are kept apart from the whole matrix's
        for question in args.questions.split(","):
            for population in ("like-sources", "stronger"):
                key = f"{name}_{question.replace(' ', '-')}_{population}" + ("" if matrix is loaded else f"_{args.missing}")
                path = None if args.cells is None else args.cells / f"{key}.json"
                if path is not None and path.exists():
                    cell = json.loads(path.read_text())
                else:
                    start = time.process_time()
                    cell = rule_cell(matrix, question, population, args)
                    cell["cpu_s"] = time.process_time() - start  # this process; the workers' CPU is in the session's total
                    if path is not None:
                        path.parent.mkdir(parents=True, exist_ok=True)
                        partial = path.with_suffix(".part")
                        partial.write_text(json.dumps(cell, indent=1))
                        partial.replace(path)  # whole or absent
                session.add(key, **{k: v for k, v in cell.items() if k != "truth"})
                cells.append(cell)
                if cell["wrong"] is not None:
                    named += 1
                    wrong += cell["wrong"]
                answer = cell["recommended"] if not cell["tied"] else f"tied: {', '.join(cell['tied'])}; recommends {recommended(cell)}"
                answer = cell["sentence"].rstrip(".") if answer == "-" else answer
                truths = ", ".join(f"{m} {cell['truth'][m][str(cell['size'])]:.3f}" for m in cell["judged"])
                where = f"{cell['size']} items, pairs {cell['bin']:g} points apart" if cell["judged"] else "-"
                print(f"| {shown} | {question} | {population} | {answer} | {where} | {truths or '-'} |", flush=True)
    if named:
        print(f"\nThe rule named one method {named} times; it was truly not better than one it beat {wrong} times.")
    else:
        tied = sum(bool(cell["tied"]) for cell in cells)
        unanswered = sum(cell["recommended"] == "-" for cell in cells)
        print(
            f"\nThe rule named no single method: of the {len(cells)} answers, {tied} were a tied set, {len(cells) - tied - unanswered} "
            f"uniform random alone and {unanswered} no answer (no pair of models that far apart)."
        )
    session.add("rule error rate", named=named, wrong=wrong)
    held, margins = margin_check(cells)
    if margins:
        print(
            f"\nThe printed paired differences (the leader's share minus another's, ± its standard error) lay within 2 printed "
            f"standard errors of the truth's difference in {held} of {margins}."
        )
    session.add("paired differences within 2 SE", held=held, margins=margins)
    behind = [(cell, loss) for cell in cells if cell["tied"] and (loss := lead_over(cell, recommended(cell))) is not None]
    if behind:
        far = [loss for _, loss in behind if loss > FAR_BEHIND]
        before = [loss for cell, _ in behind if (loss := lead_over(cell, cell["recommended"])) is not None and loss > FAR_BEHIND]
        print(
            f"\nOf the {len(behind)} tied answers, the recommended method (the simplest of the tied set) was truly behind the leader by "
            f"more than {FAR_BEHIND} of the pairs in {len(far)}" + (f" (the most: {max(far):.3f})" if far else "") + "; "
            f"with the recommendation the cell recorded, in {len(before)}."
        )
        session.add("tied answers far behind the leader", tied=len(behind), far_behind=len(far), recorded_far_behind=len(before))


FAR_BEHIND = 0.05  # a share of pairs ordered correctly: the recommended method of a tied set this far behind the leader


def recommended(cell: dict) -> str:
    """The method the rule of this code recommends for the cell: the simplest of its tied set (the leader first among
    equals), which may differ from what an older rule recorded; the named method when there is no tie."""
    return simplest_first(cell["tied"], cell["tied"], cell["judged"][0])[0] if cell["tied"] else cell["recommended"]


def lead_over(cell: dict, method: str) -> float | None:
    """The truth's share of the leader minus that of ``method``, at the compared size (None: no truth of it)."""
    truth, size = cell["truth"], str(cell["size"])
    if not cell["judged"] or method not in truth:
        return None
    return truth[cell["judged"][0]][size] - truth[method][size]


MARGIN = re.compile(r"minus (\S+)'s: ([+-]\d+\.\d+) ± (\d+\.\d+)")


def margin_check(cells: list[dict]) -> tuple[int, int]:
    """Of the paired differences the answers printed (leader minus uniform random, minus the runner-up), how many lay
    within 2 printed standard errors of the same difference over the truth runs, at the compared size."""
    held = total = 0
    for cell in cells:
        if not cell["judged"]:
            continue
        leader, size = cell["judged"][0], str(cell["size"])
        for other, difference, se in MARGIN.findall(cell["sentence"]):
            truth = cell["truth"][leader][size] - cell["truth"][other][size]
            held += abs(float(difference) - truth) <= 2 * float(se)
            total += 1
    return held, total


def rule_cell(matrix, question: str, population: str, args) -> dict:
    """One recommendation, and the truth of every method it answered at the compared size and its neighbours."""
    asked = QUESTIONS[question] if question in QUESTIONS else _parse(question)
    cell: dict = {"size": None, "bin": None, "truth": {}, "wrong": None}
    try:
        plan = mdad.plan(matrix, methods=args.methods, runs=args.runs, workers=args.workers, new_models=population, **asked)
    except MdadError as exc:  # the question has no answer for this population (no pair of models that far apart)
        return {**cell, "recommended": "-", "tied": [], "judged": [], "sentence": str(exc)}
    cell.update(recommended=plan.recommended, tied=list(plan.tied), judged=list(plan.judged), sentence=plan.recommendation)
    if not plan.judged:
        return cell
    leader = plan.row(plan.judged[0])
    size = int(leader.items) if "detect" in asked else int(asked["size"])
    lower = float(asked["detect"]) if "detect" in asked else float(leader.value)
    sizes = sorted({k for k in (round(size / 1.1), size, round(size * 1.1)) if 1 <= k <= matrix.n_items})
    answered = tuple(row.method for row in plan.rows)
    methods = answered if args.truth_methods == "all" else tuple(m for m in answered if m in {*plan.judged, *plan.tied})
    found = simulated_plans(
        matrix,
        methods,
        detect=lower,
        sizes=sizes,
        runs=args.truth_runs,
        seed=TRUTH_SEED,
        workers=args.workers,
        targets_from="top" if population == "stronger" else "random",
    )
    truth = {m: {str(k): float(share) for k, share in zip(f.sizes, f.agreement, strict=True)} for m, f in found.items()}
    cell.update(size=size, bin=lower, truth=truth, truth_methods=args.truth_methods)
    if not plan.tied:  # one method named: was it truly better than each method it beat?
        mine = truth[plan.judged[0]][str(size)]
        cell["wrong"] = any(mine <= truth[other][str(size)] for other in plan.judged[1:])
    return cell


def _parse(question: str) -> dict:
    kind, _, value = question.partition(" ")
    if kind not in ("detect", "size") or not value:
        raise SystemExit(f"A question is 'detect D' or 'size K', got {question!r}.")
    return {kind: float(value) if kind == "detect" else int(value)}


def measure(args, session: suite.Session) -> None:
    """Plan and run every dataset and size; print the table and record every cell."""
    agree = total = 0
    print(f"plan runs {args.runs}, mdad run runs {args.run_runs}\n", flush=True)
    print("| dataset | K | method | plan | plan MDAD [interval] | run MDAD, seen [interval] | run robust MDAD | agree |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    recommendations = []
    for name in args.datasets.split(","):
        rows = []
        matrix = mdad.load(name)
        seen = n_seen_items(matrix)
        sizes = sorted({k if k <= seen else max(s for s in (10, 25, 50, 100, 200) if s <= seen) for k in map(int, args.sizes.split(","))})
        start = time.perf_counter()
        plans = {k: mdad.plan(matrix, size=k, methods=args.methods, runs=args.runs, workers=args.workers, new_models="like-sources") for k in sizes}
        plan_time = time.perf_counter() - start
        methods = [row.method for row in plans[sizes[0]].rows]
        config = mdad.ExperimentConfig.for_matrix(matrix, methods=methods, sizes=sizes, runs=args.run_runs)
        start = time.perf_counter()
        summary = mdad.Experiment(matrix, config).run(workers=args.workers).summary()
        run_time = time.perf_counter() - start
        summary = summary[summary["view"] == "seen"].set_index(["method", "size"])
        for k in sizes:
            for row in plans[k].rows:
                cell = summary.loc[(row.method, k)]
                run_iv = interval(cell["mdad_low"], cell["mdad_high"]) if not math.isnan(cell["mdad"]) else (math.inf, math.inf)
                plan_iv = interval(row.low, row.high) if not math.isnan(row.value) else (math.inf, math.inf)
                ok = overlap(plan_iv, run_iv)
                session.add(
                    f"{name} {k} {row.method}",
                    exact=row.exact,
                    plan_mdad=row.value,
                    plan_low=row.low,
                    plan_high=row.high,
                    run_mdad=cell["mdad"],
                    run_low=cell["mdad_low"],
                    run_high=cell["mdad_high"],
                    agree=ok,
                )
                agree += ok
                total += 1
                how = "exact" if row.exact else "sim."
                plan_text = f"{show(row.value)} [{show(row.low)}, {show(row.high)}]"
                run_text = f"{show(cell['mdad'])} [{show(cell['mdad_low'])}, {show(cell['mdad_high'])}]"
                rows.append(
                    f"| {name} | {k} | {row.method} | {how} | {plan_text} | {run_text} | {show(cell['mdad_robust'])} | {'yes' if ok else 'no'} |"
                )
            recommendations.append(f"| {name} | {k} | {plans[k].recommended} | {plans[k].recommendation} |")
        where = f"{config.sources[0]} sources, {config.targets} targets"
        print("\n".join(rows), flush=True)
        session.add(f"{name}: time", plan_wall_s=plan_time, run_wall_s=run_time)
        print(f"{name}: plan {plan_time:.0f} s for sizes {sizes}; mdad run {run_time:.0f} s ({where})", file=sys.stderr, flush=True)
    print(f"\nintervals overlap in {agree} of {total} cells")
    print("\n| dataset | K | recommended | sentence |\n|---|---|---|---|")
    print("\n".join(recommendations))


if __name__ == "__main__":
    main()
