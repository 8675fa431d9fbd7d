"""Math equivalence of two answers through math-verify: the batched pair kernel.

:func:`math_equivalent` compares a prediction with a gold answer *by value*, as
math-verify 0.9.0's documented usage does: both texts are parsed with
``math_verify.parse`` (the LaTeX and plain-expression extraction configs), then
``math_verify.verify(gold, prediction)`` decides (the argument order matters: the
comparison is not symmetric). The work is batched:

- only the *distinct* (prediction, gold) pairs of a batch are compared, and each
  distinct string is parsed once (per process): the results are kept in bounded
  in-process caches (:data:`CACHE_ENTRIES` entries, :data:`CACHE_BYTES` bytes of keys
  at most), so a string repeated across batches or calls is not parsed again;
- above :data:`PARALLEL_THRESHOLD` distinct uncached pairs (or when polars runs the
  kernel outside the main thread, where signals cannot be used) the pairs are spread
  over worker processes, one per core: the session's pool of killable workers,
  :mod:`evalframe.extract._workers`, which lighteval's extraction cascade shares;
- each pair has a timeout: math-verify's own (``parsing_timeout`` for each parse,
  ``timeout_seconds`` for each comparison, ``signal.alarm`` in the main thread of
  the process that runs them), and in worker processes a hard wall-clock limit of
  ``6 * timeout + 5`` seconds per pair on top (a worker stuck in C code, where the
  alarm cannot interrupt it, is killed and restarted). A pair that times out scores
  as *not equal*, as in math-verify, and is **counted**: every call that meets one
  warns (:class:`MathTimeoutWarning`, with the count and the first pair), and
  :func:`math_equal_stats` keeps the running totals.

``math_verify`` is imported only when a kernel runs (``pip install 'evalframe[math]'``).

>>> import polars as pl
>>> df = pl.DataFrame({"pred": ["The answer is $\\\\frac{1}{2}$", "50%", "3", None],
...                    "gold": ["0.5", "$\\\\frac12$", "4", "1"]})
>>> df.select(math_equivalent(pl.col("pred"), pl.col("gold")).alias("equal"))["equal"].to_list()
[True, True, False, None]
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import polars as pl

from evalframe._kernel_cache import KernelCache
from evalframe.errors import EvalframeError
from evalframe.extract._workers import POOL, default_workers

__all__ = [
    "CACHE_BYTES",
    "CACHE_ENTRIES",
    "PARALLEL_THRESHOLD",
    "Answer",
    "MathOptions",
    "MathTimeoutWarning",
    "check_options",
    "check_workers",
    "compare_pairs",
    "equivalent_series",
    "math_equal_stats",
    "math_equivalent",
    "require_math_verify",
]

Target = Literal["latex", "expr"]
Flavour = Literal["math-verify", "lighteval"]

#: Distinct uncached pairs above which a batch is spread over worker processes.
PARALLEL_THRESHOLD = 256
#: Bounds of each in-process cache (parsed strings; compared pairs).
CACHE_ENTRIES = 100_000
CACHE_BYTES = 64 * 2**20

_INSTALL_HINT = "pip install 'evalframe[math]'"


class MathTimeoutWarning(UserWarning):
    """Some (prediction, gold) pairs hit the math-verify timeout and scored as not equal."""


def require_math_verify(metric: str = "math_equal") -> None:
    """Raise :class:`evalframe.EvalframeError` when ``math_verify`` is not installed.

    Cheap (no import): metrics call it when their expression is built, so a missing
    extra is reported at once, not from inside a polars kernel.
    """
    for module in ("math_verify", "latex2sympy2_extended", "sympy"):
        if importlib.util.find_spec(module) is None:
            raise EvalframeError(
                f"metric {metric!r} compares answers with math-verify, but {module!r} is not "
                f"installed; install the math extra: {_INSTALL_HINT}"
            )


@dataclass(frozen=True)
class MathOptions:
    """What changes the comparison (the key of the caches; sent to the workers).

    ``flavour`` ``"math-verify"``: ``math_verify.parse`` / ``math_verify.verify``;
    ``"lighteval"``: lighteval 0.13.0's own copy of the extraction and comparison
    (``MultilingualExtractiveMatchMetric``), reproduced in
    :mod:`evalframe.extract.lighteval_math`.
    """

    gold_targets: tuple[str, ...] = ("latex", "expr")
    prediction_targets: tuple[str, ...] = ("latex", "expr")
    precision: int = 6
    timeout: int | None = 5
    flavour: str = "math-verify"
    boxed_first: bool = False
    gold_as_text: bool = False

    def side(self, side: str) -> tuple[str, ...]:
        return self.gold_targets if side == "gold" else self.prediction_targets


class Answer(NamedTuple):
    """The comparison of one (prediction, gold) pair."""

    equal: bool
    timed_out: bool  # a parse or the comparison hit the timeout (or the hard limit)
    prediction_found: bool  # the prediction parsed to something (an answer was found)
    gold_found: bool


#: What a pair stopped at the hard limit (or whose worker was lost) scores.
_STOPPED = Answer(False, True, True, True)

_TARGETS = ("latex", "expr")
_FLAVOURS = ("math-verify", "lighteval")


def check_options(
    metric: str,
    *,
    gold_targets: Sequence[str] | str,
    prediction_targets: Sequence[str] | str,
    precision: int,
    timeout: int | None,
    flavour: str = "math-verify",
    boxed_first: bool = False,
    gold_as_text: bool = False,
) -> MathOptions:
    """Validated :class:`MathOptions` (an :class:`evalframe.EvalframeError` names the option)."""

    def targets(name: str, value: Sequence[str] | str) -> tuple[str, ...]:
        values = (value,) if isinstance(value, str) else tuple(value)
        if not values or any(v not in _TARGETS for v in values) or len(set(values)) < len(values):
            raise EvalframeError(
                f"metric {metric!r}: {name}={value!r} is invalid; expected 'latex', 'expr' or "
                "both, e.g. ('latex', 'expr')"
            )
        return values

    if not isinstance(precision, int) or isinstance(precision, bool) or precision < 0:
        raise EvalframeError(
            f"metric {metric!r}: precision={precision!r} is invalid; expected an integer >= 0 "
            "(decimal places floats are rounded to)"
        )
    if timeout is not None and (
        not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 1
    ):
        raise EvalframeError(
            f"metric {metric!r}: timeout={timeout!r} is invalid; expected a whole number of "
            "seconds >= 1 (math-verify's signal.alarm takes whole seconds) or None"
        )
    if flavour not in _FLAVOURS:
        raise EvalframeError(
            f"metric {metric!r}: flavour={flavour!r} is invalid; expected one of {_FLAVOURS}"
        )
    return MathOptions(
        targets("gold_targets", gold_targets),
        targets("prediction_targets", prediction_targets),
        precision,
        timeout,
        flavour,
        bool(boxed_first),
        bool(gold_as_text),
    )


def check_workers(metric: str, workers: object) -> None:
    """``workers`` must be None (one per core), 0 (in this process) or a positive integer."""
    if workers is not None and (
        not isinstance(workers, int) or isinstance(workers, bool) or workers < 0
    ):
        raise EvalframeError(
            f"metric {metric!r}: workers={workers!r} is invalid; expected None (one per core), "
            "0 (in this process) or a positive integer"
        )


# --- bounded caches --------------------------------------------------------------------


class BoundedCache:
    """A least-recently-used mapping bounded by entries and by an estimate of bytes.

    >>> cache = BoundedCache(max_entries=2, max_bytes=10**6)
    >>> cache.put("a", 1, 10); cache.put("b", 2, 10); cache.put("c", 3, 10)
    >>> cache.get("a") is None, cache.get("c"), len(cache)
    (True, 3, 2)
    """

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Hashable) -> Any:
        with self._lock:
            found = self._data.get(key)
            if found is None:
                return None
            self._data.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._data[key] = (value, size)
            self.bytes += size
            while len(self._data) > self.max_entries or self.bytes > self.max_bytes:
                _, (_, dropped) = self._data.popitem(last=False)
                self.bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.bytes = 0


#: (options, prediction, gold) -> (equal, timed_out); in this process.
_PAIRS = BoundedCache(CACHE_ENTRIES, CACHE_BYTES)
#: (flavour, targets, boxed_first, timeout, text) -> (parsed, timed_out); where parsing runs.
_PARSED = BoundedCache(CACHE_ENTRIES, CACHE_BYTES)

_PAIR_OVERHEAD = 200  # bytes counted per cached pair besides its two strings
_PARSED_OVERHEAD = 2_000  # per parsed string: the sympy objects are not measured


# --- running totals --------------------------------------------------------------------

_STATS_LOCK = threading.Lock()
_STATS = {
    "rows": 0,
    "distinct_pairs": 0,
    "cached_pairs": 0,
    "compared_pairs": 0,
    "parsed_strings": 0,
    "unparsed_prediction_rows": 0,
    "unparsed_gold_rows": 0,
    "timeouts": 0,
    "timeout_rows": 0,
    "worker_restarts": 0,
    "pairs_in_workers": 0,
}


def math_equal_stats(reset: bool = False) -> dict[str, int]:
    """Running totals of the math comparisons of this process (since the last reset).

    ``rows`` non-null rows compared; ``distinct_pairs`` distinct (prediction, gold)
    pairs among them (per batch); ``cached_pairs`` of those answered from the cache;
    ``compared_pairs`` compared afresh (``pairs_in_workers`` of them in worker
    processes); ``parsed_strings`` strings parsed in this process;
    ``unparsed_prediction_rows`` / ``unparsed_gold_rows`` rows whose prediction / gold
    parsed to nothing (no answer found: such a row scores 0); ``timeouts``
    distinct pairs that hit a timeout (scored as not equal) and ``timeout_rows`` the
    rows they cover; ``worker_restarts`` workers killed at the hard limit (or lost).

    >>> sorted(math_equal_stats())[:3]
    ['cached_pairs', 'compared_pairs', 'distinct_pairs']
    """
    with _STATS_LOCK:
        found = dict(_STATS)
        if reset:
            for key in _STATS:
                _STATS[key] = 0
    return found


def _count(**values: int) -> None:
    with _STATS_LOCK:
        for key, value in values.items():
            _STATS[key] += value


# --- comparing in this process -----------------------------------------------------------


class _TimeoutCounter(logging.Handler):
    """Counts math-verify's "Timeout during ..." warnings (it returns [] / False then)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("Timeout during"):
            self.count += 1


@contextlib.contextmanager
def _counting_timeouts(names: Sequence[str]) -> Any:
    """Within the block, the math-verify loggers count timeouts instead of printing them."""
    counter = _TimeoutCounter()
    loggers = [logging.getLogger(name) for name in names]
    saved = [(lg.propagate, lg.level) for lg in loggers]
    for lg in loggers:
        lg.addHandler(counter)
        lg.propagate = False
        if lg.level == logging.NOTSET or lg.level > logging.WARNING:
            lg.setLevel(logging.WARNING)
    try:
        yield counter
    finally:
        for lg, (propagate, level) in zip(loggers, saved, strict=True):
            lg.removeHandler(counter)
            lg.propagate = propagate
            lg.setLevel(level)


class _Backend:
    """The parse and verify functions of one flavour, imported on first use."""

    def __init__(self, flavour: str) -> None:
        self.flavour = flavour
        self._configs: dict[tuple[tuple[str, ...], bool], Any] = {}
        if flavour == "math-verify":
            import math_verify

            self._mv = math_verify
            self.loggers = ("math_verify",)
        elif flavour == "lighteval":
            import importlib

            # (the package exports a function of the same name as the module)
            self._lv = importlib.import_module("evalframe.extract.lighteval_math")
            self.loggers = ("math_verify", "evalframe.extract.lighteval_math")
        else:
            raise ValueError(f"unknown math comparison flavour {flavour!r}")

    def configs(self, targets: tuple[str, ...], boxed_first: bool) -> Any:
        key = (targets, boxed_first)
        found = self._configs.get(key)
        if found is None:
            if self.flavour == "math-verify":
                mv = self._mv
                made = []
                for target in targets:
                    if target == "latex":
                        made.append(
                            mv.LatexExtractionConfig(boxed_match_priority=0)
                            if boxed_first
                            else mv.LatexExtractionConfig()
                        )
                    else:
                        made.append(mv.ExprExtractionConfig())
                found = made
            else:
                found = self._lv.extraction_patterns(targets, boxed_first=boxed_first)
            self._configs[key] = found
        return found

    def parse(self, text: str, targets: tuple[str, ...], boxed_first: bool, timeout: int | None):
        if self.flavour == "math-verify":
            return self._mv.parse(
                text, self.configs(targets, boxed_first), parsing_timeout=timeout
            )
        try:
            return self._lv.extract(text, self.configs(targets, boxed_first), timeout=timeout)
        except Exception:  # lighteval lets such an error end the run; here: nothing found
            logging.getLogger(__name__).debug("lighteval extraction failed", exc_info=True)
            return []

    def verify(self, gold: list, prediction: list, precision: int, timeout: int | None) -> bool:
        if self.flavour == "math-verify":
            return bool(
                self._mv.verify(gold, prediction, float_rounding=precision, timeout_seconds=timeout)
            )
        return self._lv.compare(gold, prediction, precision=precision, timeout=timeout)


_BACKENDS: dict[str, _Backend] = {}


def _backend(flavour: str) -> _Backend:
    found = _BACKENDS.get(flavour)
    if found is None:
        found = _BACKENDS[flavour] = _Backend(flavour)
    return found


def _past(started: float, timeout: int | None) -> bool:
    """Whether a call begun at ``started`` ran past ``timeout`` seconds.

    math-verify's alarm fired then; sympy and antlr catch exceptions with a bare
    ``except``, so the alarm can be swallowed and the call go on to return a value
    that the reference, run again, would not: such a call counts as timed out.
    """
    return timeout is not None and time.monotonic() - started >= timeout


def _parsed(
    backend: _Backend, counter: _TimeoutCounter, text: str, options: MathOptions, side: str
) -> tuple[list, bool]:
    """``text`` parsed for ``side`` (cached), and whether parsing timed out."""
    if side == "gold" and options.gold_as_text:
        return [text], False
    targets = options.side(side)
    boxed_first = options.boxed_first and side == "prediction"
    key = (options.flavour, targets, boxed_first, options.timeout, text)
    found = _PARSED.get(key)
    if found is None:
        before = counter.count
        started = time.monotonic()
        parsed = backend.parse(text, targets, boxed_first, options.timeout)
        late = counter.count > before or _past(started, options.timeout)
        found = ([] if late else parsed, late)
        _PARSED.put(key, found, 4 * len(text) + _PARSED_OVERHEAD)
        _count(parsed_strings=1)
    if options.flavour == "lighteval" and side == "gold" and not found[0]:
        return [text], found[1]  # lighteval compares a gold it cannot extract as its text
    return found


def compare_pairs(
    pairs: Sequence[tuple[str, str]], options: MathOptions, *, hard_timeouts: bool = False
) -> list[Answer]:
    """The :class:`Answer` for each (prediction, gold) pair, computed in this process.

    Parsing is cached per distinct string. Uses the reference's own (signal) timeouts,
    which need the main thread; elsewhere call with ``options.timeout=None``.
    """
    backend = _backend(options.flavour)
    results = []
    with _counting_timeouts(backend.loggers) as counter:
        for prediction, gold in pairs:
            gold_parsed, gold_late = _parsed(backend, counter, gold, options, "gold")
            pred_parsed, pred_late = _parsed(backend, counter, prediction, options, "prediction")
            before = counter.count
            started = time.monotonic()
            equal = backend.verify(gold_parsed, pred_parsed, options.precision, options.timeout)
            late = counter.count > before or _past(started, options.timeout)
            results.append(
                Answer(
                    bool(equal) and not late, gold_late or pred_late or late,
                    bool(pred_parsed), bool(gold_parsed),
                )
            )
    return results


# --- worker processes --------------------------------------------------------------------


def compare_one(pair: tuple[str, str], options: MathOptions) -> Answer:
    """The worker task: the :class:`Answer` for one (prediction, gold) pair."""
    (answer,) = compare_pairs([pair], options)
    return answer


def hard_limit(timeout: int | None) -> float:
    """Seconds a worker may spend on one pair before it is killed: ``6 * timeout + 5``.

    A pair is two parses and at most four comparisons (two parsed forms per side),
    each bounded by math-verify's own timeout; the limit only stops what the alarm
    cannot interrupt (a long operation in C). Without a timeout: 600 s.
    """
    return 600.0 if timeout is None else 6.0 * timeout + 5.0


def compare_in_workers(
    pairs: Sequence[tuple[str, str]], options: MathOptions, workers: int
) -> list[Answer]:
    """:class:`Answer` for each pair, computed in the session's worker processes
    (:data:`evalframe.extract._workers.POOL`), each pair under :func:`hard_limit`."""
    answers, killed = POOL.run(
        "evalframe.metrics._math_equal:compare_one", options, pairs, workers=workers,
        limit=hard_limit(options.timeout), stopped=_STOPPED, what="math comparison",
        # pairs sharing a gold go to the same worker, whose cache parses it once
        order=lambda pair: pair[1],
    )
    _count(worker_restarts=killed)
    return answers


# --- the kernel ---------------------------------------------------------------------------


def _compare_distinct(
    pairs: list[tuple[str, str]], options: MathOptions, workers: int | None
) -> list[Answer]:
    """:class:`Answer` for distinct pairs: from the cache, in this process, or in workers."""
    results: list[Answer | None] = []
    missing: list[int] = []
    for index, (prediction, gold) in enumerate(pairs):
        found = _PAIRS.get((options, prediction, gold))
        results.append(found)
        if found is None:
            missing.append(index)
    _count(distinct_pairs=len(pairs), cached_pairs=len(pairs) - len(missing))
    if not missing:
        return results  # type: ignore[return-value]
    todo = [pairs[i] for i in missing]
    n_workers = default_workers() if workers is None else workers
    main = threading.current_thread() is threading.main_thread()
    if n_workers > 0 and (len(todo) > PARALLEL_THRESHOLD or not main):
        done = compare_in_workers(todo, options, n_workers)
        _count(pairs_in_workers=len(todo))
    elif main:
        done = compare_pairs(todo, options)
    else:  # workers=0 outside the main thread: no signals, so no timeout
        done = compare_pairs(todo, _replace_timeout(options))
    _count(compared_pairs=len(todo))
    for index, pair, answer in zip(missing, todo, done, strict=True):
        results[index] = answer
        _PAIRS.put((options, *pair), answer, len(pair[0]) + len(pair[1]) + _PAIR_OVERHEAD)
    return results  # type: ignore[return-value]


def _replace_timeout(options: MathOptions) -> MathOptions:
    from dataclasses import replace

    return replace(options, timeout=None)


def _limit(timeout: int | None) -> str:
    if timeout is None:
        return f"ran past the hard limit of {hard_limit(None):.0f} s"
    return f"hit the {timeout} s timeout"


def _shorten(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def equivalent_series(
    prediction: pl.Series, gold: pl.Series, options: MathOptions, *,
    workers: int | None = None, metric: str = "math_equal",
) -> pl.Series:
    """The eager kernel: ``Boolean`` per row, null where either side is null."""
    frame = pl.DataFrame(
        {"p": prediction.cast(pl.String), "g": gold.cast(pl.String)}
    )
    distinct = frame.drop_nulls().unique(maintain_order=True)
    pairs = list(zip(distinct["p"].to_list(), distinct["g"].to_list(), strict=True))
    answers = _compare_distinct(pairs, options, workers)
    table = distinct.with_columns(
        pl.Series("equal", [a.equal for a in answers], dtype=pl.Boolean),
        pl.Series("late", [a.timed_out for a in answers], dtype=pl.Boolean),
        pl.Series("no_pred", [not a.prediction_found for a in answers], dtype=pl.Boolean),
        pl.Series("no_gold", [not a.gold_found for a in answers], dtype=pl.Boolean),
    )
    joined = frame.join(table, on=["p", "g"], how="left", maintain_order="left")
    rows = frame.height - frame.filter(pl.col("p").is_null() | pl.col("g").is_null()).height
    late = table.filter(pl.col("late"))
    _count(
        rows=rows,
        unparsed_prediction_rows=int(joined["no_pred"].sum()),
        unparsed_gold_rows=int(joined["no_gold"].sum()),
    )
    if late.height:
        late_rows = int(joined["late"].sum())
        _count(timeouts=late.height, timeout_rows=late_rows)
        first = late.row(0, named=True)
        warnings.warn(
            f"metric {metric!r}: {late.height} distinct (prediction, gold) pair(s) covering "
            f"{late_rows} row(s) {_limit(options.timeout)} and score as "
            f"not equal; first: prediction={_shorten(first['p'])!r}, "
            f"gold={_shorten(first['g'])!r} (totals: evalframe.metrics._math_equal."
            "math_equal_stats())",
            MathTimeoutWarning,
            stacklevel=2,
        )
    return joined["equal"].alias(prediction.name)


def math_equivalent(
    prediction: pl.Expr,
    gold: pl.Expr,
    *,
    gold_targets: Sequence[Target] | Target = ("latex", "expr"),
    prediction_targets: Sequence[Target] | Target = ("latex", "expr"),
    precision: int = 6,
    timeout: int | None = 5,
    workers: int | None = None,
    flavour: Flavour = "math-verify",
    boxed_first: bool = False,
    gold_as_text: bool = False,
    metric: str = "math_equal",
) -> pl.Expr:
    """Whether ``prediction`` equals ``gold`` by value (math-verify), row-wise.

    ``verify(parse(gold), parse(prediction))`` with math-verify 0.9.0, batched over the
    distinct pairs (see the module docstring for caching, workers and timeouts).

    Parameters
    ----------
    prediction, gold
        ``String`` expressions: the model's answer (or whole response) and the reference.
    gold_targets, prediction_targets
        What ``parse`` extracts from each side: ``"latex"`` (``LatexExtractionConfig``),
        ``"expr"`` (``ExprExtractionConfig``) or both (default, math-verify's default).
    precision
        ``verify``'s ``float_rounding``: decimal places floats are rounded to (6).
    timeout
        Seconds for each parse and each comparison (math-verify's ``parsing_timeout``
        and ``timeout_seconds``, default 5); a pair that times out is not equal and is
        counted (:class:`MathTimeoutWarning`, :func:`math_equal_stats`).
    workers
        Worker processes for large batches (None: one per core; 0: in this process).
    flavour
        ``"math-verify"`` (default) or ``"lighteval"`` (lighteval 0.13.0's own copy of the
        extraction and comparison, with its fallback of an unextractable gold to its text).
    boxed_first
        The prediction's LaTeX config matches ``\\boxed{}`` before anything else
        (``boxed_match_priority=0``, as lighteval's math metrics configure predictions);
        the gold's keeps the default priority.
    gold_as_text
        The gold is not parsed but compared as its text (lighteval's rule for a row where a
        gold yields nothing).

    Returns
    -------
    pl.Expr
        ``Boolean`` per row; null where either side is null. An empty or unparseable
        text is not equal to anything (math-verify's ``parse`` gives ``[]``).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"p": ["$x \\\\in [1, 2)$", "1,000", "", None],
    ...                    "g": ["$[1,2)$", "1000", "", "1"]})
    >>> df.select(math_equivalent(pl.col("p"), pl.col("g")))["p"].to_list()
    [True, True, False, None]
    """
    require_math_verify(metric)
    options = check_options(
        metric,
        gold_targets=gold_targets,
        prediction_targets=prediction_targets,
        precision=precision,
        timeout=timeout,
        flavour=flavour,
        boxed_first=boxed_first,
        gold_as_text=gold_as_text,
    )
    check_workers(metric, workers)
    kernel = _kernel(options, workers, metric)
    return pl.map_batches(
        [prediction, gold], kernel, return_dtype=pl.Boolean, is_elementwise=True
    )


#: One kernel object per settings, so polars can share the work of equal expressions.
_Kernel = Callable[[Sequence[pl.Series]], pl.Series]
_KERNELS: KernelCache[tuple[MathOptions, int | None, str], _Kernel] = KernelCache("math_equal", 256)


def _kernel(
    options: MathOptions, workers: int | None, metric: str
) -> Callable[[Sequence[pl.Series]], pl.Series]:
    """The batched comparison for these settings, one function object per settings."""

    def build() -> Callable[[Sequence[pl.Series]], pl.Series]:
        def compare(series: Sequence[pl.Series]) -> pl.Series:
            return equivalent_series(
                series[0], series[1], options, workers=workers, metric=metric
            )

        return compare

    return _KERNELS.get_or_build((options, workers, metric), build)
