"""inspect_ai evaluation logs: the JSON export of an EvalLog, or the zipped .eval log.

An EvalLog holds ``eval`` (task, task_version, model, ...) and ``samples``, each with ``id``,
``epoch`` and ``scores`` {scorer: {value, answer, explanation, metadata}}; a .eval file is a
zip holding header.json (the same ``eval``) and samples/<id>_epoch_<n>.json. Values follow
inspect's value_to_float: "C" 1, "P" 0.5, "I" and "N" 0, yes/true 1, no/false 0, numbers as
they are. Several epochs of a sample are averaged (inspect's default reducer, mean).
"""

from __future__ import annotations

import json
import math
import zipfile
from collections import defaultdict
from pathlib import Path

from mdad.data.matrix import ResponseMatrix
from mdad.data.readers._cells import Cells
from mdad.data.readers.jsonlines import read_json
from mdad.errors import MdadError

LETTER_VALUES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
WORD_VALUES = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def is_eval_log(data: object) -> bool:
    """Whether a parsed JSON document is an inspect EvalLog."""
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "model" in data["eval"]


def find_logs(root: Path) -> list[Path]:
    """.eval files and JSON files whose opening says they are EvalLogs."""
    found = sorted(root.rglob("*.eval"))
    for file in sorted(root.rglob("*.json")):
        with open(file, "rb") as f:
            head = f.read(4096)
        if head.lstrip().startswith(b"{") and b'"status"' in head and (b'"eval": {' in head or b'"eval":{' in head):
            found.append(file)
    return found


def read_inspect(path: str | Path, metric: str | None = None) -> ResponseMatrix:
    """A matrix of every model on every sample of every task (subtask = task name).

    ``metric`` names a scorer (default: each log's first scorer); a scorer whose value is a
    dict is chosen as "scorer.key". Samples without a score (errors) are missing cells.
    """
    path = Path(path)
    files = [path] if path.is_file() else find_logs(path)
    if not files:
        raise MdadError(f"{path} holds no inspect evaluation logs (.eval, or .json from `inspect log convert`).")
    per_sample: dict[tuple[str, str, str], dict[int, tuple[float, str]]] = defaultdict(dict)
    versions: dict[str, tuple[object, str, Path]] = {}
    for file in files:
        spec, samples = _load(file)
        model, task = str(spec["model"]), str(spec.get("task", file.stem))
        version = spec.get("task_version", 0)
        seen = versions.setdefault(task, (version, model, file))
        if seen[0] != version:
            raise MdadError(
                f"Task {task!r} has version {seen[0]} for model {seen[1]!r} ({seen[2]}) but {version} for "
                f"model {model!r} ({file}); mixed task versions cannot be compared."
            )
        chosen = metric
        for position, sample in enumerate(samples):
            where = f"{file.name} sample {position}"
            scores = _scores_of(sample)
            if not scores:
                continue
            chosen = chosen or next(iter(scores))
            value = _value(scores, chosen, task, file, where)
            sample_id, epoch = str(sample.get("id", position)), int(sample.get("epoch", 1))
            epochs = per_sample[(model, task, sample_id)]
            if epoch in epochs and epochs[epoch][0] != value and not (math.isnan(value) and math.isnan(epochs[epoch][0])):
                raise MdadError(
                    f"Model {model!r} has conflicting results for task {task!r} sample {sample_id} epoch {epoch}: "
                    f"{epochs[epoch][0]:g} ({epochs[epoch][1]}) and {value:g} ({where})."
                )
            epochs[epoch] = (value, where)
    cells = Cells(source=str(path))
    for (model, task, sample_id), epochs in per_sample.items():
        values = [v for v, _ in epochs.values() if not math.isnan(v)]
        score = sum(values) / len(values) if values else math.nan
        cells.add(
            model, (task, sample_id), f"{task}/{sample_id}", task, score, next(iter(epochs.values()))[1],
            name=f"task {task!r} sample {sample_id}",
        )
    return cells.to_matrix()


def _load(file: Path) -> tuple[dict, list[dict]]:
    """(eval spec, samples) of a JSON or zipped .eval log."""
    if zipfile.is_zipfile(file):
        try:
            with zipfile.ZipFile(file) as z:
                names = z.namelist()
                head_name = "header.json" if "header.json" in names else "_journal/start.json"
                header = json.loads(z.read(head_name))
                samples = [json.loads(z.read(n)) for n in sorted(names) if n.startswith("samples/") and n.endswith(".json")]
        except NotImplementedError:
            raise MdadError(
                f"{file} is compressed with a method this Python cannot read (zstd, used by recent inspect); "
                "convert it with `inspect log convert --to json` and read the JSON log."
            ) from None
        except (KeyError, json.JSONDecodeError, zipfile.BadZipFile) as exc:
            raise MdadError(f"{file} is not a readable inspect .eval log ({exc}).") from None
    else:
        header = read_json(file)
        samples = header.get("samples") if isinstance(header, dict) else None
        samples = samples or []
    if not is_eval_log(header):
        raise MdadError(f"{file} is not an inspect evaluation log (no eval.model).")
    if not isinstance(samples, list) or not all(isinstance(s, dict) for s in samples):
        raise MdadError(f"{file}: samples must be a list of objects.")
    return header["eval"], samples


def _scores_of(sample: dict) -> dict:
    scores = sample.get("scores")
    if scores is None and isinstance(sample.get("score"), dict):
        scores = {"score": sample["score"]}
    return scores or {}


def _value(scores: dict, metric: str, task: str, file: Path, where: str) -> float:
    scorer, _, key = metric.partition(".")
    score = scores.get(scorer) if scorer in scores else scores.get(metric)
    if score is None:
        raise MdadError(f"Task {task!r} ({file}) has no scorer {metric!r}; available: {', '.join(_names(scores))}.")
    value = score.get("value") if isinstance(score, dict) else score
    if isinstance(value, dict):
        if key not in value:
            raise MdadError(
                f"Scorer {scorer!r} of task {task!r} ({file}) gives several values; choose one of: "
                f"{', '.join(_names(scores))}."
            )
        value = value[key]
    return _to_float(value, metric, where)


def _names(scores: dict) -> list[str]:
    out = []
    for name, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        out += [f"{name}.{k}" for k in value] if isinstance(value, dict) else [name]
    return out


def _to_float(value, metric: str, where: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        if value in LETTER_VALUES:
            return LETTER_VALUES[value]
        if value.lower() in WORD_VALUES:
            return WORD_VALUES[value.lower()]
        try:
            return float(value)
        except ValueError:
            pass
    raise MdadError(f"{where}: the value {str(value)[:40]!r} of scorer {metric!r} is not a score.")
