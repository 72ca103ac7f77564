"""lighteval details: details/<model>/<date>/details_<task>_<date>.parquet, one row per example.

Two schemas exist. The current one has struct columns ``doc`` (query, choices, gold_index,
id, ...), ``model_response`` (text, logprobs, ...) and ``metric`` ({name: value}). The older
flat one has columns example, full_prompt, predictions ([logprob, is_greedy] per choice for
loglikelihood tasks), choices, gold_index, gold and ``metrics`` ({name: value}).
Parquet is read with pyarrow only (nothing is unpickled).
"""

from __future__ import annotations

import ast
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mdad.data.matrix import ResponseMatrix
from mdad.data.readers import READERS
from mdad.data.readers._cells import Cells
from mdad.data.readers.base import (
    Reader,
    ReadOptions,
    RunIdentity,
    add_to,
    combine_runs,
    content_hash,
    flat_args,
    model_names,
)
from mdad.data.readers.files import checked_file, files_under
from mdad.data.readers.jsonlines import read_json
from mdad.errors import MdadError

_DATE = r"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:\.\d+)?"
DETAILS_FILE = re.compile(rf"^details_(?P<task>.+)_(?P<date>{_DATE})\.parquet$")
CURRENT_COLUMNS = frozenset({"doc", "model_response", "metric"})
FLAT_COLUMNS = frozenset({"metrics", "predictions"})
PREFERRED_METRICS = ("acc", "loglikelihood_acc", "em", "exact_match", "quasi_exact_match")


def is_details_table(columns: set[str]) -> bool:
    """Whether parquet columns look like lighteval details (either schema)."""
    return columns >= CURRENT_COLUMNS or (columns >= FLAT_COLUMNS and ("example" in columns or "choices" in columns))


def find_details_files(root: Path) -> list[Path]:
    return files_under(root, "details_*.parquet", lambda p: DETAILS_FILE.match(p.name) is not None)


def detect(path: Path) -> bool:
    if path.is_dir():
        return bool(find_details_files(path))
    return path.suffix.lower() == ".parquet" and is_details_table(parquet_columns(path))


def parquet_columns(path: Path) -> set[str]:
    try:
        return set(pq.read_schema(path).names)
    except (pa.ArrowInvalid, OSError) as exc:
        raise MdadError(f"{path} is not a readable parquet file ({exc}).") from None


def read(path: Path, options: ReadOptions) -> ResponseMatrix:
    return read_lighteval(path, options=options)


def read_lighteval(path: str | Path, *, options: ReadOptions | None = None) -> ResponseMatrix:
    """A matrix of every model on every example of every task (subtask = lighteval task name).

    The model is the folder path between ``details/`` and the date folder (lighteval writes
    details/<org>/<model>/<date>/), told apart by its model configuration (revision, ...) in
    the results/<org>/<model>/results_<date>.json beside it when two runs of one name differ.
    A model's runs of one task add up, example by example; an example answered again is a
    rerun (``options.reruns``: keep the latest answer, with a note, or refuse). Every run of a
    task must have the same task version. Items are aligned by (task, doc id), or by row position when ids are
    absent; every model must have the same gold answer for each item. The metric defaults to
    acc (else exact match, else the first one). Loglikelihood multiple-choice tasks also give
    option probabilities (softmax of the choice logprobs, divided by the choice length in
    characters for *norm* metrics); generation tasks give none.
    """
    path = Path(path)
    options = options or ReadOptions()
    files = [checked_file(path)] if path.is_file() else find_details_files(path)
    if not files:
        raise MdadError(f"{path} holds no lighteval details_<task>_<date>.parquet files.")
    found: dict[tuple, list[tuple[str, tuple[Path, dict]]]] = defaultdict(list)
    for file in files:
        m = DETAILS_FILE.match(file.name)
        task, date = (m["task"], m["date"]) if m else (file.stem, "")
        model = _model_of(file)
        summary = _results_of(file, model, date)
        config = (summary.get("config_general") or {}).get("model_config") or {}
        identity = RunIdentity(model, flat_args(config))
        found[(identity, task)].append((date, (file, summary)))
    names, notes = model_names({identity for identity, _ in found})
    cells = Cells(source=str(path))
    versions: dict[str, tuple[object, str, Path]] = {}

    def answers(key: tuple, run: tuple[Path, dict]) -> dict:
        file, summary = run
        model, task = names[key[0]], key[1]
        version = ((summary.get("config_tasks") or {}).get(task) or {}).get("version")
        seen = versions.setdefault(task, (version, model, file))
        if version is not None and seen[0] is not None and seen[0] != version:
            raise MdadError(
                f"Task {task!r} has version {seen[0]} for model {seen[1]!r} ({seen[2]}) but {version} for "
                f"model {model!r} ({file}); mixed task versions cannot be compared."
            )
        cells.tasks.setdefault(task, {"harness": "lighteval", **({"version": str(version)} if version is not None else {})})
        return _file_answers(file, model, task, options)

    rerun_notes = combine_runs(
        dict(sorted(found.items(), key=lambda kv: (names[kv[0][0]], kv[0][1]))),
        answers,
        add_to(cells),
        reruns=options.reruns,
        label=lambda key: f"Model {names[key[0]]!r} on task {key[1]!r}",
        where=lambda run: run[0].parent.name,
    )
    cells.notes[:0] = notes + rerun_notes
    for note in options.metrics.finish():
        cells.note(note)
    return cells.to_matrix()


def _results_of(file: Path, model: str, date: str) -> dict:
    """The results_<date>.json lighteval wrote beside details/ for this run ({} when absent)."""
    for folder in file.parents:
        if folder.name == "details":
            summary = folder.parent / "results" / model / f"results_{date}.json"
            if summary.is_file():
                data = read_json(summary)
                return data if isinstance(data, dict) else {}
            break
    return {}


def _model_of(file: Path) -> str:
    """details/<model path>/<date>/file -> model path; otherwise the folder above the date folder."""
    folder = file.parent
    if re.fullmatch(_DATE, folder.name):
        folder = folder.parent
    parts = folder.parts
    if "details" in parts:
        below = parts[len(parts) - parts[::-1].index("details") :]
        if below:
            return "/".join(below)
    return folder.name


def _file_answers(file: Path, model: str, task: str, options: ReadOptions) -> dict[tuple, list[dict]]:
    """One details file's examples: {(task, doc id): its cells to add (a repeated row stays, to be checked)}."""
    try:
        rows = pq.read_table(file).to_pylist()
    except (pa.ArrowInvalid, OSError) as exc:
        raise MdadError(f"{file} is not a readable parquet file ({exc}).") from None
    if not rows:
        raise MdadError(f"{file} has no rows.")
    current = "metric" in rows[0] and "doc" in rows[0]
    metric_column = "metric" if current else "metrics"
    rows = [{k: _literal(v) for k, v in row.items()} for row in rows]
    if not all(isinstance(row.get(metric_column), dict) for row in rows):
        raise MdadError(f"{file}: the {metric_column!r} column does not hold a name-to-score mapping on every row.")
    available = list(rows[0][metric_column].keys())
    main = next((c for c in [*PREFERRED_METRICS, *available] if c in available), None)
    chosen = options.metrics.choose(task, available, main, str(file))
    found: dict[tuple, list[dict]] = {}
    for position, row in enumerate(rows):
        where = f"{file.name} row {position}"
        doc = (row["doc"] if isinstance(row.get("doc"), dict) else {}) if current else row
        doc_id = str(doc.get("id") or "") if current else ""
        doc_id = doc_id or str(position)
        values = row[metric_column]
        if chosen not in values:
            raise MdadError(f"{where} lacks the metric {chosen!r} that the first row of task {task!r} has.")
        option_scores, gold = _options(row, doc, current, chosen)
        found.setdefault((task, doc_id), []).append(
            dict(
                model=model,
                key=(task, doc_id),
                item=f"{task}/{doc_id}",
                subtask=task,
                score=_score(values[chosen], chosen, where),
                where=where,
                name=f"task {task!r} example {doc_id}",
                option_scores=option_scores,
                gold=gold,
                content=_content(doc),
            )
        )
    return found


def _content(doc: dict) -> str | None:
    """The example's question and gold answer(s), hashed; None when the row names no gold."""
    choices = doc.get("choices") or []
    gold = doc.get("gold_index")
    if gold is None and doc.get("gold") is None:
        return None
    indices = gold if isinstance(gold, (list, tuple)) else [gold]
    try:
        answers = [str(choices[int(i)]) for i in indices if i is not None]
    except (IndexError, TypeError, ValueError):
        answers = [str(gold)]
    if doc.get("gold") is not None:
        answers.append(str(doc["gold"]))
    return content_hash(doc.get("query", doc.get("example", "")), *answers)


def _literal(value):
    """lighteval falls back to str() of every field when a table will not convert; read such text back.

    ``ast.literal_eval`` only parses Python literals (numbers, strings, lists, dicts): it runs no code.
    """
    if isinstance(value, str) and value[:1] in "[{(":
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value
    return value


def _options(row: dict, doc: dict, current: bool, metric: str) -> tuple[np.ndarray | None, int | None]:
    """Choice log-scores (normalised by length for *norm* metrics) and the gold index, if present."""
    choices = doc.get("choices") or []
    if current:
        response = row.get("model_response")
        logprobs = (response.get("logprobs") if isinstance(response, dict) else None) or []
    else:
        logprobs = [p[0] if isinstance(p, (list, tuple)) and p else p for p in row.get("predictions") or []]
    try:
        lls = np.asarray([float(p) for p in logprobs], dtype=np.float64)
    except (TypeError, ValueError):
        return None, None
    gold = doc.get("gold_index")
    if isinstance(gold, (list, tuple)):
        gold = gold[0] if len(gold) == 1 else None
    if len(choices) < 2 or len(lls) != len(choices) or not isinstance(gold, int) or not 0 <= gold < len(choices):
        return None, None
    if "norm" in metric:
        lls = lls / np.maximum([len(str(c)) for c in choices], 1)
    return lls, int(gold)


def _score(value, metric: str, where: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, (bool, int, float)):
        return float(value)
    raise MdadError(f"{where}: metric {metric!r} is not a per-example number (found {str(value)[:40]!r}).")


READER = READERS.add(
    Reader(
        "lighteval",
        detect,
        read,
        options=frozenset({"metric"}),
        expects="lighteval details_<task>_<date>.parquet files",
        commands=None,  # lighteval cannot be asked to run chosen items only
    ),
    order=30,
)
