"""drop_em / drop_f1: fixture cases, roles and dtypes, nulls, errors, engine use.

Expected values come from tests/fixtures/drop_cases.json (lm-evaluation-harness
outputs with hand derivations) or from hand computation in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.registry import resolve
from tests._scores import inputs_and_scores

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "drop_cases.json"
CASES = json.loads(FIXTURE.read_text())["cases"]
SPANS = pl.List(pl.String)
NESTED = pl.List(pl.List(pl.String))


def _nested(gold):
    if isinstance(gold, str):
        return [[gold]]
    return [[alt] if isinstance(alt, str) else list(alt) for alt in gold]


def _spans(prediction):
    return [prediction] if isinstance(prediction, str) else list(prediction)


def _scores(predictions, golds, pred_dtype=SPANS, gold_dtype=NESTED):
    frame = pl.DataFrame(
        {"pred": predictions, "gold": golds}, schema={"pred": pred_dtype, "gold": gold_dtype}
    )
    out = frame.select(M.drop_em("pred", "gold"), M.drop_f1("pred", "gold"))
    return out["drop_em"].to_list(), out["drop_f1"].to_list()


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_fixture_cases(case):
    em, f1 = _scores([_spans(case["prediction"])], [_nested(case["gold"])])
    assert em == [case["em"]]
    assert f1 == [case["f1"]]


def test_fixture_cases_in_one_frame():
    # Scoring all cases together gives the same as one at a time (segment bookkeeping).
    em, f1 = _scores([_spans(c["prediction"]) for c in CASES], [_nested(c["gold"]) for c in CASES])
    assert em == [c["em"] for c in CASES]
    assert f1 == [c["f1"] for c in CASES]


def test_duplicate_spans_diverge_from_lighteval():
    # lighteval compares len(gold) == len(gold) and would give em 1.0 to both rows.
    em, f1 = _scores([["4", "4"], ["4"]], [[["4"]], [["4", "4"]]])
    assert em == [0.0, 0.0]
    assert f1 == [0.5, 0.5]  # one of two spans aligned with F1 1.0
    spec, _ = resolve("drop_em")
    assert any("len(gold) == len(gold)" in text for text in spec.divergences)


def test_role_dtypes_map_like_the_harness():
    # str prediction == one span; str gold == one alternative of one span;
    # list[str] gold == alternatives of one span each.
    by_str = _scores(["4 yards"], ["4"], pl.String, pl.String)
    by_list = _scores(["4 yards"], [["x", "4"]], pl.String, pl.List(pl.String))
    by_nested = _scores([["4 yards"]], [[["x"], ["4"]]])
    # '4 yards' vs '4': bags {4.0, yards} vs {4.0}: P=1/2, R=1, F1=2/3 -> 0.67; em 0.
    assert by_str == by_list == by_nested == ([0.0], [0.67])
    # A list[str] gold is alternatives, not spans: ["a", "b"] vs gold ["a", "b"] as spans
    # would be an exact match; as alternatives each has one span -> em 0, f1 1/2.
    assert _scores([["a", "b"]], [["a", "b"]], gold_dtype=pl.List(pl.String)) == ([0.0], [0.5])
    assert _scores([["a", "b"]], [[["a", "b"]]]) == ([1.0], [1.0])


def test_nulls_give_null_scores():
    em, f1 = _scores(
        [None, ["a", None], ["a"], ["a"], ["a"]],
        [[["a"]], [["a"]], None, [None, ["a"]], [["a", None]]],
    )
    assert em == [None] * 5
    assert f1 == [None] * 5


def test_empty_gold_and_empty_prediction():
    # No alternatives at all, or only blank ones: 0.0 (the harness's initial max).
    em, f1 = _scores([["a"], ["a"], []], [[], [[" "]], [["a"]]])
    assert em == [0.0, 0.0, 0.0]
    assert f1 == [0.0, 0.0, 0.0]


def test_alternative_without_spans_is_an_error():
    frame = pl.DataFrame({"pred": [["a"], ["b"], ["c"]], "gold": [[["a"]], [["b"], []], [[]]]},
                         schema={"pred": pl.List(pl.String), "gold": NESTED})
    with pytest.raises(
        EvalframeError, match=r"'drop_f1': 2 row\(s\).*no spans.*row: 1 \(gold=\[\['b'\], \[\]\]\)"
    ):
        frame.select(M.drop_f1("pred", "gold"))
    with pytest.raises(EvalframeError, match="drop_em"):
        frame.select(M.drop_em("pred", "gold"))


def test_engine_lazy_and_eager_agree_and_keep_rows():
    frame = pl.DataFrame(
        {"p": ["1,000", "the end", None, "x"], "g": [["1000"], ["end", "x"], ["a"], [" "]]}
    )
    eager = ef.score(frame, ["drop_em", "drop_f1"], columns={"prediction": "p", "gold": "g"})
    lazy = ef.score(frame.lazy(), ["drop_em", "drop_f1"], columns={"prediction": "p", "gold": "g"})
    assert eager.equals(lazy.collect())
    assert inputs_and_scores(eager, ["drop_em", "drop_f1"]).columns == [
        "p", "g", "drop_em", "drop_f1"]
    assert eager.schema["drop_f1"] == pl.Float64
    # row 2: no prediction, a missing answer, scored wrong and flagged
    assert eager["drop_em"].to_list() == [1.0, 1.0, 0.0, 0.0]
    assert eager["drop_f1"].to_list() == [1.0, 1.0, 0.0, 0.0]
    assert eager["drop_em:missing"].to_list() == [False, False, True, False]


def test_chunked_input_equals_one_batch():
    predictions = [["4"], ["a", "b"], ["x y"], ["7 yards"]] * 5
    golds = [[["4"]], [["b", "a"]], [["x"], ["y z"]], [["7"]]] * 5
    whole = _scores(predictions, golds)
    parts = [
        pl.DataFrame({"pred": predictions[i:i + 6], "gold": golds[i:i + 6]},
                     schema={"pred": pl.List(pl.String), "gold": NESTED})
        for i in range(0, 20, 6)
    ]
    chunked = pl.concat(parts, rechunk=False)
    assert chunked.n_chunks() > 1
    out = chunked.select(M.drop_em("pred", "gold"), M.drop_f1("pred", "gold"))
    assert (out["drop_em"].to_list(), out["drop_f1"].to_list()) == whole


def test_wrong_dtype_is_reported_by_the_engine():
    frame = pl.DataFrame({"prediction": [1], "gold": ["1"]})
    with pytest.raises(EvalframeError, match="prediction"):
        ef.score(frame, ["drop_em"])


@pytest.mark.parametrize(
    ("prediction", "gold", "message"),
    [
        ([1], ["1"], r"prediction input has dtype Int64; expected str or list\[str\]"),
        (["1"], [[[[1]]]], r"gold input has dtype .*; expected str, list\[str\] or list"),
    ],
)
def test_wrong_dtype_in_a_bare_expression(prediction, gold, message):
    frame = pl.DataFrame({"p": prediction, "g": gold})
    with pytest.raises(EvalframeError, match=message):
        frame.select(M.drop_f1("p", "g"))


def test_registry_specs():
    for name in ("drop_em", "drop_f1"):
        spec, _ = resolve(name)
        assert spec.roles() == ("prediction", "gold")
        assert spec.reference.package == "lm-eval" and spec.reference.version == "0.4.13"
        assert spec.dtypes["gold"] == ("str", "list[str]", "list[list[str]]")
        assert spec.edge_rules


def test_em_and_f1_together_score_each_row_once(monkeypatch):
    import evalframe.metrics.drop as drop_module

    rows_seen = []
    original = drop_module.score_batch

    def counting(batch):
        rows_seen.append(len(batch))
        return original(batch)

    monkeypatch.setattr(drop_module, "score_batch", counting)
    frame = pl.DataFrame({"pred": ["4"] * 500, "gold": ["4 yards"] * 500})
    out = frame.lazy().select(M.drop_em("pred", "gold"), M.drop_f1("pred", "gold")).collect()
    assert out["drop_em"].unique().to_list() == [0.0]
    assert out["drop_f1"].unique().to_list() == [0.67]  # P=1, R=1/2 -> 2/3
    assert sum(rows_seen) == 500
