"""sacrebleu's paired significance tests over a corpus metric's statistics.

:func:`paired_bootstrap` and :func:`paired_ar` compare systems with a baseline exactly as
``sacrebleu --paired-bs`` and ``--paired-ar`` do (``sacrebleu.significance``, 2.x), on the
per-row statistics that :func:`evalframe.score` writes for a corpus metric whose score is a
formula of column sums (BLEU, chrF, TER, perplexity), or on the scores of a sample metric:

- **Paired bootstrap** (Koehn 2004, Moses' ``bootstrap-hypothesis-difference-significance``):
  ``B`` resamples of the items, drawn once with
  ``numpy.random.default_rng(seed).choice(N, size=(B, N))`` and applied to both systems;
  the test statistic of each resample is ``|score_sys - score_base|``, centred on its mean;
  ``p = (1 + #{stat > |observed|}) / (B + 1)``. The system's ``mean`` and ``ci`` are
  sacrebleu's: the mean of its resampled scores and half the width between the
  ``B // 40``-th smallest and largest (a 95% interval).
- **Approximate randomisation** (Riezler and Maxwell 2005, multeval): ``B`` trials that swap
  the two systems' statistics of each item with probability 1/2, drawn with
  ``default_rng(seed).integers(2, size=(B, N), dtype=bool)``; ``p = (1 + #{|a - b| >
  |observed|}) / (B + 1)``.

Seeds and sizes default to sacrebleu's (``SACREBLEU_SEED`` 12345; 1,000 resamples, 10,000
trials), and the draws are its draws, so the p-values are sacrebleu's on the same input.
Where they can differ: sacrebleu sums the bootstrap statistics as ``float32``, evalframe in
``float64`` (exact for counts below ``2**53``), so a resampled score can differ in its last
bits, which changes a p-value only when a resample ties the observed difference to within
``float32`` rounding; ``mean`` and ``ci`` agree to about ``1e-6``. sacrebleu counts
``stat > observed``, so a system compared with itself gets ``p = 1 / (B + 1)``: kept, as the
test's published rule (``evalframe.compare`` is the place for the ``>=`` rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.metrics.reduce import Mean, Sums
from evalframe.stats.columns import MetricColumn, find_columns

__all__ = ["SACREBLEU_SEED", "paired_ar", "paired_bootstrap"]

#: sacrebleu's default seed (its ``SACREBLEU_SEED`` environment variable).
SACREBLEU_SEED = 12345
#: Resamples (or trials) summed at once: bounds the ``(chunk, N)`` weight matrix.
CHUNK = 64

RESULT_COLUMNS = (
    "model", "metric", "score", "baseline_score", "difference", "p_value", "mean", "ci",
    "n", "test", "n_samples", "seed",
)  # fmt: skip


def paired_bootstrap(
    scored: pl.DataFrame | pl.LazyFrame,
    metric: str,
    *,
    baseline: Any,
    model: str = "model",
    on: str | Sequence[str] = "sample_id",
    n_samples: int = 1000,
    seed: int | None = SACREBLEU_SEED,
    request: str | None = None,
    rule: str = "sacrebleu",
) -> pl.DataFrame:
    """sacrebleu's paired bootstrap test of every model against ``baseline``.

    ``rule="sacrebleu"`` (default, for parity with ``sacrebleu --paired-bs``) centres the
    *absolute* resampled differences, ``|d*| - mean |d*|``, which is not the null
    distribution of ``|d|``: with equal systems it rejects about 12% of comparisons at
    0.05 (by simulation; see ``tests/stats/test_significance.py``). ``rule="centred"``
    centres the signed differences first, ``|d* - mean d*|`` (the bootstrap's estimate of
    the difference's null distribution, Efron and Tibshirani's shift), and rejects about
    5%: use it when the p-value is used to decide.

    Parameters
    ----------
    scored
        Scored rows of several models: the ``model`` column, the pairing key(s) ``on``, and
        the ``metric`` column (a corpus metric's statistics, or a sample metric's scores).
    metric
        The metric column; ``request`` names the metric behind it when the column is
        named otherwise (``"bleu(tokenize=intl)"``).
    baseline
        The baseline's value in the ``model`` column.
    n_samples, seed
        Resamples and the seed (sacrebleu's defaults; ``seed=None`` draws from the OS).
    rule
        ``"sacrebleu"`` or ``"centred"``: how the resampled differences become the null
        distribution (above).

    Returns
    -------
    One row per model, the baseline first: ``model, metric, score, baseline_score,
    difference, p_value`` (null for the baseline), ``mean, ci`` (sacrebleu's ``μ ± ci``),
    ``n`` items, ``test`` (``paired_bootstrap``, or ``paired_bootstrap(centred)``),
    ``n_samples``, ``seed``.

    Examples
    --------
    >>> import polars as pl
    >>> rows = pl.DataFrame({
    ...     "model": ["base"] * 4 + ["new"] * 4, "sample_id": [0, 1, 2, 3] * 2,
    ...     "exact_match": [0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0],
    ... })
    >>> table = paired_bootstrap(rows, "exact_match", baseline="base", n_samples=200)
    >>> table.select("model", "score", "difference").rows()
    [('base', 0.25, None), ('new', 0.75, 0.5)]
    """
    if rule not in ("sacrebleu", "centred"):
        raise EvalframeError(f"rule={rule!r} is invalid; expected 'sacrebleu' or 'centred'")
    test = "bs" if rule == "sacrebleu" else "bs_centred"
    return _paired(scored, metric, baseline, model, on, n_samples, seed, request, test)


def paired_ar(
    scored: pl.DataFrame | pl.LazyFrame,
    metric: str,
    *,
    baseline: Any,
    model: str = "model",
    on: str | Sequence[str] = "sample_id",
    n_samples: int = 10000,
    seed: int | None = SACREBLEU_SEED,
    request: str | None = None,
) -> pl.DataFrame:
    """sacrebleu's paired approximate randomisation test of every model against ``baseline``.

    Takes the parameters of :func:`paired_bootstrap` (``n_samples`` trials); ``mean`` and
    ``ci`` are null (sacrebleu's ``--paired-ar-confidence-n`` is not offered).

    >>> import polars as pl
    >>> rows = pl.DataFrame({
    ...     "model": ["base"] * 4 + ["new"] * 4, "sample_id": [0, 1, 2, 3] * 2,
    ...     "exact_match": [0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0],
    ... })
    >>> paired_ar(rows, "exact_match", baseline="base", n_samples=99)["p_value"][1]
    0.01

    No trial can differ by more than the observed 0.5 (two items differ, both in the new
    system's favour), and sacrebleu's rule counts only trials that exceed it: p is the
    smallest it can be, ``1 / (B + 1)``, on four items. The rule is sacrebleu's; the
    ``>=`` rule of :func:`evalframe.compare` (``method="randomization"``) gives about 0.5.
    """
    return _paired(scored, metric, baseline, model, on, n_samples, seed, request, "ar")


def _paired(
    scored: pl.DataFrame | pl.LazyFrame,
    metric: str,
    baseline: Any,
    model: str,
    on: str | Sequence[str],
    n_samples: int,
    seed: int | None,
    request: str | None,
    test: str,
) -> pl.DataFrame:
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 2:
        raise EvalframeError(f"n_samples={n_samples!r} must be an integer >= 2")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise EvalframeError(f"seed={seed!r} must be a non-negative integer or None")
    frame = scored.collect() if isinstance(scored, pl.LazyFrame) else scored
    keys = [on] if isinstance(on, str) else list(on)
    for name in [model, *keys]:
        if name not in frame.columns:
            raise EvalframeError(f"no column {name!r}; the columns: {frame.columns}")
    (column,) = find_columns(frame.lazy(), {metric: request} if request else [metric]).columns
    formula, fields = _formula(column, frame)
    models = frame.get_column(model).unique(maintain_order=True).to_list()
    if baseline not in models:
        raise EvalframeError(f"baseline {baseline!r} is not a value of {model!r}: {models}")
    systems = [baseline, *(name for name in models if name != baseline)]
    stats = {name: _stats(frame, model, name, keys, column.column, fields) for name in systems}
    base_keys, base = stats[baseline]
    n = base.shape[0]
    for name in systems[1:]:
        their_keys, _ = stats[name]
        if not their_keys.equals(base_keys):
            raise EvalframeError(
                f"model {name!r} and the baseline {baseline!r} are not scored on the same "
                f"items ({keys}): a paired test needs both on every item"
            )
    rng_seed = seed
    score = {name: float(formula(_as_sums(stats[name][1].sum(0, keepdims=True), fields))[0])
             for name in systems}
    rows = []
    if test in ("bs", "bs_centred"):
        index = np.random.default_rng(rng_seed).choice(n, size=(n_samples, n), replace=True)
        weights = _bootstrap_weights(index, n)
        resampled = {name: _resampled_scores(weights, stats[name][1], formula, fields)
                     for name in systems}
    else:
        swap = np.random.default_rng(rng_seed).integers(2, size=(n_samples, n), dtype=bool)
    for name in systems:
        row = {"model": name, "metric": column.column, "score": score[name],
               "baseline_score": score[baseline], "difference": None, "p_value": None,
               "mean": None, "ci": None, "n": n, "test": _TEST_NAMES[test],
               "n_samples": n_samples, "seed": seed}
        observed = abs(score[baseline] - score[name])
        if test in ("bs", "bs_centred"):
            row["mean"], row["ci"] = _estimate_ci(resampled[name])
            if name != baseline:
                signed = resampled[name] - resampled[baseline]
                if test == "bs":  # sacrebleu: the absolute differences, centred
                    statistic = np.abs(signed) - np.abs(signed).mean()
                else:  # the signed differences centred, then their size
                    statistic = np.abs(signed - signed.mean())
                row["p_value"] = _p_value(statistic, observed)
        elif name != baseline:
            a, b = _randomized_scores(swap, base, stats[name][1], formula, fields)
            row["p_value"] = _p_value(np.abs(a - b), observed)
        if name != baseline:
            row["difference"] = score[name] - score[baseline]
        rows.append(row)
    return pl.DataFrame(
        rows,
        schema={
            "model": frame.schema[model], "metric": pl.String, "score": pl.Float64,
            "baseline_score": pl.Float64, "difference": pl.Float64, "p_value": pl.Float64,
            "mean": pl.Float64, "ci": pl.Float64, "n": pl.UInt32, "test": pl.String,
            "n_samples": pl.UInt32, "seed": pl.Int64,
        },
    )


_TEST_NAMES = {
    "bs": "paired_bootstrap", "bs_centred": "paired_bootstrap(centred)", "ar": "paired_ar",
}


def _formula(column: MetricColumn, frame: pl.DataFrame) -> tuple[Any, list[str]]:
    """The score-from-sums formula and the statistics fields of ``column``."""
    reduction = column.reduction
    if isinstance(reduction, Mean):
        return (lambda sums: sums["score"] / sums["one"]), ["score", "one"]
    if not isinstance(reduction, Sums):
        raise EvalframeError(
            f"metric column {column.column!r}: its score comes from a table of label pairs, "
            "not from sums of statistics; sacrebleu's paired tests apply to sums "
            "(use evalframe.compare for it)"
        )
    dtype = frame.schema[column.column]
    assert isinstance(dtype, pl.Struct)
    return reduction.formula, [field.name for field in dtype.fields]


def _stats(
    frame: pl.DataFrame, model: str, name: Any, keys: list[str], column: str,
    fields: list[str],
) -> tuple[pl.DataFrame, np.ndarray]:
    """One system's items (sorted by key) and its statistics matrix ``(N, fields)``."""
    rows = frame.filter(pl.col(model) == name).sort(keys)
    repeated = rows.select(keys).is_duplicated()
    if repeated.any():
        raise EvalframeError(
            f"model {name!r} has {int(repeated.sum())} row(s) whose key {keys} repeats; "
            "each item must be scored once per model"
        )
    values = rows.get_column(column)
    nulls = values.null_count()
    if nulls:
        raise EvalframeError(
            f"model {name!r}: {nulls} row(s) of {column!r} are null (a missing answer or "
            "gold); a paired test needs every item scored (fill or drop them explicitly)"
        )
    if fields == ["score", "one"]:
        matrix = np.column_stack([values.cast(pl.Float64).to_numpy(), np.ones(len(values))])
    else:
        unnested = values.struct.unnest()
        matrix = np.column_stack(
            [unnested.get_column(field).cast(pl.Float64).to_numpy() for field in fields]
        )
    return rows.select(keys), matrix


def _as_sums(sums: np.ndarray, fields: list[str]) -> dict[str, np.ndarray]:
    return {field: sums[:, position] for position, field in enumerate(fields)}


def _bootstrap_weights(index: np.ndarray, n: int) -> np.ndarray:
    """How often each item is drawn in each resample, ``(B, N)``."""
    weights = np.zeros((index.shape[0], n), dtype=np.float64)
    rows = np.repeat(np.arange(index.shape[0]), index.shape[1])
    np.add.at(weights, (rows, index.ravel()), 1.0)
    return weights


def _resampled_scores(
    weights: np.ndarray, stats: np.ndarray, formula: Any, fields: list[str]
) -> np.ndarray:
    sums = np.concatenate(
        [weights[start:start + CHUNK] @ stats for start in range(0, len(weights), CHUNK)]
    )
    return np.asarray(formula(_as_sums(sums, fields)), dtype=np.float64)


def _randomized_scores(
    swap: np.ndarray, base: np.ndarray, system: np.ndarray, formula: Any, fields: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The two pseudo-systems' scores of every trial (sacrebleu's ``shuf_a``, ``shuf_b``)."""
    first, second = [], []
    for start in range(0, len(swap), CHUNK):
        keep = swap[start:start + CHUNK].astype(np.float64)
        first.append(keep @ base + (1.0 - keep) @ system)
        second.append((1.0 - keep) @ base + keep @ system)
    a = np.asarray(formula(_as_sums(np.concatenate(first), fields)), dtype=np.float64)
    b = np.asarray(formula(_as_sums(np.concatenate(second), fields)), dtype=np.float64)
    return a, b


def _p_value(statistics: np.ndarray, observed: float) -> float:
    """sacrebleu's ``_compute_p_value``: ``(1 + #{stat > observed}) / (B + 1)``."""
    return (int(np.count_nonzero(statistics > observed)) + 1) / (statistics.size + 1)


def _estimate_ci(scores: np.ndarray) -> tuple[float, float]:
    """sacrebleu's ``estimate_ci``: the mean and half the 95% range of sorted scores."""
    ordered = np.sort(scores)
    low = len(ordered) // 40
    high = len(ordered) - low - 1
    return float(ordered.mean()), float(0.5 * (ordered[high] - ordered[low]))
