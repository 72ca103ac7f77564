"""Where the tests find the repository, its fixtures and the real data, whichever folder a test lives in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mdad.data import ResponseMatrix, read_npz

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
SHARED_DATA = Path(os.environ.get("MDAD_TEST_DATA", ROOT.parent / "shared" / "data"))


def real_dataset(name: str) -> ResponseMatrix:
    """A dataset of ../shared/data, or a clean skip saying it is absent."""
    path = SHARED_DATA / name / "responses.npz"
    if not path.is_file():
        pytest.skip(f"real data {name} not found at {path}; set MDAD_TEST_DATA to the shared data folder")
    return read_npz(path, source=name)
