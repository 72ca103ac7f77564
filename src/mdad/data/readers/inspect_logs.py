"""inspect_ai evaluation logs: the JSON export of an EvalLog, or the zipped .eval log.

An EvalLog holds ``eval`` (task, task_version, model, ...) and ``samples``, each with ``id``,
``epoch`` and ``scores`` {scorer: {value, answer, explanation, metadata}}; a .eval file is a
zip holding header.json (the same ``eval``) and samples/<id>_epoch_<n>.json, its members
compressed with zstd (inspect's default) or deflate; zstd members are read with the
``zstandard`` package, inspect itself is not needed. Values follow
inspect's value_to_float: "C" 1, "P" 0.5, "I" and "N" 0, yes/true 1, no/false 0, numbers as
they are. Several epochs of a sample are averaged (inspect's default reducer, mean).
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
from collections import defaultdict
from pathlib import Path

import zstandard

from mdad.data.matrix import ResponseMatrix
from mdad.data.readers import READERS, logged_setup
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
    relative_label,
)
from mdad.data.readers.files import checked_file, files_under
from mdad.data.readers.inspect_commands import InspectCommands
from mdad.data.readers.jsonlines import read_json
from mdad.errors import MdadError

LETTER_VALUES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
WORD_VALUES = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
ZIP_ZSTANDARD = 93  # the zip compression method inspect writes .eval members with
LOCAL_HEADER = struct.Struct("<4s5HL2L2H")


def is_eval_log(data: object) -> bool:
    """Whether a parsed JSON document is an inspect EvalLog."""
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "model" in data["eval"]


def find_logs(root: Path) -> list[Path]:
    """.eval files and JSON files whose opening says they are EvalLogs."""
    found = files_under(root, "*.eval")
    for file in files_under(root, "*.json"):
        with open(file, "rb") as f:
            head = f.read(4096)
        if head.lstrip().startswith(b"{") and b'"status"' in head and (b'"eval": {' in head or b'"eval":{' in head):
            found.append(file)
    return found


def detect(path: Path) -> bool:
    if path.is_dir():
        return bool(find_logs(path))
    suffix = path.suffix.lower()
    return suffix == ".eval" or (suffix == ".json" and is_eval_log(read_json(path)))


def read(path: Path, options: ReadOptions) -> ResponseMatrix:
    return read_inspect(path, options=options)


def read_inspect(path: str | Path, *, options: ReadOptions | None = None) -> ResponseMatrix:
    """A matrix of every model on every sample of every task (subtask = task name).

    A model is its name, model arguments and folder: logs differing in any of them are models
    of their own. A model's logs of one task add up, sample by sample (one log per asked
    sample, ``--sample-id``, is one model); a sample answered again is a rerun
    (``options.reruns``: keep the latest answer, with a note, or refuse). Logs whose status is not "success" (an error, a
    cancelled run) are skipped with a note naming them. The metric names a scorer (default:
    each task's first); a scorer whose value is a dict is chosen as "scorer.key". Samples
    without a score (errors) are missing cells.
    """
    path = Path(path)
    options = options or ReadOptions()
    files = [checked_file(path)] if path.is_file() else find_logs(path)
    if not files:
        raise MdadError(f"{path} holds no inspect evaluation logs (.eval or .json).")
    notes: list[str] = []
    root = path if path.is_dir() else path.parent
    found: dict[tuple, list[tuple[str, tuple[Path, dict, list[dict]]]]] = defaultdict(list)
    for file in files:
        log, samples = _load(file)
        spec = log["eval"]
        model, task = str(spec["model"]), str(spec.get("task", file.stem))
        status = str(log.get("status", "success"))
        if status != "success":
            logged_error = log.get("error")
            error = logged_error if isinstance(logged_error, dict) else {}
            why = str(error.get("message") or "").strip().splitlines()
            notes.append(
                f"Skipped {file.name} (model {model!r}, task {task!r}): its status is {status!r}" + (f" ({shortened(why[0])})." if why else ".")
            )
            continue
        args = flat_args({**(spec.get("model_args") or {}), "base_url": spec.get("model_base_url") or ""})
        identity = RunIdentity(model, args, relative_label(file.parent, root))
        found[(identity, task)].append((str(spec.get("created", "")), (file, spec, samples)))
    names, identity_notes = model_names({identity for identity, _ in found})
    cells = Cells(source=str(path))
    cells.model_runs = {name: (identity.name, identity.args) for identity, name in names.items()}
    versions: dict[str, tuple[object, str, Path]] = {}

    def answers(key: tuple, run: tuple[Path, dict, list[dict]]) -> dict:
        file, spec, samples = run
        return _log_answers(cells, names[key[0]], key[1], file, spec, samples, options, versions)

    rerun_notes = combine_runs(
        dict(sorted(found.items(), key=lambda kv: (names[kv[0][0]], kv[0][1]))),
        answers,
        add_to(cells),
        reruns=options.reruns,
        label=lambda key: f"Model {names[key[0]]!r} on task {key[1]!r}",
        where=lambda run: run[0].name,
    )
    cells.notes[:0] = notes + identity_notes + rerun_notes
    for note in options.metrics.finish():
        cells.note(note)
    return cells.to_matrix()


ERROR_SHOWN = 120  # characters of a skipped log's error message shown in its note


def shortened(message: str, limit: int = ERROR_SHOWN) -> str:
    """A logged error message of at most about ``limit`` characters, cut between words (never inside
    one) and marked '...' when cut."""
    if len(message) <= limit:
        return message
    cut = message[:limit].rsplit(" ", 1)[0] if " " in message[:limit] else message[:limit]
    return cut.rstrip() + " ..."


def _log_answers(
    cells: Cells, model: str, task: str, file: Path, spec: dict, samples: list[dict], options: ReadOptions, versions: dict
) -> dict[tuple, list[dict]]:
    """One log's samples, epochs averaged (inspect's default reducer, mean): {(task, sample id): [its cell]}.

    ``versions`` holds the first version seen of each task: a log of another version is refused.
    """
    version = spec.get("task_version", 0)
    seen = versions.setdefault(task, (version, model, file))
    if seen[0] != version:
        raise MdadError(
            f"Task {task!r} has version {seen[0]} for model {seen[1]!r} ({seen[2]}) but {version} for "
            f"model {model!r} ({file}); mixed task versions cannot be compared."
        )
    cells.tasks.setdefault(
        task,
        {
            "harness": "inspect",
            "version": str(version),
            **({"task_file": str(spec["task_file"])} if spec.get("task_file") else {}),
            **({"task_args": args} if (args := logged_setup.inspect_task_args(spec)) else {}),
        },
    )
    chosen = None
    per_sample: dict[str, dict[int, tuple[float, str]]] = defaultdict(dict)
    content: dict[str, str] = {}
    unscored = 0
    for position, sample in enumerate(samples):
        where = f"{file.name} sample {position}"
        sample_id, epoch = str(sample.get("id", position)), int(sample.get("epoch", 1))
        content.setdefault(
            sample_id,
            content_hash(json.dumps(sample.get("input"), sort_keys=True, default=str), json.dumps(sample.get("target"), sort_keys=True, default=str)),
        )
        scores = _scores_of(sample)
        if not scores:
            unscored += 1
            per_sample[sample_id].setdefault(epoch, (math.nan, where))
            continue
        if chosen is None:
            available = _names(scores)
            chosen = options.metrics.choose(task, available, available[0] if available else None, str(file))
            cells.tasks[task].setdefault("metric", chosen)  # the scorer a harness run reads too (mdad.inspect)
        value = _value(scores, chosen, task, file, where)
        epochs = per_sample[sample_id]
        old = epochs.get(epoch)
        if old is not None and not math.isnan(old[0]) and old[0] != value and not math.isnan(value):
            raise MdadError(
                f"Model {model!r} has conflicting results for task {task!r} sample {sample_id} epoch {epoch}: "
                f"{old[0]:g} ({old[1]}) and {value:g} ({where})."
            )
        epochs[epoch] = (value, where)
    if unscored:
        cells.note(
            f"Model {model!r}: {unscored} {'sample' if unscored == 1 else 'samples'} of task {task!r} "
            f"in {file.name} have no score (errors); those cells are missing."
        )
    found: dict[tuple, list[dict]] = {}
    for sample_id, epochs in per_sample.items():
        values = [v for v, _ in epochs.values() if not math.isnan(v)]
        score = sum(values) / len(values) if values else math.nan
        found[(task, sample_id)] = [
            dict(
                model=model,
                key=(task, sample_id),
                item=f"{task}/{sample_id}",
                subtask=task,
                score=score,
                where=next(iter(epochs.values()))[1],
                name=f"task {task!r} sample {sample_id}",
                content=content[sample_id],
            )
        ]
    return found


def _load(file: Path) -> tuple[dict, list[dict]]:
    """(log without samples, samples) of a JSON or zipped .eval log (deflate or zstd members)."""
    if zipfile.is_zipfile(file):
        try:
            with zipfile.ZipFile(file) as z, open(file, "rb") as raw:
                names = z.namelist()
                head_name = "header.json" if "header.json" in names else "_journal/start.json"
                header = json.loads(_member(z, raw, head_name))
                samples = [json.loads(_member(z, raw, n)) for n in sorted(names) if n.startswith("samples/") and n.endswith(".json")]
        except (KeyError, json.JSONDecodeError, zipfile.BadZipFile, zstandard.ZstdError, UnicodeDecodeError) as exc:
            raise MdadError(f"{file} is not a readable inspect .eval log ({exc}).") from None
    else:
        header = read_json(file)
        samples = (header.get("samples") if isinstance(header, dict) else None) or []
    if not is_eval_log(header):
        raise MdadError(f"{file} is not an inspect evaluation log (no eval.model).")
    if not isinstance(samples, list) or not all(isinstance(s, dict) for s in samples):
        raise MdadError(f"{file}: samples must be a list of objects.")
    return header, samples


def _member(z: zipfile.ZipFile, raw, name: str) -> bytes:
    """One member's bytes; zstd members (which zipfile cannot read) are decompressed with zstandard."""
    info = z.getinfo(name)
    if info.compress_type != ZIP_ZSTANDARD:
        return z.read(name)
    raw.seek(info.header_offset)
    fields = LOCAL_HEADER.unpack(raw.read(LOCAL_HEADER.size))
    if fields[0] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header of {name}")
    raw.seek(fields[-2] + fields[-1], io.SEEK_CUR)
    data = raw.read(info.compress_size)
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
        return reader.read()


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
            raise MdadError(f"Scorer {scorer!r} of task {task!r} ({file}) gives several values; choose one of: {', '.join(_names(scores))}.")
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


READER = READERS.add(
    Reader(
        "inspect",
        detect,
        read,
        options=frozenset({"metric"}),
        expects="inspect logs (.eval or .json)",
        commands=InspectCommands(),
    ),
    order=40,
)
