"""A micro-benchmark's audit items: which they are, how they are stored, and what they say of each new model.

``mdad select --audit-items m`` tops a micro-benchmark up with m items drawn uniformly at random
from the pool items it did not choose (from the whole pool for an adaptive test); ``mdad estimate``
corrects the learned estimate with the models' answers on them (mdad.estimators.audit) and says
when the learned estimate is off by more than the audit's noise (docs/intervals.md#audit-items).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mdad.data.matrix import ResponseMatrix
from mdad.errors import MdadError
from mdad.estimators.audit import MIN_AUDIT_ITEMS, AuditEstimate, ItemCurves, audit_estimate, draw_audit_items
from mdad.methods.adaptive import AdaptiveBenchmark
from mdad.seeding import rng_for
from mdad.wording import plural


@dataclass(frozen=True, eq=False)
class AuditItems:
    """The audit items of a micro-benchmark: ids, subtasks, pool positions (sorted), content hashes (None: unknown)
    and the source models' item curves over the whole pool that predict a model's answers from its learned estimate."""

    item_ids: np.ndarray
    subtasks: np.ndarray
    positions: np.ndarray
    curves: ItemCurves
    item_hashes: np.ndarray | None = None

    @property
    def size(self) -> int:
        return len(self.item_ids)

    @classmethod
    def draw(cls, matrix: ResponseMatrix, chosen: np.ndarray, m: int, *, seed: int, method: str, size: int) -> AuditItems:
        """``m`` items of ``matrix`` drawn uniformly from those not ``chosen`` (pool positions; none for an adaptive
        test), seeded by what the micro-benchmark is, with the item curves fitted on every model of ``matrix``."""
        positions = draw_audit_items(matrix.n_items, chosen, m, rng_for(seed, "audit", method, size, m))
        return cls(
            item_ids=matrix.items[positions],
            subtasks=matrix.subtasks[positions],
            positions=positions,
            curves=ItemCurves.fit(matrix.scores),
            item_hashes=None if matrix.item_hashes is None else matrix.item_hashes[positions],
        )

    def to_json(self) -> dict:
        out = {
            "items": self.item_ids.tolist(),
            "subtasks": self.subtasks.tolist(),
            "pool_positions": self.positions.tolist(),
            "curves": self.curves.to_json(),
        }
        if self.item_hashes is not None:
            out["item_hashes"] = self.item_hashes.tolist()
        return out

    @classmethod
    def from_json(cls, data: object) -> AuditItems:
        if not isinstance(data, dict) or not {"items", "subtasks", "pool_positions", "curves"} <= set(data):
            raise MdadError("the field 'audit' must hold the audit items, their subtasks, pool positions and item curves")
        items, subtasks, positions = data["items"], data["subtasks"], data["pool_positions"]
        if not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in (items, subtasks)) or len(items) != len(subtasks):
            raise MdadError("the audit items and their subtasks must be two lists of texts of the same length")
        if (
            not isinstance(positions, list)
            or len(positions) != len(items)
            or not all(isinstance(p, int) and not isinstance(p, bool) for p in positions)
        ):
            raise MdadError("the audit items' 'pool_positions' must be one integer per audit item")
        hashes = data.get("item_hashes")
        if hashes is not None and (not isinstance(hashes, list) or len(hashes) != len(items) or not all(isinstance(h, str) for h in hashes)):
            raise MdadError("the audit items' 'item_hashes' must be one text per audit item")
        return cls(
            item_ids=np.array(items, dtype=str),
            subtasks=np.array(subtasks, dtype=str),
            positions=np.array(positions, dtype=np.int64),
            curves=ItemCurves.from_json(data["curves"]),
            item_hashes=None if hashes is None else np.array(hashes, dtype=str),
        )

    def problem(self, chosen_ids: np.ndarray, chosen_positions: np.ndarray, pool: int) -> str | None:
        """The first inconsistency with the micro-benchmark it tops up (None: none)."""
        if self.size < MIN_AUDIT_ITEMS:
            return f"it lists {self.size} audit items; an audit needs at least {MIN_AUDIT_ITEMS}"
        if len(self.curves.intercept) != pool:
            return f"the audit items' curves cover {len(self.curves.intercept)} items, not the pool's {pool}"
        positions = self.positions
        if positions.min() < 0 or positions.max() >= pool or len(np.unique(positions)) != len(positions):
            return f"the audit items' pool positions must be distinct positions of the pool of {pool} items"
        if np.isin(positions, chosen_positions).any() or np.isin(self.item_ids, chosen_ids).any() or len(set(self.item_ids.tolist())) != self.size:
            return "an audit item is listed twice or is also a chosen item; audit items are drawn from the items not chosen"
        return None


def without_unasked_audit(test: AdaptiveBenchmark, answers: np.ndarray, is_audit: np.ndarray) -> np.ndarray:
    """``answers`` (models x pool, NaN: none) without the audit items' answers (``is_audit``: per pool item) that the
    adaptive test did not ask. The test is replayed from its first item on the model's answers: the items it asks
    depend on those answers alone, so the learned estimate does not depend on which audit items were drawn."""
    revealed = np.full(answers.shape, np.nan)
    active = np.ones(len(answers), dtype=bool)
    for _ in range(test.length):
        rows = np.flatnonzero(active)
        if not rows.size:
            break
        nxt = test.next_items(revealed[rows])
        have = nxt >= 0
        have[have] = ~np.isnan(answers[rows[have], nxt[have]])
        revealed[rows[have], nxt[have]] = answers[rows[have], nxt[have]]
        active[rows[~have]] = False
    return np.where(is_audit[None, :] & np.isnan(revealed), np.nan, answers)


def audit_frame(estimate: AuditEstimate, models: np.ndarray, answered: np.ndarray, m: int) -> pd.DataFrame:
    """One row per model: learned and corrected estimate, the corrected interval, and the audit items it answered
    (the corrected numbers are NaN for a model that did not answer all ``m``)."""
    return pd.DataFrame(
        {
            "learned": estimate.learned,
            "corrected": estimate.estimate,
            "low": estimate.low,
            "high": estimate.high,
            "level": estimate.level,
            "audit_answered": answered,
            "audit_items": m,
        },
        index=pd.Index(models, name="model"),
    )


def audited(
    audit: AuditItems,
    learned: np.ndarray,
    chosen_scores: np.ndarray,
    audit_scores: np.ndarray,
    chosen: np.ndarray,
    pool: int,
    models: np.ndarray,
    level: float,
) -> pd.DataFrame:
    """The corrected estimate of every model (``audit_frame``) from its answers on the chosen items and on the audit
    items (``audit_scores``: models x m, NaN where a model has no answer)."""
    answered = (~np.isnan(audit_scores)).sum(axis=1)
    complete = answered == audit.size
    empty = [np.full(len(models), np.nan) for _ in range(5)]
    found = AuditEstimate(learned=empty[0], estimate=empty[1], variance=empty[2], low=empty[3], high=empty[4], level=level)
    if complete.any():
        rows = np.flatnonzero(complete)
        predicted = audit.curves.predict(learned[rows], pool)
        part = audit_estimate(learned[rows], chosen_scores[rows], audit_scores[rows], chosen, audit.positions, predicted, level=level)
        for name in ("estimate", "variance", "low", "high"):
            getattr(found, name)[rows] = getattr(part, name)
    found.learned[:] = learned
    return audit_frame(found, models, answered, audit.size)


def audit_sentences(frame: pd.DataFrame) -> list[tuple[str, bool]]:
    """What the audit says, one sentence each with whether it is a warning: models lacking audit answers,
    and each model whose learned estimate lies outside its corrected interval."""
    m = int(frame["audit_items"].iloc[0]) if len(frame) else 0
    level = float(frame["level"].iloc[0]) if len(frame) else 0.0
    out: list[tuple[str, bool]] = []
    lacking = frame[frame["audit_answered"] < m]
    if len(lacking) == len(frame) and (lacking["audit_answered"] == 0).all():
        out.append(
            (
                f"The results hold none of the {plural(m, 'audit item')}: only the learned estimate is shown; evaluate the "
                "models on the audit items too (the commands 'mdad select' printed include them) for the corrected estimate.",
                True,
            )
        )
    elif len(lacking):
        names = ", ".join(f"{model} ({int(row.audit_answered)} of {m})" for model, row in lacking.iterrows())
        out.append(
            (
                f"No corrected estimate for {plural(len(lacking), 'model')} that did not answer every audit item: {names}; "
                "the correction needs the answers on all of them, as drawn.",
                True,
            )
        )
    done = frame[frame["audit_answered"] == m]
    if len(done):
        out.append(
            (
                f"Corrected: the learned estimate plus the mean error of the learned predictions on the {plural(m, 'audit item')} drawn "
                f"at random; its {100 * level:g}% interval holds whatever the source models are.",
                False,
            )
        )
    for model, row in done.iterrows():
        if row.learned < row.low or row.learned > row.high:
            gap = 100 * (row.corrected - row.learned)
            out.append(
                (
                    f"The audit items say the learned estimate of {model} is {abs(gap):.1f} points {'low' if gap > 0 else 'high'}: "
                    f"corrected {100 * row.corrected:.1f}%, {100 * level:g}% interval {100 * row.low:.1f}-{100 * row.high:.1f}.",
                    True,
                )
            )
    return out
