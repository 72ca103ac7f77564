"""Shared pieces of the command line: the app, consoles, error handling, shared options, data loading."""

from __future__ import annotations

import sys
from functools import wraps
from pathlib import Path
from typing import Annotated, Literal, get_args

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from typer.core import TyperGroup, TyperOption

from mdad.cli import interrupts
from mdad.cli.commands import COMMANDS
from mdad.cli.text import literal, visible
from mdad.data import DEFAULT_DATASET, ResponseMatrix, load, load_dataset
from mdad.data.matrix import MissingPolicy
from mdad.data.npz import CONVERTED
from mdad.data.readers.base import Reruns
from mdad.errors import MdadError
from mdad.outputs import output_name as output_path  # noqa: F401  (the CLI's modules import it from here)
from mdad.seeding import check_seed
from mdad.wording import plural  # noqa: F401  (the CLI's modules import it from here)

FigureFormat = Literal["png", "svg", "pdf"]  # as mdad.report.figures.FORMATS (imported lazily: matplotlib)
FIGURE_FORMATS: tuple[FigureFormat, ...] = get_args(FigureFormat)
METRIC_HELP = (
    "Metric to read from harness results: one name for every task that has it (e.g. acc_norm; "
    "the others keep their main metric), or TASK=METRIC,...; default: each task's main metric."
)
FILTER_HELP = "lm-eval filter to keep, for every task that has it, or TASK=FILTER,... (default: 'none' or the first)."
RERUNS_HELP = (
    "An item answered again by one model (same model arguments and folder; runs of other items add up): "
    "'latest' keeps the latest answer and says so, 'error' refuses."
)

console = Console()
err_console = Console(stderr=True)


def progress_bar(*, time_left: bool = True, transient: bool = False) -> Progress:
    """The commands' progress display: what runs, a bar, done of total, time elapsed and (``time_left``) time left."""
    left = [TextColumn("left"), TimeRemainingColumn()] if time_left else []
    columns = [TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), *left]
    return Progress(*columns, console=console, transient=transient)


def error_line(message: object) -> None:
    """The one red line every error becomes (the message printed literally)."""
    err_console.print(f"[red]error:[/red] {literal(message)}", soft_wrap=True, highlight=False)


LONG_CHOICES = 16  # a longer list of choices is "<choice>" in --help's type column (each option's help names them)


def flags_without_types(command) -> None:
    """A flag takes no value, so its type column stays empty (Typer shows ``<bool>``); a long list of
    choices, which a narrow type column would cut, shows as ``<choice>``."""
    for param in command.params:
        if not isinstance(param, TyperOption) or param.metavar is not None:
            continue
        choices = param.type_descriptor.choices if param.type_descriptor.is_choice else None
        if param.is_flag:
            param.metavar = ""
        elif choices and len("|".join(map(str, choices))) > LONG_CHOICES:
            param.metavar = "<choice>"
    make_help_option = command.get_help_option

    def help_option(ctx):
        option = make_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""
        return option

    command.get_help_option = help_option


class OneLineErrors(TyperGroup):
    """Usage errors (unknown option, a value outside its choices, a missing argument) as one red line, exit 2;
    an interrupt (Ctrl-C, SIGTERM) as one sentence, exit 130."""

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""  # a flag: no type
        return option

    def get_command(self, ctx, cmd_name):
        """The command, its help's type column plain (flags_without_types)."""
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            flags_without_types(command)
        return command

    def invoke(self, ctx):
        """Run the command; an interrupt that no command turned into its own sentence ends with the
        general one (Typer would exit 130 silently)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupts.end()

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except (KeyboardInterrupt, typer.Abort) as exc:  # click turns an interrupt into Abort
            if isinstance(exc, KeyboardInterrupt) or isinstance(exc.__cause__, KeyboardInterrupt) or interrupts.received:
                interrupts.end()
            err_console.print("Aborted.")
            sys.exit(1)
        except typer.TyperException as exc:  # click's usage errors, as Typer ships them
            message = exc.format_message().replace("Value error, ", "").rstrip(".")
            context = getattr(exc, "ctx", None)
            command = " ".join(["mdad", *context.command_path.split()[1:]]) if context is not None else "mdad"
            error_line(f"{message} (see '{command} --help').")
            sys.exit(getattr(exc, "exit_code", 2))
        except Exception:
            if interrupts.received:  # what an interrupt broke on its way (a worker pool stopped by SIGTERM)
                interrupts.end()
            raise
        code = code if isinstance(code, int) else 0
        if code == 0 and interrupts.received:  # an interrupt swallowed on the way (inside a library) is no success
            interrupts.end()
        sys.exit(code)


class Commands(typer.Typer):
    """The app, whose commands are listed once, in ``mdad.cli.commands.COMMANDS`` (so that ``mdad NAME`` imports only
    the module of NAME): a command registered without its entry there is refused at once, naming the entry."""

    def command(self, name: str | None = None, *args, **kwargs):
        register = super().command(name, *args, **kwargs)

        def checked(func):
            command = name or func.__name__.lower().replace("_", "-")  # as Typer names it
            module = func.__module__.rpartition(".")[2]
            if COMMANDS.get(command) != module:
                raise RuntimeError(
                    f"The command {command!r} of {func.__module__} needs the entry {command!r}: {module!r} in mdad.cli.commands.COMMANDS."
                )
            return register(func)

        return checked


app = Commands(
    cls=OneLineErrors, add_completion=False, no_args_is_help=True, help="Build micro-benchmarks and measure how reliably they rank models."
)


@app.callback()
def _group() -> None:
    """Keeps the command line a group of commands when only the module of one command is imported."""


def friendly_errors(func):
    """Turn MdadError, and a failed read or write of a file, into one red sentence on stderr and exit code 2."""

    @wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except MdadError as exc:
            error_line(exc)
        except OSError as exc:  # a file that vanished, a full disk, a folder made read-only during the work
            where = f" {exc.filename}" if exc.filename else ""
            error_line(f"Could not read or write{where}: {exc.strerror or exc}.")
        except MemoryError:
            error_line("Not enough memory for this request; use fewer models, items, runs or sizes.")
        except RecursionError:
            error_line("An input nests data too deeply to be read.")
        raise typer.Exit(2)

    return wrapper


# ---- options shared by several commands (Annotated style) -------------------------------------
DATASET_HELP = (
    "Named dataset: built in (gpqa, the paper's GPQA matrix, the default; musr; math-hard), 'simulated' (a "
    "simulated leaderboard with option probabilities) or a folder of $MDAD_DATA_DIR; 'mdad datasets' lists them."
)
DatasetOption = Annotated[str | None, typer.Option(help=DATASET_HELP, show_default=False)]
DataOption = Annotated[Path | None, typer.Option(help="Your own results: a file or folder in any supported format.")]
MetricOption = Annotated[str | None, typer.Option(help=METRIC_HELP)]
FilterOption = Annotated[str | None, typer.Option("--filter", help=FILTER_HELP)]
RerunsOption = Annotated[Reruns, typer.Option(help=RERUNS_HELP)]


def checked_seed(value: int) -> int:
    """The seed rule of mdad.seeding, applied as a --seed option is read (before any work)."""
    try:
        return check_seed(value)
    except MdadError as exc:
        raise typer.BadParameter(str(exc)) from None


SeedOption = Annotated[int, typer.Option(help="The one seed behind every random draw.", callback=checked_seed)]
ThresholdOption = Annotated[float, typer.Option(help="Agreement rate that defines MDAD.")]
MissingOption = Annotated[MissingPolicy, typer.Option(help="Cells not evaluated: error, drop-items or drop-models.")]
WorkersOption = Annotated[int, typer.Option(min=0, help="Local worker processes (default 0: one per CPU core; 1: this process only).")]
FiguresOption = Annotated[FigureFormat | None, typer.Option(help="Also write every figure to OUT/figures/ in this format.")]


def parse_list(text: str | None, what: str, convert=str) -> list:
    """A comma-separated option; given but empty (``--methods ''``) is an error, not the default."""
    if text is None:
        return []
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        raise MdadError(f"--{what} is empty; leave it out for the default or give a comma-separated list.")
    try:
        return [convert(v) for v in values]
    except ValueError:
        raise MdadError(f"--{what} must be a comma-separated list of {convert.__name__}s, got {text!r}.") from None


def read_data(
    dataset: str | None,
    data: Path | None,
    seed: int = 0,
    metric: str | None = None,
    filter_name: str | None = None,
    reruns: Reruns = "latest",
    *,
    history: bool = False,
) -> ResponseMatrix:
    """The response matrix the user named: ``--data`` (any supported source) or ``--dataset``, not both;
    its notes are printed (``history``: also each note an npz carries from its conversion)."""
    if data is not None:
        if dataset is not None:
            raise MdadError(f"Give the data once: --data ({data}) or --dataset ({dataset}), not both.")
        if not data.exists():
            raise MdadError(f"No such file or folder: {data}.")
        matrix = load(data, metric=metric, filter_name=filter_name, reruns=reruns)
    else:
        if metric is not None or filter_name is not None:
            which = "--metric" if metric is not None else "--filter"
            raise MdadError(
                f"{which} applies to harness results given with --data; the named dataset {dataset or DEFAULT_DATASET} is a plain score table."
            )
        matrix = load_dataset(dataset or DEFAULT_DATASET, seed=seed)
    print_notes(matrix, history=history)
    return matrix


def print_notes(matrix: ResponseMatrix, *, history: bool = False) -> None:
    """What the reader dropped, merged or chose on the user's behalf, one dimmed line each (literally).
    The notes an npz carries from when it was converted were shown then: one line says they are there,
    unless ``history`` asks for each of them ('mdad info')."""
    old = [note for note in matrix.notes if note.startswith(CONVERTED)]
    lines = [note for note in matrix.notes if history or not note.startswith(CONVERTED)]
    if old and not history:
        lines.insert(0, f"{matrix.source} carries {plural(len(old), 'note')} from when it was converted ('mdad info {matrix.source}' prints them).")
    for line in lines:
        err_console.print(f"note: {visible(line)}", style="dim", soft_wrap=True, highlight=False, markup=False)


def load_matrix(
    dataset: str | None,
    data: Path | None,
    seed: int,
    missing: MissingPolicy,
    metric: str | None = None,
    filter_name: str | None = None,
    reruns: Reruns = "latest",
) -> ResponseMatrix:
    """The response matrix the user named, with missing cells handled as asked."""
    return read_data(dataset, data, seed, metric, filter_name, reruns).require_complete(missing)
