"""Reading a large probability array holds it about once, not several times (goal of issue 16)."""

from __future__ import annotations

import tracemalloc

import numpy as np

from mdad.data import ResponseMatrix, read_npz, simulate, write_npz


def test_read_npz_peaks_near_the_size_of_its_arrays(tmp_path):
    matrix = simulate(seed=1, n_models=60, n_items=2000, n_subtasks=3)
    path = tmp_path / "probs.npz"
    write_npz(matrix, path)
    size = matrix.option_probs.nbytes + matrix.scores.nbytes
    tracemalloc.start()
    try:
        loaded = read_npz(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(loaded.option_probs, matrix.option_probs)
    np.testing.assert_array_equal(loaded.scores, matrix.scores)
    assert peak < 1.5 * size  # was about 3.4x: a copy of the array and a copy of its non-NaN values


def test_a_matrix_never_shares_memory_the_caller_can_write():
    probs = np.full((2, 3, 2), 0.5, dtype=np.float32)
    frozen_view = probs.view()
    frozen_view.setflags(write=False)  # read-only, but a view of the caller's writable array
    for given in (probs, frozen_view):
        matrix = ResponseMatrix(
            scores=np.ones((2, 3)), models=["a", "b"], items=["x", "y", "z"], subtasks=["s"] * 3, option_probs=given, gold=[0, 1, 0]
        )
        probs[0, 0, 0] = 0.25
        assert matrix.option_probs[0, 0, 0] == 0.5
        probs[0, 0, 0] = 0.5
