"""Every field of a micro.json checked: type, range and consistency with the others.

A micro.json is a file a user may edit, copy or receive, and ``mdad estimate`` prints intervals
and order probabilities from it: a value that is of the right type but impossible (weights that
do not average, a pool smaller than the items drawn from it, a threshold above 1) would give
numbers that look right and are not. ``check_json`` checks the JSON object before it is decoded,
``check_fields`` the decoded fields against each other; each returns the first problem as one
sentence naming the field (None: nothing wrong). docs/intervals.md#a-micro-benchmark-file-is-checked-whole
lists the checks.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from mdad import methods as method_registry
from mdad.errors import MdadError
from mdad.methods.adaptive import AdaptiveBenchmark
from mdad.methods.base import MicroBenchmark
from mdad.methods.per_subtask import SubtaskMicroBenchmark
from mdad.seeding import check_seed

WEIGHT_SUM_TOLERANCE = 1e-6  # weights of a weighted mean sum to 1 within rounding
UNIT_PARAMETERS = ("source_low", "source_high", "lam")  # estimator parameters that are fractions in [0, 1]
MDAD_FIELDS = ("mdad", "mdad_low", "mdad_high", "mdad_robust", "mdad_robust_low", "mdad_robust_high")  # points, NaN: not reached
METRIC_RANGES = {"error": (0.0, 1.0, ""), "kendall_tau": (-1.0, 1.0, "")}  # an assessment's metrics with a fixed range


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def check_json(data: dict) -> str | None:
    """The first problem of the JSON object's fields taken one by one (None: none)."""
    if not isinstance(data["method"], str):
        return "the field 'method' must be the name of a selection method"
    try:
        method_registry.get(data["method"])
    except MdadError as exc:
        return f"the field 'method': {str(exc).rstrip('.')}"
    try:
        check_seed(data["seed"], "the field 'seed'")
    except MdadError as exc:
        return str(exc).rstrip(".")
    if isinstance(data["items"], list) and not data["items"]:
        return "it lists no items"
    for name in ("items", "subtasks"):
        if not _strings(data[name]):
            return f"the field {name!r} must be a list of texts"
    items = data["items"]
    if any(not item for item in items):
        return "the field 'items' holds an empty item id"
    duplicate = next((item for item, count in Counter(items).items() if count > 1), None)
    if duplicate is not None:
        return f"the field 'items' lists the item {duplicate!r} more than once"
    positions = data["pool_positions"]
    if not isinstance(positions, list) or not all(_whole(p) for p in positions):
        return "pool_positions must be a list of integers"
    if any(p < 0 for p in positions):
        return "the field 'pool_positions' holds a negative position"
    if len(set(positions)) != len(positions):
        return "the field 'pool_positions' lists a pool position more than once"
    for name in ("data_source", "data_fingerprint"):
        if name in data and not isinstance(data[name], str):
            return f"the field {name!r} must be a text"
    version = data.get("results_version", 1)
    if not _whole(version) or version < 1:
        return f"the field 'results_version' must be a whole number, at least 1, not {_short(version)}"
    if "pool_items" in data and (not _whole(data["pool_items"]) or data["pool_items"] < 1):
        return "the field 'pool_items' must be a whole number of items, at least 1"
    if "size" in data and (not _whole(data["size"]) or data["size"] < 1):
        return "the field 'size' must be a whole number of items, at least 1"
    tasks = data.get("tasks")
    if tasks is not None and (not isinstance(tasks, dict) or not all(isinstance(t, dict) for t in tasks.values())):
        return "the field 'tasks' must map each subtask to an object (its version, n-shot, task file)"
    hashes = data.get("item_hashes")
    if hashes is not None and (not _strings(hashes) or len(hashes) != len(items)):
        return f"the field 'item_hashes' must be a list of {len(items)} texts, one per item"
    assessment = data.get("assessment")
    if assessment and not isinstance(assessment, dict):
        return "the field 'assessment' must be an object"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def check_fields(fields: dict[str, Any], stated_size: int | None = None) -> str | None:
    """The first inconsistency among the decoded fields of a micro-benchmark (None: none);
    ``stated_size``: the file's 'size' field (None: absent)."""
    item_ids, subtasks, micro = fields["item_ids"], fields["subtasks"], fields["micro"]
    n, pool = len(item_ids), fields["n_pool"]
    if len(subtasks) != n or len(micro.items) != n:
        return f"it lists {n} items but {len(subtasks)} subtasks and {len(micro.items)} pool positions"
    if n > pool:
        return f"the field 'pool_items' ({pool}) is smaller than the {n} items drawn from the pool"
    if micro.items.max() >= pool:
        return f"the field 'pool_positions' holds position {int(micro.items.max())}, outside the pool of {pool} items 'pool_items' gives"
    adaptive = method_registry.get(fields["method"]).adaptive
    if adaptive != isinstance(micro, AdaptiveBenchmark):
        return f"the estimator ({micro.kind}) is not what {fields['method']} makes ({'an adaptive test' if adaptive else 'a fixed set of items'})"
    problem = _pool_problem(fields, pool) or _estimator_problem(micro, "the estimator", pool)
    if problem:
        return problem
    if stated_size is not None and stated_size != micro.size:
        return f"the field 'size' says {stated_size} items, but the estimator asks each model {micro.size}"
    audit = fields.get("audit")
    if audit is not None:
        fixed = (np.empty(0, dtype=str), np.empty(0, dtype=np.int64)) if adaptive else (item_ids, micro.items)
        problem = audit.problem(*fixed, pool)
        if problem:
            return problem
    assessment = fields["assessment"]
    if assessment is not None:
        return _assessment_problem(assessment, fields["method"], micro.size)
    return None


def _pool_problem(fields: dict[str, Any], pool: int) -> str | None:
    """Whether the pool's size agrees everywhere it is recorded: per subtask, and in the source models' priors."""
    per_subtask = fields["pool_subtasks"]
    subtasks = fields["subtasks"]
    if per_subtask is not None:
        if sum(per_subtask.values()) != pool:
            return f"the field 'pool_subtasks' adds up to {sum(per_subtask.values())} items, but 'pool_items' is {pool}"
        names, drawn = np.unique(subtasks, return_counts=True)
        for name, count in zip(names.tolist(), drawn.tolist(), strict=True):
            if count > per_subtask.get(name, 0):
                return (
                    f"the field 'pool_subtasks' gives subtask {name!r} {per_subtask.get(name, 0)} pool items, "
                    f"but {count} of the items are drawn from it"
                )
    prior = fields["accuracy_prior"]
    if prior is not None:
        if prior.pool_items != pool:
            return f"the field 'accuracy_prior' is over a pool of {prior.pool_items} items, but 'pool_items' is {pool}"
        if len(prior.counts) == 0 or prior.counts.min() < 0 or prior.counts.max() > pool:
            return f"the field 'accuracy_prior' must count between 0 and {pool} correct items per source model"
        if not 0 <= prior.uniform_weight <= 1:
            return "the field 'accuracy_prior' has a uniform weight outside 0 to 1"
    pair = fields["pair_prior"]
    for table in (pair, pair.best_fifth) if pair is not None else ():
        if table is not None and int(table.edges[-1]) > pool:
            return f"the field 'pair_prior' has bins of up to {int(table.edges[-1])} differing items, beyond a pool of {pool}"
    return None


def _estimator_problem(micro: MicroBenchmark, where: str, pool: int | None = None) -> str | None:
    """Whether the estimator's parameters are numbers of the right shape and range. ``weights`` are a
    weighted mean over the items: non-negative, summing to 1 within rounding. For the weighted
    estimators that mean is the estimate; the IRT-based ones store the same kind of weights (cluster
    shares or equal weights) and are held to the same rule (docs/intervals.md#a-micro-benchmark-file-is-checked-whole).
    ``pool``: the pool's size, for the item parameters (None: a part, whose parameters are over its subtask)."""
    n = len(micro.items)
    for name, value in vars(micro).items():
        if name in ("items", "parts") or isinstance(value, (bool, str)) or value is None:
            continue
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            return f"{where}'s {name!r} must be numbers"
        if not np.isfinite(array).all():
            return f"{where}'s {name!r} holds values that are not finite numbers"
        if name in UNIT_PARAMETERS and not ((array >= 0) & (array <= 1)).all():
            return f"{where}'s {name!r} must lie between 0 and 1"
    weights = np.asarray(micro.weights)
    if weights.dtype.kind not in "biuf":
        return f"{where}'s weights must be numbers, one per item"
    weights = weights.astype(np.float64)
    if weights.shape != (n,):
        return f"{where} has {weights.size} weights for {n} items"
    with np.errstate(over="ignore"):
        total = weights.sum()
    if (weights < 0).any() or not abs(total - 1.0) <= WEIGHT_SUM_TOLERANCE:
        return (
            f"{where}'s weights must be non-negative and sum to 1 (a weighted mean of the items), "
            f"not sum to {total:.6g} with smallest {weights.min():.6g}"
        )
    if getattr(micro, "source_low", 0) > getattr(micro, "source_high", 1):
        return f"{where}'s 'source_low' lies above its 'source_high'"
    b = getattr(micro, "b", None)  # item parameters: over the whole pool, or one per chosen item
    if b is not None and pool is not None and len(b) not in (pool, n):
        return f"{where} has item parameters for {len(b)} items, neither the pool's {pool} nor its {n} items"
    if isinstance(micro, AdaptiveBenchmark) and not 1 <= micro.length <= n:
        return f"{where}'s 'length' must be between 1 and the {n} items of its pool"
    if isinstance(micro, SubtaskMicroBenchmark) and micro.parts:
        shares = micro.shares
        if len(shares) != len(micro.parts) or (shares < 0).any() or abs(shares.sum() - 1.0) > WEIGHT_SUM_TOLERANCE:
            return f"{where}'s shares must be one non-negative share per part, summing to 1"
        for i, part in enumerate(micro.parts):
            problem = _estimator_problem(part, f"part {i + 1} of {where}")
            if problem:
                return problem
    return None


def _assessment_problem(assessment, method: str, size: int) -> str | None:
    """Whether the stored assessment is of this micro-benchmark and its numbers are in range."""
    if (assessment.method, assessment.size) != (method, size):
        return f"the field 'assessment' is of {assessment.method} with {assessment.size} items, but the micro-benchmark is {method} with {size} items"
    if not 0 < assessment.threshold < 1:
        return f"the field 'assessment' has a threshold of {assessment.threshold:g}; it must lie between 0 and 1"
    for name in ("runs", "targets", "sources"):
        value = getattr(assessment, name)
        if not _whole(value) or value < 1:
            return f"the field 'assessment' must give its {name} as a whole number, at least 1"
    if assessment.mdad_pairs is not None and (not _whole(assessment.mdad_pairs) or assessment.mdad_pairs < 0):
        return "the field 'assessment' must give its mdad_pairs as a whole number, at least 0, or null"
    if not isinstance(assessment.mdad_falls_back, bool):
        return "the field 'assessment' must give its mdad_falls_back as true or false"
    ranges = {name: (0.0, 100.0, "points") for name in MDAD_FIELDS} | METRIC_RANGES
    for name, (low, high, unit) in ranges.items():
        value = getattr(assessment, name) if name in MDAD_FIELDS else assessment.metrics.get(name, np.nan)
        if not _number(value) or not (np.isnan(value) or low <= value <= high):
            return (
                f"the field 'assessment' gives {name} {_short(value)}; it must be null (not reached) or between {low:g} and {high:g} {unit}".rstrip()
            )
    for name, value in assessment.metrics.items():
        if not _number(value) or np.isinf(value):
            return f"the field 'assessment' gives {name} {_short(value)}; it must be a finite number or null"
    for calibration in assessment.by_length:
        if not _whole(calibration.length) or not 0 < calibration.length < size:
            return f"the field 'assessment' has a calibration at length {calibration.length!r}; it must be a whole number between 1 and {size - 1}"
    lengths = [c.length for c in assessment.by_length]
    if lengths != sorted(set(lengths)):
        return "the field 'assessment' must give its calibrations by length in increasing order of length, each once"
    stored = [(assessment.interval_calibration, assessment.order_calibration), *((c.intervals, c.orders) for c in assessment.by_length)]
    for intervals, order in stored:
        problem = _calibration_problem(intervals, order)
        if problem:
            return problem
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _calibration_problem(intervals, order) -> str | None:
    """Whether stored calibrations of intervals and order probabilities (an assessment's, or those at one length of
    an adaptive test) hold possible numbers: residuals (truth - estimate) of accuracies lie in [-1, 1], bin edges
    are accuracies, and the order fit is finite with positive spreads."""
    if intervals is not None:
        values = np.concatenate([np.asarray(intervals.edges, dtype=np.float64).ravel(), *[np.ravel(r) for r in intervals.residuals]])
        if not len(np.concatenate([np.ravel(r) for r in intervals.residuals])):
            return "the field 'assessment' has an interval calibration without residuals"
        if not np.isfinite(values).all() or np.abs(values).max() > 1 or (np.asarray(intervals.edges) < 0).any():
            return "the field 'assessment' has an interval calibration whose edges or residuals are not accuracies (0 to 1, residuals -1 to 1)"
    if order is not None:
        numbers = [
            order.intercept,
            order.slope,
            *(() if order.spread is None else np.ravel(order.spread)),
            *(() if order.edges is None else np.ravel(order.edges)),
        ]
        if not np.isfinite(np.asarray(numbers, dtype=np.float64)).all() or not _whole(order.pairs) or order.pairs < 1:
            return "the field 'assessment' has an order calibration that is not finite numbers over at least 1 pair"
    return None
