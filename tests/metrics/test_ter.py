"""TER: statistics per row, the reduction's empty cases, options, errors, the signature."""

from __future__ import annotations

import builtins

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.ter import TER_SCORE, sacrebleu_signature

pytest.importorskip("sacrebleu", reason="sacrebleu is not installed")


def statistics(frame: pl.DataFrame, **options) -> list:
    return frame.select(M.ter("prediction", "gold", **options).alias("ter"))["ter"].to_list()


def test_best_edits_and_average_length_over_references():
    frame = pl.DataFrame({"prediction": ["a b c"], "gold": [["a b c d e", "x b c"]]})
    # 2 edits against the first (insert d, e), 1 against the second; lengths 5 and 3
    assert statistics(frame) == [{"num_edits": 1, "ref_length": 4.0}]


def test_null_references_are_dropped_and_all_null_gives_null():
    frame = pl.DataFrame({"prediction": ["a", "a", None, "a"],
                          "gold": [["a", None], [None, None], ["a"], None]})
    assert statistics(frame) == [{"num_edits": 0, "ref_length": 1.0}, None, None, None]


def test_case_and_punctuation_options():
    frame = pl.DataFrame({"prediction": ["Hello, World"], "gold": ["hello world"]})
    assert statistics(frame) == [{"num_edits": 1, "ref_length": 2.0}]
    assert statistics(frame, no_punct=True) == [{"num_edits": 0, "ref_length": 2.0}]
    assert statistics(frame, no_punct=True, case_sensitive=True) == [
        {"num_edits": 2, "ref_length": 2.0}
    ]


def test_reduction_empty_references():
    sums = {"num_edits": np.array([0.0, 3.0, 3.0]), "ref_length": np.array([0.0, 0.0, 4.0])}
    assert TER_SCORE.formula(sums).tolist() == [0.0, 100.0, 75.0]
    assert M.ter_score(1, 3.0) == 100 * (1 / 3.0)


def test_aggregate_is_the_corpus_formula():
    frame = pl.DataFrame({"prediction": ["a b", "c", ""], "gold": ["a x", "c d e", ""]})
    value = ef.aggregate(ef.score(frame, ["ter"]), metrics=["ter"])["value"].item()
    assert value == 100 * (3 / 5.0)


def test_empty_reference_list_raises():
    frame = pl.DataFrame({"prediction": ["a"], "gold": [[]]}, schema={
        "prediction": pl.String, "gold": pl.List(pl.String)})
    with pytest.raises(EvalframeError, match="empty gold list"):
        ef.score(frame, ["ter"])


def test_missing_sacrebleu_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name.startswith("sacrebleu"):
            raise ImportError("no sacrebleu")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    with pytest.raises(EvalframeError, match=r"evalframe\[ter\]"):
        M.ter("prediction", "gold")


def test_signature_strings():
    assert sacrebleu_signature() == (
        "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0"
    )
    assert sacrebleu_signature(nrefs=-1, no_punct=True).startswith("nrefs:var|")
    with pytest.raises(EvalframeError, match="nrefs"):
        sacrebleu_signature(nrefs=0)
