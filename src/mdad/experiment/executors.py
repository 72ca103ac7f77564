"""Where tasks run: in this process, in local worker processes, or on a Dask cluster.

Every executor yields each task's frames as the task finishes; results do not depend on
the executor because every random draw is keyed by (seed, purpose), not by order.
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import logging
import multiprocessing
import os
import re
import signal
import sys
import warnings
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import CancelledError, ProcessPoolExecutor, as_completed
from contextlib import closing, contextmanager
from functools import partial

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.errors import MdadError

_PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")  # Dask's network transports


def check_scheduler(address: str) -> None:
    """A Dask scheduler address: [scheme://]host:port, with a scheme Dask can reach over a network."""
    match = re.fullmatch(rf"(?:(?:{'|'.join(SCHEDULER_SCHEMES)})://)?(?:\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+):(\d{{1,5}})/?", address)
    if match is None or not 0 < int(match.group(1)) < 65536:
        raise MdadError(
            f"--scheduler {address!r} is not a scheduler address ([scheme://]host:port, the scheme one of "
            f"{', '.join(SCHEDULER_SCHEMES)}; e.g. tcp://host:8786)."
        )


def execute(
    run_task: Callable,
    matrix,
    splits,
    tasks: list,
    workers: int = 1,
    on_cells: Callable[[float], None] | None = None,
    scheduler: str | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> Generator[tuple, None, None]:
    """Run ``run_task(matrix, splits, task)`` for every task; yield (task, result) as each finishes.

    ``on_cells`` receives progress in cells (a task over r of R runs with c cells counts c r / R).
    ``meanwhile``: work for this process, done once the tasks are handed to worker processes or a
    cluster (before them in this process); its error stops them.
    """
    if scheduler:
        yield from _on_dask(run_task, matrix, splits, tasks, scheduler, on_cells, meanwhile)
    elif workers <= 1 or len(tasks) <= 1:
        if meanwhile is not None:
            meanwhile()
        for task in tasks:
            per_run = len(task.cells) / splits.n_runs
            yield task, run_task(matrix, splits, task, on_run=partial(on_cells, per_run) if on_cells else None)
    else:
        yield from _in_processes(run_task, matrix, splits, tasks, workers, on_cells, meanwhile)


def _in_processes(
    run_task: Callable, matrix, splits, tasks: list, workers: int, on_cells, meanwhile: Callable[[], None] | None = None
) -> Generator[tuple, None, None]:
    """Local worker processes. The parent alone handles Ctrl-C (workers ignore it): on any
    interruption or error (``meanwhile``'s too) it cancels what has not started and stops the
    workers at once, instead of waiting for every submitted task. Every task is submitted, and so
    every worker forked, before ``meanwhile`` runs here on one BLAS thread (the workers hold the cores)."""
    threads = max(1, (os.cpu_count() or 1) // workers)
    others = {child.pid for child in multiprocessing.active_children()}  # not ours to stop
    # the data go to each worker once, with its start-up, not with every task (a 400 x 12,000
    # matrix with option probabilities is 200 MB to pickle, send and unpickle per task)
    # the objects alive now are the workers' too: kept out of the collector's passes, which would
    # write to every one of them and so copy each worker's pages of the parent's memory
    gc.freeze()
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(threads, os.getpid(), run_task, matrix, splits))
    try:
        futures = {pool.submit(_run_in_worker, task): task for task in tasks}
        if meanwhile is not None:
            with threadpool_limits(limits=1):
                meanwhile()
        for future in as_completed(futures):
            yield _done(futures[future], future.result(), splits, on_cells)
    except BaseException:
        # Stop the workers first: the pool's manager thread then sees them gone and ends by itself.
        # Only then shut the pool down, waiting: that joins the manager thread here. A pool shut down
        # without waiting leaves the thread closing its wake-up pipe while the interpreter's exit
        # hook writes to it ("OSError: Bad file descriptor" after Ctrl-C on a busy machine).
        # SIGKILL, not SIGTERM: a worker still starting runs the parent's forked interrupt handler
        # until its initializer replaces it, and would print that handler's traceback.
        workers_alive = [child for child in multiprocessing.active_children() if child.pid not in others]
        for child in workers_alive:
            child.kill()
        for child in workers_alive:
            child.join()
        _close_result_pipe(pool)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        gc.unfreeze()
    pool.shutdown()


def _close_result_pipe(pool: ProcessPoolExecutor) -> None:
    """Close this process's writing end of the pool's result pipe, once its workers are stopped.

    A worker killed in the middle of sending a result leaves part of a message in the pipe, and the
    pool's manager thread would wait for the rest forever (and with it the shutdown that joins it:
    a run that hangs after Ctrl-C). With no writer left, its read ends and the thread stops. The
    pipe is the pool's own (``_result_queue``, a SimpleQueue, in Python 3.10-3.13); without it,
    nothing is done."""
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        writer.close()


def ordered_map(func: Callable, items: Sequence, *, workers: int = 1, meanwhile: Callable[[], None] | None = None) -> list:
    """``[func(item) for item in items]``, in local worker processes when ``workers`` > 1, and
    ``meanwhile`` in this process while they run (before them without workers).

    For the work after the cells (the summary's cells, the report's sections): the workers are
    forked with the data in memory, so ``func`` may be a closure over it; only the items' indices
    go out and the results come back. Stopping and thread limits as for the cells. In this
    process, BLAS runs on one thread: this work is many small products (bootstrap resamples,
    Newton steps over a curve's bins), on which a second BLAS thread costs more than it gains
    (the summary of the GPQA grid took 3.4x as long with two; docs/benchmarks.md#earlier-measurements).
    """
    items = list(items)
    if workers <= 1 or len(items) <= 1 or multiprocessing.get_start_method() != "fork":
        with threadpool_limits(limits=1, user_api="blas"):
            if meanwhile is not None:
                meanwhile()
            return [func(item) for item in items]  # closures reach workers only by forking
    results: list = [None] * len(items)
    finished = _in_processes(_call_item, func, items, list(range(len(items))), min(workers, len(items)), None, meanwhile)
    with closing(finished):
        for index, result in finished:
            results[index] = result
    return results


def _call_item(func: Callable, items: list, index: int):
    return func(items[index])


_WORKER_DATA: dict = {}  # in a local worker process: the task function, matrix and splits


def _run_in_worker(task):
    return _WORKER_DATA["run_task"](_WORKER_DATA["matrix"], _WORKER_DATA["splits"], task)


def _init_worker(threads: int, parent: int, run_task: Callable, matrix, splits) -> None:
    """Set up a local worker process: the data of its tasks, its share of the cores, and its end with the parent's.

    BLAS and OpenMP pools are capped at cores / workers: k-means and matrix products otherwise
    start one thread per core in every worker, and on a machine whose cores the workers already
    fill the oversubscription doubles the run time (docs/benchmarks.md#earlier-measurements). On Linux the worker
    asks to be stopped when the parent dies, so a killed run leaves no idle workers behind
    (forked workers hold their own task pipe open and would otherwise wait forever).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group; the parent handles it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's interrupt handler, forked along, is not the worker's
    for variable in THREAD_VARIABLES:  # libraries a task loads later (e.g. scikit-learn's OpenMP) read these
        os.environ[variable] = str(threads)
    threadpool_limits(limits=threads)  # the libraries already loaded
    _WORKER_DATA.update(run_task=run_task, matrix=matrix, splits=splits)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)


def _done(task, result, splits, on_cells):
    if on_cells:
        on_cells(len(task.cells) * len(task.runs(splits.n_runs)) / splits.n_runs)
    return task, result


def task_data(matrix):
    """The part of ``matrix`` that tasks read, for sending over a network: the scores, subtasks and
    each model's probability of the gold option, kept as a one-option probability array (a tenth
    of a 10-option array's size; selection and estimation never look at the other options)."""
    probs = matrix.option_probs
    if probs is None or probs.shape[2] == 1:
        return matrix
    return dataclasses.replace(matrix, option_probs=matrix.gold_prob()[:, :, None], gold=np.zeros(matrix.n_items, np.int64))


SCHEDULER_GONE = (
    "The Dask scheduler at {address} is gone (the connection to it was lost mid-run); the cells finished before it went are kept, and running the "
    "same command again continues from them."
)


def _on_dask(run_task, matrix, splits, tasks, scheduler: str, on_cells, meanwhile=None) -> Generator[tuple, None, None]:
    try:
        from distributed import Client, KilledWorker
        from distributed import as_completed as dask_completed
    except ImportError:
        raise MdadError("Running on a Dask scheduler needs Dask: pip install 'mdad[dask]'.") from None
    with dask_notes():
        try:
            client = Client(scheduler)  # connect timeout: dask config distributed.comm.timeouts.connect
        except (OSError, TimeoutError) as exc:
            raise MdadError(f"Cannot reach the Dask scheduler at {scheduler} ({_first_line(exc)}).") from None
        except ValueError as exc:  # an address Dask cannot parse (check_scheduler lets few through)
            raise MdadError(f"--scheduler {scheduler!r} is not a Dask scheduler address ({_first_line(exc)}).") from None
        with client:
            try:
                # sent once to every worker, not with every task; a lost worker's replacement fetches it from another
                shared_matrix, shared_splits = client.scatter([task_data(matrix), splits], broadcast=True)
                futures = {client.submit(run_task, shared_matrix, shared_splits, task, pure=False): task for task in tasks}
                if meanwhile is not None:
                    meanwhile()
                for future in dask_completed(list(futures)):
                    try:
                        result = future.result()
                    except (CancelledError, KilledWorker) as exc:  # every worker lost at once, or a task that kills its workers
                        if _scheduler_lost(client, exc):
                            raise
                        raise MdadError(
                            f"The Dask cluster at {scheduler} lost a task ({type(exc).__name__}: {_first_line(exc)}); finished results are "
                            "kept in the results folder when there is one, and running the same experiment again continues from them."
                        ) from None
                    yield _done(futures[future], result, splits, on_cells)
            except (OSError, TimeoutError, CancelledError) as exc:
                if not _scheduler_lost(client, exc):
                    raise
                raise MdadError(SCHEDULER_GONE.format(address=scheduler)) from None


def _scheduler_lost(client, exc: BaseException) -> bool:
    """Whether ``exc`` means the connection to the scheduler is gone (not a task's own error)."""
    from distributed.comm.core import CommClosedError

    return isinstance(exc, CommClosedError) or "scheduler-connection-lost" in str(exc) or client.status not in ("running", "connecting")


def _first_line(exc: BaseException) -> str:
    """An exception's message, its first line only (Dask's messages run on with advice and tracebacks)."""
    lines = str(exc).replace("\\n", "\n").strip().splitlines()
    return lines[0].rstrip(".") if lines else ""


@contextmanager
def dask_notes() -> Iterator[None]:
    """During the block, what Dask logs (its warnings and errors, tracebacks and all) becomes one line
    each, given once, on the ``mdad`` logger, where mdad's other notes go: "Dask: <first line>"."""
    loggers = [
        logger
        for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger) and (name == "distributed" or name.startswith("distributed."))
    ]
    saved = [(logger, logger.handlers[:], logger.propagate) for logger in loggers]
    handler = _NoteHandler()
    root = logging.getLogger("distributed")
    for logger in loggers:
        logger.handlers = []
        logger.propagate = True
    root.handlers, root.propagate = [handler], False
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # Dask's warnings too (version mismatches, large graphs)
        if f"{os.sep}distributed{os.sep}" in filename or f"{os.sep}dask{os.sep}" in filename:
            handler.note(str(message))
        else:
            shown(message, category, filename, lineno, file, line)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show
            yield
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers, logger.propagate = handlers, propagate
        if root not in loggers:
            root.handlers, root.propagate = [], True


class _NoteHandler(logging.Handler):
    """Passes each distinct Dask message of level WARNING and above to the ``mdad`` logger as one line."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        lines = record.getMessage().strip().splitlines()
        text = lines[0].strip() if lines else ""
        if not text and record.exc_info and record.exc_info[1] is not None:
            text = _first_line(record.exc_info[1])  # a bare exception without words says nothing worth a note
        self.note(text)

    def note(self, message: str) -> None:
        lines = message.strip().splitlines()
        text = lines[0].strip().rstrip(".") if lines else ""
        if text and text not in self.seen:
            self.seen.add(text)
            logging.getLogger("mdad").warning(f"Dask: {text}.")
