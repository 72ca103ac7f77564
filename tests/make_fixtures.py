"""Regenerate tests/fixtures with the real harnesses (see tests/fixtures/README.md).

    python tests/make_fixtures.py [--venvs DIR] [--only lm_eval,inspect,lighteval] [--folders lm_eval_checkpoints,...]

Installs lm-evaluation-harness 0.4.13, inspect-ai 0.3.285 and lighteval 0.13.0 in throwaway
virtual environments under DIR (default: a folder in the system's temporary directory), runs
each offline on the local tasks of tests/fixtures/tasks/ with models that download nothing
(lm-eval's ``dummy`` model, inspect's ``mockllm`` models with scripted outputs, a lighteval
custom model answering at random from a seed), and writes their logs, trimmed of what no reader
needs, under tests/fixtures/. The default test run reads the committed fixtures only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "fixtures"
TASKS = HERE / "tasks"
VERSIONS = {"lm_eval": ["lm-eval==0.4.13"], "inspect": ["inspect-ai==0.3.285"],
            "lighteval": ["torch==2.13.0", "lighteval==0.13.0", "xxhash<4"]}  # lighteval 0.13 hashes str, refused by xxhash 4
OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "INSPECT_DISPLAY": "none"}
RESULTS_KEYS = ("results", "configs", "versions", "n-shot", "n-samples", "config", "task_hashes", "model_name",
                "model_name_sanitized", "date", "lm_eval_version")


def venv(root: Path, name: str) -> Path:
    """A virtual environment with the harness installed; its python."""
    env = root / name
    python = env / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        for spec in VERSIONS[name]:  # torch first: the CPU wheel, before lighteval asks for any torch
            subprocess.run([str(python), "-m", "pip", "install", "-q", spec], check=True)
    return python


def run(args: list[str], cwd: Path) -> None:
    subprocess.run(args, cwd=cwd, check=True, env={**os.environ, **OFFLINE}, stdout=subprocess.DEVNULL)


# ---- lm-evaluation-harness --------------------------------------------------------------------

LM_EVAL_RUNS = {
    # folder: [(model_args, seed, extra arguments), ...]; each run writes <folder>/<sanitized model name>/
    "lm_eval": [("pretrained=model-a", 1, []), ("pretrained=model-b", 2, []), ("pretrained=model-c", 3, ["--limit", "4"])],
    "lm_eval_checkpoints": [(f"pretrained=EleutherAI/pythia-160m,revision=step{s}000", s, []) for s in (1, 2, 3, 4, 5)],
    "lm_eval_ckpt_folders/ckpt-1000": [("pretrained=/ckpt/model", 11, [])],
    "lm_eval_ckpt_folders/ckpt-2000": [("pretrained=/ckpt/model", 12, [])],
    "lm_eval_ckpt_folders/ckpt-3000": [("pretrained=/ckpt/model", 13, [])],
    "lm_eval_reruns": [("pretrained=model-a", 1, ["--tasks", "tiny_mc"]), ("pretrained=model-a", 5, ["--tasks", "tiny_mc"]),
                       ("pretrained=model-b", 2, ["--tasks", "tiny_mc"])],
    "lm_eval_v2": [("pretrained=model-d", 4, ["--include_path", "v2"])],
}


def make_lm_eval(python: Path, work: Path) -> None:
    for folder, runs in LM_EVAL_RUNS.items():
        if ONLY_FOLDERS and folder.split("/")[0] not in ONLY_FOLDERS:
            continue
        out = work / folder
        for model_args, seed, extra in runs:
            tasks = [] if "--tasks" in extra else ["--tasks", "tiny_mc,tiny_gen"]
            include = [] if "--include_path" in extra else ["--include_path", "."]
            run([str(python), "-m", "lm_eval", "--model", "dummy", "--model_args", model_args, *tasks, *include,
                 "--output_path", str(out), "--log_samples", "--seed", f"{seed},1234,1234,1234", *extra], cwd=work)
        target = HERE / folder
        shutil.rmtree(target, ignore_errors=True)
        for file in sorted(out.rglob("*.json*")):
            dest = target / file.relative_to(out)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if file.name.startswith("results_"):
                data = json.loads(file.read_text())
                trimmed = {k: data[k] for k in RESULTS_KEYS if k in data}
                text = json.dumps(trimmed, indent=2).replace(str(work) + "/", "")
                dest.write_text(text + "\n")
            else:
                shutil.copy(file, dest)


# ---- inspect -----------------------------------------------------------------------------------

def make_inspect(python: Path, work: Path) -> None:
    for target in ("inspect", "inspect_eval"):
        shutil.rmtree(HERE / target, ignore_errors=True)
    run([str(python), str(work / "inspect_run.py"), str(HERE)], cwd=work)


# ---- lighteval ---------------------------------------------------------------------------------

def make_lighteval(python: Path, work: Path) -> None:
    shutil.rmtree(HERE / "lighteval", ignore_errors=True)
    run([str(python), str(work / "lighteval_run.py"), str(HERE / "lighteval")], cwd=work)


ONLY_FOLDERS: set[str] = set()
MAKERS = {"lm_eval": make_lm_eval, "inspect": make_inspect, "lighteval": make_lighteval}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venvs", type=Path, default=Path(tempfile.gettempdir()) / "mdad-fixture-venvs")
    parser.add_argument("--only", default=",".join(MAKERS))
    parser.add_argument("--folders", default="", help="lm-eval fixture folders to remake (default: all)")
    args = parser.parse_args()
    ONLY_FOLDERS.update(f for f in args.folders.split(",") if f)
    for name in args.only.split(","):
        python = venv(args.venvs, name)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            shutil.copytree(TASKS, work, dirs_exist_ok=True)
            MAKERS[name](python, work)
        print(f"{name}: fixtures written")


if __name__ == "__main__":
    main()
