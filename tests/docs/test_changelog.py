"""CHANGELOG.md and the package version agree: the newest released heading is ``mdad.__version__``."""

from __future__ import annotations

import re

from support.paths import ROOT

import mdad

CHANGELOG = ROOT / "CHANGELOG.md"
HEADING = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?$", re.MULTILINE)


def headings() -> list[tuple[str, str | None]]:
    return [(m["version"], m["date"]) for m in HEADING.finditer(CHANGELOG.read_text(encoding="utf-8"))]


def test_the_newest_released_version_is_the_package_version():
    released = [(version, date) for version, date in headings() if version != "Unreleased"]
    assert released, "CHANGELOG.md has no released version"
    assert released[0][0] == mdad.__version__, f"CHANGELOG.md's newest release is {released[0][0]}, mdad.__version__ is {mdad.__version__}"


def test_unreleased_comes_first_and_every_release_is_dated_and_newer_than_the_next():
    found = headings()
    assert found[0] == ("Unreleased", None)
    released = found[1:]
    assert all(date is not None for _, date in released), "every released heading carries its date"
    numbers = [tuple(int(part) for part in version.split(".")) for version, _ in released]
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers)
    assert [date for _, date in released] == sorted((date for _, date in released), reverse=True)


def test_the_heading_pattern_reads_both_kinds_of_heading():
    text = "## [Unreleased]\n\n## [1.2.0] - 2027-01-02\n## [1.10.0]\n"
    assert [(m["version"], m["date"]) for m in HEADING.finditer(text)] == [("Unreleased", None), ("1.2.0", "2027-01-02"), ("1.10.0", None)]
