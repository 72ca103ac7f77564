"""The bad-input audit: every one-line reproduction of the second and third hardening rounds, run as a user runs it.

    python benchmarks/audit_hostile.py [--only TEXT] [--timeout 60] [--memory-gb 4] [--keep]
    python benchmarks/audit_hostile.py --smoke

Each case is one command in its own subprocess, in a fresh temporary folder, with a wall-clock
timeout and an address-space limit (``resource.setrlimit``), with D = the real datasets
(``$MDAD_DATA_DIR``, default ../shared/data beside the repository) and F = tests/fixtures. Its outcome is
classified as

- ``clean``: the expected outcome: one error sentence and exit code 2 where the input must be refused,
  or exit code 0 and the expected answer (checked by the case's own expectation) where it must be read;
- ``traceback``: a Python traceback on the terminal;
- ``hang``: still running at the timeout;
- ``memory``: a MemoryError, a failed allocation, or a process killed by a signal;
- ``silent``: the command ended without a traceback but its expectation fails: a refused input was
  accepted, a kept input was changed, a number is wrong, a note is missing, or the sentence does not
  name what is wrong.

Interrupt cases send SIGINT or SIGTERM to the main process only, at a moment made certain by holding
the import of a named module until the signal comes, and expect exit code 130, one sentence, and a
rerun of the same command that finishes. The third round's cases (groups plug-ins, tampering,
options, suffixes, atomic) install broken plug-ins into ./site as pip would, tamper with a finished
store, give options that must be used or refused, and simulate a full disk (``Path.write_text``
patched by a ``sitecustomize`` module) and a second writer holding the output's lock. Prints one line
per case and the summary table, whose counts by group the record keeps. ``--smoke`` runs the first case of
each group.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import suite

REPO = Path(__file__).resolve().parents[1]
F = REPO / "tests" / "fixtures"
D = Path(os.environ.get("MDAD_DATA_DIR", REPO.parent / "shared" / "data"))
MDAD = str(Path(sys.executable).parent / "mdad")
KINDS = ("clean", "traceback", "hang", "memory", "silent")
MC = "model-a/samples_tiny_mc_2026-12-01T09-04-25.092509.jsonl"

# Holds the import of $AUDIT_PAUSE_AT (writing $AUDIT_PAUSED) until a signal comes: the moment of an interrupt.
PAUSE = """
import os, sys, time
from pathlib import Path


class _Pause:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("AUDIT_PAUSE_AT"):
            sys.meta_path.remove(self)
            Path(os.environ["AUDIT_PAUSED"]).write_text(name)
            while True:
                time.sleep(0.01)
        return None


sys.meta_path.insert(0, _Pause())
"""


@dataclass
class Result:
    rc: int | None
    out: str
    err: str
    folder: Path

    @property
    def text(self) -> str:
        return " ".join((self.out + "\n" + self.err).split())


Check = Callable[[Result], str | None]


@dataclass
class Case:
    group: str
    name: str
    cmd: str
    refuse: tuple[str, ...] | None = None  # fragments the refusal sentence must hold (None: must succeed)
    check: Check | None = None  # a further expectation: None when met, else what is wrong
    setup: Callable[[Path], None] | None = None
    signal: int | None = None  # interrupt cases: the signal, sent when the import of pause_at starts
    pause_at: str = ""
    extra: dict = field(default_factory=dict)


# ---- setups ------------------------------------------------------------------------------------
def _micro(base: Path) -> None:
    """m.json (no assessment) and m2.json (with one), from the real GPQA matrix, made once."""
    env = {**os.environ, "MDAD_DATA_DIR": str(D)}
    for name, runs in (("m.json", "0"), ("m2.json", "2")):
        cmd = [MDAD, "select", "--dataset", "oll2-gpqa", "--method", "random", "--size", "10", "--assess-runs", runs]
        subprocess.run([*cmd, "--workers", "1", "--out", str(base / name)], env=env, check=True, capture_output=True)


def edit_micro(change: Callable[[dict], None], name: str = "m.json") -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        data = json.loads((folder / name).read_text())
        change(data)
        (folder / name).write_text(json.dumps(data))

    return setup


def raw_micro(replace: tuple[str, str], name: str = "m.json") -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        text = (folder / name).read_text()
        (folder / name).write_text(text.replace(*replace, 1))

    return setup


def copy_logs(fixture: str, then: Callable[[Path], None] | None = None) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        shutil.copytree(F / fixture, folder / "logs")
        if then:
            then(folder / "logs")

    return setup


def logliks(values: list) -> Callable[[Path], None]:
    def change(logs: Path) -> None:
        path = logs / MC
        lines = path.read_text().splitlines()
        row = json.loads(lines[0])
        row["filtered_resps"] = [[v, "False"] for v in values]
        row["resps"] = [[[v, "False"]] for v in values]
        lines[0] = json.dumps(row)
        path.write_text("\n".join(lines) + "\n")

    return copy_logs("lm_eval", change)


def npz_copy(folder: Path) -> None:
    (folder / "x").mkdir()
    shutil.copy(D / "oll2-gpqa" / "responses.npz", folder / "x" / "responses.npz")


def symlinked_model(folder: Path) -> None:
    logs = folder / "logs"
    logs.mkdir()
    for model in ("model-a", "model-b"):
        shutil.copytree(F / "lm_eval" / model, logs / model)
    shutil.copytree(F / "lm_eval" / "model-c", folder / "elsewhere" / "model-c")
    (logs / "model-c").symlink_to(folder / "elsewhere" / "model-c", target_is_directory=True)


def write(name: str, text: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        (folder / name).write_text(text)

    return setup


def small_wide(folder: Path, models: list[str] | None = None, n_items: int = 40, name: str = "d.csv") -> None:
    rng = np.random.default_rng(0)
    models = models or [f"m{i}" for i in range(12)]
    ability = np.linspace(-1.5, 1.5, len(models))[:, None]
    scores = (rng.random((len(models), n_items)) < 1 / (1 + np.exp(-(ability - rng.normal(size=n_items))))).astype(int)
    frame = pd.DataFrame(scores, columns=[f"q{j}" for j in range(n_items)])
    frame.insert(0, "model", models)
    frame.to_csv(folder / name, index=False)


def big_item_parquet(folder: Path) -> None:
    frame = pd.DataFrame(np.ones((2, 5000)), columns=[f"q{j}" for j in range(4999)] + ["x" * 200_000])
    frame.insert(0, "model", ["m0", "m1"])
    frame.to_parquet(folder / "big.parquet")


def big_model_npz(folder: Path) -> None:
    np.savez(
        folder / "responses.npz",
        scores=np.ones((40, 80), dtype=np.float32),
        models=np.array([f"m{i}" for i in range(38)] + ["a" * 10**6, "b" * 10**6]),
        items=np.array([f"q{j}" for j in range(80)]),
        subtasks=np.array(["all"] * 80),
    )


def twins_npz(twin: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        rng = np.random.default_rng(1)
        np.savez(
            folder / "responses.npz",
            scores=(rng.random((6, 20)) < 0.5).astype(np.float32),
            models=np.array(["caf\u00e9", twin, "m2", "m3", "m4", "m5"]),
            items=np.array([f"q{j}" for j in range(20)]),
            subtasks=np.array(["all"] * 20),
        )

    return setup


def group_twice(folder: Path) -> None:
    small_wide(folder)
    frame = pd.read_csv(folder / "d.csv")
    np.savez(
        folder / "responses.npz",
        scores=frame.drop(columns="model").to_numpy(np.float32),
        models=frame["model"].to_numpy(str),
        items=np.array(frame.columns[1:], dtype=str),
        subtasks=np.array(["all"] * (frame.shape[1] - 1)),
    )
    (folder / "groups.json").write_text(json.dumps({"g": ["m0", "m1", "m2", "m0"]}))


def one_item_tasks(folder: Path) -> None:
    items = [f"i{j}" for j in range(100)]
    frame = pd.DataFrame(np.random.default_rng(0).integers(0, 2, (8, 100)), columns=items)
    frame.insert(0, "model", [f"m{i}" for i in range(8)])
    subtask_row = pd.DataFrame([["subtask", *[f"t{j}" for j in range(100)]]], columns=frame.columns)
    pd.concat([frame.astype(str), subtask_row]).to_csv(folder / "d.csv", index=False)


SMALL_RUN = f"{MDAD} run --data d.csv --methods random --sizes 5,10 --sources 6 --runs 3 --targets 4 --workers 1 --out o"


def small_run(folder: Path) -> None:
    small_wide(folder)
    subprocess.run(SMALL_RUN.split(), cwd=folder, check=True, capture_output=True)


def edit_cell(change: Callable[[pd.DataFrame], pd.DataFrame]) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        small_run(folder)
        cell = folder / "o" / "cells" / "random" / "k10-s6.parquet"
        change(pd.read_parquet(cell)).to_parquet(cell, index=False)

    return setup


def no_file(relative: str, kind: str, before: Callable[[Path], None] | None = None) -> Callable[[Path], None]:
    """``relative`` (after ``before``) replaced by a FIFO or a link to /dev/zero."""

    def setup(folder: Path) -> None:
        if before:
            before(folder)
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        os.mkfifo(path) if kind == "FIFO" else path.symlink_to("/dev/zero")

    return setup


def block_of(damage: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        wrong_targets_block(folder)
        block = folder / "o" / "cells" / "random" / "partial" / "k5-s6-r0-5.npy"
        block.unlink()
        damage(block)

    return setup


def huge_header(path: Path) -> None:
    from numpy.lib import format as npy

    with open(path, "wb") as handle:
        npy.write_array_header_1_0(
            handle, {"descr": npy.dtype_to_descr(np.dtype([("estimate", "<f8")])), "fortran_order": False, "shape": (5, 10**9)}
        )


def sparse_table(folder: Path) -> None:
    path = folder / "big.csv"
    path.write_text("model,a,b\nm0,1,0\n")
    os.truncate(path, 40 * 2**30)  # declares 40 GiB, writes nothing


def npz_with(name: str, kind: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        npz_copy(folder)
        path = folder / "x" / name
        os.mkfifo(path) if kind == "FIFO" else path.symlink_to("/dev/zero")

    return setup


def table_folder(folder: Path) -> None:
    (folder / "t").mkdir()
    small_wide(folder / "t", name="a.csv")


def stray_cell(folder: Path) -> None:
    small_run(folder)
    shutil.copy(folder / "o" / "cells" / "random" / "k10-s6.parquet", folder / "o" / "cells" / "random" / "k999-s20.parquet")


def wrong_targets_block(folder: Path) -> None:
    small_wide(folder)
    cmd = f"{MDAD} run --data d.csv --methods random --sizes 5 --sources 6 --runs 10 --targets 4 --workers 1 --out o"
    subprocess.run(cmd.split(), cwd=folder, check=True, capture_output=True)
    cells = folder / "o" / "cells" / "random"
    (cells / "partial").mkdir(exist_ok=True)
    (cells / "k5-s6.parquet").unlink()
    block = np.zeros((5, 3), dtype=[("estimate", np.float64), ("flagged", np.float64)])  # 3 targets where runs have 4
    np.save(cells / "partial" / "k5-s6-r0-5.npy", block)


# ---- expectations ----------------------------------------------------------------------------------
def unchanged(*names: str) -> Callable[[Path], Check]:
    """A check that the named input files keep their bytes (hashes taken after the setup)."""

    def make(folder: Path) -> Check:
        before = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names}

        def check(result: Result) -> str | None:
            for n, digest in before.items():
                path = result.folder / n
                if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                    return f"{n} was changed"
            return None

        return check

    return make


def says(*fragments: str) -> Check:
    def check(result: Result) -> str | None:
        missing = [f for f in fragments if f.lower() not in result.text.lower()]
        return f"the output lacks {missing}" if missing else None

    return check


def lacks(*fragments: str) -> Check:
    def check(result: Result) -> str | None:
        found = [f for f in fragments if re.search(f, result.text)]
        return f"the output holds {found}" if found else None

    return check


def models_read(n: int) -> Check:
    def check(result: Result) -> str | None:
        match = re.search(r"models?\W+(\d+)|(\d+) models", result.text)
        got = next((int(g) for g in (match.groups() if match else ()) if g), None)
        return None if got == n else f"{got} models read, not {n}"

    return check


def estimates_in_intervals(result: Result) -> str | None:
    """Every estimate row of `mdad estimate`'s CSV in [0, 1] and inside its interval."""
    path = result.folder / "e.csv"
    if not path.is_file():
        return "no estimate CSV"
    frame = pd.read_csv(path)
    bad = frame[
        (frame["estimate"] < frame["low"] - 1e-9) | (frame["estimate"] > frame["high"] + 1e-9) | (frame["estimate"] < 0) | (frame["estimate"] > 1)
    ]
    return f"{len(bad)} estimates outside [0, 1] or their interval" if len(bad) else None


def converted_probs_kept_finite(result: Result) -> str | None:
    """The npz `convert` wrote keeps no option probabilities that are NaN for an item with a gold option."""
    with np.load(result.folder / "c.npz") as npz:
        if "option_probs" not in npz.files:
            return None
        probs, gold, scores = npz["option_probs"], npz["gold"], npz["scores"]
    bad = np.isnan(probs).all(axis=-1) & np.isfinite(scores) & (gold >= 0)[None, :]  # an answered item without them
    return f"{int(bad.sum())} NaN option probabilities written for items with a gold option" if bad.any() else None


def no_self_pair(result: Result) -> str | None:
    for path in (result.folder / "o").rglob("group*.csv"):
        frame = pd.read_csv(path)
        cols = [c for c in frame.columns if c.lower() in ("first", "second", "model_a", "model_b", "a", "b")]
        if len(cols) >= 2 and (frame[cols[0]] == frame[cols[1]]).any():
            return f"{path.name} holds a self-pair"
    return None


def info_prints_alike(result: Result) -> str | None:
    names = {unicodedata.normalize("NFC", n.replace("\u200b", "")) for n in ("caf\u00e9",)}
    return None if "alike" in result.text or len(names) != 1 else "no note on names that print alike"


def both(*checks: Check) -> Check:
    def check(result: Result) -> str | None:
        return next((p for p in (c(result) for c in checks) if p), None)

    return check


# ---- the cases ------------------------------------------------------------------------------------
def cases() -> list[Case]:
    est = f"{MDAD} estimate m.json {D}/oll2-gpqa"
    micro = [
        ("weights [1.0]*10", lambda d: d["estimator"].update(weights=[1.0] * 10), "weights"),
        ("weights [-0.1]*10", lambda d: d["estimator"].update(weights=[-0.1] * 10), "weights"),
        ("weights [1e308]*10", lambda d: d["estimator"].update(weights=[1e308] * 10), "weights"),
        ("duplicated item id", lambda d: d["items"].__setitem__(1, d["items"][0]), "more than once"),
        ("pool_items 10", lambda d: d.update(pool_items=10), "pool_items"),
        ("pool_items 10^7", lambda d: d.update(pool_items=10**7), "pool_items"),
        ("pool_subtasks 10^6", lambda d: d.update(pool_subtasks={"gpqa_main": 10**6}), "pool_subtasks"),
        ("tasks [1]", lambda d: d.update(tasks=[1]), "tasks"),
        ('method "nope"', lambda d: d.update(method="nope"), "method"),
        ("size disagrees", lambda d: d.update(size=11), "size"),
        ("pool_positions out of pool", lambda d: d["pool_positions"].__setitem__(0, 448), "pool_positions"),
        ("estimator kind unknown", lambda d: d["estimator"].update(kind="nope"), "kind 'nope'"),
        ("accuracy_prior over another pool", lambda d: d["accuracy_prior"].update(pool_items=449), "accuracy_prior"),
        ("items not texts", lambda d: d.update(items=list(range(10))), "items"),
        ("seed true", lambda d: d.update(seed=True), "seed"),
        ("size 0", lambda d: d.update(size=0), "size"),
        ("pool_items 1.5", lambda d: d.update(pool_items=1.5), "pool_items"),
        ("pool_subtasks negative", lambda d: d.update(pool_subtasks={"gpqa_main": -448}), "pool_subtasks"),
        ("item_hashes of another length", lambda d: d.update(item_hashes=["a"] * 3), "item_hashes"),
        ("data_fingerprint a number", lambda d: d.update(data_fingerprint=7), "data_fingerprint"),
        ("subtasks of another length", lambda d: d.update(subtasks=d["subtasks"][:5]), "subtasks"),
        ("weights a text", lambda d: d["estimator"].update(weights="abc"), "weights"),
        ("weights null", lambda d: d["estimator"].update(weights=None), "weights"),
        ("accuracy_prior counts negative", lambda d: d["accuracy_prior"]["counts"].__setitem__(0, -5), "accuracy prior"),
        ("accuracy_prior uniform weight 2", lambda d: d["accuracy_prior"].update(uniform_weight=2.0), "accuracy prior"),
        ("pair_prior mass negative", lambda d: d["pair_prior"]["mass"][0].__setitem__(0, -1.0), "pair prior"),
        ("assessment a list", lambda d: d.update(assessment=[1]), "assessment"),
        ("format of another program", lambda d: d.update(format="other/1"), "format"),
    ]
    out: list[Case] = [
        # outputs that destroy inputs
        Case("outputs", "estimate --csv onto its micro.json", f"{est} --csv m.json", ("m.json",), extra={"keep": unchanged("m.json")}),
        Case("outputs", "--csv and --pairs-csv on one file", f"{est} --csv e.csv --pairs-csv e.csv", ("e.csv",)),
        Case("outputs", "--compare-csv onto --csv", f"{est} --csv e.csv --compare-csv e.csv --pairs all", ("e.csv",)),
        Case(
            "outputs",
            "select --out onto its data",
            f"{MDAD} select --data x/responses.npz --method random --size 10 --assess-runs 0 --out x/responses.npz",
            ("responses.npz",),
            setup=npz_copy,
            extra={"keep": unchanged("x/responses.npz")},
        ),
        Case(
            "outputs",
            "select --out onto its data through ..",
            f"{MDAD} select --data x/responses.npz --method random --size 10 --assess-runs 0 --out x/../x/responses.npz",
            ("responses.npz",),
            setup=npz_copy,
            extra={"keep": unchanged("x/responses.npz")},
        ),
        Case(
            "outputs",
            "convert onto its source",
            f"{MDAD} convert x/responses.npz --out x/responses.npz",
            ("responses.npz",),
            setup=npz_copy,
            extra={"keep": unchanged("x/responses.npz")},
        ),
        Case(
            "outputs",
            "run --out the data's folder",
            f"{MDAD} run --data x/responses.npz --out x --runs 1",
            ("x",),
            setup=npz_copy,
            extra={"keep": unchanged("x/responses.npz")},
        ),
        Case("outputs", "--csv /dev/stdout is allowed", f"{est} --csv /dev/stdout", check=says("estimate,low,high")),
        Case("outputs", "--csv /dev/full names the file", f"{est} --csv /dev/full", ("/dev/full",)),
        # micro.json validation
        *[Case("micro.json", name, est, (field_,), setup=edit_micro(change)) for name, change, field_ in micro],
        Case("micro.json", "seed 1e400", est, ("seed",), setup=raw_micro(('"seed": 0', '"seed": 1e400'))),
        Case("micro.json", "seed Infinity", est, ("seed",), setup=raw_micro(('"seed": 0', '"seed": Infinity'))),
        Case("micro.json", "seed of 5,000 digits", est, ("m.json",), setup=raw_micro(('"seed": 0', '"seed": ' + "9" * 5000))),
        Case("micro.json", "seed 1.5", est, ("seed",), setup=raw_micro(('"seed": 0', '"seed": 1.5'))),
        Case(
            "micro.json",
            "assessment threshold 2.0",
            f"{MDAD} estimate m2.json {D}/oll2-gpqa",
            ("threshold",),
            setup=edit_micro(lambda d: d["assessment"].update(threshold=2.0), "m2.json"),
        ),
        Case(
            "micro.json",
            "assessment mdad -5",
            f"{MDAD} estimate m2.json {D}/oll2-gpqa",
            ("mdad",),
            setup=edit_micro(lambda d: d["assessment"].update(mdad=-5.0), "m2.json"),
        ),
        Case(
            "micro.json",
            "assessment kendall_tau NaN",
            f"{MDAD} estimate m2.json {D}/oll2-gpqa",
            check=lacks(r"\bnan\b"),
            setup=raw_micro(('"kendall_tau": 0.', '"kendall_tau": NaN, "x": 0.'), "m2.json"),
        ),
        Case("micro.json", "untouched file estimates inside intervals", f"{est} --csv e.csv", check=estimates_in_intervals),
        # harness logs and tables
        Case(
            "logs",
            "FIFO samples_*.jsonl in lm-eval logs",
            f"{MDAD} info logs",
            ("FIFO",),
            setup=copy_logs("lm_eval", lambda p: os.mkfifo(p / "model-a" / "samples_tiny_mc_2026-01-01T00-00-00.jsonl")),
        ),
        Case(
            "logs",
            "FIFO *.json in inspect logs",
            f"{MDAD} info logs",
            ("FIFO",),
            setup=copy_logs("inspect", lambda p: os.mkfifo(p / "2026-01-01T00-00-00_tiny-qa_x.json")),
        ),
        Case(
            "logs",
            "samples_*.jsonl linked to /dev/zero",
            f"{MDAD} info logs",
            ("character device",),
            setup=copy_logs("lm_eval", lambda p: (p / "model-a" / "samples_tiny_mc_2026-01-01T00-00-00.jsonl").symlink_to("/dev/zero")),
        ),
        Case("logs", "symlinked model folder read", f"{MDAD} info logs", check=models_read(3), setup=symlinked_model),
        Case(
            "logs",
            "link loop walked once",
            f"{MDAD} info logs",
            check=models_read(3),
            setup=copy_logs("lm_eval", lambda p: (p / "model-a" / "loop").symlink_to(p, target_is_directory=True)),
        ),
        Case("logs", "NaN log-likelihoods", f"{MDAD} info logs", check=says("log-likelihoods"), setup=logliks(["NaN", "-1", "-2", "-3"])),
        Case("logs", "+inf log-likelihoods", f"{MDAD} info logs", check=says("log-likelihoods"), setup=logliks(["Infinity", "-1", "-2", "-3"])),
        Case("logs", "all -inf log-likelihoods", f"{MDAD} info logs", check=says("log-likelihoods"), setup=logliks(["-Infinity"] * 4)),
        Case("logs", "non-numeric log-likelihoods", f"{MDAD} info logs", check=says("log-likelihoods"), setup=logliks(["abc", "-1", "-2", "-3"])),
        Case(
            "logs",
            "NaN log-likelihoods not converted",
            f"{MDAD} convert logs --out c.npz",
            check=converted_probs_kept_finite,
            setup=logliks(["NaN", "-1", "-2", "-3"]),
        ),
        Case("tables", "200,000-character item name in a parquet", f"{MDAD} info big.parquet", ("200,000 characters",), setup=big_item_parquet),
        Case("tables", "two 1e6-character model names in an npz", f"{MDAD} info responses.npz", ("1,000,000 characters",), setup=big_model_npz),
        Case("tables", "NFC/NFD twin model names", f"{MDAD} info responses.npz", check=says("alike"), setup=twins_npz("cafe\u0301")),
        Case("tables", "zero-width twin model names", f"{MDAD} info responses.npz", check=says("alike"), setup=twins_npz("caf\u200b\u00e9")),
        Case(
            "tables",
            "'mX' and 'mX ' in a long CSV",
            f"{MDAD} info long.csv",
            check=says("surrounding spaces"),
            setup=write("long.csv", "model,item,score\nmX,a,1\nmX ,b,0\nmY,a,0\nmY,b,1\n"),
        ),
        Case(
            "tables",
            "models named NA, None, null",
            f"{MDAD} info long.csv",
            check=models_read(3),
            setup=write("long.csv", "model,item,score\nNA,a,1\nNA,b,1\nNone,a,0\nNone,b,1\nnull,a,1\nnull,b,0\n"),
        ),
        Case("tables", "score 1.0000001", f"{MDAD} info s.csv", ("1.0000001",), setup=write("s.csv", "model,i0,i1\nm0,1.0000001,0\nm1,0,1\n")),
        Case(
            "tables",
            "groups.json lists a model twice",
            f"{MDAD} run --data responses.npz --group g --methods random --sizes 5 --sources 6 --runs 2 --workers 1 --out o",
            check=both(no_self_pair, says("more than once")),
            setup=group_twice,
        ),
        Case(
            "tables",
            "100 one-item subtasks",
            f"{MDAD} run --data d.csv --workers 1 --out o",
            ("each subtask needs at least 2 items",),
            setup=one_item_tasks,
        ),
        # library entry points
        *[
            Case("from_frame", name, f"{sys.executable} lib.py", (fragment,), setup=write("lib.py", LIB.format(code=code)))
            for name, code, fragment in (
                (
                    "MultiIndex frame",
                    "import numpy as np, pandas as pd; "
                    "mdad.from_frame(pd.DataFrame(np.eye(2), index=pd.MultiIndex.from_tuples([(1, 'a'), (2, 'b')]), columns=['q0', 'q1']))",
                    "levels",
                ),
                (
                    "subtasks=5",
                    "import numpy as np, pandas as pd; mdad.from_frame(pd.DataFrame(np.eye(2), index=['a', 'b'], columns=['q0', 'q1']), subtasks=5)",
                    "subtasks",
                ),
                ("to_pandas gives a list", "mdad.from_frame(type('T', (), {'to_pandas': lambda self: [1, 2]})())", "list"),
            )
        ],
        # stores and resume
        *[
            Case("stores", f"report: cell with {name}", f"{MDAD} report o", (fragment,), setup=edit_cell(change))
            for name, change, fragment in STORE_EDITS
        ],
        *[
            Case("stores", f"resume: cell with {name}", SMALL_RUN, check=says("damaged"), setup=edit_cell(change))
            for name, change, fragment in STORE_EDITS
        ],
        Case(
            "stores",
            "resume: partial block with the wrong number of targets",
            SMALL_RUN.replace("5,10", "5").replace("--runs 3", "--runs 10"),
            check=says("damaged"),
            setup=wrong_targets_block,
        ),
        *[
            case
            for kind, said in (("FIFO", "FIFO"), ("/dev/zero", "character device"))
            for case in (
                Case("no file", f"micro.json is a {kind}", est, (said,), setup=no_file("m.json", kind)),
                Case("no file", f"groups.json is a {kind}", f"{MDAD} info x/responses.npz", (said,), setup=npz_with("groups.json", kind)),
                Case("no file", f"a table in a folder is a {kind}", f"{MDAD} info t", (said,), setup=no_file("t/b.csv", kind, table_folder)),
                Case("no file", f"config.json is a {kind}", f"{MDAD} report o", (said,), setup=no_file("o/config.json", kind, small_run)),
                Case(
                    "no file",
                    f"report: a cell is a {kind}",
                    f"{MDAD} report o",
                    (said,),
                    setup=no_file("o/cells/random/k10-s6.parquet", kind, small_run),
                ),
                Case(
                    "no file",
                    f"resume: a cell is a {kind}",
                    SMALL_RUN,
                    check=says("damaged"),
                    setup=no_file("o/cells/random/k10-s6.parquet", kind, small_run),
                ),
                Case(
                    "no file",
                    f"resume: a block of runs is a {kind}",
                    SMALL_RUN.replace("5,10", "5").replace("--runs 3", "--runs 10"),
                    check=says("damaged"),
                    setup=block_of(os.mkfifo if kind == "FIFO" else lambda p: p.symlink_to("/dev/zero")),
                ),
            )
        ],
        Case(
            "no file",
            "resume: a block declaring 5 x 10^9 runs",
            SMALL_RUN.replace("5,10", "5").replace("--runs 3", "--runs 10"),
            check=says("damaged"),
            setup=block_of(huge_header),
        ),
        Case("no file", "a sparse 40 GiB CSV", f"{MDAD} info big.csv", ("big.csv",), setup=sparse_table),
        Case("stores", "report: stray k999-s20.parquet", f"{MDAD} report o", ("k999-s20.parquet",), setup=stray_cell),
        Case(
            "stores",
            "select --assess-runs 1000000",
            f"{MDAD} select --dataset oll2-gpqa --method random --size 10 --assess-runs 1000000 --out s.json",
            ("held-out runs",),
        ),
        Case("stores", "run --runs 10^9", f"{MDAD} run --dataset oll2-gpqa --runs 1000000000 --out o", ("runs",)),
        # wording
        Case("wording", "1 target model", f"{MDAD} run --data d.csv --targets 1 --out o", ("1 target model was",), setup=small_wide),
        Case("wording", "an 8-item", f"{MDAD} compare --data d.csv --size 8", check=both(says("an 8-item"), lacks(r"\ba 8-item")), setup=small_wide),
        Case(
            "wording",
            "an 80-item",
            f"{MDAD} compare --data d.csv --size 80",
            check=lacks(r"\ba 80-item", r"\b1 items\b"),
            setup=lambda f: small_wide(f, n_items=120),
        ),
    ]
    # interrupts: SIGINT or SIGTERM to the main process only, at a moment held by an import
    for sig in (signal.SIGINT, signal.SIGTERM):
        sname = signal.Signals(sig).name
        out += [
            Case(
                "signals",
                f"{sname} during the imports (select)",
                f"{MDAD} select --dataset oll2-gpqa --method random --size 10 --assess-runs 0 --out s.json",
                signal=sig,
                pause_at="numpy",
            ),
            Case("signals", f"{sname} during the imports (info)", f"{MDAD} info {D}/oll2-gpqa", signal=sig, pause_at="pandas"),
            Case(
                "signals",
                f"{sname} during logging of select",
                f"{MDAD} select --dataset oll2-gpqa --method random --size 10 --assess-runs 4 --workers 1 --out s.json",
                signal=sig,
                pause_at="mdad.micro.notes",
            ),
            Case("signals", f"{sname} after run read its data", SMALL_RUN, signal=sig, pause_at="mdad.experiment.evaluate", setup=small_wide),
            Case("signals", f"{sname} among the cells of run (2 workers)", LONG_RUN, signal=sig, pause_at="glob:o/cells/*/partial/*.npy"),
            Case("signals", f"{sname} during the report of run", SMALL_RUN, signal=sig, pause_at="mdad.report.html", setup=small_wide),
            Case("signals", f"{sname} during mdad report", f"{MDAD} report o", signal=sig, pause_at="mdad.report.html", setup=small_run),
            Case("signals", f"{sname} during estimate", f"{est} --csv e.csv", signal=sig, pause_at="mdad.micro.estimation"),
        ]
    return out + third_round()


# ---- the third round: plug-ins, tampered stores, options used or refused, outputs -------------------
PLUGIN_MODULES = {
    "five": "X = 5\n",
    "methods": """import numpy as np

from mdad.methods.base import SelectionMethod, plain_mean


class Base(SelectionMethod):
    description = "A broken method."


class Short(Base):
    name = "short"

    def choose(self, view, k, rng, prepared):
        return plain_mean(np.arange(max(1, k // 2)))


class Outside(Base):
    name = "outside"

    def choose(self, view, k, rng, prepared):
        return plain_mean(np.arange(k) + view.n_items)


class Twice(Base):
    name = "twice"

    def choose(self, view, k, rng, prepared):
        return plain_mean(np.zeros(k, dtype=np.int64))
""",
    "readers": """from mdad.data.readers.base import Reader


def detect_raises(path):
    raise ValueError("cannot tell")


def read_list(path, options):
    return [[1, 0], [0, 1]]


FRAGILE = Reader("fragile", detect_raises, read_list, expects="nothing")
""",
    "metrics": """from mdad.metrics.base import Metric

TEXT = Metric("text", "text", "a metric that returns a string", lambda d: "high")
""",
}

PLUGIN_POINTS = {
    "not a class": "[mdad.methods]\nfive = mdad_audit_plugin.five:X\n",
    "methods": "[mdad.methods]\n" + "".join(f"{n} = mdad_audit_plugin.methods:{n.capitalize()}\n" for n in ("short", "outside", "twice")),
    "reader": "[mdad.readers]\nfragile = mdad_audit_plugin.readers:FRAGILE\n",
    "metric": "[mdad.metrics]\ntext = mdad_audit_plugin.metrics:TEXT\n",
}
WITH_PLUGIN = f"PYTHONPATH=site:$PYTHONPATH {MDAD}"


def plugin(points: str) -> Callable[[Path], None]:
    """A plug-in package as pip installs it, in ./site (modules and a dist-info folder of entry points), and d.csv."""

    def setup(folder: Path) -> None:
        small_wide(folder)
        package = folder / "site" / "mdad_audit_plugin"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        for name, code in PLUGIN_MODULES.items():
            (package / f"{name}.py").write_text(code)
        info = folder / "site" / "mdad_audit_plugin-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mdad-audit-plugin\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(points)

    return setup


def nothing_new(folder: Path) -> Check:
    """A check that the command left no new file or folder beside what the setup made."""
    before = {p.relative_to(folder) for p in folder.rglob("*")}

    def check(result: Result) -> str | None:
        new = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.relative_to(folder) not in before)
        return f"it left {new}" if new else None

    return check


def keeps(*makers: Callable[[Path], Check]) -> Callable[[Path], Check]:
    def make(folder: Path) -> Check:
        return both(*(m(folder) for m in makers))

    return make


CELL_5, CELL_10 = "o/cells/random/k5-s6.parquet", "o/cells/random/k10-s6.parquet"
STORE_FILES = (CELL_5, CELL_10, "o/index.json")


def copy_cell(folder: Path) -> None:
    small_run(folder)
    shutil.copy(folder / CELL_5, folder / CELL_10)


def no_config(folder: Path) -> None:
    small_run(folder)
    (folder / "o" / "config.json").unlink()


def anchor_micro(folder: Path) -> None:
    """a.json: anchor-points (not a random design) chosen from d.csv."""
    small_wide(folder, models=[f"m{i}" for i in range(30)])
    cmd = f"{MDAD} select --data d.csv --method anchor-points --size 10 --assess-runs 0 --out a.json"
    subprocess.run(cmd.split(), cwd=folder, check=True, capture_output=True)


def continuous_csv(folder: Path) -> None:
    rng = np.random.default_rng(4)
    scores = np.clip(np.linspace(0.2, 0.8, 40)[:, None] + rng.normal(0, 0.25, (40, 150)), 0, 1)
    frame = pd.DataFrame(scores, columns=[f"q{j}" for j in range(150)])
    frame.insert(0, "model", [f"m{i}" for i in range(40)])
    frame.to_csv(folder / "c.csv", index=False)


def comma_model(folder: Path) -> None:
    """n.npz with a model named 'a,b', and n.json chosen from it."""
    rng = np.random.default_rng(1)
    np.savez(
        folder / "n.npz",
        scores=(rng.random((6, 40)) < 0.5).astype(np.float32),
        models=np.array(["a,b", "c", "d", "e", "f", "g"]),
        items=np.array([f"q{j}" for j in range(40)]),
        subtasks=np.array(["all"] * 40),
    )
    cmd = f"{MDAD} select --data n.npz --method random --size 20 --assess-runs 0 --out n.json"
    subprocess.run(cmd.split(), cwd=folder, check=True, capture_output=True)


# Path.write_text onto a file named full.json (or its temporary file) writes half, then the disk is full.
FULL_DISK = """
import errno, os
from pathlib import Path

_real = Path.write_text


def _half_then_full(self, data, *args, **kwargs):
    if "full.json" in self.name:
        _real(self, data[: len(data) // 2], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return _real(self, data, *args, **kwargs)


Path.write_text = _half_then_full
"""


def full_disk(folder: Path) -> None:
    small_wide(folder)
    (folder / "full.json").write_text("the micro-benchmark of an earlier select\n")
    (folder / "hook").mkdir()
    (folder / "hook" / "sitecustomize.py").write_text(FULL_DISK)


# Holds mdad's lock on w.json (writing ./held) until killed: the first of two writers.
HOLD = """import signal, sys, time
from pathlib import Path
from mdad.outputs import locked_outputs
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # killed, it releases the lock as it would on finishing
with locked_outputs({"the micro-benchmark file": sys.argv[1]}):
    Path("held").write_text("")
    time.sleep(120)
"""


def holder(folder: Path) -> None:
    small_wide(folder)
    (folder / "hold.py").write_text(HOLD)


SELECT_D = f"{MDAD} select --data d.csv --method random --size 5 --assess-runs 0"
SECOND_WRITER = (
    f"{sys.executable} hold.py w.json & while [ ! -e held ]; do sleep 0.05; done; {SELECT_D} --out w.json; rc=$?; kill $!; wait $!; rm held; exit $rc"
)
SUFFIX_VALUES = {
    "@randomesque=²": ("adaptive-1d@randomesque=²", "@randomesque takes a whole number"),
    "@randomesque=<5,000 digits>": ("adaptive-1d@randomesque=" + "7" * 5000, "5,000 characters"),
    "@randomesque=٣ (Arabic-Indic)": ("adaptive-1d@randomesque=٣", "got '٣'"),
    "@stop-se=inf": ("adaptive-1d@stop-se=inf", "strictly between 0 and 1"),
}
SUFFIX_COMMANDS = {
    "select": f"{MDAD} select --method {{}} --size 5 --out s.json",
    "run": f"{MDAD} run --methods {{}} --out o",
    "plan": f"{MDAD} plan --method {{}} --detect 5",
}
TAMPERED = {"estimates + 0.1": edit_cell(lambda f: f.assign(estimate=f["estimate"] + 0.1)), "the 5-item cell copied over the 10-item one": copy_cell}
TAMPER_SAID = {"estimates + 0.1": "checksum", "the 5-item cell copied over the 10-item one": "holds the cell of random at 5 items"}


def third_round() -> list[Case]:
    """Every reproduction of the third hardening round: plug-ins, tampered stores, options, outputs."""
    out = [
        # plug-ins: one sentence naming the plug-in; commands that do not use it keep working
        Case(
            "plug-ins",
            "an entry point that is not a class (methods still listed)",
            f"{WITH_PLUGIN} methods",
            check=both(says("'five' (mdad_audit_plugin.five:X) could not be loaded", "int 5", "random-stratified-equal")),
            setup=plugin(PLUGIN_POINTS["not a class"]),
        ),
        Case(
            "plug-ins",
            "an entry point that is not a class (select still works)",
            f"{WITH_PLUGIN} select --data d.csv --method random --size 5 --assess-runs 0 --out s.json",
            check=says("could not be loaded"),
            setup=plugin(PLUGIN_POINTS["not a class"]),
        ),
        *[
            Case(
                "plug-ins",
                f"a choose returning {what}",
                f"{WITH_PLUGIN} select --data d.csv --method {name} --size 10 --assess-runs 0 --out s.json",
                (f"'{name}' (mdad_audit_plugin.methods:{name.capitalize()})", said),
                setup=plugin(PLUGIN_POINTS["methods"]),
                extra={"keep": nothing_new},
            )
            for name, what, said in (
                ("short", "too few positions", "chose 5 items where size 10 was asked"),
                ("outside", "out-of-range positions", "outside the pool of 40 items"),
                ("twice", "duplicate positions", "twice at size 10"),
            )
        ],
        Case(
            "plug-ins",
            "a reader whose detect raises (other formats still read)",
            f"{WITH_PLUGIN} info d.csv",
            check=both(says("'fragile' (mdad_audit_plugin.readers:FRAGILE) failed to detect", "cannot tell"), models_read(12)),
            setup=plugin(PLUGIN_POINTS["reader"]),
        ),
        Case(
            "plug-ins",
            "a metric returning a string",
            f"{WITH_PLUGIN} {SMALL_RUN.removeprefix(MDAD + ' ')}",
            ("'text' (mdad_audit_plugin.metrics:TEXT)", "returned str 'high', not a number"),
            setup=plugin(PLUGIN_POINTS["metric"]),
        ),
        # stores that notice tampering and lost identity
        *[
            Case("tampering", f"report: {what}", f"{MDAD} report o", (f"{CELL_10} is damaged", TAMPER_SAID[what]), setup=setup)
            for what, setup in TAMPERED.items()
        ],
        *[
            Case("tampering", f"resume: {what}", SMALL_RUN, check=says(f"{CELL_10} was damaged", "computed again"), setup=setup)
            for what, setup in TAMPERED.items()
        ],
        Case(
            "tampering",
            "config.json deleted, then a resume with another seed",
            f"{SMALL_RUN} --seed 1",
            ("different experiment", "seed: 0 there, 1 now", "config.json is missing"),
            setup=no_config,
            extra={"keep": keeps(unchanged(*STORE_FILES), nothing_new)},
        ),
        # options used or refused
        *[
            Case(
                "options",
                f"estimate {option} on a design that is not random",
                f"{MDAD} estimate a.json d.csv {option}",
                (option, "not a random design"),
                setup=anchor_micro,
            )
            for option in ("--clopper-pearson", "--population")
        ],
        Case(
            "options",
            "run --stop-se 0.3 with no adaptive method",
            f"{MDAD} run --data d.csv --methods random --stop-se 0.3 --out o",
            ("--stop-se applies to adaptive tests only",),
            setup=small_wide,
            extra={"keep": nothing_new},
        ),
        Case(
            "options",
            "run --stop-se 0.3 with the default methods",
            f"{MDAD} run --data d.csv --stop-se 0.3 --out o",
            ("no adaptive test",),
            setup=small_wide,
            extra={"keep": nothing_new},
        ),
        *[
            Case(
                "options",
                f"--scheduler {address}",
                f"{MDAD} run --methods random --scheduler {address} --out o",
                (f"--scheduler '{address}'", "tcp://host:8786"),
            )
            for address in ("nonsense", "http://127.0.0.1:1")
        ],
        Case(
            "options",
            "plan --detect inf",
            f"{MDAD} plan --detect inf",
            ("from 0 to 100",),
            check=lacks("RuntimeWarning", r"e\+18"),
        ),
        Case(
            "options",
            "plan --method all on continuous scores",
            f"{MDAD} plan --data c.csv --method all --detect 10 --runs 2",
            check=says("Not answered:", "needs 0/1 correctness and c.csv holds continuous scores"),
            setup=continuous_csv,
        ),
        Case(
            "options",
            "--compare a model named 'a,b' by repeating --compare",
            f"{MDAD} estimate n.json n.npz --compare a,b --compare c",
            check=says("a,b", "vs c"),
            setup=comma_model,
        ),
        Case(
            "options",
            "select --seed 2**64",
            f"{SELECT_D} --seed {2**64} --out s.json",
            ("smaller than 2**64",),
            setup=small_wide,
            extra={"keep": nothing_new},
        ),
        Case(
            "options",
            "info on all-NaN scores",
            f"{MDAD} info nan.csv",
            check=both(says("no model answered any item"), lacks("Warning")),
            setup=write("nan.csv", "model,i0,i1\nm0,,\nm1,,\n"),
        ),
        # suffix values, in each command that reads a method name
        *[
            Case(
                "suffixes",
                f"{command} {label}",
                template.format(name),
                (said,),
                extra={"keep": nothing_new},
            )
            for label, (name, said) in SUFFIX_VALUES.items()
            for command, template in SUFFIX_COMMANDS.items()
        ],
        # outputs written whole, one writer at a time
        Case(
            "atomic",
            "select --out on a full disk",
            f"PYTHONPATH=hook:$PYTHONPATH {SELECT_D} --out full.json",
            ("Could not write the micro-benchmark file", "No space left on device"),
            setup=full_disk,
            extra={"keep": keeps(unchanged("full.json"), nothing_new)},
        ),
        Case(
            "atomic",
            "two writers of one output",
            SECOND_WRITER,
            ("Another mdad command", "is writing the micro-benchmark file"),
            setup=holder,
            extra={"keep": nothing_new},
        ),
    ]
    return out


LONG_RUN = f"{MDAD} run --dataset oll2-gpqa --runs 300 --sizes 10,50 --methods random --sources 20,40 --workers 2 --out o"


class _Appears:
    """Stands for the 'paused' file: exists once a file matching ``pattern`` exists under ``folder``."""

    def __init__(self, folder: Path, pattern: str):
        self.folder, self.pattern = folder, pattern

    def exists(self) -> bool:
        return any(self.folder.glob(self.pattern))


LIB = """import sys
import mdad
from mdad.errors import MdadError
try:
    {code}
except MdadError as exc:
    print(f"error: {{exc}}", file=sys.stderr)
    sys.exit(2)
"""

STORE_EDITS = [
    ("2 of its 3 runs", lambda f: f[f["run"] < 2], "2 runs of the 3"),
    ("every row twice", lambda f: pd.concat([f, f]), "more than once"),
    ("an estimate of 700%", lambda f: f.assign(estimate=np.where(np.arange(len(f)) == 0, 7.0, f["estimate"])), "700%"),
]


# ---- running ------------------------------------------------------------------------------------
def _limits(memory_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        os.setsid()  # its own session: a signal sent here reaches the main process only
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # as from a terminal, even when this script runs in the background

    return apply


def run_case(case: Case, base: Path, timeout: float, memory_bytes: int) -> tuple[str, str]:
    folder = Path(tempfile.mkdtemp(prefix="audit-", dir=base))
    for name in ("m.json", "m2.json"):
        shutil.copy(base / name, folder / name)
    if case.setup:
        case.setup(folder)
    keep = case.extra["keep"](folder) if "keep" in case.extra else None
    env = {
        **os.environ,
        "COLUMNS": "200",
        "MDAD_DATA_DIR": str(D),
        "D": str(D),
        "F": str(F),
        "PYTHONPATH": os.environ["PYTHONPATH"],
        "OPENBLAS_NUM_THREADS": "1",
    }
    if case.signal is not None:
        return _run_interrupt(case, folder, env, timeout, memory_bytes)
    result = _run(case.cmd, folder, env, timeout, memory_bytes)
    kind, detail = classify(result, case.refuse)
    if kind == "clean":
        for check in (keep, case.check):
            problem = check(result) if check else None
            if problem:
                return "silent", problem
    return kind, detail


def _run(cmd: str, folder: Path, env: dict, timeout: float, memory_bytes: int) -> Result:
    proc = subprocess.Popen(cmd, shell=True, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limits(memory_bytes))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Result(None, out.decode(errors="replace"), err.decode(errors="replace"), folder)
    return Result(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), folder)


# What a command prints when it grew to the address-space limit (mdad turns a MemoryError into the last one).
MEMORY = re.compile(r"MemoryError|Cannot allocate memory|bad_alloc|Unable to allocate|out of memory|Not enough memory for this request", re.I)


def classify(result: Result, refuse: tuple[str, ...] | None) -> tuple[str, str]:
    """The outcome's kind and a few words on it."""
    if result.rc is None:
        return "hang", "still running at the timeout"
    if MEMORY.search(result.err):
        return "memory", MEMORY.search(result.err).group(0)
    if "Traceback (most recent call last)" in result.err:
        return "traceback", result.err.strip().splitlines()[-1][:160]
    if result.rc < 0:
        return "memory", f"killed by {signal.Signals(-result.rc).name}"
    lines = [line for line in result.err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    if refuse is None:
        if result.rc != 0:
            return "silent", f"exit {result.rc}: {(lines or [''])[-1][:160]}"
        return "clean", (result.out.strip().splitlines() or [""])[-1][:100]
    if result.rc == 0:
        return "silent", "accepted: exit 0"
    if result.rc != 2 or len(errors) != 1:
        return "silent", f"exit {result.rc}, {len(errors)} error lines: {(lines or [''])[-1][:160]}"
    missing = [f for f in refuse if f.lower() not in " ".join(errors[0].split()).lower()]
    if missing:
        return "silent", f"the sentence does not name {missing}: {errors[0][:200]}"
    return "clean", errors[0][:160]


def _run_interrupt(case: Case, folder: Path, env: dict, timeout: float, memory_bytes: int) -> tuple[str, str]:
    hook = folder / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(PAUSE)
    paused = folder / "paused"
    if case.pause_at.startswith("glob:"):  # the moment a file of the pattern appears, the command running on
        paused = _Appears(folder, case.pause_at.removeprefix("glob:"))
    env = {**env, "PYTHONPATH": f"{hook}{os.pathsep}{env['PYTHONPATH']}", "AUDIT_PAUSE_AT": case.pause_at, "AUDIT_PAUSED": str(paused)}
    proc = subprocess.Popen(case.cmd.split(), cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limits(memory_bytes))
    deadline = time.monotonic() + timeout
    while not paused.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if proc.poll() is not None:
        out, err = proc.communicate()
        return "silent", f"never reached the import of {case.pause_at} (exit {proc.returncode})"
    if not paused.exists():
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "hang", f"never reached the import of {case.pause_at}"
    proc.send_signal(case.signal)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "hang", "still running after the signal"
    result = Result(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), folder)
    if "Traceback (most recent call last)" in result.err:
        return "traceback", result.err.strip().splitlines()[-1][:160]
    lines = [line for line in result.err.splitlines() if line.strip() and not line.startswith(("\r", " "))]
    said = [line for line in lines if "Interrupted" in line]
    if result.rc != 130 or len(said) != 1 or any("Error" in line for line in lines):
        return "silent", f"exit {result.rc}, {len(said)} interrupt sentences: {(lines or [''])[-1][:160]}"
    env.pop("AUDIT_PAUSE_AT")
    again = _run(case.cmd, folder, env, timeout, memory_bytes)
    if again.rc != 0:
        return "silent", f"the rerun ended with exit {again.rc}: {again.err.strip()[-160:]}"
    return "clean", said[0][:120]


def assess_memory(runs: tuple[int, int] = (500, 2000), targets: int = 50, command: str = "select") -> None:
    """Peak memory of 'mdad select --assess-runs N' (or 'mdad run --runs N', one method and size) on GPQA
    at two numbers of held-out runs: what each run and pair of its targets adds (the rate behind the
    bound on both, mdad.experiment.splits.PAIR_BYTES)."""
    peaks = []
    with tempfile.TemporaryDirectory() as folder:
        for n in runs:
            if command == "select":
                cmd = [MDAD, "select", "--dataset", "oll2-gpqa", "--method", "random", "--size", "10", "--assess-runs", str(n), "--workers", "1"]
                cmd += ["--out", f"{folder}/m.json"]
            else:
                cmd = [MDAD, "run", "--dataset", "oll2-gpqa", "--methods", "random", "--sizes", "10", "--runs", str(n), "--workers", "0"]
                cmd += ["--out", f"{folder}/run-{n}"]
            proc = subprocess.Popen(cmd, env={**os.environ, "MDAD_DATA_DIR": str(D)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
            peaks.append(usage.ru_maxrss * 1024)  # kilobytes on Linux
            print(f"{command} with {n} runs: peak {peaks[-1] / 1e6:.0f} MB (exit {os.waitstatus_to_exitcode(status)})")
    per_run = (peaks[1] - peaks[0]) / (runs[1] - runs[0])
    pairs = targets * (targets - 1) // 2
    print(f"{per_run / 1e3:.0f} kB per run, {per_run / pairs:.0f} bytes per run and pair of its {targets} targets")


def main() -> None:
    parser = suite.parser(__doc__)
    parser.add_argument("--only", default="", help="run only the cases whose group or name holds this text")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--memory-gb", type=float, default=4.0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders")
    parser.add_argument("--cases", type=int, default=0, help="run only the first N chosen cases (0: all)")
    parser.add_argument("--assess-memory", action="store_true", help="only measure the memory of select's held-out runs")
    parser.add_argument("--run-memory", action="store_true", help="only measure the memory of run's held-out runs")
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the mdad sources to audit (default: this checkout's)")
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = str(args.src.resolve())  # every command of the audit runs these sources
    if args.assess_memory:
        return assess_memory()
    if args.run_memory:
        return assess_memory(command="run")
    base = Path(tempfile.mkdtemp(prefix="mdad-audit-"))
    _micro(base)
    chosen = [c for c in cases() if args.only.lower() in f"{c.group} {c.name}".lower()]
    if args.smoke:  # the first case of each group: every kind of setup runs, none rots
        firsts: dict[str, Case] = {}
        for case in chosen:
            firsts.setdefault(case.group, case)
        chosen = list(firsts.values())
    chosen = chosen[: args.cases] if args.cases else chosen
    counts = {kind: 0 for kind in KINDS}
    groups: dict[str, dict[str, int]] = {}
    with suite.Session("audit_hostile", args) as session:
        for case in chosen:
            kind, detail = run_case(case, base, args.timeout, int(args.memory_gb * 2**30))
            counts[kind] += 1
            groups.setdefault(case.group, {k: 0 for k in KINDS})[kind] += 1
            print(f"{kind:9} {case.group:10} {case.name}: {detail}", flush=True)
        for group, row in [*groups.items(), ("all", counts)]:
            session.add(group, cases=sum(row.values()), **row)
    print()
    print("| group | cases | " + " | ".join(KINDS) + " |")
    print("|---|---:|" + "---:|" * len(KINDS))
    for group, row in [*groups.items(), ("all", counts)]:
        print(f"| {group} | {sum(row.values())} | " + " | ".join(str(row[k]) for k in KINDS) + " |")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
