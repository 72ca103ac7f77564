"""Third-party packages imported for a command's process without the parts mdad never uses.

kmedoids imports scikit-learn only to give its estimator class scikit-learn's base class, and does
without it where scikit-learn is not installed; mdad calls its ``fasterpam`` function alone.
Imported here with scikit-learn hidden, before any worker is forked, it spares each worker process
of `mdad run` that runs anchor-points 0.65 s of imports (scikit-learn and the parts of scipy it
loads: 1.3 of the GPQA grid's 8.6 CPU s, docs/benchmarks.md#earlier-measurements). The command line alone does this,
never the library: the modules imported are the whole process's (in a user's own process,
``kmedoids.KMedoids`` keeps its base class).
"""

from __future__ import annotations

import sys


def kmedoids_without_scikit_learn() -> None:
    """Import kmedoids with scikit-learn hidden, unless either is imported already (nothing to spare)."""
    if "kmedoids" in sys.modules or "sklearn" in sys.modules:
        return
    sys.modules["sklearn"] = None  # type: ignore[assignment]  # the import system's "not installed": importing it fails at once
    try:
        import kmedoids  # noqa: F401
    except ImportError:  # a broken installation: anchor-points says so when it runs
        pass
    finally:
        del sys.modules["sklearn"]
