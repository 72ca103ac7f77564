"""Write lm-evaluation-harness --log_samples output from a known matrix, field for field as lm-eval does.

lm-eval (0.4.x) writes, per model folder, samples_<task>_<date>.jsonl with one line per
document and filter, and results_<date>.json; numbers inside resps/filtered_resps are logged
as strings, arguments as {"gen_args_i": {"arg_0": context, "arg_1": continuation}}, the
target as str(target), and hashes as sha256 hex digests.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

DATE = "2026-01-02T03-04-05.678901"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def mc_row(doc_id: int, doc: dict, choices: list[str], gold: int, lls: np.ndarray, filter_key: str = "none") -> dict:
    """One multiple-choice line with acc and acc_norm computed as lm-eval does."""
    context = f"Question: {doc['question']}\nAnswer:"
    lengths = np.array([float(len(c)) for c in choices])
    acc = 1.0 if int(np.argmax(lls)) == gold else 0.0
    acc_norm = 1.0 if int(np.argmax(lls / lengths)) == gold else 0.0
    row = {
        "doc_id": doc_id,
        "doc": doc,
        "target": str(gold),
        "arguments": {f"gen_args_{i}": {"arg_0": context, "arg_1": f" {c}"} for i, c in enumerate(choices)},
        "resps": [[[str(float(ll)), "False"]] for ll in lls],
        "filtered_resps": [[str(float(ll)), "False"] for ll in lls],
        "filter": filter_key,
        "metrics": ["acc", "acc_norm"],
        "doc_hash": sha(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": sha(context),
        "target_hash": sha(str(gold)),
        "acc": acc,
        "acc_norm": acc_norm,
    }
    return row


def gen_row(doc_id: int, doc: dict, answer: str, output: str, filter_key: str) -> dict:
    """One generate_until line scored by exact_match under one filter."""
    context = f"Question: {doc['question']}\nAnswer:"
    filtered = output.lower() if filter_key == "lower" else output
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": answer,
        "arguments": {"gen_args_0": {"arg_0": context, "arg_1": {"until": ["\n"]}}},
        "resps": [[output]],
        "filtered_resps": [filtered],
        "filter": filter_key,
        "metrics": ["exact_match"],
        "doc_hash": sha(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": sha(context),
        "target_hash": sha(answer),
        "exact_match": 1.0 if filtered == answer else 0.0,
    }


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_results(
    folder: Path, model: str, tasks: dict[str, dict], rows_by_task: dict[str, list[dict]], versions: dict[str, float] | None = None
) -> None:
    """results_<date>.json with configs, versions, n-shot and task hashes as lm-eval computes them."""
    hashes = {t: sha("".join(r["doc_hash"] + r["prompt_hash"] + r["target_hash"] for r in rows)) for t, rows in rows_by_task.items()}
    results = {
        "results": {t: {"alias": t} for t in tasks},
        "group_subtasks": {t: [] for t in tasks},
        "configs": tasks,
        "versions": versions or {t: 1.0 for t in tasks},
        "n-shot": {t: 0 for t in tasks},
        "higher_is_better": {t: {m["metric"]: True for m in c["metric_list"]} for t, c in tasks.items()},
        "n-samples": {t: {"original": len(r), "effective": len(r)} for t, r in rows_by_task.items()},
        "task_hashes": hashes,
        "model_name": model,
        "model_name_sanitized": model.replace("/", "__"),
    }
    (folder / f"results_{DATE}.json").write_text(json.dumps(results, indent=2), encoding="utf-8")


MC_CONFIG = {
    "output_type": "multiple_choice",
    "target_delimiter": " ",
    "metric_list": [{"metric": "acc"}, {"metric": "acc_norm"}],
}
GEN_CONFIG = {"output_type": "generate_until", "target_delimiter": " ", "metric_list": [{"metric": "exact_match"}]}


def build_known(root: Path, seed: int = 0) -> dict:
    """Three models on two multiple-choice tasks (mmlu_a: 4 docs, mmlu_b: 3 docs) with known loglikelihoods.

    Returns the truth: models, items, subtasks, gold, logliks[model][item], choices[item], acc, acc_norm.
    """
    rng = np.random.default_rng(seed)
    models = ["org/model-x", "model-y", "model-z"]
    tasks = {"mmlu_a": 4, "mmlu_b": 3}
    items, subtasks, gold, choices, docs = [], [], [], [], []
    for task, n in tasks.items():
        for d in range(n):
            k = 2 + (d % 3)
            opts = [f"option {'x' * (j + 1)}{d}" for j in range(k)]
            docs.append({"question": f"{task} question {d}?", "choices": opts, "label": int(rng.integers(k))})
            items.append(f"{task}/{d}")
            subtasks.append(task)
            gold.append(docs[-1]["label"])
            choices.append(opts)
    lls = [[-rng.gamma(2.0, 1.5, size=len(c)) for c in choices] for _ in models]
    acc = np.zeros((len(models), len(items)))
    acc_norm = np.zeros_like(acc)
    for m, model in enumerate(models):
        folder = root / model.replace("/", "__")
        rows_by_task = {}
        for task in tasks:
            rows = []
            for i, item in enumerate(items):
                if subtasks[i] != task:
                    continue
                row = mc_row(int(item.split("/")[1]), docs[i], choices[i], gold[i], lls[m][i])
                acc[m, i], acc_norm[m, i] = row["acc"], row["acc_norm"]
                rows.append(row)
            rows_by_task[task] = rows
            write_jsonl(folder / f"samples_{task}_{DATE}.jsonl", rows)
        write_results(folder, model, {t: {"task": t, **MC_CONFIG} for t in tasks}, rows_by_task)
    return dict(models=models, items=items, subtasks=subtasks, gold=np.array(gold), lls=lls, choices=choices, acc=acc, acc_norm=acc_norm, docs=docs)
