"""A command imports only what it needs: ``mdad methods`` answers without the experiment machinery."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mdad.cli import COMMANDS, MODULES

SCRIPT = """
import json, sys
sys.argv = ["mdad", *sys.argv[1:]]
from mdad.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("mdad."))))
"""


def imported(*args: str) -> tuple[set[str], str]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, check=True)
    *shown, modules = done.stdout.strip().splitlines()
    return set(json.loads(modules)), "\n".join(shown)


def test_methods_imports_neither_the_other_commands_nor_the_experiment():
    modules, shown = imported("methods")
    assert "random-stratified-proportional" in shown
    assert "mdad.cli.methods" in modules
    assert not modules & {"mdad.cli.run", "mdad.cli.plan", "mdad.cli.micro", "mdad.cli.data", "mdad.experiment.grid", "mdad.report.figures"}


@pytest.mark.parametrize("args", [["--help"], ["nope"]])
def test_help_and_an_unknown_command_see_every_command(args):
    modules, _ = imported(*args)
    assert {f"mdad.cli.{module}" for module in MODULES} <= modules


def test_every_command_has_its_module():
    import typer.main

    from mdad.cli import app

    assert set(typer.main.get_command(app).commands) == set(COMMANDS)  # type: ignore[attr-defined]
    assert MODULES == ("data", "micro", "export", "plan", "run", "methods")  # from COMMANDS, in its order


def test_a_command_missing_from_the_one_list_is_refused_as_it_registers():
    """A new command joins COMMANDS, and nothing else: forgetting it fails at once with a sentence naming the entry."""
    from mdad.cli.common import app

    with pytest.raises(
        RuntimeError, match=r"The command 'say-hello' of \S+ needs the entry 'say-hello': 'test_cli_imports' in mdad.cli.commands.COMMANDS"
    ):

        @app.command()
        def say_hello() -> None:
            """Never registered."""


def test_run_starts_its_workers_before_the_report_is_imported():
    """`mdad run` imports the report (matplotlib) while the workers run the cells, not before they start."""
    modules, shown = imported("run", "--help")
    assert "--methods" in shown
    assert "mdad.cli.run" in modules and "mdad.experiment.grid" in modules
    assert not modules & {"mdad.report.figures", "mdad.report.html", "mdad.report.analytic"}


def test_anchor_points_runs_without_importing_scikit_learn(tmp_path):
    """The command line imports kmedoids without scikit-learn, which a worker would otherwise import
    (0.65 s) for kmedoids' estimator class, unused: the same items are chosen as with scikit-learn."""
    lean = SCRIPT.replace('m for m in sys.modules if m.startswith("mdad.")', '{m.split(".")[0] for m in sys.modules} & {"sklearn", "kmedoids"}')
    whole = "import sklearn.base\n" + lean
    chosen = {}
    for name, script in (("lean", lean), ("whole", whole)):
        args = ["select", "--method", "anchor-points", "--size", "10", "--assess-runs", "0", "--out", str(tmp_path / f"{name}.json")]
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=True)
        chosen[name] = json.loads((tmp_path / f"{name}.json").read_text())["items"]
        packages = json.loads(done.stdout.strip().splitlines()[-1])
        assert packages == (["kmedoids"] if name == "lean" else ["kmedoids", "sklearn"])
    assert len(chosen["lean"]) == 10
    assert chosen["lean"] == chosen["whole"]
