"""The tests mirror the code (CONTRIBUTING.md's Testing section): test files in the folder of what they test, unique
names, and shared helpers in tests/support only."""

from __future__ import annotations

import re

from support.paths import ROOT

TESTS = ROOT / "tests"
# the folders that tests mirror: every package of src/mdad, and those that are not one
MIRRORED = {path.parent.name for path in (ROOT / "src" / "mdad").glob("*/__init__.py")}
OTHERS = {"readers", "core", "docs", "benchmarks"}


def all_test_files() -> list:
    return sorted(path for path in TESTS.rglob("test_*.py") if "fixtures" not in path.relative_to(TESTS).parts)


def test_every_test_file_is_in_a_folder_named_after_what_it_tests():
    assert all_test_files(), "no test files found"
    flat = [path.name for path in all_test_files() if path.parent == TESTS]
    assert not flat, f"move these into the tests/ folder of what they test (CONTRIBUTING.md#testing): {flat}"
    folders = {path.parent.relative_to(TESTS).as_posix() for path in all_test_files()}
    assert folders <= MIRRORED | OTHERS, folders - MIRRORED - OTHERS


def test_test_file_names_are_unique():
    """pytest imports each test file by its name alone (no __init__.py): two of one name would collide."""
    names = [path.name for path in all_test_files()]
    assert len(names) == len(set(names)), sorted({name for name in names if names.count(name) > 1})


def test_no_test_file_imports_another():
    """What tests share lives in tests/support; importing a test file would also run its tests twice under two names."""
    imports = re.compile(r"(?m)^\s*(?:from|import)\s+(?:test_|conftest\b)")
    importing = [path.relative_to(TESTS).as_posix() for path in all_test_files() if imports.search(path.read_text())]
    assert not importing, importing
