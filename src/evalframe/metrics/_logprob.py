"""What a log-probability may be: the value rules the choice and perplexity metrics share.

A log-probability is ``log(p)`` for a probability ``p`` in [0, 1], so it lies in
``[-inf, 0]``. Models and serving stacks round: a log-softmax summed in float32 or
bfloat16 can come out a hair above 0 for a token the model is certain of. Values in
``(0, LOGPROB_TOLERANCE]`` are therefore accepted as rounding, and scored *as given*
(not rounded to 0), so every accepted input scores exactly as lm-evaluation-harness and
lighteval score it; their effect on any score is below ``1e-6`` relative (a probability
``exp(1e-6) = 1.000001``, a perplexity ``exp(-1e-6) = 0.999999``). Everything else that
no probability has is refused with :class:`evalframe.EvalframeError`, counted over the
whole input and naming the first offending row:

- NaN: nothing to compare, and it would silently win ``numpy.argmax`` (lm-eval) or make
  a whole group's perplexity NaN;
- ``+inf`` and any value above ``LOGPROB_TOLERANCE``: a probability above 1 (lm-eval and
  lighteval score them: ``+inf`` wins every argmax, a perplexity comes out below 1);
- ``-inf`` (probability 0) is a probability, and is accepted wherever the formula gives
  it a meaning (an argmax, a perplexity of ``inf``); where it would be subtracted (the
  unconditioned log-probabilities of PMI) it is refused too.

Neither reference checks these values (lm-evaluation-harness 0.4.13 ``process_results``
and ``weighted_perplexity``, lighteval 0.13.0 ``LoglikelihoodAcc``: all take any float).

>>> import polars as pl
>>> df = pl.DataFrame({"ll": [-1.0, 5e-7, 0.5, float("nan"), float("-inf"), None]})
>>> df.select(invalid(pl.col("ll"), minus_inf=True))["ll"].to_list()
[False, False, True, True, False, None]
"""

from __future__ import annotations

import numpy as np
import polars as pl

from evalframe._expr import RowCheck

__all__ = ["LOGPROB_TOLERANCE", "invalid", "invalid_values", "loglikelihood_checks"]

#: Log-probabilities up to this value above 0 are accepted (and scored as given) as rounding.
LOGPROB_TOLERANCE = 1e-6

#: How the rule reads in error messages and in the metric reference.
EXPECTED = f"a log-probability: <= 0 (up to {LOGPROB_TOLERANCE:g} above 0 is taken as rounding)"


def invalid(values: pl.Expr, *, minus_inf: bool) -> pl.Expr:
    """True where ``values`` is no log-probability: NaN, above the tolerance (``+inf``
    included), or ``-inf`` unless ``minus_inf``; null stays null."""
    # (polars orders NaN above every number: NaN > x is true)
    bad = values.is_nan() | (values > LOGPROB_TOLERANCE)
    if not minus_inf:
        bad = bad | (values == -np.inf)
    return bad


def invalid_values(values: np.ndarray, *, minus_inf: bool) -> np.ndarray:
    """:func:`invalid` for a float64 numpy array.

    >>> invalid_values(np.array([-1.0, 1e-6, 2e-6, np.nan, -np.inf]), minus_inf=False)
    array([False, False,  True,  True,  True])
    """
    with np.errstate(invalid="ignore"):
        bad = np.isnan(values) | (values > LOGPROB_TOLERANCE)
        if not minus_inf:
            bad |= values == -np.inf
    return bad


def loglikelihood_checks(ll: pl.Expr, role: str = "loglikelihood") -> list[RowCheck]:
    """The checks of a ``Float64`` log-likelihood column: not NaN, not above 0 (-inf allowed)."""
    shown = ((role, ll),)
    return [
        RowCheck(
            invalid=ll.is_nan(),
            what=f"a NaN {role}",
            expected=EXPECTED,
            show=shown,
        ),
        RowCheck(
            # polars orders NaN above every number: the NaN check reports those rows
            invalid=(ll > LOGPROB_TOLERANCE) & ~ll.is_nan(),
            what=f"a {role} above 0 (a probability above 1; +inf included)",
            expected=EXPECTED,
            show=shown,
        ),
    ]
