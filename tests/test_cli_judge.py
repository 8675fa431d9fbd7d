"""The ``evalframe judge`` commands, run as a user runs them: in a subprocess."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter

import polars as pl
import pytest


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalframe", *args],
        capture_output=True, text=True, timeout=300, check=False,
    )


def pair_file(shared_data):
    return shared_data / "mtbench-fastchat-fork" / "gpt-4_pair.jsonl.gz"


def expected_outcomes(path) -> Counter:
    """FastChat's g1/g2 winners (g2 already mapped back to model names), classified by hand."""
    counts: Counter = Counter()
    for line in gzip.decompress(path.read_bytes()).decode().splitlines():
        row = json.loads(line)
        g1, g2 = row["g1_winner"], row["g2_winner"]
        if "error" in (g1, g2):
            counts["error"] += 1
        elif g1 == g2:
            counts[{"model_1": "A", "model_2": "B", "tie": "tie"}[g1]] += 1
        else:
            counts["inconsistent"] += 1
    return counts


@pytest.mark.subprocess
def test_classify_report_and_the_win_rate_metric_on_mt_bench(shared_data, tmp_path):
    judged = tmp_path / "judged.parquet"
    done = run("judge", "classify", str(pair_file(shared_data)), "-o", str(judged))
    assert done.returncode == 0, done.stderr
    outcomes = pl.read_parquet(judged)["outcome"].to_list()
    expected = expected_outcomes(pair_file(shared_data))
    assert Counter(outcomes) == expected
    report = tmp_path / "report.json"
    done = run("judge", "report", str(judged), "--policy", "mtbench", "--by", "model_a",
               "-o", str(report))
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(report.read_text())
    valid = sum(expected.values()) - expected["error"]
    # win_rate_a by the formula, errors out of the denominator
    win_rate = (expected["A"] + 0.5 * (expected["tie"] + expected["inconsistent"])) / valid
    assert row["n_valid"] == valid
    assert row["win_rate_a"] == pytest.approx(win_rate, rel=1e-12)
    # FastChat show_result: inconsistent counts as a tie
    assert (row["win"], row["loss"], row["tie"]) == (
        expected["A"], expected["B"], expected["tie"] + expected["inconsistent"]
    )
    scored = tmp_path / "scored.parquet"
    done = run("score", str(judged), "-m", "win_rate", "-o", str(scored), "--quiet")
    assert done.returncode == 0, done.stderr
    summary = tmp_path / "summary.json"
    done = run("aggregate", str(scored), "-o", str(summary), "--quiet")
    assert done.returncode == 0, done.stderr
    (metric,) = json.loads(summary.read_text())
    assert metric["n"] == valid and metric["n_null"] == expected["error"]
    assert metric["value"] == pytest.approx(win_rate, rel=1e-12)


@pytest.mark.subprocess
def test_ratings_and_matrix_on_alpaca_eval(shared_data, tmp_path):
    folder = shared_data / "alpaca_eval"
    files = [
        str(folder / model / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json.gz")
        for model in ("alpaca-7b", "claude-2.1", "gpt-3.5-turbo-1106")
    ]
    judged = tmp_path / "judged.parquet"
    assert run("judge", "classify", *files, "-o", str(judged)).returncode == 0
    out = tmp_path / "ratings.csv"
    done = run("judge", "ratings", str(judged), "--anchor", "gpt4_1106_preview=1000",
               "--bootstrap", "50", "-o", str(out), "--matrix")
    assert done.returncode == 0, done.stderr
    table = pl.read_csv(out)
    ratings = dict(table.select("model", "rating").rows())
    assert ratings["gpt4_1106_preview"] == 1000.0
    # every model loses to the baseline more often than it wins: rated below it, in order
    assert ratings["alpaca-7b"] < ratings["gpt-3.5-turbo-1106"] < ratings["claude-2.1"] < 1000
    assert "gpt4_1106_preview" in done.stdout  # the matrix


@pytest.mark.subprocess
def test_style_controlled_ratings_on_alpaca_eval(shared_data, tmp_path):
    folder = shared_data / "alpaca_eval"
    files = sorted(str(path) for path in
                   folder.glob("*/weighted_alpaca_eval_gpt4_turbo/annotations.json.gz"))
    judged = tmp_path / "judged.parquet"
    assert run("judge", "classify", *files, "-o", str(judged)).returncode == 0
    out, coefficients = tmp_path / "ratings.parquet", tmp_path / "coefficients.csv"
    done = run("judge", "ratings", str(judged), "--anchor", "gpt4_1106_preview=1000",
               "--bootstrap", "20", "--style", "length,markdown_headers,markdown_lists,bold",
               "-o", str(out), "--coefficients", str(coefficients))
    assert done.returncode == 0, done.stderr
    table = pl.read_parquet(out)
    assert {"rank", "rank_low", "rank_high", "tied_with"} <= set(table.columns)
    assert table["rank"].to_list() == list(range(1, 9))
    assert "style:length+markdown_headers+markdown_lists+bold" in table["signature"][0]
    assert pl.read_csv(coefficients)["feature"].to_list() == [
        "length", "markdown_headers", "markdown_lists", "bold"
    ]
    # the same as the library's
    from evalframe import judge

    expected = judge.ratings(pl.read_parquet(judged), anchor=("gpt4_1106_preview", 1000),
                             bootstrap=20, style=True)
    assert table.equals(expected)
    shown = run("judge", "ratings", str(judged), "--bootstrap", "0", "--style", "all",
                "--length-unit", "characters")
    assert shown.returncode == 0, shown.stderr
    assert "elo_per_sd" in shown.stdout and "length=characters" in shown.stdout


@pytest.mark.subprocess
def test_judge_without_a_subcommand_is_a_usage_error():
    done = run("judge")
    assert done.returncode == 2 and "Traceback" not in done.stderr


#: Option mistakes of the commands that ask a judge: each found before the input (a file
#: that does not exist) is read, so before any judge is asked.
ASKING_MISTAKES = [
    (["pairwise", "--concurrency", "0"], "--concurrency 0 must be >= 1"),
    (["pairwise", "--concurrency", "-4"], "--concurrency -4 must be >= 1"),
    (["pairwise", "--timeout", "-3"], "--timeout -3.0 must be a finite number > 0"),
    (["pairwise", "--timeout", "nan"], "--timeout nan must be a finite number > 0"),
    (["pairwise", "--temperature", "-1"], "--temperature -1.0 must be a finite number >= 0"),
    (["pairwise", "--max-retries", "-1"], "--max-retries -1 must be >= 0"),
    (["pairwise", "--max-tokens", "0"], "--max-tokens 0 must be >= 1"),
    (["pairwise", "--template", "{question} {answer_a} {answer_b}", "--pattern", "("],
     "the verdict pattern '(' is not a valid regex"),
    (["pairwise", "--template", "{answer_a} {answer_b}", "--pattern", "plain"],
     "has 0 capture group(s)"),
    (["pairwise", "--pattern", "(?P<first>A)"], "--pattern needs --template"),
    (["pairwise", "--template", "{question} {answer_a}"], "has no field {answer_b}"),
    (["pairwise", "--format", "fastchat"], "unknown pairwise judge format 'fastchat'"),
    (["pairwise", "--col", "answer_a"], "--col expects ROLE=COLUMN, got 'answer_a'"),
    (["pairwise", "--col", "reference=ref"], "columns= maps ['reference']"),
    (["pairwise", "--rubric", "@absent-rubric.txt"], "--rubric @absent-rubric.txt: cannot read"),
    (["pairwise", "--format", "mtbench", "--rubric", "Be fair."], "has no {rubric} field"),
    (["pairwise", "--concurrency", "x"], "argument --concurrency: invalid int value: 'x'"),
    (["grade", "--scale", "a,b"], "--scale a,b: expected LOW,HIGH"),
    (["grade", "--scale", "7"], "--scale 7: expected LOW,HIGH"),
    (["grade", "--scale", "10,1"], "--scale 10,1: expected LOW,HIGH, two numbers with LOW below"),
    (["grade", "--scale", "1,inf"], "--scale 1,inf: expected LOW,HIGH"),
    (["grade", "--format", "inspect_qa", "--scale", "0,1"], "takes no scale"),
    (["grade", "--format", "likert"], "unknown grading format 'likert'"),
]


@pytest.mark.subprocess
@pytest.mark.parametrize(("options", "message"), ASKING_MISTAKES,
                         ids=[" ".join(options) for options, _ in ASKING_MISTAKES])
def test_option_mistakes_of_pairwise_and_grade_are_usage_errors_before_reading(
    tmp_path, options, message
):
    command, *rest = options
    absent = tmp_path / "absent.jsonl"  # never read, no judge asked: the options come first
    done = run("judge", command, str(absent), "--model", "m", "--base-url",
               "http://127.0.0.1:9/v1", *rest, "-o", str(tmp_path / "o.parquet"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"evalframe judge {command}: ")
    assert message in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.fixture
def judged(tmp_path):
    path = tmp_path / "judged.parquet"
    pl.DataFrame({
        "sample_id": [1, 2, 3], "model_a": ["x", "x", "y"], "model_b": ["y", "z", "z"],
        "verdict_ab": ["A", "B", "tie"], "verdict_ba": ["A", "B", "tie"],
        "outcome": ["A", "B", "tie"],
    }).write_parquet(path)
    return path


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["classify", "--format", "fastchat"], "unknown pairwise judge format 'fastchat'"),
        (["classify", "--verdict-ab", "g1"], "--verdict-ab g1: no such column; available: "
         "sample_id, model_a"),
        (["classify", "-o", "out.xlsx"], "-o out.xlsx: unknown type of file; give a name "
         "ending in .arrow, .csv"),
        (["report", "--policy", "lmsys"], "unknown policy 'lmsys'"),
        (["report", "--ci", "95"], "--ci 95.0 must be strictly between 0 and 1"),
        (["report", "--by", "model_a,judge"], "--by judge: no such column"),
        (["report", "--cluster", "question_id"], "--cluster question_id: no such column"),
        (["report", "-o", "-"], "-o -: this table is written to a file"),
        (["ratings", "--anchor", "x=abc"], "--anchor x=abc: the rating 'abc' is not a finite"),
        (["ratings", "--anchor", "x=inf"], "--anchor x=inf: the rating 'inf' is not a finite"),
        (["ratings", "--anchor", "=1000"], "--anchor =1000: expected MODEL[=RATING]"),
        (["ratings", "--bootstrap", "-1"], "bootstrap=-1 must be an integer >= 0"),
        (["ratings", "--bootstrap", "1"], "bootstrap=1 gives no spread"),
        (["ratings", "--cluster", "question_id"], "--cluster question_id: no such column"),
        (["ratings", "-o", "ratings.xlsx"], "-o ratings.xlsx: unknown type of file"),
        (["ratings", "--style", "length,italics"], "--style italics: unknown style feature"),
        (["ratings", "--style", "all"], "--answers answer_a: no such column"),
        (["ratings", "--style", "length", "--style-column", "length=tok_a"],
         "--style-column length=tok_a: expected FEATURE=COL_A,COL_B"),
        (["ratings", "--style", "length", "--style-column", "length=tok_a,tok_b"],
         "--style-column tok_a: no such column"),
        (["ratings", "--style-column", "length=a,b"], "--style-column needs --style"),
        (["ratings", "--style", "bold", "--length-unit", "tokens"], "invalid choice: 'tokens'"),
        (["ratings", "--style", "bold", "--coefficients", "c.xlsx"],
         "--coefficients c.xlsx: unknown type of file"),
    ],
)
def test_option_mistakes_of_classify_report_and_ratings_are_usage_errors(
    tmp_path, judged, options, message
):
    command, *rest = options
    done = run("judge", command, str(judged), *rest)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"evalframe judge {command}: ")
    assert message in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.subprocess
def test_ratings_without_sample_id_resample_battles_and_none_says_so(tmp_path, judged):
    # the default cluster column is used when the battles have it, and is not required
    without = tmp_path / "battles.parquet"
    pl.read_parquet(judged).drop("sample_id").write_parquet(without)
    out = tmp_path / "r.csv"
    done = run("judge", "ratings", str(without), "--bootstrap", "0", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(pl.read_csv(out)["model"].to_list()) == ["x", "y", "z"]


@pytest.mark.subprocess
def test_ratings_written_to_csv_keep_the_ties_as_json_text(tmp_path, judged):
    import json

    out, parquet = tmp_path / "r.csv", tmp_path / "r.parquet"
    for path in (out, parquet):
        done = run("judge", "ratings", str(judged), "--bootstrap", "50", "-o", str(path))
        assert done.returncode == 0, done.stderr
    as_csv = pl.read_csv(out).sort("model")
    as_parquet = pl.read_parquet(parquet).sort("model")
    assert [json.loads(text) for text in as_csv["tied_with"].to_list()] == \
        as_parquet["tied_with"].to_list()


@pytest.mark.subprocess
def test_an_output_folder_that_does_not_exist_stops_before_the_judge_is_asked(tmp_path):
    pytest.importorskip("openai", reason="openai is not installed")
    from tests.judge.fake_server import FakeServer

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"question": "q", "answer_a": "a", "answer_b": "b"}\n')
    with FakeServer() as server:
        done = run("judge", "pairwise", str(pairs), "--model", "m", "--base-url", server.url,
                   "-o", str(tmp_path / "missing" / "judged.parquet"))
        assert server.requests == 0
    assert done.returncode == 1
    assert "the folder" in done.stderr and "does not exist" in done.stderr


@pytest.mark.subprocess
@pytest.mark.parametrize("sub", ["pairwise", "grade", "classify", "report", "ratings"])
def test_help(sub):
    done = run("judge", sub, "--help")
    assert done.returncode == 0
    assert "usage: evalframe judge" in done.stdout


@pytest.mark.subprocess
def test_pairwise_through_an_openai_compatible_server_then_a_cached_rerun(tmp_path):
    pytest.importorskip("openai", reason="openai is not installed")
    from tests.judge.fake_server import FakeServer

    def prefers_42(prompt: str) -> str:
        first = prompt.split("[The Start of the FIRST Answer]\n")[1].split("\n")[0]
        second = prompt.split("[The Start of the SECOND Answer]\n")[1].split("\n")[0]
        if ("42" in first) == ("42" in second):
            return "TIE"
        return "FIRST" if "42" in first else "SECOND"

    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"question": "6 x 7?", "answer_a": "42", "answer_b": "41", "model_b": "m"},
        {"question": "6 x 7?", "answer_a": "40", "answer_b": "42", "model_b": "m"},
        {"question": "Say hi", "answer_a": "hi", "answer_b": "hello {x}", "model_b": "m"},
    ]
    pairs.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out, cache = tmp_path / "judged.parquet", tmp_path / "judge.sqlite"
    command = ["judge", "pairwise", str(pairs), "--model", "fake", "--cache", str(cache),
               "-o", str(out), "--quiet"]
    with FakeServer(responder=prefers_42, api_key="sk-test") as server:

        def env_run() -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-m", "evalframe", *command, "--base-url", server.url,
                 "--api-key-env", "FAKE_KEY"],
                capture_output=True, text=True, timeout=120, check=False,
                env={**os.environ, "FAKE_KEY": "sk-test"},
            )

        command.remove("--quiet")
        done = env_run()
        assert done.returncode == 0, done.stderr
        assert server.requests == 6  # every row asked twice
        assert "judged 3 row(s): 6 replies, 6 new judgment(s) cached" in done.stderr
        judged = pl.read_parquet(out)
        assert judged["outcome"].to_list() == ["A", "B", "tie"]
        assert "sk-test" not in judged.write_csv() and "sk-test" not in done.stderr
        again = env_run()
        assert again.returncode == 0, again.stderr
        assert server.requests == 6  # a rerun with everything cached asks nothing
        assert "6 replies, 0 new judgment(s) cached (the cache holds 6)" in again.stderr
    report = run("judge", "report", str(out), "-o", str(tmp_path / "r.json"))
    assert report.returncode == 0, report.stderr
    (row,) = json.loads((tmp_path / "r.json").read_text())
    assert (row["wins_a"], row["wins_b"], row["ties"], row["win_rate_a"]) == (1, 1, 1, 0.5)


@pytest.mark.subprocess
def test_replies_a_server_garbles_are_error_rows_and_odd_text_is_cached_as_sent(tmp_path):
    pytest.importorskip("openai", reason="openai is not installed")
    import sqlite3

    from tests.judge.fake_server import FakeServer

    whole = json.dumps({"choices": [{"message": {"role": "assistant", "content": "FIRST"}}]})
    cut = whole[: len(whole) // 2]  # a 200 whose JSON stops halfway

    def garbled(prompt: str) -> str | None:
        return "raw:" + cut if "cut short" in prompt else None

    def odd(prompt: str) -> str:
        return "TIE \ud800"  # sent as the JSON escape "\ud800": a lone surrogate

    pairs = tmp_path / "pairs.jsonl"
    rows = [  # the first row's prompt is the run's first request, sent alone
        {"question": "JSON cut short?", "answer_a": "a", "answer_b": "b"},
        {"question": "Odd text?", "answer_a": "c", "answer_b": "d"},
    ]
    pairs.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out, cache = tmp_path / "judged.parquet", tmp_path / "judge.sqlite"
    with FakeServer(responder=odd, faults=garbled) as server:
        command = [sys.executable, "-m", "evalframe", "judge", "pairwise", str(pairs),
                   "--model", "fake", "--base-url", server.url, "--api-key-env", "NO_KEY_HERE",
                   "--cache", str(cache), "-o", str(out)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
        # by hand: row 1 asked twice (A first, B first), each garbled once, not retried;
        # row 2 asked twice
        assert server.requests == 4
        assert "judged 2 row(s): 2 replies, 2 new judgment(s) cached" in done.stderr
        assert "1 row(s) with an error" in done.stderr
        judged = pl.read_parquet(out)
        assert judged["outcome"].to_list() == ["error", "tie"]
        assert "the server's reply cannot be read: JSONDecodeError" in judged["judge_error"][0]
        assert judged["judgment_ab"].to_list() == [None, "TIE \ufffd"]  # Polars holds UTF-8
        again = subprocess.run(command, capture_output=True, text=True, timeout=120,
                               check=False)
        assert again.returncode == 0, again.stderr
        assert server.requests == 6  # the two garbled prompts asked again, nothing else
    assert pl.read_parquet(out).equals(judged)
    with sqlite3.connect(cache) as db:
        stored = [value for (value,) in db.execute("SELECT reply FROM judgments")]
    assert [value.decode("utf-8", "surrogatepass") for value in stored] == ["TIE \ud800"] * 2


@pytest.mark.subprocess
def test_a_cache_file_of_another_program_is_a_one_line_error(tmp_path):
    import sqlite3

    cache = tmp_path / "other.sqlite"
    with sqlite3.connect(cache) as db:
        db.execute("CREATE TABLE judgments (id INTEGER PRIMARY KEY, verdict TEXT)")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"question": "q", "answer_a": "a", "answer_b": "b"}\n')
    done = run("judge", "pairwise", str(pairs), "--model", "m", "--base-url",
               "http://127.0.0.1:9/v1", "--cache", str(cache), "-o", str(tmp_path / "o.parquet"))
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"evalframe: error: judgment cache {str(cache)!r} is not an evalframe judgment cache: "
        "the table 'judgments' has the columns id, verdict; expected a table with the columns "
        "key, judge, prompt"
    )
    assert len(done.stderr.splitlines()) == 1


# ---------------------------------------------------------------- judge audit


@pytest.mark.subprocess
def test_audit_of_mt_bench_gives_position_bias_and_flips_per_model_pair(shared_data, tmp_path):
    out = tmp_path / "audit.json"
    done = run("judge", "audit", str(pair_file(shared_data)), "--by", "model_a,model_b",
               "--bootstrap", "200", "--seed", "3", "-o", str(out))
    assert done.returncode == 0, done.stderr
    # the file has no answers and one judge: those measures are null, and a warning says so
    assert "warning: audit: left null: length_bias" in done.stderr
    rows = {row["measure"]: row for row in json.loads(out.read_text())}
    expected = expected_outcomes(pair_file(shared_data))
    valid = sum(expected.values()) - expected["error"]
    flips = rows["flip_rate"]
    assert (flips["model_a"], flips["model_b"], flips["judge"]) == ("phi-3", "phi-3-dpo",
                                                                    "gpt-4")
    assert flips["n"] == valid and flips["value"] == pytest.approx(
        expected["inconsistent"] / valid, rel=1e-12)
    assert flips["ci_low"] < flips["value"] < flips["ci_high"]
    assert "B:200|seed:3|resample:sample_id" in flips["signature"]
    assert rows["position_bias"]["n"] == 122 and rows["length_bias"]["value"] is None


@pytest.mark.subprocess
def test_audit_with_a_human_label_file_and_a_formatted_table(tmp_path, judged):
    labels = tmp_path / "labels.csv"
    pl.DataFrame({"sample_id": [1, 2], "model_a": ["x", "x"], "model_b": ["y", "z"],
                  "label": ["A", "A"]}).write_csv(labels)
    done = run("judge", "audit", str(judged), "--human", str(labels), "--human-label", "label",
               "--measures", "agreement,cohen_kappa", "--bootstrap", "0", "--format",
               "markdown")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "| judge | measure | value | n | excluded |"
    # question 1 agrees (A), question 2 does not (the judge: B), question 3 has no label
    assert "| agreement | 50.0% | 2 | 1 |" in done.stdout
    assert "| cohen_kappa | 0.000 | 2 | 1 |" in done.stdout


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--bootstrap", "1"], "bootstrap=1 gives no spread"),
        (["--ci", "95"], "ci=95.0 must be a number strictly between 0 and 1"),
        (["--seed", "-2"], "seed=-2 must be a non-negative integer"),
        (["--measures", "flip_rate,verbosity"], "unknown measure(s) ['verbosity']"),
        (["--self", "gpt-4"], "--self expects JUDGE=MODEL, got 'gpt-4'"),
        (["--kappa-weights", "cubic"], "argument --kappa-weights: invalid choice: 'cubic'"),
        (["-o", "audit.xlsx"], "-o audit.xlsx: unknown type of file"),
    ],
)
def test_audit_option_mistakes_are_usage_errors_before_reading(tmp_path, options, message):
    absent = tmp_path / "absent.parquet"  # never read: the options come first
    done = run("judge", "audit", str(absent), *options)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("evalframe judge audit: ")
    assert message in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--by", "model_a,task"], "--by task: no such column; available: sample_id"),
        (["--on", "question_id"], "--on question_id: no such column"),
        (["--judge", "grader"], "--judge grader: no such column"),
        (["--cluster", "question_id"], "--cluster question_id: no such column"),
        (["--human", "labels.csv"], "--human labels.csv: neither a column of the input nor a "
         "file of labels"),
    ],
)
def test_audit_columns_the_input_lacks_are_usage_errors(tmp_path, judged, options, message):
    done = run("judge", "audit", str(judged), *options)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("evalframe judge audit: ")
    assert message in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.subprocess
def test_audit_data_errors_exit_1(tmp_path, judged):
    bad = tmp_path / "bad.parquet"
    pl.read_parquet(judged).with_columns(
        pl.Series("verdict_ba", ["A", "left", "tie"])
    ).write_parquet(bad)
    done = run("judge", "audit", str(bad), "--bootstrap", "0")
    assert done.returncode == 1, done.stderr
    assert "column 'verdict_ba' (a verdict), row 1: 'left' is not a label" in done.stderr
    # a measure asked for that the input cannot give
    done = run("judge", "audit", str(judged), "--measures", "length_bias")
    assert done.returncode == 1, done.stderr
    assert "cannot compute length_bias: no column ['answer_a', 'answer_b']" in done.stderr


@pytest.mark.subprocess
def test_audit_help():
    done = run("judge", "audit", "--help")
    assert done.returncode == 0
    assert "usage: evalframe judge audit" in done.stdout and "--human" in done.stdout
