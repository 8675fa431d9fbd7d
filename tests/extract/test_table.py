"""The extractor table: registration, resolution by name/Extractor/function, answer_of."""

from __future__ import annotations

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.extract.simple import boxed
from evalframe.extract.table import (
    EXTRACTION,
    EXTRACTORS,
    Extractor,
    answer_of,
    extraction,
    list_extractors,
    register_extractor,
    resolve_extractor,
)


def test_the_table_lists_every_registered_extractor():
    table = list_extractors()
    assert table.columns == ["name", "reference", "meaning"]
    assert table["name"].to_list() == sorted(EXTRACTORS)
    assert {"boxed", "gsm8k_answer", "last_number"} <= set(table["name"])
    assert table.filter(pl.col("reference") == "").is_empty()
    assert table.filter(pl.col("meaning") == "").is_empty()


def test_every_extractor_returns_the_struct_row_for_row():
    text = pl.Series("t", ["\\boxed{1}", "#### 2", "the answer is (C)", "", None])
    for entry in EXTRACTORS.values():
        out = pl.DataFrame({"t": text}).select(entry("t")).to_series()
        assert out.dtype == EXTRACTION, entry.name
        assert len(out) == len(text), entry.name
        # a null response: a null rule (the answer is the extractor's to document)
        assert out[-1]["rule"] is None, entry.name


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        register_extractor(Extractor("boxed", boxed, "-", "-"))


def test_resolve_by_name_extractor_and_function():
    assert resolve_extractor("m", None) == ("none", None)
    assert resolve_extractor("m", "none") == ("none", None)
    name, function = resolve_extractor("m", "boxed")
    assert (name, function) == ("boxed", boxed)
    assert resolve_extractor("m", EXTRACTORS["boxed"]) == ("boxed", boxed)
    # the table's own function is named by its table name
    assert resolve_extractor("m", boxed)[0] == "boxed"


def test_unknown_name_lists_the_table():
    with pytest.raises(EvalframeError, match=r"metric 'm': extractor='nope' is unknown.*'boxed'"):
        resolve_extractor("m", "nope")
    with pytest.raises(EvalframeError, match="is invalid"):
        resolve_extractor("m", 3)


def test_a_plain_function_is_wrapped_with_rule_custom():
    def first_word(text: pl.Expr) -> pl.Expr:
        return text.str.extract(r"^(\w+)", 1)

    name, function = resolve_extractor("m", first_word)
    assert name == "custom:first_word"
    frame = pl.DataFrame({"t": ["hello world", "  ", None]})
    out = frame.select(function(pl.col("t"))).to_series().to_list()
    assert out == [
        {"extracted": "hello", "rule": "custom"},
        {"extracted": None, "rule": "none"},
        {"extracted": None, "rule": None},
    ]


def test_a_function_returning_the_struct_is_used_as_it_is():
    def upper(text: pl.Expr) -> pl.Expr:
        return extraction(text.str.to_uppercase(), pl.lit("up"))

    _, function = resolve_extractor("m", upper)
    assert function is upper


def test_answer_of_strings_lists_and_nulls():
    frame = pl.DataFrame(
        {
            "s": ["a \\boxed{1}", "none", None, "\\boxed{2}"],
            "l": [["\\boxed{1}", None, "x"], None, [], ["\\boxed{2}"]],
            "n": [None, None, None, None],
        }
    )
    out = frame.select(
        answer_of(pl.col("s"), "m", "boxed"),
        answer_of(pl.col("l"), "m", "boxed"),
        answer_of(pl.col("n"), "m", "boxed"),
    )
    assert out.schema == {"s": pl.String, "l": pl.List(pl.String), "n": pl.String}
    assert out["s"].to_list() == ["1", None, None, "2"]
    assert out["l"].to_list() == [["1", None, None], None, [], ["2"]]
    assert out["n"].to_list() == [None] * 4
    # "none": the text as it is (the very same expression)
    same = answer_of(pl.col("s"), "m", "none")
    assert frame.select(same)["s"].equals(frame["s"])


def test_answer_of_is_lazy_and_keeps_chunks_apart():
    frame = pl.concat(
        [pl.DataFrame({"s": ["\\boxed{1}", "x"]}), pl.DataFrame({"s": [None, "\\boxed{3}"]})],
        rechunk=False,
    )
    lazy = frame.lazy().select(answer_of(pl.col("s"), "m", "boxed"))
    assert lazy.collect_schema() == {"s": pl.String}
    assert lazy.collect()["s"].to_list() == ["1", None, None, "3"]


@pytest.mark.subprocess
def test_the_table_is_complete_when_first_read_in_a_fresh_process():
    """The extractor modules load on the first read of the table, whatever the read."""
    import subprocess
    import sys

    code = (
        "from evalframe.extract.table import EXTRACTORS\n"
        "assert EXTRACTORS['lighteval_letters'].name == 'lighteval_letters'\n"
        "assert 'gsm8k_flexible' in EXTRACTORS and len(EXTRACTORS) == len(list(EXTRACTORS))\n"
        "names = {'boxed', 'mmlu_pro', 'lighteval_math', 'inspect_answer_letter'}\n"
        "assert names <= set(EXTRACTORS)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
