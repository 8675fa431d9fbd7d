"""The SQuAD official script's answer normalisation, as polars expressions.

``normalize_answer`` of the SQuAD 2.0 evaluation script (and of
``transformers.data.metrics.squad_metrics``) applies, in this order:

1. ``str.lower()``;
2. removal of every character of ASCII ``string.punctuation``;
3. ``re.sub(r"\\b(a|an|the)\\b", " ", text)`` with Python's Unicode ``\\b``;
4. ``" ".join(text.split())``: runs of Python whitespace become one space, ends trimmed.

:func:`squad_normalize` reproduces those four steps exactly (Python's own lower
casing, word characters and whitespace, see :mod:`evalframe.normalize._python_text`);
:func:`squad_tokens` is ``get_tokens``: the normalised text split on whitespace.
:func:`squad_word_ids` gives the same words as integer ids, normalising each
distinct space-separated piece of a batch once (what ``squad_em`` and ``squad_f1``
count on).

>>> import polars as pl
>>> df = pl.DataFrame({"answer": ["The  Eiffel-Tower!", "an apple a day", "  ", None]})
>>> df.with_columns(
...     squad_normalize("answer").alias("normalized"), squad_tokens("answer").alias("tokens")
... )
shape: (4, 3)
┌────────────────────┬─────────────┬──────────────────┐
│ answer             ┆ normalized  ┆ tokens           │
│ ---                ┆ ---         ┆ ---              │
│ str                ┆ str         ┆ list[str]        │
╞════════════════════╪═════════════╪══════════════════╡
│ The  Eiffel-Tower! ┆ eiffeltower ┆ ["eiffeltower"]  │
│ an apple a day     ┆ apple day   ┆ ["apple", "day"] │
│                    ┆             ┆ []               │
│ null               ┆ null        ┆ null             │
└────────────────────┴─────────────┴──────────────────┘
"""

from __future__ import annotations

import re
import string
from functools import cache

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr, shared_kernel
from evalframe.normalize._python_text import (
    as_class,
    has_multibyte,
    lower,
    replace_words,
    whitespace_characters,
    whitespace_class,
)
from evalframe.normalize.table import NORMALIZERS

__all__ = ["may_have_no_words", "squad_normalize", "squad_tokens", "squad_word_ids"]

#: The articles ``normalize_answer`` removes as whole words.
ARTICLES = ("a", "an", "the")

#: A regex class of ASCII ``string.punctuation`` (what ``remove_punc`` drops).
PUNCTUATION_CLASS = "[" + "".join(re.escape(ch) for ch in string.punctuation) + "]"

#: On ASCII text Python's ``\b`` and the regex crate's ASCII ``\b`` agree exactly.
_ASCII_ARTICLES = r"(?-u:\b)(?:" + "|".join(ARTICLES) + r")(?-u:\b)"

_EMPTY_TOKENS = pl.lit([], dtype=pl.List(pl.String))


def may_have_no_words(text: pl.Expr) -> pl.Expr:
    """True for every text without words after ``normalize_answer`` (and a few others).

    A text normalises to ``""`` only when it holds nothing but whitespace, ASCII
    punctuation and the letters of the articles (``a`` ``n`` ``t`` ``h`` ``e``, either
    case): every other character is kept by the four steps, and no other character
    lower-cases into these (the conformance tests check it on every code point). A
    cheap test of which texts are worth normalising.

    >>> texts = pl.Series(["The...", "tea", "thé"])
    >>> pl.select(may_have_no_words(pl.lit(texts))).to_series().to_list()
    [True, True, False]
    """
    return text.str.contains(_wordless_pattern())


@cache
def _wordless_pattern() -> str:
    """Texts of whitespace, ASCII punctuation and article letters only (see above)."""
    return f"^(?:{whitespace_class()}|{PUNCTUATION_CLASS}|[anthe]|[ANTHE])*$"


@cache
def _irregular_whitespace() -> str:
    """Runs of Python whitespace other than one single space (what ``split_join`` changes)."""
    every = as_class(whitespace_characters())
    not_space = as_class(ch for ch in whitespace_characters() if ch != " ")
    return f"{every}*{not_space}{every}*| {{2,}}"


def _exact_until_articles(text: pl.Expr) -> pl.Expr:
    """Steps 1-3 with Python semantics for any text (slower: Unicode word classes)."""
    text = lower(text).str.replace_all(PUNCTUATION_CLASS, "")
    return replace_words(text, ARTICLES, " ")


def _normalize_batch(series: pl.Series) -> pl.Series:
    """``normalize_answer`` over a whole column.

    ASCII rows (almost all, in practice) take a fast path that is exact for them:
    ASCII lower-casing, and the regex crate's ASCII ``\b`` for the articles. The
    other rows go through the Unicode-exact steps. Only runs of whitespace that are
    not already a single space are rewritten, so most strings are left as they are.
    """
    # One polars call for the ASCII path (each call holds the GIL a while).
    series = series.cast(pl.String)
    text = pl.col("text")
    fast = series.to_frame("text").select(
        normalized=_single_spaces(
            text.str.to_lowercase()
            .str.replace_all(PUNCTUATION_CLASS, "")
            .str.replace_all(_ASCII_ARTICLES, " ")
        ),
        multibyte=has_multibyte(text),
    )
    normalized = fast["normalized"]
    rows = np.flatnonzero(fast["multibyte"].to_numpy())
    if rows.size:
        exact = pl.select(_single_spaces(_exact_until_articles(pl.lit(series.gather(rows)))))
        normalized = normalized.scatter(rows, exact.to_series())
    return normalized.alias(series.name)


def _single_spaces(text: pl.Expr) -> pl.Expr:
    """Step 4: runs of Python whitespace to one space, none at the ends."""
    return text.str.replace_all(_irregular_whitespace(), " ").str.strip_chars(" ")


@NORMALIZERS.decorator(
    name="squad",
    reference="SQuAD v2.0 official script: normalize_answer",
    meaning="lower case, punctuation and the articles a/an/the removed, whitespace collapsed",
)
def squad_normalize(expr: IntoExpr) -> pl.Expr:
    """SQuAD's ``normalize_answer``: lower case, drop punctuation and articles, fix spaces.

    Parameters
    ----------
    expr
        A string column name or expression.

    Returns
    -------
    pl.Expr
        ``String``: the normalised text, null where the input is null. Words are
        separated by exactly one space, with none at either end, so the result
        is ``""`` exactly when the answer has no tokens.

    Notes
    -----
    Reference: ``normalize_answer`` in the official SQuAD 2.0 evaluation script
    (``transformers.data.metrics.squad_metrics.normalize_answer``). Every step
    uses Python's semantics, not Rust's: ``str.lower`` (final sigma, ``İ``),
    ``string.punctuation`` only (Unicode punctuation such as ``–`` or ``“`` stays
    and is part of a word), ``\\b`` between a Python word character
    (``str.isalnum()`` or ``_``) and anything else (a combining mark is not a
    word character, so ``"a\\u0301"`` loses its ``a``; ``"a²"`` keeps it, ``²``
    being numeric), and ``str.split()``'s whitespace (``\\x1c``-``\\x1f``,
    ``\\x85``, ``\\u3000``... but not ``\\u200b``).

    It runs as one batched kernel over the column. Calling it twice on the same
    input returns the same expression, so metrics requested together in one
    lazy ``with_columns`` normalise the column once.

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(squad_normalize(pl.lit("A\\u3000Tale of the Σ…"))).item()
    'tale of σ…'
    """
    expr = parse_into_expr(expr)
    return shared_kernel(expr, _normalize_batch, pl.String)


def squad_tokens(expr: IntoExpr) -> pl.Expr:
    """SQuAD's ``get_tokens``: the words of :func:`squad_normalize` (``list[str]``).

    Parameters
    ----------
    expr
        A string column name or expression.

    Returns
    -------
    pl.Expr
        ``List(String)``: an empty list for text that normalises to ``""``
        (empty, whitespace, punctuation or articles only), null for null input.

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(squad_tokens(pl.lit("the the Cat's cat"))).item().to_list()
    ['cats', 'cat']
    """
    return tokens_of_normalized(squad_normalize(expr))


def tokens_of_normalized(normalized: pl.Expr | pl.Series) -> pl.Expr | pl.Series:
    """Split text whose words are already separated by single spaces (``""`` -> ``[]``)."""
    if isinstance(normalized, pl.Series):
        return pl.select(tokens_of_normalized(pl.lit(normalized))).to_series()
    return (
        pl.when(normalized == "")
        .then(_EMPTY_TOKENS)
        .otherwise(normalized.str.split(" "))
    )


def squad_word_ids(text: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """The words of ``normalize_answer`` of every string, as exact integer ids.

    Parameters
    ----------
    text
        ``String``; a null is read as ``""``.

    Returns
    -------
    counts : np.ndarray
        ``int64``, the number of words of each string (``len(get_tokens(s))``).
    words : np.ndarray
        ``int32`` (``int64`` from 2**31 pieces on), the words of all strings, string
        after string, each as an id: two words get the same id exactly when they are
        equal. The ids are those of this call only.

    Notes
    -----
    Each string is cut at its spaces, and every *distinct* piece is normalised
    once, by :func:`squad_normalize`'s kernel. This equals normalising the whole
    string because every step of ``normalize_answer`` acts within the runs
    between whitespace characters:

    - ``str.lower`` maps a whitespace character to itself and no other character
      to whitespace, and its only context rule (a final sigma) looks across
      case-ignorable characters to the nearest cased one, and a whitespace
      character is neither: it stops the look exactly as the end of the text does;
    - the punctuation removed is ASCII ``string.punctuation``, which holds no
      whitespace, character by character;
    - ``\\b(a|an|the)\\b`` matches only word characters, and a whitespace character
      is not one, so it is a boundary exactly as the end of the text is; the
      replacement is a space;
    - ``str.split()`` then splits at every whitespace character.

    So a piece's words are the words it contributes to the whole string, whatever
    else (a tab, a no-break space) it still holds. The conformance tests check these
    facts on every whitespace character of the running Python.

    Examples
    --------
    >>> counts, words = squad_word_ids(pl.Series(["The cat, the CAT!", "a", "cat x\u3000the"]))
    >>> counts.tolist(), bool(words[0] == words[1] == words[2]), bool(words[3] != words[2])
    ([2, 0, 2], True, True)
    """
    if text.len() == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    # Split as a Series: the same in one select with the piece counts peaks 25 MB
    # higher on 100,000 rows (counting the spaces apart costs as much as the split).
    text = text.cast(pl.String).fill_null("")
    pieces = text.str.split(" ")  # every string has at least one piece ("" has [""])
    piece_end = np.cumsum(pieces.list.len().to_numpy(), dtype=np.int64)
    coded = pieces.explode(empty_as_null=False).cast(pl.Categorical(pl.Categories.random()))
    del pieces
    # Indices and ids fit in 32 bits below 2**31 pieces: half the memory of int64.
    piece_id = coded.to_physical().to_numpy()
    index = np.int32 if piece_id.size < 2**31 else np.int64
    size = int(piece_id.max()) + 1
    # One occurrence of every distinct piece, in id order.
    some = np.zeros(size, dtype=index)
    some[piece_id] = np.arange(piece_id.size, dtype=index)
    normalized = _normalize_batch(coded.gather(some).cast(pl.String)).to_frame("normalized")
    del coded, some
    split = tokens_of_normalized(pl.col("normalized"))
    n_words = normalized.select(split.list.len()).to_series().to_numpy().astype(index)
    word_codes = (
        normalized.select(
            split.explode(empty_as_null=False, keep_nulls=False)
            .cast(pl.Categorical(pl.Categories.random()))
            .to_physical()
        )
        .to_series()
        .to_numpy()
        .astype(index, copy=False)
    )
    del normalized
    piece_words = n_words[piece_id]
    # Words up to the end of each piece, and so of each string (np.add.reduceat would
    # hold the GIL all along; a gather does not).
    words_until = (
        pl.DataFrame({"w": piece_words})
        .select(pl.col("w").cast(pl.Int64).cum_sum())
        .to_series()
        .to_numpy()
    )
    counts = np.diff(words_until[piece_end - 1], prepend=0)
    if n_words.max(initial=0) <= 1:
        # Every piece is one word or none: look each piece's word up directly.
        del piece_words
        word_of = np.full(size, -1, dtype=index)
        word_of[n_words == 1] = word_codes
        words = word_of[piece_id]
        return counts, words[words >= 0]
    first = np.cumsum(n_words, dtype=np.int64) - n_words  # a distinct piece's first word
    run_start = np.repeat(first[piece_id] - words_until + piece_words, piece_words)
    return counts, word_codes[run_start + np.arange(run_start.size)]
