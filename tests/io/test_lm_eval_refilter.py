"""lm-eval's ``filtered_resps`` computed again from ``resps``, on files lm-eval wrote itself.

The samples files under ``tests/fixtures/harness/lm_eval/output*`` were written by lm-eval
0.4.13 (``generate.py`` there); each generation task's chains are read from its yaml
(``tasks/<task>.yaml``), and evalframe's :func:`refilter` must give, row for row, the
``filtered_resps`` lm-eval wrote. ``ef_gsm8k`` carries the filters of lm-eval's
``gsm8k/gsm8k.yaml`` and ``ef_gsm8k_sc`` those of ``gsm8k-cot-self-consistency.yaml``.
"""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import polars as pl
import pytest
import yaml

import evalframe as ef
from evalframe import EvalframeError
from evalframe.extract.lm_eval_pipelines import TASK_FILTERS, refilter

FIXTURES = Path(__file__).parent.parent / "fixtures" / "harness" / "lm_eval"
GENERATION = ["ef_gen", "ef_gen_repeats", "ef_gsm8k", "ef_gsm8k_sc"]
FILES = sorted(
    path
    for folder in ("output", "output_filters")
    for path in (FIXTURES / folder).glob("*/samples_*.jsonl")
    if any(path.name.startswith(f"samples_{task}_2") for task in GENERATION)
)


def task_of(path: Path) -> str:
    return next(task for task in GENERATION if path.name.startswith(f"samples_{task}_2"))


def chains(task: str) -> dict[str, list[dict]]:
    config = yaml.safe_load((FIXTURES / "tasks" / f"{task}.yaml").read_text(encoding="utf-8"))
    return {entry["name"]: entry["filter"] for entry in config["filter_list"]}


def load(path: Path) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mixed string / list predictions (maj@3 and all)
        return ef.load(path)


def test_every_generation_file_is_checked():
    assert {task_of(path) for path in FILES} == set(GENERATION)
    assert len(FILES) == 6  # ef_gen, ef_gen_repeats for two models; the two GSM8K-like tasks


@pytest.mark.parametrize("path", FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_refilter_reproduces_filtered_resps(path):
    frame = load(path)
    written = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    again = refilter(frame, chains(task_of(path)))
    assert again.get_column("refiltered").to_list() == frame.get_column("prediction").to_list()
    if again.schema["refiltered"] == pl.String:
        assert again.get_column("refiltered").to_list() == [
            line["filtered_resps"][0] for line in written
        ]
    assert again.height == len(written)
    assert set(again.get_column("filter")) == set(chains(task_of(path)))


def _gsm8k_file(task: str) -> Path:
    (path,) = (FIXTURES / "output_filters" / "ef-echo-lm").glob(f"samples_{task}_2*.jsonl")
    return path


def test_shipped_gsm8k_chains_by_name():
    frame = load(_gsm8k_file("ef_gsm8k"))
    again = refilter(frame, "gsm8k")
    assert again.get_column("refiltered").to_list() == frame.get_column("prediction").to_list()
    answers = set(frame.get_column("prediction"))
    # The data reaches the cases that matter: no match, commas, $, signs, decimals, "...".
    assert {"[invalid]", "1,000", "$1,000.", "-7", "4.5", "...", "24,690"} <= answers


def test_self_consistency_chains_by_name():
    frame = load(_gsm8k_file("ef_gsm8k_sc"))
    pipelines = {
        **TASK_FILTERS["gsm8k_cot_self_consistency"],
        "flexible-extract": TASK_FILTERS["gsm8k"]["flexible-extract"],
    }
    again = refilter(frame, pipelines)
    assert again.get_column("refiltered").to_list() == frame.get_column("prediction").to_list()
    votes = again.filter(pl.col("filter") == "maj@64")
    firsts = again.filter(pl.col("filter") == "score-first")
    assert (votes.get_column("refiltered") != firsts.get_column("refiltered")).any()


def test_a_filter_without_chain_is_named():
    frame = load(_gsm8k_file("ef_gsm8k"))
    with pytest.raises(EvalframeError, match="no chain for filter.*flexible-extract"):
        refilter(frame, {"strict-match": "gsm8k_strict"})
    kept = frame.filter(pl.col("filter") == "strict-match")
    again = refilter(kept.lazy(), {"strict-match": "gsm8k_strict"}).collect()
    assert again.get_column("refiltered").to_list() == kept.get_column("prediction").to_list()


def test_requires_the_resps_column():
    with pytest.raises(EvalframeError, match="no column 'resps'"):
        refilter(pl.DataFrame({"filter": ["x"]}), "gsm8k")


@pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="lm-eval is not installed")
@pytest.mark.parametrize(
    ("task", "shipped"),
    [("ef_gsm8k", "gsm8k/gsm8k.yaml"), ("ef_gsm8k_sc", "gsm8k/gsm8k-cot-self-consistency.yaml")],
)
def test_fixture_filters_are_the_shipped_ones(task, shipped):
    root = Path(next(iter(importlib.util.find_spec("lm_eval").submodule_search_locations)))
    config = yaml.safe_load((root / "tasks" / shipped).read_text(encoding="utf-8"))
    original = {entry["name"]: entry["filter"] for entry in config["filter_list"]}
    ours = chains(task)
    assert {name: ours[name] for name in original} == original
    if task == "ef_gsm8k":
        assert ours == original
