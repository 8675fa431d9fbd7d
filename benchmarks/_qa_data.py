"""Seeded, generated QA dumps with distinct text on every row, written in chunks.

Shared by ``bench_streaming.py``, ``bench_small_batches.py`` and ``bench_in_memory.py``.
Every prediction and gold alternative holds its row number (as a word), so no two rows
share a text and caches keyed by value cannot hide the work. Words come from a
vocabulary with articles, punctuation, case and non-ASCII words (accents, Greek,
Cyrillic, CJK); about 30% of the alternatives copy the prediction with other case and
punctuation, so SQuAD EM is not always 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl

VOCABULARY = [
    "the", "a", "an", "The", "A", "Paris", "France", "1973", "October", "cat", "dog's",
    "New", "York", "city,", "U.S.", "$12", "nearly", "river", "(born", "1850)", "Dr.",
    "king", "Queen", "of", "and", "in", "Élan", "naïve", "über", "Σοφία", "Москва", "東京",
    "café", "İstanbul", "straße", "–", "“quoted”", "x", "y", "z",
] + [f"w{i}" for i in range(5000)]

#: The words before the numbered ones (drawn for 30% of the words).
_COMMON = 40

#: Rows generated at a time (the file is written one chunk, one row group, at a time).
CHUNK = 500_000


def _phrases(rng: np.random.Generator, rows: int, most: int, numbers: pl.Series) -> pl.Series:
    """``rows`` phrases of 1..``most`` words with the row number mixed in at a random place."""
    vocabulary = pl.Series(VOCABULARY, dtype=pl.String)
    lengths = rng.integers(1, most + 1, rows)
    at = rng.integers(0, most + 1, rows)
    words = []
    for j in range(most):
        common = rng.integers(0, _COMMON, rows)
        rare = rng.integers(_COMMON, len(VOCABULARY), rows)
        word = vocabulary.gather(np.where(rng.random(rows) < 0.3, common, rare))
        words.append(pl.when(pl.lit(pl.Series(j < lengths))).then(pl.lit(word)))
        words.append(pl.when(pl.lit(pl.Series(at == j))).then(pl.lit(numbers)))
    return pl.select(pl.concat_str(words, separator=" ", ignore_nulls=True)).to_series()


def chunk(start: int, rows: int, seed: int = 0) -> pl.DataFrame:
    """Rows ``start .. start + rows`` of the dump (the same rows for the same seed)."""
    rng = np.random.default_rng([seed, start])
    numbers = pl.Series(np.arange(start, start + rows)).cast(pl.String)
    tags = ("r" + numbers).alias("tag")
    prediction = _phrases(rng, rows, 8, tags)
    alternatives = []
    for _ in range(3):
        fresh = _phrases(rng, rows, 6, tags)
        copied = pl.select(pl.lit(prediction).str.to_uppercase() + "!").to_series()
        copy = pl.Series(rng.random(rows) < 0.3)
        alternatives.append(
            pl.when(pl.lit(copy)).then(pl.lit(copied)).otherwise(pl.lit(fresh))
        )
    n_gold = pl.Series(rng.integers(1, 4, rows))
    gold = pl.select(pl.concat_list(alternatives).list.head(pl.lit(n_gold))).to_series()
    n = pl.Series(rng.integers(10, 21, rows))
    c = pl.Series((rng.random(rows) * (n.to_numpy() + 1)).astype(np.int64))
    return pl.DataFrame(
        {
            "id": pl.Series(np.arange(start, start + rows)),
            "question": "What is question " + numbers + "?",
            "prediction": prediction,
            "gold": gold,
            "n": n,
            "c": c,
        }
    )


def chunks(rows: int, seed: int = 0) -> Iterator[pl.DataFrame]:
    """The dump of ``rows`` rows, chunk by chunk."""
    for start in range(0, rows, CHUNK):
        yield chunk(start, min(CHUNK, rows - start), seed)


def frame(rows: int, seed: int = 0) -> pl.DataFrame:
    """The dump of ``rows`` rows in memory."""
    return pl.concat(list(chunks(rows, seed)), rechunk=True)


def write_parquet(path: Path, rows: int, seed: int = 0) -> Path:
    """Write the dump of ``rows`` rows to ``path`` (parquet, one row group per chunk)."""
    import pyarrow.parquet as pq

    writer = None
    try:
        for part in chunks(rows, seed):
            table = part.to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, compression="zstd")
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    return path


def write_jsonl(path: Path, rows: int, seed: int = 0) -> Path:
    """Write the dump of ``rows`` rows to ``path`` as JSON lines."""
    with open(path, "wb") as handle:
        for part in chunks(rows, seed):
            part.write_ndjson(handle)
    return path
