"""String distance metrics: lighteval semantics, plain variants, edge rules, errors."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics import distance
from tests._scores import unscored

LIGHTEVAL = ["edit_distance", "edit_similarity", "longest_common_prefix_length"]


def score(frame: pl.DataFrame, names: list[str]) -> dict[str, list]:
    return ef.score(frame, names).select(names).to_dict(as_series=False)


def test_prediction_is_stripped_and_the_gold_cut_to_its_length():
    # 'abc de' (6 chars) cuts the gold to 'abc de', then Treebank tokens match fully
    frame = pl.DataFrame({"prediction": ["  abc de  "], "gold": ["abc def ghi"]})
    got = score(frame, LIGHTEVAL)
    assert got == {"edit_distance": [0.0], "edit_similarity": [1.0],
                   "longest_common_prefix_length": [2.0]}
    unstripped = frame.select(M.edit_distance("prediction", "gold", strip_prediction=False))
    # unstripped: 10 characters 'abc def gh' -> tokens abc def gh vs abc de -> 2 edits
    assert unstripped.item() == 2.0


def test_empty_sides_follow_lighteval():
    frame = pl.DataFrame({"prediction": ["", "a b", "   ", "a"], "gold": ["x y", "", "x", "a"]})
    got = score(frame, LIGHTEVAL)
    assert got["edit_distance"] == [0.0, 2.0, 0.0, 0.0]
    assert got["edit_similarity"] == [0.0, 0.0, 0.0, 1.0]
    assert got["longest_common_prefix_length"] == [0.0, 0.0, 0.0, 1.0]


def test_only_the_first_gold_counts_and_samples_take_the_best():
    frame = pl.DataFrame({"prediction": [["x y z", "a b q"]], "gold": [["a b c", "x y z"]]})
    got = score(frame, LIGHTEVAL)
    assert got == {"edit_distance": [1.0], "edit_similarity": [1.0 - 1 / 3],
                   "longest_common_prefix_length": [2.0]}
    plain = score(frame, ["word_edit_distance", "word_edit_similarity"])
    assert plain == {"word_edit_distance": [0.0], "word_edit_similarity": [1.0]}


def test_plain_variants_on_words_and_characters():
    frame = pl.DataFrame({"prediction": ["kitten", "a  b", "", "e\u0301"],
                          "gold": ["sitting", "a b", "", "é"]})
    got = score(frame, ["word_edit_distance", "word_edit_similarity", "char_edit_distance",
                        "char_edit_similarity"])
    assert got["word_edit_distance"] == [1.0, 0.0, 0.0, 1.0]
    assert got["word_edit_similarity"] == [0.0, 1.0, 1.0, 0.0]
    assert got["char_edit_distance"] == [3.0, 1.0, 0.0, 2.0]
    assert got["char_edit_similarity"] == [1 - 3 / 7, 0.75, 1.0, 0.0]


def test_nulls_give_null():
    frame = pl.DataFrame({"prediction": [["a", None], ["a"], None], "gold": [["a"], [None, "a"],
                                                                            ["a"]]})
    for name in [*LIGHTEVAL, "word_edit_distance", "char_edit_similarity"]:
        values = unscored(ef.score(frame, [name]), name).to_list()
        assert values == [None, None, None], name


@pytest.mark.parametrize("name", [*LIGHTEVAL, "char_edit_distance"])
def test_empty_lists_raise(name):
    for prediction, gold in (([], ["a"]), (["a"], [])):
        frame = pl.DataFrame({"prediction": [prediction], "gold": [gold]},
                             schema={"prediction": pl.List(pl.String), "gold": pl.List(pl.String)})
        with pytest.raises(EvalframeError, match="empty"):
            ef.score(frame, [name])


def test_metrics_requested_together_share_one_kernel_run(monkeypatch):
    calls = []
    original = distance._distances

    def counting(mode, strip, inputs):
        calls.append(mode)
        return original(mode, strip, inputs)

    monkeypatch.setattr(distance, "_distances", counting)
    frame = pl.DataFrame({"prediction": ["a b c", "d"], "gold": ["a b x", "d"]})
    frame.select(M.edit_distance("prediction", "gold"), M.edit_similarity("prediction", "gold"),
                 M.longest_common_prefix_length("prediction", "gold"))
    assert calls == ["lighteval"]
    frame.select(M.edit_distance("prediction", "gold", strip_prediction=False))
    assert calls == ["lighteval", "lighteval"]


def test_treebank_tokenize_keeps_nulls_and_splits_contractions():
    frame = pl.DataFrame({"text": ["I can't go, cannot!", None, ""]})
    assert frame.select(M.treebank_tokenize("text"))["text"].to_list() == [
        ["I", "ca", "n't", "go", ",", "can", "not", "!"], None, []
    ]


def test_registered_directions_and_references():
    specs = {name: ef.metrics.resolve(name)[0] for name in LIGHTEVAL}
    assert not specs["edit_distance"].higher_is_better
    assert specs["edit_similarity"].higher_is_better
    assert specs["edit_distance"].reference.package == "lighteval"
    assert ef.metrics.resolve("char_edit_distance")[0].bounds[1] == float("inf")
