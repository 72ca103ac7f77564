"""Summary tables that never cut a number, an interval, a name or a header word.

A table is printed whole when it fits the console (a terminal's width, or the 80 columns rich assumes
when the output is piped). Otherwise its value columns are split over as many tables as it takes, each
repeating the key columns (size, method) so every row still says what it is, and columns read together
(a metric's seen and unseen values) stay together; columns too wide to fit beside the keys even alone
are printed as one line per row instead (a line may wrap, it is never cut).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table


@dataclass(frozen=True)
class TableColumn:
    """One column: its header (``\\n`` splits it over lines), one cell per row (rich markup, already
    escaped), and whether it is right-aligned (numbers) or left-aligned (names)."""

    header: str
    cells: list[str]
    right: bool = True


def table_width(console: Console, table: Table) -> int:
    """The width ``table`` takes when nothing in it is wrapped or cut."""
    return Measurement.get(console, console.options.update_width(1_000_000), table).maximum


def print_fitted(console: Console, title: str, keys: list[TableColumn], groups: list[list[TableColumn]]) -> None:
    """Print ``keys`` and the columns of ``groups`` as one table when it fits ``console``, else split the
    groups (columns read together, such as a metric's seen and unseen values) over several tables that
    each start with ``keys``; the title is printed once, above the first."""
    parts: list[list[TableColumn]] = [[]]
    for group in groups:
        if parts[-1] and table_width(console, _table(title, [*keys, *parts[-1], *group])) > console.width:
            parts.append([])
        parts[-1].extend(group)
    for part in parts:
        if table_width(console, _table(title, [*keys, *part])) > console.width:  # a group too wide even alone
            _print_lines(console, title, keys, part)
        else:
            console.print(_table(title, [*keys, *part]))
        title = ""


def _table(title: str, columns: list[TableColumn]) -> Table:
    table = Table(title=title or None, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in columns:
        table.add_column(column.header, justify="right" if column.right else "left", no_wrap=True)
    for row in zip(*(column.cells for column in columns), strict=True):
        table.add_row(*row)
    return table


def _print_lines(console: Console, title: str, keys: list[TableColumn], values: list[TableColumn]) -> None:
    """The columns as lines, 'key key: header cell; header cell', wrapped by the terminal, never cut."""
    if title:
        console.print(title, highlight=False)
    for row in range(len((keys + values)[0].cells)):
        label = " ".join(f"{key.header.replace(chr(10), ' ')} {key.cells[row]}" for key in keys)
        cells = "; ".join(f"{column.header.replace(chr(10), ' ')} {column.cells[row]}" for column in values)
        console.print(f"{label}: {cells}", highlight=False, soft_wrap=True)
