"""exact_match: options, edge rules, nulls, errors (hand-computed values)."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from tests._scores import unscored


def em(pred, gold, **options):
    frame = pl.DataFrame({"p": pred, "g": gold})
    return frame.select(M.exact_match("p", "g", **options)).to_series().to_list()


def test_default_is_plain_equality():
    assert em(["a", "A", "a ", "", "a\x00"], ["a", "a", "a", "", "a"]) == [
        1.0, 0.0, 0.0, 1.0, 1.0  # trailing NUL ignored, as numpy string arrays do
    ]


def test_options():
    assert em(["The Cat!"], ["the cat"], ignore_case=True, ignore_punctuation=True) == [1.0]
    assert em(["abc123"], ["abc"], ignore_numbers=True) == [1.0]
    assert em(["1,000 USD"], ["1000"], regexes_to_ignore=[",", " USD"]) == [1.0]
    assert em(["\u3000x\x1c"], ["x"], strip=True) == [1.0]  # Python whitespace


def test_prefix_suffix():
    assert em(["answer is 42", "42 is it", "x"], [["42", "zz"], ["42"], [""]],
              match="suffix") == [1.0, 0.0, 1.0]
    assert em(["answer is 42", "42 is it", "x"], [["42"], ["zz", "42"], [""]],
              match="prefix") == [0.0, 1.0, 1.0]
    with pytest.raises(EvalframeError, match="match="):
        M.exact_match("p", "g", match="middle")


def test_nulls_and_alternatives():
    assert em([None, "x", "x", "x"], [["x"], None, [None, "x"], [None]]) == [
        None, None, 1.0, None
    ]


def test_empty_gold_list_is_an_error():
    frame = pl.DataFrame({"p": ["a", "b", "c"], "g": [["a"], [], []]})
    with pytest.raises(EvalframeError, match=r"2 row\(s\).*First offending row: 1"):
        frame.select(M.exact_match("p", "g"))
    with pytest.raises(EvalframeError, match="token_f1"):
        frame.select(M.token_f1("p", "g"))


def test_registered_and_scored():
    frame = pl.DataFrame({"prediction": ["a", "b"], "gold": ["a", "c"]})
    out = ef.score(frame, ["exact_match", "token_f1"])
    assert out["exact_match"].to_list() == [1.0, 0.0]
    assert out["token_f1"].to_list() == [1.0, 0.0]


def test_normalizer_option_is_applied_after_strip():
    # squad: " The Cat! " -> "cat"; gold "cat" -> match; unknown names are errors
    assert em([" The Cat! "], ["cat"], normalizer="squad") == [1.0]
    assert em([" The Cat! "], ["cat"]) == [0.0]
    with pytest.raises(EvalframeError, match="normalizer='nope' is unknown.*'squad'"):
        em(["a"], ["a"], normalizer="nope")


def test_empty_prediction_wrong_is_helms_rule():
    # HELM (evaluate_reference_metrics.exact_match): pred = completion.strip(); `if not pred:
    # return 0`; else gold.strip() == pred.strip(). "" and "  " are empty after strip: 0.0 even
    # against a gold that strips to ""; "\u3000" is Python whitespace, so empty too; " a" -> 1.0
    preds = ["", "  ", "\u3000", " a", "b"]
    golds = ["", " ", "", "a ", ""]
    assert em(preds, golds, strip=True, empty_prediction="wrong") == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert em(preds, golds, strip=True) == [1.0, 1.0, 1.0, 1.0, 0.0]  # compared as text
    # without strip the check reads the text as it is: "  " is not empty, and equals "  "
    assert em(["  ", ""], ["  ", ""], empty_prediction="wrong") == [1.0, 0.0]
    # HELM quasi_exact_match: normalize_text (SQuAD's) after the check; "The" normalises to ""
    # like the gold "a", so it matches; "" does not
    assert em(["The", ""], ["a", "a"], normalizer="squad", empty_prediction="wrong") == [
        1.0, 0.0
    ]
    # prefix: an empty gold is a prefix of every non-empty prediction, never of ""
    assert em(["x", ""], ["", ""], match="prefix", empty_prediction="wrong") == [1.0, 0.0]
    assert em([None], ["x"], empty_prediction="wrong") == [None]
    with pytest.raises(EvalframeError, match="empty_prediction='never' is invalid"):
        M.exact_match("p", "g", empty_prediction="never")
    with pytest.raises(EvalframeError, match=r"empty_prediction='no' is invalid.*'wrong'"):
        ef.score(pl.DataFrame({"prediction": ["a"], "gold": ["a"]}),
                 ["exact_match(empty_prediction=no)"])


# --- answer extraction: extractor= / gold_extractor= -------------------------------------

EXTRACTING = [
    "exact_match", "quasi_exact_match", "prefix_exact_match", "prefix_quasi_exact_match",
    "suffix_exact_match", "suffix_quasi_exact_match", "quasi_exact_match_gsm8k",
]


def test_extractor_end_to_end_through_score():
    frame = pl.DataFrame(
        {
            "prediction": ["so #### 1,000", "#### 7", "the answer is 3", None],
            "gold": ["1000", "8", "3", "1"],
        }
    )
    out = ef.score(frame, ["exact_match(extractor='gsm8k_answer')", "exact_match"])
    # '1000' == '1000'; '7' != '8'; '[invalid]' != '3'; null -> a missing answer: wrong
    assert out["exact_match(extractor='gsm8k_answer')"].to_list() == [1.0, 0.0, 0.0, 0.0]
    assert out["exact_match"].to_list() == [0.0, 0.0, 0.0, 0.0]
    assert out["exact_match:missing"].to_list() == [False, False, False, True]


def test_extractor_runs_before_the_other_options():
    # boxed first, then ignore_case / normalizer see the extracted answer only
    assert em(["The answer: \\boxed{PARIS}"], ["paris"], extractor="boxed",
              ignore_case=True) == [1.0]
    assert em(["\\boxed{ The Cat! }"], ["cat"], extractor="boxed", normalizer="squad") == [1.0]
    assert em(["\\boxed{ 5 }"], ["5"], extractor="boxed", strip=True) == [1.0]
    assert em(["\\boxed{ 5 }"], ["5"], extractor="boxed") == [0.0]


def test_gold_extractor_and_alternatives():
    pred, gold = ["#### 72", "#### 5"], ["Natalia sold 48/2 = 24 ... #### 72", "#### 6"]
    assert em(pred, gold, extractor="gsm8k_answer", gold_extractor="gsm8k_answer") == [1.0, 0.0]
    # a list of gold alternatives is extracted element by element
    assert em(["\\boxed{2}"], [["#### 1", "#### 2"]], extractor="boxed",
              gold_extractor="gsm8k_answer") == [1.0]


def test_a_failed_extraction_is_a_missing_answer():
    frame = pl.DataFrame(
        {"prediction": ["\\boxed{4}", "no box", None, "\\boxed{5}"], "gold": ["4", "3", "1", None]}
    )
    scored = ef.score(frame, ["exact_match(extractor=boxed)"])
    # the metric's own rule: no answer extracted, or none given, or no gold: null
    assert unscored(scored, "exact_match(extractor=boxed)").to_list() == [1.0, None, None, None]
    # scored: the two missing answers are wrong (flagged); the row without a gold is null
    assert scored["exact_match(extractor=boxed)"].to_list() == [1.0, 0.0, 0.0, None]
    assert scored["exact_match(extractor=boxed):missing"].to_list() == [
        False, True, True, False]
    row = ef.aggregate(scored).row(0, named=True)
    # 'no box' and the null response are missing answers (wrong by default); the row
    # without a gold is left out
    assert (row["n"], row["n_missing"], row["n_null"]) == (3, 2, 1)
    assert row["value"] == pytest.approx(1 / 3, rel=1e-12)
    excluded = ef.aggregate(scored, missing="exclude").row(0, named=True)
    assert (excluded["n"], excluded["value"]) == (1, 1.0)


def test_a_failed_gold_extraction_is_a_row_without_a_gold():
    frame = pl.DataFrame({"prediction": ["4", "5"], "gold": ["\\boxed{4}", "no box"]})
    scored = ef.score(frame, ["exact_match(gold_extractor=boxed)"])
    assert scored["exact_match(gold_extractor=boxed)"].to_list() == [1.0, None]
    row = ef.aggregate(scored).row(0, named=True)
    assert (row["n"], row["n_missing"], row["n_null"]) == (1, 0, 1)


@pytest.mark.parametrize("name", EXTRACTING)
def test_every_variant_takes_both_options(name):
    frame = pl.DataFrame({"prediction": ["It is \\boxed{Paris}", "x"],
                          "gold": ["#### 1 Paris", "#### 2"]})
    plain = ef.score(frame, [f"{name}(extractor=boxed, gold_extractor=last_number)"])
    assert plain.columns[-3] == f"{name}(extractor=boxed, gold_extractor=last_number)"
    described = ef.list_metrics().filter(pl.col("name") == name)["options"].item()
    assert "extractor: str" in described and "gold_extractor: str" in described
    with pytest.raises(EvalframeError, match="extractor='nope' is unknown"):
        ef.score(frame, [f"{name}(extractor=nope)"])


def test_lighteval_variants_extract_the_text_before_the_empty_check():
    # lighteval scores an empty prediction 0 even against an empty gold; with an extractor
    # the rule reads the extracted answer: '\boxed{}' gives '' -> 0.0
    frame = pl.DataFrame({"p": ["\\boxed{}", "\\boxed{ Paris }"], "g": ["", "paris"]})
    out = frame.select(
        M.quasi_exact_match("p", "g", extractor="boxed").alias("qem"),
        M.prefix_exact_match("p", "g", extractor="boxed").alias("pem"),
    )
    assert out["qem"].to_list() == [0.0, 1.0]
    assert out["pem"].to_list() == [0.0, 0.0]  # 'Paris' (stripped) does not start with 'paris'


def test_several_samples_are_extracted_one_by_one():
    frame = pl.DataFrame({"p": [["\\boxed{1}", "\\boxed{2}"], ["\\boxed{3}"]], "g": ["2", "2"]})
    out = frame.select(M.quasi_exact_match("p", "g", extractor="boxed"))
    assert out.to_series().to_list() == [1.0, 0.0]


def test_extractor_as_a_function():
    def after_colon(text: pl.Expr) -> pl.Expr:
        return text.str.extract(r":\s*(.*)$", 1)

    assert em(["Answer: 42", "no colon"], ["42", "no colon"], extractor=after_colon) == [
        1.0, None
    ]


def test_the_signature_records_the_extractor():
    from evalframe.metrics.request import parse_request
    from evalframe.stats.signature import score_signature

    def keys(text: str) -> list[str]:
        return [pair.split(":", 1)[0] for pair in score_signature(parse_request(text)).split("|")]

    plain = score_signature(parse_request("exact_match"))
    assert "|norm:none|extract:none|reduce:mean|" in plain
    assert "gold_extract" not in plain
    both = score_signature(
        parse_request("exact_match(extractor=boxed, gold_extractor=gsm8k_answer)")
    )
    assert "|extract:boxed|gold_extract:gsm8k_answer|reduce:mean|" in both
    assert "extractor" not in both.split("|")[1]  # not an opt: its own pair
    assert keys("quasi_exact_match(extractor=last_number)")[:3] == ["metric", "opts", "extract"]
    # metrics without the option keep their signature
    assert keys("squad_em") == ["metric", "opts", "reduce", "version"]
    assert keys("perplexity") == ["metric", "opts", "reduce", "version"]
