"""The import boundaries of src/mdad: no import circles, and no module imports from a layer above its own.

Every import counts, also those inside functions and under ``TYPE_CHECKING``: a lazy import is still a
dependency. A module belongs to the layer of the longest name listed for it below (``mdad`` alone is the
package's face); a new module must be placed in a layer here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.paths import ROOT

SOURCE = ROOT / "src"

# Lowest first. A module may import from its own layer and from the layers below it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundations",
        (
            "mdad.errors",
            "mdad.defaults",
            "mdad.exact",
            "mdad.seeding",
            "mdad.wording",
            "mdad.memory",
            "mdad.outputs",
            "mdad.registry",
            "mdad.estimates",
            "mdad.results_version",
        ),
    ),
    ("data", ("mdad.data",)),
    ("irt", ("mdad.irt",)),
    ("methods", ("mdad.methods", "mdad.estimators")),
    ("metrics", ("mdad.metrics",)),
    ("intervals", ("mdad.intervals",)),
    ("experiment", ("mdad.experiment",)),
    ("micro-benchmarks", ("mdad.micro", "mdad.assessment", "mdad.planning", "mdad.suite")),
    ("harness", ("mdad.harness", "mdad.inspect")),
    ("report", ("mdad.report",)),
    ("workflow", ("mdad.workflow",)),
    ("cli", ("mdad.cli",)),
    ("api", ("mdad", "mdad.testing")),
]

# Imports forbidden whatever the layers say: (importing package, or "*" for any, imported package).
FORBIDDEN: list[tuple[str, str]] = [
    ("mdad.intervals", "mdad.methods"),
    ("mdad.intervals", "mdad.micro"),
    ("mdad.metrics", "mdad.experiment"),
    ("mdad.methods", "mdad.data"),
    ("*", "mdad.cli"),  # nothing outside the command line imports it
]


def module_files() -> dict[str, Path]:
    """Every module of src/mdad by dotted name (a package by its own name)."""
    modules = {}
    for path in sorted((SOURCE / "mdad").rglob("*.py")):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = module_files()


def imported_modules(name: str, path: Path) -> set[str]:
    """The modules of mdad that ``name`` imports anywhere in its file; ``from package import submodule``
    counts as importing the submodule."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {imported for imported in found if imported.split(".")[0] == "mdad" and imported != name}


IMPORTS = {name: imported_modules(name, path) for name, path in MODULES.items()}


def within(module: str, package: str) -> bool:
    return module == package or (package != "mdad" and module.startswith(package + "."))


def layer_of(module: str) -> int | None:
    """Index of the module's layer in LAYERS: the longest listed name that contains it."""
    matches = [(len(listed), index) for index, (_, names) in enumerate(LAYERS) for listed in names if within(module, listed)]
    return max(matches)[1] if matches else None


def test_every_module_has_a_layer():
    unplaced = sorted(name for name in MODULES if layer_of(name) is None)
    assert not unplaced, "modules in no layer (add them to LAYERS): " + ", ".join(unplaced)


def test_no_module_imports_from_a_higher_layer():
    violations = []
    for name, imported in sorted(IMPORTS.items()):
        mine = layer_of(name)
        for other in sorted(imported):
            theirs = layer_of(other)
            if mine is not None and theirs is not None and theirs > mine:
                violations.append(f"{name} imports {other} (layer {LAYERS[mine][0]} -> layer {LAYERS[theirs][0]})")
    assert not violations, "imports from a higher layer:\n" + "\n".join(violations)


def test_no_forbidden_import():
    violations = []
    for name, imported in sorted(IMPORTS.items()):
        for other in sorted(imported):
            for importer, target in FORBIDDEN:
                if (importer == "*" or within(name, importer)) and within(other, target) and not within(name, target):
                    violations.append(f"{name} imports {other} (layer {LAYERS[layer_of(name)][0]} -> layer {LAYERS[layer_of(other)][0]})")

    assert not violations, "forbidden imports:\n" + "\n".join(violations)


def test_no_import_circle():
    circles = []
    for start in sorted(IMPORTS):
        path = shortest_path_back(start)
        if path and min(path) == start:  # each circle once, from its smallest member
            circles.append(" -> ".join([*path, start]))
    assert not circles, "import circles:\n" + "\n".join(circles)


def shortest_path_back(start: str) -> list[str] | None:
    """The shortest chain of imports from ``start`` back to itself, or None."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for other in sorted(IMPORTS.get(module, ())):
                if other == start:
                    chain = [module]
                    while chain[-1] != start:
                        chain.append(previous[chain[-1]])
                    return chain[::-1]
                if other not in previous and other in IMPORTS:
                    previous[other] = module
                    following.append(other)
        frontier = following
    return None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from mdad.data import matrix\n", {"mdad.data.matrix"}),
        ("from mdad.data import ResponseMatrix\n", {"mdad.data"}),
        ("def f():\n    import mdad.irt.model\n", {"mdad.irt.model"}),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mdad.report import html\n", {"mdad.report.html"}),
        ("from . import matrix\nfrom ..irt import model\n", {"mdad.data.matrix", "mdad.irt.model"}),
    ],
)
def test_imports_are_read_everywhere_in_a_module(tmp_path, source, expected):
    path = tmp_path / "npz.py"
    path.write_text(source, encoding="utf-8")
    assert imported_modules("mdad.data.npz", path) == expected
