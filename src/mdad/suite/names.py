"""Models matched across the benchmarks of a suite by name, the usual spellings read as one.

Leaderboards spell one model differently: the Open LLM Leaderboard's details repositories write
``org__model`` where its tables write ``org/model``, and names carry stray spaces. A name's
*key* removes both differences; models with the same key in different benchmarks are one model.
Two names of one benchmark with the same key are an ambiguous match: the first (in the data's
order) takes the key, the other keeps its own spelling, and a note names both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from mdad.wording import plural


def model_key(name: str) -> str:
    """The name under which a model is matched: surrounding whitespace removed and, in a name without
    ``/``, the first ``__`` read as ``/`` (``org__model`` -> ``org/model``)."""
    name = str(name).strip()
    if "/" not in name and "__" in name:
        name = name.replace("__", "/", 1)
    return name


def keyed_rows(models: Sequence[str], benchmark: str) -> tuple[dict[str, int], list[str]]:
    """Each model's key -> its row in ``models`` (one benchmark's), and a note per ambiguous key."""
    rows: dict[str, int] = {}
    notes = []
    for row, name in enumerate(models):
        key = model_key(name)
        if key in rows:
            first = str(models[rows[key]])
            notes.append(
                f"{benchmark}: {first!r} and {str(name)!r} are both read as {key!r}; {first!r} is matched to the other "
                f"benchmarks and {str(name)!r} is kept under its own spelling."
            )
            key = str(name)
        rows[key] = row
    return rows, notes


def match_models(models: Mapping[str, Sequence[str]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The suite's models (keys, in order of first appearance over the benchmarks), their row in each benchmark
    (models x benchmarks, -1 where a benchmark lacks the model), and notes: ambiguous matches, and per
    benchmark every model it lacks."""
    names = list(models)
    keyed = []
    notes: list[str] = []
    for benchmark in names:
        rows, ambiguous = keyed_rows(list(models[benchmark]), benchmark)
        keyed.append(rows)
        notes.extend(ambiguous)
    keys = list(dict.fromkeys(key for rows in keyed for key in rows))
    table = np.array([[rows.get(key, -1) for rows in keyed] for key in keys], dtype=np.int64).reshape(len(keys), len(names))
    for b, benchmark in enumerate(names):
        lacking = [keys[i] for i in np.flatnonzero(table[:, b] < 0)]
        if lacking:
            notes.append(
                f"{benchmark} lacks {plural(len(lacking), 'model')} of the other benchmarks (kept, with {benchmark} "
                f"marked missing): {', '.join(lacking)}."
            )
    return np.array(keys, dtype=str), table, notes
