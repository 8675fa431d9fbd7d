"""How lighteval's ``copyright.json`` maps onto evalframe's string distances.

lighteval's ``Metrics.copyright`` is ``StringDistance(metric_types=[
"longest_common_prefix_length", "edit_distance", "edit_similarity"],
strip_prediction=True)``, a sample metric with one key per metric type; evalframe
registers the three under the same names, in the same semantics (strip the sample, cut
the first gold to its length, Treebank tokens). Each case is one document: the row's
``prediction`` is its one sample, ``gold`` its golds.

Case "Partial Match" by hand: the prediction has 35 characters, so the gold is cut to
``"Once upon a time there was a prince"``; the token lists differ in their eighth token
only: distance 1, similarity ``1 - 1/8 = 0.875``, common prefix 7.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from tests.conformance.lighteval_cases import Case, Check, frame


def _copyright(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.copyright = SampleLevelMetricGrouping(StringDistance(...)); its keys
    # are the metric types, which evalframe's metric names equal.
    names = ("longest_common_prefix_length", "edit_distance", "edit_similarity")
    return frame(case), [Check(name, name) for name in names]


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "copyright.json": _copyright,
}

#: Single cases of the mapped files that evalframe does not reproduce: none.
SKIPPED_CASES: dict[tuple[str, str], str] = {}
