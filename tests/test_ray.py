"""evalframe on Ray Data (:mod:`evalframe.ray`) gives what one process gives.

Real data (``../shared/data``, SOURCES.md): GPT-4o on MMLU-Pro (section 6: 12,032
questions, 571 failed extractions) and five SQuAD v1.1 leaderboard models' predictions
matched with the dev answers (section 5: 52,878 rows). Each is written as several parquet
files and scored and aggregated on a local two-node cluster (one CPU each, loopback only),
then compared with :func:`evalframe.score` + :func:`evalframe.aggregate` in this process:
the scored rows identical, the aggregate tables the same rows, counts and signatures,
every other number within :func:`evalframe.combine`'s floating-point rounding. The tests
that start Ray are marked ``slow`` and ``subprocess``; they skip without Ray or the data.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.cli import main
from evalframe.engine import prepare_input
from evalframe.scored import CONTRACT_COLUMN

HAS_RAY = importlib.util.find_spec("ray") is not None
NO_RAY = 'Ray is not installed: pip install "evalframe[ray]"'
needs_ray = pytest.mark.skipif(not HAS_RAY, reason=NO_RAY)

#: Ray on this machine's loopback only, without usage statistics (before Ray is imported).
RAY_ENVIRONMENT = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
MMLU_COLUMNS = {"prediction": "pred", "gold": "answer"}
MMLU_METRICS = ["exact_match", "f1(average=macro)"]
SQUAD_METRICS = ["squad_em", "squad_f1", "bleu"]
FLOATS = ("value", "stderr", "ci_low", "ci_high")
#: How close combine's numbers are to one process's (the same sums in another order).
RELATIVE = 1e-12


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local cluster of two nodes (one CPU, 100 MB of object store each) on 127.0.0.1;
    this process is its driver. Every process it started is stopped, even on failure."""
    if not HAS_RAY:
        pytest.skip(NO_RAY)
    saved = {name: os.environ.get(name) for name in RAY_ENVIRONMENT}
    os.environ.update(RAY_ENVIRONMENT)
    import ray
    import ray._private.ray_constants as constants
    from ray.cluster_utils import Cluster

    import evalframe.ray as efr

    loopback = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = False  # read when Ray was imported: bind to 127.0.0.1
    folder = tempfile.mkdtemp(prefix="efray")  # short: Ray's socket paths must stay short
    nodes = None
    try:
        nodes = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 1, "object_store_memory": 100 * 2**20, "include_dashboard": False,
                "temp_dir": folder,
            },
        )
        nodes.add_node(num_cpus=1, object_store_memory=100 * 2**20)
        nodes.wait_for_nodes()
        efr.init(nodes.address, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        yield nodes.address
    finally:
        ray.shutdown()
        if nodes is not None:
            nodes.shutdown()
        shutil.rmtree(folder, ignore_errors=True)  # the cluster's logs and sockets
        constants.ENABLE_RAY_CLUSTER = loopback
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def efr(cluster: str):
    import evalframe.ray

    return evalframe.ray


def _parts(frame: pl.DataFrame, folder: Path, count: int) -> list[str]:
    """``frame`` written as ``count`` parquet files of about equal size, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    size = math.ceil(frame.height / count)
    paths = []
    for i in range(count):
        path = folder / f"part-{i:02d}.parquet"
        frame.slice(i * size, size).write_parquet(path)
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def mmlu(shared_data: Path) -> pl.DataFrame:
    """GPT-4o's MMLU-Pro records, read with the standard library."""
    found = sorted((shared_data / "mmlu-pro" / "gpt4o").glob("*_result.json.gz"))
    if len(found) != 14:
        pytest.skip("../shared/data/mmlu-pro/gpt4o is absent or incomplete")
    rows: list[dict] = []
    for path in found:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows.extend(json.load(handle))
    keep = ("question_id", "category", "src", "pred", "answer")
    return pl.DataFrame([{key: row[key] for key in keep} for row in rows])


@pytest.fixture(scope="module")
def mmlu_files(mmlu: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _parts(mmlu, tmp_path_factory.mktemp("mmlu"), 5)


@pytest.fixture(scope="module")
def squad(shared_data: Path) -> pl.DataFrame:
    """Five SQuAD v1.1 models' predictions with the dev answers (one row per model and
    question), as evalframe matches them."""
    folder = shared_data / "squad-explorer"
    files = sorted((folder / "predictions-v1.1").glob("*.json"))
    if len(files) != 5:
        pytest.skip("../shared/data/squad-explorer is absent or incomplete")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the baseline's unknown and missing ids
        frame = prepare_input(
            [str(path) for path in files], gold=folder / "dev-v1.1-answers.jsonl", on="id"
        ).collect()
    return frame.drop("answers", "question")


@pytest.fixture(scope="module")
def squad_files(squad: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _parts(squad, tmp_path_factory.mktemp("squad"), 7)


def _same_table(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """Same rows in the same order, counts and signatures; floats to RELATIVE."""
    assert got.columns == want.columns
    assert got.height == want.height
    floats = [name for name in FLOATS if name in want.columns]
    assert got.drop(floats).equals(want.drop(floats))
    for name in floats:
        for a, b in zip(got[name].to_list(), want[name].to_list(), strict=True):
            assert (a is None) == (b is None), name
            if a is not None:
                assert a == pytest.approx(b, rel=RELATIVE, abs=1e-15), name


def _sorted(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return frame.sort(keys, maintain_order=True)


# -- scoring --------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_scored_rows_are_one_process_rows(efr, mmlu, mmlu_files):
    scored = efr.collect(efr.score(mmlu_files, MMLU_METRICS, columns=MMLU_COLUMNS))
    want = ef.score(mmlu, MMLU_METRICS, columns=MMLU_COLUMNS)
    assert scored.schema == want.schema
    # the blocks come back in the files' order here; compare row by row in any case
    assert _sorted(scored, ["question_id"]).equals(_sorted(want, ["question_id"]))
    assert scored[CONTRACT_COLUMN].cast(pl.String).unique().to_list() == (
        want[CONTRACT_COLUMN].cast(pl.String).unique().to_list()
    )


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_a_ray_dataset_and_json_lines_files_score_the_same(efr, mmlu, tmp_path):
    import ray.data

    lines = tmp_path / "mmlu.jsonl"
    mmlu.head(3000).write_ndjson(lines)
    from_lines = efr.collect(efr.score(str(lines), ["exact_match"], columns=MMLU_COLUMNS))
    dataset = ray.data.from_arrow(mmlu.head(3000).to_arrow())
    from_dataset = efr.collect(efr.score(dataset, ["exact_match"], columns=MMLU_COLUMNS))
    want = ef.score(mmlu.head(3000), ["exact_match"], columns=MMLU_COLUMNS)
    for got in (from_lines, from_dataset):
        assert _sorted(got, ["question_id"]).equals(_sorted(want, ["question_id"]))


# -- aggregating ----------------------------------------------------------------------------


@needs_ray
def test_an_empty_block_scores_to_no_rows_and_adds_no_partial():
    """A block without rows (an empty file, a filter) is scored to no rows, and reduced to
    no partial: its contract cannot be read, so its partial would not match the others'."""
    from evalframe import ray as efr

    rows = pl.DataFrame({"pred": ["A", "B"], "answer": ["A", "C"], "category": ["x", "y"]})
    empty = efr._score_block(
        rows.clear().to_arrow(), metrics=MMLU_METRICS, columns=MMLU_COLUMNS, overwrite=False,
        schema=rows.schema,
    )
    scored = ef.score(rows, MMLU_METRICS, columns=MMLU_COLUMNS)
    assert empty.num_rows == 0
    assert pl.from_arrow(empty).schema == scored.schema
    options = {"missing": "wrong", "cluster": None, "stderr": "auto", "columns": None,
               "bootstrap": 1000, "seed": 0}
    assert efr._partial_block(empty, by=["category"], metrics=None, options=options).num_rows == 0
    one = efr._partial_block(scored.to_arrow(), by=["category"], metrics=None, options=options)
    assert one.num_rows == 1


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_aggregate_by_group_with_a_corpus_metric(efr, mmlu, mmlu_files):
    """exact_match (Wilson) and F1-macro (a corpus metric: label cells and bootstrap) per
    subject, from the lazily scored dataset: one pipeline, never collected."""
    scored = efr.score(mmlu_files, MMLU_METRICS, columns=MMLU_COLUMNS)
    got = efr.aggregate(scored, by="category")
    want = ef.aggregate(ef.score(mmlu, MMLU_METRICS, columns=MMLU_COLUMNS), by="category")
    _same_table(got, want)
    assert got.height == 28
    biology = got.filter(pl.col("category") == "biology", pl.col("metric") == "exact_match")
    assert biology.select("n", "n_missing").row(0) == (717, 17)
    assert biology["value"].item() == pytest.approx(621 / 717, rel=1e-12)


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_aggregate_clustered_on_a_column(efr, mmlu, mmlu_files):
    """Standard errors clustered on the question's source (``src``), missing answers
    excluded, a t interval: options reach every block and the merge."""
    options = {"cluster": "src", "missing": "exclude", "interval": "t", "ci": 0.9}
    scored = efr.score(mmlu_files, ["exact_match"], columns=MMLU_COLUMNS)
    got = efr.aggregate(scored, by=["category"], **options)
    want = ef.aggregate(ef.score(mmlu, ["exact_match"], columns=MMLU_COLUMNS), by=["category"],
                        **options)
    _same_table(got, want)
    assert (got["n_clusters"] < got["n"]).all()
    assert got["signature"].str.contains("stderr:clustered(src)", literal=True).all()


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_squad_models_bleu_and_questions_repeated_across_blocks(efr, squad, squad_files):
    """SQuAD EM / F1 and corpus BLEU per model, and over all models (each question id is
    answered by five models in different files: the clustering is decided on the merged
    counts, and BLEU's bootstrap resamples whole questions)."""
    scored = efr.score(squad_files, SQUAD_METRICS)
    want_scored = ef.score(squad, SQUAD_METRICS)
    _same_table(efr.aggregate(scored, by="model"), ef.aggregate(want_scored, by="model"))
    got = efr.aggregate(scored, cluster="id")
    want = ef.aggregate(want_scored, cluster="id")
    _same_table(got, want)
    assert got["n_clusters"].to_list() == [10570] * 3


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_saved_folder_reads_back_with_its_contract(efr, mmlu, mmlu_files, tmp_path):
    folder = tmp_path / "scored.parquet"
    efr.save(efr.score(mmlu_files, MMLU_METRICS, columns=MMLU_COLUMNS), folder)
    assert folder.is_dir() and list(folder.glob("*.parquet"))
    want = ef.score(mmlu, MMLU_METRICS, columns=MMLU_COLUMNS)
    back = ef.scan(folder).collect()
    assert _sorted(back, ["question_id"]).equals(_sorted(want, ["question_id"]))
    table = ef.aggregate(folder, by="category", missing="exclude")
    _same_table(table, ef.aggregate(want, by="category", missing="exclude"))
    # the folder again, on Ray: files in, the same table
    _same_table(efr.aggregate(str(folder), by="category", missing="exclude"), table)
    # saving again replaces what the folder held
    efr.save(efr.score(mmlu_files[:1], ["exact_match"], columns=MMLU_COLUMNS), folder)
    assert ef.scan(folder).select(pl.len()).collect().item() == pl.read_parquet(
        mmlu_files[0]).height


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_bad_requests_fail_on_the_driver_with_evalframe_errors(efr, mmlu_files):
    with pytest.raises(EvalframeError, match="did you mean 'exact_match'"):
        efr.score(mmlu_files, ["exact_mtch"], columns=MMLU_COLUMNS)
    with pytest.raises(EvalframeError, match="role 'prediction' is mapped to column 'guess'"):
        efr.score(mmlu_files, ["exact_match"], columns={"prediction": "guess"})
    with pytest.raises(EvalframeError, match="gold= is not available on Ray"):
        efr.score(mmlu_files, ["exact_match"], gold="dev.jsonl", on="id")
    scored = efr.score(mmlu_files, ["exact_match"], columns=MMLU_COLUMNS)
    with pytest.raises(ef.errors.OptionError, match=r"cannot group by \['subject'\]"):
        efr.aggregate(scored, by="subject")
    with pytest.raises(ef.errors.OptionError, match="interval='wilsn'"):
        efr.aggregate(scored, interval="wilsn")
    table = Path(mmlu_files[0]).with_suffix(".csv")
    pl.read_parquet(mmlu_files[0]).write_csv(table)
    with pytest.raises(EvalframeError, match="evalframe.ray reads parquet"):
        efr.score([*mmlu_files, str(table)], ["exact_match"])


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_an_error_in_a_worker_is_evalframes_error(efr, tmp_path):
    """A row check that fails in a worker (pass@k with c > n in the second file) reaches
    the driver as evalframe's error: its message, not a Ray traceback."""
    good = pl.DataFrame({"n": [10] * 50, "c": [3] * 50})
    bad = pl.DataFrame({"n": [10, 5, 10], "c": [2, 7, 1]})
    paths = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    good.write_parquet(paths[0])
    bad.write_parquet(paths[1])
    scored = efr.score([str(p) for p in paths], ["pass@1"])
    with pytest.raises(EvalframeError) as caught:
        efr.collect(scored)
    message = str(caught.value)
    # row numbers count from the first row of the block (Ray may join small files)
    assert message.startswith("metric 'pass@1': 1 row(s) have c > n"), message
    assert re.search(r"First offending row: \d+ \(n=5, c=7\) \(in a Ray block of \d+ rows\)$",
                     message), message
    assert "Traceback" not in message and "UDF" not in message
    with pytest.raises(EvalframeError, match=r"^metric 'pass@1': 1 row\(s\) have c > n"):
        efr.aggregate(scored)


# -- the command line -----------------------------------------------------------------------


def _run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, **RAY_ENVIRONMENT}
    return subprocess.run(
        [sys.executable, "-m", "evalframe", *args], input=stdin, capture_output=True,
        env=environment, check=False, timeout=600,
    )


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_the_command_line_gives_the_same_output(cluster, mmlu, mmlu_files, tmp_path):
    columns = ["--col", "prediction=pred", "--col", "gold=answer"]
    metrics = ["-m", "exact_match", "-m", "f1(average=macro)"]
    ray_engine = ["--engine", "ray", "--address", cluster]
    # score: parquet on standard output, the same table
    polars_out = _run("score", *mmlu_files, *metrics, *columns, "-o", "-")
    ray_out = _run("score", *mmlu_files, *metrics, *columns, *ray_engine, "-o", "-")
    assert polars_out.returncode == 0, polars_out.stderr.decode()
    assert ray_out.returncode == 0, ray_out.stderr.decode()
    one = pl.read_parquet(polars_out.stdout)
    many = pl.read_parquet(ray_out.stdout)
    assert many.equals(one)  # in order: the command keeps the input's order
    piped = tmp_path / "piped.parquet"
    piped.write_bytes(ray_out.stdout)
    assert "evalframe.signatures" in pl.read_parquet_metadata(piped)
    # score to a folder; aggregate it with both engines: the same table, printed and written
    folder = tmp_path / "scored.parquet"
    done = _run("score", *mmlu_files, *metrics, *columns, *ray_engine, "-o", str(folder),
                "--quiet")
    assert done.returncode == 0, done.stderr.decode()
    assert folder.is_dir()
    single = tmp_path / "single.parquet"
    single.write_bytes(polars_out.stdout)
    for extra in ([], ["--wide"], ["--missing", "exclude", "--cluster", "src"]):
        printed = _run("aggregate", str(single), "--by", "category", *extra)
        on_ray = _run("aggregate", str(folder), "--by", "category", *extra, *ray_engine)
        assert printed.returncode == 0 and on_ray.returncode == 0, on_ray.stderr.decode()
        assert on_ray.stdout == printed.stdout
    # the folder, read by the default engine: the same table
    folder_here = _run("aggregate", str(folder), "--by", "category")
    assert folder_here.stdout == _run("aggregate", str(single), "--by", "category").stdout
    written = {}
    for name, source, engine in (("polars", single, []), ("ray", folder, ray_engine)):
        written[name] = tmp_path / f"table-{name}.csv"
        done = _run("aggregate", str(source), "--by", "category", *engine, "-o",
                    str(written[name]))
        assert done.returncode == 0, done.stderr.decode()
    _same_table(pl.read_csv(written["ray"]), pl.read_csv(written["polars"]))


@pytest.mark.slow
@pytest.mark.subprocess
@needs_ray
def test_the_command_line_errors_with_ray(cluster, mmlu_files, tmp_path):
    ray_engine = ["--engine", "ray", "--address", cluster]
    bad_metric = _run("score", mmlu_files[0], "-m", "exact_mtch", *ray_engine, "-o", "-")
    assert bad_metric.returncode == 2
    assert b"did you mean 'exact_match'" in bad_metric.stderr
    bad_by = _run("aggregate", mmlu_files[0], "--by", "subject", *ray_engine)
    assert bad_by.returncode == 2
    assert bad_by.stderr.decode().startswith("evalframe aggregate: --by subject: no such column")
    rows = tmp_path / "runs.parquet"
    pl.DataFrame({"n": [10, 5], "c": [2, 7]}).write_parquet(rows)
    data_error = _run("score", str(rows), "-m", "pass@1", *ray_engine, "-o", "-")
    assert data_error.returncode == 1
    lines = data_error.stderr.decode().strip().splitlines()
    assert lines[-1:] == [
        "evalframe: error: metric 'pass@1': 1 row(s) have c > n (more passed than drawn); "
        "expected 0 <= c <= n. First offending row: 1 (n=5, c=7) (in a Ray block of 2 rows)"
    ], lines


@needs_ray
def test_usage_errors_before_ray_starts(tmp_path, capsys):
    rows = tmp_path / "runs.parquet"
    pl.DataFrame({"prediction": ["a"], "gold": ["a"]}).write_parquet(rows)
    cases = [
        (["score", str(rows), "-m", "exact_match", "--address", "auto"],
         "--address goes with --engine ray"),
        (["score", str(rows), "-m", "exact_match", "--engine", "ray", "--gold", "g.jsonl",
          "--on", "id"], "--gold cannot run with --engine ray"),
        (["score", str(rows), "-m", "exact_match", "--engine", "ray", "-o", "out.csv"],
         "--engine ray writes parquet"),
        (["score", str(rows), "-m", "exact_match", "--engine", "ray", "--address", "here"],
         "--address here: not a Ray address"),
        (["aggregate", "--engine", "ray"], "not standard input"),
    ]
    for argv, expected in cases:
        assert main(argv) == 2, argv
        assert expected in capsys.readouterr().err, argv


def test_without_ray_the_engine_is_a_usage_error_naming_the_extra(tmp_path, monkeypatch,
                                                                  capsys):
    rows = tmp_path / "runs.parquet"
    pl.DataFrame({"prediction": ["a"], "gold": ["a"]}).write_parquet(rows)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    monkeypatch.delitem(sys.modules, "evalframe.ray", raising=False)
    for argv in (
        ["score", str(rows), "-m", "exact_match", "--engine", "ray", "-o", "-"],
        ["aggregate", str(rows), "--engine", "ray"],
    ):
        assert main(argv) == 2
        error = capsys.readouterr().err
        assert 'pip install "evalframe[ray]"' in error, error
    with pytest.raises(ImportError, match=r'pip install "evalframe\[ray\]"'):
        import evalframe.ray  # noqa: F401


@pytest.mark.subprocess
def test_importing_evalframe_does_not_import_ray():
    code = (
        "import sys, polars as pl, evalframe as ef\n"
        "scored = ef.score(pl.DataFrame({'prediction': ['a'], 'gold': ['a']}), ['exact_match'])\n"
        "ef.aggregate(scored)\n"
        "from evalframe import cli\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
