"""Invariants every registered metric must keep, driven by its spec (as scikit-learn's test_common).

Each metric is classified below by the shape of input it reads and the concrete names
to try (a parameterised pattern at its edge values: ``pass@1`` as well as ``pass@100``).
The property checks read the spec: the output dtype is the spec's statistics dtype,
corpus metrics reduce exactly across partitions and orders. Completeness is checked
both ways: every registered metric is classified, every classified name is registered.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.metrics.answers import answer_columns
from evalframe.metrics.registry import all_metrics
from evalframe.metrics.request import parse_request
from evalframe.schema import resolve_columns
from evalframe.scored import CONTRACT_COLUMN, missing_column, read_contract

WORDS = ["the", "a", "Paris", "paris", "4", "four", "1,000", "1000", "-", "É", "été", "", " "]
ROWS = 40
NULL_ROW = 3


def _text(rng: random.Random, words: int = 3) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, words)))


def text_frame(rng: random.Random) -> pl.DataFrame:
    """prediction: str; gold: list[str] (alternatives)."""
    predictions = [_text(rng) for _ in range(ROWS)]
    golds = [[_text(rng) or "x" for _ in range(rng.randint(1, 3))] for _ in range(ROWS)]
    predictions[NULL_ROW] = None
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def count_frame(rng: random.Random) -> pl.DataFrame:
    """n, c: ints with 0 <= c <= n and n >= 100 so any k <= 100 is valid."""
    n = [rng.randint(100, 300) for _ in range(ROWS)]
    c = [rng.randint(0, value) for value in n]
    n[NULL_ROW] = None
    return pl.DataFrame({"n": n, "c": c})


def generations_frame(rng: random.Random) -> pl.DataFrame:
    """prediction: list[str] of 16 generations; gold: str."""
    pool = ["4", "5", " 4", "four", "The answer"]
    predictions = [[rng.choice(pool) for _ in range(16)] for _ in range(ROWS)]
    golds = [rng.choice(pool) for _ in range(ROWS)]
    predictions[NULL_ROW] = None
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def spans_frame(rng: random.Random) -> pl.DataFrame:
    """DROP: prediction list[str] of spans; gold list[list[str]] (alternatives x spans)."""
    pool = ["4", "four", "1,000", "1000.0", "the Bears", "bears", "New-York", ""]
    predictions = [[rng.choice(pool) for _ in range(rng.randint(1, 3))] for _ in range(ROWS)]
    golds = [
        [
            [rng.choice(pool[:-1]) for _ in range(rng.randint(1, 2))]
            for _ in range(rng.randint(1, 2))
        ]
        for _ in range(ROWS)
    ]
    predictions[NULL_ROW] = None
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def choice_frame(rng: random.Random) -> pl.DataFrame:
    """Multiple choice: 4 choices with log-probabilities, token counts, unconditioned ones."""
    texts = [" Paris", "Lyon", " élan", "naïve café", "1,000", "B"]
    choices, logprobs, unconditioned, tokens, golds = [], [], [], [], []
    for _ in range(ROWS):
        choices.append([rng.choice(texts) for _ in range(4)])
        logprobs.append([-rng.uniform(0.1, 20.0) for _ in range(4)])
        unconditioned.append([-rng.uniform(0.1, 20.0) for _ in range(4)])
        tokens.append([rng.randint(1, 6) for _ in range(4)])
        golds.append(rng.randint(0, 3))
    logprobs[NULL_ROW] = None
    return pl.DataFrame(
        {
            "choices": choices,
            "choice_logprobs": logprobs,
            "unconditioned_logprobs": unconditioned,
            "choice_token_counts": tokens,
            "gold_index": golds,
        },
        schema_overrides={"choice_token_counts": pl.List(pl.Int64)},
    )


def truthfulqa_frame(rng: random.Random) -> pl.DataFrame:
    """TruthfulQA: 3 MC1 targets (the first is right) then 4 MC2 targets, two of them true."""
    logprobs = [[-rng.uniform(0.1, 20.0) for _ in range(7)] for _ in range(ROWS)]
    logprobs[NULL_ROW] = None
    golds = [sorted(rng.sample(range(3, 7), 2)) for _ in range(ROWS)]
    return pl.DataFrame(
        {"choice_logprobs": logprobs, "len_mc1": [3] * ROWS, "gold_index": golds}
    )


def labels_frame(rng: random.Random) -> pl.DataFrame:
    """Classification: prediction and gold as string labels (three classes)."""
    labels = ["yes", "no", "maybe"]
    predictions = [rng.choice(labels) for _ in range(ROWS)]
    golds = [rng.choice(labels) for _ in range(ROWS)]
    predictions[NULL_ROW] = None
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def binary_labels_frame(rng: random.Random) -> pl.DataFrame:
    """Binary classification with integer labels 0/1."""
    predictions = [rng.randint(0, 1) for _ in range(ROWS)]
    golds = [rng.randint(0, 1) for _ in range(ROWS)]
    predictions[NULL_ROW] = None
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def likelihood_frame(rng: random.Random) -> pl.DataFrame:
    """Perplexity family: log-likelihoods with word, byte and token counts, and the text."""
    texts = [
        " ".join(rng.choice(WORDS[:-2]) for _ in range(rng.randint(1, 9))) for _ in range(ROWS)
    ]
    loglikelihood = [-rng.uniform(1.0, 80.0) for _ in range(ROWS)]
    loglikelihood[NULL_ROW] = None
    return pl.DataFrame(
        {
            "loglikelihood": loglikelihood,
            "text": texts,
            "n_words": [len(text.split()) for text in texts],
            "n_bytes": [len(text.encode()) for text in texts],
            "n_tokens": [rng.randint(1, 30) for _ in range(ROWS)],
        }
    )


def outcome_frame(rng: random.Random) -> pl.DataFrame:
    """Pairwise judgments: the outcome of each (no errors: those score null by design)."""
    outcomes = [rng.choice(["A", "B", "tie", "inconsistent"]) for _ in range(ROWS)]
    outcomes[NULL_ROW] = None
    return pl.DataFrame({"outcome": outcomes, "sample_id": list(range(ROWS))})


def letters_frame(rng: random.Random, generations: int | None = None) -> pl.DataFrame:
    """Letter answers: responses (one, or a list), lighteval's choices and gold index."""
    pool = ["Answer: B", "(C)", "**D**", "the answer is a", "A", "E.", "", "Final answer is C"]

    def response() -> str:
        return rng.choice(pool)

    predictions = [
        response() if generations is None else [response() for _ in range(generations)]
        for _ in range(ROWS)
    ]
    predictions[NULL_ROW] = None
    choices = [["w", "x", "y", "z"][: rng.randint(2, 4)] for _ in range(ROWS)]
    golds = [rng.randrange(len(options)) for options in choices]
    return pl.DataFrame({"prediction": predictions, "choices": choices, "gold_index": golds})


FRAMES: dict[str, Callable[[random.Random], pl.DataFrame]] = {
    "letters": letters_frame,
    "letter_generations": lambda rng: letters_frame(rng, generations=8),
    "text": text_frame,
    "counts": count_frame,
    "generations": generations_frame,
    "spans": spans_frame,
    "choice": choice_frame,
    "truthfulqa": truthfulqa_frame,
    "labels": labels_frame,
    "binary_labels": binary_labels_frame,
    "likelihood": likelihood_frame,
    "outcome": outcome_frame,
}

#: registry name -> (concrete names to score with, the input shape they read)
CLASSIFIED: dict[str, tuple[tuple[str, ...], str]] = {
    "exact_match": (
        ("exact_match", "exact_match(ignore_case=true, normalizer=squad)",
         "exact_match(extractor=last_number, gold_extractor=last_number)"),
        "text",
    ),
    "squad_em": (("squad_em",), "text"),
    "squad_f1": (("squad_f1",), "text"),
    "token_f1": (("token_f1", "token_f1(normalizer=none)"), "text"),
    "word_set_f1": (("word_set_f1", "word_set_f1(normalizer=helm)"), "text"),
    "pass@{k}": (("pass@1", "pass@10", "pass@100"), "counts"),
    "maj@{k}": (
        ("maj@1", "maj@16", "maj@16(extractor=last_number, vote=answer)",
         "maj@8(extractor=lighteval_letters, gold_extractor=lighteval_letters)"),
        "generations",
    ),
    "avg@{k}": (
        ("avg@1", "avg@16", "avg@16(extractor=last_number, gold_extractor=last_number)"),
        "generations",
    ),
    "g-pass@{k}_{tau}": (
        ("g-pass@1_0.5", "g-pass@16_1.0", "g-pass@8_0.25",
         "g-pass@8_0.5(extractor=lighteval_letters, normalizer=strip)"),
        "generations",
    ),
    "mg-pass@{k}": (("mg-pass@1", "mg-pass@16", "mg-pass@4(extractor=last_number)"),
                    "generations"),
    "letter_match": (
        ("letter_match", "letter_match(try_extract_without_anchor=false, prefix=Letters)"),
        "letters",
    ),
    "letter_pass@{k}": (
        ("letter_pass@1", "letter_pass@8", "letter_pass@4(strip=true, "
         "try_extract_without_anchor=false)"),
        "letter_generations",
    ),
    "drop_em": (("drop_em",), "spans"),
    "drop_f1": (("drop_f1",), "spans"),
    "quasi_exact_match": (
        ("quasi_exact_match", "quasi_exact_match(extractor=gsm8k_answer)"), "text"
    ),
    "prefix_exact_match": (("prefix_exact_match",), "text"),
    "prefix_quasi_exact_match": (("prefix_quasi_exact_match",), "text"),
    "suffix_exact_match": (("suffix_exact_match",), "text"),
    "suffix_quasi_exact_match": (("suffix_quasi_exact_match",), "text"),
    "quasi_exact_match_gsm8k": (("quasi_exact_match_gsm8k",), "text"),
    "math_equal": (("math_equal", "math_equal(gold_targets=expr, precision=3)"), "text"),
    "extractive_match": (
        ("extractive_match",
         "extractive_match(gold_targets=[latex, expr], boxed_first=false, precision=6)"),
        "text",
    ),
    "acc": (("acc",), "choice"),
    "acc_norm": (("acc_norm", "acc_norm(count_delimiter=true, ignore_first_space=true)"), "choice"),
    "acc_bytes": (("acc_bytes",), "choice"),
    "acc_token": (("acc_token",), "choice"),
    "acc_pmi": (("acc_pmi",), "choice"),
    "prob": (("prob", "prob(normalization=token)"), "choice"),
    "prob_norm": (
        ("prob_norm", "prob_norm(normalization=char)", "prob_norm(normalization=token)",
         "prob_norm(normalization=pmi)"),
        "choice",
    ),
    "mrr": (("mrr", "mrr(length_normalization=true)"), "choice"),
    "recall@{k}": (("recall@1", "recall@2", "recall@10"), "choice"),
    "brier_score": (("brier_score",), "choice"),
    "mc1": (("mc1",), "truthfulqa"),
    "mc2": (("mc2",), "truthfulqa"),
    "accuracy": (("accuracy",), "labels"),
    "f1": (("f1", "f1(average=binary, pos_label=0)"), "binary_labels"),
    "precision": (("precision(average=macro)", "precision(average=weighted)"), "labels"),
    "recall": (("recall(average=micro)", "recall(average=macro, zero_division=1.0)"), "labels"),
    "mcc": (("mcc",), "labels"),
    "word_perplexity": (("word_perplexity",), "likelihood"),
    "byte_perplexity": (("byte_perplexity",), "likelihood"),
    "bits_per_byte": (("bits_per_byte",), "likelihood"),
    "perplexity": (("perplexity",), "likelihood"),
    "token_perplexity": (("token_perplexity",), "likelihood"),
    "win_rate": (("win_rate",), "outcome"),
    "bleu": (
        ("bleu", "bleu(tokenize=intl, lowercase=true, smooth_method=floor)",
         "bleu(tokenize=zh, effective_order=true, smooth_method='add-k')",
         "bleu(tokenize=char, max_ngram_order=2)"),
        "text",
    ),
    "sentence_bleu": (
        ("sentence_bleu", "sentence_bleu(tokenize='none', smooth_method='none')"), "text"
    ),
    "bleu_1": (("bleu_1(sentence_split=false)",), "text"),
    "bleu_4": (("bleu_4(sentence_split=false)",), "text"),
    "chrf": (
        ("chrf", "chrf(lowercase=true, whitespace=true)", "chrf(eps_smoothing=true, beta=1)"),
        "text",
    ),
    "chrf++": (("chrf++", "chrf++(lowercase=true)"), "text"),
    "sentence_chrf": (("sentence_chrf", "sentence_chrf(word_order=2, char_order=4)"), "text"),
    "rouge1": (("rouge1", "rouge1(score=precision, use_stemmer=false)"), "text"),
    "rouge2": (("rouge2", "rouge2(aggregation=mean, score=recall)"), "text"),
    "rougeL": (("rougeL", "rougeL(normalizer=squad)"), "text"),
    "rougeLsum": (("rougeLsum", "rougeLsum(use_stemmer=false, aggregation=mean)"), "text"),
    "rouge_t5": (("rouge_t5", "rouge_t5(rouge_type='rouge1')"), "text"),
    "ter": (
        ("ter", "ter(normalized=true, no_punct=true, asian_support=true, case_sensitive=true)"),
        "text",
    ),
    "edit_distance": (("edit_distance", "edit_distance(strip_prediction=false)"), "text"),
    "edit_similarity": (("edit_similarity",), "text"),
    "longest_common_prefix_length": (("longest_common_prefix_length",), "text"),
    "word_edit_distance": (("word_edit_distance",), "text"),
    "word_edit_similarity": (("word_edit_similarity",), "text"),
    "char_edit_distance": (("char_edit_distance",), "text"),
    "char_edit_similarity": (("char_edit_similarity",), "text"),
    "inspect_match": (
        ("inspect_match", "inspect_match(location=any, numeric=true)",
         "inspect_match(location=exact, ignore_case=false, numeric=true)",
         "inspect_match(location=begin, numeric=true)"),
        "text",
    ),
    "inspect_includes": (("inspect_includes", "inspect_includes(ignore_case=false)"), "text"),
    "inspect_pattern": (
        ("inspect_pattern(pattern='([a-z]+)')",
         "inspect_pattern(pattern='([0-9]+)|(a)', match_all=true, ignore_case=false)"),
        "text",
    ),
    "inspect_answer": (
        ("inspect_answer", "inspect_answer(pattern=word)", "inspect_answer(pattern=line)"), "text"
    ),
}

SPECS = {spec.name: spec for spec in all_metrics()}


def test_every_metric_is_classified():
    unclassified = sorted(set(SPECS) - set(CLASSIFIED))
    assert not unclassified, f"classify these metrics in tests/test_common.py: {unclassified}"


def test_every_classified_name_is_registered():
    stale = sorted(set(CLASSIFIED) - set(SPECS))
    assert not stale, f"classified but not registered (remove them): {stale}"
    for registered, (names, _) in CLASSIFIED.items():
        for name in names:
            assert parse_request(name).spec.name == registered, name


CASES = [
    (registered, name, shape)
    for registered, (names, shape) in sorted(CLASSIFIED.items())
    if registered in SPECS
    for name in names
]

#: Cases that extract answers from every one of many generations per row: seconds each,
#: so in the slow lane (the other cases of their metrics stay in the default run).
SLOW_CASES = ("letter_pass@", "g-pass@")


@pytest.fixture(
    params=[
        pytest.param(
            case, id=case[1], marks=[pytest.mark.slow] * any(s in case[1] for s in SLOW_CASES)
        )
        for case in CASES
    ]
)
def case(request) -> tuple[str, pl.DataFrame]:
    _, name, shape = request.param
    return name, FRAMES[shape](random.Random(1234))


def _statistics_ok(name: str, dtype: pl.DataType) -> bool:
    expected = parse_request(name).spec.statistics
    if isinstance(expected, pl.Struct):
        return isinstance(dtype, pl.Struct) and [f.name for f in dtype.fields] == [
            f.name for f in expected.fields
        ]
    return dtype == expected


def _flag(name: str, frame: pl.DataFrame) -> list[str]:
    """The missing-answer column the contract adds (none for a metric with no answer role)."""
    has_answer = answer_columns(parse_request(name), frame.schema, {}) is not None
    return [missing_column(name)] if has_answer else []


def test_output_is_the_specs_statistics_and_input_kept(case):
    name, frame = case
    scored = ef.score(frame, [name])
    assert scored.columns == [*frame.columns, name, *_flag(name, frame), CONTRACT_COLUMN]
    assert _statistics_ok(name, scored.schema[name]), scored.schema[name]
    assert scored.select(frame.columns).equals(frame)
    contract = read_contract(scored.lazy())
    assert contract is not None
    assert parse_request(contract.metrics[name].request).text == parse_request(name).text


def test_row_order_is_kept(case):
    name, frame = case
    forward = ef.score(frame, [name])[name]
    backward = ef.score(frame.reverse(), [name])[name].reverse()
    assert forward.equals(backward)


def _bare(name: str, frame: pl.DataFrame) -> pl.Series:
    request = parse_request(name)
    columns = resolve_columns(name, request.spec.role_sets, frame.schema, {}, request.spec.dtypes)
    return frame.select(request.build(columns).alias(name))[name]


def test_nulls_propagate_in_the_expression(case):
    name, frame = case
    bare = _bare(name, frame)
    assert bare[NULL_ROW] is None
    assert bare.null_count() == 1, "only the row with a null input scores null"


def _is_missing_or_null(name: str, frame: pl.DataFrame, scored: pl.DataFrame) -> pl.Series:
    """Per row: null (no gold: unscoreable), or flagged missing with the worst score."""
    spec = parse_request(name).spec
    flags = _flag(name, frame)
    if not flags:
        return scored[name].is_null()
    missing = scored[flags[0]]
    if spec.level == "sample":
        worst = scored[name] == spec.worst
        return (scored[name].is_null() & ~missing) | (missing & worst)
    return scored[name].is_null()


def test_a_null_input_is_unscoreable_or_a_missing_answer_scored_wrong(case):
    name, frame = case
    scored = ef.score(frame, [name])
    assert _is_missing_or_null(name, frame, scored)[NULL_ROW]
    others = scored.filter(pl.int_range(pl.len()) != NULL_ROW)
    assert others[name].null_count() == 0
    for flag in _flag(name, frame):  # a null gold (pass@k's n) is not a missing answer
        assert not others[flag].any()


def test_all_null_column_gives_no_scores(case):
    name, frame = case
    column = next(c for c in frame.columns if frame[c].null_count())
    nulls = frame.with_columns(pl.lit(None, dtype=frame.schema[column]).alias(column))
    assert _bare(name, nulls).null_count() == frame.height
    assert _is_missing_or_null(name, nulls, ef.score(nulls, [name])).all()


def test_single_row_equals_its_row_in_the_whole(case):
    name, frame = case
    whole = ef.score(frame, [name])[name]
    for row in (0, NULL_ROW):
        assert ef.score(frame.slice(row, 1), [name])[name].equals(whole.slice(row, 1))


def test_lazy_and_eager_identical(case):
    name, frame = case
    eager = ef.score(frame, [name])
    assert ef.score(frame.lazy(), [name]).collect().equals(eager)


def test_bare_expression_equals_engine_but_for_missing_answers(case):
    name, frame = case
    scored = ef.score(frame, [name])
    answered = pl.int_range(pl.len()) != NULL_ROW
    bare = frame.select(_bare(name, frame)).filter(answered).to_series()
    assert bare.equals(scored.filter(answered)[name])


def test_chunked_input_and_streaming_equal_one_batch(case):
    name, frame = case
    whole = ef.score(frame, [name])
    chunked = pl.concat([frame.slice(0, 7), frame.slice(7, 20), frame.slice(27)], rechunk=False)
    assert chunked.n_chunks() > 1
    assert ef.score(chunked, [name]).equals(whole)
    streamed = ef.score(chunked.lazy(), [name]).collect(engine="streaming")
    assert streamed.equals(whole)


def test_no_rows_score_to_no_rows(case):
    """A batch without rows (an empty file, a Ray block) scores to an empty frame of the
    same columns and types as any other batch."""
    name, frame = case
    empty = ef.score(frame.clear(), [name])
    assert empty.height == 0
    assert empty.schema == ef.score(frame, [name]).schema


def test_missing_role_raises(case):
    name, frame = case
    with pytest.raises(EvalframeError, match=re.escape(repr(name))):
        ef.score(frame.drop(frame.columns[-1]).drop(frame.columns[0]), [name])


def test_wrong_dtype_raises_naming_metric_and_role(case):
    name, frame = case
    request = parse_request(name)
    columns = resolve_columns(name, request.spec.role_sets, frame.schema, {}, request.spec.dtypes)
    role, column = next(iter(columns.items()))
    broken = frame.with_columns(pl.lit(True).alias(column))
    with pytest.raises(EvalframeError, match=f"{re.escape(repr(name))}.*role {role!r}"):
        ef.score(broken, [name])


def _value(table: pl.DataFrame) -> float:
    return table["value"].item()


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def test_aggregate_merges_partitions_and_ignores_order(case):
    name, frame = case
    scored = ef.score(frame, [name])
    whole = ef.aggregate(scored, metrics=[name])
    halves = pl.concat([ef.score(frame.slice(0, 17), [name]), ef.score(frame.slice(17), [name])])
    shuffled = ef.score(frame.sample(fraction=1.0, shuffle=True, seed=7), [name])
    assert _close(_value(ef.aggregate(halves, metrics=[name])), _value(whole))
    assert _close(_value(ef.aggregate(shuffled, metrics=[name])), _value(whole))
    # the null row is a missing answer (counted wrong for a sample metric, left out of a
    # corpus metric) or an unscoreable one (left out): counted either way
    n, missing, null = whole["n"].item(), whole["n_missing"].item(), whole["n_null"].item()
    if answer_columns(parse_request(name), frame.schema, {}) is None:
        # no answer role (win_rate reads a judge's outcome): no missing answers to count
        assert missing == 0
    assert missing + null == 1
    corpus = parse_request(name).spec.level == "corpus"
    assert n == frame.height - null - (missing if corpus else 0)
    assert whole["signature"].item().startswith("metric:")


def test_aggregate_finds_the_metric_column_by_name_and_dtype(case):
    name, frame = case
    scored = ef.score(frame, [name])
    assert ef.aggregate(scored)["metric"].to_list() == [name]
