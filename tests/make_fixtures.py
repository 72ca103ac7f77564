"""Regenerate tests/fixtures with the real harnesses (see tests/fixtures/README.md).

    python tests/make_fixtures.py [--venvs DIR] [--only lm_eval,inspect,lighteval] [--folders lm_eval_loop,...]

Installs lm-evaluation-harness 0.4.13, inspect-ai 0.3.285 and lighteval 0.13.0 in throwaway
virtual environments under DIR (default: a folder in the system's temporary directory), runs
each offline on the local tasks of tests/fixtures/tasks/ with models that download nothing
(lm-eval's ``dummy`` model, inspect's ``mockllm`` models with scripted outputs, a lighteval
custom model answering at random from a seed), and writes their logs, trimmed of what no reader
needs, under tests/fixtures/. The adaptive-loop folders (lm_eval_loop/, inspect_loop/) also run
this checkout's mdad: ``mdad select --method adaptive-1d`` on source logs, then one harness run
per item that ``mdad estimate`` names, into one folder. The default test run reads the committed
fixtures only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent / "fixtures"
TASKS = HERE / "tasks"
VERSIONS = {
    "lm_eval": ["lm-eval==0.4.13"],
    "inspect": ["inspect-ai==0.3.285"],
    "lighteval": ["torch==2.13.0", "lighteval==0.13.0", "xxhash<4"],
}  # lighteval 0.13 hashes str, refused by xxhash 4
OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "INSPECT_DISPLAY": "none"}
RESULTS_KEYS = (
    "results",
    "configs",
    "versions",
    "n-shot",
    "n-samples",
    "config",
    "task_hashes",
    "model_name",
    "model_name_sanitized",
    "date",
    "lm_eval_version",
)


def venv(root: Path, name: str) -> Path:
    """A virtual environment with the harness installed; its python."""
    env = root / name
    python = env / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        for spec in VERSIONS[name]:  # torch first: the CPU wheel, before lighteval asks for any torch
            subprocess.run([str(python), "-m", "pip", "install", "-q", spec], check=True)
    if name == "inspect":
        install_offline_model(python)
    return python


def install_offline_model(python: Path) -> None:
    """tasks/offline_model.py as an inspect model provider (``--model offline/NAME``) of the environment:
    the module in its site-packages and an ``inspect_ai`` entry point naming it."""
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    shutil.copy(TASKS / "offline_model.py", site / "mdad_offline_model.py")
    info = site / "mdad_offline_model-0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mdad-offline-model\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[inspect_ai]\noffline = mdad_offline_model\n")


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
    "lm_eval_reruns": [
        ("pretrained=model-a", 1, ["--tasks", "tiny_mc"]),
        ("pretrained=model-a", 5, ["--tasks", "tiny_mc"]),
        ("pretrained=model-b", 2, ["--tasks", "tiny_mc"]),
    ],
    "lm_eval_v2": [("pretrained=model-d", 4, ["--include_path", "v2"])],
}


def make_lm_eval(python: Path, work: Path) -> None:
    for folder, runs in LM_EVAL_RUNS.items():
        if not wanted(folder.split("/")[0]):
            continue
        out = work / folder
        for model_args, seed, extra in runs:
            run_lm_eval(python, work, model_args, seed, out, extra)
        copy_trimmed(work, out, HERE / folder)
    if wanted("lm_eval_loop"):
        make_lm_eval_loop(python, work)
    if wanted("lm_eval_micro"):
        make_lm_eval_micro(python, work)


def run_lm_eval(python: Path, work: Path, model_args: str, seed: int, out: Path, extra: list[str]) -> None:
    tasks = [] if "--tasks" in extra else ["--tasks", "tiny_mc,tiny_gen"]
    include = [] if "--include_path" in extra else ["--include_path", "."]
    run(
        [
            str(python),
            "-m",
            "lm_eval",
            "--model",
            "dummy",
            "--model_args",
            model_args,
            *tasks,
            *include,
            "--output_path",
            str(out),
            "--log_samples",
            "--seed",
            f"{seed},1234,1234,1234",
            *extra,
        ],
        cwd=work,
    )


def copy_trimmed(work: Path, out: Path, target: Path) -> None:
    """lm-eval's output folder ``out`` as ``target``: samples files as they are, results files trimmed."""
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


def make_lm_eval_loop(python: Path, work: Path) -> None:
    """Eight dummy models on nb_zoo and nb_sums (tasks/loop/) as sources; then the new model, one document per run."""
    target, loop = HERE / "lm_eval_loop", ["--tasks", "nb_zoo,nb_sums", "--include_path", "loop"]
    shutil.rmtree(target, ignore_errors=True)
    for n in range(1, LOOP_SOURCES + 1):
        run_lm_eval(python, work, f"pretrained=src-{n}", n, work / "loop_sources", loop)
    copy_trimmed(work, work / "loop_sources", target / "sources")

    def ask(item: str, new: Path) -> None:
        task, _, doc_id = item.partition("/")
        run_lm_eval(
            python,
            work,
            "pretrained=new-model",
            7,
            work / "loop_new",
            ["--tasks", task, "--include_path", "loop", "--samples", json.dumps({task: [int(doc_id)]})],
        )
        copy_trimmed(work, work / "loop_new", new)

    adaptive_loop(target, ask)
    run_printed_commands(work, work, "loop_sources", "lm-eval run", {"YOUR_MODEL": "printed-model"}, python)


# ---- inspect -----------------------------------------------------------------------------------


def make_inspect(python: Path, work: Path) -> None:
    if wanted("inspect") or wanted("inspect_eval"):
        for target in ("inspect", "inspect_eval"):
            shutil.rmtree(HERE / target, ignore_errors=True)
        run([str(python), str(work / "inspect_run.py"), str(HERE)], cwd=work)
    if wanted("inspect_loop"):
        target = HERE / "inspect_loop"
        shutil.rmtree(target, ignore_errors=True)
        run([str(python), str(work / "inspect_loop.py"), "sources", str(target / "sources")], cwd=work)
        adaptive_loop(target, lambda item, new: run([str(python), str(work / "inspect_loop.py"), "ask", item.partition("/")[2], str(new)], cwd=work))
        run([str(python), str(work / "inspect_loop.py"), "sources", str(work / "inspect_sources")], cwd=work)
        elsewhere = work / "elsewhere"  # not where inspect ran: the task file is printed as found from here
        elsewhere.mkdir(exist_ok=True)
        run_printed_commands(work, elsewhere, "../inspect_sources", "inspect eval", {"YOUR_MODEL": "offline/model"}, python)
    if wanted("inspect_micro"):
        make_inspect_micro(python, work)


# ---- the adaptive loop -------------------------------------------------------------------------

LOOP_SIZE = 15
LOOP_SOURCES = 8


def mdad(cwd: Path, *args: object) -> str:
    """This checkout's mdad command line, run in ``cwd`` (paths it records stay relative); what it printed."""
    done = subprocess.run([sys.executable, "-m", "mdad.cli", *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"mdad {' '.join(map(str, args))} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def adaptive_loop(target: Path, ask: Callable[[str, Path], None]) -> None:
    """An adaptive test chosen on ``target/sources`` (``target/micro.json``), answered by one new model in
    ``target/new/``: ``ask(item, folder)`` runs the harness on that one item into the folder, then
    ``mdad estimate`` reads the folder and names the next item, until the test is done."""
    from mdad import SelectedMicroBenchmark
    from mdad.data import read_source

    micro, new = target / "micro.json", target / "new"
    print(mdad(target, "select", "--data", "sources", "--method", "adaptive-1d", "--size", LOOP_SIZE, "--assess-runs", "0", "--out", micro.name))
    test = SelectedMicroBenchmark.load(micro)
    item = test.first_item()
    for answered in range(1, LOOP_SIZE + 1):
        ask(item, new)
        mdad(target, "estimate", micro.name, new.name)
        (details,) = test.details(read_source(new)).itertuples()
        if details.answered != answered:
            raise SystemExit(f"After {answered} runs mdad estimate counts {details.answered} answered items.")
        print(f"{target.name}: {answered} answered ({item}), next: {details.next_item or '(done)'}")
        item = details.next_item
    if item:
        raise SystemExit(f"After {LOOP_SIZE} items the adaptive test still asks {item}.")


# ---- the printed commands, run as printed ------------------------------------------------------

PRINTED_STEPS = 3


def printed_command(output: str, starts: str) -> str:
    """The one harness command (a line starting with ``starts``) that mdad printed."""
    found = [line.strip() for line in output.splitlines() if line.strip().startswith(starts)]
    if len(found) != 1:
        raise SystemExit(f"mdad printed {len(found)} '{starts}' commands, not one:\n{output}")
    return found[0]


def run_printed_commands(work: Path, cwd: Path, sources: str, starts: str, fill: dict[str, str], python: Path) -> None:
    """``mdad select`` an adaptive test on the untrimmed source logs ``sources`` (relative to ``cwd``),
    then run the harness command it prints, as printed but for the placeholders in ``fill`` (and NEW,
    the folder to name), in ``cwd`` with the harness's environment first on PATH; then the command
    ``mdad estimate`` prints, as printed; each answer must be counted and the next item named."""
    from mdad import SelectedMicroBenchmark
    from mdad.data import read_source

    micro, new = cwd / "printed.json", cwd / "printed_new"
    shutil.rmtree(new, ignore_errors=True)
    output = mdad(cwd, "select", "--data", sources, "--method", "adaptive-1d", "--size", PRINTED_STEPS, "--assess-runs", "0", "--out", micro.name)
    command = (
        printed_command(output, starts).replace("--output_path NEW", f"--output_path {new.name}").replace("--log-dir NEW", f"--log-dir {new.name}")
    )
    env = {**os.environ, **OFFLINE, "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    test = SelectedMicroBenchmark.load(micro)
    for answered in range(1, PRINTED_STEPS + 1):
        for placeholder, value in fill.items():
            command = command.replace(placeholder, value)
        print(f"{cwd.relative_to(work) if cwd != work else '.'}$ {command}")
        subprocess.run(["bash", "-c", command], cwd=cwd, check=True, env=env, stdout=subprocess.DEVNULL)
        output = mdad(cwd, "estimate", micro.name, new.name)
        (details,) = test.details(read_source(new)).itertuples()
        if details.answered != answered:
            raise SystemExit(f"After {answered} printed commands mdad estimate counts {details.answered} answered items.")
        if answered < PRINTED_STEPS:
            command = printed_command(output, starts)


# ---- inside the harness: mdad export --lm-eval, mdad.inspect.micro_task --------------------------

MICRO_METHODS = ("random", "tinybenchmarks")  # an exact estimate, and a learned one
MICRO_SIZE = 6


def install_mdad(python: Path) -> None:
    """This checkout in the harness's environment, unless it imports there already: the exported lm-eval task
    and the wrapped inspect task compute the estimate with mdad's library."""
    if subprocess.run([str(python), "-c", "import mdad"], capture_output=True).returncode:
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(HERE.parent.parent)], check=True)


def make_lm_eval_micro(python: Path, work: Path) -> None:
    """Per method, a micro-benchmark of lm_eval_loop/sources, exported (``mdad export --lm-eval``) into the task
    folder and run by lm-eval for the new model of the loop: lm_eval_micro/<method>.json and lm_eval_micro/<method>/."""
    target = HERE / "lm_eval_micro"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    install_mdad(python)
    for method in MICRO_METHODS:
        micro = target / f"{method}.json"
        mdad(target, "select", "--data", "../lm_eval_loop/sources", "--method", method, "--size", MICRO_SIZE, "--assess-runs", 0, "--out", micro.name)
        (target / f"{method}.samples.json").unlink()  # select's samples file: the exported task needs none
        mdad(work, "export", micro, "--lm-eval", work / "loop" / f"micro_{method}", "--name", f"micro_{method}")
        out = work / f"micro_out_{method}"
        run_lm_eval(python, work, "pretrained=new-model", 7, out, ["--tasks", f"micro_{method}", "--include_path", "loop"])
        copy_trimmed(work, out, target / method)


def make_inspect_micro(python: Path, work: Path) -> None:
    """Per method, a micro-benchmark of inspect_loop/sources answered by the loop's new model through
    ``mdad.inspect.micro_task`` (tasks/inspect_micro.py): inspect_micro/<method>.json and inspect_micro/<method>/."""
    target = HERE / "inspect_micro"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    install_mdad(python)
    for method in MICRO_METHODS:
        micro = target / f"{method}.json"
        mdad(target, "select", "--data", "../inspect_loop/sources", "--method", method, "--size", MICRO_SIZE, "--assess-runs", 0, "--out", micro.name)
        run([str(python), str(work / "inspect_micro.py"), str(micro), str(target / method)], cwd=work)


# ---- lighteval ---------------------------------------------------------------------------------


def make_lighteval(python: Path, work: Path) -> None:
    if not wanted("lighteval"):
        return
    shutil.rmtree(HERE / "lighteval", ignore_errors=True)
    run([str(python), str(work / "lighteval_run.py"), str(HERE / "lighteval")], cwd=work)


ONLY_FOLDERS: set[str] = set()


def wanted(folder: str) -> bool:
    """Whether a fixture folder is to be written (all of them unless --folders names some)."""
    return not ONLY_FOLDERS or folder in ONLY_FOLDERS


MAKERS = {"lm_eval": make_lm_eval, "inspect": make_inspect, "lighteval": make_lighteval}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venvs", type=Path, default=Path(tempfile.gettempdir()) / "mdad-fixture-venvs")
    parser.add_argument("--only", default=",".join(MAKERS))
    parser.add_argument("--folders", default="", help="fixture folders to remake (default: all of each harness)")
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
