"""TER against sacrebleu 2.6.0: corpus scores, segment statistics and the signature.

The reference is called as users call it: ``sacrebleu.corpus_ter(hypotheses,
reference_streams, ...)`` (and ``sacrebleu.metrics.TER(...)``) on the same rows. Scores
within 1e-9 (0-100 scale); the segment statistics equal sacrebleu's own, which
``TER._extract_corpus_statistics`` returns for the whole corpus in one call.
"""

from __future__ import annotations

import random

import polars as pl
import pytest

import evalframe as ef
from evalframe import metrics as M
from evalframe.metrics.ter import TER_SCORE, sacrebleu_signature
from tests.conformance import lighteval_cases
from tests.conformance.lighteval_cases_ter import documents

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu is not installed")

OPTIONS = [
    {},
    {"case_sensitive": True},
    {"normalized": True},
    {"no_punct": True},
    {"normalized": True, "asian_support": True},
    {"no_punct": True, "asian_support": True},
    {"normalized": True, "no_punct": True, "asian_support": True, "case_sensitive": True},
]

WORDS = str.split(
    "the a of cat Cat dog sat on mat . , ! ? ; : ( ) \" ' 's &quot; &amp; &lt; 3.5 1,000 - -- "
    "été Été naïve café e\u0301 Привет мир Мир 東京 日本語です カタカナ ひらがな 中文 、 。 「 」 "
    "！ ？ （ ） ， 한국어 — “ ” … über"
)
SEPARATORS = [" "] * 12 + ["  ", "\t", "\n", "\n-", "\u00a0", "\u3000", ""]


def sentence(rng: random.Random, low: int = 0, high: int = 14) -> str:
    count = rng.randint(low, high)
    return "".join(rng.choice(WORDS) + rng.choice(SEPARATORS) for _ in range(count))


ADVERSARIAL: list[tuple[str, list[str | None]]] = [
    ("", [""]), ("", ["a b c"]), ("a b c", [""]), ("   ", ["x"]), ("x", ["   "]),
    ("same words here", ["same words here"]), ("one", ["two"]), ("Word", ["word"]),
    ("東京は大きい。", ["東京は小さい。"]), ("Привет, мир!", ["Привет мир"]),
    ("e\u0301te\u0301", ["été"]), ("“quoted” — yes…", ["“quoted” —"]),
    ("a b c d e f", ["f e d c b a"]), ("the cat sat on the mat", ["on the mat the cat sat"]),
    ("x " * 300, ["x " * 299 + "y"]), (("lorem ipsum dolor " * 40).strip(), ["ipsum " * 50]),
    ("a &amp; b &quot;c&quot;", ["a & b \"c\""]), ("line one\nline two\n", ["line one line two"]),
    ("hyphen-\nated", ["hyphenated"]), ("trailing  ", ["trailing"]),
    ("several refs", ["several refs", "other", ""]), ("var refs", ["var", None]),
    ("ひらがなカタカナ漢字", ["ひらがな カタカナ 漢字"]), ("（全角）！", ["全角"]),
]


def random_rows(seed: int, count: int, max_refs: int = 1) -> list[tuple[str, list[str | None]]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        refs: list[str | None] = [sentence(rng, 1) for _ in range(rng.randint(1, max_refs))]
        if rng.random() < 0.3:  # a hypothesis close to a reference: shifts and edits
            words = (refs[0] or "").split()
            rng.shuffle(words[: rng.randint(0, len(words))])
            hypothesis = " ".join(words[: rng.randint(0, len(words))]) + " " + sentence(rng, 0, 3)
        else:
            hypothesis = sentence(rng)
        rows.append((hypothesis, refs))
    return rows


def streams(rows, depth: int) -> list[list[str | None]]:
    return [[refs[k] if k < len(refs) else None for _, refs in rows] for k in range(depth)]


def evalframe_statistics(rows, **options) -> pl.Series:
    frame = pl.DataFrame({"prediction": [h for h, _ in rows], "gold": [r for _, r in rows]},
                         schema={"prediction": pl.String, "gold": pl.List(pl.String)})
    return frame.select(M.ter("prediction", "gold", **options).alias("ter"))["ter"]


def corpus_value(statistics: pl.Series) -> float:
    sums = statistics.struct.unnest().sum()
    return float(TER_SCORE.formula({k: sums[k].to_numpy() for k in sums.columns})[0])


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
def test_corpus_score_and_statistics_equal_sacrebleu(options):
    rows = ADVERSARIAL + random_rows(seed=len(options) * 7 + 1, count=700, max_refs=3)
    depth = max(len(refs) for _, refs in rows)
    hypotheses, references = [h for h, _ in rows], streams(rows, depth)
    want = sacrebleu.corpus_ter(hypotheses, references, **options)
    statistics = evalframe_statistics(rows, **options)
    assert statistics.null_count() == 0
    assert abs(corpus_value(statistics) - want.score) <= 1e-9
    reference = sacrebleu.metrics.TER(**options)
    segment = reference._extract_corpus_statistics(hypotheses, references)
    got = statistics.to_list()
    for i, (edits, length) in enumerate(segment):
        assert got[i] == {"num_edits": edits, "ref_length": length}, (i, rows[i])


def test_thousands_of_single_reference_pairs_through_the_engine():
    rows = random_rows(seed=3, count=3000)
    frame = pl.DataFrame({"prediction": [h for h, _ in rows], "gold": [r[0] for _, r in rows]})
    want = sacrebleu.corpus_ter(frame["prediction"].to_list(), [frame["gold"].to_list()])
    scored = ef.score(frame, ["ter"])
    value = ef.aggregate(scored, metrics=["ter"])["value"].item()
    assert abs(value - want.score) <= 1e-9
    # groups: each group's score is sacrebleu's on the group's rows
    grouped = scored.with_columns((pl.int_range(pl.len()) % 3).alias("part"))
    table = ef.aggregate(grouped, by=["part"], metrics=["ter"]).sort("part")
    for part, value in zip(table["part"], table["value"], strict=True):
        rows_of = grouped.filter(pl.col("part") == part)
        expected = sacrebleu.corpus_ter(
            rows_of["prediction"].to_list(), [rows_of["gold"].to_list()]
        )
        assert abs(value - expected.score) <= 1e-9


def test_sentence_scores_equal_sacrebleu_sentence_ter():
    rows = ADVERSARIAL + random_rows(seed=17, count=300, max_refs=2)
    statistics = evalframe_statistics(rows).to_list()
    for (hypothesis, refs), stats in zip(rows, statistics, strict=True):
        want = sacrebleu.sentence_ter(hypothesis, [r for r in refs if r is not None]).score
        got = M.ter_score(stats["num_edits"], stats["ref_length"])
        assert abs(got - want) <= 1e-9, (hypothesis, refs)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("nrefs", [1, 2, "var"])
def test_signature_equals_sacrebleu(options, nrefs):
    reference = sacrebleu.metrics.TER(**options)
    refs = [["a"], ["b"]] if nrefs == 2 else [["a"]]
    if nrefs == "var":
        refs = [["a", "b"], ["c", None]]
    reference.corpus_score(["a"] * len(refs[0]), refs)
    signature = reference.get_signature()
    assert sacrebleu_signature(nrefs=nrefs, **options) == signature.format()
    assert sacrebleu_signature(nrefs=nrefs, short=True, **options) == signature.format(short=True)


@pytest.mark.skipif(not lighteval_cases.FIXTURE_DIR.is_dir(), reason="lighteval fixtures absent")
def test_fixture_documents_scored_per_document_equal_sacrebleu():
    # lighteval's own call scores one segment (see lighteval_cases_ter); evalframe's ter
    # over one row per document is the corpus TER sacrebleu gives on the same documents.
    path = lighteval_cases.FIXTURE_DIR / "ter.json"
    for case in lighteval_cases.load_cases(path):
        hypotheses, golds = documents(case)
        frame = pl.DataFrame({"prediction": hypotheses, "gold": golds})
        value = ef.aggregate(ef.score(frame, ["ter"]), metrics=["ter"])["value"].item()
        want = sacrebleu.corpus_ter(hypotheses, [[g[0] for g in golds]]).score
        assert abs(value - want) <= 1e-9, case.id
