"""ResponseMatrix: what every model answered on every item, validated once on construction."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from mdad.errors import MdadError
from mdad.wording import plural

MissingPolicy = Literal["error", "drop-items", "drop-models"]  # what to do with cells not evaluated
MISSING_POLICIES: tuple[MissingPolicy, ...] = get_args(MissingPolicy)


INVISIBLE = dict.fromkeys(
    map(ord, "\u00ad\u034f\u061c\u115f\u1160\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\ufeff")
)


def _lookalike_note(models: np.ndarray) -> str | None:
    """A note when two model names print alike (Unicode twins such as NFC/NFD spellings, or invisible
    characters) and so would be two models the user cannot tell apart; None otherwise."""
    seen: dict[str, str] = {}
    for name in models.tolist():
        shown = unicodedata.normalize("NFKC", name.translate(INVISIBLE))
        if shown in seen and seen[shown] != name:
            return (
                f"The model names {ascii(seen[shown])} and {ascii(name)} print alike but differ (Unicode spelling or invisible "
                "characters); they are read as two models."
            )
        seen.setdefault(shown, name)
    return None


MAX_NAME_LENGTH = 10_000  # characters: a text array pads every name to the longest, so one huge name costs it per name


def check_name_lengths(values, what: str) -> None:
    """An error sentence when a name is longer than ``MAX_NAME_LENGTH``, before the names become a text
    array (one 200,000-character item name among 5,000 would take 4 GB)."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "U" and values.dtype.itemsize // 4 <= MAX_NAME_LENGTH:
        return
    for value in np.ravel(np.asarray(values, dtype=object)) if not isinstance(values, list) else values:
        text = value if isinstance(value, str) else str(value)
        if len(text) > MAX_NAME_LENGTH:
            raise MdadError(
                f"One {what} name is {len(text):,} characters long (it starts {text[:40]!r}); names may hold at most {MAX_NAME_LENGTH:,} characters."
            )


def _as_str_array(values, what: str, length: int) -> np.ndarray:
    check_name_lengths(values, what.rstrip("s"))
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise MdadError(f"{what} must be a one-dimensional list, got shape {arr.shape}.")
    if len(arr) != length:
        raise MdadError(f"{what} has {len(arr)} {'entry' if len(arr) == 1 else 'entries'} but the scores have {length}.")
    return arr.astype(str)


def _private_float32(values) -> np.ndarray:
    """``values`` as a float32 array that nothing else can write to: a copy, unless ``values``
    already is a frozen float32 array (read-only down to the memory it views, as a reader's
    fresh array is), kept as is so that a large probability array is not held twice."""
    if isinstance(values, np.ndarray) and values.dtype == np.float32 and values.flags.c_contiguous and _frozen(values):
        return values
    return np.array(values, dtype=np.float32, copy=True)


def _frozen(array: np.ndarray) -> bool:
    """Read-only, and so is every array it is a view of, down to one owning its memory."""
    view: object = array
    while isinstance(view, np.ndarray):
        if view.flags.writeable:
            return False
        if view.flags.owndata:
            return True
        view = view.base
    return False


def _first_duplicate(names: np.ndarray) -> str | None:
    uniq, counts = np.unique(names, return_counts=True)
    dup = uniq[counts > 1]
    return str(dup[0]) if len(dup) else None


@dataclass(frozen=True, eq=False)
class ResponseMatrix:
    """Scores of models (rows) on items (columns), with item subtasks.

    ``scores`` is float32 in [0, 1] (0/1 correctness or a continuous score); NaN marks
    a cell that was not evaluated. ``option_probs`` (models x items x options, padded
    with 0) and ``gold`` (gold option per item) are present for multiple-choice data
    that carries the model's probability of every option; in data mixing multiple-choice
    and generation items, an item without options has gold -1 and NaN probabilities.

    ``notes`` holds one plain sentence per thing the reader dropped, merged or chose on the
    user's behalf. ``tasks`` says what identifies each subtask's task (e.g. its version and
    n-shot, as the harness logged them) and ``item_hashes`` each item's content (document and
    gold answer, hashed; "" where unknown), so that results read later can be checked to come
    from the same task. ``model_runs`` says how each model was run, as harness logs recorded it (the
    name they give it and its model arguments as sorted pairs), so that a harness command can ask that
    same model more items (mdad.data.readers.commands); models of other data are not in it.
    """

    scores: np.ndarray
    models: np.ndarray
    items: np.ndarray
    subtasks: np.ndarray
    option_probs: np.ndarray | None = None
    gold: np.ndarray | None = None
    source: str = "in-memory"
    simulated: bool = False
    groups: dict[str, list[str]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what a reader dropped, merged or chose on the user's behalf, one sentence each
    tasks: dict[str, dict[str, str]] = field(default_factory=dict)
    item_hashes: np.ndarray | None = None
    model_runs: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = field(default_factory=dict)
    _subtask_codes: np.ndarray = field(init=False, repr=False)
    _subtask_names: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        scores = np.asarray(self.scores)
        if scores.ndim != 2:
            raise MdadError(f"scores must be a models x items table, got an array of shape {scores.shape}.")
        n_models, n_items = scores.shape
        if n_models == 0 or n_items == 0:
            raise MdadError(f"The response matrix is empty ({plural(n_models, 'model')} x {plural(n_items, 'item')}).")
        if scores.dtype.kind not in "biuf":
            raise MdadError(f"scores must be real numbers, got dtype {scores.dtype}.")
        scores = _private_float32(scores)
        if np.isinf(scores).any():
            raise MdadError("scores contain infinite values; use NaN for cells that were not evaluated.")
        if not np.isnan(scores).all():
            low, high = np.nanmin(scores), np.nanmax(scores)  # no copy of the evaluated cells
            if low < 0 or high > 1:
                raise MdadError(f"scores must lie in [0, 1] (NaN = not evaluated), found values from {low:.8g} to {high:.8g}.")
        models = _as_str_array(self.models, "models", n_models)
        items = _as_str_array(self.items, "items", n_items)
        subtasks = _as_str_array(self.subtasks, "subtasks", n_items)
        for what, names in (("model", models), ("item", items)):
            dup = _first_duplicate(names)
            if dup is not None:
                raise MdadError(f"The {what} name {dup!r} appears more than once.")
        option_probs, gold = self.option_probs, self.gold
        if (option_probs is None) != (gold is None):
            raise MdadError("option_probs and gold must be given together (the gold option of every item is needed).")
        if option_probs is not None:
            if np.asarray(option_probs).dtype.kind not in "biuf":
                raise MdadError(f"option_probs must be real numbers, got dtype {np.asarray(option_probs).dtype}.")
            option_probs = _private_float32(option_probs)
            gold = np.asarray(gold)
            if gold.dtype.kind not in "biuf":
                raise MdadError(f"gold must give each item's gold option as a whole number, got dtype {gold.dtype}.")
            fractional = np.flatnonzero(np.ravel(gold != np.round(gold))) if gold.dtype.kind == "f" else np.zeros(0, np.intp)
            if len(fractional):
                raise MdadError(
                    f"gold must give each item's gold option as a whole number; item {str(items[fractional[0]])!r} "
                    f"has {np.ravel(gold)[fractional[0]]:g}."
                )
            gold = gold.astype(np.int64, copy=True)
            if option_probs.ndim != 3 or option_probs.shape[:2] != (n_models, n_items):
                raise MdadError(f"option_probs must have shape (models, items, options) = ({n_models}, {n_items}, ...), got {option_probs.shape}.")
            if gold.shape != (n_items,):
                raise MdadError(f"gold must give one option per item ({n_items}), got shape {gold.shape}.")
            if gold.min() < -1 or gold.max() >= option_probs.shape[2]:
                raise MdadError(f"gold options must lie between 0 and {option_probs.shape[2] - 1} (-1: an item without options).")
            # fmin/fmax skip NaN without a copy of the array (all NaN gives NaN, which passes)
            if np.fmin.reduce(option_probs, axis=None) < 0 or np.fmax.reduce(option_probs, axis=None) > 1 + 1e-5:
                raise MdadError("option_probs must be probabilities in [0, 1].")
            _check_distributions(option_probs, gold, scores, models, items)
            if not (gold >= 0).any():
                option_probs = gold = None
            else:
                option_probs.setflags(write=False)
                gold.setflags(write=False)
        listed = {str(k): [str(m) for m in v] for k, v in dict(self.groups).items()}
        groups = {name: list(dict.fromkeys(members)) for name, members in listed.items()}
        notes = tuple(str(n) for n in self.notes)
        for name, members in listed.items():
            twice = next((m for m in members if members.count(m) > 1), None)
            if twice is not None and (note := f"Model group {name!r} lists {twice!r} more than once; it counts once.") not in notes:
                notes += (note,)
        lookalike = _lookalike_note(models)
        if lookalike is not None and lookalike not in notes:
            notes += (lookalike,)
        tasks = {str(k): {str(a): str(b) for a, b in dict(v).items()} for k, v in dict(self.tasks).items()}
        item_hashes = None if self.item_hashes is None else _as_str_array(self.item_hashes, "item_hashes", n_items)
        codes_names, codes = np.unique(subtasks, return_inverse=True)
        for name, value in (
            ("scores", scores),
            ("models", models),
            ("items", items),
            ("subtasks", subtasks),
            ("option_probs", option_probs),
            ("gold", gold),
            ("_subtask_codes", codes.astype(np.int32)),
            ("_subtask_names", codes_names),
            ("groups", groups),
            ("notes", notes),
            ("tasks", tasks),
            ("item_hashes", item_hashes),
        ):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, name, value)

    def group_index(self, name: str) -> np.ndarray:
        """Indices of the models of a named group (from groups.json beside the data)."""
        if name not in self.groups:
            known = ", ".join(sorted(self.groups)) or "none"
            raise MdadError(f"Unknown model group {name!r} for {self.source}; known groups: {known}.")
        present = [m for m in self.groups[name] if m in set(self.models)]
        if len(present) < 2:
            raise MdadError(f"Model group {name!r} has fewer than two models present in {self.source}.")
        return self.model_index(present)

    # ---- shape and derived views -------------------------------------------------
    @property
    def n_models(self) -> int:
        """How many models (rows) the matrix holds."""
        return self.scores.shape[0]

    @property
    def n_items(self) -> int:
        """How many items (columns) the matrix holds."""
        return self.scores.shape[1]

    @property
    def subtask_codes(self) -> np.ndarray:
        """Integer code of each item's subtask (index into ``subtask_names``)."""
        return self._subtask_codes

    @property
    def subtask_names(self) -> np.ndarray:
        """The distinct subtask names, sorted (``subtasks`` holds each item's)."""
        return self._subtask_names

    @property
    def has_option_probs(self) -> bool:
        """Whether any item carries option probabilities (see ``option_items`` for which)."""
        return self.option_probs is not None

    @property
    def option_items(self) -> np.ndarray:
        """Boolean mask of the items that carry option probabilities."""
        if self.gold is None:
            return np.zeros(self.n_items, dtype=bool)
        return self.gold >= 0

    @property
    def is_binary(self) -> bool:
        """Whether every evaluated score is 0 or 1 (correctness, not a continuous score)."""
        finite = self.scores[~np.isnan(self.scores)]
        return bool(np.all((finite == 0) | (finite == 1)))

    @property
    def n_missing(self) -> int:
        """How many (model, item) cells were not evaluated (NaN)."""
        return int(np.isnan(self.scores).sum())

    def gold_prob(self) -> np.ndarray:
        """Each model's probability of the gold option (models x items).

        Items without option probabilities (all items of 0/1 data, the generation items of
        mixed data) give the score itself (0/1 correctness), the fallback every
        probability-based method uses. Read-only, and computed once per matrix: the experiment
        grid asks for it in every task (a gather over every option of every cell).
        """
        if self.option_probs is None or self.gold is None:  # both present or both absent
            return self.scores
        kept = self.__dict__.get("_gold_prob")
        if kept is None:
            idx = np.broadcast_to(np.maximum(self.gold, 0)[None, :, None], (self.n_models, self.n_items, 1))
            probs = np.take_along_axis(self.option_probs, idx, axis=2)[:, :, 0]
            kept = np.where(self.option_items[None, :], probs, self.scores)
            kept.setflags(write=False)
            object.__setattr__(self, "_gold_prob", kept)  # the matrix is frozen; this is a cache of its own arrays
        return kept

    def accuracy(self) -> np.ndarray:
        """Full-benchmark accuracy of each model (mean over evaluated items)."""
        return np.asarray(np.nanmean(self.scores, axis=1, dtype=np.float64))

    # ---- selection ---------------------------------------------------------------
    def model_index(self, names) -> np.ndarray:
        """Indices of the named models; an unknown name is an error naming it."""
        lookup = {name: i for i, name in enumerate(self.models)}
        missing = [n for n in names if n not in lookup]
        if missing:
            raise MdadError(f"Model {missing[0]!r} is not in the data ({self.source}).")
        return np.array([lookup[n] for n in names], dtype=np.int64)

    def take(self, models: np.ndarray | None = None, items: np.ndarray | None = None) -> ResponseMatrix:
        """A new matrix restricted to the given model and item indices (or boolean masks)."""
        mi = np.arange(self.n_models) if models is None else np.asarray(models)
        ii = np.arange(self.n_items) if items is None else np.asarray(items)
        probs = None if self.option_probs is None else self.option_probs[mi][:, ii]
        gold = None if self.gold is None else self.gold[ii]
        return ResponseMatrix(
            scores=self.scores[mi][:, ii],
            models=self.models[mi],
            items=self.items[ii],
            subtasks=self.subtasks[ii],
            option_probs=probs,
            gold=gold,
            source=self.source,
            simulated=self.simulated,
            groups=self.groups,
            notes=self.notes,
            tasks=self.tasks,
            item_hashes=None if self.item_hashes is None else self.item_hashes[ii],
            model_runs=self.model_runs,
        )

    def require_complete(self, missing: MissingPolicy = "error") -> ResponseMatrix:
        """This matrix without missing cells: raise, or drop the items or models that have them."""
        nan = np.isnan(self.scores)
        if not nan.any():
            return self
        if missing == "drop-items":
            kept = self.take(items=~nan.any(axis=0))
        elif missing == "drop-models":
            kept = self.take(models=~nan.any(axis=1))
        elif missing == "error":
            per_model = nan.sum(axis=1)
            worst = int(np.argmax(per_model))
            incomplete = int((per_model > 0).sum())
            raise MdadError(
                f"{incomplete} {'model has' if incomplete == 1 else 'models have'} items that were not evaluated "
                f"(e.g. {str(self.models[worst])!r} misses {int(per_model[worst])} of {self.n_items}); "
                "drop the items or the models that have missing cells (missing policy drop-items or drop-models)."
            )
        else:
            raise MdadError(f"Unknown missing-data policy {missing!r}; use error, drop-items or drop-models.")
        if kept.n_models < 2 or kept.n_items < 2:
            raise MdadError(f"Dropping the {missing.split('-')[1]} with missing cells leaves almost nothing to evaluate.")
        return kept

    def __repr__(self) -> str:
        kind = "simulated" if self.simulated else self.source
        return (
            f"ResponseMatrix({plural(self.n_models, 'model')} x {plural(self.n_items, 'item')}, {plural(len(self.subtask_names), 'subtask')}, {kind})"
        )


def fingerprint(matrix: ResponseMatrix) -> str:
    """A short hash of the data's content (scores, names, subtasks, option probabilities): what a
    stored experiment or a micro-benchmark records to recognise the data it was made from."""
    h = hashlib.sha256()
    for arr in (matrix.scores, matrix.models, matrix.items, matrix.subtasks, matrix.option_probs, matrix.gold):
        if arr is not None:
            h.update(np.ascontiguousarray(arr).data.cast("B"))  # hashed in place, not copied to bytes
    return h.hexdigest()[:16]


DISTRIBUTION_TOLERANCE = 1e-3  # how far from 1 the option probabilities of a cell may sum (float32 rounding)


def _check_distributions(option_probs: np.ndarray, gold: np.ndarray, scores: np.ndarray, models: np.ndarray, items: np.ndarray) -> None:
    """An error sentence when the option probabilities of an answered multiple-choice cell do not sum to 1
    (each option 0.9, or all zero): they would be read as a model's confidence. A slice of items at a
    time (about 32,000 probabilities), so the check adds little memory to the array's own."""
    n_models, n_items, n_options = option_probs.shape
    if n_options == 1:  # the gold option's probability alone (what tasks sent to a cluster carry)
        return
    step = max(1, (1 << 15) // (n_models * n_options))
    for start in range(0, n_items, step):
        block = slice(start, start + step)
        cells = option_probs[:, block, :]  # a view
        present = ~np.isnan(cells)
        totals = np.add.reduce(cells, axis=2, dtype=np.float64, where=present)
        answered = (gold[block] >= 0)[None, :] & ~np.isnan(scores[:, block]) & present.any(axis=2)
        off = (np.abs(totals - 1) > DISTRIBUTION_TOLERANCE) & answered
        if off.any():
            m, k = np.argwhere(off)[0]
            raise MdadError(
                f"The option probabilities of model {str(models[m])!r} on item {str(items[start + k])!r} "
                f"sum to {totals[m, k]:.4g}, not 1; give each answered item a probability distribution "
                "over its options."
            )
