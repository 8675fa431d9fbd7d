"""The perplexity family: hand computations, lm-eval's counting rules, edges, errors, merging."""

from __future__ import annotations

import math
import random
import re

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.perplexity import (
    BYTE_STATISTICS,
    DOCUMENT_STATISTICS,
    TOKEN_STATISTICS,
    WORD_STATISTICS,
    count_bytes,
    count_words,
)
from evalframe.metrics.registry import resolve
from evalframe.normalize._python_text import whitespace_characters

NAMES = ["word_perplexity", "byte_perplexity", "bits_per_byte", "token_perplexity", "perplexity"]


def statistics(frame: pl.DataFrame, name: str, **columns) -> pl.Series:
    spec, _ = resolve(name)
    return frame.select(spec.function(**columns).alias(name))[name]


def reduce(name: str, stats: pl.Series | pl.DataFrame) -> float:
    """The metric's formula on the column sums of its statistics (null rows left out)."""
    spec, _ = resolve(name)
    fields = stats.struct.unnest() if isinstance(stats, pl.Series) else stats
    sums = {field: np.array([fields[field].sum()]) for field in fields.columns}
    return float(spec.reduction().formula(sums)[0])


def score(frame: pl.DataFrame, name: str, **columns) -> float:
    return reduce(name, statistics(frame, name, **columns))


def words(texts: list[str | None]) -> list[int | None]:
    return pl.select(count_words(pl.lit(pl.Series(texts, dtype=pl.String)))).to_series().to_list()


# --- hand computations -------------------------------------------------------------------

DOCS = pl.DataFrame(
    {
        "ll": [-6.0, -2.0, None, -4.0],
        # "a b c": 3 words, 5 bytes; " x ": 3 words ("", "x", ""), 3 bytes;
        # "été": 1 word, 5 bytes (é is 2 bytes).
        "text": ["a b c", " x ", "ignored", "été"],
        "n_tokens": [3, 1, 5, 4],
    }
)


def test_word_perplexity_by_hand():
    # scored rows 0, 1, 3: sum ll = -12, words 3 + 3 + 1 = 7 -> exp(12 / 7)
    stats = statistics(DOCS, "word_perplexity", loglikelihood="ll", text="text")
    assert stats.to_list() == [
        {"loglikelihood": -6.0, "n_words": 3},
        {"loglikelihood": -2.0, "n_words": 3},
        None,
        {"loglikelihood": -4.0, "n_words": 1},
    ]
    assert reduce("word_perplexity", stats) == math.exp(12 / 7)  # 5.5527...


def test_byte_perplexity_and_bits_per_byte_by_hand():
    # bytes 5 + 3 + 5 = 13: byte perplexity exp(12 / 13) = 2.5170; bits 12/13/ln 2 = 1.33172
    stats = statistics(DOCS, "byte_perplexity", loglikelihood="ll", text="text")
    assert stats.struct.field("n_bytes").to_list() == [5, 3, None, 5]
    assert reduce("byte_perplexity", stats) == math.exp(12 / 13)
    bits = statistics(DOCS, "bits_per_byte", loglikelihood="ll", text="text")
    assert reduce("bits_per_byte", bits) == -(-12 / 13) / math.log(2)
    assert reduce("bits_per_byte", bits) == pytest.approx(1.3317185, rel=1e-7)


def test_token_perplexity_and_perplexity_by_hand():
    # tokens 3 + 1 + 4 = 8 -> exp(12 / 8) = e^1.5; per document: mean ll -4 -> e^4
    assert score(DOCS, "token_perplexity", loglikelihood="ll", n_tokens="n_tokens") == (
        math.exp(1.5)
    )
    stats = statistics(DOCS, "perplexity", loglikelihood="ll")
    assert stats.to_list()[2] is None
    assert stats.struct.field("documents").to_list() == [1, 1, None, 1]
    assert reduce("perplexity", stats) == math.exp(4.0)


def test_given_counts_equal_counts_from_text():
    given = DOCS.with_columns(n_words=pl.Series([3, 3, 1, 1]), n_bytes=pl.Series([5, 3, 5, 5]))
    for name, unit in [("word_perplexity", "n_words"), ("byte_perplexity", "n_bytes")]:
        from_text = statistics(given, name, loglikelihood="ll", text="text")
        from_counts = statistics(given, name, loglikelihood="ll", **{unit: unit})
        assert from_text.to_list() == from_counts.to_list()


def test_engine_picks_the_role_set_and_aggregate_reduces():
    frame = DOCS.rename({"ll": "loglikelihood"})
    scored = ef.score(frame, ["word_perplexity", "bits_per_byte", "perplexity"])
    assert scored.schema["word_perplexity"] == WORD_STATISTICS
    assert scored.schema["bits_per_byte"] == BYTE_STATISTICS
    assert scored.schema["perplexity"] == DOCUMENT_STATISTICS
    table = ef.aggregate(scored, bootstrap=20)
    values = dict(zip(table["metric"], table["value"], strict=True))
    assert values["word_perplexity"] == pytest.approx(math.exp(12 / 7), rel=1e-15)
    assert values["bits_per_byte"] == pytest.approx(12 / 13 / math.log(2), rel=1e-15)
    assert values["perplexity"] == pytest.approx(math.exp(4.0), rel=1e-15)
    # a null log-likelihood is a missing answer: left out of the corpus metric, counted
    assert dict(zip(table["metric"], table["n_missing"], strict=True))["perplexity"] == 1


def test_specs():
    for name in NAMES:
        spec, _ = resolve(name)
        assert spec.level == "corpus" and spec.higher_is_better is False
        assert spec.reference.package == "lm-eval" and spec.reference.version == "0.4.13"
        assert spec.edge_rules and spec.divergences
    assert resolve("token_perplexity")[0].statistics == TOKEN_STATISTICS
    assert resolve("word_perplexity")[0].role_sets == (
        ("loglikelihood", "n_words"),
        ("loglikelihood", "text"),
    )
    assert resolve("bits_per_byte")[0].role_sets == (
        ("loglikelihood", "n_bytes"),
        ("loglikelihood", "text"),
    )


# --- lm-eval's counting rules ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 1),  # re.split gives [''] -> 1
        (" ", 2),  # ['', '']
        ("a", 1),
        (" a ", 3),  # ['', 'a', '']
        ("a  \t\n b", 2),  # one run
        ("a\n\nb\n", 3),
        ("a\u00a0b", 2),  # no-break space
        ("a\u3000b\u2028c\u2029d", 4),
        ("a\x1cb\x1dc\x1ed\x1fe", 5),  # Python's \s; Rust's \s lacks \x1c-\x1f
        ("a\x85b", 2),  # NEL
        ("a\u1680b\u2000c\u200ad\u202fe\u205ff", 6),
        ("a\u200bb", 1),  # zero-width space: not whitespace
        ("a\u180eb", 1),  # Mongolian vowel separator: not whitespace since Unicode 6.3
        ("a\ufeffb\u2060c", 1),
        ("a\x00b\x08c\x7fd", 1),  # controls that are not whitespace
        ("“quoted” — it’s…", 3),  # E2 80 xx punctuation shares the lead bytes of U+2000-U+200A
        ("東京\u3000日本", 2),
        ("\u3000", 2),
        ("🙂 🙂", 2),
    ],
)
def test_count_words_is_pythons_re_split(text, expected):
    assert len(re.split(r"\s+", text)) == expected  # the rule itself
    assert words([text]) == [expected]


def test_count_words_random_unicode_against_re_split():
    rng = random.Random(7)
    alphabet = [
        *whitespace_characters(), "a", "b", "é", "東", "🙂", "\x00", "\x1b", "\u2027", "\u2030",
        "\u205e", "\u3001", "\u1681", "\u00c2", "\u200b", "\u0080", "\u00bf", "\u1fff", "\u2100",
    ]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(5000)]
    assert words(texts) == [len(re.split(r"\s+", text)) for text in texts]


def test_count_words_chunked_sliced_lazy_and_streaming():
    rng = random.Random(3)
    texts = [rng.choice(["", " ", "a b", " x\u3000y ", "東 京", "a\n"]) for _ in range(300)]
    texts[5] = None
    expected = [None if t is None else len(re.split(r"\s+", t)) for t in texts]
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    chunked = pl.concat([frame.slice(0, 7), frame.slice(7, 100), frame.slice(107)], rechunk=False)
    assert chunked.n_chunks() == 3
    assert chunked.select(count_words("t"))["t"].to_list() == expected
    streamed = chunked.lazy().select(count_words("t")).collect(engine="streaming")
    assert streamed["t"].to_list() == expected
    # a slice whose first row starts right after whitespace in the buffer
    sliced = pl.Series(["a ", " b", "c"]).slice(1)
    assert words(sliced.to_list()) == [2, 1]
    assert pl.select(count_words(pl.lit(sliced))).to_series().to_list() == [2, 1]


def test_count_words_edges_of_the_buffer():
    # rows that are all whitespace next to each other: each row counts its own run
    assert words([" ", " ", "", " a", "a "]) == [2, 2, 1, 2, 2]
    assert words([None, None]) == [None, None]
    assert words([]) == []
    assert words(["\u00a0"]) == [2]  # a two-byte character at the very end of the buffer
    assert words(["x" * 63 + " " + "y" * 64 + "\u3000"]) == [3]  # runs across 64-bit words


def test_count_bytes_is_utf8_length():
    texts = ["", "abc", "é", "東京", "🙂", "a\u3000b", None]
    out = pl.select(count_bytes(pl.lit(pl.Series(texts)))).to_series().to_list()
    assert out == [None if t is None else len(t.encode("utf-8")) for t in texts]


# --- edge rules --------------------------------------------------------------------------


def frame_of(ll, **columns) -> pl.DataFrame:
    return pl.DataFrame({"ll": ll, **columns}, schema_overrides={"ll": pl.Float64})


def test_overflow_gives_inf_not_an_error():
    # mean negative log-likelihood 1000 per word: math.exp(1000) raises OverflowError in
    # lm-eval; evalframe gives inf (and bits per byte, which has no exp, stays finite)
    big = frame_of([-1000.0], n_words=[1], n_bytes=[1], n_tokens=[1])
    assert score(big, "word_perplexity", loglikelihood="ll", n_words="n_words") == math.inf
    assert score(big, "token_perplexity", loglikelihood="ll", n_tokens="n_tokens") == math.inf
    assert score(big, "perplexity", loglikelihood="ll") == math.inf
    assert score(big, "bits_per_byte", loglikelihood="ll", n_bytes="n_bytes") == pytest.approx(
        1000 / math.log(2)
    )
    # just below the overflow threshold: finite
    edge = frame_of([-709.0], n_words=[1])
    assert score(edge, "word_perplexity", loglikelihood="ll", n_words="n_words") == math.exp(709)


def test_minus_infinity_is_probability_zero():
    minus = frame_of([-1.0, -math.inf], n_bytes=[2, 2])
    assert score(minus, "byte_perplexity", loglikelihood="ll", n_bytes="n_bytes") == math.inf
    assert score(minus, "bits_per_byte", loglikelihood="ll", n_bytes="n_bytes") == math.inf
    assert score(minus, "perplexity", loglikelihood="ll") == math.inf


BAD_LOGLIKELIHOODS = [
    (math.nan, "a NaN loglikelihood"),
    (math.inf, "a loglikelihood above 0"),
    (0.5, "a loglikelihood above 0"),
    (2e-6, "a loglikelihood above 0"),  # just past the rounding tolerance of 1e-6
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("value", "what"), BAD_LOGLIKELIHOODS)
def test_impossible_loglikelihoods_raise(name, value, what):
    # lm-eval scores them all: exp(-0.5) = 0.6065 < 1 for 0.5 over one word, 0.0 for +inf
    frame = frame_of([-1.0, value, -2.0, value], n=[1, 1, 1, 1], text=["a", "b", "c", "d"])
    spec, _ = resolve(name)
    unit = next((r for r in spec.role_sets[0] if r != "loglikelihood"), None)
    columns = {unit: "n"} if unit else {}
    with pytest.raises(EvalframeError) as error:
        statistics(frame, name, loglikelihood="ll", **columns)
    message = str(error.value)
    assert f"metric {name!r}: 2 row(s) have {what}" in message
    assert "First offending row: 1" in message
    assert "expected a log-probability: <= 0 (up to 1e-06 above 0" in message


def test_loglikelihoods_within_the_rounding_tolerance_are_scored_as_given():
    # 1e-6 and 5e-7 are rounding: accepted, and summed as they are (as lm-eval does)
    frame = frame_of([1e-6, 5e-7, -3.0], n_words=[1, 1, 1])
    stats = statistics(frame, "word_perplexity", loglikelihood="ll", n_words="n_words")
    assert stats.struct.field("loglikelihood").to_list() == [1e-6, 5e-7, -3.0]
    # exp(-(1e-6 + 5e-7 - 3) / 3), the same float operations as lm-eval's weighted_perplexity
    assert reduce("word_perplexity", stats) == math.exp(-((1e-6 + 5e-7) - 3.0) / 3)


def test_no_units_gives_nan():
    # only empty documents (log-likelihood 0, as lm-eval scores an empty document): 0 bytes
    # in total (lm-eval: ZeroDivisionError)
    empty = frame_of([0.0, -0.0], text=["", ""])
    assert math.isnan(score(empty, "byte_perplexity", loglikelihood="ll", text="text"))
    assert math.isnan(score(empty, "bits_per_byte", loglikelihood="ll", text="text"))
    # ...but 2 words: each empty document is one (empty) word in lm-eval's count: exp(0)
    assert score(empty, "word_perplexity", loglikelihood="ll", text="text") == 1.0
    # a row of 0 tokens and log-likelihood 0 adds nothing: exp(3 / 2)
    zeros = frame_of([0.0, -3.0], n_tokens=[0, 2])
    assert score(zeros, "token_perplexity", loglikelihood="ll", n_tokens="n_tokens") == (
        math.exp(1.5)
    )
    # no scoreable row at all
    nothing = frame_of([None, None], n_words=[1, 2], text=[None, None])
    for name, columns in [
        ("word_perplexity", {"n_words": "n_words"}),
        ("byte_perplexity", {"text": "text"}),
        ("perplexity", {}),
    ]:
        stats = statistics(nothing, name, loglikelihood="ll", **columns)
        assert stats.null_count() == 2
        assert math.isnan(reduce(name, stats)), name
    formula = resolve("perplexity")[0].reduction().formula
    assert math.isnan(formula({"loglikelihood": np.array([0.0]), "documents": np.array([0])})[0])


def test_zero_loglikelihood_is_perplexity_one():
    zero = frame_of([0.0, -0.0], n_words=[3, 1])
    assert score(zero, "word_perplexity", loglikelihood="ll", n_words="n_words") == 1.0
    assert score(zero, "bits_per_byte", loglikelihood="ll", n_bytes="n_words") == 0.0


def test_nulls_give_null_statistics_rows():
    frame = pl.DataFrame(
        {
            "ll": [-1.0, None, -2.0, -3.0],
            "n": [1, 2, None, 3],
            "text": ["a", "b", None, "c"],
        }
    )
    by_count = statistics(frame, "word_perplexity", loglikelihood="ll", n_words="n")
    assert [row is None for row in by_count.to_list()] == [False, True, True, False]
    by_text = statistics(frame, "byte_perplexity", loglikelihood="ll", text="text")
    assert [row is None for row in by_text.to_list()] == [False, True, True, False]
    # null rows do not count: only rows 0 and 3 are summed
    assert reduce("word_perplexity", by_count) == math.exp(4 / 4)


def test_integer_loglikelihoods_and_counts_of_any_width_are_cast():
    frame = pl.DataFrame(
        {"ll": [-2, -4], "n": [1, 1]}, schema={"ll": pl.Int32, "n": pl.UInt8}
    )
    stats = statistics(frame, "token_perplexity", loglikelihood="ll", n_tokens="n")
    assert stats.dtype == TOKEN_STATISTICS
    assert reduce("token_perplexity", stats) == math.exp(3.0)


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "unit", "what"),
    [
        ("word_perplexity", "n_words", "n_words below 1"),
        ("byte_perplexity", "n_bytes", "a negative n_bytes"),
        ("bits_per_byte", "n_bytes", "a negative n_bytes"),
        ("token_perplexity", "n_tokens", "a negative n_tokens"),
    ],
)
def test_negative_counts_raise_naming_rows(name, unit, what):
    frame = frame_of([-1.0, -2.0, -3.0, None], n=[3, -1, -5, -2])
    with pytest.raises(EvalframeError) as error:
        statistics(frame, name, loglikelihood="ll", **{unit: "n"})
    message = str(error.value)
    assert f"metric {name!r}" in message
    assert f"3 row(s) have {what}" in message
    assert "First offending row: 1" in message and f"{unit}=-1" in message
    # through the engine, too
    data = frame.rename({"ll": "loglikelihood", "n": unit})
    with pytest.raises(EvalframeError, match=what):
        ef.score(data, [name])


def test_zero_words_raise():
    # lm-eval's count_words is at least 1 ("" is one word): 0 words is a wrong count, whose
    # group would otherwise score exp(1 / 0) = NaN without a word
    frame = frame_of([-1.0, -2.0], n=[1, 0])
    with pytest.raises(EvalframeError, match=r"1 row\(s\) have n_words below 1.*First "
                       r"offending row: 1 \(n_words=0\)"):
        statistics(frame, "word_perplexity", loglikelihood="ll", n_words="n")


@pytest.mark.parametrize(
    ("name", "unit"),
    [("byte_perplexity", "n_bytes"), ("bits_per_byte", "n_bytes"),
     ("token_perplexity", "n_tokens")],
)
def test_zero_units_need_a_zero_loglikelihood(name, unit):
    # nothing predicted, nothing lost: 0 units with log-likelihood 0 (or rounding) is fine
    fine = frame_of([0.0, -0.0, 5e-7, -2.0], n=[0, 0, 0, 2])
    stats = statistics(fine, name, loglikelihood="ll", **{unit: "n"})
    assert stats.struct.field(unit).to_list() == [0, 0, 0, 2]
    # ...but a log-likelihood on no units is impossible (and -inf is no exception)
    bad = frame_of([-1.0, -2.0, -math.inf, 0.0], n=[4, 0, 0, 0])
    with pytest.raises(EvalframeError) as error:
        statistics(bad, name, loglikelihood="ll", **{unit: "n"})
    message = str(error.value)
    assert f"2 row(s) have {unit} = 0 with a log-likelihood other than 0" in message
    assert f"First offending row: 1 (loglikelihood=-2.0, {unit}=0)" in message


def test_an_empty_document_with_a_loglikelihood_raises_from_text_too():
    frame = frame_of([-1.0, -2.0], text=["abc", ""])
    for name in ("byte_perplexity", "bits_per_byte"):
        with pytest.raises(EvalframeError, match=r"n_bytes = 0 with a log-likelihood other "
                           r"than 0.*First offending row: 1 \(loglikelihood=-2.0, text='', "
                           r"n_bytes=0\)"):
            statistics(frame, name, loglikelihood="ll", text="text")
    # the same document counts one word in lm-eval: word perplexity scores it
    assert score(frame, "word_perplexity", loglikelihood="ll", text="text") == math.exp(3 / 2)


def test_bad_values_are_counted_over_the_whole_input():
    # 5 000 rows in 4 chunks; impossible values in rows 1 234 (NaN), 2 500 and 4 999
    # (positive): one error, counting all three checks' rows, naming the first of them
    ll = [-1.0] * 5000
    ll[1234], ll[2500], ll[4999] = math.nan, 0.25, 3.0
    words = [2] * 5000
    words[3000] = 0
    frame = pl.DataFrame({"loglikelihood": ll, "n_words": words})
    chunked = pl.concat([frame.slice(i, 1250) for i in range(0, 5000, 1250)], rechunk=False)
    with pytest.raises(EvalframeError) as error:
        ef.score(chunked, ["word_perplexity"])
    message = str(error.value)
    assert message.startswith(
        "metric 'word_perplexity': 1 row(s) have a NaN loglikelihood; expected a "
        "log-probability"
    )
    assert "First offending row: 1234 (loglikelihood=nan)" in message
    assert "a loglikelihood above 0 (a probability above 1; +inf included) in 2 row(s) " \
        "(first: row 2500)" in message
    assert "n_words below 1 in 1 row(s) (first: row 3000)" in message


@pytest.mark.parametrize("function", [M.word_perplexity, M.byte_perplexity, M.bits_per_byte])
def test_exactly_one_of_count_or_text(function):
    with pytest.raises(EvalframeError, match="pass exactly one of .* or text; got neither"):
        function("ll")
    with pytest.raises(EvalframeError, match="got n_.*, text"):
        function("ll", "n", text="text")


def test_missing_roles_and_wrong_dtypes_raise():
    with pytest.raises(EvalframeError, match="word_perplexity.*missing"):
        ef.score(pl.DataFrame({"loglikelihood": [-1.0]}), ["word_perplexity"])
    with pytest.raises(EvalframeError, match="role 'text'.*expected str"):
        ef.score(pl.DataFrame({"loglikelihood": [-1.0], "text": [3]}), ["bits_per_byte"])
    with pytest.raises(EvalframeError, match="role 'n_tokens'"):
        ef.score(
            pl.DataFrame({"loglikelihood": [-1.0], "n_tokens": [1.5]}), ["token_perplexity"]
        )


# --- exact merging -----------------------------------------------------------------------


def _random_frame(rows: int, seed: int) -> pl.DataFrame:
    rng = random.Random(seed)
    pool = ["a", "bb", "é", "東京", "🙂", " ", "\n", "\u3000", "\u00a0"]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 12))) for _ in range(rows)]
    # multiples of 1/64: every partial sum is exact, so merged sums equal the whole's
    ll = [-rng.randint(0, 64 * 200) / 64 for _ in range(rows)]
    frame = pl.DataFrame({"loglikelihood": ll, "text": texts, "n_tokens": [
        rng.randint(1, 40) for _ in range(rows)
    ]})
    return empty_documents_score_zero(frame).with_columns(
        loglikelihood=pl.when(pl.int_range(pl.len()) % 17 == 3).then(None).otherwise(
            pl.col("loglikelihood")
        )
    )


def empty_documents_score_zero(frame: pl.DataFrame) -> pl.DataFrame:
    """An empty document has no tokens and log-likelihood 0 (as lm-eval scores it)."""
    empty = pl.col("text") == ""
    return frame.with_columns(
        loglikelihood=pl.when(empty).then(0.0).otherwise(pl.col("loglikelihood")),
        n_tokens=pl.when(empty).then(0).otherwise(pl.col("n_tokens")),
    )


MERGE_CASES = [
    ("word_perplexity", {"text": "text"}),
    ("byte_perplexity", {"text": "text"}),
    ("bits_per_byte", {"text": "text"}),
    ("token_perplexity", {"n_tokens": "n_tokens"}),
    ("perplexity", {}),
]


@pytest.mark.parametrize(("name", "columns"), MERGE_CASES, ids=[n for n, _ in MERGE_CASES])
def test_sums_of_two_halves_give_the_score_of_the_whole(name, columns):
    frame = _random_frame(1001, seed=11)
    whole = statistics(frame, name, loglikelihood="loglikelihood", **columns)
    first = statistics(frame.head(400), name, loglikelihood="loglikelihood", **columns)
    second = statistics(frame.tail(601), name, loglikelihood="loglikelihood", **columns)
    # the statistics are per row: the halves' statistics are the whole's
    assert pl.concat([first, second]).equals(whole)
    halves = [s.struct.unnest().sum() for s in (first, second)]
    merged = halves[0].vstack(halves[1]).sum()
    # dyadic log-likelihoods and integer counts: the merged sums are exactly the whole's
    assert merged.rows() == whole.struct.unnest().sum().rows()
    assert reduce(name, merged) == reduce(name, whole)
    # and the formula is vectorised over tables: both halves and the whole at once
    spec, _ = resolve(name)
    tables = pl.concat([halves[0], halves[1], merged])
    scores = spec.reduction().formula({f: tables[f].to_numpy() for f in tables.columns})
    assert scores.shape == (3,)
    assert scores[2] == reduce(name, whole)
    assert scores[0] == reduce(name, first) and scores[1] == reduce(name, second)


@pytest.mark.parametrize(("name", "columns"), MERGE_CASES, ids=[n for n, _ in MERGE_CASES])
def test_merge_with_arbitrary_floats_is_exact_up_to_rounding(name, columns):
    rng = np.random.default_rng(5)
    frame = empty_documents_score_zero(_random_frame(2000, seed=12).with_columns(
        loglikelihood=pl.Series(-rng.exponential(30.0, 2000))
    ))
    parts = [frame.slice(i, 250) for i in range(0, 2000, 250)]
    sums = pl.concat(
        [statistics(p, name, loglikelihood="loglikelihood", **columns).struct.unnest().sum()
         for p in parts]
    ).sum()
    whole = reduce(name, statistics(frame, name, loglikelihood="loglikelihood", **columns))
    assert reduce(name, sums) == pytest.approx(whole, rel=1e-13)


def test_aggregate_by_groups_equals_reducing_each_group():
    frame = _random_frame(600, seed=2).with_columns(group=pl.int_range(pl.len()) % 3)
    scored = ef.score(frame, ["word_perplexity", "token_perplexity"])
    table = ef.aggregate(scored, by="group", bootstrap=10).sort("group", "metric")
    for row in table.iter_rows(named=True):
        part = frame.filter(pl.col("group") == row["group"])
        word = row["metric"] == "word_perplexity"
        columns = {"text": "text"} if word else {"n_tokens": "n_tokens"}
        expected = score(part, row["metric"], loglikelihood="loglikelihood", **columns)
        assert row["value"] == pytest.approx(expected, rel=1e-14)
