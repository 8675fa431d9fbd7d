"""The evalframe command, run as a user runs it: in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from evalframe.scored import read_contract

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example_dump.jsonl"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalframe", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def dump(tmp_path) -> Path:
    path = tmp_path / "dump.jsonl"
    pl.DataFrame(
        {
            "model": ["m1", "m1", "m2", "m2"],
            "task": ["t", "t", "t", "t"],
            "pred": ["Paris", "the Rome", "Berlin", None],
            "answers": [["Paris"], ["Rome", "Roma"], ["Paris"], ["Rome"]],
        }
    ).write_ndjson(path)
    return path


@pytest.mark.subprocess
def test_score_then_aggregate_files(tmp_path, dump):
    scored = tmp_path / "scored.parquet"
    result = run("score", str(dump), "-m", "squad_em", "-m", "squad_f1",
                 "--col", "prediction=pred", "--col", "gold=answers", "-o", str(scored))
    assert result.returncode == 0, result.stderr.decode()
    frame = pl.read_parquet(scored)
    metadata = pl.read_parquet_metadata(scored)
    contract = read_contract(frame.lazy())
    assert {name: entry.request for name, entry in contract.metrics.items()} == {
        "squad_em": "squad_em", "squad_f1": "squad_f1"}
    assert contract.metrics["squad_em"].roles == {"prediction": "pred", "gold": "answers"}
    assert json.loads(metadata["evalframe.signatures"])["squad_em"].startswith(
        "metric:squad_em|opts:-|reduce:mean|version:"
    )
    # hand check: "Paris"=="Paris"; "the Rome" normalises to "rome"; Berlin != Paris; a null
    # prediction is a missing answer: scored wrong, and flagged
    assert frame["squad_em"].to_list() == [1.0, 1.0, 0.0, 0.0]
    assert frame["squad_em:missing"].to_list() == [False, False, False, True]
    summary = tmp_path / "summary.csv"
    result = run("aggregate", str(scored), "--by", "model", "-o", str(summary))
    assert result.returncode == 0, result.stderr.decode()
    table = pl.read_csv(summary)
    row = table.filter((pl.col("model") == "m2") & (pl.col("metric") == "squad_em")).row(
        0, named=True
    )
    # m2 answered "Berlin" (0.0) and nothing at all: a missing answer, found through the
    # role mapping the scored file records, counts as wrong by default
    assert (row["n"], row["n_missing"], row["n_null"], row["value"]) == (2, 1, 0, 0.0)
    assert "|missing:wrong|" in row["signature"]
    excluded = run("aggregate", str(scored), "--by", "model", "--missing", "exclude", "-o",
                   str(summary))
    assert excluded.returncode == 0, excluded.stderr.decode()
    row = pl.read_csv(summary).filter(
        (pl.col("model") == "m2") & (pl.col("metric") == "squad_em")
    ).row(0, named=True)
    assert (row["n"], row["n_missing"], row["value"]) == (1, 1, 0.0)


@pytest.mark.subprocess
def test_score_pipes_into_aggregate(dump):
    scored = run("score", str(dump), "-m", "squad_em", "--col", "prediction=pred",
                 "--col", "gold=answers", "--quiet")
    assert scored.returncode == 0, scored.stderr.decode()
    assert scored.stdout[:4] == b"PAR1"
    table = run("aggregate", "--by", "model,task", "-", stdin=scored.stdout)
    assert table.returncode == 0, table.stderr.decode()
    text = table.stdout.decode()
    assert "squad_em" in text and "m1" in text and "stderr" in text


@pytest.mark.subprocess
def test_aggregate_json_output(tmp_path, dump):
    scored = tmp_path / "s.parquet"
    run("score", str(dump), "-m", "squad_f1", "--col", "prediction=pred",
        "--col", "gold=answers", "-o", str(scored))
    out = tmp_path / "agg.json"
    assert run("aggregate", str(scored), "-o", str(out)).returncode == 0
    records = json.loads(out.read_text())
    # four rows: three answers and one missing answer, counted as wrong
    assert records[0]["metric"] == "squad_f1" and records[0]["n"] == 4
    assert records[0]["n_missing"] == 1


@pytest.mark.subprocess
def test_demo_on_bundled_example(tmp_path):
    scored = run("score", str(EXAMPLE), "-m", "squad_em", "-m", "squad_f1", "-m", "pass@1",
                 "-m", "pass@10", "--col", "cluster=question_id", "--quiet")
    assert scored.returncode == 0, scored.stderr.decode()
    table = run("aggregate", "--by", "model,task", stdin=scored.stdout)
    assert table.returncode == 0, table.stderr.decode()
    for word in ("capitals", "science", "code", "pass@10", "ci_low"):
        assert word in table.stdout.decode()
    assert "clustered on question_id" in table.stderr.decode()
    out = tmp_path / "demo.csv"
    assert run("aggregate", "--by", "model,task", "-o", str(out), "--quiet",
               stdin=scored.stdout).returncode == 0
    rows = pl.read_csv(out).filter(pl.col("task") == "capitals")
    # 20 questions x 3 samples per model: the standard errors cluster on the questions
    assert rows["n"].to_list() == [60, 60, 60, 60, 60, 60]
    assert rows["n_clusters"].to_list() == [20] * 6
    assert all("stderr:clustered(question_id)" in text for text in rows["signature"])
    # every interval stays inside [0, 1]
    summary = pl.read_csv(out)
    assert summary["ci_low"].min() >= 0.0 and summary["ci_high"].max() <= 1.0


@pytest.mark.subprocess
def test_compare_and_power_on_the_bundled_example(tmp_path):
    scored = tmp_path / "scored.parquet"
    assert run("score", str(EXAMPLE), "-m", "squad_em", "--col", "cluster=question_id",
               "-o", str(scored), "--quiet").returncode == 0
    out = tmp_path / "compare.csv"
    result = run("compare", str(scored), "--baseline", "base-7b", "--by", "task",
                 "--cluster", "question_id", "--correction", "holm", "-o", str(out))
    assert result.returncode == 0, result.stderr.decode()
    table = pl.read_csv(out).filter(pl.col("n_pairs") > 0)
    assert set(table["model"]) == {"tiny-1b", "large-70b"}
    assert {"diff", "p_value", "p_adjusted", "correlation"} <= set(table.columns)
    result = run("power", str(scored), "-m", "squad_em", "--baseline", "base-7b",
                 "--candidate", "large-70b", "--on", "question_id", "--delta", "0.05")
    assert result.returncode == 0, result.stderr.decode()
    assert "questions for power 0.8" in result.stdout.decode()
    assert run("power", "--delta", "0.05").returncode == 2
    assert run("compare", str(scored), "--baseline", "nobody").returncode == 1


@pytest.mark.subprocess
def test_metrics_lists_registry():
    result = run("metrics", "--names")
    assert result.returncode == 0
    names = result.stdout.decode().split()
    assert {"squad_em", "squad_f1", "pass@{k}"} <= set(names)


@pytest.mark.subprocess
def test_bad_column_mapping_is_a_data_error_naming_the_column(dump):
    result = run("score", str(dump), "-m", "squad_em", "--col", "prediction=nope")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert err.startswith("evalframe: error:") and "'prediction' is mapped to column 'nope'" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.subprocess
def test_malformed_mapping_and_unknown_role_are_usage_errors(dump):
    assert run("score", str(dump), "-m", "squad_em", "--col", "prediction").returncode == 2
    result = run("score", str(dump), "-m", "squad_em", "--col", "answer=pred")
    assert result.returncode == 2 and "unknown role 'answer'" in result.stderr.decode()
    assert run("score", str(dump)).returncode == 2  # no metric
    assert run("frobnicate").returncode == 2


@pytest.mark.subprocess
def test_missing_file(tmp_path):
    result = run("score", str(tmp_path / "nope.jsonl"), "-m", "squad_em")
    assert result.returncode == 1
    assert "file not found" in result.stderr.decode()


@pytest.mark.subprocess
def test_wrong_dtype(tmp_path):
    path = tmp_path / "ints.jsonl"
    pl.DataFrame({"prediction": ["1"], "gold": [1]}).write_ndjson(path)
    result = run("score", str(path), "-m", "squad_em")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert "role 'gold' is column 'gold' of dtype Int64" in err and "expected str" in err


@pytest.mark.subprocess
def test_invalid_values_message_and_debug_traceback(tmp_path):
    path = tmp_path / "counts.jsonl"
    pl.DataFrame({"n": [5, 3], "c": [2, 4]}).write_ndjson(path)
    result = run("score", str(path), "-m", "pass@1", "-o", str(tmp_path / "o.parquet"))
    assert result.returncode == 1
    assert "1 row(s)" in result.stderr.decode() and "Traceback" not in result.stderr.decode()
    debug = run("score", str(path), "-m", "pass@1", "-o", str(tmp_path / "o.parquet"), "--debug")
    assert debug.returncode == 1 and "Traceback" in debug.stderr.decode()


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [[], ["score"], ["aggregate"], ["compare"], ["power"], ["metrics"], ["normalizers"],
     ["rescore"], ["formats"]],
)
def test_help_everywhere(command):
    result = run(*command, "--help")
    assert result.returncode == 0
    assert "usage: evalframe" in result.stdout.decode()


@pytest.mark.subprocess
def test_options_aliases_and_corpus_metrics_through_the_pipe(tmp_path):
    source = tmp_path / "labels.jsonl"
    pl.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b", "b"],
            "pred": ["Yes", "no", "yes", "no", "no", None],
            "label": ["yes", "no", "no", "yes", "no", "no"],
        }
    ).write_ndjson(source)
    scored = run("score", str(source), "--col", "prediction=pred", "--col", "gold=label",
                 "-m", "em_ci=exact_match(ignore_case=true)", "-m", "f1(average=macro)",
                 "--quiet")
    assert scored.returncode == 0, scored.stderr.decode()
    out = tmp_path / "summary.csv"
    table = run("aggregate", "--by", "model", "-o", str(out), "--bootstrap", "200", "-",
                stdin=scored.stdout)
    assert table.returncode == 0, table.stderr.decode()
    summary = pl.read_csv(out)
    a = {row["metric"]: row for row in summary.filter(pl.col("model") == "a").iter_rows(named=True)}
    # ignore_case: Yes~yes, no==no, yes!=no -> 2/3
    assert a["em_ci"]["value"] == pytest.approx(2 / 3, rel=1e-15)
    # f1-macro of model a, exact labels: pred [Yes, no, yes], gold [yes, no, no];
    # labels {Yes, no, yes}: F1(Yes)=0 (fp), F1(no)=2/3, F1(yes)=0 -> 2/9
    assert a["f1(average=macro)"]["value"] == pytest.approx(2 / 9, rel=1e-15)
    assert "stderr:bootstrap|B:200|seed:0" in a["f1(average=macro)"]["signature"]
    assert "opts:" in a["em_ci"]["signature"] and "ignore_case=true" in a["em_ci"]["signature"]


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("Squad_EM", "did you mean 'squad_em'"),
        ("exact_match(ignore_cas=true)", "settable options: ignore_case"),
        ("pass@0", "k='0' is invalid: expected an integer >= 1"),
        ("g-pass@4_1.5", "tau='1.5' is invalid"),
        ("exact_match(match=middle)", "match='middle' is invalid"),
    ],
)
def test_metric_mistakes_are_usage_errors_before_reading(tmp_path, metric, message):
    missing = tmp_path / "absent.jsonl"  # never read: the metric is checked first
    result = run("score", str(missing), "-m", metric)
    assert result.returncode == 2, result.stderr.decode()
    assert message in result.stderr.decode() and "Traceback" not in result.stderr.decode()


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--ci", "1.5"], "--ci 1.5 must be strictly between 0 and 1"),
        (["--bootstrap", "1"], "--bootstrap 1 must be >= 2"),
        (["--by", "modle"], "--by modle: no such column(s)"),
        (["--by", "n"], "--by n: the table has column(s) of that name"),
    ],
)
def test_aggregate_usage_mistakes_exit_2(tmp_path, dump, options, message):
    scored = tmp_path / "s.parquet"
    assert run("score", str(dump), "-m", "squad_em", "--col", "prediction=pred",
               "--col", "gold=answers", "-o", str(scored)).returncode == 0
    pl.read_parquet(scored).with_columns(n=pl.lit(1)).write_parquet(scored)
    result = run("aggregate", str(scored), *options)
    assert result.returncode == 2, result.stderr.decode()
    assert message in result.stderr.decode()


@pytest.mark.subprocess
def test_a_failed_run_never_says_done(tmp_path):
    path = tmp_path / "bad.jsonl"
    pl.DataFrame({"n": [10], "c": [50]}).write_ndjson(path)
    result = run("score", str(path), "-m", "pass@1", "-o", str(tmp_path / "o.parquet"))
    assert result.returncode == 1
    assert "done" not in result.stderr.decode()


@pytest.mark.subprocess
def test_sigint_exits_130_without_a_traceback(tmp_path):
    import signal
    import time

    path = tmp_path / "big.parquet"
    rows = 3_000_000
    pl.DataFrame({"prediction": ["the cat sat on the mat é"] * rows,
                  "gold": ["the cat sat"] * rows}).write_parquet(path)
    process = subprocess.Popen(
        [sys.executable, "-m", "evalframe", "score", str(path), "-m", "squad_f1", "-m",
         "token_f1", "-o", str(tmp_path / "out.parquet")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    time.sleep(2.5)  # past start-up, into the scoring
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    if process.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    assert process.returncode == 130, stderr.decode()
    assert "Traceback" not in stderr.decode() and "interrupted" in stderr.decode()


def test_a_closed_output_pipe_is_not_a_traceback(tmp_path, monkeypatch, capsys):
    # The reader of a pipe going away (`| head -c 10`) shows as BrokenPipeError on write.
    # (Some sandboxes never report EPIPE, so the broken pipe is simulated.)
    import io as stdio

    from evalframe.cli import EXIT_BROKEN_PIPE, main

    class ClosedPipe(stdio.BytesIO):
        def write(self, data):
            raise BrokenPipeError(32, "Broken pipe")

    class Stdout:
        buffer = ClosedPipe()

        def isatty(self):
            return False

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self):
            raise stdio.UnsupportedOperation("no file descriptor")

    path = tmp_path / "counts.jsonl"
    pl.DataFrame({"n": [10, 10], "c": [1, 2]}).write_ndjson(path)
    monkeypatch.setattr(sys, "stdout", Stdout())
    assert main(["score", str(path), "-m", "pass@1", "-o", "-", "--quiet"]) == EXIT_BROKEN_PIPE
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.subprocess
def test_reading_options_reach_the_loader(tmp_path):
    # '007' stays text with --schema; an empty CSV field is '' unless --csv-empty null
    path = tmp_path / "answers.csv"
    path.write_text('prediction,gold\n007,007\n"",x\n,y\n')
    out = tmp_path / "o.parquet"
    assert run("score", str(path), "-m", "exact_match", "--schema", "prediction=str",
               "--schema", "gold=str", "-o", str(out), "--quiet").returncode == 0
    frame = pl.read_parquet(out)
    assert frame["prediction"].to_list() == ["007", "", ""]
    assert frame["exact_match"].to_list() == [1.0, 0.0, 0.0]
    assert run("score", str(path), "-m", "exact_match", "--schema", "prediction=str",
               "--schema", "gold=str", "--csv-empty", "null", "-o", str(out),
               "--quiet").returncode == 0
    # unquoted empty field: null (a missing answer, scored wrong); quoted "": still ""
    assert pl.read_parquet(out)["exact_match"].to_list() == [1.0, 0.0, 0.0]
    assert pl.read_parquet(out)["exact_match:missing"].to_list() == [False, False, True]
    bad = run("score", str(path), "-m", "exact_match", "--schema", "prediction")
    assert bad.returncode == 2 and "COLUMN=TYPE" in bad.stderr.decode()


@pytest.mark.subprocess
def test_a_recorded_metric_column_that_was_renamed_is_reported(tmp_path, dump):
    scored = tmp_path / "s.parquet"
    assert run("score", str(dump), "-m", "squad_em", "-m", "squad_f1", "--col",
               "prediction=pred", "--col", "gold=answers", "-o", str(scored),
               "--quiet").returncode == 0
    import pyarrow.parquet as pq

    table = pq.read_table(scored)
    renamed = table.rename_columns(
        ["em_renamed" if name == "squad_em" else name for name in table.column_names]
    )
    edited = tmp_path / "edited.parquet"
    recorded = pq.ParquetFile(scored).metadata.metadata  # the file's key-value metadata
    pq.write_table(renamed.replace_schema_metadata(recorded), edited)
    result = run("aggregate", str(edited))
    assert result.returncode == 0, result.stderr.decode()
    assert "'squad_em' (no such column: renamed or dropped?)" in result.stderr.decode()


@pytest.mark.subprocess
def test_score_with_golds_from_another_file_reports_missing_predictions(tmp_path):
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps({"q1": "Paris", "q3": "x"}), encoding="utf-8")
    golds = tmp_path / "dev.jsonl"
    golds.write_text(
        '{"id": "q1", "question": "Capital?", "answers": ["Paris"]}\n'
        '{"id": "q2", "question": "River?", "answers": ["Seine"]}\n',
        encoding="utf-8",
    )
    out = tmp_path / "scored.parquet"
    done = run("score", str(predictions), "-m", "squad_em", "--gold", str(golds), "--on", "id",
               "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    stderr = done.stderr.decode()
    assert "evalframe: warning: 1 of 2 gold key(s) have no prediction" in stderr
    assert "first model='preds', id='q2'" in stderr
    assert "Traceback" not in stderr and "UserWarning" not in stderr
    scored = pl.read_parquet(out)
    assert scored.select("id", "prediction", "squad_em").rows() == [
        ("q1", "Paris", 1.0), ("q2", None, 0.0), ("q3", "x", None),
    ]
    summary = run("aggregate", str(out), "-o", str(tmp_path / "s.json"), "--quiet")
    assert summary.returncode == 0, summary.stderr
    row = json.loads((tmp_path / "s.json").read_text())[0]
    # hand computation: q1 right, q2 unanswered (wrong), q3 has no gold (n_null)
    assert (row["n"], row["n_missing"], row["n_null"], row["value"]) == (2, 1, 1, 0.5)


@pytest.mark.subprocess
def test_gold_without_on_and_unknown_format_are_usage_errors(tmp_path, dump):
    done = run("score", str(dump), "-m", "squad_em", "--gold", str(dump))
    assert done.returncode == 2
    assert b"--gold and --on go together" in done.stderr
    done = run("score", str(dump), "-m", "squad_em", "--format", "lm-evel")
    assert done.returncode == 2
    assert b"unknown format 'lm-evel'" in done.stderr


@pytest.mark.subprocess
def test_select_and_format_table(tmp_path):
    path = tmp_path / "preds.json"
    path.write_text(json.dumps([{"prediction": "a", "gold": "a", "noise": {"x": 1}}]))
    out = tmp_path / "o.parquet"
    done = run("score", str(path), "-m", "exact_match", "--select", "prediction,gold",
               "--format", "table", "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    assert pl.read_parquet(out).columns == [
        "prediction", "gold", "exact_match", "exact_match:missing", "_evalframe"]


@pytest.mark.subprocess
def test_aggregate_join_attaches_model_metadata(tmp_path, dump):
    scored = tmp_path / "scored.parquet"
    assert run("score", str(dump), "-m", "squad_em", "--col", "prediction=pred",
               "--col", "gold=answers", "-o", str(scored), "--quiet").returncode == 0
    models = tmp_path / "models.csv"
    models.write_text("model,params_b\nm1,7\n", encoding="utf-8")
    out = tmp_path / "summary.csv"
    done = run("aggregate", str(scored), "--by", "model", "--join", str(models), "--on", "model",
               "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "1 of 2 key(s) ['model'] in the table have no metadata" in done.stderr.decode()
    table = pl.read_csv(out)
    assert table.select("model", "params_b").rows() == [("m1", 7), ("m2", None)]


@pytest.mark.subprocess
def test_formats_lists_the_layouts():
    done = run("formats")
    assert done.returncode == 0, done.stderr
    assert b"squad_predictions" in done.stdout


@pytest.mark.subprocess
def test_piped_aggregate_reads_a_deleted_temporary_copy_and_aggregates_once(
    tmp_path, dump, monkeypatch, capsys
):
    import tempfile

    from evalframe import cli

    scored = tmp_path / "s.parquet"
    assert run("score", str(dump), "-m", "squad_em", "--col", "prediction=pred",
               "--col", "gold=answers", "-o", str(scored), "--quiet").returncode == 0
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    calls = []
    real = cli.aggregate

    def counted(*args, **kwargs):
        calls.append(kwargs.get("keep_empty"))
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "aggregate", counted)
    expected = real(str(scored), by=["model"], keep_empty=True)
    for options in ([], ["--quiet"], ["--keep-empty"], ["--keep-empty", "--quiet"]):
        with open(scored, "rb") as handle:
            monkeypatch.setattr(sys, "stdin", type("Stdin", (), {
                "buffer": handle, "isatty": lambda self: False})())
            out = tmp_path / "piped.csv"
            assert cli.main(["aggregate", "--by", "model", "-o", str(out), *options]) == 0
        piped = pl.read_csv(out)
        assert piped["value"].to_list() == expected["value"].to_list()
        assert piped["n_missing"].to_list() == expected["n_missing"].to_list()
        assert list(spool.iterdir()) == []  # the copy of standard input is gone
    capsys.readouterr()
    assert len(calls) == 4  # one aggregation per run, whatever the options


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "standard input is empty"), (b"not parquet at all", "not a parquet file")],
)
def test_piped_aggregate_input_errors(data, message):
    result = run("aggregate", "--by", "model", stdin=data)
    assert result.returncode == 1
    assert message in result.stderr.decode()


#: Usage mistakes of the other commands: found before the input (a file that does not
#: exist) is read.
USAGE_MISTAKES = [
    (["score", "{absent}", "-m", "exact_match", "--schema", "gold=nope"],
     "evalframe score: --schema gold=nope: unknown type 'nope'; the types: bool"),
    (["score", "{absent}", "-m", "exact_match", "--schema", "gold"],
     "evalframe score: --schema expects COLUMN=TYPE, got 'gold'"),
    (["score", "{absent}", "-m", "exact_match", "-o", "out.xlsx"],
     "evalframe score: -o out.xlsx: unknown type of file; give a name ending in .arrow, .csv"),
    (["score", "-", "{absent}", "-m", "exact_match"],
     "evalframe score: give files or '-' for standard input, not both"),
    (["aggregate", "{absent}", "-o", "summary.xlsx"], "evalframe aggregate: -o summary.xlsx:"),
    (["aggregate", "{absent}", "-o", "-"],
     "evalframe aggregate: -o -: this table is written to a file; standard output takes"),
    (["aggregate", "{absent}", "--schema", "n=integer"], "evalframe aggregate: --schema n=integer"),
    (["compare", "{absent}", "--baseline", "m1", "-o", "cmp.txt"], "evalframe compare: -o cmp.txt"),
    (["extract", "{absent}", "-x", "boxed", "--schema", "answer=text"],
     "evalframe extract: --schema answer=text: unknown type 'text'"),
    (["extract", "{absent}", "-x", "boxed", "--audit", "-o", "-"], "evalframe extract: -o -:"),
    (["power", "--variance", "-1", "--delta", "0.1"], "evalframe power: --variance -1.0 must be"),
    (["metrics", "-o", "registry.xlsx"], "evalframe metrics: -o registry.xlsx: unknown type"),
    (["formats", "-o", "formats.md"], "evalframe formats: -o formats.md: unknown type"),
    (["normalizers", "-o", "n.txt"], "evalframe normalizers: -o n.txt: unknown type"),
    (["extractors", "-o", "x.yaml"], "evalframe extractors: -o x.yaml: unknown type"),
]


@pytest.mark.subprocess
@pytest.mark.parametrize(("args", "message"), USAGE_MISTAKES,
                         ids=[" ".join(args[:1] + args[2:]) for args, _ in USAGE_MISTAKES])
def test_usage_mistakes_exit_2_before_reading(tmp_path, args, message):
    absent = str(tmp_path / "absent.jsonl")
    result = run(*[absent if arg == "{absent}" else arg for arg in args])
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert err.startswith(message) and len(err.splitlines()) == 1


@pytest.mark.subprocess
def test_an_output_folder_that_does_not_exist_is_found_before_reading(tmp_path):
    result = run("score", str(tmp_path / "absent.jsonl"), "-m", "exact_match",
                 "-o", str(tmp_path / "missing" / "scored.parquet"))
    assert result.returncode == 1
    assert "the folder" in result.stderr.decode() and "does not exist" in result.stderr.decode()


@pytest.mark.subprocess
def test_score_reads_parquet_from_standard_input(tmp_path, dump):
    extracted = run("extract", str(dump), "-x", "last_number", "--column", "pred", "-o", "-")
    assert extracted.returncode == 0, extracted.stderr.decode()
    out = tmp_path / "scored.parquet"
    scored = run("score", "-", "-m", "squad_em", "--col", "prediction=pred",
                 "--col", "gold=answers", "-o", str(out), "--quiet", stdin=extracted.stdout)
    assert scored.returncode == 0, scored.stderr.decode()
    # by hand: Paris/Paris 1, 'the Rome'/Rome 1 (SQuAD drops articles), Berlin/Paris 0, and
    # the null prediction a missing answer, 0
    table = pl.read_parquet(out)
    assert table["squad_em"].to_list() == [1.0, 1.0, 0.0, 0.0]
    assert "extracted" in table.columns


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "no input: standard input is empty"),
     (b'{"prediction": "a"}\n', "standard input is not a parquet file")],
)
def test_score_standard_input_errors_are_one_line(data, message):
    result = run("score", "-", "-m", "exact_match", stdin=data)
    err = result.stderr.decode()
    assert result.returncode == 1
    assert err.startswith(f"evalframe: error: {message}") and len(err.splitlines()) == 1


def _closed_stdout() -> None:
    import os

    os.close(1)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "args",
    [["-o", "-"], []],  # without -o a closed (not a terminal) stdout would get parquet
)
def test_a_closed_standard_output_is_a_one_line_error(tmp_path, dump, args):
    result = subprocess.run(
        [sys.executable, "-m", "evalframe", "score", str(dump), "-m", "squad_em", "--col",
         "prediction=pred", "--col", "gold=answers", "--quiet", *args],
        stdout=None, stderr=subprocess.PIPE, preexec_fn=_closed_stdout, timeout=120,
        check=False,
    )
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert err == "evalframe: error: standard output is closed: the result cannot be written " \
                  "(give -o FILE)\n"


@pytest.mark.subprocess
def test_a_closed_standard_output_does_not_stop_a_run_writing_a_file(tmp_path, dump):
    out = tmp_path / "scored.parquet"
    result = subprocess.run(
        [sys.executable, "-m", "evalframe", "score", str(dump), "-m", "squad_em", "--col",
         "prediction=pred", "--col", "gold=answers", "-o", str(out), "--quiet"],
        stdout=None, stderr=subprocess.PIPE, preexec_fn=_closed_stdout, timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert pl.read_parquet(out)["squad_em"].to_list() == [1.0, 1.0, 0.0, 0.0]


@pytest.fixture
def wide(tmp_path) -> Path:
    """A scored file with 120 columns of long names: a list of them is ~4,000 characters."""
    path = tmp_path / "wide.parquet"
    names = {f"feature_with_a_rather_long_name_{i:03d}": [0.0] for i in range(120)}
    pl.DataFrame({"prediction": ["a"], "gold": ["a"], **names}).write_parquet(path)
    return path


@pytest.mark.subprocess
def test_a_long_usage_message_is_one_short_line_and_whole_under_debug(wide):
    result = run("aggregate", str(wide), "--by", "modle")
    err = result.stderr.decode()
    assert result.returncode == 2
    assert err.startswith("evalframe aggregate: --by modle: no such column(s); available: ")
    assert len(err.splitlines()) == 1 and len(err.rstrip("\n")) <= 300
    assert err.rstrip("\n").endswith(" … (--debug shows all)")
    debug = run("aggregate", str(wide), "--by", "modle", "--debug").stderr.decode()
    assert "feature_with_a_rather_long_name_119" in debug and len(debug) > 4000


@pytest.mark.subprocess
def test_a_long_data_error_is_one_short_line_and_whole_under_debug(wide, tmp_path):
    out = str(tmp_path / "o.parquet")
    result = run("score", str(wide), "-m", "exact_match", "--col", "prediction=answer",
                 "-o", out)
    err = result.stderr.decode()
    assert result.returncode == 1
    assert err.startswith(
        "evalframe: error: role 'prediction' is mapped to column 'answer', which the input "
        "does not have"
    )
    assert len(err.splitlines()) == 1 and len(err.rstrip("\n")) <= len("evalframe: error: ") + 300
    assert "feature_with_a_rather_long_name_017" not in err
    debug = run("score", str(wide), "-m", "exact_match", "--col", "prediction=answer", "-o", out,
                "--debug").stderr.decode()
    assert "Traceback" in debug and "feature_with_a_rather_long_name_017" in debug


@pytest.mark.subprocess
def test_ranks_of_an_aggregate_table(tmp_path):
    rows = [{"model": model, "task": task, "sample_id": f"{task}{i}", "gold": "a",
             "prediction": "a" if i < share else "b"}
            for task, shares in (("t1", (90, 60, 30)), ("t2", (20, 50, 80)))
            for model, share in zip(("x", "y", "z"), shares, strict=True) for i in range(100)]
    scored = tmp_path / "scored.parquet"
    pl.DataFrame(rows).write_parquet(tmp_path / "rows.parquet")
    assert run("score", str(tmp_path / "rows.parquet"), "-m", "exact_match", "-o",
               str(scored), "--quiet").returncode == 0
    table = tmp_path / "agg.parquet"
    assert run("aggregate", str(scored), "--by", "model,task", "-o", str(table),
               "--quiet").returncode == 0
    out = tmp_path / "ranks.parquet"
    done = run("ranks", str(table), "--by", "model", "-o", str(out))
    assert done.returncode == 0, done.stderr
    ranked = pl.read_parquet(out).sort("task", "model")
    assert ranked["rank"].to_list() == [1, 2, 3, 3, 2, 1]
    lower = run("ranks", str(table), "--lower-is-better", "-o", str(out))
    assert lower.returncode == 0, lower.stderr
    assert pl.read_parquet(out).sort("task", "model")["rank"].to_list() == [3, 2, 1, 1, 2, 3]
    for options, message in (
        (["--within", "split"], "--within split: no such column"),
        (["--by", "name"], "--by name: no such column"),
        (["--ci", "2"], "--ci 2.0 must be"),
        (["--draws", "5"], "--draws 5 must be >= 100"),
    ):
        done = run("ranks", str(table), *options)
        assert done.returncode == 2, (options, done.stderr)
        assert message in done.stderr.decode()
    done = run("ranks", str(table), "--within", "none")  # a model twice in one group
    assert done.returncode == 1 and "has 2 rows in one group" in done.stderr.decode()
