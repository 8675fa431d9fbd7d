"""rouge-score's tokenizer as Polars expressions, with the Porter stemmer applied once per word.

``rouge_score.tokenize.tokenize(text, stemmer)`` (rouge-score 0.1.2, the
``DefaultTokenizer`` of ``RougeScorer``):

1. ``text.lower()``;
2. every run of characters outside ``[a-z0-9]`` becomes one space, then the text is
   split on whitespace;
3. with a stemmer (``use_stemmer=True``), each token **longer than 3 characters** is
   replaced by ``nltk.stem.porter.PorterStemmer().stem(token)`` (NLTK_EXTENSIONS mode);
4. tokens that do not match ``^[a-z0-9]+$`` (the empty ones) are dropped.

Here steps 1-2 are ``str.to_lowercase().str.extract_all("[a-z0-9]+")``: the same tokens
for every Unicode character (checked against Python's ``str.lower`` over every code
point: the only non-ASCII characters that yield a token are ``İ`` (U+0130), which lower
cases to ``i`` and a combining dot, and the Kelvin sign ``K`` (U+212A), which lower cases
to ``k``). Everything else that is not an ASCII letter or digit is a separator and is
deleted: accented letters split words (``"café"`` -> ``["caf"]``), and CJK text has no
tokens at all.

Stemming runs on the **distinct** words of a batch, each stemmed once and remembered for
the process (the stems are a pure function of the word), never once per occurrence.

>>> import polars as pl
>>> df = pl.DataFrame({"text": ["The runners were running!", "Café 東京 déjà-vu", None]})
>>> df.with_columns(
...     rouge_tokenize("text").list.join(" ").alias("stemmed"),
...     rouge_tokenize("text", use_stemmer=False).list.join(" ").alias("plain"),
... )
shape: (3, 3)
┌───────────────────────────┬─────────────────────┬──────────────────────────┐
│ text                      ┆ stemmed             ┆ plain                    │
│ ---                       ┆ ---                 ┆ ---                      │
│ str                       ┆ str                 ┆ str                      │
╞═══════════════════════════╪═════════════════════╪══════════════════════════╡
│ The runners were running! ┆ the runner were run ┆ the runners were running │
│ Café 東京 déjà-vu         ┆ caf d j vu          ┆ caf d j vu               │
│ null                      ┆ null                ┆ null                     │
└───────────────────────────┴─────────────────────┴──────────────────────────┘
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr

__all__ = ["encode_texts", "porter_stems", "rouge_tokenize", "rouge_words", "stem_words"]

#: A token of rouge-score's tokenizer (``VALID_TOKEN_PATTERN`` without the anchors).
TOKEN_PATTERN = r"[a-z0-9]+"
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")

#: Stems computed in this process: word -> stem (rouge-score's rule applied: words of at
#: most 3 characters are their own stem). Bounded by bytes (:data:`_STEMS_BYTES`, counting
#: both strings and an entry's overhead); cleared when full.
_STEMS: dict[str, str] = {}
_STEMS_BYTES = 64 * 2**20
_STEM_OVERHEAD = 200  # bytes per entry besides the characters of the word and its stem
_stems_size = 0
_STEMMER_LOCK = threading.Lock()
_STEMMER = None


def rouge_words(text: pl.Expr) -> pl.Expr:
    """rouge-score's tokens before stemming, as ``List(String)`` (steps 1-2; null stays null).

    >>> import polars as pl
    >>> pl.select(rouge_words(pl.lit("It's 3:45 p.m., ÉTÉ!"))).item().to_list()
    ['it', 's', '3', '45', 'p', 'm', 't']
    """
    return text.str.to_lowercase().str.extract_all(TOKEN_PATTERN)


def _stemmer():
    global _STEMMER
    with _STEMMER_LOCK:
        if _STEMMER is None:
            from nltk.stem import porter

            _STEMMER = porter.PorterStemmer()
        return _STEMMER


def porter_stems(words: Sequence[str]) -> list[str]:
    """rouge-score's stem of each word: ``PorterStemmer().stem(word)`` if ``len(word) > 3``.

    Meant for distinct words (each is stemmed once per process and remembered).

    >>> porter_stems(["running", "was", "flies", "ties"])
    ['run', 'was', 'fli', 'tie']
    """
    global _stems_size
    missing = [word for word in words if word not in _STEMS]
    if missing:
        stem = _stemmer().stem
        found = {word: stem(word) if len(word) > 3 else word for word in dict.fromkeys(missing)}
        size = sum(len(word) + len(root) + _STEM_OVERHEAD for word, root in found.items())
        if _stems_size + size > _STEMS_BYTES:
            _STEMS.clear()
            _stems_size = 0
        if size <= _STEMS_BYTES:
            _STEMS.update(found)
            _stems_size += size
        return [found[word] if word in found else _STEMS[word] for word in words]
    return [_STEMS[word] for word in words]


def stem_words(words: pl.Series) -> pl.Series:
    """rouge-score's stemming step over a ``String`` Series, each distinct word stemmed once.

    Words of at most 3 characters are kept; a stem that is not ``[a-z0-9]+`` (never seen
    with nltk 3.10 on such words, but rouge-score checks) becomes ``""``, which the
    tokenizer then drops.

    >>> import polars as pl
    >>> stem_words(pl.Series(["cats", "cat", "cats", None])).to_list()
    ['cat', 'cat', 'cat', None]
    """
    long = words.filter(words.str.len_chars() > 3).unique()
    if long.is_empty():
        return words
    old = long.to_list()
    new = [stem if _VALID_TOKEN.match(stem) else "" for stem in porter_stems(old)]
    return words.replace(old, new)


def rouge_tokenize(text: IntoExpr, *, use_stemmer: bool = True) -> pl.Expr:
    """``rouge_score.tokenize.tokenize(text, stemmer)`` per row, as ``List(String)``.

    Parameters
    ----------
    text
        ``String`` column (name or expression).
    use_stemmer
        Apply the Porter stemmer to tokens longer than 3 characters (``RougeScorer(...,
        use_stemmer=True)``). Default True.

    Returns
    -------
    pl.Expr
        ``List(String)``: the tokens; null where the text is null, ``[]`` for a text
        without ASCII letters or digits.
    """
    words = rouge_words(parse_into_expr(text).cast(pl.String))
    if not use_stemmer:
        return words
    return words.map_batches(_stem_lists, return_dtype=pl.List(pl.String), is_elementwise=True)


def _stem_lists(lists: pl.Series) -> pl.Series:
    lengths = lists.list.len().fill_null(0).to_numpy().astype(np.int64)
    flat = stem_words(lists.explode(empty_as_null=False, keep_nulls=False))
    owner = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
    keep = (flat != "").to_numpy()
    if not keep.all():
        flat = flat.filter(pl.Series(keep))
        lengths = np.bincount(owner[keep], minlength=len(lists)).astype(np.int64)
    return implode_by_row(flat, lengths, lists.is_null())


def implode_by_row(flat: pl.Series, lengths: np.ndarray, nulls: pl.Series) -> pl.Series:
    """A ``List`` Series from its flattened values and the length of each list."""
    import pyarrow as pa

    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    mask = pa.array(nulls.to_numpy()) if nulls.any() else None
    values = flat.rechunk().to_arrow()
    array = pa.LargeListArray.from_arrays(pa.array(offsets), values, mask=mask)
    return pl.Series(array)


@dataclass(frozen=True)
class Encoded:
    """Texts as integer token ids: ``ids`` of every token in order, ``lengths`` per text.

    Equal ids are equal tokens (after stemming); ``vocabulary`` is the number of ids
    (ids are ``0 .. vocabulary - 1``).
    """

    ids: np.ndarray
    lengths: np.ndarray
    vocabulary: int


def encode_texts(texts: pl.Series, *, use_stemmer: bool) -> Encoded:
    """rouge-score's tokens of every text of ``texts`` as integer ids (a null text: none).

    The words are encoded once (a categorical encoding), the distinct words are stemmed,
    and the distinct stems encoded again, so the work per occurrence is integer gathers.

    >>> import polars as pl
    >>> encoded = encode_texts(pl.Series(["cats sat", "a cat", None]), use_stemmer=True)
    >>> encoded.ids.tolist(), encoded.lengths.tolist(), encoded.vocabulary
    ([0, 1, 2, 0], [2, 2, 0], 3)
    """
    words = texts.cast(pl.String).str.to_lowercase().str.extract_all(TOKEN_PATTERN)
    lengths = words.list.len().fill_null(0).to_numpy().astype(np.int64)
    flat = words.explode(empty_as_null=False, keep_nulls=False)
    categories = pl.Categories.random()
    # the categorical Series must stay alive while its categories are read
    coded = flat.cast(pl.Categorical(categories))
    codes = coded.to_physical().to_numpy().astype(np.int64)
    vocabulary = categories.to_series()
    del coded
    if not use_stemmer or vocabulary.is_empty():
        return Encoded(codes, lengths, len(vocabulary))
    stems = stem_words(vocabulary)
    stem_categories = pl.Categories.random()
    coded_stems = stems.cast(pl.Categorical(stem_categories))
    stem_codes = coded_stems.to_physical().to_numpy().astype(np.int64)
    n_stems = len(stem_categories.to_series())
    del coded_stems
    ids = stem_codes[codes]
    invalid = (stems == "").to_numpy()
    if invalid.any():  # stems rouge-score's final check drops
        drop = invalid[codes]
        owner = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        ids = ids[~drop]
        lengths = np.bincount(owner[~drop], minlength=len(lengths)).astype(np.int64)
    return Encoded(ids, lengths, n_stems)
