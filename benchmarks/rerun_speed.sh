#!/bin/sh
# The speed numbers of benchmarks/README.md ("The paper's whole grid", "Hot spots on the MMLU-Pro
# shape", "A Dask cluster of real processes"), to rerun on a quiet machine (about 30 minutes on
# 2 cores). Usage: sh benchmarks/rerun_speed.sh [shared data folder, default ../shared/data]
set -e
DATA=${1:-../shared/data}
cd "$(dirname "$0")/.."
python benchmarks/bench_hotspots.py
python benchmarks/bench_dask.py --runs 10
TIGER="$DATA/mmlu-pro-tiger/responses.npz"
if [ -f "$TIGER" ]; then  # anchor-points' ladder against random starts on real MMLU-Pro results
    python benchmarks/bench_hotspots.py --only anchor-points --npz "$TIGER"
fi
GPQA="$DATA/oll2-gpqa/responses.npz"
if [ -f "$GPQA" ]; then
    python benchmarks/bench_paper_grid.py --runs 5 --tree --gpqa "$GPQA"
else
    python benchmarks/bench_paper_grid.py --runs 5 --tree
fi
