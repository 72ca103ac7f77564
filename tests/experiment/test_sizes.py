"""Sizes as counts or as shares of the seen pool."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdad.errors import MdadError
from mdad.experiment.sizes import items_for_share, parse_sizes, unique_counts


def test_shares_resolve_by_the_reference_rule():
    # GPQA's seen pool: 224 items; MMLU-Pro's: 6,012
    assert [r.items for r in parse_sizes("0.5%,1%,2%,10", 224)] == [2, 2, 4, 10]
    assert [r.items for r in parse_sizes("0.5%,1%,2%", 6012)] == [30, 60, 120]
    assert unique_counts(parse_sizes("0.5%,1%,2%", 224)) == (2, 4)
    assert parse_sizes("1%", 224)[0].is_share and not parse_sizes("7", 224)[0].is_share


@given(st.floats(0.01, 100), st.integers(1, 20000))
def test_share_rule_matches_its_definition(percent, n_seen):
    k = items_for_share(percent, n_seen)
    assert k == max(2, math.floor(percent / 100 * n_seen + 1e-9))
    assert k >= 2 and (k == 2 or k <= percent / 100 * n_seen + 1e-6)


@pytest.mark.parametrize("text", ["10,abc", "0.5", "0%", "150%", ","])
def test_bad_sizes_are_one_sentence(text):
    with pytest.raises(MdadError, match="[Ss]ize"):
        parse_sizes(text, 224)
