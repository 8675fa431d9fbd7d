"""ef.partial / ef.combine: any split of the rows gives aggregate's table."""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalframe as ef
from evalframe.errors import EvalframeError
from evalframe.stats.bootstrap import poisson_replicate_sums, poisson_weights, row_keys

METRICS = ["exact_match", "f1(average=macro)", "word_perplexity", "chrf"]


def _scored(seed: int, n: int, ids: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame({
        "task": rng.choice(["a", "b", "c"], n).tolist(),
        "sample_id": rng.integers(0, ids, n),
        "prediction": rng.choice(np.array(["x", "yé", "z z", None], dtype=object), n).tolist(),
        "gold": rng.choice(["x", "yé", "z z"], n).tolist(),
        "loglikelihood": -np.abs(rng.normal(-10, 3, n)),
        "n_words": rng.integers(1, 8, n),
    })
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.score(frame, METRICS)


def _assert_same(expected: pl.DataFrame, got: pl.DataFrame) -> None:
    assert got.columns == expected.columns and got.height == expected.height
    for name in expected.columns:
        a, b = expected[name], got[name]
        assert a.dtype == b.dtype, name
        if a.dtype.is_float():
            # integer sums exactly; the rest within 1e-12 (summed in another order)
            np.testing.assert_allclose(b.to_numpy(), a.to_numpy(), rtol=1e-12, atol=1e-12,
                                       err_msg=name)
            assert a.is_null().equals(b.is_null()), name
        else:
            assert a.equals(b), name


def _split(frame: pl.DataFrame, cuts: list[int], order: list[int] | None) -> list[pl.DataFrame]:
    if order is not None:
        frame = frame[order]
    bounds = [0, *sorted(set(cuts)), frame.height]
    return [frame[start:stop] for start, stop in itertools.pairwise(bounds)]


OPTIONS = [
    {"by": "task"},
    {"by": "task", "cluster": False},
    {},
    {"by": ["task"], "cluster": "sample_id", "missing": "exclude"},
    {"by": "task", "stderr": "question_mean", "bootstrap": 50, "seed": 3},
]


@given(
    seed=st.integers(0, 2**16),
    n=st.integers(2, 80),
    ids=st.integers(1, 90),
    options=st.sampled_from(OPTIONS),
    data=st.data(),
)
def test_combine_of_any_split_equals_aggregate(seed, n, ids, options, data):
    scored = _scored(seed, n, ids)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=5))
    order = data.draw(st.permutations(range(n))) if data.draw(st.booleans()) else None
    try:
        expected = ef.aggregate(scored, **options)
    except EvalframeError as error:  # e.g. question_mean without repeated ids: both refuse
        with pytest.raises(EvalframeError, match=str(error).split(";")[0][:40].replace("(", ".")):
            ef.combine([ef.partial(part, **options) for part in _split(scored, cuts, order)])
        return
    parts = [ef.partial(part, **options) for part in _split(scored, cuts, order)]
    _assert_same(expected, ef.combine(parts))


@pytest.mark.parametrize("options", OPTIONS[:4])
def test_combine_equals_aggregate_keep_empty_and_wide(options):
    scored = _scored(1, 200, 50)
    parts = [ef.partial(part, **options) for part in scored.iter_slices(37)]
    for extra in ({"keep_empty": True}, {"wide": True}, {"ci": 0.9, "interval": "t"}):
        _assert_same(ef.aggregate(scored, **options, **extra), ef.combine(parts, **extra))


def test_a_partial_pickles_and_is_small():
    scored = _scored(2, 2000, 40)
    part = ef.partial(scored, by="task")
    copy = pickle.loads(pickle.dumps(part))
    _assert_same(ef.combine([part]), ef.combine([copy]))
    # it grows with groups, clusters and replicates, not with rows
    bigger = ef.partial(_scored(2, 20_000, 40), by="task")
    assert len(pickle.dumps(bigger)) < 1.1 * len(pickle.dumps(part))
    assert repr(part) == (
        "Partial(rows=2000, by=['task'], metrics=[exact_match, f1(average=macro), "
        "word_perplexity, chrf])"
    )


def test_sample_id_repeating_only_across_batches_is_clustered():
    # ids 0..9 once each per batch: no batch sees a repeat, the whole does
    frame = pl.DataFrame({
        "sample_id": list(range(10)) * 2,
        "correct": [1.0] * 10 + [0.0, 1.0] * 5,
    })
    expected = ef.aggregate(frame, metrics=["correct"])
    assert expected["n_clusters"].item() == 10 and "clustered(sample_id)" in expected[
        "signature"].item()
    parts = [ef.partial(frame[:10], metrics=["correct"]), ef.partial(frame[10:],
                                                                      metrics=["correct"])]
    _assert_same(expected, ef.combine(parts))


def test_binary_scores_merge_to_the_last_bit():
    # 0/1 scores: sums and counts are exact, so the value is the same float either way
    rng = np.random.default_rng(7)
    frame = pl.DataFrame({"correct": rng.integers(0, 2, 997).astype(float)})
    expected = ef.aggregate(frame, metrics=["correct"])
    parts = [ef.partial(part, metrics=["correct"]) for part in frame.iter_slices(101)]
    assert ef.combine(parts)["value"].item() == expected["value"].item()


def test_unique_sample_ids_do_not_cluster():
    frame = pl.DataFrame({"sample_id": range(6), "correct": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]})
    table = ef.combine([ef.partial(frame[:3], metrics=["correct"]),
                        ef.partial(frame[3:], metrics=["correct"])])
    # by hand: mean 4/6; sd = sqrt((4 * (1/3)**2 + 2 * (2/3)**2) / 5) = sqrt(0.26667)
    assert table["value"].item() == pytest.approx(4 / 6)
    assert table["stderr"].item() == pytest.approx(np.sqrt(4 / 15) / np.sqrt(6), rel=1e-12)
    assert "stderr:sem" in table["signature"].item()


def test_null_ids_that_repeat_are_refused_and_required_clusters_checked():
    frame = pl.DataFrame({"sample_id": [1, 1, None, 2], "correct": [1.0, 0.0, 1.0, 1.0]})
    parts = [ef.partial(frame[:2], metrics=["correct"]),
             ef.partial(frame[2:], metrics=["correct"])]
    with pytest.raises(EvalframeError, match="'sample_id' is null in 1 row"):
        ef.combine(parts)
    once = pl.DataFrame({"sample_id": [1, 2], "correct": [1.0, 0.0]})
    with pytest.raises(EvalframeError, match="does not repeat within a group"):
        ef.combine([ef.partial(once, metrics=["correct"], cluster=True)])


def test_partials_made_differently_are_refused():
    scored = _scored(3, 40, 10)
    one = ef.partial(scored[:20], by="task")
    with pytest.raises(EvalframeError, match="partial 1 was made with by=\\(\\)"):
        ef.combine([one, ef.partial(scored[20:])])
    with pytest.raises(EvalframeError, match="partial 1 was made with seed=1"):
        ef.combine([one, ef.partial(scored[20:], by="task", seed=1)])
    with pytest.raises(EvalframeError, match="partial 1 was made with metrics="):
        ef.combine([one, ef.partial(scored[20:], by="task", metrics=["exact_match"])])
    with pytest.raises(EvalframeError, match="item 1 is a DataFrame, not a Partial"):
        ef.combine([one, scored])
    with pytest.raises(EvalframeError, match="at least one partial"):
        ef.combine([])


def test_option_errors_are_the_aggregate_ones():
    scored = _scored(4, 10, 5)
    with pytest.raises(EvalframeError, match="missing="):
        ef.partial(scored, missing="wrongly")
    with pytest.raises(EvalframeError, match="cannot group by \\['nope'\\]"):
        ef.partial(scored, by="nope")
    with pytest.raises(EvalframeError, match="interval='wilsn' is invalid"):
        ef.combine([ef.partial(scored)], interval="wilsn")


def test_an_empty_batch_adds_nothing():
    scored = _scored(5, 60, 20)
    for parts in ([ef.partial(scored.head(0), by="task"), ef.partial(scored, by="task")],
                  [ef.partial(scored, by="task"), ef.partial(scored.clear(), by="task")]):
        _assert_same(ef.aggregate(scored, by="task"), ef.combine(parts))
    # with aliased metrics, which an empty batch cannot tell from plain columns
    rows = pl.DataFrame({"prediction": ["a", "b"], "gold": ["a", "c"], "t": ["x", "y"]})
    aliased = ef.score(rows, ["exact_match", "em=exact_match(ignore_case=true)"])
    parts = [ef.partial(aliased, by="t"), ef.partial(aliased.clear(), by="t")]
    _assert_same(ef.aggregate(aliased, by="t"), ef.combine(parts))


def test_files_and_lazy_frames_are_batches(tmp_path):
    scored = _scored(6, 90, 30)
    paths = []
    for i, part in enumerate(scored.iter_slices(40)):
        path = tmp_path / f"part-{i}.parquet"
        ef.save(part, path)
        paths.append(path)
    parts = [ef.partial(path, by="task") for path in paths[:2]] + [
        ef.partial(pl.scan_parquet(paths[2]), by="task")
    ]
    _assert_same(ef.aggregate(scored, by="task"), ef.combine(parts))
    _assert_same(ef.aggregate(paths, by="task"), ef.combine(parts))


# --- the row-keyed Poisson bootstrap ---------------------------------------------------------


def test_poisson_weights_have_poisson_one_frequencies():
    weights = poisson_weights(np.arange(200_000, dtype=np.uint64), 5, seed=11).ravel()
    counts = np.bincount(weights, minlength=6)[:6] / weights.size
    # Poisson(1): P(k) = e^-1 / k!
    expected = np.exp(-1) / np.array([1, 1, 2, 6, 24, 120])
    np.testing.assert_allclose(counts, expected, atol=0.002)


def test_poisson_bootstrap_stderr_of_a_mean_matches_the_formula():
    # the standard error of a ratio of sums sum(x) / sum(1) is sd(x) / sqrt(n) (delta method)
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 2.0, 3000)
    sums = poisson_replicate_sums(
        np.arange(3000, dtype=np.uint64), np.column_stack([x, np.ones(3000)]),
        replicates=4000, seed=1,
    )
    replicate_means = sums[:, 0] / sums[:, 1]
    assert np.std(replicate_means, ddof=1) == pytest.approx(np.std(x, ddof=1) / np.sqrt(3000),
                                                            rel=0.05)


def test_row_keys_ignore_column_order_and_categorical_encoding():
    frame = pl.DataFrame({"a": ["x", "y"], "b": [1, 2]})
    other = frame.select("b", pl.col("a").cast(pl.Categorical))
    assert frame.select(row_keys(frame)).to_series().equals(
        other.select(row_keys(other)).to_series()
    )
    assert frame.select(row_keys(frame)).to_series().n_unique() == 2
