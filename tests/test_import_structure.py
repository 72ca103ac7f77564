"""The package's import graph: no module imports itself round a circle, and mdad.intervals is mathematics only.

Every ``import``/``from ... import`` of an mdad module counts, at module level, inside functions and
under ``TYPE_CHECKING`` alike: a circle hidden in any of them still ties the modules together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mdad

SRC = Path(mdad.__file__).parent
FORBIDDEN_IN_INTERVALS = ("mdad.methods", "mdad.micro", "mdad.experiment", "mdad.cli")


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The mdad modules ``path`` imports (a package import counts as its ``__init__``)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            # ``from package import module`` imports the module; ``from module import name``, the module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in SRC.rglob("*.py")}
    return {name: _imports(path, set(files)) for name, path in files.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_of_mdad_imports_itself_round_a_circle():
    circle = _cycle(_graph())
    assert circle is None, " -> ".join(circle or [])


def test_intervals_import_no_method_micro_benchmark_experiment_or_command_line():
    graph = _graph()
    bad = {
        name: sorted(t for t in targets if t.startswith(FORBIDDEN_IN_INTERVALS))
        for name, targets in graph.items()
        if name == "mdad.intervals" or name.startswith("mdad.intervals.")
    }
    assert not {name: targets for name, targets in bad.items() if targets}


def test_the_checker_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
