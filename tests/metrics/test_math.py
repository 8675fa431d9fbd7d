"""math_equal and extractive_match: shapes, edge rules, options, requests, extractors."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.extract.table import resolve_extractor
from evalframe.metrics.math import extractive_match, math_equal
from evalframe.metrics.registry import resolve

pytest.importorskip("math_verify", reason="math_verify is not installed")


def _score(function, predictions, golds, **options) -> list:
    frame = pl.DataFrame({"prediction": predictions, "gold": golds}, strict=False)
    return frame.select(function("prediction", "gold", **options))["prediction"].to_list()


def test_math_equal_by_value():
    # by hand: 1/2 = 0.5 = \frac12; 50% = 0.5; 5 m = 5 (unit dropped); [1,2) in any
    # spacing; {2,1} = {1,2}; equal matrices; x = 3 against 3 keeps the right side
    predictions = [
        "$\\frac12$", "50%", "$5\\text{ m}$", "$[1, 2)$", "$\\{2,1\\}$",
        "$\\begin{pmatrix}1&2\\\\3&4.0\\end{pmatrix}$", "$x = 3$", "4",
    ]
    golds = [
        "0.5", "$0.5$", "5", "$[1,2)$", "$\\{1,2\\}$",
        "$\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}$", "3", "5",
    ]
    assert _score(math_equal, predictions, golds) == [1.0] * 7 + [0.0]


def test_lists_take_the_best_pair_and_nulls_propagate():
    got = _score(
        math_equal,
        [["7", "0.5"], ["1/2"], ["3"], None, ["1", None]],
        [["1/2"], ["2", "$\\frac{1}{2}$"], ["4"], ["1"], ["1"]],
    )
    # a null element makes the row null (its verdict is unknown)
    assert got == [1.0, 1.0, 0.0, None, None]


@pytest.mark.parametrize("function", [math_equal, extractive_match])
def test_an_empty_list_is_an_error_naming_the_row(function):
    frame = pl.DataFrame({"prediction": [["1"], []], "gold": [["1"], ["1"]]})
    with pytest.raises(EvalframeError, match=r"1 row\(s\) have an empty prediction list"):
        frame.select(function("prediction", "gold"))


@pytest.mark.parametrize("function", [math_equal, extractive_match])
def test_empty_and_unparseable_texts_score_zero(function):
    assert _score(function, ["", "   ", "garbage", "4"], ["4", "4", "4", "4"]) == [
        0.0, 0.0, 0.0, 1.0,
    ]


def test_extractive_match_is_lighteval_expr_gold_metric():
    # boxed first, expressions: 12 = 12; 3/4 = 0.75; pi vs 3.14159: lighteval compares a
    # symbol with a float symbolically, not to 5 places (math-verify would say equal)
    got = _score(
        extractive_match,
        ["The answer is \\boxed{12}", "I think 3/4", "$\\pi$"], ["12", "0.75", "3.14159"],
    )
    assert got == [1.0, 1.0, 0.0]
    assert _score(math_equal, ["$\\pi$"], ["3.14159"], precision=5) == [1.0]


def test_extractive_match_compares_an_unextractable_gold_as_text():
    # 'x^2/2' is no plain expression: lighteval compares it as text with the
    # prediction's extracted text ('x^2/2' from $x^2/2$); math-verify finds no gold
    assert _score(extractive_match, ["$x^2/2$"], ["x^2/2"]) == [1.0]
    assert _score(math_equal, ["$x^2/2$"], ["x^2/2"]) == [0.0]
    # when one gold of the row yields nothing, every gold is compared as text:
    # '4' (extractable) is then compared as the text '4' with the prediction's text
    assert _score(extractive_match, ["4"], [["4", "Friday"]]) == [1.0]
    assert _score(extractive_match, ["4.0"], [["4", "Friday"]]) == [0.0]
    assert _score(extractive_match, ["4.0"], [["4"]]) == [1.0]


def test_extractive_match_options_reproduce_lighteval_latex_gold_scoring():
    # g_pass_at_k_latex: golds extracted as LaTeX only; a plain '4' gold has no LaTeX,
    # so it is compared as text
    latex = {"gold_targets": "latex"}
    assert _score(extractive_match, ["$4$", "4.0"], ["4", "4"], **latex) == [1.0, 0.0]
    assert _score(extractive_match, ["$4$", "4.0"], ["$4$", "$4$"], **latex) == [1.0, 1.0]


def test_requests_parse_options_and_the_registry_names_the_references():
    frame = pl.DataFrame({"prediction": ["3.14159", "1/2"], "gold": ["$\\pi$", "0.5"]})
    scored = ef.score(frame, ["math_equal", "p5=math_equal(precision=5)",
                              "em=extractive_match(gold_targets=[latex, expr], precision=6)"])
    assert scored["math_equal"].to_list() == [0.0, 1.0]
    assert scored["p5"].to_list() == [1.0, 1.0]
    assert scored["em"].to_list() == [0.0, 1.0]
    spec, _ = resolve("math_equal")
    assert (spec.reference.package, spec.reference.version) == ("math-verify", "0.9.0")
    spec, _ = resolve("extractive_match")
    assert (spec.reference.package, spec.reference.version) == ("lighteval", "0.13.0")
    with pytest.raises(EvalframeError, match="gold_targets"):
        ef.score(frame, ["math_equal(gold_targets=text)"])


def test_the_extractors_are_in_the_table():
    for name in ("lighteval_math", "lighteval_latex", "lighteval_expr"):
        assert resolve_extractor("m", name)[0] == name
    frame = pl.DataFrame({"t": ["so \\boxed{\\frac{1}{2}}", "Answer: 1 234", "no", None]})
    _, function = resolve_extractor("m", "lighteval_math")
    out = frame.select(function(pl.col("t")).struct.unnest())
    # by hand: the boxed LaTeX normalised; the number without its thousands space
    assert out["extracted"].to_list() == ["\\frac{1}{2}", "1234", None, None]
    assert out["rule"].to_list() == ["latex", "expr", "none", None]


def test_unparsed_text_is_shown_with_a_text_rule():
    from evalframe.extract.lighteval_math import lighteval_latex

    # '$\\frac{}{}$' matches the inline-dollar pattern, but latex2sympy cannot parse it
    out = pl.DataFrame({"t": ["$\\frac{}{}$"]}).select(lighteval_latex("t").struct.unnest())
    assert out.row(0) == ("\\frac{}{}", "latex-text")
