"""The commands the README shows run as written: every shell block of README.md, and every docs/ block marked runnable.

A shell block is a fenced ```sh block. The line before it may mark it with an HTML comment (invisible on the page):

- ``<!-- commands: run -->``: run it (docs/ pages run only the blocks marked so; README.md runs every block);
- ``<!-- commands: slow -->``: run it only in the slow run (``pytest -m slow``);
- ``<!-- commands: needs MDAD_DATA_DIR -->``: it reads the real leaderboards of the repository's sibling folder
  ../shared/data, named by MDAD_DATA_DIR; skipped with a message when that folder is absent;
- ``<!-- commands: needs lm-eval -->``, ``<!-- commands: needs inspect -->``: run a harness; run only where this
  interpreter has it (inspect: with the offline model provider tests/make_fixtures.py installs), skipped with a message
  otherwise, in a folder that also holds the local tasks of tests/fixtures/tasks and the source logs the harness wrote
  from there (``lm_eval_out/``, ``inspect_out/``: the adaptive-loop fixtures' sources);
- ``<!-- commands: skip (why) -->``: never run here, for the reason given (installing packages, the test run itself).

The blocks of one page run in order in one temporary folder, so a later block can read what an earlier one wrote,
with the built-in datasets and this interpreter's ``mdad`` and ``python`` first on the PATH. Each command must exit 0.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.paths import ROOT

SHARED_DATA = ROOT.parent / "shared" / "data"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(?:<!--\s*commands:\s*(?P<mark>[^>]*?)\s*-->\s*\n)?```sh\n(?P<body>.*?)```", re.DOTALL)
KINDS = ("run", "slow", "needs MDAD_DATA_DIR", "needs lm-eval", "needs inspect", "skip")
FIXTURES = ROOT / "tests" / "fixtures"
HARNESSES = {  # mark: (the module it needs, the source logs copied beside the tasks)
    "needs lm-eval": ("lm_eval", ("lm_eval_out", FIXTURES / "lm_eval_loop" / "sources")),
    "needs inspect": ("mdad_offline_model", ("inspect_out", FIXTURES / "inspect_loop" / "sources")),
}


@dataclass(frozen=True)
class Block:
    page: Path
    index: int
    kind: str  # one of KINDS
    note: str  # the reason of a "skip"
    commands: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.index}"


def commands(body: str) -> tuple[str, ...]:
    """One entry per command: continuation lines joined, blank and comment-only lines dropped."""
    joined = re.sub(r"\\\n", " ", body)
    return tuple(line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#"))


def blocks(page: Path) -> list[Block]:
    """The page's shell blocks in order, with their marks; unmarked blocks of docs/ pages are illustrations, not run."""
    found = []
    for index, match in enumerate(BLOCK.finditer(page.read_text())):
        mark = match["mark"] or ("run" if page.name == "README.md" and page.parent == ROOT else "")
        if not mark:
            continue
        kind = next((k for k in KINDS if mark.startswith(k)), None)
        assert kind, f"{page.name}: block {index} has an unknown mark {mark!r} (known: {', '.join(KINDS)})"
        found.append(Block(page, index, kind, mark[len(kind) :].strip(" ()"), commands(match["body"])))
    return found


ALL = [block for page in PAGES for block in blocks(page)]


def test_the_readme_shows_runnable_commands():
    readme = [block for block in ALL if block.page == ROOT / "README.md"]
    assert any(block.kind == "run" for block in readme), "the README shows no command that this test runs"
    assert all(block.commands for block in ALL), [block.name for block in ALL if not block.commands]


def test_the_readme_keeps_the_test_command_that_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "python -m pytest -q" in ci
    assert "pip install -e '.[test]' && python -m pytest -q     # tests" in readme


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[Path, Path]:
    """One working folder per page, shared by its blocks in order."""
    return {page: tmp_path_factory.mktemp(page.stem) for page in PAGES}


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("MDAD_DATA_DIR", None)
    return env


@pytest.mark.parametrize("block", [pytest.param(block, id=block.name, marks=[pytest.mark.slow] if block.kind == "slow" else []) for block in ALL])
def test_command_block_runs(block: Block, folders: dict[Path, Path]):
    if block.kind == "skip":
        pytest.skip(f"{block.name} is not run here: {block.note}")
    env = environment()
    if block.kind == "needs MDAD_DATA_DIR":
        if not SHARED_DATA.is_dir():
            pytest.skip(f"{block.name} needs the real leaderboards in {SHARED_DATA} (MDAD_DATA_DIR), which is absent")
        env["MDAD_DATA_DIR"] = str(SHARED_DATA)
    if block.kind in HARNESSES:
        module, (logs, sources) = HARNESSES[block.kind]
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{block.name} runs a harness this interpreter lacks ({module})")
        folder = folders[block.page]
        shutil.copytree(FIXTURES / "tasks", folder, dirs_exist_ok=True)
        shutil.copytree(sources, folder / logs, dirs_exist_ok=True)
        env.update({"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "INSPECT_DISPLAY": "none"})
    for command in block.commands:
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command], check=False, cwd=folders[block.page], env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{block.name}: `{command}` exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
