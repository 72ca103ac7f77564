"""mdad methods: the selection methods, with nothing imported but their registry (a quick answer)."""

from __future__ import annotations

from mdad import methods as method_registry
from mdad.cli.common import app, console
from mdad.cli.text import literal
from mdad.methods.names import SUFFIX as PER_SUBTASK


@app.command("methods")
def list_methods() -> None:
    """List the selection methods."""
    for name, cls in method_registry.REGISTRY.items():
        console.print(f"[bold]{literal(name)}[/bold]: {literal(cls.description)}", highlight=False)
    console.print(f"Every method but the adaptive ones also runs within each subtask as NAME{PER_SUBTASK} (or add --per-subtask to 'mdad run').")
