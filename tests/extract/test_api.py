"""ef.extract and ef.extraction_expr: columns, kinds of frame, lists, errors."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.extract.table import EXTRACTION, extraction

TEXTS = ["so \\boxed{4}", "#### 1,000", "it is -2.5 or 7", "", None]


@pytest.fixture
def frame() -> pl.DataFrame:
    return pl.DataFrame({"id": [1, 2, 3, 4, 5], "prediction": TEXTS})


def test_one_extractor_appends_extracted_and_rule(frame):
    out = ef.extract(frame, "boxed")
    assert out.columns == ["id", "prediction", "extracted", "extraction_rule"]
    assert out.schema["extracted"] == pl.String and out.schema["extraction_rule"] == pl.String
    assert out["extracted"].to_list() == ["4", None, None, None, None]
    assert out["extraction_rule"].to_list() == ["boxed", "none", "none", "none", None]
    assert out.drop("extracted", "extraction_rule").equals(frame)


def test_several_extractors_are_suffixed_by_name(frame):
    out = ef.extract(frame, ["gsm8k_answer", "last_number"])
    assert out.columns[2:] == [
        "extracted_gsm8k_answer", "extraction_rule_gsm8k_answer",
        "extracted_last_number", "extraction_rule_last_number",
    ]
    assert out["extracted_gsm8k_answer"].to_list() == [
        "[invalid]", "1000", "[invalid]", "[invalid]", None
    ]
    assert out["extracted_last_number"].to_list() == ["4", "1000", "7", "", None]
    # one extractor in a list is still suffixed
    assert ef.extract(frame, ["boxed"]).columns[2:] == ["extracted_boxed", "extraction_rule_boxed"]


def test_mapping_labels_and_name(frame):
    out = ef.extract(frame, {"box": "boxed", "n": "last_number"}, name="answer")
    assert out.columns[2:] == ["answer_box", "answer_rule_box", "answer_n", "answer_rule_n"]
    single = ef.extract(frame, "boxed", name="answer")
    assert single.columns[2:] == ["answer", "answer_rule"]


def test_lazy_in_lazy_out_and_equal_to_eager(frame):
    lazy = ef.extract(frame.lazy(), ["boxed", "last_number"])
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(ef.extract(frame, ["boxed", "last_number"]))
    streamed = lazy.collect(engine="streaming")
    assert streamed.equals(ef.extract(frame, ["boxed", "last_number"]))


def test_another_column_and_functions(frame):
    renamed = frame.rename({"prediction": "response"})

    def first_word(text: pl.Expr) -> pl.Expr:
        return text.str.extract(r"^(\w+)", 1)

    out = ef.extract(renamed, [first_word, ef.extract.EXTRACTORS["boxed"]], column="response")
    assert out.columns[2:] == [
        "extracted_first_word", "extraction_rule_first_word",
        "extracted_boxed", "extraction_rule_boxed",
    ]
    assert out["extracted_first_word"].to_list() == ["so", None, "it", None, None]
    assert out["extraction_rule_first_word"].to_list() == ["custom", "none", "custom", "none", None]


def test_none_is_the_text_itself(frame):
    out = ef.extract(frame, "none")
    assert out["extracted"].to_list() == TEXTS
    assert out["extraction_rule"].to_list() == ["text"] * 4 + [None]


def test_list_column_gives_list_columns():
    frame = pl.DataFrame(
        {"prediction": [["\\boxed{1}", "no", None], None, [], ["#### 2"]]},
        schema={"prediction": pl.List(pl.String)},
    )
    out = ef.extract(frame, ["boxed", "gsm8k_answer"])
    assert out.schema["extracted_boxed"] == pl.List(pl.String)
    assert out["extracted_boxed"].to_list() == [["1", None, None], None, [], [None]]
    assert out["extraction_rule_boxed"].to_list() == [["boxed", "none", None], None, [], ["none"]]
    assert out["extracted_gsm8k_answer"].to_list() == [
        ["[invalid]", "[invalid]", None], None, [], ["2"]
    ]


def test_all_null_column():
    frame = pl.DataFrame({"prediction": [None, None]})
    assert frame.schema["prediction"] == pl.Null
    out = ef.extract(frame, "boxed")
    assert out["extracted"].dtype == pl.String
    assert out["extracted"].to_list() == [None, None]


def test_errors_name_what_is_wrong(frame):
    with pytest.raises(EvalframeError, match=r"no column 'answer'.*available: id, prediction"):
        ef.extract(frame, "boxed", column="answer")
    with pytest.raises(EvalframeError, match=r"column 'id' has dtype Int64; expected str"):
        ef.extract(frame, "boxed", column="id")
    with pytest.raises(
        EvalframeError, match=r"unknown extractor 'boxd'; the extractor table has .*'boxed'"
    ):
        ef.extract(frame, "boxd")
    with pytest.raises(EvalframeError, match="is not an extractor"):
        ef.extract(frame, [3])
    with pytest.raises(EvalframeError, match=r"given more than once"):
        ef.extract(frame, ["boxed", "boxed"])
    with pytest.raises(EvalframeError, match="no extractor given"):
        ef.extract(frame, [])
    with pytest.raises(EvalframeError, match=r"already has column\(s\) \['extracted'"):
        ef.extract(ef.extract(frame, "boxed"), "last_number")
    with pytest.raises(EvalframeError, match="expected a polars DataFrame"):
        ef.extract({"prediction": ["x"]}, "boxed")


def test_extraction_expr_is_the_struct(frame):
    out = frame.with_columns(ef.extraction_expr("boxed", "prediction").alias("found"))
    assert out.schema["found"] == EXTRACTION
    assert out["found"].struct.field("extracted").to_list() == ["4", None, None, None, None]
    both = frame.select(ef.extraction_expr("last_number").struct.unnest())
    assert both.columns == ["extracted", "rule"]
    lists = pl.DataFrame({"p": [["\\boxed{1}", "x"], None]})
    listed = lists.select(ef.extraction_expr("boxed", "p", lists=True))
    assert listed.schema["p"] == pl.List(EXTRACTION)
    assert listed["p"].to_list() == [
        [{"extracted": "1", "rule": "boxed"}, {"extracted": None, "rule": "none"}], None
    ]


def test_extraction_expr_takes_an_extractor_function(frame):
    def shout(text: pl.Expr) -> pl.Expr:
        return extraction(text.str.to_uppercase(), pl.lit("shout"))

    out = frame.select(ef.extraction_expr(shout, pl.col("prediction")).struct.field("extracted"))
    assert out.to_series().to_list() == [t.upper() if t is not None else None for t in TEXTS]


def test_the_package_is_callable_and_stays_a_package():
    import evalframe.extract.simple as simple  # the `import a.b.c as m` form still works

    assert ef.extract.simple is simple
    assert callable(ef.extract)
    import inspect

    assert list(inspect.signature(ef.extract).parameters) == [
        "frame", "extractor", "column", "name", "timeout"
    ]


def test_exported_names():
    for name in ("extract", "extraction_expr", "list_extractors", "audit_extractors"):
        assert name in ef.__all__, name
    assert ef.__all__ == sorted(ef.__all__)


DOC = Path(__file__).resolve().parents[2] / "docs" / "extraction.md"


def test_the_documentation_examples_run():
    """Every python block of the page's own sections runs; the outputs shown are true."""
    text = DOC.read_text(encoding="utf-8")
    marker = "<!-- sections below are added by each extractor family -->"
    assert text.rstrip().endswith(marker) or marker in text
    own = text.split(marker)[0]
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", own, flags=re.DOTALL):
        exec(compile(block, str(DOC), "exec"), namespace)
    df, audit = namespace["df"], namespace["audit"]
    assert audit.summary["accuracy"].to_list() == [0.0, 0.25, 0.25, 0.25]
    assert audit.flips["row"].to_list() == [0, 1]
    scored = ef.score(df, ["exact_match(extractor=boxed)"])
    row = ef.aggregate(scored).row(0, named=True)
    assert (row["n"], row["n_missing"], row["value"]) == (4, 3, 0.25)
    assert ef.extract(df, {"box": "boxed", "last": "last_number"}, name="answer").columns == [
        "prediction", "gold", "answer_box", "answer_rule_box", "answer_last", "answer_rule_last"
    ]
    for name in ("boxed", "gsm8k_answer", "last_number"):
        assert f"| `{name}` |" in own, name


def _no_expression(text):
    """A custom extractor someone forgot to finish: it returns nothing."""
    text.str.extract(r"(\d+)")


def _per_string(text):
    """Written for one string, not for a polars expression."""
    return text.strip().split()[-1]


@pytest.mark.parametrize(
    ("function", "found"),
    [
        (_no_expression, "returned None, not a polars expression"),
        (lambda text: "42", "returned str '42', not a polars expression"),
        (lambda text: pl.Series(["42"]), "returned Series"),
        (_per_string, "failed when given a polars expression \\(AttributeError: "),
    ],
)
def test_a_custom_extractor_that_gives_no_expression_is_named(frame, function, found):
    name = f"custom:{function.__name__}"
    with pytest.raises(EvalframeError, match=f"^extract: extractor {re.escape(repr(name))} "
                       f"{found}"):
        ef.extract(frame, function)
    with pytest.raises(EvalframeError, match=re.escape(repr(name))):
        ef.extract(frame.lazy(), {"mine": function, "boxed": "boxed"})
    with pytest.raises(EvalframeError,
                       match=f"^extraction_expr: extractor {re.escape(repr(name))}"):
        ef.extraction_expr(function)
    # ...and in a metric's extractor= option, named with the metric
    with pytest.raises(EvalframeError, match=f"^metric 'exact_match': extractor "
                       f"{re.escape(repr(name))}"):
        ef.metrics.exact_match("prediction", "gold", extractor=function)
    # an Extractor object of the user's own is checked the same way
    mine = ef.extract.table.Extractor("mine", function, "nothing", "a broken one")
    with pytest.raises(EvalframeError, match="^extract: extractor 'mine' "):
        ef.extract(frame, mine)
