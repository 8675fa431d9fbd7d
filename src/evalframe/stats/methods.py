"""The statistics methods, one table per kind: standard errors, intervals, comparison tests
and multiple-comparison corrections.

Each method is registered beside the function that implements it (in
:mod:`~evalframe.stats.stderr`, :mod:`~evalframe.stats.intervals` and
:mod:`~evalframe.stats.compare`), with a short description, whether it needs 0/1 scores and
the reference it follows. The tables are what the functions that take a method accept
(``aggregate(stderr=..., interval=...)``, ``compare(method=..., correction=...)``), what
they dispatch on, what their error messages list, and the command line's choices:

- :data:`STDERR_METHODS`: ``aggregate``'s ``stderr=``;
- :data:`INTERVAL_METHODS`: ``aggregate``'s ``interval=``;
- :data:`COMPARISON_TESTS`: ``compare``'s ``method=``;
- :data:`CORRECTION_METHODS`: ``compare``'s ``correction=`` (or None);
- :data:`POWER_TESTS`: the tests ``power``, ``mde`` and ``sample_size`` plan for (``test=``).

>>> INTERVAL_METHODS.names()
['auto', 'wilson', 'clopper_pearson', 'jeffreys', 't', 'normal']
>>> check_method(INTERVAL_METHODS, "wilsn", "interval")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
evalframe.errors.OptionError: interval='wilsn' is invalid; did you mean 'wilson'? ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import polars as pl

from evalframe._registry import Registry
from evalframe.errors import OptionError

__all__ = [
    "COMPARISON_TESTS",
    "CORRECTION_METHODS",
    "INTERVAL_METHODS",
    "POWER_TESTS",
    "STDERR_METHODS",
    "ComparisonTest",
    "CorrectionMethod",
    "IntervalMethod",
    "PowerTest",
    "StderrMethod",
    "check_method",
    "either",
]


@dataclass(frozen=True)
class StderrMethod:
    """A standard-error method of ``aggregate`` (``stderr=``).

    ``function`` computes it for one group (numpy; the aggregate computes it for every
    group at once with :func:`~evalframe.stats.stderr.clustered_stderr_expr`).
    ``needs_clusters``: it is defined on clustered rows only (an error without a cluster
    column). ``per_question``: the estimate is the mean of the questions' mean scores, and
    its standard error the one over questions (else the mean of the rows, with the
    cluster-robust standard error where rows repeat a question).
    """

    name: str
    function: Callable[..., float]
    description: str
    reference: str = ""
    needs_clusters: bool = False
    per_question: bool = False
    binary: bool = False


@dataclass(frozen=True)
class IntervalMethod:
    """An interval method of ``aggregate`` (``interval=``).

    ``function(estimate, level)`` gives the ``(low, high)`` arrays of every group of a
    sample metric from an :class:`~evalframe.stats.intervals.Estimate`. ``binary``: it is
    for 0/1 scores only. ``on_corpus``: corpus metrics use it too (on their bootstrap
    standard error); otherwise they get the bootstrap percentile interval. ``applied``:
    for a method that picks an interval per group, the names of those it applied, from
    the groups' ``binary`` flags (else every group has this method).
    """

    name: str
    function: Callable[..., Any]
    description: str
    reference: str = ""
    binary: bool = False
    on_corpus: bool = False
    applied: Callable[[Any], list[str]] | None = None


@dataclass(frozen=True)
class ComparisonTest:
    """A paired test of ``compare`` (``method=``).

    ``automatic``: the entry picks another test by the data; ``function(level, clustered,
    is_binary)`` returns its name. A closed-form test's ``function`` maps the paired
    summary of every group (a mapping of numpy arrays: ``diff``, ``stderr``, ``dof``, the
    discordant counts ``b`` and ``c``) to p-values. A resampling test's ``function(pair,
    clusters, replicates, seed, level)`` runs on one group's pairs and returns the
    statistics it gives, which are ``replaces`` (the others stay the paired-t ones).
    ``levels``: the metric levels it applies to. ``binary``: it needs 0/1 scores.
    ``independent``: it treats pairs as independent, so clustered pairs are refused.
    """

    name: str
    function: Callable[..., Any]
    description: str
    reference: str = ""
    binary: bool = False
    levels: tuple[str, ...] = ("sample", "corpus")
    independent: bool = False
    replaces: tuple[str, ...] = ()
    automatic: bool = False

    @property
    def resamples(self) -> bool:
        """Whether it draws (bootstrap replicates or randomisation trials, with a seed)."""
        return bool(self.replaces)


@dataclass(frozen=True)
class CorrectionMethod:
    """A multiple-comparison correction of ``compare`` (``correction=``).

    ``function(ranked)`` adjusts the family's p-values sorted ascending, and returns them
    adjusted and monotone (not yet capped at 1).
    """

    name: str
    function: Callable[..., Any]
    description: str
    reference: str = ""
    binary: bool = False


@dataclass(frozen=True)
class PowerTest:
    """A test whose power ``power``, ``mde`` and ``sample_size`` compute (``test=``).

    ``function(effect, n, *, variance, alpha, two_sided, discordant, clusters)`` gives the
    power (numpy arrays, broadcast) at the absolute difference ``effect`` with ``n``
    questions; ``variance`` is ``Var(d_i)`` (None for a test that needs ``discordant``
    instead), ``clusters`` the number of clusters (or None). ``needs_discordant``: the test
    is of 0/1 scores and its power depends on the discordant rate instead of the variance.
    ``monotone``: the power never falls as ``n`` grows (the sample size can be bisected;
    otherwise it is searched). ``takes_clusters``: ``clusters=`` sets its degrees of
    freedom.
    """

    name: str
    function: Callable[..., Any]
    description: str
    reference: str = ""
    binary: bool = False
    needs_discordant: bool = False
    monotone: bool = True
    takes_clusters: bool = False
    integer_n: bool = False


_COLUMNS = ("name", "description", "binary", "reference")
_DTYPES = {"binary": pl.Boolean}

#: ``aggregate``'s standard-error methods (``stderr=``).
STDERR_METHODS: Registry[StderrMethod] = Registry(
    "stderr", make=StderrMethod, package="evalframe.stats", modules=("stderr",),
    columns=_COLUMNS, dtypes=_DTYPES, plural="stderr methods",
)
#: ``aggregate``'s interval methods (``interval=``).
INTERVAL_METHODS: Registry[IntervalMethod] = Registry(
    "interval", make=IntervalMethod, package="evalframe.stats", modules=("intervals",),
    columns=_COLUMNS, dtypes=_DTYPES, plural="interval methods",
)
#: ``compare``'s paired tests (``method=``).
COMPARISON_TESTS: Registry[ComparisonTest] = Registry(
    "comparison test", make=ComparisonTest, package="evalframe.stats", modules=("compare",),
    columns=_COLUMNS, dtypes=_DTYPES,
)
#: ``compare``'s multiple-comparison corrections (``correction=``).
CORRECTION_METHODS: Registry[CorrectionMethod] = Registry(
    "correction", make=CorrectionMethod, package="evalframe.stats", modules=("compare",),
    columns=_COLUMNS, dtypes=_DTYPES,
)

#: The tests ``power``, ``mde`` and ``sample_size`` plan for (``test=``).
POWER_TESTS: Registry[PowerTest] = Registry(
    "power test", make=PowerTest, package="evalframe.stats", modules=("power_tests",),
    columns=_COLUMNS, dtypes=_DTYPES,
)

M = TypeVar("M")


def either(names: Sequence[str], last: str = "or") -> str:
    """Names quoted and listed for a message: ``'a', 'b' or 'c'``.

    >>> either(["auto", "t", "normal"])
    "'auto', 't' or 'normal'"
    >>> either(["holm"])
    "'holm'"
    """
    quoted = [repr(name) for name in names]
    if len(quoted) < 2:
        return "".join(quoted)
    return f"{', '.join(quoted[:-1])} {last} {quoted[-1]}"


def check_method(
    table: Registry[M],
    value: object,
    option: str,
    *,
    verb: str = "is invalid",
    optional: bool = False,
) -> M:
    """The entry of ``table`` named ``value``; else an :class:`~evalframe.errors.OptionError`
    naming the option, suggesting a near miss and listing every registered name (after
    None when ``optional``: the caller accepts None too).

    >>> check_method(CORRECTION_METHODS, "holm", "correction").name
    'holm'
    >>> try:
    ...     check_method(CORRECTION_METHODS, "Holm", "correction", optional=True)
    ... except OptionError as error:
    ...     print(error.problem)
    is invalid; did you mean 'holm'? Expected None, 'holm' or 'bh'
    """
    entry = table.get(value) if isinstance(value, str) else None
    if entry is not None:
        return entry
    close = table.suggestions(value) if isinstance(value, str) else []
    hint = f"did you mean {' or '.join(repr(name) for name in close)}? " if close else ""
    names = table.names()
    listed = either(names) if not optional else (
        f"None, {either(names)}" if len(names) > 1 else f"None or {either(names)}"
    )
    expected = f"{'E' if close else 'e'}xpected {listed}"
    raise OptionError(
        f"{option}={value!r} {verb}; {hint}{expected}",
        option=option, value=value, problem=f"{verb}; {hint}{expected}",
    )
