"""A broken plug-in is one sentence naming it (entry point and module) and what it broke, exit code 2, and commands
that do not use it keep working (docs/extending.md#what-mdad-checks-at-run-time). Each case installs the plug-in as pip would
(tests/docs/test_extending.py) and runs mdad in a fresh Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from support.plugins import installed_plugin, run_python

import mdad
from mdad.errors import MdadError
from mdad.methods.base import METHODS, MicroBenchmark, SelectionMethod

BROKEN_IMPORTS = {
    "five": "X = 5\n",
    "exits": "import sys\nsys.exit(3)\n",
    "interrupts": "raise KeyboardInterrupt\n",
    "abstract": "from mdad.methods.base import METHODS, SelectionMethod\n\n\n@METHODS.register()\nclass Half(SelectionMethod):\n"
    '    name = "half"\n    description = "No choose."\n',
}

METHOD_CODE = """
import numpy as np

from mdad.methods.base import SelectionMethod, plain_mean, MicroBenchmark


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


class Raises(Base):
    name = "raises"

    def choose(self, view, k, rng, prepared):
        return {}[k]


class Heavy(Base):
    name = "heavy"
    description = "Weights of 5: estimates five times the mean."

    def choose(self, view, k, rng, prepared):
        return MicroBenchmark(items=np.arange(k), weights=np.full(k, 5.0))


class NanWeights(Base):
    name = "nan-weights"

    def choose(self, view, k, rng, prepared):
        return MicroBenchmark(items=np.arange(k), weights=np.full(k, np.nan))


class Chosen(Base):
    name = "chosen"
    description = "A plug-in that asks to run by default."
    default = True

    def choose(self, view, k, rng, prepared):
        return plain_mean(np.arange(k))
"""

READER_CODE = """
from pathlib import Path

from mdad.data.readers.base import Reader


def detect_raises(path):
    raise ValueError("cannot tell")


def detect_weird(path):
    return Path(path).suffix == ".weird"


def read_list(path, options):
    return [[1, 0], [0, 1]]


def detect_boom(path):
    return Path(path).suffix == ".boom"


def read_raises(path, options):
    raise RuntimeError("boom")


FRAGILE = Reader("fragile", detect_raises, read_list, expects="nothing")
BOOM = Reader("boom", detect_boom, read_raises, expects="a *.boom file")
WEIRD = Reader("weird", detect_weird, read_list, expects="a *.weird file")
"""

METRIC_CODE = """
import numpy as np

from mdad.metrics.base import Metric

RAISES = Metric("raises", "raises", "a metric that raises", lambda d: 1 / 0)
TEXT = Metric("text", "text", "a metric that returns a string", lambda d: "high")
ARRAY = Metric("array", "array", "a metric that returns an array", lambda d: np.abs(d.estimates - d.truth))
"""

# Runs every command of a case with Typer's runner in one fresh Python and prints each exit code and output.
CLI = """
import json, logging, sys
handler = logging.StreamHandler(sys.stdout)
logging.getLogger("mdad").addHandler(handler)
import mdad
from typer.testing import CliRunner
from mdad.cli import app
from mdad.data.npz import write_npz

write_npz(mdad.simulate(seed=0, n_models=30, n_items=60, n_subtasks=2), "small.npz")
open("results.csv", "w").write("model,item,score\\na,q1,1\\na,q2,0\\nb,q1,0\\nb,q2,1\\n")
open("x.weird", "w").write("?")
open("x.boom", "w").write("?")
records = []
for args in json.loads(sys.argv[1]):
    done = CliRunner().invoke(app, args)
    error = repr(done.exception) if done.exit_code not in (0, 2) else ""
    records.append({"args": args, "code": done.exit_code, "output": done.output, "error": error})
print("RECORDS" + json.dumps(records))
"""

RUN = ["run", "--data", "small.npz", "--sizes", "10", "--runs", "2", "--workers", "1", "--out"]


def commands(tmp_path: Path, entry_points: str, args: list[list[str]]) -> tuple[list[dict], str]:
    """Install the broken plug-ins with ``entry_points`` and run ``args`` (one command line each) in a fresh Python:
    each command's exit code and output, and the warnings logged (the plug-ins left out)."""
    site = tmp_path / "site"
    installed_plugin(site, entry_points, {**BROKEN_IMPORTS, "methods": METHOD_CODE, "readers": READER_CODE, "metrics": METRIC_CODE})
    script = CLI.replace("json.loads(sys.argv[1])", repr(args))
    done = run_python(script, site, tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    shown, _, records = done.stdout.rpartition("RECORDS")
    return json.loads(records), shown


def one_sentence(record: dict) -> str:
    assert record["code"] == 2 and not record["error"], record
    lines = [line for line in record["output"].splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]  # the runner shows stdout (progress) and stderr together
    assert errors == lines[-1:] and "Traceback" not in record["output"], record["output"]
    return errors[0].removeprefix("error: ")


def test_plugins_that_break_on_import_are_named_and_left_out(tmp_path):
    entry_points = (
        "[mdad.methods]\nfive = mdad_every_other.five:X\nexits = mdad_every_other.exits\ninterrupts = mdad_every_other.interrupts\n"
        "half = mdad_every_other.abstract\n"
        "[mdad.readers]\nfive = mdad_every_other.five:X\n[mdad.metrics]\nfive = mdad_every_other.five:X\n"
    )
    records, warnings = commands(tmp_path, entry_points, [["methods"], ["info", "--data", "results.csv"], [*RUN, "out", "--methods", "random"]])
    assert [r["code"] for r in records] == [0, 0, 0], records
    assert "random-stratified-equal" in records[0]["output"]
    assert "models" in records[1]["output"]
    assert "half" not in records[0]["output"]
    for sentence in (
        "The method plug-in 'half' (mdad_every_other.abstract) could not be loaded: its class Half does not define choose; it is left out.",
        "The method plug-in 'exits' (mdad_every_other.exits) could not be loaded: it called sys.exit(3) while imported; it is left out.",
        "The method plug-in 'five' (mdad_every_other.five:X) could not be loaded: it names int 5, not a subclass of "
        "mdad.methods.base.SelectionMethod; it is left out.",
        "The method plug-in 'interrupts' (mdad_every_other.interrupts) could not be loaded: it raised KeyboardInterrupt while "
        "imported; it is left out.",
        "The reader plug-in 'five' (mdad_every_other.five:X) could not be loaded: it names int 5, not a "
        "mdad.data.readers.base.Reader; it is left out.",
        "The metric plug-in 'five' (mdad_every_other.five:X) could not be loaded: it names int 5, not a mdad.metrics.base.Metric; it is left out.",
    ):
        assert warnings.count(sentence) == 1, (sentence, warnings)


METHOD_POINTS = "[mdad.methods]\n" + "".join(
    f"{name} = mdad_every_other.methods:{cls}\n"
    for name, cls in [
        ("short", "Short"),
        ("outside", "Outside"),
        ("twice", "Twice"),
        ("raises", "Raises"),
        ("heavy", "Heavy"),
        ("nan-weights", "NanWeights"),
        ("chosen", "Chosen"),
    ]
)


def test_a_method_that_breaks_its_contract_is_one_sentence_naming_it(tmp_path):
    select = ["select", "--data", "small.npz", "--size", "10", "--assess-runs", "0", "--out", "micro.json", "--method"]
    cases = {
        "short": "chose 5 items where size 10 was asked.",
        "outside": "chose the position 69, outside the pool of 60 items.",
        "twice": "chose 9 item(s) twice at size 10.",
        "raises": "failed to choose 10 items (KeyError: 10).",
        "nan-weights": "gave weights that are not one number per item (NaN or the wrong count) at size 10.",
    }
    args = [[*select, name] for name in cases] + [[*RUN, "heavy", "--methods", "heavy"], [*RUN, "plain", "--methods", "random"], ["methods"]]
    records, warnings = commands(tmp_path, METHOD_POINTS, args)
    assert not warnings.strip(), warnings
    for record, (name, broke) in zip(records, cases.items(), strict=False):
        cls = {"nan-weights": "NanWeights"}.get(name, name.capitalize())
        assert one_sentence(record) == f"The method plug-in {name!r} (mdad_every_other.methods:{cls}) {broke}"
    heavy = one_sentence(records[len(cases)])
    assert heavy.startswith("The method plug-in 'heavy' (mdad_every_other.methods:Heavy) gave an estimate of ") and "outside [0, 1]" in heavy
    assert records[len(cases) + 1]["code"] == 0, records[len(cases) + 1]  # a command that does not use them works
    listed = records[-1]["output"]
    assert all(name in listed for name in [*cases, "heavy", "chosen"])


def test_plugin_methods_join_the_default_list_only_by_their_own_choice(tmp_path):
    site = tmp_path / "site"
    installed_plugin(site, METHOD_POINTS, {"methods": METHOD_CODE})
    done = run_python("from mdad import methods; print(methods.defaults()); print(methods.on_request())", site, tmp_path)
    defaults, on_request = (line for line in done.stdout.splitlines())
    assert "'chosen'" in defaults and "'random'" in defaults and "'short'" not in defaults and "'heavy'" not in defaults, done.stdout
    assert "'short'" in on_request and "'heavy'" in on_request and "'chosen'" not in on_request


def test_a_reader_that_breaks_is_named_and_the_other_formats_still_read(tmp_path):
    entry_points = (
        "[mdad.readers]\nfragile = mdad_every_other.readers:FRAGILE\nweird = mdad_every_other.readers:WEIRD\nboom = mdad_every_other.readers:BOOM\n"
    )
    args = [["info", "--data", "results.csv"], ["info", "--data", "x.weird"], ["info", "--data", "x.boom"]]
    records, warnings = commands(tmp_path, entry_points, args)
    assert records[0]["code"] == 0, records[0]
    assert (
        "The reader plug-in 'fragile' (mdad_every_other.readers:FRAGILE) failed to detect whether it reads results.csv "
        "(ValueError: cannot tell). It is left out."
    ) in warnings
    assert one_sentence(records[1]) == "The reader plug-in 'weird' (mdad_every_other.readers:WEIRD) read x.weird into list, not a ResponseMatrix."
    assert one_sentence(records[2]) == "The reader plug-in 'boom' (mdad_every_other.readers:BOOM) failed to read x.boom (RuntimeError: boom)."


@pytest.mark.parametrize(
    ("name", "broke"),
    [
        ("raises", "failed to compute its value (ZeroDivisionError: division by zero)."),
        ("text", "returned str 'high', not a number."),
        ("array", "returned ndarray, not a number."),
    ],
)
def test_a_metric_that_breaks_is_one_sentence_naming_it(tmp_path, name, broke):
    entry_points = f"[mdad.metrics]\n{name} = mdad_every_other.metrics:{name.upper()}\n"
    records, _ = commands(tmp_path, entry_points, [[*RUN, "out", "--methods", "random"]])
    assert one_sentence(records[0]) == f"The metric plug-in {name!r} (mdad_every_other.metrics:{name.upper()}) {broke}"


def test_the_command_line_reports_a_plugin_left_out_on_stderr(tmp_path):
    site = tmp_path / "site"
    installed_plugin(site, "[mdad.methods]\nexits = mdad_every_other.exits\n", BROKEN_IMPORTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "mdad.cli", "methods"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "random" in done.stdout
    assert done.stderr.strip() == (
        "The method plug-in 'exits' (mdad_every_other.exits) could not be loaded: it called sys.exit(3) while imported; it is left out."
    )


@dataclass(frozen=True, kw_only=True, eq=False)
class NanEstimate(MicroBenchmark):
    """An estimator that gives no number for the first model."""

    kind = "test-nan-estimate"

    def estimate(self, scores, gold_prob=None):
        out = np.asarray(scores, dtype=np.float64).mean(axis=1)
        out[0] = np.nan
        return out


class GivesNan(SelectionMethod):
    name = "gives-nan"
    description = "The first k items; no estimate for the first model."

    def choose(self, view, k, rng, prepared):
        return NanEstimate(items=np.arange(k), weights=np.full(k, 1.0 / k))


def test_an_estimate_that_is_not_a_number_is_named_before_any_calibration():
    """Not "Calibration needs at least one finite estimate...": the method that gave it, and what it gave."""
    matrix = mdad.simulate(seed=0, n_models=30, n_items=60)
    METHODS.add(GivesNan)
    try:
        with pytest.raises(MdadError, match=r"^The method 'gives-nan' gave 1 estimate\(s\) that are not finite numbers\.$"):
            mdad.assess(matrix, "gives-nan", 10, runs=2)
        micro = mdad.select(matrix, "gives-nan", 10)
        with pytest.raises(MdadError, match=r"^The method 'gives-nan' gave 1 estimate\(s\) that are not finite numbers\.$"):
            micro.estimate(matrix)
    finally:
        METHODS.remove("gives-nan")
