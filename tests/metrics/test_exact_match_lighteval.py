"""The lighteval exact-match variants (quasi, prefix, suffix, gsm8k) of the exact-match family.

Expected values follow lighteval's ``ExactMatches.compute_one_item`` and
``F1_score.compute_one_item`` (metrics_sample.py), worked by hand in the comments.
"""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.registry import resolve
from tests._scores import unscored

NAMES = [
    "quasi_exact_match",
    "prefix_exact_match",
    "prefix_quasi_exact_match",
    "suffix_exact_match",
    "suffix_quasi_exact_match",
    "quasi_exact_match_gsm8k",
]


def _score(metric: str, prediction, gold) -> list[float | None]:
    frame = pl.DataFrame({"prediction": prediction, "gold": gold})
    return ef.score(frame, [metric])[metric].to_list()


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        # helm: "the eiffel-tower." -> "eiffel tower"
        ("The Eiffel-Tower.", "eiffel tower", 1.0),
        # helm: "1.0" -> "10" -> "10.0"; "10" -> "10.0"
        ("1.0", "10", 1.0),
        ("Paris France", "paris", 0.0),
        # raw empty prediction -> 0 before normalisation, even vs an empty gold
        ("", "", 0.0),
        # "The" is not empty; normalises to "" and equals gold "a" -> ""
        ("The", "a", 1.0),
        # strip then helm: whitespace only -> "" equals ""
        ("   ", "", 1.0),
    ],
)
def test_quasi_exact_match(prediction, gold, expected):
    assert _score("quasi_exact_match", [prediction], [gold]) == [expected]


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        # strip: "Paris, France".startswith("Paris")
        ("  Paris, France ", " Paris", 1.0),
        ("paris", "Paris", 0.0),
        # the gold is longer than the prediction
        ("Par", "Paris", 0.0),
        # empty gold: every non-empty prediction starts with ""
        ("anything", "", 1.0),
        ("", "", 0.0),
    ],
)
def test_prefix_exact_match(prediction, gold, expected):
    assert _score("prefix_exact_match", [prediction], [gold]) == [expected]


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        # "the parisian metro" -> "parisian metro" starts with "paris" (character prefix)
        ("The Parisian metro", "Paris!", 1.0),
        ("Lyon", "paris", 0.0),
        # gold "the" -> "": matches any non-empty prediction
        ("Lyon", "the", 1.0),
    ],
)
def test_prefix_quasi_exact_match(prediction, gold, expected):
    assert _score("prefix_quasi_exact_match", [prediction], [gold]) == [expected]


@pytest.mark.parametrize(
    ("metric", "prediction", "gold", "expected"),
    [
        # strip both: "It is Paris".endswith("Paris")
        ("suffix_exact_match", " It is Paris ", "Paris\n", 1.0),
        ("suffix_exact_match", "It is paris", "Paris", 0.0),
        # empty gold: str.endswith("") is True for a non-empty prediction
        ("suffix_exact_match", "x", "", 1.0),
        # helm: "the answer: paris." -> "answer paris" ends with "paris"
        ("suffix_quasi_exact_match", "The answer: Paris.", "PARIS", 1.0),
        # character suffix: "metroparis" ends with "paris"
        ("suffix_quasi_exact_match", "Metroparis", "paris", 1.0),
        ("suffix_quasi_exact_match", "Paris metro", "paris", 0.0),
    ],
)
def test_suffix_variants(metric, prediction, gold, expected):
    assert _score(metric, [prediction], [gold]) == [expected]


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        # both reduce to "1234"
        ("so #### 1,234", "#### 1234", 1.0),
        ("#### 12", "#### 13", 0.0),
        # neither has an answer: "[invalid]" == "[invalid]"
        ("no answer", "none either", 1.0),
    ],
)
def test_quasi_exact_match_gsm8k(prediction, gold, expected):
    assert _score("quasi_exact_match_gsm8k", [prediction], [gold]) == [expected]



def test_max_over_golds_and_predictions():
    # lighteval scores every (gold, prediction) pair and keeps max
    prediction = [["London", "paris"], ["x"]]
    gold = [["Berlin", "Paris."], ["y", "z"]]
    assert _score("quasi_exact_match", prediction, gold) == [1.0, 0.0]


def test_nulls_propagate_and_output_is_float64():
    frame = pl.DataFrame(
        {
            "prediction": [["a", None], None, ["a"], ["a"]],
            "gold": [["a"], ["a"], None, [None, "a"]],
        }
    )
    scored = ef.score(frame, NAMES)
    for name in NAMES:
        assert scored.schema[name] == pl.Float64
        assert unscored(scored, name).to_list() == [None, None, None, None], name


def test_empty_list_raises_naming_metric_column_count_and_row():
    frame = pl.DataFrame({"prediction": ["a", "b", "c"], "gold": [["a"], [], []]})
    # Rows are numbered in the input; the count covers the rows checked together.
    with pytest.raises(
        EvalframeError,
        match=r"'quasi_exact_match': [12] row\(s\) have an empty gold list.*column 'gold'",
    ):
        ef.score(frame, ["quasi_exact_match"])


def test_list_of_lists_gold_is_refused():
    frame = pl.DataFrame({"prediction": ["a"], "gold": [[["a"]]]})
    with pytest.raises(EvalframeError, match="gold"):
        ef.score(frame, ["quasi_exact_match"])


def test_row_order_lazy_and_chunked_identical():
    predictions = ["The cat", "", "dog", None, "a b c", "Paris"] * 50
    golds = [["cat"], ["x"], ["a dog"], ["y"], ["c d"], ["paris", "Lyon"]] * 50
    frame = pl.DataFrame({"prediction": predictions, "gold": golds})
    chunked = pl.concat([frame[:100], frame[100:]], rechunk=False)
    eager = ef.score(frame, NAMES)
    assert ef.score(frame.lazy(), NAMES).collect().equals(eager)
    assert ef.score(chunked, NAMES).equals(eager)
    # spot check the periodic pattern (qem): cat, empty->0, "dog" vs "dog", null, 0, paris
    assert unscored(eager, "quasi_exact_match").to_list()[:6] == [1.0, 0.0, 1.0, None, 0.0, 1.0]


def test_expression_level_and_suffix_variant():
    frame = pl.DataFrame({"p": ["The answer is Paris", "Paris is it"], "g": ["paris", "paris"]})
    out = frame.select(
        M.lighteval_exact_match("p", "g", normalizer="helm", match="suffix").alias("s")
    )
    # helm: "answer is paris".endswith("paris") -> 1; "paris is it" -> 0
    assert out["s"].to_list() == [1.0, 0.0]
    with pytest.raises(ValueError, match="match="):
        M.lighteval_exact_match("p", "g", match="middle")


def test_registry_specs_name_lighteval():
    for name in NAMES:
        spec, _ = resolve(name)
        assert spec.reference.package == "lighteval"
        assert spec.edge_rules
