"""The scored-result contract: one honest number on every path.

Real data: GPT-4o on MMLU-Pro (../shared/data/mmlu-pro, SOURCES.md section 6): 12,032
questions, 571 failed answer extractions (``pred`` null). The expected per-subject table is
computed by hand from the raw records with the standard library (biology: 621 right of
717 questions, 17 failed extractions, so 621/717 with the failures counted wrong), and every
path evalframe offers must give exactly the same table, signature included.
"""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.scored import CONTRACT_COLUMN, read_contract

COLUMNS = {"prediction": "pred", "gold": "answer"}
TABLE_COLUMNS = [
    "category", "metric", "n", "n_missing", "n_null", "value", "stderr", "ci_low", "ci_high",
    "signature",
]


@pytest.fixture(scope="module")
def paths(shared_data: Path) -> list[str]:
    found = sorted((shared_data / "mmlu-pro" / "gpt4o").glob("*_result.json.gz"))
    if len(found) != 14:
        pytest.skip("../shared/data/mmlu-pro/gpt4o is absent or incomplete")
    return [str(path) for path in found]


@pytest.fixture(scope="module")
def raw(paths: list[str]) -> pl.DataFrame:
    """The records as polars reads them from the standard library's parse (no evalframe)."""
    rows: list[dict] = []
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows.extend(json.load(handle))
    keep = ("question_id", "category", "pred", "answer")
    return pl.DataFrame([{key: row[key] for key in keep} for row in rows])


@pytest.fixture(scope="module")
def expected(raw: pl.DataFrame) -> pl.DataFrame:
    """The honest table by hand: a failed extraction is a wrong answer, and counted."""
    rows = []
    for (category,), part in raw.partition_by("category", as_dict=True).items():
        total = part.height
        missing = int(part["pred"].is_null().sum())
        right = int((part["pred"] == part["answer"]).fill_null(False).sum())
        rows.append((category, total, missing, right / total))
    return pl.DataFrame(
        rows, schema=["category", "n", "n_missing", "value"], orient="row"
    ).sort("category")


@pytest.fixture(scope="module")
def reference(raw: pl.DataFrame) -> pl.DataFrame:
    """evalframe's table on the home path: a DataFrame, ``columns=`` given to score only."""
    scored = ef.score(raw, ["exact_match"], columns=COLUMNS)
    return _table(ef.aggregate(scored, by="category"))


def _table(table: pl.DataFrame) -> pl.DataFrame:
    return table.select(TABLE_COLUMNS).sort("category")


def _same(table: pl.DataFrame, reference: pl.DataFrame) -> bool:
    """Counts, values and signatures identical; standard errors and intervals to 1e-13.

    A file read in other chunks sums the squared deviations in another order, which can
    move the last bit of the standard error (1 part in 1e15).
    """
    floats = ["stderr", "ci_low", "ci_high"]
    table = _table(table)
    if not table.drop(floats).equals(reference.drop(floats)):
        return False
    return all(
        math.isclose(a, b, rel_tol=1e-13)
        for name in floats
        for a, b in zip(table[name], reference[name], strict=True)
    )


def test_the_home_path_is_the_hand_computed_table(reference, expected):
    assert reference.height == 14
    got = reference.select("category", "n", "n_missing", "value")
    assert got["category"].to_list() == expected["category"].to_list()
    assert got["n"].to_list() == expected["n"].to_list()
    assert got["n_missing"].to_list() == expected["n_missing"].to_list()
    for mine, hand in zip(got["value"], expected["value"], strict=True):
        assert mine == pytest.approx(hand, rel=1e-12)
    biology = reference.row(reference["category"].to_list().index("biology"), named=True)
    assert (biology["n"], biology["n_missing"], biology["n_null"]) == (717, 17, 0)
    assert biology["value"] == pytest.approx(621 / 717, rel=1e-12)
    # 0/1 scores: Wilson's interval, inside [0, 1]
    assert 0 < biology["ci_low"] < biology["value"] < biology["ci_high"] < 1
    assert "|missing:wrong|" in biology["signature"]
    # the per-row scores are honest too: a plain mean of the column (what pandas, DuckDB
    # or a plot would compute) is the same number
    assert int(reference["n_missing"].sum()) == 571


@pytest.mark.slow
def test_every_python_path_gives_the_same_table(raw, paths, reference, tmp_path):
    lazy = ef.aggregate(ef.score(raw.lazy(), ["exact_match"], columns=COLUMNS), by="category")
    assert _same(lazy, reference)
    from_paths = ef.score(paths, ["exact_match"], columns=COLUMNS)
    assert _same(ef.aggregate(from_paths, by="category"), reference)
    renamed = raw.rename({"pred": "prediction", "answer": "gold"})
    assert _same(ef.aggregate(ef.score(renamed, ["exact_match"]), by="category"), reference)
    saved = tmp_path / "saved.parquet"
    ef.save(ef.score(ef.scan(paths), ["exact_match"], columns=COLUMNS), saved)
    assert _same(ef.aggregate(str(saved), by="category"), reference)
    assert _same(ef.aggregate(ef.scan(str(saved)), by="category"), reference)


def test_files_written_by_other_tools_give_the_same_table(raw, reference, tmp_path):
    scored = ef.score(raw, ["exact_match"], columns=COLUMNS)
    by_polars = tmp_path / "by_polars.parquet"
    scored.write_parquet(by_polars)
    assert _same(ef.aggregate(pl.read_parquet(by_polars), by="category"), reference)
    assert _same(ef.aggregate(str(by_polars), by="category"), reference)
    for suffix, write in (
        ("jsonl", pl.DataFrame.write_ndjson),
        ("csv", pl.DataFrame.write_csv),
        ("arrow", pl.DataFrame.write_ipc),
    ):
        path = tmp_path / f"scored.{suffix}"
        write(scored, path)
        assert _same(ef.aggregate(str(path), by="category"), reference), suffix
    # through pyarrow (pandas' and DuckDB's reader): the contract column is dictionary text
    import pyarrow.parquet as pq

    by_arrow = tmp_path / "by_arrow.parquet"
    pq.write_table(pq.read_table(by_polars), by_arrow)
    assert _same(ef.aggregate(str(by_arrow), by="category"), reference)


@pytest.mark.subprocess
def test_the_command_line_and_a_pipe_give_the_same_table(paths, reference, tmp_path):
    evalframe = [sys.executable, "-m", "evalframe"]
    scoring = [*evalframe, "score", *paths, "-m", "exact_match", "--col", "prediction=pred",
               "--col", "gold=answer", "--quiet"]
    scored = tmp_path / "cli.parquet"
    done = subprocess.run([*scoring, "-o", str(scored)], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    table = tmp_path / "table.parquet"
    done = subprocess.run(
        [*evalframe, "aggregate", str(scored), "--by", "category", "-o", str(table), "--quiet"],
        capture_output=True, check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert _same(pl.read_parquet(table), reference)
    piped = tmp_path / "piped.parquet"
    producer = subprocess.Popen(scoring, stdout=subprocess.PIPE)
    done = subprocess.run(
        [*evalframe, "aggregate", "--by", "category", "-o", str(piped), "--quiet"],
        stdin=producer.stdout, capture_output=True, check=False,
    )
    producer.stdout.close()
    assert producer.wait() == 0
    assert done.returncode == 0, done.stderr.decode()
    assert _same(pl.read_parquet(piped), reference)
    # and the file the command line wrote reads the same in a notebook
    assert _same(ef.aggregate(pl.read_parquet(scored), by="category"), reference)


def test_the_contract_survives_the_users_own_polars(raw, reference):
    scored = ef.score(raw, ["exact_match"], columns=COLUMNS)
    # filter, select, with_columns, join, concat, sort: the table is the same
    shuffled = scored.sample(fraction=1.0, shuffle=True, seed=3)
    assert _same(ef.aggregate(shuffled, by="category"), reference)
    halves = pl.concat([scored.head(5_000), scored.tail(scored.height - 5_000)])
    assert _same(ef.aggregate(halves, by="category"), reference)
    slim = scored.select("category", "exact_match", "exact_match:missing", CONTRACT_COLUMN)
    assert _same(ef.aggregate(slim, by="category"), reference)
    meta = pl.DataFrame({"category": reference["category"], "field": ["x"] * 14})
    joined = scored.join(meta, on="category", how="left").with_columns(pl.lit(1).alias("k"))
    assert _same(ef.aggregate(joined, by="category"), reference)
    biology = ef.aggregate(scored.filter(pl.col("category") == "biology"))
    assert _same(
        biology.with_columns(category=pl.lit("biology")),
        reference.filter(pl.col("category") == "biology"),
    )


def test_dropping_the_record_refuses_instead_of_a_different_number(raw):
    scored = ef.score(raw, ["exact_match"], columns=COLUMNS)
    honest = ef.aggregate(scored, by="category")
    # the flags dropped: the value is still honest (missing answers were scored 0.0 in the
    # column) but their count is unknown, and said so
    flags_gone = scored.drop("exact_match:missing")
    table = ef.aggregate(flags_gone, by="category")
    assert table["value"].to_list() == honest["value"].to_list()
    assert table["n_missing"].null_count() == 14
    assert all("|missing:unknown|" in s for s in table["signature"])
    # a policy that needs to find them is refused, naming the fix
    with pytest.raises(EvalframeError, match="'exact_match:missing'.*is gone"):
        ef.aggregate(flags_gone, by="category", missing="exclude")
    # the record dropped as well: nothing says what the column is; a metric's name still
    # reads as that metric, with a warning that missing answers are not known
    with pytest.warns(UserWarning, match="missing answers of 'exact_match' are not known"):
        bare = ef.aggregate(scored.select("category", "exact_match"), by="category")
    assert bare["value"].to_list() == honest["value"].to_list()


def test_aliased_columns_are_aggregated_in_memory():
    frame = pl.DataFrame({"prediction": [" a", "b", None], "gold": ["a", "b", "c"]})
    scored = ef.score(frame, ["correct=exact_match(strip=true)", "exact_match"])
    table = ef.aggregate(scored)
    assert table["metric"].to_list() == ["correct", "exact_match"]
    # hand: strip makes " a" right: 2 of 3 (the null prediction is wrong); plain: 1 of 3
    assert table["value"].to_list() == pytest.approx([2 / 3, 1 / 3], rel=1e-15)
    assert table["n_missing"].to_list() == [1, 1]
    assert table["signature"][0].startswith("metric:exact_match|opts:")
    assert "strip=true" in table["signature"][0]
    assert "strip=true" not in table["signature"][1]
    only_alias = ef.score(frame, ["correct=exact_match(strip=true)"])
    assert ef.aggregate(only_alias)["metric"].to_list() == ["correct"]


def test_a_frame_scored_twice_records_both_scorings():
    frame = pl.DataFrame({"prediction": ["a", None], "gold": ["a", "b"]})
    twice = ef.score(ef.score(frame, ["exact_match"]), ["tf1=token_f1"])
    contract = read_contract(twice.lazy())
    assert set(contract.metrics) == {"exact_match", "tf1"}
    table = ef.aggregate(twice)
    assert table["metric"].to_list() == ["exact_match", "tf1"]
    assert table["n_missing"].to_list() == [1, 1]


def test_stacked_scorings_that_disagree_are_refused():
    frame = pl.DataFrame({"prediction": ["A", "b"], "gold": ["a", "b"]})
    loose = ef.score(frame, ["em=exact_match(ignore_case=true)"])
    strict = ef.score(frame, ["em=exact_match"])
    with pytest.raises(EvalframeError, match="'em' was scored as .* in some rows"):
        ef.aggregate(pl.concat([loose, strict]))


def test_rows_another_scoring_did_not_score_are_left_out_or_refused():
    frame = pl.DataFrame({"prediction": ["a", "b"], "gold": ["a", "c"]})
    both = ef.score(frame, ["exact_match", "tf1=token_f1"])
    one = ef.score(frame, ["exact_match"])
    stacked = pl.concat([both, one], how="diagonal_relaxed")
    table = ef.aggregate(stacked)
    rows = {row["metric"]: row for row in table.iter_rows(named=True)}
    assert (rows["exact_match"]["n"], rows["exact_match"]["n_null"]) == (4, 0)
    # the second frame's rows never had tf1: not counted as rows without a gold
    assert (rows["tf1"]["n"], rows["tf1"]["n_null"]) == (2, 0)
    # a value in a row whose scoring did not compute the metric cannot be explained
    forged = stacked.with_columns(pl.col("tf1").fill_null(1.0))
    with pytest.raises(EvalframeError, match="'tf1': 2 row\\(s\\) hold a value"):
        ef.aggregate(forged)


def test_a_foreign_column_in_the_contracts_place_is_refused():
    frame = pl.DataFrame({"exact_match": [1.0], CONTRACT_COLUMN: ["not json"]})
    with pytest.raises(EvalframeError, match="not a record written by evalframe.score"):
        ef.aggregate(frame)


def test_the_missing_answer_count_matches_a_plain_mean_of_the_column(raw):
    scored = ef.score(raw, ["exact_match"], columns=COLUMNS)
    # what any other tool computes from the scored column alone
    plain = scored.group_by("category").agg(pl.col("exact_match").mean()).sort("category")
    table = ef.aggregate(scored, by="category").sort("category")
    for mine, theirs in zip(table["value"], plain["exact_match"], strict=True):
        assert math.isclose(mine, theirs, rel_tol=1e-12)
