"""An experiment run into an output folder: its results, tables, figures and report.html.

What ``mdad run`` does once it knows what to compute (an :class:`~mdad.experiment.grid.ExperimentConfig`)
and how (a :class:`RunOptions`): a rerun into the same folder resumes, keeping finished cells and
blocks of runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mdad.data.matrix import ResponseMatrix
from mdad.defaults import DEFAULT_THRESHOLD, check_threshold
from mdad.errors import MdadError
from mdad.experiment.executors import check_scheduler
from mdad.experiment.grid import Experiment, ExperimentConfig
from mdad.experiment.store import ResultStore
from mdad.outputs import check_output_folder
from mdad.wording import plural

if TYPE_CHECKING:
    import pandas as pd

    from mdad.report.html import Outputs

FOLDER = "the output folder"


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """How and where an experiment runs, apart from what it computes.

    Parameters
    ----------
    out : str or Path
        The output folder (created; a rerun with the same settings resumes).
    workers : int
        Local worker processes; 0 means one per CPU core.
    scheduler : str, optional
        A Dask scheduler address: run the cells on that cluster instead.
    threshold : float
        Agreement rate that defines MDAD in the tables and the report.
    figures : str, optional
        Also write every figure to OUT/figures/ in this format (png, svg or pdf).
    curve_sizes : tuple of int, optional
        Sizes whose agreement curves the report shows (default: the smallest and the largest).
    record : mapping
        More settings to write to the folder's config.json (the command line, where the data came from).

    Examples
    --------
    >>> RunOptions(out="mdad-out", scheduler="http://host:8786")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mdad.errors.MdadError: --scheduler 'http://host:8786' is not a scheduler address ([scheme://]host:port, the scheme one of tcp, ...).
    """

    out: Path | str
    workers: int = 0
    scheduler: str | None = None
    threshold: float = DEFAULT_THRESHOLD
    figures: str | None = None
    curve_sizes: tuple[int, ...] | None = None
    record: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_threshold(self.threshold)
        if self.scheduler is not None:
            check_scheduler(self.scheduler)
        check_output_folder(self.out, FOLDER)
        object.__setattr__(self, "out", Path(self.out))
        if self.curve_sizes is not None:
            object.__setattr__(self, "curve_sizes", tuple(int(k) for k in self.curve_sizes))

    @property
    def processes(self) -> int:
        """The worker processes to use."""
        return self.workers or os.cpu_count() or 1

    def settings(self) -> dict:
        """What config.json records besides the experiment's identity."""
        curve_sizes = list(self.curve_sizes) if self.curve_sizes is not None else None
        return {**self.record, "threshold": self.threshold, "curve_sizes": curve_sizes}


def run_into_folder(
    matrix: ResponseMatrix,
    config: ExperimentConfig,
    options: RunOptions,
    *,
    on_start: Callable[[Experiment], None] | None = None,
    on_cells: Callable[[float], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
    on_summary: Callable[[pd.DataFrame, dict[tuple[str, int], float]], None] | None = None,
) -> Outputs:
    """Run ``config`` on ``matrix`` into ``options.out`` and write its tables, figures and report.html.

    The folder stays locked against another writer until the report is written. ``on_start`` is
    called with the opened experiment before any cell runs (to say what will run and what is kept);
    ``on_cells`` as cells finish (a progress bar), ``on_phase`` with each phase after the cells
    (mdad.report.html.PHASES), ``on_summary`` with the summary and the exact MDADs while the figures are drawn
    (mdad.report.html.build_outputs). An interruption keeps every finished cell and
    block of runs for the next run into the same folder.
    """
    for k in options.curve_sizes or ():
        if k not in config.sizes:
            raise MdadError(f"--curve-sizes: size {k} is not among the sizes run ({', '.join(map(str, config.sizes))}).")
    store = ResultStore(options.out)
    experiment = Experiment(matrix, config, store=store)
    settings = options.settings()
    with store.locked():
        experiment.open_store(settings)
        if on_start is not None:
            on_start(experiment)
        result = experiment.run(
            workers=options.processes, on_cells=on_cells, extra_config=settings, scheduler=options.scheduler, meanwhile=_load_report
        )
        from mdad.report.html import build_outputs

        return build_outputs(
            options.out,
            options.threshold,
            figure_format=options.figures,
            workers=options.processes,
            on_phase=on_phase,
            matrix=matrix,
            frames=result.frames,  # as stored: the evaluation's workers need not read every cell again
            on_summary=on_summary,
        )


def earlier_cells_note(experiment: Experiment) -> str | None:
    """One sentence when the experiment's folder holds cells that it did not ask for (written by earlier
    commands into the same folder), which its tables and report show too; None when it holds none."""
    store = experiment.store
    if store is None:
        return None
    asked = set(experiment.cells())
    extra = [cell for cell in store.cells(strict=False) if cell not in asked]
    if not extra:
        return None
    config = experiment.config
    parts = [
        f"{what} {', '.join(map(str, values))}"
        for what, values in (
            ("methods", sorted({c.method for c in extra} - set(config.methods))),
            ("sizes", sorted({c.size for c in extra} - set(config.sizes))),
            ("source counts", sorted({c.sources for c in extra} - set(config.sources))),
        )
        if values
    ]
    return (
        f"{store.root} also holds {plural(len(extra), 'cell')} of earlier commands ({'; '.join(parts)}), which the tables and "
        f"the report show beside the {plural(len(asked), 'cell')} asked for; config.json lists every command that wrote the folder."
    )


def _load_report() -> None:
    """Import the report's heavy modules (matplotlib and scipy's: about a third of a second) while the workers run
    the cells; the page's own module, light, is imported when the report starts."""
    import mdad.report.analytic  # noqa: F401
    import mdad.report.trust  # noqa: F401
