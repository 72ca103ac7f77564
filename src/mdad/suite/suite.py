"""A suite: several benchmarks whose scores are averaged into one leaderboard score (docs/suites.md).

Each benchmark keeps its own response matrix (items, subtasks, score type); models are matched
across them by name (mdad.suite.names). The suite score of a model is the weighted mean of its
per-benchmark scores, each optionally normalised above a random-guess baseline as the Open LLM
Leaderboard v2 does: ``max(0, (score - baseline) / (1 - baseline))``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mdad.data.matrix import ResponseMatrix
from mdad.errors import MdadError
from mdad.suite.names import match_models
from mdad.suite.tasks import split_tasks

Benchmarks = str | Sequence[str] | Mapping[str, "str | Path | ResponseMatrix"]


def parse_benchmarks(spec: Benchmarks) -> dict[str, str | Path | ResponseMatrix]:
    """Benchmark name -> dataset name, path or matrix, from ``"gpqa,musr,NAME=PATH"``, a list of such entries or a
    mapping; one sentence for a benchmark named twice or given twice."""
    entries: list[tuple[str, str | Path | ResponseMatrix]]
    if isinstance(spec, Mapping):
        entries = [(str(name), source) for name, source in spec.items()]
    else:
        texts = [t.strip() for t in spec.split(",")] if isinstance(spec, str) else [str(t).strip() for t in spec]
        entries = []
        for text in texts:
            if not text:
                raise MdadError("The suite has an empty entry; give benchmarks as NAME or NAME=PATH, separated by commas.")
            name, sep, given = text.partition("=")
            entries.append((name.strip(), given.strip()) if sep else (Path(text).stem if Path(text).exists() else text, text))
    out: dict[str, str | Path | ResponseMatrix] = {}
    seen_sources: dict[str, str] = {}
    for name, source in entries:
        if not name or (isinstance(source, str) and not source):
            raise MdadError(f"The suite entry {name + '=' + str(source)!r} lacks a name or a source; give NAME=PATH.")
        if name in out:
            raise MdadError(f"The suite names the benchmark {name!r} twice; give each benchmark once.")
        if not isinstance(source, ResponseMatrix):
            where = str(Path(source).resolve()) if Path(source).exists() else str(source)
            if where in seen_sources:
                raise MdadError(f"The suite gives the same benchmark twice ({seen_sources[where]!r} and {name!r} are both {source}); give each once.")
            seen_sources[where] = name
        out[name] = source
    if len(out) < 2:
        raise MdadError(f"A suite needs at least two benchmarks, got {len(out)}; a single benchmark is an ordinary micro-benchmark.")
    return out


def one_source(spec: Benchmarks) -> str | None:
    """The path when ``spec`` is a single existing file or folder (one source holding several tasks), else None."""
    texts = [spec] if isinstance(spec, str) else list(spec) if not isinstance(spec, Mapping) else []
    if len(texts) == 1 and isinstance(texts[0], (str, Path)) and "," not in str(texts[0]) and "=" not in str(texts[0]):
        return str(texts[0]).strip() if Path(str(texts[0]).strip()).exists() else None
    return None


def _real(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise MdadError(f"{what} must be a finite number, got {value!r}.")
    return float(value)


def check_weights(weights: Sequence[float] | Mapping[str, float] | None, names: Sequence[str]) -> np.ndarray:
    """The benchmarks' weights, summing to 1 (equal when None); one sentence when they do not match the benchmarks."""
    if weights is None:
        return np.full(len(names), 1.0 / len(names))
    if isinstance(weights, Mapping):
        unknown = [str(k) for k in weights if k not in names]
        lacking = [n for n in names if n not in weights]
        if unknown or lacking:
            problem = f"names the unknown benchmark {unknown[0]!r}" if unknown else f"gives no weight to {lacking[0]!r}"
            raise MdadError(f"The weights do not match the benchmarks: it {problem} (benchmarks: {', '.join(names)}).")
        values = [weights[n] for n in names]
    else:
        values = list(weights)
        if len(values) != len(names):
            raise MdadError(f"The weights do not match the benchmarks: {len(values)} weights for {len(names)} benchmarks ({', '.join(names)}).")
    array = np.array([_real(v, "Each weight") for v in values])
    if (array < 0).any() or not array.sum() > 0:
        raise MdadError(f"The weights must be non-negative with a positive sum, got {', '.join(f'{v:g}' for v in array)}.")
    return array / array.sum()


def check_baselines(normalise: Mapping[str, float] | None, names: Sequence[str]) -> dict[str, float]:
    """Benchmark -> random-guess baseline of its normalisation; one sentence for an unknown benchmark or a baseline
    outside [0, 1)."""
    out: dict[str, float] = {}
    for name, baseline in (normalise or {}).items():
        if name not in names:
            raise MdadError(f"The normalisation names {name!r}, which is not a benchmark of the suite ({', '.join(names)}).")
        value = _real(baseline, f"The baseline of {name}")
        if not 0 <= value < 1:
            raise MdadError(f"The baseline of {name} must lie in [0, 1) (the score of random guessing), got {value:g}.")
        out[str(name)] = value
    return out


def normalise(raw: np.ndarray, baselines: np.ndarray) -> np.ndarray:
    """Per-benchmark scores (... x benchmarks, fractions) rescaled above each benchmark's random-guess baseline, as the
    Open LLM Leaderboard v2 does: max(0, (score - baseline) / (1 - baseline)); NaN (missing) kept."""
    raw = np.asarray(raw, dtype=np.float64)
    return np.where(np.isnan(raw), np.nan, np.maximum(0.0, (raw - baselines) / (1.0 - baselines)))


def parse_assignments(text: str | None, what: str) -> dict[str, float] | list[float] | None:
    """``"a=0.25,b=0.5"`` as a mapping, ``"1,2,1"`` as a list (None stays None); one sentence for anything else."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        if all("=" in p for p in parts):
            return {name.strip(): float(value) for name, _, value in (p.partition("=") for p in parts)}
        if any("=" in p for p in parts):
            raise ValueError
        return [float(p) for p in parts]
    except ValueError:
        raise MdadError(f"{what} takes numbers separated by commas (1,1,2) or NAME=NUMBER pairs (gpqa=0.25,musr=0.5), got {text!r}.") from None


@dataclass(frozen=True, eq=False, repr=False)
class Suite:
    """Several benchmarks averaged into one score.

    ``benchmarks``: name -> response matrix; ``weights``: one per benchmark, summing to 1; ``baselines``:
    benchmark -> random-guess baseline of its normalisation (benchmarks not named are not normalised);
    ``models``: the matched model names (mdad.suite.names.model_key); ``rows``: models x benchmarks, each
    model's row in each benchmark's matrix (-1: missing); ``notes``: unmatched and ambiguous names.
    """

    benchmarks: dict[str, ResponseMatrix]
    weights: np.ndarray
    baselines: dict[str, float]
    models: np.ndarray
    rows: np.ndarray
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        parts = ", ".join(f"{name} ({m.n_items} items)" for name, m in self.benchmarks.items())
        return f"<Suite of {len(self.benchmarks)} benchmarks: {parts}; {len(self.models)} models, {int(self.complete.sum())} in every benchmark>"

    @classmethod
    def load(
        cls,
        benchmarks: Benchmarks,
        *,
        weights: Sequence[float] | Mapping[str, float] | None = None,
        normalise: Mapping[str, float] | None = None,
        metric: str | None = None,
        filter_name: str | None = None,
        missing: str = "error",
        reruns: str = "latest",
    ) -> Suite:
        """A suite from named datasets, paths (any readable format) or matrices.

        Parameters
        ----------
        benchmarks : str, list or mapping
            ``"gpqa,musr,NAME=PATH"``, a list of such entries, or a mapping name -> dataset name, path or
            :class:`~mdad.ResponseMatrix`.
        weights : list or mapping, optional
            One weight per benchmark (in order, or by name); equal by default.
        normalise : mapping, optional
            Benchmark -> random-guess baseline in [0, 1): its score is rescaled to
            ``max(0, (score - baseline) / (1 - baseline))`` before averaging (the Open LLM Leaderboard v2 rule).
        metric, filter_name : str, optional
            As for :func:`mdad.load`, for every benchmark read from harness results.
        missing : {"error", "drop-items", "drop-models"}
            What to do with a benchmark's cells that were not evaluated (``ResponseMatrix.require_complete``).
        reruns : {"latest", "error"}
            As for :func:`mdad.load`.

        Examples
        --------
        >>> import mdad
        >>> suite = mdad.Suite.load("gpqa,musr,math-hard", normalise={"gpqa": 0.25})
        >>> suite
        <Suite of 3 benchmarks: gpqa (448 items), musr (756 items), math-hard (894 items); 444 models, 404 in every benchmark>
        """
        from mdad.data.datasets import load

        sources = parse_benchmarks(benchmarks) if one_source(benchmarks) is None else {}
        options = {"metric": metric, "filter_name": filter_name, "reruns": reruns}
        if not sources:  # one folder of logs holding several tasks: a benchmark per task or group (mdad.suite.tasks)
            sources = dict(split_tasks(load(one_source(benchmarks), **options)))  # type: ignore[arg-type]
        names = list(sources)
        checked = check_weights(weights, names)
        baselines = check_baselines(normalise, names)
        matrices = {
            name: (source if isinstance(source, ResponseMatrix) else load(source, **options)).require_complete(missing)  # type: ignore[arg-type]
            for name, source in sources.items()
        }
        return cls.of(matrices, weights=checked, baselines=baselines)

    @classmethod
    def of(cls, matrices: Mapping[str, ResponseMatrix], *, weights: np.ndarray, baselines: Mapping[str, float]) -> Suite:
        """The suite of ``matrices`` (already read) with checked ``weights`` and ``baselines``; one sentence for a
        benchmark that shares no model with the others, or too few models in every benchmark."""
        keys, rows, notes = match_models({name: list(m.models) for name, m in matrices.items()})
        names = list(matrices)
        present = rows >= 0
        for b, name in enumerate(names):
            shared = present[:, b] & (present.sum(axis=1) >= 2)
            if not shared.any():
                raise MdadError(
                    f"The benchmark {name} shares no model with the other benchmarks (e.g. {matrices[name].models[0]!r}); "
                    "models are matched by name (org/model and org__model are one)."
                )
        if int(present.all(axis=1).sum()) < 2:
            raise MdadError("Fewer than two models are in every benchmark of the suite; a suite average needs at least two.")
        return cls(dict(matrices), np.asarray(weights, dtype=np.float64), dict(baselines), keys, rows, tuple(notes))

    @property
    def names(self) -> list[str]:
        """The benchmarks' names, in order."""
        return list(self.benchmarks)

    @property
    def complete(self) -> np.ndarray:
        """Per model: whether every benchmark has it (only those get a suite score)."""
        return np.asarray((self.rows >= 0).all(axis=1))

    @property
    def baseline_array(self) -> np.ndarray:
        """Each benchmark's baseline (0: not normalised)."""
        return np.array([self.baselines.get(name, 0.0) for name in self.names])

    @property
    def scale(self) -> np.ndarray:
        """How much one point of each benchmark's raw score moves the suite score: weight / (1 - baseline)."""
        return self.weights / (1.0 - self.baseline_array)

    def normalised(self, raw: np.ndarray) -> np.ndarray:
        """Raw per-benchmark scores (... x benchmarks, fractions) normalised (``normalise``)."""
        return normalise(raw, self.baseline_array)

    def average(self, raw: np.ndarray) -> np.ndarray:
        """The suite score of raw per-benchmark scores (... x benchmarks): the weighted mean of the normalised
        scores; NaN where a benchmark is missing."""
        return np.asarray(self.normalised(raw) @ self.weights)

    def raw_scores(self) -> np.ndarray:
        """Every model's full-benchmark accuracy on each benchmark (models x benchmarks; NaN: missing)."""
        out = np.full(self.rows.shape, np.nan)
        for b, matrix in enumerate(self.benchmarks.values()):
            have = self.rows[:, b] >= 0
            out[have, b] = matrix.accuracy()[self.rows[have, b]]
        return out

    def scores(self) -> pd.DataFrame:
        """One row per model: each benchmark's score (normalised where a baseline is set; NaN: missing) and
        ``suite``, the weighted mean (NaN for a model missing from some benchmark)."""
        raw = self.raw_scores()
        frame = pd.DataFrame(self.normalised(raw), index=pd.Index(self.models, name="model"), columns=self.names)
        frame["suite"] = self.average(raw)
        return frame

    def complete_scores(self, name: str) -> np.ndarray:
        """Benchmark ``name``'s scores of the models in every benchmark (their order in ``models``), items as its pool."""
        b = self.names.index(name)
        return self.benchmarks[name].scores[self.rows[self.complete, b]]
