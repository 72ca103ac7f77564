"""Where lasso's and anchor-points' selection time goes on bench_select.py's 400 x 12,000 matrix.

One thread, process CPU seconds, in this process: anchor-points' item distances (twice) and its FasterPAM, and lasso's path (scikit-learn's coordinate
descent, followed as far as size 100 needs) against the rest of its preparation. Run: python benchmarks/profile_select_phases.py
"""

from __future__ import annotations

import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from mdad.data import simulate
from mdad.data.simulate import SimulationParams
from mdad.methods import anchor_points, lasso
from mdad.seeding import rng_for

MODELS, SUBTASKS, ITEMS, SIZE = 400, 14, 12_000, 100


def cpu(call):
    start = time.process_time()
    result = call()
    return result, time.process_time() - start


def main() -> None:
    matrix = simulate(seed=0, n_models=MODELS, n_items=ITEMS, n_subtasks=SUBTASKS, params=SimulationParams(floors=(0.1,)))
    gold = np.asarray(matrix.gold_prob(), dtype=np.float64)
    with threadpool_limits(1):
        distance, first = cpu(lambda: anchor_points.item_distances(gold))
        del distance
        distance, second = cpu(lambda: anchor_points.item_distances(gold))
        import kmedoids

        start = np.sort(rng_for(0, "profile").choice(ITEMS, size=SIZE, replace=False))
        _, pam = cpu(lambda: kmedoids.fasterpam(distance, start, n_cpu=1))
        print(f"load average {os.getloadavg()[0]:.1f}")
        print(f"anchor-points: distances {first:.2f} s, again {second:.2f} s; FasterPAM from k random items {pam:.2f} s")
        from sklearn.linear_model import lasso_path

        calls = []

        def timed_path(*args, **kwargs):
            result, seconds = cpu(lambda: lasso_path(*args, **kwargs))
            calls.append(seconds)
            return result

        import sklearn.linear_model

        original = sklearn.linear_model.lasso_path
        sklearn.linear_model.lasso_path = timed_path
        try:
            followed = []

            def select_path():
                path = lasso.fit_path(matrix.scores)
                path.items(SIZE)
                followed.append(path.followed)

            _, total = cpu(select_path)
        finally:
            sklearn.linear_model.lasso_path = original
        print(
            f"lasso: fit_path and its {SIZE} items {total:.2f} s, of which lasso_path (coordinate descent, "
            f"{followed[0]} of {lasso.PATH_PENALTIES} penalties) {sum(calls):.2f} s"
        )


if __name__ == "__main__":
    main()
