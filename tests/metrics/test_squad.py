"""squad_em / squad_f1: edge rules, nulls, dtypes, sharing of the normalisation.

Expected values are computed by hand (shown in comments); the conformance tests
compare against the official script on many more inputs.
"""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import metrics as M

LIST_STR = pl.List(pl.String)


def run(pred, gold, gold_dtype=LIST_STR):
    frame = pl.DataFrame({"pred": pred, "gold": gold},
                         schema={"pred": pl.String, "gold": gold_dtype})
    out = frame.select(M.squad_em("pred", "gold").alias("em"),
                       M.squad_f1("pred", "gold").alias("f1"))
    return out["em"].to_list(), out["f1"].to_list()


def test_hand_computed_values():
    em, f1 = run(
        ["the cat sat", "cat cat", "Paris France", "x"],
        [["A cat sat down"], ["cat"], ["Paris", "France"], ["y z"]],
    )
    # "cat sat" vs "cat sat down": same 2, p = 2/2, r = 2/3 -> 2*1*(2/3)/(1+2/3) = 0.8
    # "cat cat" vs "cat": same 1 (multiset), p = 1/2, r = 1 -> 2/3
    # "paris france" vs "paris": p = 1/2, r = 1 -> 2/3 (same for "france")
    assert em == [0.0, 0.0, 0.0, 0.0]
    assert f1 == [(2 * 1.0 * (2 / 3)) / (1.0 + 2 / 3), (2 * 0.5 * 1.0) / 1.5,
                  (2 * 0.5 * 1.0) / 1.5, 0.0]


def test_unanswerable_and_empty_golds():
    em, f1 = run(
        ["", "x", "", "", "x", "the"],
        [[], [], ["the", "..."], ["", "y"], ["", "x"], [" "]],
    )
    # empty list -> gold [""]: "" matches, "x" does not
    # golds normalising to "" are dropped: ["the", "..."] -> [""] -> "" matches
    # ["", "y"] -> ["y"]: "" does not match; ["", "x"] -> ["x"]: "x" matches
    # "the" normalises to "" and [" "] -> [""]: match
    assert em == [1.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    assert f1 == [1.0, 0.0, 1.0, 0.0, 1.0, 1.0]


def test_nulls():
    em, f1 = run(
        [None, "x", "x", "x", "x"],
        [["x"], None, [None], [None, "x"], [None, None]],
    )
    # null prediction or gold -> null; null alternatives skipped; all null -> null
    assert em == [None, None, None, 1.0, None]
    assert f1 == [None, None, None, 1.0, None]


def test_gold_as_one_string():
    em, f1 = run(["The Cat", "dog", None, ""], ["cat", None, "x", ""], gold_dtype=pl.String)
    assert em == [1.0, None, None, 1.0]
    assert f1 == [1.0, None, None, 1.0]


def test_all_null_columns():
    frame = pl.DataFrame({"prediction": [None, None], "gold": [None, None]})
    out = ef.score(frame, ["squad_em", "squad_f1"])
    assert out["squad_em"].to_list() == [None, None]
    assert out.schema["squad_f1"] == pl.Float64


def test_score_lazy_eager_and_chunks_agree():
    pred = ["a b", "c", None, "d e f", ""] * 20
    gold = [["b"], ["c", "x"], ["y"], ["d f", "e"], []] * 20
    frame = pl.DataFrame({"prediction": pred, "gold": gold})
    eager = ef.score(frame, ["squad_em", "squad_f1"])
    lazy = ef.score(frame.lazy(), ["squad_em", "squad_f1"]).collect()
    chunked = ef.score(pl.concat([frame[:37], frame[37:]], rechunk=False),
                       ["squad_em", "squad_f1"])
    assert eager.equals(lazy) and eager.equals(chunked)


def test_em_and_f1_share_one_kernel():
    frame = pl.DataFrame({"pred": ["a"], "gold": [["a"]]}).lazy()
    plan = frame.with_columns(M.squad_em("pred", "gold").alias("em"),
                              M.squad_f1("pred", "gold").alias("f1")).explain()
    # One kernel scores both metrics, computed once (a common subexpression).
    assert plan.count("python_udf") == 1
    assert "__POLARS_CSER" in plan


@pytest.mark.parametrize("name", ["squad_em", "squad_f1"])
def test_registered(name):
    spec, _ = M.resolve(name)
    assert spec.reference.package == "transformers"
    assert spec.edge_rules


def test_sharing_survives_other_text_metrics_in_the_same_call():
    # A list.eval anywhere in a with_columns turns polars' CSE off for all of it.
    frame = pl.DataFrame({"pred": ["a"], "gold": [["a"]]}).lazy()
    plan = frame.with_columns(M.squad_em("pred", "gold").alias("em"),
                              M.squad_f1("pred", "gold").alias("f1"),
                              M.exact_match("pred", "gold", ignore_case=True).alias("x"),
                              M.token_f1("pred", "gold").alias("t")).explain()
    assert "list.eval" not in plan
    assert "__POLARS_CSER" in plan


def test_save_scores_in_streaming_slices_and_collect_in_the_larger_ones(tmp_path, monkeypatch):
    """A save streams with the small slice budget; an in-memory query uses the default."""
    import evalframe as ef
    from evalframe import _slices
    from evalframe.metrics import squad as squad_module

    budgets = []

    def recording(row_bytes, budget=None):
        budgets.append(_slices.slice_budget())
        return _slices.byte_slices(row_bytes, budget)

    monkeypatch.setattr(squad_module, "byte_slices", recording)
    frame = pl.LazyFrame({"pred": ["a cat", "x"], "gold": [["cat"], ["y"]]})
    scored = frame.with_columns(M.squad_f1("pred", "gold").alias("f1"))
    collected = scored.collect()
    assert set(budgets) == {_slices.TEXT_SLICE_BYTES}
    budgets.clear()
    ef.save(scored, tmp_path / "scored.parquet")
    assert set(budgets) == {_slices.STREAM_SLICE_BYTES}
    assert pl.read_parquet(tmp_path / "scored.parquet").equals(collected)
    assert _slices.slice_budget() == _slices.TEXT_SLICE_BYTES


@pytest.mark.slow
def test_a_batch_scored_in_slices_equals_the_whole(monkeypatch):
    """Slices of a few bytes (one row each, or a few) give the values of one pass."""
    import functools

    from evalframe import _slices
    from evalframe.metrics import squad as squad_module

    pred = ["the cat sat", None, "", "Paris, France", "ÉLAN naïve", "x y z", "a", "cat"] * 5
    gold = [["A cat sat down"], ["x"], [], ["paris", None], ["élan"], None, ["an"], [None]] * 5
    whole = run(pred, gold)
    for budget in (1, 7, 30):
        monkeypatch.setattr(
            squad_module, "byte_slices", functools.partial(_slices.byte_slices, budget=budget)
        )
        assert run(pred, gold) == whole
