"""What a response matrix holds, as a plain dict (printed by ``mdad info``)."""

from __future__ import annotations

import numpy as np

from mdad.data.matrix import ResponseMatrix
from mdad.wording import plural


def model_accuracy(matrix: ResponseMatrix) -> np.ndarray:
    """Each model's accuracy over the items it answered; NaN for a model that answered none (no warning:
    a model without answers is reported as such, not as a numpy warning)."""
    answered = ~np.isnan(matrix.scores)
    counts = answered.sum(axis=1)
    totals = np.where(answered, matrix.scores, 0.0).sum(axis=1, dtype=np.float64)
    return np.divide(totals, counts, out=np.full(matrix.n_models, np.nan), where=counts > 0)


def describe(matrix: ResponseMatrix) -> dict:
    """Models, items, subtasks with item counts, missing cells (and which models miss items),
    the range of model accuracies, binary or continuous scores, and option probabilities."""
    missing = np.isnan(matrix.scores)
    per_model = missing.sum(axis=1)
    names, counts = np.unique(matrix.subtasks, return_counts=True)
    accuracy = model_accuracy(matrix)
    evaluated = accuracy[~np.isnan(accuracy)]
    return {
        "source": matrix.source,
        "models": matrix.n_models,
        "items": matrix.n_items,
        "subtasks": {str(n): int(c) for n, c in zip(names, counts, strict=True)},
        "missing_cells": int(missing.sum()),
        "models_missing_items": {str(matrix.models[i]): int(per_model[i]) for i in np.flatnonzero(per_model)},
        "items_missing_for_some_model": int(missing.any(axis=0).sum()),
        "accuracy": {
            "min": float(evaluated.min()) if evaluated.size else None,
            "mean": float(evaluated.mean()) if evaluated.size else None,
            "max": float(evaluated.max()) if evaluated.size else None,
        },
        "scores": "binary" if matrix.is_binary else "continuous",
        "option_probs": matrix.has_option_probs,
        "items_with_option_probs": int(matrix.option_items.sum()),
        "options": int(matrix.option_probs.shape[2]) if matrix.option_probs is not None else None,
        "simulated": matrix.simulated,
    }


def format_description(info: dict) -> list[str]:
    """``describe``'s dict as short lines of text for a terminal."""
    acc = info["accuracy"]
    lines = [
        f"source: {info['source']}",
        f"models: {info['models']}   items: {info['items']}   subtasks: {len(info['subtasks'])}",
        "subtasks: " + ", ".join(f"{name} ({count})" for name, count in info["subtasks"].items()),
        f"scores: {info['scores']}   option probabilities: " + _option_text(info),
    ]
    if acc["min"] is not None:
        lines.append(f"accuracy: {acc['min']:.3f} to {acc['max']:.3f} (mean {acc['mean']:.3f})")
    else:
        lines.append("accuracy: none, no model answered any item (every cell is missing)")
    if info["missing_cells"]:
        worst = sorted(info["models_missing_items"].items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{m} ({n})" for m, n in worst[:5]) + (", ..." if len(worst) > 5 else "")
        lines.append(
            f"missing cells: {info['missing_cells']} on {plural(info['items_missing_for_some_model'], 'item')}; "
            f"{len(worst)} {'model misses' if len(worst) == 1 else 'models miss'} items: {shown}"
        )
    else:
        lines.append("missing cells: none")
    return lines


def _option_text(info: dict) -> str:
    if not info["option_probs"]:
        return "no"
    if info["items_with_option_probs"] == info["items"]:
        return f"yes ({info['options']} options)"
    return f"on {info['items_with_option_probs']} of {plural(info['items'], 'item')} ({info['options']} options; the others use their 0/1 scores)"
