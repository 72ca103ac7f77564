"""One micro-benchmark built from all the data: choose it, save it, estimate new models with it.

``selected``: the micro-benchmark (``select``, ``SelectedMicroBenchmark``) and its estimates;
``file_format``: micro.json, and ``file_checks`` what each of its fields must be; ``trust``: which
intervals and order probabilities apply to it; ``comparison``: two models compared (``compare``);
``harness``: the sample lists that run a new model on its items only; ``selection`` and
``estimation``: what ``mdad select`` and ``mdad estimate`` compute and report; ``notes``: the
sentences both print about its reliability.
"""

from mdad.micro.selected import SelectedMicroBenchmark, select

__all__ = ["SelectedMicroBenchmark", "select"]
