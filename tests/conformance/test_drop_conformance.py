"""drop_em / drop_f1 against lm-evaluation-harness's DROP functions (lm-eval 0.4.13).

The reference is ``lm_eval/tasks/drop/utils.py``, loaded by path (importing
``lm_eval.tasks`` is heavy). Each row is scored by the harness exactly as its
``process_results`` is called: ``results`` the list of predicted spans,
``doc["answers"]`` the list of gold alternatives as tuples of spans. Exact
equality for em, 1e-12 for f1.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalframe import metrics as M
from evalframe.normalize import drop_fix_number, drop_is_number, drop_normalize


def _load_reference():
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "tasks" / "drop" / "utils.py"
    if not path.is_file():
        return None
    module_spec = importlib.util.spec_from_file_location("_drop_reference", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


REF = _load_reference()
pytestmark = pytest.mark.skipif(REF is None, reason="lm-eval (the reference) is not installed")


def _as_spans(prediction):
    return [prediction] if isinstance(prediction, str) else list(prediction)


def _as_alternatives(gold):
    if isinstance(gold, str):
        return [(gold,)]
    return [(alt,) if isinstance(alt, str) else tuple(alt) for alt in gold]


def reference_scores(prediction, gold) -> tuple[float, float]:
    """The harness's (em, f1) for one row, called as its process_results is."""
    result = REF.process_results({"answers": _as_alternatives(gold)}, _as_spans(prediction))
    return float(result["em"]), float(result["f1"])


def _score(predictions, golds, pred_dtype, gold_dtype) -> pl.DataFrame:
    frame = pl.DataFrame(
        {"pred": predictions, "gold": golds}, schema={"pred": pred_dtype, "gold": gold_dtype}
    )
    return frame.select(
        M.drop_em("pred", "gold").alias("em"), M.drop_f1("pred", "gold").alias("f1")
    )


def _check(predictions, golds, pred_dtype, gold_dtype):
    scored = _score(predictions, golds, pred_dtype, gold_dtype)
    failures = []
    for index, (prediction, gold, em, f1) in enumerate(
        zip(predictions, golds, scored["em"], scored["f1"], strict=True)
    ):
        ref_em, ref_f1 = reference_scores(prediction, gold)
        if em != ref_em or abs(f1 - ref_f1) > 1e-12:
            failures.append((index, prediction, gold, (em, f1), (ref_em, ref_f1)))
    assert not failures, f"{len(failures)} mismatches, first: {failures[:5]}"


# Spans exercising every rule: numbers in every float() form, Unicode digits and
# whitespace, hyphens, punctuation, articles, empty and blank spans, case folding.
NUMBER_FORMS = [
    "4", "4.0", "04", "1,000", "1000", "1000.0", "1_000", "1__000", "_1", "1_", "1e3", "1E3",
    "1e+3", "1e-3", "1e", ".5", "5.", "0.5", "+5", "nan", "NaN", "-nan", "+nan", "inf", "+inf",
    "-inf", "Infinity", "INFINITY", "infinit", " 12 ", "\t12\n", "\x0b12\x0c", "\x1c12",
    "12\x1f", "\u300012\u3000", "\xa012", "\x8512", "١٢", "١_٢", "۱۲", "१२", "𝟙𝟚", "１２",
    "²", "½", "Ⅻ", "1e400", "1e-400", "0.00001", "0.0001", "1e16", "1e15", "123456789012345678",
    "0.1", "1.5%", "$5", "5$", "1.2.3", "1,2", "3/4", "0x10", "1j", "00", "0", "0.0", "-0",
    "5.0 yards", "1 000", "1-000", "7th", "'99", "(5)", "e5", ".", "..", "+", "_",
]
WORDS = [
    "", " ", "  ", "\t", "\n", "\u3000", "\x1c", "a", "an", "the", "The", "THE", "A an the",
    "a a a", "anthem", "then", "thea", "the-the", "a-b", "-", "--", "- -", "x-", "-x",
    "well-known", "twenty-one", "New York", "new  york", "New-York", "York", "Smith",
    "smith.", "Smith's", "O'Brien", "obrien", "naïve", "naive", "Straße", "STRASSE", "İstanbul",
    "istanbul", "ΣΑΣ", "σας", "ǅ", "é", "é", "don't", "dont", "!!!", "?", "...", "—", "–",
    "a—b", "x\u2028y", "x\u00a0y", "touchdown", "touchdowns", "yard", "yards", "field goal",
    "the field goal", "goal field", "Brady", "Tom Brady", "brady tom",
]
SPANS = NUMBER_FORMS + WORDS


def test_normalize_matches_reference_on_every_adversarial_span():
    texts = SPANS + [f"{a} {b}" for a in SPANS[::3] for b in SPANS[1::4]]
    got = pl.select(
        drop_normalize(pl.lit(pl.Series(texts, dtype=pl.String))).alias("n"),
        drop_is_number(pl.lit(pl.Series(texts, dtype=pl.String))).alias("num"),
        drop_fix_number(pl.lit(pl.Series(texts, dtype=pl.String))).alias("fix"),
    )
    assert got["n"].to_list() == [REF._normalize(text) for text in texts]
    assert got["num"].to_list() == [REF._is_number(text) for text in texts]
    assert got["fix"].to_list() == [REF._fix_number(text) for text in texts]


def test_is_number_matches_float_for_every_character():
    # Every character alone and between digits: float() accepts exactly what we accept.
    import sys

    characters = [chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i <= 0xDFFF]
    texts = [*characters, *(f"1{ch}2" for ch in characters[::7])]
    texts += [f"{ch}1" for ch in characters[::5]]
    got = pl.select(drop_is_number(pl.lit(pl.Series(texts, dtype=pl.String)))).to_series()
    expected = [REF._is_number(text) for text in texts]
    mismatched = [t for t, g, e in zip(texts, got.to_list(), expected, strict=True) if g != e]
    assert not mismatched, mismatched[:10]


def test_number_formatting_matches_str_float():
    rng = random.Random(7)
    texts = [f"{rng.randint(0, 10 ** rng.randint(1, 20))}e{rng.randint(-330, 320)}"
             for _ in range(3000)]
    texts += [f"{rng.random() * 10 ** rng.randint(-8, 18):.{rng.randint(0, 20)}f}"
              for _ in range(3000)]
    texts += [f"0.{'0' * rng.randint(0, 8)}{rng.randint(1, 10**rng.randint(1, 17))}"
              for _ in range(3000)]
    got = pl.select(drop_fix_number(pl.lit(pl.Series(texts, dtype=pl.String)))).to_series()
    assert got.to_list() == [REF._fix_number(text) for text in texts]


# Rows where every harness detail matters.
ADVERSARIAL_ROWS = [
    (["4", "4"], "4"),                      # duplicate spans: em 0.0, f1 0.5
    (["4"], [["4", "4"]]),                  # em 0.0
    (["4", "4"], [["4", "4"]]),
    ("4", ["4", "four"]),
    ("5", "4"),
    ("five", "5"),
    ("1,000", "1000"),
    ("1000.0", "1_000"),
    ("١٢ yards", "12 yards"),
    ("1e3", "1000"),
    (" 12 ", "12"),
    ("nan", "NaN"),
    ("inf", "Infinity"),
    ("the", "a"),                           # both normalise to "" -> f1 1.0, em 1.0
    ("", "x"),
    ("x", ["", "x"]),                       # blank first gold span: skipped
    ("x", [["  ", "x"], ["y"]]),            # blank first span skips the whole alternative
    ("x", [["x", ""]]),                     # blank later span: not skipped
    ("x", ["\u3000"]),                      # only blank alternatives -> 0.0
    ("x", ["\x1c"]),                        # \x1c is str.isspace(): blank
    ("x", []),                              # no alternatives -> 0.0
    ([], "x"),                              # no predicted spans
    ([], ["", "x"]),
    ([""], [""]),
    (["a", "b"], [["b", "a"]]),
    (["a", "b"], [["a b"]]),
    (["a b"], [["a", "b"]]),
    (["a", "a", "b"], [["a", "b", "b"]]),
    (["x y", "x"], [["x", "x y"]]),         # ties in the alignment
    (["x", "x"], [["x y", "x z"]]),
    (["x y z", "y"], [["y", "x", "z"]]),
    (["1 yard", "2 yards"], [["2 yards", "1 yard"]]),
    (["1 yard", "3 yards"], [["2 yards", "1 yard"]]),  # number mismatch zeroes a pair
    (["Tom Brady", "Smith"], [["smith"], ["brady", "tom"]]),
    (["well-known"], "well known"),
    (["twenty-one", "-"], [["twenty one"]]),
    ("5\t6", "5"),                          # words split inside a token keep their text
    ("the\t5", "5.0"),
    ("1.5%", "15"),
    ("$5", "5"),
    ("touchdown pass", ["pass", "touchdown", "touchdown pass"]),
    ("first quarter 7 yards", [["7"], ["quarter"]]),
    ("a b c", "a b c d"),
    ("b c", "a b c d e f"),                 # f1 0.5714... -> 0.57
    ("x", "x y z w v u t s"),               # f1 0.2222 -> 0.22
    (["a", "b", "c"], [["a", "x", "y", "z", "w", "v", "u", "q"]]),  # mean 1/8 = 0.125 -> 0.12
    (["a", "b", "c", "d", "e", "f", "g", "h"], [["a", "b", "c"]]),  # 3/8 = 0.375 -> 0.38
    (["İ", "ǅ"], [["i̇", "ǆ"]]),
    (["ΣΑΣ"], "σας"),
]


@pytest.mark.parametrize("case", range(len(ADVERSARIAL_ROWS)))
def test_adversarial_rows(case):
    prediction, gold = ADVERSARIAL_ROWS[case]
    pred_dtype = pl.String if isinstance(prediction, str) else pl.List(pl.String)
    if isinstance(gold, str):
        gold_dtype = pl.String
    elif gold and all(isinstance(alt, str) for alt in gold):
        gold_dtype = pl.List(pl.String)
    else:
        gold_dtype = pl.List(pl.List(pl.String))
    _check([prediction], [gold], pred_dtype, gold_dtype)


def test_every_adversarial_span_pair():
    # Hundreds of single-span rows: every span against a spread of others.
    rng = random.Random(3)
    predictions, golds = [], []
    for span in SPANS:
        for other in [*rng.sample(SPANS, 8), span]:
            predictions.append(span)
            golds.append([other, rng.choice(SPANS)])
    _check(predictions, golds, pl.String, pl.List(pl.String))


def _random_span(rng: random.Random) -> str:
    pieces = rng.choices([*SPANS, "yard", "Smith", "touchdown", "7", "14"], k=rng.randint(1, 3))
    return rng.choice([" ", "-", " - ", "  "]).join(pieces)


def test_random_rows_nested():
    rng = random.Random(11)
    predictions, golds = [], []
    for _ in range(2500):
        predictions.append([_random_span(rng) for _ in range(rng.choice([0, 1, 1, 1, 2, 3]))])
        golds.append([
            [_random_span(rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
            for _ in range(rng.choice([0, 1, 2, 3]))
        ])
    _check(predictions, golds, pl.List(pl.String), pl.List(pl.List(pl.String)))


def test_random_rows_flat():
    rng = random.Random(12)
    vocabulary = ["7", "7.0", "seven", "the 7", "7 yards", "yards", "Smith", "smith", "", " ",
                  "1,000", "1000", "Tom Brady", "brady", "a", "1e3"]
    predictions = [rng.choice(vocabulary) for _ in range(2000)]
    golds = [rng.sample(vocabulary, rng.randint(1, 4)) for _ in range(2000)]
    _check(predictions, golds, pl.String, pl.List(pl.String))
    _check(predictions, [g[0] for g in golds], pl.String, pl.String)


def test_wide_alternatives_with_ties():
    # Many spans on both sides from a tiny vocabulary: ties in the assignment, equal
    # spans, widths past numpy's 8-element summation block, 1 x n and n x 1 shapes.
    rng = random.Random(13)
    vocabulary = ["7", "7 yards", "yards", "Smith", "smith 7", "a", "", "x y", "y"]
    predictions, golds = [], []
    for _ in range(1500):
        predictions.append(rng.choices(vocabulary, k=rng.choice([0, 1, 2, 3, 5, 9, 12])))
        golds.append([
            rng.choices(vocabulary, k=rng.choice([1, 2, 3, 4, 8, 11]))
            for _ in range(rng.randint(1, 3))
        ])
    _check(predictions, golds, pl.List(pl.String), pl.List(pl.List(pl.String)))


def test_span_normalisation_by_distinct_token_matches_the_reference():
    # The metrics normalise each distinct token once and join the results; this must
    # equal the harness's _normalize of the whole span.
    from evalframe.normalize.drop import normalize_spans

    rng = random.Random(14)
    spans = [*SPANS, *(_random_span(rng) for _ in range(3000))]
    ours = normalize_spans(pl.Series(spans, dtype=pl.String)).to_list()
    assert ours == [REF._normalize(span) for span in spans]


# Characters that stress each rule: separators, Python-only whitespace, digits of
# other scripts, number syntax, punctuation, case mappings that change length or
# depend on context (İ, final sigma), article letters.
_TRICKY = (
    " -\t\n\x1c\x85\u3000\u2028_.,+eE0179١۲𝟙½$%'!?()ΣσςİIiıtheaAnTHE\u0301é"
)
_span = st.text(alphabet=_TRICKY, max_size=12)
_row = st.tuples(
    st.lists(_span, max_size=4),
    st.lists(st.lists(_span, min_size=1, max_size=4), max_size=3),
)


@given(st.lists(_row, min_size=1, max_size=25))
def test_random_unicode_rows_match_the_reference(rows):
    predictions = [prediction for prediction, _ in rows]
    golds = [gold for _, gold in rows]
    _check(predictions, golds, pl.List(pl.String), pl.List(pl.List(pl.String)))
