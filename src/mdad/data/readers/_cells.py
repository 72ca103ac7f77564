"""Collect per-(model, item) results from any reader and assemble them into one ResponseMatrix.

Every reader turns its rows into cells: a model, an item (an alignment key plus a display
name and subtask), a score, and optionally the model's log-score of every answer option, the
gold option and a hash of the item's content (document and gold answer). Assembly aligns items
across models (missing cells become NaN), rejects conflicting duplicates and items whose
content differs between models, and turns option log-scores into probabilities by a softmax
(items without options, such as generation items, get none).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mdad.data.matrix import ResponseMatrix, check_name_lengths
from mdad.errors import MdadError
from mdad.wording import plural


@dataclass
class Cells:
    """Growing columns of one result per row; ``to_matrix`` builds the matrix."""

    source: str
    models: list[str] = field(default_factory=list)
    keys: list[Hashable] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    subtasks: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    option_scores: list[Sequence[float] | np.ndarray | None] = field(default_factory=list)
    gold: list[int | None] = field(default_factory=list)
    hashes: list[str | None] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tasks: dict[str, dict[str, str]] = field(default_factory=dict)
    model_runs: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = field(default_factory=dict)

    def add(
        self,
        model: str,
        key: Hashable,
        item: str,
        subtask: str,
        score: float,
        where: str,
        name: str | None = None,
        option_scores: Sequence[float] | np.ndarray | None = None,
        gold: int | None = None,
        content: str | None = None,
    ) -> None:
        """One result of ``model`` on the item aligned by ``key`` and called ``item``.

        ``name`` says the item in errors (default ``item 'ID'``, e.g. "task 'arc' doc 3"),
        ``where`` the file and line the result came from, ``content`` a hash of the item's
        document and gold answer (every model must have the same).
        """
        self.models.append(model)
        self.keys.append(key)
        self.items.append(item)
        self.names.append(name or f"item {item!r}")
        self.subtasks.append(subtask)
        self.scores.append(score)
        self.where.append(where)
        self.option_scores.append(option_scores)
        self.gold.append(gold)
        self.hashes.append(content)

    def note(self, text: str) -> None:
        """One sentence saying what was dropped, merged or chosen (kept once)."""
        if text not in self.notes:
            self.notes.append(text)

    def __len__(self) -> int:
        return len(self.scores)

    def to_matrix(self) -> ResponseMatrix:
        """The models x items matrix, items in order of first appearance."""
        if not self.scores:
            why = f" ({' '.join(self.notes)})" if self.notes else ""
            raise MdadError(f"{self.source} holds no results to read.{why}")
        model_names, m_idx = _codes(self.models)
        _, i_idx = _codes(self.keys)
        n_models, n_items = len(model_names), int(i_idx.max()) + 1
        first = _first_rows(i_idx, n_items)
        scores = np.asarray(self.scores, dtype=np.float64)
        self._reject_conflicts(m_idx, i_idx, n_items, scores, model_names)
        item_hashes = self._item_hashes(m_idx, i_idx, n_items, model_names)
        table = np.full((n_models, n_items), np.nan, dtype=np.float64)
        table[m_idx, i_idx] = scores
        check_name_lengths(self.items, "item")
        check_name_lengths(self.subtasks, "subtask")
        ids = np.asarray(self.items, dtype=object)[first].astype(str)
        subtasks = np.asarray(self.subtasks, dtype=object)[first].astype(str)
        probs, gold = self._option_probs(m_idx, i_idx, n_models, n_items)
        read = set(model_names.tolist())  # models with results: a run that gave none is not a model
        try:
            return ResponseMatrix(
                scores=table,
                models=model_names,
                items=unique_names(ids),
                subtasks=subtasks,
                option_probs=probs,
                gold=gold,
                source=self.source,
                notes=tuple(self.notes),
                tasks=self.tasks,
                item_hashes=item_hashes,
                model_runs={name: run for name, run in self.model_runs.items() if name in read},
            )
        except MdadError as exc:
            raise MdadError(f"{self.source}: {exc}") from None

    def _reject_conflicts(self, m_idx, i_idx, n_items, scores, model_names) -> None:
        """Two rows for one (model, item) must agree; otherwise name model, item and both places."""
        flat = m_idx.astype(np.int64) * n_items + i_idx
        order = np.argsort(flat, kind="stable")
        same = flat[order][1:] == flat[order][:-1]
        a, b = order[:-1][same], order[1:][same]
        differ = ~((scores[a] == scores[b]) | (np.isnan(scores[a]) & np.isnan(scores[b])))
        if differ.any():
            j, k = int(a[differ][0]), int(b[differ][0])
            raise MdadError(
                f"Model {model_names[m_idx[j]]!r} has conflicting results for {self.names[j]}: "
                f"{scores[j]:g} ({self.where[j]}) and {scores[k]:g} ({self.where[k]})."
            )

    def _item_hashes(self, m_idx, i_idx, n_items, model_names) -> np.ndarray | None:
        """Each item's content hash ("" when unknown); two models seeing different content is an error."""
        rows = np.fromiter((k for k, h in enumerate(self.hashes) if h is not None), dtype=np.int64)
        if not rows.size:
            return None
        names, codes = _codes([self.hashes[k] for k in rows])
        items = i_idx[rows]
        first = _first_rows(items, n_items)
        has = first < len(rows)
        reference = first[items]
        differ = (codes != codes[reference]) & (m_idx[rows] != m_idx[rows[reference]])
        if differ.any():
            k = int(np.argmax(differ))
            row, other = int(rows[k]), int(rows[reference[k]])
            raise MdadError(
                f"{self.names[row][0].upper()}{self.names[row][1:]} has a different gold answer or document for "
                f"model {model_names[m_idx[other]]!r} ({self.where[other]}) and model "
                f"{model_names[m_idx[row]]!r} ({self.where[row]}): the models were evaluated on different "
                "versions of the task."
            )
        out = np.full(n_items, "", dtype=object)
        out[has] = names[codes[first[has]]]
        return out.astype(str)

    def _option_probs(self, m_idx, i_idx, n_models, n_items):
        """Softmax of the option log-scores of the items that have them (gold -1 elsewhere).

        An item has options when every model that answered it logged them with a gold option;
        when only some did, the item keeps its scores alone, with a note.
        """
        has = np.fromiter((o is not None and g is not None for o, g in zip(self.option_scores, self.gold, strict=True)), dtype=bool, count=len(self))
        if not has.any():
            return None, None
        answered = ~np.isnan(np.asarray(self.scores, dtype=np.float64))
        lacking = np.zeros(n_items, dtype=bool)
        np.logical_or.at(lacking, i_idx, answered & ~has)
        with_options = np.zeros(n_items, dtype=bool)
        with_options[i_idx[has]] = True
        partial = with_options & lacking
        if partial.any():
            n_partial = int(partial.sum())
            self.note(
                f"{plural(n_partial, 'item')} {'has' if n_partial == 1 else 'have'} option probabilities for some models only "
                "(e.g. " + self.names[int(np.flatnonzero(partial[i_idx] & has)[0])] + "); their 0/1 scores are used."
            )
        rows = np.flatnonzero(has & ~partial[i_idx])
        if not rows.size:
            return None, None
        row_gold = np.array([self.gold[r] for r in rows], dtype=np.int64)
        gold = np.full(n_items, -1, dtype=np.int64)
        gold[i_idx[rows]] = row_gold
        clash = row_gold != gold[i_idx[rows]]
        if clash.any():
            j = int(rows[np.argmax(clash)])
            raise MdadError(
                f"The gold answer of {self.names[j]} differs between models ({self.where[j]}); the results come from different versions of the task."
            )
        scored = [scores for r in rows if (scores := self.option_scores[r]) is not None]  # every row of ``rows``
        n_options = np.fromiter((len(scores) for scores in scored), dtype=np.int64, count=len(rows))
        outside = (row_gold < 0) | (row_gold >= n_options)
        if outside.any():
            j = int(rows[np.argmax(outside)])
            raise MdadError(f"The gold option of {self.names[j]} is not among its options ({self.where[j]}).")
        width = int(n_options.max())
        logits = np.full((len(rows), width), -np.inf)
        for k, scores in enumerate(scored):
            logits[k, : n_options[k]] = scores
        broken = np.isnan(logits).any(axis=1) | (logits == np.inf).any(axis=1) | ~(logits > -np.inf).any(axis=1)
        if broken.any():  # rare: those answers' options are set aside and the items assembled again
            first = int(rows[np.argmax(broken)])
            self.note(
                f"{plural(int(broken.sum()), 'answer')} logged option scores that are not finite numbers (e.g. "
                f"{self.names[first]}, {self.where[first]}); their items keep their 0/1 scores alone."
            )
            for r in rows[broken]:
                self.option_scores[r] = None
            return self._option_probs(m_idx, i_idx, n_models, n_items)
        logits -= logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        probs = np.full((n_models, n_items, width), np.nan, dtype=np.float64)
        probs[m_idx[rows], i_idx[rows]] = weights / weights.sum(axis=1, keepdims=True)
        return probs, gold


def _codes(values: list) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values in order of first appearance, and each row's code."""
    lookup: dict = {}
    codes = np.fromiter((lookup.setdefault(v, len(lookup)) for v in values), dtype=np.int64, count=len(values))
    names = np.empty(len(lookup), dtype=object)
    for value, code in lookup.items():
        names[code] = value
    return names, codes


def _first_rows(codes: np.ndarray, n: int) -> np.ndarray:
    """Row index of the first appearance of each code 0..n-1."""
    first = np.full(n, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))
    return first


def unique_names(ids: np.ndarray) -> np.ndarray:
    """Item names, with a #k suffix on repeats (two different items that display alike)."""
    _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    if counts.max() == 1:
        return ids
    out = ids.astype(object)
    seen: dict[str, int] = {}
    for pos in np.flatnonzero(counts[inverse] > 1):
        n = seen.get(ids[pos], 0)
        seen[ids[pos]] = n + 1
        if n:
            out[pos] = f"{ids[pos]}#{n}"
    return out.astype(str)
