"""Re-scoring a dump against the values its harness stored."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.cli import main


def dump() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "task": ["t"] * 4,
            "sample_id": [0, 1, 2, 3],
            "prediction": ["Paris", "paris", None, "x"],
            "gold": ["Paris", "Paris", "a", "y"],
            # hand-set: rows 0 and 3 agree with exact_match, row 1 does not (case), row 2
            # has a null prediction: a missing answer, scored wrong (0.0) as the harness did
            "harness.exact_match": [1.0, 1.0, 0.0, 0.0],
            "harness.em_bool": [True, False, None, False],
        }
    )


def test_counts_agreement_and_lists_the_rows_that_differ():
    found = ef.rescore(dump(), ["exact_match"])
    summary = found.summary.row(0, named=True)
    assert summary["n"] == 4
    assert (summary["n_agree"], summary["n_differ"]) == (3, 1)
    assert summary["n_null_evalframe"] == 0
    assert summary["n_null_harness"] == 0
    assert summary["max_abs_difference"] == 1.0
    assert found.differences.select("row", "sample_id", "evalframe", "harness").rows() == [
        (1, 1, 0.0, 1.0),
    ]
    # a harness that scored the missing answer right would differ
    other = dump().with_columns(pl.Series("harness.exact_match", [1.0, 0.0, 1.0, 0.0]))
    assert ef.rescore(other, ["exact_match"]).differences["row"].to_list() == [2]
    assert not found.agrees


def test_alias_and_against_name_the_harness_column_booleans_read_as_numbers():
    aliased = ef.rescore(dump(), ["em_bool=exact_match"])
    assert aliased.summary["against"].to_list() == ["harness.em_bool"]
    # row 2: a missing answer (scored 0.0) and the harness's null agree; row 1: 0.0 vs
    # False agree
    assert aliased.agrees
    mapped = ef.rescore(dump(), ["exact_match"], against={"exact_match": "harness.em_bool"})
    assert mapped.agrees


def test_a_request_with_options_and_no_alias_compares_with_the_metrics_harness_column():
    # by hand, ignoring case: Paris/Paris 1, paris/Paris 1, the missing answer 0 (as the
    # harness's 0.0), x/y 0: every row agrees with harness.exact_match
    found = ef.rescore(dump(), ["exact_match(ignore_case=true)"])
    assert found.summary.select("metric", "request", "against", "n_agree", "n_differ").rows() == [
        ("exact_match(ignore_case=true)", "exact_match(ignore_case=true)",
         "harness.exact_match", 4, 0),
    ]
    assert found.agrees
    # spelled another way: the column keeps the spelling, the request is canonical
    spaced = ef.rescore(dump(), [" exact_match ( ignore_case = True ) "]).summary
    assert spaced.select("metric", "request", "against").row(0) == (
        "exact_match ( ignore_case = True )", "exact_match(ignore_case=true)",
        "harness.exact_match",
    )


def test_each_request_says_which_harness_column_it_was_compared_with():
    found = ef.rescore(
        dump(), ["exact_match", "exact_match(ignore_case=true)", "em_bool=exact_match"]
    )
    # by hand: plain exact_match differs on row 1 (paris/Paris); with ignore_case nothing
    # differs; em_bool holds True, False, None, False: row 1's False agrees with 0.0
    assert found.summary.select("metric", "against", "n_differ").rows() == [
        ("exact_match", "harness.exact_match", 1),
        ("exact_match(ignore_case=true)", "harness.exact_match", 0),
        ("em_bool", "harness.em_bool", 0),
    ]
    # an alias with options names the harness column; so does the key of a mapping
    aliased = ef.rescore(dump(), ["em_bool=exact_match(ignore_case=true)"]).summary
    assert aliased.select("against", "n_differ").row(0) == ("harness.em_bool", 1)
    mapped = ef.rescore(dump(), {"em_bool": "exact_match(ignore_case=true)"}).summary
    assert mapped["against"].to_list() == ["harness.em_bool"]


def test_tolerance():
    frame = pl.DataFrame(
        {"prediction": ["x y"], "gold": ["x z"], "harness.token_f1": [0.5 + 1e-13]}
    )
    assert not ef.rescore(frame, ["token_f1"]).agrees
    assert ef.rescore(frame, ["token_f1"], tolerance=1e-12).agrees


def test_nan_from_the_harness_differs_from_a_number():
    frame = pl.DataFrame({"prediction": ["a"], "gold": ["a"], "harness.exact_match": [math.nan]})
    assert not ef.rescore(frame, ["exact_match"]).agrees


@pytest.mark.parametrize(
    ("metrics", "kwargs", "message"),
    [
        (["squad_em"], {}, r"no column 'harness.squad_em'.*harness.exact_match"),
        (["exact_match"], {"against": {"nope": "x"}}, "against= names column"),
        (["exact_match"], {"tolerance": -1}, "tolerance=-1 must be"),
        (["f1"], {"against": {"f1": "harness.exact_match"}}, "corpus-level metric"),
    ],
)
def test_errors(metrics, kwargs, message):
    frame = dump().with_columns(pl.col("prediction").alias("label"))
    with pytest.raises(EvalframeError, match=message):
        ef.rescore(frame, metrics, **kwargs)


def test_command_line_exit_code_says_whether_every_row_agrees(tmp_path, capsys):
    path = tmp_path / "dump.jsonl"
    rows = dump().drop("harness.em_bool").to_dicts()
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["rescore", str(path), "-m", "exact_match", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "1 differing row(s)" in out
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    assert main(["rescore", str(good), "-m", "exact_match", "--quiet"]) == 0
    assert main(["rescore", str(good), "-m", "exact_match", "--against", "bad"]) == 2


@pytest.mark.subprocess
def test_command_line_takes_any_request_with_options(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "dump.jsonl"
    rows = dump().drop("harness.em_bool").to_dicts()
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "evalframe", "rescore", str(path), "-m",
         "exact_match(ignore_case=true)", "-m", "exact_match", "--quiet"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    # exact_match differs on row 1 (paris/Paris): exit code 1; the table says against what
    assert done.returncode == 1, done.stderr
    summary = [line for line in done.stdout.splitlines() if "harness.exact_match" in line]
    assert len(summary) == 2
    assert "exact_match(ignore_case=true)" in summary[0]
    assert "1 differing row(s)" in done.stdout


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--show", "-1"], "evalframe rescore: --show -1 must be >= 0"),
        (["--against", "em=harness.exact_match"], "--against em: no requested metric column"),
        (["--tolerance", "nan"], "--tolerance nan must be >= 0"),
        (["-o", "differences.xlsx"], "-o differences.xlsx: unknown type of file"),
        (["--schema", "gold=text"], "--schema gold=text: unknown type 'text'"),
    ],
)
def test_command_line_mistakes_are_usage_errors_before_reading(tmp_path, capsys, options,
                                                                message):
    absent = tmp_path / "absent.jsonl"  # never read
    assert main(["rescore", str(absent), "-m", "exact_match", *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalframe rescore: ") and message in err


def test_real_lm_eval_output_agrees_row_for_row(capsys):
    folder = Path(__file__).resolve().parent / "fixtures/harness/lm_eval/output/lm-eval-dummy"
    (samples,) = folder.glob("samples_ef_mc_2*.jsonl")
    assert main(["rescore", str(samples), "-m", "acc", "-m", "acc_norm", "--quiet"]) == 0
    found = ef.rescore(samples, ["acc", "acc_norm"])
    assert found.summary["n_agree"].to_list() == [12, 12]
    # compared with another harness column, the rows where the two differ are found
    (text,) = folder.glob("samples_ef_mc_text_2*.jsonl")
    crossed = ef.rescore(text, ["acc"], against={"acc": "harness.acc_norm"})
    scored = crossed.scored
    differing = scored.filter(pl.col("harness.acc") != pl.col("harness.acc_norm"))
    assert differing.height == crossed.summary["n_differ"].item() == 1
    assert crossed.differences["sample_id"].to_list() == differing["sample_id"].to_list()
