"""Predictions beside golds, and metadata beside scores: nothing unmatched is lost or hidden."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.join import join_gold, join_metadata


def joined(predictions, golds, on="id", **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = join_gold(predictions.lazy(), golds.lazy(), on, **kwargs).collect()
    return frame, [str(w.message) for w in caught]


def test_every_gold_key_gets_a_row_in_gold_order_and_unknown_predictions_follow():
    golds = pl.DataFrame({"id": ["c", "a", "b"], "gold": ["C", "A", "B"]})
    preds = pl.DataFrame({"id": ["a", "zz", "c"], "prediction": ["A", "Z", None]})
    frame, messages = joined(preds, golds)
    assert frame.rows() == [("c", "C", None), ("a", "A", "A"), ("b", "B", None), ("zz", None, "Z")]
    # "c" has an explicit null prediction: a missing answer, but not a missing key
    assert len(messages) == 1
    assert messages[0].startswith("1 of 3 gold key(s) have no prediction")
    assert "first id='b'" in messages[0]
    assert "1 prediction(s) have a key the golds do not hold" in messages[0]
    assert "first id='zz'" in messages[0]


def test_predictions_of_several_models_are_matched_per_model():
    golds = pl.DataFrame({"id": ["q1", "q2"], "gold": ["x", "y"]})
    preds = pl.DataFrame(
        {"model": ["m1", "m1", "m2"], "id": ["q1", "q2", "q2"], "prediction": ["x", "y", "y"]}
    )
    frame, messages = joined(preds, golds)
    assert frame.rows() == [
        ("m1", "q1", "x", "x"),
        ("m1", "q2", "y", "y"),
        ("m2", "q1", "x", None),
        ("m2", "q2", "y", "y"),
    ]
    assert "model='m2', id='q1'" in messages[0]


def test_missing_predictions_count_as_wrong_in_the_aggregate():
    golds = pl.DataFrame({"id": ["q1", "q2", "q3", "q4"], "gold": ["a", "b", "c", "d"]})
    preds = pl.DataFrame({"id": ["q1", "q2"], "prediction": ["a", "x"]})
    with pytest.warns(UserWarning, match="2 of 4 gold key"):
        scored = ef.score(preds, ["exact_match"], gold=golds, on="id")
    row = ef.aggregate(scored).row(0, named=True)
    # hand computation: 1 right of 4 questions, the 2 unanswered counted as wrong
    assert (row["n"], row["n_missing"], row["value"]) == (4, 2, 0.25)
    excluded = ef.aggregate(scored, missing="exclude").row(0, named=True)
    assert (excluded["n"], excluded["value"]) == (2, 0.5)


@pytest.mark.parametrize(
    ("preds", "golds", "message"),
    [
        ({"id": ["a", "a"], "prediction": ["x", "y"]}, {"id": ["a"], "gold": ["x"]},
         r"the predictions repeats keys \['id'\]: 2 row\(s\)"),
        ({"id": ["a"], "prediction": ["x"]}, {"id": ["a", "a"], "gold": ["x", "y"]},
         r"the gold input repeats keys"),
        ({"id": [None, "a"], "prediction": ["x", "y"]}, {"id": ["a"], "gold": ["x"]},
         r"the predictions has 1 row\(s\) with a null key \['id'\], first row 0"),
        ({"id": [1], "prediction": ["x"]}, {"id": ["1"], "gold": ["x"]},
         r"key column 'id' is Int64 in the predictions but String in the gold input"),
        ({"id": ["a"], "prediction": ["x"], "question": ["q"]},
         {"id": ["a"], "gold": ["x"], "question": ["q"]},
         r"column\(s\) \['question'\] are in both"),
        ({"key": ["a"], "prediction": ["x"]}, {"id": ["a"], "gold": ["x"]},
         r"the predictions input has no column\(s\) \['id'\]"),
    ],
)
def test_bad_keys_are_errors(preds, golds, message):
    with pytest.raises(EvalframeError, match=message):
        join_gold(pl.LazyFrame(preds), pl.LazyFrame(golds), "id")


def test_gold_and_on_go_together():
    with pytest.raises(EvalframeError, match="gold= and on= go together"):
        ef.score(pl.DataFrame({"id": ["a"], "prediction": ["x"]}), ["exact_match"], on="id")


def test_composite_keys():
    golds = pl.DataFrame({"task": ["t", "t", "u"], "i": [0, 1, 0], "gold": ["a", "b", "c"]})
    preds = pl.DataFrame({"task": ["u", "t"], "i": [0, 1], "prediction": ["c", "b"]})
    frame, messages = joined(preds, golds, on=["task", "i"])
    assert frame.rows() == [("t", 0, "a", None), ("t", 1, "b", "b"), ("u", 0, "c", "c")]
    assert "task='t', i=0" in messages[0]


def test_join_metadata_keeps_every_row_and_reports_unmatched_keys(tmp_path):
    scores = pl.DataFrame({"model": ["a", "b", "c", "c", None], "value": [1.0, 2.0, 3.0, 4.0, 5.0]})
    path = tmp_path / "models.csv"
    path.write_text("model,params_b,family\na,7,llama\nb,70,llama\nunused,1,x\n", encoding="utf-8")
    expected = r"2 of 4 key\(s\) \['model'\] in the table have no metadata"
    with pytest.warns(UserWarning, match=expected):
        table = join_metadata(scores, path, on="model")
    assert table.rows() == [
        ("a", 1.0, 7, "llama"), ("b", 2.0, 70, "llama"), ("c", 3.0, None, None),
        ("c", 4.0, None, None), (None, 5.0, None, None),
    ]
    lazy = join_metadata(scores.lazy().filter(pl.col("model") == "a"), path)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["params_b"].to_list() == [7]


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ("model,p\na,1\na,2\n", "the metadata repeats keys"),
        ("model,value\na,1\n", r"column\(s\) \['value'\] are in both"),
        ("name,p\na,1\n", r"the metadata has no column\(s\) \['model'\]"),
        ("model,p\n1,1\n", "key column 'model' is String in the table but Int64 in the metadata"),
    ],
)
def test_join_metadata_errors(tmp_path, metadata, message):
    path = tmp_path / "m.csv"
    path.write_text(metadata, encoding="utf-8")
    with pytest.raises(EvalframeError, match=message):
        join_metadata(pl.DataFrame({"model": ["a"], "value": [1.0]}), path)
