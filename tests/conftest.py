"""Shared fixtures: the real data of ../shared/data (skipped cleanly when absent) and simulated data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The commands' consoles take their width from COLUMNS when it is set as mdad.cli is imported, and from each
# call's environment otherwise; the tests give each command its width (CliRunner's env). A COLUMNS in the
# environment the tests start in (as pytest-xdist's workers have) would fix every width at import.
os.environ.pop("COLUMNS", None)

from support.paths import SHARED_DATA, real_dataset

from mdad.data import ResponseMatrix, simulate


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def gpqa() -> ResponseMatrix:
    return real_dataset("oll2-gpqa")


@pytest.fixture(scope="session")
def musr() -> ResponseMatrix:
    return real_dataset("oll2-musr")


@pytest.fixture(scope="session")
def math_hard() -> ResponseMatrix:
    return real_dataset("oll2-math-hard")


@pytest.fixture(scope="session")
def small_sim() -> ResponseMatrix:
    """A small simulated leaderboard with option probabilities (fast)."""
    return simulate(seed=3, n_models=120, n_items=400, n_subtasks=4)
