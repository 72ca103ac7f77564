"""The repository documents itself: every docs/ file and anchor that code, tests and README cite exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


def anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens; explicit ids too."""
    found = set(re.findall(r'<a (?:id|name)="([\w-]+)"', markdown))
    for heading in re.findall(r"(?m)^#+\s+(.+?)\s*$", markdown):
        found.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading.lower())))
    return found


def test_every_cited_doc_and_anchor_exists():
    cited = []
    for path in [*ROOT.glob("src/**/*.py"), *ROOT.glob("tests/*.py"), ROOT / "README.md", *ROOT.glob("docs/*.md")]:
        cited += [(path.relative_to(ROOT), name, anchor) for name, anchor in CITATION.findall(path.read_text())]
    assert cited, "code cites no docs"
    missing = []
    for where, name, anchor in cited:
        doc = ROOT / "docs" / name
        if not doc.is_file() or (anchor and anchor not in anchors(doc.read_text())):
            missing.append(f"{where}: docs/{name}" + (f"#{anchor}" if anchor else ""))
    assert not missing, missing


def test_nothing_cites_a_file_outside_the_repository():
    outside = "PROTOCOL" + ".md"  # the background notes the project started from, not part of it
    for path in [*ROOT.glob("src/**/*.py"), *ROOT.glob("tests/*.py"), ROOT / "README.md", *ROOT.glob("docs/*.md")]:
        assert outside not in path.read_text(), path
