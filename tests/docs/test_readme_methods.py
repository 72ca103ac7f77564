"""The methods tables of README.md and docs/methods.md and their lists of estimators follow the registries:
no method or estimator missing, none extra."""

from __future__ import annotations

import re

import pytest
from support.paths import ROOT

from mdad import methods

PAGES = {"README.md": "## Methods", "docs/methods.md": "# Selection methods"}


def methods_section(page: str) -> str:
    text = (ROOT / page).read_text()
    return text.split(PAGES[page], 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_methods_table_lists_every_registered_method_in_registry_order(page):
    rows = re.findall(r"^\| `([^`]+)` \|", methods_section(page), flags=re.M)
    assert rows == methods.available()


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_methods_section_names_every_registered_estimator(page):
    named = re.search(r"with `EST`\s+one of (.*?), e\.g\.", methods_section(page), flags=re.S)
    assert named is not None, "the README's methods section lists the estimators of NAME@estimator=EST"
    assert re.findall(r"`([^`]+)`", named.group(1)) == methods.estimators()
