"""The method protocol: what a selection method sees, and the micro-benchmark it returns."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from mdad.errors import MdadError
from mdad.estimates import EstimateIntervals
from mdad.exact import on_estimate_grid
from mdad.registry import Registry, capital, foreign_failure

if TYPE_CHECKING:
    from mdad.irt.guard import GuardFlags


@dataclass(frozen=True, eq=False)
class SourceView:
    """What a selection method may look at: the source models on the pool of seen items.

    ``gold_prob`` is each source model's probability of the gold option; on data without
    option probabilities it is the 0/1 score itself (``has_option_probs`` says which).
    ``subtasks`` holds a code 0..n_subtasks-1 for every pool item.
    """

    scores: np.ndarray  # sources x pool
    gold_prob: np.ndarray  # sources x pool
    subtasks: np.ndarray  # pool
    has_option_probs: bool = False

    @property
    def n_items(self) -> int:
        """Pool items the method may choose from."""
        return self.scores.shape[1]

    @property
    def n_subtasks(self) -> int:
        """Subtasks of the pool (codes run from 0 to this minus 1)."""
        return int(self.subtasks.max()) + 1 if self.subtasks.size else 0

    @classmethod
    def from_arrays(cls, scores, gold_prob=None, subtasks=None, has_option_probs=None) -> SourceView:
        """Build a view, compacting subtask labels of any kind to codes 0..m-1."""
        scores = np.asarray(scores, dtype=np.float32)
        labels = np.zeros(scores.shape[1], int) if subtasks is None else np.asarray(subtasks)
        codes = np.unique(labels, return_inverse=True)[1].astype(np.int32)
        probs = scores if gold_prob is None else np.asarray(gold_prob, dtype=np.float32)
        has = (gold_prob is not None) if has_option_probs is None else has_option_probs
        return cls(scores=scores, gold_prob=probs, subtasks=codes, has_option_probs=has)


@dataclass(frozen=True, eq=False)
class MicroBenchmark:  # registered in KINDS, below
    """k chosen pool items and how a target's answers on them become an accuracy estimate.

    The default estimate is the weighted sum of the target's scores on the items (or of
    its gold-option probabilities when ``uses_gold_prob``). Methods with a fitted
    predictor subclass this and override ``estimate``.
    """

    items: np.ndarray  # positions in the pool, distinct
    weights: np.ndarray  # one per item
    uses_gold_prob: bool = False

    kind: ClassVar[str] = "weighted"
    own_interval_name: ClassVar[str] = ""  # what the table column of ``own_intervals`` is called ("AIPW")

    def __init_subclass__(cls, **kwargs) -> None:
        """Register every estimator class in ``KINDS`` for loading; one without its own ``kind`` is keyed by its name."""
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__:
            cls.kind = cls.__name__
        KINDS.add(cls)

    @property
    def size(self) -> int:
        """How many items the micro-benchmark holds."""
        return len(self.items)

    def estimator_params(self) -> dict:
        """Everything but ``items`` as JSON-ready values (arrays become lists), with the kind."""
        out = {"kind": self.kind}
        for f in fields(self):
            if f.name != "items":
                value = getattr(self, f.name)
                out[f.name] = value.tolist() if isinstance(value, np.ndarray) else value
        return out

    @classmethod
    def from_params(cls, params: dict, items: np.ndarray) -> MicroBenchmark:
        """Rebuild a micro-benchmark saved by ``estimator_params`` (lists become arrays)."""
        METHODS.load()  # every method's module (and plug-in) is imported, so its estimator classes are registered
        target = KINDS.get(params.get("kind", "weighted"))
        values: dict[str, Any] = {}
        for f in fields(target):
            if f.name == "items":
                continue
            if f.name not in params:
                if f.default is not MISSING:  # a field added later, with a default: older files lack it
                    continue
                raise MdadError(f"The saved micro-benchmark lacks the field {f.name!r}.")
            value = params[f.name]
            values[f.name] = np.asarray(value) if isinstance(value, list) else value
        return target(items=np.asarray(items), **values)

    def estimate(self, scores: np.ndarray, gold_prob: np.ndarray | None = None) -> np.ndarray:
        """Estimated accuracy of each target from its answers on ``items`` (targets x k)."""
        values = np.asarray(gold_prob if (self.uses_gold_prob and gold_prob is not None) else scores, dtype=np.float64)
        if len(self.weights) and np.all(self.weights == self.weights[0]):
            # equal weights: sum first, so that targets with the same answers in any order get the same estimate
            # (a dot product's rounding depends on where the ones are, which would break ties between models)
            return values.sum(axis=1) * self.weights[0]
        # element-wise products and numpy's own sum, not a BLAS dot product: the same rounding on every machine
        weights = np.asarray(self.weights, dtype=np.float64)
        total = (values * weights).sum(axis=1)
        if len(weights) and weights.min() >= 0 and abs(weights.sum() - 1.0) < 1e-9:
            # a weighted mean lies between the smallest and largest of its values (rounding can step past them)
            total = np.clip(total, values.min(axis=1), values.max(axis=1))
        return total

    def flags(self, scores: np.ndarray) -> GuardFlags | None:
        """The extrapolation guard of model-based estimates (mdad.irt.guard); None for the others."""
        return None

    def own_intervals(self, scores: np.ndarray, models: np.ndarray, *, level: float = 0.95) -> EstimateIntervals | None:
        """The interval at ``level`` the estimator itself gives each target (``scores``: targets x k, on
        ``items``; ``models``: their names), besides the ones mdad.micro.trust derives; None for most estimators."""
        return None


@dataclass(frozen=True, eq=False)
class Outcome:
    """What a method gives at one size in one run: every target's estimate (rounded to the
    estimate grid, so that targets with the same answers tie on every machine), which of them
    the extrapolation guard flags (None for methods without a fitted model), the chosen pool
    items (k positions, or targets x k for an adaptive method, in the order asked) and, for an
    adaptive test with a stopping rule, how many items each target answered (None: all k)."""

    estimates: np.ndarray  # targets, on the estimate grid (mdad.exact.on_estimate_grid)
    flagged: np.ndarray | None = None  # targets, bool
    items: np.ndarray | None = None  # k, or targets x k
    used: np.ndarray | None = None  # targets: items answered before the stopping rule ended the test

    def __post_init__(self) -> None:
        object.__setattr__(self, "estimates", on_estimate_grid(self.estimates))


KINDS: Registry[type[MicroBenchmark]] = Registry("micro-benchmark kind", name_of=lambda cls: cls.kind)
"""Every estimator class by its ``kind``, the name a saved micro-benchmark records."""
KINDS.add(MicroBenchmark)


def plain_mean(items: np.ndarray) -> MicroBenchmark:
    """A micro-benchmark that averages the target's scores on ``items``."""
    items = np.asarray(items, dtype=np.int64)
    return MicroBenchmark(items=items, weights=np.full(len(items), 1.0 / len(items)))


Design = Literal["uniform", "stratified"]
Allocation = Literal["equal", "proportional"]
"""How a stratified design splits its k items among the subtasks (mdad.methods.random): "equal" gives each
subtask floor(k/m) items and one more to randomly chosen ones, "proportional" draws items one after another
with probability proportional to 1/(size of their subtask)."""
ExactDesign = Literal["uniform", "stratified-equal", "stratified-proportional"]
"""A random design whose agreement curves mdad computes exactly (mdad.metrics.analytic)."""
ScoresNeeded = Literal["binary", "option-probabilities", "either"]
"""0/1 correctness ("binary", e.g. for an IRT fit), the gold option's probability, or either."""
IntervalKind = Literal["exact", "calibrated", "own", "none"]
"""Exact design-based (random designs on 0/1 scores), calibrated on the held-out assessment,
the estimator's own (e.g. AIPW's), or none."""


class SelectionMethod(ABC):
    """Base of every method: ``prepare`` does the size-independent work once per run,
    ``choose`` builds the micro-benchmark of one size from it.

    Methods with the same ``preparation`` key share one ``prepare`` result per run
    (e.g. one IRT fit for all tinyBenchmarks estimators). Callers use ``select``, which
    prepares when it is not given what ``prepare`` returned (docs/extending.md).
    """

    name: str
    description: str
    preparation: str | None = None
    adaptive: ClassVar[bool] = False  # True: each target gets its own items (see ``outcomes``)
    default: ClassVar[bool] = True  # run when no methods are named
    # "uniform" or "stratified": items drawn uniformly at random (within each subtask) without
    # looking at the sources, so the analytic curves and exact intervals apply; None otherwise
    design: Design | None = None
    allocation: Allocation | None = None  # a stratified design's split of k among subtasks (see ``Allocation``)
    ability_estimate: bool = False  # estimates read off an IRT ability fitted to the sources (mdad.micro.trust)
    fitted_estimate: bool = False  # estimates a regression fitted to the sources' scores on the chosen items (mdad.micro.trust)
    scores: ScoresNeeded = "either"  # what the data must hold (see ``ScoresNeeded``)
    interval: IntervalKind = "calibrated"  # how a saved micro-benchmark's intervals are had
    bounded: bool = True  # estimates lie in [0, 1] (an unbiased estimator may step outside)

    @classmethod
    def exact_design(cls) -> ExactDesign | None:
        """The random design whose exact answers (mdad plan, the report's analytic curves) apply: the
        declared ``design``, with its ``allocation`` when stratified; None when not declared."""
        if cls.design == "uniform":
            return "uniform"
        if cls.design == "stratified" and cls.allocation is not None:
            return "stratified-equal" if cls.allocation == "equal" else "stratified-proportional"
        return None

    def prepare(self, view: SourceView, rng: np.random.Generator) -> Any:
        """The size-independent work of one run on ``view`` (None when there is none)."""
        return None

    def select(self, view: SourceView, k: int, rng: np.random.Generator, prepared: Any = None) -> MicroBenchmark:
        """The micro-benchmark of ``k`` pool items; ``prepared`` is what ``prepare`` returned for this
        view (prepared here, from ``rng``, when not given)."""
        if prepared is None:
            prepared = self.prepare_checked(view, rng)
        try:
            micro = self.choose(view, k, rng, prepared)
        except (MdadError, MemoryError):
            raise
        except Exception as exc:  # an extension's code: one sentence naming it
            raise foreign_failure(exc, self.described(), f"to choose {k} items") from None
        self.check_choice(micro, k, view.n_items)
        return micro

    def prepare_checked(self, view: SourceView, rng: np.random.Generator) -> Any:
        """``prepare``, where an error of the method's own code is one sentence naming it (what callers use)."""
        try:
            return self.prepare(view, rng)
        except (MdadError, MemoryError):
            raise
        except Exception as exc:  # an extension's code: one sentence naming it
            raise foreign_failure(exc, self.described(), "to prepare its selection") from None

    def described(self) -> str:
        """How messages name this method: "the method 'x'", or for a plug-in "the method plug-in 'x' (module:Class)"."""
        return METHODS.describe(type(self), str(getattr(self, "name", type(self).__name__)))

    def check_choice(self, micro: object, k: int, pool: int) -> None:
        """The contract of ``choose``, checked on every call: a MicroBenchmark of exactly ``k`` distinct pool
        positions (an adaptive test: any number, its whole pool), each in range, with one weight each, none NaN."""
        who = capital(self.described())
        if not isinstance(micro, MicroBenchmark):
            raise MdadError(f"{who} returned {type(micro).__name__} from choose, not a MicroBenchmark.")
        items = np.asarray(micro.items)
        if items.ndim != 1 or not (items.size == 0 or np.issubdtype(items.dtype, np.integer)):
            raise MdadError(f"{who} chose items that are not a list of whole-number pool positions (shape {items.shape}, {items.dtype}).")
        if not self.adaptive and len(items) != k:
            raise MdadError(f"{who} chose {len(items)} items where size {k} was asked.")
        if len(items) and (items.min() < 0 or items.max() >= pool):
            raise MdadError(f"{who} chose the position {int(items.min() if items.min() < 0 else items.max())}, outside the pool of {pool} items.")
        if len(np.unique(items)) != len(items):
            raise MdadError(f"{who} chose {len(items) - len(np.unique(items))} item(s) twice at size {k}.")
        weights = np.asarray(micro.weights, dtype=np.float64) if np.asarray(micro.weights).dtype.kind in "biuf" else None
        if weights is None or weights.shape != items.shape or np.isnan(weights).any():
            raise MdadError(f"{who} gave weights that are not one number per item (NaN or the wrong count) at size {k}.")

    def check_estimates(self, estimates: object, models: int) -> np.ndarray:
        """The contract of an estimate, checked wherever one is made: one finite number per model, within [0, 1]
        when the method declares itself ``bounded``."""
        who = capital(self.described())
        values = np.asarray(estimates)
        if values.shape != (models,) or values.dtype.kind not in "biuf":
            raise MdadError(f"{who} gave estimates of shape {values.shape} ({values.dtype}) for {models} models.")
        values = values.astype(np.float64)
        if not np.isfinite(values).all():
            raise MdadError(f"{who} gave {int((~np.isfinite(values)).sum())} estimate(s) that are not finite numbers.")
        if self.bounded and (values.min(initial=0.0) < 0 or values.max(initial=0.0) > 1):
            raise MdadError(
                f"{who} gave an estimate of {values[np.argmax(np.abs(values - 0.5))]:g}, outside [0, 1], though it declares itself "
                "bounded (bounded = False says its estimates may step outside)."
            )
        return values

    @abstractmethod
    def choose(self, view: SourceView, k: int, rng: np.random.Generator, prepared: Any) -> MicroBenchmark:
        """The micro-benchmark of ``k`` pool items from what ``prepare`` returned."""

    def outcomes(
        self,
        view: SourceView,
        sizes: Sequence[int],
        *,
        scores: np.ndarray,
        gold_prob: np.ndarray,
        rng_of: Callable[[int], np.random.Generator],
        prepared: Any = None,
    ) -> dict[int, Outcome]:
        """Every target's estimate at every size, from its answers on the whole pool (``scores``,
        ``gold_prob``: targets x pool): what the experiment grid asks of every method.

        A static method chooses one micro-benchmark per size (drawing from ``rng_of(k)``) and
        reads the targets' answers on its items; an adaptive method overrides this to choose
        items per target from its answers, one pass serving every size.
        """
        out = {}
        for k, micro in self.choose_sizes(view, sizes, rng_of, prepared).items():
            self.check_choice(micro, k, view.n_items)  # also when choose_sizes is overridden
            on_items = scores[:, micro.items]
            flags = micro.flags(on_items)
            out[k] = Outcome(
                micro.estimate(on_items, gold_prob[:, micro.items]), None if flags is None else flags.flagged, items=np.asarray(micro.items)
            )
        return out

    def estimated(
        self,
        view: SourceView,
        sizes: Sequence[int],
        *,
        scores: np.ndarray,
        gold_prob: np.ndarray,
        rng_of: Callable[[int], np.random.Generator],
        prepared: Any = None,
    ) -> dict[int, Outcome]:
        """``outcomes`` with its contract checked (what the experiment grid calls): every size asked, and
        estimates that ``check_estimates`` accepts; an error of the method's own code is one sentence naming it."""
        try:
            by_size = self.outcomes(view, sizes, scores=scores, gold_prob=gold_prob, rng_of=rng_of, prepared=prepared)
        except (MdadError, MemoryError):
            raise
        except Exception as exc:  # an extension's code: one sentence naming it
            raise foreign_failure(exc, self.described(), "to estimate the targets' accuracy") from None
        missing = [k for k in sizes if k not in by_size]
        if missing:
            raise MdadError(f"{capital(self.described())} gave no estimates at size {missing[0]}.")
        for outcome in by_size.values():
            self.check_estimates(outcome.estimates, len(scores))
        return by_size

    def choose_sizes(
        self, view: SourceView, sizes: Sequence[int], rng_of: Callable[[int], np.random.Generator], prepared: Any
    ) -> dict[int, MicroBenchmark]:
        """The micro-benchmark of every size (``select`` with ``rng_of(k)``); a method whose sizes
        can share work overrides this, choosing the same items."""
        return {k: self.select(view, k, rng_of(k), prepared) for k in sizes}

    def __call__(self, view: SourceView, k: int, rng: np.random.Generator) -> MicroBenchmark:
        """Prepare and select in one step (for single use outside the experiment grid)."""
        check_size(k, view.n_items)
        return self.select(view, k, rng)


def check_size(k: int, pool: int) -> None:
    """A size must be a positive whole number of items no larger than the pool."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise MdadError(f"A micro-benchmark's size must be a whole number of items, got {k!r}.")
    if k < 1:
        raise MdadError(f"A micro-benchmark needs at least one item, got size {k}.")
    if k > pool:
        raise MdadError(f"Size {k} is larger than the pool of {pool} seen items.")


def _not_a_method(obj: object) -> str | None:
    """What keeps ``obj`` from being a method class (None: nothing), for a plug-in's entry point."""
    if not (isinstance(obj, type) and issubclass(obj, SelectionMethod)):
        return f"it names {type(obj).__name__} {obj!r}, not a subclass of mdad.methods.base.SelectionMethod"
    if inspect.isabstract(obj):
        return f"its class {obj.__name__} does not define choose"
    if not isinstance(getattr(obj, "name", None), str) or not isinstance(getattr(obj, "description", None), str):
        return f"its class {obj.__name__} has no name or no description"
    return None


METHODS: Registry[type[SelectionMethod]] = Registry("method", package="mdad.methods", group="mdad.methods", problem=_not_a_method)
"""Every selection method class by name; a module of mdad.methods registers its classes with
``@METHODS.register()`` (docs/extending.md)."""
