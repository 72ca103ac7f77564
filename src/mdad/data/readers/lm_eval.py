"""lm-evaluation-harness ``--log_samples`` output: samples_<task>_<date>.jsonl files.

Each line of a samples file is one document under one filter: doc_id, doc, target, arguments,
resps, filtered_resps, filter, metrics, doc_hash, prompt_hash, target_hash and one key per
metric. The results_<date>.json of the same date gives the model name and arguments
(``config.model_args``: pretrained, revision, ...), task versions, n-shot, task hashes and task
configs (output type, target delimiter, main metric). lm-eval writes every run of a model name
into one folder (<output_path>/<sanitised name>/), so a run is told apart by its date, and a
model by its folder and arguments. Older files without ``filter``/``metrics`` keys (and with
unsanitised numbers) are read too.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

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
    model_names,
    relative_label,
)
from mdad.data.readers.files import checked_file, files_under
from mdad.data.readers.jsonlines import iter_json_lines, paused_gc, read_json
from mdad.data.readers.lm_eval_commands import LmEvalCommands
from mdad.errors import MdadError

_DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
SAMPLES_FILE = re.compile(rf"^samples_(?P<task>.+?)(?:_(?P<date>{_DATE}))?\.jsonl$")
RESULTS_FILE = re.compile(rf"^results_(?P<date>{_DATE})\.json$")
BOOKKEEPING = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
        "task_name",
    }
)
NO_FILTER = "none"
OWN_METRICS = "mdad_"  # the metrics an exported micro-benchmark adds (mdad.harness.lm_eval_task): the estimate, not an answer
HEAVY = frozenset({"doc", "arguments", "resps", "filtered_resps", "prompt_hash"})
LOGLIKS, CONTINUATIONS = "_logliks", "_continuations"


@dataclass
class _Run:
    """One run of lm-eval: a results_<date>.json and the samples files of the same date.

    Its model is what distinguishes it from other runs: the folder, the model type and the
    model arguments (pretrained name, revision, ...); two runs differing in any of them are
    different models, never merged.
    """

    folder: Path
    date: str = ""
    model_name: str | None = None
    model_type: str = ""
    model_args: str = ""
    sanitized: str = ""
    versions: dict = field(default_factory=dict)
    n_shot: dict = field(default_factory=dict)
    task_hashes: dict = field(default_factory=dict)
    configs: dict = field(default_factory=dict)

    def identity(self, root: Path) -> RunIdentity:
        args = dict(part.partition("=")[::2] for part in self.model_args.split(",") if part)
        if self.model_type:
            args["model"] = self.model_type
        return RunIdentity(self.model_name or self.folder.name, tuple(sorted(args.items())), _folder_label(self, root))


@dataclass
class _TaskRun:
    """One model's results on one task, for the cross-model consistency checks."""

    model: str
    task: str
    file: Path
    run: _Run
    keys: frozenset = frozenset()


def is_samples_file(path: Path) -> bool:
    return SAMPLES_FILE.match(path.name) is not None


def find_samples_files(root: Path) -> list[Path]:
    """Every samples_<task>[_<date>].jsonl under ``root``."""
    return files_under(root, "samples_*.jsonl", is_samples_file)


def is_results_summary(path: Path) -> bool:
    """Whether a .json file is an lm-eval results_<date>.json."""
    data = read_json(path)
    return isinstance(data, dict) and "results" in data and ("configs" in data or "versions" in data)


def detect(path: Path) -> bool:
    if path.is_dir():
        return bool(find_samples_files(path))
    suffix = path.suffix.lower()
    return suffix == ".jsonl" or (suffix == ".json" and is_results_summary(path))


def read(path: Path, options: ReadOptions) -> ResponseMatrix:
    if path.suffix.lower() == ".json":
        if not find_samples_files(path.parent):
            raise MdadError(f"{path} is an lm-eval results summary without per-document samples; rerun with --log_samples.")
        path = path.parent
    return read_lm_eval(path, options=options)


def read_lm_eval(path: str | Path, *, options: ReadOptions | None = None) -> ResponseMatrix:
    """A matrix of every model on every document of every task (subtask = task name).

    A model is one run's folder, model type and model arguments: checkpoints (another
    revision, another folder) are models of their own, named by what distinguishes them.
    Runs of one model on a task add up, document by document (one run per asked document is
    one model); a document answered again is a rerun: ``options.reruns`` keeps the latest
    answer (with a note) or refuses. Every run must have the same task version and n-shot.
    The metric defaults to each task's main metric (first of its metric_list, else acc, else
    exact_match); the filter to "none" or the task's first. Items are aligned
    across models by doc_hash when present, else by (task, doc_id). Multiple-choice tasks also
    give per-option probabilities: softmax of the option loglikelihoods, divided by the option
    length in characters for acc_norm (bytes for acc_bytes), as lm-eval normalises;
    generation tasks give none.
    """
    path = Path(path)
    options = options or ReadOptions()
    files = [checked_file(path)] if path.is_file() else find_samples_files(path)
    if not files:
        raise MdadError(f"{path} holds no lm-evaluation-harness samples_<task>_<date>.jsonl files.")
    cells = Cells(source=str(path))
    root = path.parent if path.is_file() else path
    runs, names, notes = _runs_per_task(files, root)
    cells.model_runs = {name: (identity.name, identity.args) for identity, name in names.items()}
    task_runs: list[_TaskRun] = []

    def answers(key: tuple, file_run: tuple[Path, _Run]) -> dict:
        file, run = file_run
        model, task = names[key[0]], key[1]
        found = _read_task_file(file, task, model, run, options, cells)
        task_runs.append(_TaskRun(model=model, task=task, file=file, run=run, keys=frozenset(found)))
        return found

    with paused_gc():
        rerun_notes = combine_runs(
            dict(sorted(runs.items(), key=lambda kv: (names[kv[0][0]], kv[0][1]))),
            answers,
            add_to(cells),
            reruns=options.reruns,
            label=lambda key: f"Model {names[key[0]]!r} on task {key[1]!r}",
            where=lambda file_run: file_run[0].name,
        )
        _check_same_task_versions(task_runs)
    for spec in cells.tasks.values():
        logged_setup.finish_lm_eval(spec)
    cells.notes[:0] = [*notes, *rerun_notes]
    for note in [*options.metrics.finish(), *options.filters.finish()]:
        cells.note(note)
    return cells.to_matrix()


def _runs_per_task(files: list[Path], root: Path) -> tuple[dict, dict[RunIdentity, str], list[str]]:
    """Each (model identity, task)'s [(date, (samples file, run)), ...], the models' names, and notes on names."""
    runs_of: dict[Path, dict[str, _Run]] = {}
    found: dict[tuple, list[tuple[str, tuple[Path, _Run]]]] = defaultdict(list)
    for file in files:
        m = SAMPLES_FILE.match(file.name)
        task, date = (m["task"], m["date"] or "") if m else (file.stem, "")
        runs = runs_of.setdefault(file.parent, _runs_in(file.parent))
        run = runs.get(date) or (next(iter(runs.values())) if len(runs) == 1 else _Run(folder=file.parent))
        found[(run.identity(root), task)].append((date, (file, run)))
    names, notes = model_names({identity for identity, _ in found})
    return found, names, notes


def _folder_label(run: _Run, root: Path) -> str:
    """The run's folder relative to what was read, without lm-eval's own model-name folder."""
    folder = run.folder.parent if run.sanitized and run.folder.name == run.sanitized else run.folder
    return relative_label(folder, root)


def _runs_in(folder: Path) -> dict[str, _Run]:
    """results_<date>.json files of a model folder, by date."""
    runs = {}
    for file in sorted(folder.glob("results_*.json")):
        m = RESULTS_FILE.match(file.name)
        data = read_json(file)
        if m is None or not isinstance(data, dict):
            continue
        logged_config = data.get("config")
        config = logged_config if isinstance(logged_config, dict) else {}
        runs[m["date"]] = _Run(
            folder=folder,
            date=m["date"],
            model_name=data.get("model_name") or None,
            model_type=str(config.get("model") or ""),
            model_args=_normalised_args(config.get("model_args")),
            sanitized=str(data.get("model_name_sanitized") or ""),
            versions=data.get("versions") or {},
            n_shot=data.get("n-shot") or {},
            task_hashes=data.get("task_hashes") or {},
            configs=data.get("configs") or {},
        )
    return runs


def _normalised_args(model_args) -> str:
    """Model arguments as sorted key=value pairs (lm-eval logs a dict or the command-line string)."""
    if isinstance(model_args, dict):
        pairs = [f"{k}={v}" for k, v in model_args.items()]
    elif isinstance(model_args, str):
        pairs = [p.strip() for p in model_args.split(",") if p.strip()]
    else:
        return ""
    return ",".join(sorted(pairs))


def _read_task_file(file: Path, task: str, model: str, run: _Run, options: ReadOptions, cells: Cells) -> dict[tuple, list[dict]]:
    """One model's results on one task: {alignment key: its cells to add (a repeated line stays, to be
    checked against the first)}; the task is described in ``cells``."""
    config = run.configs.get(task, {})
    by_filter: dict[str, list[tuple[int, dict]]] = {}
    for number, row in iter_json_lines(file):
        if "doc_id" not in row:
            raise MdadError(f"{file} line {number} has no doc_id; is this an lm-eval samples file?")
        by_filter.setdefault(str(row.get("filter", NO_FILTER)), []).append((number, _slim(row)))
    if not by_filter:
        raise MdadError(f"{file} is empty.")
    filters = list(by_filter)
    main_filter = NO_FILTER if NO_FILTER in by_filter else filters[0]
    chosen_filter = options.filters.choose(task, filters, main_filter, str(file))
    rows = by_filter[chosen_filter]
    available = [m for m in _metrics_of(rows[0][1]) if not m.startswith(OWN_METRICS)]
    chosen = options.metrics.choose(task, available, main_metric(available, config), str(file))
    multiple_choice = _is_multiple_choice(config, rows[0][1])
    delimiter = config.get("target_delimiter", " ")
    cells.tasks.setdefault(
        task,
        {
            "harness": "lm-eval",
            "metric": str(chosen),
            "filter": chosen_filter,
            **({"version": str(run.versions[task])} if task in run.versions else {}),
            **({"n_shot": str(run.n_shot[task])} if task in run.n_shot else {}),
        },
    )
    logged_setup.add_lm_eval_run(cells.tasks[task], run.model_type, run.model_args, config)
    found: dict[tuple, list[dict]] = {}
    occurrence: dict[tuple, int] = {}
    hash_count: dict[str, int] = defaultdict(int)
    bad: str | None = None  # the first line whose option log-likelihoods make no distribution
    for number, row in sorted(rows, key=lambda r: _doc_order(r[1]["doc_id"])):
        doc_id, doc_hash = row["doc_id"], row.get("doc_hash")
        where = f"{file.name} line {number}"
        key: tuple[str, ...] | tuple[str, str, int]
        if doc_hash is None:
            key = (task, str(doc_id))
        else:
            if (doc_hash, str(doc_id)) not in occurrence:
                occurrence[(doc_hash, str(doc_id))] = hash_count[doc_hash]
                hash_count[doc_hash] += 1
            key = (task, doc_hash, occurrence[(doc_hash, str(doc_id))])
        if chosen not in row:
            raise MdadError(f"{file} line {number} lacks the metric {chosen!r} that the other lines of task {task!r} have.")
        options_scores = gold = None
        if multiple_choice:
            options_scores, gold = _options(row, chosen, delimiter)
            if bad is None and _bad_logliks(options_scores):
                bad = f"{where} ({', '.join(map(str, row[LOGLIKS]))})"
        found.setdefault(key, []).append(
            dict(
                model=model,
                key=key,
                item=f"{task}/{doc_id}",
                subtask=task,
                score=_score(row[chosen], chosen, where),
                where=where,
                name=f"task {task!r} doc {doc_id}",
                option_scores=options_scores,
                gold=gold,
                content=content_hash(doc_hash or "", row.get("target_hash") or str(row.get("target"))),
            )
        )
    if bad is not None:
        cells.note(
            f"Task {task!r} of {model}: the option log-likelihoods of {bad} are not finite numbers, so the "
            "task's option probabilities are dropped and its 0/1 scores used."
        )
        for kept in found.values():
            for cell in kept:
                cell["option_scores"] = cell["gold"] = None
    return found


def main_metric(available: list[str], config: dict) -> str | None:
    """The metric read by default: the first of the task's metric_list, else acc, else exact_match, else the first one."""
    listed = [m.get("metric") for m in config.get("metric_list") or [] if isinstance(m, dict)]
    for candidate in [*listed[:1], "acc", "exact_match", *available]:
        if candidate in available:
            return candidate
    return None


def _slim(row: dict) -> dict:
    """The row without its bulky fields (document, prompts, raw responses), keeping the option
    loglikelihoods and continuations: files hold many rows and all are kept until the filter is known."""
    slim = {k: v for k, v in row.items() if k not in HEAVY}
    slim[LOGLIKS], slim[CONTINUATIONS] = _logliks(row), _continuations(row.get("arguments"))
    return slim


def _doc_order(doc_id) -> tuple:
    return (0, doc_id, "") if isinstance(doc_id, (int, float)) else (1, 0, str(doc_id))


def _metrics_of(row: dict) -> list[str]:
    """The metric names of a row: its ``metrics`` list, or (older files) its numeric keys."""
    if isinstance(row.get("metrics"), list):
        return [str(m) for m in row["metrics"]]
    return [k for k, v in row.items() if k not in BOOKKEEPING and not k.startswith("_") and isinstance(v, (int, float, bool))]


def _is_multiple_choice(config: dict, row: dict) -> bool:
    """Multiple-choice loglikelihood task: the config says so, or (no config) one request per option."""
    if "output_type" in config:
        return config["output_type"] == "multiple_choice"
    continuations = row[CONTINUATIONS]
    return continuations is not None and len(continuations) >= 2 and row[LOGLIKS] is not None


def _continuations(arguments) -> list[str] | None:
    """The continuation string of every request: {"gen_args_i": {"arg_1": ...}} (in file order) or [[ctx, cont], ...]."""
    if isinstance(arguments, dict):
        conts = [a.get("arg_1") if isinstance(a, dict) else None for a in arguments.values()]
    elif isinstance(arguments, list):
        conts = [a[1] if isinstance(a, list) and len(a) > 1 else None for a in arguments]
    else:
        return None
    strings = [c for c in conts if isinstance(c, str)]
    return strings if len(strings) == len(conts) else None


def _logliks(row: dict) -> list[float] | None:
    """The loglikelihood of every request ([loglik, is_greedy] pairs, numbers or strings)."""
    responses = row.get("filtered_resps")
    if responses is None:
        responses = [r[0] if isinstance(r, list) and r else r for r in row.get("resps") or []]
    try:
        firsts = [r[0] for r in responses]
    except (TypeError, IndexError, KeyError):
        return None
    values = [_number(v) for v in firsts]
    return values or None


def _number(value) -> float:
    """A loglikelihood as a float; NaN when it is not a number (checked per task by ``_bad_logliks``)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _bad_logliks(scores: list[float] | None) -> bool:
    """Whether option log-scores cannot make a distribution: NaN (or not a number), +inf, or every option -inf."""
    return scores is not None and (any(math.isnan(v) or v == math.inf for v in scores) or all(v == -math.inf for v in scores))


def _options(row: dict, metric: str, delimiter: str) -> tuple[list[float] | None, int | None]:
    """Option log-scores as the metric ranks them, and the gold option (None when not recoverable)."""
    lls, conts = row[LOGLIKS], row[CONTINUATIONS]
    if lls is None or conts is None or len(conts) != len(lls):
        return None, None
    if "acc_mutual_info" in (row.get("metrics") or ()) and len(lls) % 2 == 0:
        lls, conts = lls[: len(lls) // 2], conts[: len(conts) // 2]
    cut = len(delimiter)
    choices = [c[cut:] if cut and c.startswith(delimiter) else c for c in conts]
    if metric == "acc_norm":
        lls = [ll / max(len(c), 1) for ll, c in zip(lls, choices, strict=True)]
    elif metric == "acc_bytes":
        lls = [ll / max(len(c.encode("utf-8")), 1) for ll, c in zip(lls, choices, strict=True)]
    return lls, _gold(row.get("target"), choices)


def _gold(target, choices: list[str]) -> int | None:
    """lm-eval logs the target as str(index) or as the gold choice text."""
    if isinstance(target, bool):
        return None
    if isinstance(target, str):
        text = target.strip()
        if text.lstrip("-").isdigit():
            target = int(text)
        elif target in choices:
            return choices.index(target)
    if isinstance(target, int):
        return target if 0 <= target < len(choices) else None
    return None


def _score(value, metric: str, where: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise MdadError(f"{where}: metric {metric!r} is not a per-document number (found {str(value)[:40]!r}); choose another metric.")


def _check_same_task_versions(task_runs: list[_TaskRun]) -> None:
    """Every model must have run the same version of each task (version, n-shot, task hash)."""
    by_task: dict[str, list[_TaskRun]] = defaultdict(list)
    for tr in task_runs:
        by_task[tr.task].append(tr)
    for task, runs in by_task.items():
        first = runs[0]
        for other in runs[1:]:
            for what, table in (("version", "versions"), ("n-shot", "n_shot")):
                a, b = getattr(first.run, table).get(task), getattr(other.run, table).get(task)
                if a is not None and b is not None and a != b:
                    raise MdadError(
                        f"Task {task!r} has {what} {a} for model {first.model!r} but {b} for model "
                        f"{other.model!r} ({other.file}); mixed task versions cannot be compared."
                    )
            a, b = first.run.task_hashes.get(task), other.run.task_hashes.get(task)
            if a and b and a != b and first.keys == other.keys:
                raise MdadError(
                    f"Task {task!r} has a different task hash for model {first.model!r} and model "
                    f"{other.model!r} ({other.file}): the same documents were given different prompts "
                    "or targets (mixed task versions)."
                )


READER = READERS.add(
    Reader(
        "lm-eval",
        detect,
        read,
        options=frozenset({"metric", "filter"}),
        expects="lm-evaluation-harness samples_<task>_<date>.jsonl files",
        commands=LmEvalCommands(RESULTS_FILE),
    ),
    order=20,
)
