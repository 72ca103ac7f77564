"""Micro-benchmark sizes given as counts (``100``) or as a share of the seen pool (``1%``).

A share resolves to a count by the reference implementation's rule,
``max(2, floor(share * n_seen))``: at least two items, rounded down. Every size is
labelled with both its count and its share of the seen pool (by the report's figures).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mdad.errors import MdadError


@dataclass(frozen=True)
class SizeRequest:
    """One requested size and the number of items it resolves to."""

    requested: str  # as the user wrote it: "100" or "1%"
    items: int

    @property
    def is_share(self) -> bool:
        return self.requested.endswith("%")


def items_for_share(percent: float, n_seen: int) -> int:
    """The count a share of the seen pool resolves to: max(2, floor(percent / 100 * n_seen))."""
    return max(2, math.floor(percent / 100.0 * n_seen + 1e-9))


def parse_sizes(text: str, n_seen: int) -> list[SizeRequest]:
    """Parse ``10,25,1%,2.5%``: whole counts, or percentages of the seen pool."""
    out = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        try:
            if token.endswith("%"):
                percent = float(token[:-1])
                if not 0 < percent <= 100:
                    raise ValueError
                out.append(SizeRequest(token, items_for_share(percent, n_seen)))
            else:
                out.append(SizeRequest(token, int(token)))
        except ValueError:
            raise MdadError(f"Sizes must be whole numbers of items or percentages of the seen pool (like 10,25,1%), got {token!r}.") from None
    if not out:
        raise MdadError(f"No size is given: {text!r}.")
    return out


def unique_counts(requests: list[SizeRequest]) -> tuple[int, ...]:
    """The distinct counts, in increasing order (two shares may round to the same count)."""
    return tuple(sorted({r.items for r in requests}))


def size_requests_note(requests: list[SizeRequest] | list[dict]) -> str:
    """The sizes as asked and as run, in one sentence ("" when every size is a plain count that differs):
    shares resolved to counts, and requests that fell on the same count, which runs once."""
    pairs = [(r.requested, r.items) if isinstance(r, SizeRequest) else (str(r["requested"]), int(r["items"])) for r in requests]
    shares = [f"{asked} = {items} items" for asked, items in pairs if asked.endswith("%")]
    by_count: dict[int, list[str]] = {}
    for asked, items in pairs:
        by_count.setdefault(items, []).append(asked)
    same = [f"{' and '.join(asked)} are the same {items} items (run once)" for items, asked in by_count.items() if len(asked) > 1]
    parts = []
    if shares:
        parts.append(f"Sizes given as shares of the seen pool (max(2, floor(share x seen items))): {', '.join(shares)}.")
    if same:
        parts.append(f"{'; '.join(same)[0].upper()}{'; '.join(same)[1:]}.")
    return " ".join(parts)
