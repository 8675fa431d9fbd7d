"""Reductions: how a metric's per-row statistics become its score.

Every registered metric comes in two parts, as in sacrebleu
(``_compute_segment_statistics`` / ``_compute_score_from_stats``): its expression
gives per-row *statistics*, and its reduction turns the statistics of a group of
rows into the score. Reductions only ever see numbers, and they merge exactly:
the statistics of two partitions, concatenated, reduce to the score of the whole.

- :class:`Mean` (sample metrics): one ``Float64`` per row, the score is the mean.
- :class:`Sums` (corpus metrics whose score is a formula of column sums: perplexity,
  BLEU, chrF...): ``formula(sums)`` where ``sums`` maps each statistics field to
  its sums, one per table (a group, or a bootstrap replicate).
- :class:`Table` (corpus metrics over categories, such as a confusion matrix):
  ``formula(cells, counts)`` where ``cells`` are the distinct statistics rows and
  ``counts`` how often each occurs, one row of counts per table.

Formulas are vectorised over the leading axis (``m`` tables at once), which is what
makes the bootstrap a handful of numpy calls instead of a loop over replicates.

>>> import numpy as np
>>> ratio = Sums("ratio", lambda sums: sums["a"] / sums["b"])
>>> ratio.formula({"a": np.array([1.0, 3.0]), "b": np.array([2.0, 4.0])})
array([0.5 , 0.75])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Mean:
    """The mean of a ``Float64`` score per row: the reduction of every sample metric."""

    name: str = "mean"


@dataclass(frozen=True)
class Sums:
    """A score computed from the column sums of numeric statistics fields.

    ``formula`` maps field name -> ``np.ndarray`` of shape ``(m,)`` (the field's sum
    over the rows of each of ``m`` tables) to the ``(m,)`` scores, as ``float64``.
    """

    name: str
    formula: Callable[[Mapping[str, np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class Table:
    """A score computed from the counts of distinct statistics rows (a contingency table).

    ``formula(cells, counts)``: ``cells`` maps field name -> ``np.ndarray`` of shape
    ``(C,)``, the ``C`` distinct statistics rows (``cells["prediction"][j]``,
    ``cells["gold"][j]`` for a label pair); ``counts`` is ``(m, C)``, how often each
    cell occurs in each of ``m`` tables. A cell may have count 0 in a table (a
    bootstrap replicate that did not draw it): the formula must then treat it as
    absent, exactly as if the rows were not there. Returns ``(m,)`` ``float64``.
    """

    name: str
    formula: Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray]


Reduction = Mean | Sums | Table

#: The reduction of every sample metric.
MEAN = Mean()
