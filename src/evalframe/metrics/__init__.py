"""Metric functions, each returning a ``pl.Expr``, and the registry that lists them.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"n": [10, 10, None], "c": [0, 3, 1]})
>>> df.with_columns(M.pass_at_k("n", "c", k=1).alias("pass@1"))
shape: (3, 3)
┌──────┬─────┬────────┐
│ n    ┆ c   ┆ pass@1 │
│ ---  ┆ --- ┆ ---    │
│ i64  ┆ i64 ┆ f64    │
╞══════╪═════╪════════╡
│ 10   ┆ 0   ┆ 0.0    │
│ 10   ┆ 3   ┆ 0.3    │
│ null ┆ 1   ┆ null   │
└──────┴─────┴────────┘
"""

from evalframe.metrics import (
    bleu,
    choice,
    chrf,
    classification,
    distance,
    drop,
    exact_match,
    inspect_scorers,
    judge,
    letters,
    math,
    pass_at_k,
    perplexity,
    rouge,
    sampling,
    squad,
    ter,
    word_overlap,
)
from evalframe.metrics.registry import (
    MetricSpec,
    Reference,
    all_metrics,
    list_metrics,
    register,
    resolve,
)

_FAMILIES = (
    exact_match, word_overlap, squad, pass_at_k, drop, sampling, classification, perplexity,
    choice, judge, chrf, distance, ter, rouge, bleu, letters, math, inspect_scorers,
)

for _family in _FAMILIES:
    globals().update({_name: getattr(_family, _name) for _name in _family.__all__})

__all__ = [
    "MetricSpec",
    "Reference",
    "all_metrics",
    "list_metrics",
    "register",
    "resolve",
    *(name for family in _FAMILIES for name in family.__all__),
]
