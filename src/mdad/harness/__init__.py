"""A micro-benchmark run inside a harness: the harness runs the chosen items only and reports mdad's estimate.

``MicroRun`` (mdad.harness.run) is the part every harness shares: which samples to run, the checks
that they are the task and documents the micro-benchmark was chosen from, and the estimate with its
interval from the answers, computed by the same code as ``mdad estimate``. The harness-specific parts:
``mdad.inspect.micro_task`` wraps an inspect task; mdad.harness.lm_eval_export writes an lm-eval task
folder (``mdad export --lm-eval``) whose metric calls ``MicroRun`` (docs/harness.md).
"""

from mdad.harness.run import HarnessEstimate, MicroRun

__all__ = ["HarnessEstimate", "MicroRun"]
