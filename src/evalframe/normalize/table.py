"""The one table of text normalisers: name -> function, the reference it reproduces, meaning.

Every metric that normalises text takes ``normalizer=``: a name from this table, or a
function from ``pl.Expr`` to ``pl.Expr``. The name is what signatures record;
``evalframe normalizers`` and the metric reference list the table. Each normaliser is
registered beside its function, in the module of the reference it reproduces
(:data:`NORMALIZER_MODULES`).

>>> from evalframe.normalize.table import resolve_normalizer
>>> import polars as pl
>>> name, function = resolve_normalizer("exact_match", "squad")
>>> name, pl.select(function(pl.lit("The Cat!"))).item()
('squad', 'cat')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from evalframe._registry import UNKNOWN_OPTION, Registry
from evalframe.errors import EvalframeError

__all__ = ["NORMALIZERS", "Normalizer", "list_normalizers", "resolve_normalizer"]

TextFunction = Callable[[pl.Expr], pl.Expr]


@dataclass(frozen=True)
class Normalizer:
    """A named text normaliser: its function (None: the text as it is), reference, meaning."""

    name: str
    function: TextFunction | None
    reference: str
    meaning: str


#: The modules of :mod:`evalframe.normalize` that register normalisers, in the order the
#: table lists them.
NORMALIZER_MODULES = ("table", "harness", "squad", "helm", "math", "drop")

#: Every normaliser, by name.
NORMALIZERS: Registry[Normalizer] = Registry(
    "normalizer", make=Normalizer, package="evalframe.normalize", modules=NORMALIZER_MODULES,
    by_module=True, columns=("name", "reference", "meaning"), message=UNKNOWN_OPTION,
)

NORMALIZERS.add(Normalizer("none", None, "-", "the text as it is"), module=__name__)


def resolve_normalizer(
    metric: str, normalizer: str | TextFunction | None
) -> tuple[str, TextFunction | None]:
    """The (name, function) of ``normalizer``: a table name, a function, or None (``"none"``).

    A function that is not in the table is named by its ``__name__`` (in signatures:
    ``custom:<name>``). An unknown name is an :class:`evalframe.EvalframeError` that
    lists the table.
    """
    if normalizer is None:
        return "none", None
    if not isinstance(normalizer, str) and not callable(normalizer):
        raise EvalframeError(
            f"metric {metric!r}: normalizer={normalizer!r} is invalid; expected a name "
            f"({', '.join(map(repr, NORMALIZERS))}) or a function"
        )
    name, entry = NORMALIZERS.named(normalizer, f"metric {metric!r}")
    return name, normalizer if entry is None else entry.function


def list_normalizers() -> pl.DataFrame:
    """The normaliser table as a DataFrame.

    >>> list_normalizers()["name"].to_list()[:3]
    ['none', 'strip', 'squad']
    """
    return NORMALIZERS.frame()
