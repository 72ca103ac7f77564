"""mdad methods: the selection methods and the estimators, with nothing imported but their registries (a quick answer)."""

from __future__ import annotations

from mdad import methods as method_registry
from mdad.cli.common import app, console
from mdad.cli.text import literal
from mdad.estimators.base import ESTIMATORS
from mdad.methods.names import ESTIMATOR
from mdad.methods.names import SUFFIX as PER_SUBTASK


@app.command("methods")
def list_methods() -> None:
    """List the selection methods and the estimators any of them can be paired with."""
    for name, cls in method_registry.REGISTRY.items():
        console.print(f"[bold]{literal(name)}[/bold]: {literal(cls.description)}", highlight=False)
    console.print(f"Every method but the adaptive ones also runs within each subtask as NAME{PER_SUBTASK} (or add --per-subtask to 'mdad run').")
    console.print(f"Every method but the adaptive ones also runs with another estimator as NAME{ESTIMATOR}EST, EST one of:")
    for name, estimator in ESTIMATORS.items():
        console.print(f"  [bold]{literal(name)}[/bold]: {literal(estimator.description)}", highlight=False)
