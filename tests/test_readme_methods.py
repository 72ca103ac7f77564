"""The README's methods table and its list of estimators follow the registries: no method or estimator missing, none extra."""

from __future__ import annotations

import re
from pathlib import Path

from mdad import methods

README = Path(__file__).parents[1] / "README.md"


def methods_section() -> str:
    text = README.read_text()
    return text.split("## Methods", 1)[1].split("\n## ", 1)[0]


def test_the_methods_table_lists_every_registered_method_in_registry_order():
    rows = re.findall(r"^\| `([^`]+)` \|", methods_section(), flags=re.M)
    assert rows == methods.available()


def test_the_methods_section_names_every_registered_estimator():
    named = re.search(r"with `EST`\s+one of (.*?), e\.g\.", methods_section(), flags=re.S)
    assert named is not None, "the README's methods section lists the estimators of NAME@estimator=EST"
    assert re.findall(r"`([^`]+)`", named.group(1)) == methods.estimators()
