"""ROUGE metrics and rouge-score's tokenizer: behaviour, options, edge rules.

Expected values were computed with rouge-score 0.1.2 (``RougeScorer(...).score`` /
``score_multi`` and ``tokenizers.DefaultTokenizer``), as noted at each test; the full
comparison with the reference is in ``tests/conformance/test_rouge_conformance.py``.
"""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics import rouge
from evalframe.normalize import rouge_tokenize as T

pytest.importorskip("nltk", reason="nltk is not installed")
pytest.importorskip("rapidfuzz", reason="rapidfuzz is not installed")


# --- tokenizer ------------------------------------------------------------------------------

# DefaultTokenizer(use_stemmer=True).tokenize(text) of rouge-score 0.1.2
TOKENIZED = {
    "The runners were running!": ["the", "runner", "were", "run"],
    "Café 東京 déjà-vu": ["caf", "d", "j", "vu"],
    "İstanbul \u212a 3:45pm": ["i", "stanbul", "k", "3", "45pm"],
    "was eats ties dying sky skies agreed": ["was", "eat", "tie", "die", "sky", "sky", "agre"],
    "": [],
    "東京 Привет": [],
}


def test_tokenize_equals_rouge_score_default_tokenizer():
    frame = pl.DataFrame({"text": [*TOKENIZED, None]})
    tokens = frame.select(T.rouge_tokenize("text"))["text"].to_list()
    assert tokens == [*TOKENIZED.values(), None]


def test_tokens_of_three_characters_are_not_stemmed():
    # PorterStemmer().stem("was") == "wa" and stem("ties") == "tie": only the 4-letter
    # word is stemmed, as rouge-score's len(x) > 3 rule says
    frame = pl.DataFrame({"text": ["was ties his hiss"]})
    assert frame.select(T.rouge_tokenize("text"))["text"].to_list() == [
        ["was", "tie", "his", "hiss"]
    ]
    plain = frame.select(T.rouge_tokenize("text", use_stemmer=False))["text"].to_list()
    assert plain == [["was", "ties", "his", "hiss"]]


def test_each_distinct_word_is_stemmed_once(monkeypatch):
    calls: list[str] = []

    class Counting:
        def stem(self, word: str) -> str:
            calls.append(word)
            return word[:-1]

    monkeypatch.setattr(T, "_STEMMER", Counting())
    monkeypatch.setattr(T, "_STEMS", {})
    frame = pl.DataFrame({"text": ["zebras zebras ox", "ZEBRAS quokkas", "ox zebras"] * 50})
    tokens = frame.select(T.rouge_tokenize("text"))["text"].to_list()
    assert sorted(calls) == ["quokkas", "zebras"]
    assert tokens[:3] == [["zebra", "zebra", "ox"], ["zebra", "quokka"], ["ox", "zebra"]]
    frame.select(T.rouge_tokenize("text"))  # remembered: no more calls
    assert len(calls) == 2


def test_encode_texts_gives_equal_ids_to_equal_stems():
    encoded = T.encode_texts(pl.Series(["cats cat", "CAT!", None, "dog"]), use_stemmer=True)
    assert encoded.lengths.tolist() == [2, 1, 0, 1]
    ids = encoded.ids.tolist()
    assert ids[0] == ids[1] == ids[2] != ids[3]
    assert encoded.vocabulary == 2


# --- scores ---------------------------------------------------------------------------------


def test_known_scores():
    # RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=True)
    #   .score("The quick brown dog", "the quick brown fox"): 0.75, 0.6666666666666666, 0.75
    frame = pl.DataFrame({"p": ["the quick brown fox"], "g": ["The quick brown dog"]})
    scored = frame.select(
        M.rouge1("p", "g").alias("r1"), M.rouge2("p", "g").alias("r2"),
        M.rougeL("p", "g").alias("rL"), M.rougeLsum("p", "g").alias("rLsum"),
    ).row(0)
    assert scored == (0.75, 0.6666666666666666, 0.75, 0.75)


def test_several_references_max_is_score_multi():
    # score_multi(["a b c", "a"], "a b"): the first reference has the best F (0.8), so its
    # precision 1.0 and recall 0.6666666666666666 are reported, not the best recall (1.0)
    frame = pl.DataFrame({"p": ["a b"], "g": [["a b c", "a"]]})
    row = frame.select(
        M.rouge1("p", "g").alias("f"),
        M.rouge1("p", "g", score="precision").alias("p"),
        M.rouge1("p", "g", score="recall").alias("r"),
    ).row(0)
    assert row == (0.8, 1.0, 0.6666666666666666)


def test_ties_in_f_measure_take_the_first_reference():
    # score_multi(["a", "a b x y"], "a b"): both F = 2/3; the first (P 0.5, R 1.0) is used
    frame = pl.DataFrame({"p": ["a b"], "g": [["a", "a b x y"]]})
    assert frame.select(M.rouge1("p", "g", score="recall")).item() == 1.0
    reverse = pl.DataFrame({"p": ["a b"], "g": [["a b x y", "a"]]})
    assert reverse.select(M.rouge1("p", "g", score="recall")).item() == 0.5


def test_mean_aggregation_averages_the_field():
    # score("a b c", "a b").fmeasure = 0.8, score("a", "a b").fmeasure = 0.6666666666666666
    frame = pl.DataFrame({"p": ["a b"], "g": [["a b c", "a"]]})
    value = frame.select(M.rouge1("p", "g", aggregation="mean")).item()
    assert value == (0.8 + 0.6666666666666666) / 2


def test_empty_and_untokenizable_sides_score_zero():
    frame = pl.DataFrame(
        {"p": ["", "", "abc", "東京", "...", " \n "], "g": ["", "abc", "", "東京", "...", "a"]}
    )
    for function in (M.rouge1, M.rouge2, M.rougeL, M.rougeLsum):
        assert frame.select(function("p", "g"))["p"].to_list() == [0.0] * 6


def test_nulls_and_null_references():
    frame = pl.DataFrame(
        {"p": ["a b", None, "a b", "a b"], "g": [["a b"], ["a"], [None, "a b"], [None, None]]}
    )
    assert frame.select(M.rouge1("p", "g"))["p"].to_list() == [1.0, None, 1.0, None]


def test_empty_gold_list_raises():
    frame = pl.DataFrame({"p": ["a", "b"], "g": [["a"], []]}, schema_overrides={
        "g": pl.List(pl.String)
    })
    with pytest.raises(EvalframeError, match="rouge1.*empty gold list"):
        frame.select(M.rouge1("p", "g"))


def test_rougeLsum_splits_on_newlines_only():
    # score("on the mat\nthe cat sat", "the cat sat\non the mat"): rougeLsum 1.0, rougeL 0.5
    frame = pl.DataFrame({"p": ["the cat sat\non the mat"], "g": ["on the mat\nthe cat sat"]})
    assert frame.select(M.rougeLsum("p", "g"), M.rougeL("p", "g").alias("L")).row(0) == (1.0, 0.5)
    carriage = pl.DataFrame({"p": ["the cat sat\ron the mat"], "g": ["on the mat\rthe cat sat"]})
    assert carriage.select(M.rougeLsum("p", "g")).item() == 0.5


def test_normalizer_applies_to_both_sides():
    frame = pl.DataFrame({"p": ["The cat!"], "g": ["a cat"]})
    # squad's normaliser drops the articles: "cat" against "cat"
    assert frame.select(M.rouge1("p", "g", normalizer="squad")).item() == 1.0
    assert frame.select(M.rouge1("p", "g")).item() == 0.5


def test_rouge_t5_scales_by_100_and_reads_the_first_reference_only():
    # lighteval rouge_t5 fixture "ROUGE T5 - Partial Match": 61.53846153846153 (rougeLsum)
    frame = pl.DataFrame(
        {"p": ["The quick brown fox"],
         "g": [["The quick brown fox jumps over the lazy dog", "The quick brown fox"]]}
    )
    assert frame.select(M.rouge_t5("p", "g")).item() == 100 * 0.6153846153846153
    assert frame.select(M.rouge1("p", "g")).item() == 1.0
    null_first = pl.DataFrame({"p": ["a"], "g": [[None, "a"]]})
    assert null_first.select(M.rouge_t5("p", "g")).item() is None


def test_rouge_t5_ends_sentences_at_spaced_periods():
    # bigbench_normalizer: " . " -> ".\n", so rougeLsum sees two sentences on each side
    frame = pl.DataFrame({"p": ["the cat sat . on the mat"], "g": ["on the mat . the cat sat"]})
    assert frame.select(M.rouge_t5("p", "g")).item() == 100.0
    assert frame.select(M.rouge_t5("p", "g", rouge_type="rougeL")).item() == 50.0


def test_rouge_n_for_other_sizes():
    frame = pl.DataFrame({"p": ["a b c d"], "g": ["a b c x"]})
    # score("a b c x", "a b c d") for rouge3: 1 of 2 trigrams on each side
    assert frame.select(M.rouge_n("p", "g", n=3)).item() == 0.5
    with pytest.raises(EvalframeError, match="from 1 to 9"):
        M.rouge_n("p", "g", n=0)


@pytest.mark.parametrize(
    ("request_text", "message"),
    [
        ("rouge1(score=f1)", "score"),
        ("rouge2(aggregation=median)", "aggregation"),
        ("rougeL(use_stemmer=1)", "use_stemmer"),
        ("rouge_t5(rouge_type=rouge3)", "rouge_type"),
        ("rouge_t5(use_stemmer=true)", "no option 'use_stemmer'"),
    ],
)
def test_invalid_options_raise(request_text, message):
    frame = pl.DataFrame({"prediction": ["a"], "gold": ["a"]})
    with pytest.raises(EvalframeError, match=message):
        ef.score(frame, [request_text])


def test_direct_calls_check_options():
    with pytest.raises(EvalframeError, match="score='f1'"):
        M.rouge1("p", "g", score="f1")
    with pytest.raises(EvalframeError, match="rouge_type"):
        M.rouge_t5("p", "g", rouge_type="rouge3")


def test_metrics_requested_together_encode_once(monkeypatch):
    calls: list[int] = []
    encode = rouge._encode

    def counting(*args, **kwargs):
        calls.append(len(args[0]))
        return encode(*args, **kwargs)

    monkeypatch.setattr(rouge, "_encode", counting)
    frame = pl.DataFrame({"p": ["a b c", "d e"] * 100, "g": ["a c", "e"] * 100})
    frame.lazy().with_columns(M.rouge1("p", "g").alias("one")).collect()
    alone = sum(calls)
    calls.clear()
    frame.lazy().with_columns(
        M.rouge1("p", "g").alias("one"), M.rouge2("p", "g").alias("two"),
        M.rougeL("p", "g").alias("l"), M.rougeLsum("p", "g").alias("lsum"),
    ).collect()
    assert sum(calls) == alone == frame.height


def test_registry_entries():
    table = ef.list_metrics().filter(pl.col("name").str.starts_with("rouge"))
    assert sorted(table["name"]) == ["rouge1", "rouge2", "rougeL", "rougeLsum", "rouge_t5"]
    row = table.filter(pl.col("name") == "rouge1").row(0, named=True)
    assert row["reference"].startswith("rouge-score 0.1.2")
    assert "use_stemmer: bool = true" in row["options"]
    spec, _ = M.resolve("rouge_t5")
    assert spec.bounds == (0.0, 100.0)
