"""Metric requests: the options syntax, aliases, validation and conversion of options."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.metrics.request import convert, parse_request, parse_requests


def test_options_are_python_literals_and_bare_words():
    request = parse_request("exact_match(ignore_case=TRUE, regexes_to_ignore=[',', '\\$'])")
    assert request.name == "exact_match"
    assert request.options == {"ignore_case": True, "regexes_to_ignore": (",", "\\$")}
    assert request.column == "exact_match(ignore_case=TRUE, regexes_to_ignore=[',', '\\$'])"
    # canonical text: options sorted, values as literals
    assert request.text == "exact_match(ignore_case=true, regexes_to_ignore=[',', '\\\\$'])"


def test_alias_names_the_column():
    request = parse_request("em_ci = exact_match(ignore_case=true)")
    assert (request.column, request.name, request.options) == (
        "em_ci", "exact_match", {"ignore_case": True}
    )
    mapped = parse_requests({"em": "exact_match(strip=true)"})
    assert mapped[0].column == "em" and mapped[0].options == {"strip": True}


def test_parameters_in_the_name_and_options_together():
    request = parse_request("maj@4(normalizer=squad)")
    assert request.params == {"k": 4} and request.options == {"normalizer": "squad"}
    with pytest.raises(EvalframeError, match="'k' is set by the name"):
        parse_request("maj@4(k=3)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("exact_match(ignore_cas=true)", r"has no option 'ignore_cas'; settable options: "
                                         r"ignore_case: bool = false"),
        ("exact_match(ignore_case=3)", r"ignore_case=3 is invalid: expected true or false"),
        ("exact_match(match=middle)", r"match='middle' is invalid: expected one of 'full'"),
        ("exact_match(true)", "positional values are not accepted"),
        ("exact_match(ignore_case=true", "must end with '\\)'"),
        ("exact_match(ignore_case=true, ignore_case=false)", "given twice"),
        ("exact_match(regexes_to_ignore=[1])", "regexes_to_ignore=\\[1\\] is invalid"),
        ("squad_em(normalizer=none)", "no option 'normalizer'; settable options: none"),
        ("quasi_exact_match(normalizer=none)", "no option 'normalizer'; settable options: extr"),
        ("exact_match(x=os.system('ls'))", "not a literal value"),
        ("exact_match(normalizer=nope)", "normalizer='nope' is unknown"),
    ],
)
def test_bad_options_are_clear_errors(text, message):
    frame = pl.DataFrame({"prediction": ["a"], "gold": ["a"]})
    with pytest.raises(EvalframeError, match=message):
        ef.score(frame, [text])


def test_metrics_are_checked_before_the_input_is_read(tmp_path):
    # the file does not exist: the unknown metric is reported first
    with pytest.raises(EvalframeError, match="unknown metric 'squad_f2'"):
        ef.score(str(tmp_path / "absent.jsonl"), ["squad_f2"])
    with pytest.raises(EvalframeError, match="given by its name"):
        ef.score(pl.DataFrame({"a": [1]}), [123])


def test_the_same_column_twice_is_refused():
    with pytest.raises(EvalframeError, match="more than once"):
        parse_requests(["exact_match", "exact_match"])
    # an alias tells them apart
    assert len(parse_requests(["exact_match", "ci=exact_match(ignore_case=true)"])) == 2


def test_options_reach_the_metric_from_python_and_the_cli(tmp_path, capsys):
    from evalframe.cli import main

    frame = pl.DataFrame({"prediction": ["PARIS", "x"], "gold": ["paris", "y"]})
    scored = ef.score(frame, {"em": "exact_match", "em_ci": "exact_match(ignore_case=true)"})
    assert scored["em"].to_list() == [0.0, 0.0]
    assert scored["em_ci"].to_list() == [1.0, 0.0]
    path = tmp_path / "in.jsonl"
    frame.write_ndjson(path)
    out = tmp_path / "out.parquet"
    assert main(["score", str(path), "-m", "ci=exact_match(ignore_case=true)", "-o", str(out),
                 "--quiet"]) == 0
    assert pl.read_parquet(out)["ci"].to_list() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("annotation", "value", "expected"),
    [(float, 1, 1.0), (int | None, None, None), (str | int, 1, 1), (str | int, "a", "a"),
     (tuple[str, ...], "x", ("x",)), (float, "inf", float("inf"))],
)
def test_convert(annotation, value, expected):
    assert convert(annotation, value) == expected


def test_convert_refuses_bools_as_numbers():
    with pytest.raises(ValueError, match="integer"):
        convert(int, True)


def test_alias_may_be_a_harness_result_key_and_roles_are_not_options():
    request = parse_request("exact_match,strict-match = exact_match(ignore_case=true)")
    assert request.column == "exact_match,strict-match"
    with pytest.raises(EvalframeError, match="no option 'passed'"):
        parse_request("pass@1(passed='flags')")


def test_an_alias_may_not_be_another_metrics_name():
    # read back later, a column called "acc" would be taken for the metric acc
    with pytest.raises(EvalframeError, match="'acc' is the name of another metric"):
        parse_request("acc=exact_match")
    with pytest.raises(EvalframeError, match="needs a name"):
        parse_requests({" ": "exact_match"})
    assert parse_request("exact_match=exact_match(ignore_case=true)").column == "exact_match"


def test_option_values_the_metric_refuses_are_found_before_reading(tmp_path):
    with pytest.raises(EvalframeError, match=r"regexes_to_ignore: '\(' is not a valid regular"):
        ef.score(str(tmp_path / "absent.jsonl"), ["exact_match(regexes_to_ignore=['('])"])


def test_an_unquoted_none_is_the_word_where_the_option_takes_text_not_null():
    # sacrebleu has a tokenizer called 'none'; tokenize takes a string, not null
    assert parse_request("bleu(tokenize=none)").options["tokenize"] == "none"
    assert parse_request("bleu(tokenize=none)").options == \
        parse_request("bleu(tokenize='none')").options
    # where the option's type takes the literal meaning, it wins
    assert parse_request("exact_match(ignore_case=true)").options["ignore_case"] is True
    with pytest.raises(EvalframeError, match=r"ignore_case=None is invalid: expected true or "
                                             r"false"):
        parse_request("exact_match(ignore_case=none)")
