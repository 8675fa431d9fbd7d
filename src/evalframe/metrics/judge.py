"""Judge metrics: the win rate of a pairwise judgment.

:func:`win_rate` scores one pairwise comparison from its ``outcome`` (the row's verdict
after the position swap, as :mod:`evalframe.judge` classifies it): answer A's share of the
win. An inconsistent pair (the judge changed its mind when the answers swapped places)
is half a win each, so position bias cannot inflate either side. The mean over rows is
``(wins_a + 0.5 * (ties + inconsistent)) / n_valid``: FastChat MT-bench's
``win_rate_adjusted`` (``show_result.py``: "each tie counts as 0.5 win + 0.5 loss",
inconsistent pairs counted as ties) for model A.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"outcome": ["A", "B", "tie", "inconsistent", "error", None]})
>>> df.with_columns(M.win_rate("outcome").alias("win_rate"))
shape: (6, 2)
┌──────────────┬──────────┐
│ outcome      ┆ win_rate │
│ ---          ┆ ---      │
│ str          ┆ f64      │
╞══════════════╪══════════╡
│ A            ┆ 1.0      │
│ B            ┆ 0.0      │
│ tie          ┆ 0.5      │
│ inconsistent ┆ 0.5      │
│ error        ┆ null     │
│ null         ┆ null     │
└──────────────┴──────────┘
"""

from __future__ import annotations

import polars as pl

from evalframe._expr import IntoExpr, RowCheck, guard, parse_into_expr
from evalframe.metrics.registry import Reference, register
from evalframe.schema import STR

__all__ = ["win_rate"]

#: The outcomes of a pairwise judgment, and what each is worth to answer A.
OUTCOMES: dict[str, float | None] = {
    "A": 1.0,
    "B": 0.0,
    "tie": 0.5,
    "inconsistent": 0.5,
    "error": None,
}

FASTCHAT = "main@02d4581"


@register(
    "win_rate",
    roles=("outcome",),
    dtypes={"outcome": (STR,)},
    reference=Reference(
        "FastChat", FASTCHAT, "fastchat/llm_judge/show_result.py: win_rate_adjusted"
    ),
    description="Pairwise win rate of answer A: 1 for A, 0 for B, 0.5 for a tie or an "
    "inconsistent pair; errors left out",
    edge_rules=(
        "outcome 'A' scores 1.0, 'B' 0.0, 'tie' and 'inconsistent' 0.5 (inconsistent counts "
        "as a tie, as FastChat MT-bench's show_result does)",
        "'error' (an unparseable verdict) and a null outcome score null: aggregate counts them "
        "in n_null and leaves them out of the denominator",
        "labels compare exactly; any other value raises EvalframeError naming the row",
    ),
)
def win_rate(outcome: IntoExpr) -> pl.Expr:
    """Answer A's share of the win of one pairwise judgment, from its outcome.

    Parameters
    ----------
    outcome
        The outcome column (name or expression), one of ``"A"``, ``"B"``, ``"tie"``,
        ``"inconsistent"`` or ``"error"`` per row.

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1] per row: answer A's share of the win.

    Raises
    ------
    EvalframeError
        When the plan runs, for an outcome that is none of the five (the message names the
        first such row and its value).

    Notes
    -----
    The mean is ``(wins_a + 0.5 * (ties + inconsistent)) / n_valid`` with ``n_valid`` the
    rows that are not errors: FastChat MT-bench's ``win_rate_adjusted`` of model A. A judge
    that always picks the first slot makes every swapped pair inconsistent, so its win
    rate is exactly 0.5.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"outcome": ["A", "tie", "error"]})
    >>> df.select(win_rate("outcome")).to_series().to_list()
    [1.0, 0.5, None]
    """
    expr = parse_into_expr(outcome)
    known = list(OUTCOMES)
    values = expr.replace_strict(
        {label: value for label, value in OUTCOMES.items() if value is not None},
        default=None,
        return_dtype=pl.Float64,
    )
    unknown = RowCheck(
        invalid=expr.is_not_null() & ~expr.is_in(known),
        what="an outcome that is not a pairwise judgment's",
        expected=f"one of {', '.join(repr(label) for label in known)}",
        show=(("outcome", expr),),
    )
    return guard("win_rate", values, [unknown])
