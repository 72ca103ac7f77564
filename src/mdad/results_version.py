"""The results version: which code's numbers a stored result holds.

Every stored experiment cell (its identity in the store's config.json and index.json, and in the
cell file itself) and every micro.json records ``RESULTS_VERSION``. A results folder written under
another results version is not resumed (its cells would mix numbers of two codes), and
``mdad estimate`` says when a micro.json was written under another one.

The bump rule: add one whenever a change moves chosen items or estimates on purpose, which is
whenever the golden grid (tests/fixtures/grid_golden.json) is recorded again with cells that
moved, and say so in CHANGELOG.md (CONTRIBUTING.md says how). A change that moves no chosen item
and no estimate (a new method's cells added to the grid included) keeps the version.
"""

from __future__ import annotations

RESULTS_VERSION = 1


def written_under(version: int | None) -> str:
    """When a stored result was written, in words.

    >>> written_under(2), written_under(None)
    ('under results version 2', 'before results versions')
    """
    return "before results versions" if version is None else f"under results version {version}"
