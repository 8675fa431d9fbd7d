"""Math equivalence against the references, called: math-verify 0.9.0 and lighteval 0.13.0.

- ``math_equal`` against ``math_verify.verify(parse(gold), parse(prediction))`` per pair;
- ``extractive_match`` against lighteval's ``MultilingualExtractiveMatchMetric.compute``
  (its class, executed from the installed source) in the configurations lighteval's math
  metrics use, and lighteval's extraction cascade against ours string by string;
- ``math_normalize`` against lighteval's ``math_normalizer``;
- every sample of lighteval's math fixtures: lighteval's scorer, ``extractive_match`` with
  the file's configuration and ``math_equal`` give the same verdict (what makes the
  ``equivalence='math'`` mappings of ``lighteval_cases_math`` exact, not lucky).

The adversarial inputs cover fractions against decimals, ``50%`` against ``0.5``, units,
``\\boxed{}``, intervals, sets, matrices, ``\\frac12``, a Unicode minus, empty strings,
garbage, nested braces, equations, irrational constants against their decimals and a
pathological expression that hits the timeout. Agreement is exact, row by row.

lighteval 0.13.0 pins ``latex2sympy2_extended==1.0.6`` and checks the pin when its
extraction runs; math-verify 0.9.0 (the ``math`` extra) needs 1.11.0, so the pin check is
lifted for that one package and lighteval's code runs on 1.11.0 (what evalframe uses).
"""

from __future__ import annotations

import inspect
import json
import logging
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Literal, Union

import polars as pl
import pytest

from evalframe.extract.lighteval_math import extraction_patterns, find
from evalframe.metrics._math_equal import MathTimeoutWarning, math_equal_stats
from evalframe.metrics.math import extractive_match, math_equal
from evalframe.normalize.math import math_normalize
from tests.conformance._lighteval_import import (
    import_lighteval,
    lighteval_classes,
    model_response_class,
)
from tests.conformance.lighteval_cases import FIXTURE_DIR
from tests.conformance.lighteval_cases_math import SCORERS, STRIPPED

mv = pytest.importorskip("math_verify", reason="math_verify is not installed")


def _load_lighteval() -> dict | None:
    """lighteval's extraction, comparison, normaliser and extractive-match class."""
    try:
        import lighteval.utils.imports as imports
    except ImportError:
        return None
    original = imports.raise_if_package_not_available

    def lifted(package, *args, **kwargs):
        if "latex2sympy2_extended" in str(package):
            return None  # runs on 1.11.0 (see the module docstring)
        return original(package, *args, **kwargs)

    imports.raise_if_package_not_available = lifted
    emu = import_lighteval("lighteval.metrics.utils.extractive_match_utils")
    mc = import_lighteval("lighteval.metrics.utils.math_comparison")
    normalizations = import_lighteval("lighteval.metrics.normalizations")
    from lighteval.tasks.requests import Doc
    from lighteval.utils.language import Language
    from lighteval.utils.timeout import timeout

    quiet = logging.getLogger("lighteval.conformance.math")
    quiet.disabled = True
    response = model_response_class()
    base = lighteval_classes(
        "metrics/metrics_sample.py", {"SampleLevelComputation"},
        {"ABC": ABC, "abstractmethod": abstractmethod, "inspect": inspect},
    )
    dynamic = lighteval_classes(
        "metrics/dynamic_metrics.py", {"MultilingualExtractiveMatchMetric"},
        {
            "SampleLevelComputation": base["SampleLevelComputation"], "Language": Language,
            "Sequence": Sequence, "Callable": Callable, "Literal": Literal, "Union": Union,
            "ExtractionTarget": emu.ExtractionTarget,
            "ExprExtractionConfig": emu.ExprExtractionConfig,
            "LatexExtractionConfig": emu.LatexExtractionConfig,
            "get_extraction_regexes": emu.get_extraction_regexes,
            "extract_target_from_pred": emu.extract_target_from_pred,
            "compare_gold_target": mc.compare_gold_target, "timeout": timeout,
            "Doc": Doc, "ModelResponse": response, "logger": quiet,
        },
    )
    return {
        "emu": emu, "mc": mc, "math_normalizer": normalizations.math_normalizer, "Doc": Doc,
        "Language": Language, "ModelResponse": response,
        "Metric": dynamic["MultilingualExtractiveMatchMetric"],
    }


REF = _load_lighteval()
needs_lighteval = pytest.mark.skipif(REF is None, reason="lighteval is not installed")

logging.getLogger("math_verify").setLevel(logging.ERROR)
logging.getLogger("latex2sympy2_extended").setLevel(logging.ERROR)

# --------------------------------------------------------------------------------------
# Adversarial inputs
# --------------------------------------------------------------------------------------

VALUES = [
    "4", "4.0", "$4$", "\\boxed{4}", "The answer is 4.", "$\\frac{1}{2}$", "0.5", "1/2",
    "\\frac12", "$\\frac12$", "50%", "$50\\%$", "0.50", "50 percent", "$x = 3$", "3", "x=3",
    "$\\{1,2\\}$", "$\\{2,1\\}$", "$(1,2)$", "$[1,2)$", "$[1, 2)$", "$x \\in [1,2)$",
    "1,234", "1234", "1 234", "0,123", "$5\\text{ m}$", "5 m", "5", "−3", "-3", "$-3$",
    "$−3$", "", "   ", "garbage", "x^2/2", "$\\frac{x^2}{2}$", "$x^2/2$",
    "$\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}$", "$\\begin{pmatrix}1&2\\\\3&4.0\\end{pmatrix}$",
    "$\\pi$", "$3.14159$", "3.14", "$\\sqrt{2}$", "1.41421356", "$e$", "$2.718281828$",
    "$1 < x \\leq 3$", "$(1,3]$", "$x^2 + 2x + 1$", "$(x+1)^2$", "$\\infty$",
    "$\\text{undefined}$", "$\\text{Friday}$", "Friday", "$a=2, b=3$", "$b=3, a=2$",
    "12.5", "12,5", "$\\frac{1}{3}$", "0.333333", "$\\dfrac{3}{4}$", "75%", "0.75",
    "$10^{3}$", "1000", "$1{,}000$", "\\boxed{\\frac{\\sqrt{3}}{2}}", "$\\frac{\\sqrt3}{2}$",
    "$2x$", "2x", "$\\$5$", "$5", "5 dollars", "$y = 2x+1$", "$2x + 1$", "$1$", "$\\{1\\}$",
    "Final answer: 7", "The final answer is $7$. I hope it is correct.", "7",
    "Answer: $\\frac{7}{1}$", "$(-\\infty, \\infty)$", "$2+3i$", "$3i+2$", "$x>2$", "$2<x$",
    "$(2,\\infty)$", "\\boxed{\\{1, \\{2\\}\\}}", "\\boxed{{{{3}}}}", "\\boxed{1} and \\boxed{2}",
    "$1$ and $2$", "\\boxed{\\frac{1}{2}} or 0.5", "answer is 3, not 4", "The answer is 1/2.",
    "\\[ \\frac{3}{4} \\]", "\\( 0.75 \\)", "$$\\frac34$$", "[ 1 ]", "۳", "٣٫٥", "3\n",
    "x = 3\r\n", "**Answer:** 42", "$\\frac{}{}$", "\\boxed{", "}{", "$$", "$",
]

#: A parse that takes far longer than a 1-second timeout.
PATHOLOGICAL = "$(x+1)^{100000} - (x-1)^{100000}$"


def pairs(seed: int, per_value: int = 10) -> list[tuple[str, str]]:
    """Every value with itself and with ``per_value`` others, plus chosen pairs."""
    rng = random.Random(seed)
    found = [(v, v) for v in VALUES]
    for value in VALUES:
        found.extend((value, other) for other in rng.sample(VALUES, per_value))
        found.extend((other, value) for other in rng.sample(VALUES, per_value // 2))
    found.extend(
        [
            ("0.5", "$\\frac{1}{2}$"), ("$\\frac12$", "0.5"), ("50%", "0.5"), ("0.5", "50%"),
            ("$5\\text{ m}$", "5"), ("\\boxed{3}", "$3$"), ("$[1,2)$", "$[1, 2)$"),
            ("$\\{2,1\\}$", "$\\{1,2\\}$"),
            ("$\\begin{pmatrix}1&2\\\\3&4.0\\end{pmatrix}$",
             "$\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}$"),
            ("−3", "-3"), ("$−3$", "$-3$"), ("", ""), ("garbage", "garbage"),
        ]
    )
    return list(dict.fromkeys(found))


def _frame(rows: list[tuple[str, str]]) -> pl.DataFrame:
    return pl.DataFrame({"prediction": [p for p, _ in rows], "gold": [g for _, g in rows]})


# --------------------------------------------------------------------------------------
# math_equal against math-verify
# --------------------------------------------------------------------------------------


def math_verify_reference(
    prediction: str, gold: str, precision: int = 6, timeout: int = 5
) -> float:
    """math-verify's documented usage, one pair at a time."""
    return float(
        mv.verify(
            mv.parse(gold, parsing_timeout=timeout),
            mv.parse(prediction, parsing_timeout=timeout),
            float_rounding=precision,
            timeout_seconds=timeout,
        )
    )


@pytest.mark.parametrize("workers", [0, 2], ids=["in-process", "workers"])
def test_math_equal_agrees_with_math_verify_on_every_pair(workers, monkeypatch):
    import evalframe.metrics._math_equal as kernel

    rows = pairs(seed=1)
    if workers:
        monkeypatch.setattr(kernel, "PARALLEL_THRESHOLD", 0)
        kernel._PAIRS.clear()
        kernel._PARSED.clear()
    ours = _frame(rows).select(math_equal("prediction", "gold", workers=workers))
    expected = [math_verify_reference(p, g) for p, g in rows]
    got = ours["prediction"].to_list()
    wrong = [(row, g, e) for row, g, e in zip(rows, got, expected, strict=True) if g != e]
    assert not wrong, f"{len(wrong)} of {len(rows)} pairs disagree, first: {wrong[:5]}"
    assert sum(expected) > 50 and len(expected) - sum(expected) > 50  # both outcomes covered


@pytest.mark.parametrize("precision", [0, 2, 10])
def test_math_equal_precision_is_float_rounding(precision):
    rows = [("3.14159", "$\\pi$"), ("0.333", "$\\frac13$"), ("2.71828183", "$e$"),
            ("0.1 + 0.2", "0.3"), ("1.0000001", "1")]
    ours = _frame(rows).select(math_equal("prediction", "gold", precision=precision))
    assert ours["prediction"].to_list() == [
        math_verify_reference(p, g, precision=precision) for p, g in rows
    ]


@pytest.mark.parametrize(
    ("gold_targets", "prediction_targets"),
    [(["latex"], ["latex"]), (["expr"], ["expr"]), (["expr"], ["latex", "expr"])],
)
def test_math_equal_extraction_targets_are_math_verify_configs(gold_targets, prediction_targets):
    configs = {"latex": mv.LatexExtractionConfig(), "expr": mv.ExprExtractionConfig()}
    rows = pairs(seed=2, per_value=4)
    ours = _frame(rows).select(
        math_equal("prediction", "gold", gold_targets=gold_targets,
                   prediction_targets=prediction_targets)
    )
    expected = [
        float(mv.verify(mv.parse(g, [configs[t] for t in gold_targets]),
                        mv.parse(p, [configs[t] for t in prediction_targets])))
        for p, g in rows
    ]
    assert ours["prediction"].to_list() == expected


def math_verify_in_a_child(
    prediction: str, gold: str, timeout: int, deadline: float
) -> float | None:
    """:func:`math_verify_reference` in a child process; None if it runs past ``deadline``.

    math-verify's timeout is a SIGALRM that raises inside sympy; when it lands in one
    of sympy's broad ``except`` clauses it is swallowed and the call runs on for good
    (tens of minutes, gigabytes), so the reference gets a deadline of its own.
    """
    import subprocess
    import sys

    code = (
        "import json, sys, math_verify as mv\n"
        "p, g, t = json.loads(sys.argv[1])\n"
        "print(float(mv.verify(mv.parse(g, parsing_timeout=t), mv.parse(p, parsing_timeout=t),"
        " float_rounding=6, timeout_seconds=t)))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, json.dumps([prediction, gold, timeout])],
            capture_output=True, text=True, timeout=deadline, check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.strip().splitlines()[-1])


def test_a_pathological_pair_times_out_as_in_math_verify_and_is_counted():
    rows = [(PATHOLOGICAL, "2"), ("2", "2")]
    reference = math_verify_in_a_child(PATHOLOGICAL, "2", timeout=1, deadline=60.0)
    # When the reference's own alarm is swallowed (see math_verify_in_a_child), the
    # pair is what math-verify gives a comparison that times out: False, 0.0.
    expected = [0.0 if reference is None else reference, math_verify_reference("2", "2")]
    before = math_equal_stats()["timeouts"]
    with pytest.warns(MathTimeoutWarning, match=r"1 distinct .* pair\(s\) covering 1 row"):
        ours = _frame(rows).select(math_equal("prediction", "gold", timeout=1))
    assert ours["prediction"].to_list() == expected == [0.0, 1.0]
    assert math_equal_stats()["timeouts"] == before + 1


# --------------------------------------------------------------------------------------
# extractive_match against lighteval's MultilingualExtractiveMatchMetric
# --------------------------------------------------------------------------------------

#: name -> (lighteval gold targets, prediction targets, precision; extractive_match options)
CONFIGS = {
    "expr_gold_metric": SCORERS["expr_gold_metric.json"],
    "pass_at_k_math": SCORERS["pass_at_k_math.json"],
    "g_pass_at_k_latex": SCORERS["g_pass_at_k_latex.json"],
}


def _lighteval_targets(targets: Sequence[str], boxed_first: bool) -> list:
    emu = REF["emu"]
    made = []
    for target in targets:
        if target == "latex":
            made.append(
                emu.LatexExtractionConfig(boxed_match_priority=0)
                if boxed_first else emu.LatexExtractionConfig()
            )
        else:
            made.append(emu.ExprExtractionConfig())
    return made


def lighteval_metric(options: dict):
    """lighteval's scorer for ``extractive_match`` options (the gold's LaTeX: default)."""
    return REF["Metric"](
        language=REF["Language"].ENGLISH,
        gold_extraction_target=_lighteval_targets(options["gold_targets"], False),
        pred_extraction_target=_lighteval_targets(
            options["prediction_targets"], options["boxed_first"]
        ),
        precision=options["precision"],
        fallback_mode="first_match",
        aggregation_function=max,
    )


def lighteval_reference(metric, predictions: list[str], golds: list[str]) -> float:
    doc = REF["Doc"](query="", choices=golds, gold_index=list(range(len(golds))))
    return float(metric.compute(doc, REF["ModelResponse"](text=predictions)))


@needs_lighteval
@pytest.mark.parametrize("name", list(CONFIGS))
def test_extractive_match_agrees_with_lighteval_on_every_pair(name):
    options = CONFIGS[name]
    metric = lighteval_metric(options)
    rows = pairs(seed=3, per_value=6)
    ours = _frame(rows).select(extractive_match("prediction", "gold", **options))
    expected = [lighteval_reference(metric, [p], [g]) for p, g in rows]
    got = ours["prediction"].to_list()
    wrong = [(row, g, e) for row, g, e in zip(rows, got, expected, strict=True) if g != e]
    assert not wrong, f"{len(wrong)} of {len(rows)} pairs disagree, first: {wrong[:5]}"


@needs_lighteval
def test_extractive_match_lists_and_gold_fallback_agree_with_lighteval():
    # several samples (the best counts) and several golds, one of which lighteval cannot
    # extract: then every gold of the row is compared as its text
    options = CONFIGS["expr_gold_metric"]
    metric = lighteval_metric(options)
    rng = random.Random(4)
    rows = []
    for _ in range(150):
        predictions = rng.sample(VALUES, rng.randint(1, 3))
        golds = rng.sample([*VALUES[:40], "Friday", "x^2/2", "n(n+1)/2"], rng.randint(1, 3))
        rows.append((predictions, golds))
    # '4' is extractable, 'Friday' is not, so both golds are compared as text:
    rows.append((["Friday"], ["4", "Friday"]))  # nothing extracted from the prediction: 0
    rows.append((["4"], ["4", "Friday"]))  # the prediction's text '4' equals the gold '4'
    rows.append((["$4$"], ["4", "Friday"]))  # the text of $4$ is '4' too
    frame = pl.DataFrame({"prediction": [p for p, _ in rows], "gold": [g for _, g in rows]})
    ours = frame.select(extractive_match("prediction", "gold", **options))["prediction"]
    expected = [lighteval_reference(metric, p, g) for p, g in rows]
    assert ours.to_list() == expected
    assert expected[-3:] == [0.0, 1.0, 1.0]


@needs_lighteval
@pytest.mark.parametrize(
    ("targets", "boxed_first"),
    [(("latex", "expr"), False), (("latex", "expr"), True), (("latex",), False),
     (("expr",), False)],
)
def test_extraction_cascade_agrees_with_lighteval(targets, boxed_first):
    emu, language = REF["emu"], REF["Language"].ENGLISH
    doc = REF["Doc"](query="", choices=["x"], gold_index=0)
    regexes = emu.get_extraction_regexes(doc, _lighteval_targets(targets, boxed_first), language)
    patterns = extraction_patterns(targets, boxed_first=boxed_first)
    texts = [*VALUES, PATHOLOGICAL.replace("100000", "3"),
             "Final answer: $x=1$ and then the final answer is $2$. I hope it is correct."]
    for text in texts:
        expected = emu.extract_target_from_pred(text, regexes, "first_match", "any_match", 5)
        got = find(text, patterns).values
        assert [str(v) for v in got] == [str(v) for v in expected], text
        assert [type(v) for v in got] == [type(v) for v in expected], text


@needs_lighteval
def test_extractors_show_what_the_cascade_parsed():
    from evalframe.extract.lighteval_math import lighteval_expr, lighteval_latex, lighteval_math

    emu, language = REF["emu"], REF["Language"].ENGLISH
    doc = REF["Doc"](query="", choices=["x"], gold_index=0)
    frame = pl.DataFrame({"text": [*VALUES, None]})
    for function, targets in [
        (lighteval_math, ("latex", "expr")), (lighteval_latex, ("latex",)),
        (lighteval_expr, ("expr",)),
    ]:
        out = frame.select(function("text").struct.unnest())
        regexes = emu.get_extraction_regexes(doc, _lighteval_targets(targets, False), language)
        for text, extracted, rule in zip(
            frame["text"], out["extracted"], out["rule"], strict=True
        ):
            if text is None:
                assert (extracted, rule) == (None, None)
                continue
            found = emu.extract_target_from_pred(text, regexes, "first_match", "any_match", 5)
            if not found:
                assert (extracted, rule) == (None, "none"), text
            elif len(found) == 1:  # a match, nothing parsed: lighteval keeps its text
                assert (extracted, rule) == (found[0], rule.split("-")[0] + "-text"), text
                assert rule in ("latex-text", "expr-text")
            else:
                assert rule in ("latex", "expr"), text
                # the text of the match that parsed; lighteval appends the first match's
                # text, the same one on all these inputs (the first match tried parsed)
                assert extracted == found[1], text


# --------------------------------------------------------------------------------------
# lighteval's math fixtures: the three scorers agree on every sample
# --------------------------------------------------------------------------------------

needs_fixtures = pytest.mark.skipif(
    not FIXTURE_DIR.is_dir(), reason=f"{FIXTURE_DIR} is absent: lighteval fixtures skipped"
)


@needs_lighteval
@needs_fixtures
@pytest.mark.parametrize("file", sorted(SCORERS))
def test_fixture_samples_agree(file):
    options = SCORERS[file]
    metric = lighteval_metric(options)
    rows = []
    for case in json.loads((FIXTURE_DIR / file).read_text())["test_cases"]:
        doc = case["doc"]
        index = doc["gold_index"]
        gold = doc["choices"][index[0] if isinstance(index, list) else index]
        for text in case["model_response"]["text"]:
            if STRIPPED[file]:
                text, gold = text.strip(), gold.strip()
            rows.append((text, gold))
    expected = [lighteval_reference(metric, [p], [g]) for p, g in rows]
    frame = _frame(rows)
    ours = frame.select(extractive_match("prediction", "gold", **options))["prediction"]
    by_value = frame.select(math_equal("prediction", "gold"))["prediction"]
    assert ours.to_list() == expected
    assert by_value.to_list() == expected


# --------------------------------------------------------------------------------------
# math_normalize against lighteval's math_normalizer
# --------------------------------------------------------------------------------------

NORMALIZER_TEXTS = [
    "\\boxed{\\frac12}", "\\boxed{\\dfrac{1}{2}}", "\\boxed{\\tfrac1{2}}", "\\boxed{0.5}",
    "\\boxed{ .5 }", "\\boxed{.5}", "\\boxed{{.5}}", "\\boxed{2/3}", "\\boxed{-2/3}",
    "\\boxed{-0/3}", "\\boxed{02/3}", "\\boxed{+2/3}", "\\boxed{2/3/4}", "\\boxed{٣/4}",
    "\\boxed{x = 2/3}", "\\boxed{xyz = 2}", "\\boxed{a=b=c}", "\\boxed{10\\text{ cm}}",
    "\\boxed{10 \\text{ cm} and 3\\text{ m}}", "\\boxed{10\\text{cm}}", "\\boxed{50\\%}",
    "\\boxed{90^\\circ}", "\\boxed{90^{\\circ}}", "\\boxed{\\left( 3, \\sqrt2 \\right)}",
    "\\boxed{\\sqrt{3}}", "\\boxed{\\sqrt\\pi}", "\\boxed{\\$5}", "\\boxed{a\\\\b}",
    "\\boxed{a\\!b}", "\\boxed{a\nb}", "\\boxed 5", "\\boxed 5$ and more", "x \\boxed 5",
    "x \\boxed 5{a}",
    "\\fbox{4}", "\\boxed{1} and \\boxed{2}", "\\boxed{\\boxed{7}}", "\\boxed{{nested}{x}}",
    "\\boxed{unbalanced", "\\boxed}{a}", "no box", "", "\\boxed{}", "\\boxed{ }",
    "\\boxed{\\frac{1}{2}}", "\\boxed{\\frac1}", "\\boxed{\\frac{a}b}", "\\boxed{\\fracab c}",
    "\\boxed{\\frac 1 2}", "\\boxed{é = 3}", "\\boxed{3\u00a0}", "\\boxed{3\u2003\\text{ m}}",
    "\\boxed{3 \x1c\\text{ m}}", "\\boxed{.}", "\\boxed{0.50}", "\\boxed{\\sqrt{2}/2}",
]
#: Texts lighteval's math_normalizer raises IndexError on (evalframe: null).
NORMALIZER_ERRORS = ["\\boxed{\\sqrt}", "\\boxed{\\frac}", "\\boxed{\\sqrt\\sqrt2}",
                     "\\boxed{\\frac\\frac12}", "\\boxed{k=\\sqrt}"]


@needs_lighteval
def test_math_normalize_agrees_with_lighteval():
    frame = pl.DataFrame({"text": [*NORMALIZER_TEXTS, None]})
    got = frame.select(math_normalize(pl.col("text")))["text"].to_list()
    expected = [REF["math_normalizer"](text) for text in NORMALIZER_TEXTS] + [None]
    wrong = [(t, g, e) for t, g, e in zip(frame["text"], got, expected, strict=True) if g != e]
    assert not wrong, wrong


@needs_lighteval
@pytest.mark.parametrize("text", NORMALIZER_ERRORS)
def test_math_normalize_is_null_where_lighteval_raises(text):
    with pytest.raises(IndexError):
        REF["math_normalizer"](text)
    assert pl.select(math_normalize(pl.lit(text))).item() is None


@needs_lighteval
def test_math_normalize_agrees_with_lighteval_on_random_latex():
    rng = random.Random(5)
    pieces = ["\\boxed{", "}", "{", "\\frac", "\\sqrt", "1", "2", "a", " ", ".", "/", "=",
              "\\text{ ", "\\%", "\\left", "\\right", "^\\circ", "\\$", "\\\\", "-", "0", "x"]
    texts = []
    for _ in range(3000):
        texts.append("".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))))
    got = pl.DataFrame({"text": texts}).select(math_normalize(pl.col("text")))["text"]
    for text, value in zip(texts, got.to_list(), strict=True):
        try:
            expected = REF["math_normalizer"](text)
        except IndexError:
            expected = None
        assert value == expected, text
