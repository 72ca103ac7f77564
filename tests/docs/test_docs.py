"""The repository documents itself: every docs/ file and anchor that code, tests and README cite exists."""

from __future__ import annotations

import re
from pathlib import Path

from support.paths import ROOT

CITATION = re.compile(r"docs/((?:[\w-]+/)*[\w-]+\.md)(?:#([\w-]+))?")


def sources() -> list[Path]:
    """The code, tests (not their fixtures), README and docs pages that may cite a file."""
    tests = [path for path in ROOT.glob("tests/**/*.py") if "fixtures" not in path.relative_to(ROOT).parts]
    return [*ROOT.glob("src/**/*.py"), *tests, ROOT / "README.md", *ROOT.glob("docs/*.md")]


def anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens; explicit ids too."""
    found = set(re.findall(r'<a (?:id|name)="([\w-]+)"', markdown))
    for heading in re.findall(r"(?m)^#+\s+(.+?)\s*$", markdown):
        found.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading.lower())))
    return found


def test_every_cited_doc_and_anchor_exists():
    cited = []
    for path in sources():
        cited += [(path.relative_to(ROOT), name, anchor) for name, anchor in CITATION.findall(path.read_text())]
    assert cited, "code cites no docs"
    missing = []
    for where, name, anchor in cited:
        doc = ROOT / "docs" / name
        if not doc.is_file() or (anchor and anchor not in anchors(doc.read_text())):
            missing.append(f"{where}: docs/{name}" + (f"#{anchor}" if anchor else ""))
    assert not missing, missing


def test_every_cited_test_file_exists():
    """Pages and code that name a test file (``tests/cli/test_cli.py``) name one that is there."""
    pages = [*sources(), ROOT / "CONTRIBUTING.md", *ROOT.glob("benchmarks/**/*.md"), *ROOT.glob("benchmarks/*.py")]
    cited = {(path.relative_to(ROOT), name) for path in pages for name in re.findall(r"tests/[\w/]+\.py", path.read_text())}
    assert any(name == "tests/experiment/test_perf_identical.py" for _, name in cited), "nothing names the golden grid's test"
    missing = sorted(f"{where}: {name}" for where, name in cited if not (ROOT / name).is_file())
    assert not missing, missing


def test_nothing_cites_a_file_outside_the_repository():
    outside = "PROTOCOL" + ".md"  # the background notes the project started from, not part of it
    for path in sources():
        assert outside not in path.read_text(), path


def site_pages() -> list[str]:
    """The pages mkdocs.yml's nav names, relative to docs/ (read as text: the test run needs no YAML parser)."""
    lines = (ROOT / "mkdocs.yml").read_text().splitlines()
    nav = []
    for line in lines[lines.index("nav:") + 1 :]:
        if line and not line[0].isspace():
            break
        nav.append(line)
    return re.findall(r"(?m)^\s*- (?:[^:\n]+: )?([\w/-]+\.md)\s*$", "\n".join(nav))


def test_the_site_shows_every_docs_page_and_only_pages_that_exist():
    named = site_pages()
    assert "README.md" in named and "api/mdad.md" in named, named
    missing = [page for page in named if not (ROOT / "docs" / page).is_file()]
    assert not missing, f"mkdocs.yml names pages that do not exist: {missing}"
    pages = sorted(str(path.relative_to(ROOT / "docs")) for path in (ROOT / "docs").rglob("*.md"))
    left_out = [page for page in pages if page not in named]
    assert not left_out, f"docs pages missing from mkdocs.yml's nav: {left_out}"
    assert len(named) == len(set(named)), "a page is named twice in the nav"


# mdad.simulate is the function of the module mdad.data.simulate, whose name it shadows; the reference names it in full
SHADOWED = {"mdad.data.simulate.simulate": "mdad.simulate"}


def test_the_api_reference_names_objects_by_their_public_names():
    """API pages name what `mdad` and its subpackages export, so moving a module inside the package breaks no page."""
    import mdad

    faces = {"mdad": mdad, **{f"mdad.{name}": getattr(mdad, name) for name in ("methods", "metrics", "intervals", "data")}}
    for page in (ROOT / "docs" / "api").glob("*.md"):
        for target in re.findall(r"(?m)^::: ([\w.]+)", page.read_text()):
            face, _, name = target.rpartition(".")
            public = target in faces or (face in faces and name in faces[face].__all__)
            assert public or target in SHADOWED, f"{page.name}: {target} is not a name that mdad or its subpackages export"


def test_the_api_reference_shows_every_top_level_name():
    import mdad

    shown = set(re.findall(r"(?m)^::: ([\w.]+)", "\n".join(page.read_text() for page in (ROOT / "docs" / "api").glob("*.md"))))
    shown |= {SHADOWED[target] for target in shown & SHADOWED.keys()}
    missing = [f"mdad.{name}" for name in mdad.__all__ if f"mdad.{name}" not in shown]
    assert not missing, f"docs/api/ does not show {', '.join(missing)}"


REFERENCED_PACKAGES = ("mdad", "mdad.methods", "mdad.metrics", "mdad.intervals", "mdad.data")


def test_every_public_name_of_the_api_reference_says_what_it_does():
    """Every exported function and class of the packages the API reference shows, and every public
    method and property of those classes, has a docstring (the reference would show it bare)."""
    import importlib
    import inspect

    bare = []
    for package in REFERENCED_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
                continue
            if not inspect.getdoc(obj):
                bare.append(f"{package}.{name}")
            if not inspect.isclass(obj):
                continue
            for attribute, value in vars(obj).items():
                if attribute.startswith("_"):
                    continue
                if isinstance(value, (classmethod, staticmethod)):
                    value = value.__func__
                if (isinstance(value, property) or inspect.isfunction(value)) and not (value.__doc__ or "").strip():
                    bare.append(f"{package}.{name}.{attribute}")
    assert not bare, "public names without a docstring: " + ", ".join(bare)
