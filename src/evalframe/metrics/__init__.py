"""Metric functions, each returning a ``pl.Expr``, and the registry that lists them.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"n": [10, 10, None], "c": [0, 3, 1]})
>>> df.with_columns(M.pass_at_k("n", "c", k=1).alias("pass@1"))
shape: (3, 3)
┌──────┬─────┬────────┐
│ n    ┆ c   ┆ pass@1 │
│ ---  ┆ --- ┆ ---    │
│ i64  ┆ i64 ┆ f64    │
╞══════╪═════╪════════╡
│ 10   ┆ 0   ┆ 0.0    │
│ 10   ┆ 3   ┆ 0.3    │
│ null ┆ 1   ┆ null   │
└──────┴─────┴────────┘
"""

from evalframe.metrics.bleu import bleu, bleu_1, bleu_4, sentence_bleu
from evalframe.metrics.choice import (
    acc,
    acc_bytes,
    acc_norm,
    acc_pmi,
    acc_token,
    brier_score,
    mc1,
    mc2,
    mrr,
    prob,
    prob_norm,
    recall_at_k,
)
from evalframe.metrics.chrf import chrf, sentence_chrf
from evalframe.metrics.classification import accuracy, f1, mcc, precision, recall
from evalframe.metrics.distance import (
    char_edit_distance,
    char_edit_similarity,
    edit_distance,
    edit_similarity,
    longest_common_prefix_length,
    treebank_tokenize,
    word_edit_distance,
    word_edit_similarity,
)
from evalframe.metrics.drop import drop_em, drop_f1
from evalframe.metrics.exact_match import (
    exact_match,
    lighteval_exact_match,
    prefix_exact_match,
    prefix_quasi_exact_match,
    quasi_exact_match,
    quasi_exact_match_gsm8k,
    suffix_exact_match,
    suffix_quasi_exact_match,
)
from evalframe.metrics.inspect_scorers import (
    inspect_answer,
    inspect_includes,
    inspect_match,
    inspect_pattern,
)
from evalframe.metrics.judge import win_rate
from evalframe.metrics.letters import letter_match, letter_pass_at_k
from evalframe.metrics.math import extractive_match, math_equal
from evalframe.metrics.pass_at_k import pass_at_k
from evalframe.metrics.perplexity import (
    bits_per_byte,
    byte_perplexity,
    perplexity,
    token_perplexity,
    word_perplexity,
)
from evalframe.metrics.registry import (
    MetricSpec,
    Reference,
    all_metrics,
    list_metrics,
    register,
    resolve,
)
from evalframe.metrics.rouge import rouge1, rouge2, rouge_n, rouge_t5, rougeL, rougeLsum
from evalframe.metrics.sampling import avg_at_k, g_pass_at_k, maj_at_k, mg_pass_at_k
from evalframe.metrics.squad import squad_em, squad_f1
from evalframe.metrics.ter import sacrebleu_signature, ter, ter_score
from evalframe.metrics.word_overlap import token_f1, word_set_f1

__all__ = [
    "MetricSpec",
    "Reference",
    "acc",
    "acc_bytes",
    "acc_norm",
    "acc_pmi",
    "acc_token",
    "accuracy",
    "all_metrics",
    "avg_at_k",
    "bits_per_byte",
    "bleu",
    "bleu_1",
    "bleu_4",
    "brier_score",
    "byte_perplexity",
    "char_edit_distance",
    "char_edit_similarity",
    "chrf",
    "drop_em",
    "drop_f1",
    "edit_distance",
    "edit_similarity",
    "exact_match",
    "extractive_match",
    "f1",
    "g_pass_at_k",
    "inspect_answer",
    "inspect_includes",
    "inspect_match",
    "inspect_pattern",
    "letter_match",
    "letter_pass_at_k",
    "lighteval_exact_match",
    "list_metrics",
    "longest_common_prefix_length",
    "maj_at_k",
    "math_equal",
    "mc1",
    "mc2",
    "mcc",
    "mg_pass_at_k",
    "mrr",
    "pass_at_k",
    "perplexity",
    "precision",
    "prefix_exact_match",
    "prefix_quasi_exact_match",
    "prob",
    "prob_norm",
    "quasi_exact_match",
    "quasi_exact_match_gsm8k",
    "recall",
    "recall_at_k",
    "register",
    "resolve",
    "rouge1",
    "rouge2",
    "rougeL",
    "rougeLsum",
    "rouge_n",
    "rouge_t5",
    "sacrebleu_signature",
    "sentence_bleu",
    "sentence_chrf",
    "squad_em",
    "squad_f1",
    "suffix_exact_match",
    "suffix_quasi_exact_match",
    "ter",
    "ter_score",
    "token_f1",
    "token_perplexity",
    "treebank_tokenize",
    "win_rate",
    "word_edit_distance",
    "word_edit_similarity",
    "word_perplexity",
    "word_set_f1",
]
