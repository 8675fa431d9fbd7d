"""The length-controlled win rate against AlpacaEval's ``get_length_controlled_winrate``.

The reference is ``alpaca_eval.metrics.glm_winrate`` (alpaca_eval 0.6.6), given the same
tables: its ``hf_hub_download`` is patched to return files written here in the hub's
format, since the real ``tatsu-lab/alpaca_eval`` files are not available offline:

- the difficulty of instruction ``i`` (its position in the 805 of the evaluation set) is
  ``logit(clip(m_i, 0.02, 0.98))``, ``m_i`` the mean share ``preference - 1`` of the six
  complete non-baseline models of ``shared/data/alpaca_eval`` on it (what AlpacaEval's
  notebook helper ``make_data`` does without a table);
- ``df_gamed.csv`` holds two "gamed baselines" made of real annotations: claude-2.1's rows
  as ``gpt4_1106_preview_verbose`` and gpt-3.5-turbo-1106's as
  ``gpt4_1106_preview_concise``, with the hub's columns ``model, index, preference`` (the
  share), ``std_delta_len`` (``len(output_1) - len(output_2)`` over its standard
  deviation), ``instruction_difficulty`` and ``not_gamed_baseline`` (False);
- ``instruction_difficulty.csv`` (``index, instruction_difficulty``), which the reference
  turns out not to read, and the evaluation set ``alpaca_eval.json`` (text_davinci_003's
  outputs file: the 805 instructions in AlpacaEval's order).

The reference maps an instruction to its difficulty by the row's label in the annotations
it is given: a DataFrame indexed by the evaluation-set position gives it the right one.

AlpacaEval's fit stops at liblinear's ``tol=1e-4``; its win rates then differ from the
optimum by up to a few hundredths of a point (printed by ``-s``; e.g. gpt-3.5-turbo-1106
18.789 against 18.817, claude-2.1 24.797 against 24.805 with these tables). evalframe's fit
is run to convergence, so it is compared to 1e-6 with the reference run at ``tol=1e-10``
(``glm_info`` with ``kwargs={"n_splits": 5, "tol": 1e-10, "max_iter": 100000}``; at
1e-12 liblinear takes minutes on alpaca-7b for the same answer to 1e-8), and to
the reference as it is within 0.05 point.
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe.judge import length_controlled as lc
from evalframe.judge.report import report

pd = pytest.importorskip("pandas")
pytest.importorskip("sklearn")
glm = pytest.importorskip("alpaca_eval.metrics.glm_winrate")

pytestmark = pytest.mark.slow

ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
MODELS = ("FuseChat-Gemma-2-9B-Instruct", "FuseChat-Llama-3.2-1B-Instruct", "NullModel",
          "alpaca-7b", "claude-2.1", "gpt-3.5-turbo-1106", "gpt4_1106_preview",
          "text_davinci_001")
GAMED = {"gpt4_1106_preview_verbose": "claude-2.1",
         "gpt4_1106_preview_concise": "gpt-3.5-turbo-1106"}
TIGHT = {**glm.GLM_INFO["length_controlled_v1"],
         "kwargs": {"n_splits": 5, "tol": 1e-10, "max_iter": 100_000}}


def read(path: Path):
    return json.loads(gzip.decompress(path.read_bytes()))


@pytest.fixture(scope="module")
def real(shared_data):
    root = shared_data / "alpaca_eval"
    records = {model: read(root / model / ANNOTATOR / "annotations.json.gz") for model in MODELS}
    outputs = read(root / "text_davinci_003_model_outputs.json.gz")  # AlpacaEval's order
    evaluation = [row["instruction"] for row in outputs]
    return root, records, evaluation


@pytest.fixture(scope="module")
def tables(real, tmp_path_factory):
    """The hub's files, built from the real annotations (see the module docstring)."""
    _, records, evaluation = real
    folder = tmp_path_factory.mktemp("glm")
    complete = [model for model in MODELS
                if len(records[model]) == 805 and model != "gpt4_1106_preview"]
    shares = np.array([[row["preference"] - 1 for row in records[model]] for model in complete])
    assert all([row["instruction"] for row in records[model]] == evaluation
               for model in complete)
    mean = np.clip(shares.mean(axis=0), 0.02, 0.98)
    difficulty = np.log(mean / (1 - mean))
    gamed = []
    for name, source in GAMED.items():
        frame = pd.DataFrame(records[source])
        delta = frame["output_1"].str.len() - frame["output_2"].str.len()
        gamed.append(pd.DataFrame({
            "model": name, "index": range(805), "preference": frame["preference"] - 1,
            "std_delta_len": delta / delta.std(), "instruction_difficulty": difficulty,
            "not_gamed_baseline": False,
        }))
    pd.concat(gamed, ignore_index=True).to_csv(folder / "df_gamed.csv", index=False)
    pd.Series(difficulty, index=pd.RangeIndex(805, name="index"),
              name="instruction_difficulty").to_csv(folder / "instruction_difficulty.csv")
    with_set = tmp_path_factory.mktemp("glm_eval_set")
    (with_set / "df_gamed.csv").write_bytes((folder / "df_gamed.csv").read_bytes())
    (with_set / "alpaca_eval.json").write_text(json.dumps(
        [{"instruction": text, "output": "", "generator": "text_davinci_003"}
         for text in evaluation]))
    return folder, with_set


@pytest.fixture
def hub(tables, monkeypatch):
    """The reference's downloads, served from the tables; the names asked are recorded."""
    asked = []

    def download(**kwargs):
        asked.append(kwargs["filename"])
        return str(tables[0] / kwargs["filename"])

    monkeypatch.setattr(glm, "hf_hub_download", download)
    return asked


def reference(records: list[dict], index=None, *, tight: bool = True) -> dict:
    frame = pd.DataFrame(records, index=index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return glm.get_length_controlled_winrate(
            frame, save_weights_dir=None, glm_info=TIGHT if tight else None,
            is_warn_extreme_changes=False,
        )


def positions(records: list[dict], evaluation: list[str]) -> list[int]:
    where = {text: i for i, text in enumerate(evaluation)}
    return [where[row["instruction"]] for row in records]


def ours(paths, folder) -> dict[str, dict]:
    table = report(ef.load(paths), by="model", policy="alpaca_eval", length_controlled=True,
                   glm_data=folder)
    return {row["model"]: row for row in table.iter_rows(named=True)}


def test_the_real_models_equal_the_reference(real, tables, hub):
    root, records, evaluation = real
    paths = [root / model / ANNOTATOR / "annotations.json.gz" for model in MODELS]
    by_order, by_set = ours(paths, tables[0]), ours(paths, tables[1])
    gaps = {}
    for model in MODELS:
        index = positions(records[model], evaluation)
        tight, as_is = reference(records[model], index), reference(records[model], index,
                                                                    tight=False)
        for got in (by_order[model], by_set[model]):
            assert got["length_controlled_winrate"] == pytest.approx(
                tight["length_controlled_winrate"], abs=1e-6), model
            assert got["lc_standard_error"] == pytest.approx(tight["lc_standard_error"],
                                                             abs=1e-6), model
        gaps[model] = got["length_controlled_winrate"] - as_is["length_controlled_winrate"]
        print(f"{model}: evalframe {got['length_controlled_winrate']:.6f}, AlpacaEval at "
              f"tol=1e-4 {as_is['length_controlled_winrate']:.6f}, at tol=1e-10 "
              f"{tight['length_controlled_winrate']:.6f}")
    assert max(abs(gap) for gap in gaps.values()) < 0.05
    assert max(abs(gap) for gap in gaps.values()) > 1e-6  # the default fit stops early
    assert set(hub) == {"df_gamed.csv"}  # instruction_difficulty.csv is never asked for
    assert by_order["gpt4_1106_preview"]["length_controlled_winrate"] == 50.0


def test_a_model_missing_instructions_keeps_their_index(real, tables, hub):
    root, records, evaluation = real
    rows = records["text_davinci_001"]
    assert len(rows) == 803
    paths = [root / model / ANNOTATOR / "annotations.json.gz" for model in MODELS]
    got = ours(paths, tables[0])["text_davinci_001"]["length_controlled_winrate"]
    indexed = reference(rows, positions(rows, evaluation))["length_controlled_winrate"]
    assert got == pytest.approx(indexed, abs=1e-6)
    # AlpacaEval given the file as it is takes the rows' positions 0..802: the rows after the
    # two missing instructions (247 and 504) get the next instruction's difficulty
    positional = reference(rows)["length_controlled_winrate"]
    print(f"text_davinci_001: evalframe {got:.4f}, AlpacaEval on the file {positional:.4f}")
    assert abs(got - positional) > 1


def variant(records: list[dict], name: str) -> list[dict]:
    """claude-2.1's annotations changed in one adversarial way."""
    rows = [dict(row) for row in records]
    for i, row in enumerate(rows):
        if name == "all_wins":
            row["preference"] = 2.0
        elif name == "all_draws":
            row["preference"] = 1.5
        elif name == "all_longer":
            row["output_2"] = row["output_1"] + "x" * ((i * 37) % 200 + 1)
        elif name == "all_shorter":
            row["output_2"] = row["output_1"][: max(0, len(row["output_1"]) - 1 - (i * 13) % 300)]
        elif name == "unjudged_rows" and i % 10 == 3:
            row["preference"] = None
        elif name == "zero_draws" and i % 9 == 0:
            row["preference"] = 0.0
    if name == "missing_shuffled":
        keep = np.random.default_rng(5).permutation(len(rows))[:600]
        rows = [rows[i] for i in keep]
    return rows


@pytest.mark.parametrize("name", ["all_wins", "all_draws", "all_longer", "all_shorter",
                                  "unjudged_rows", "zero_draws", "missing_shuffled"])
def test_adversarial_annotations_equal_the_reference(real, tables, hub, tmp_path, name):
    _, records, evaluation = real
    rows = variant(records["claude-2.1"], name)
    path = tmp_path / "claude-2.1" / ANNOTATOR / "annotations.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(rows))
    got = ours([path], tables[1])["claude-2.1"]
    expected = reference(rows, positions(rows, evaluation))
    assert got["length_controlled_winrate"] == pytest.approx(
        expected["length_controlled_winrate"], abs=1e-6)
    assert got["lc_standard_error"] == pytest.approx(expected["lc_standard_error"], abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_the_cross_validated_fit_equals_alpaca_evals(seed):
    rng = np.random.default_rng(seed)
    n = 300
    features = np.column_stack([np.tanh(rng.normal(size=n)), rng.normal(size=n),
                                (rng.random(n) < 0.7).astype(float)])
    share = 1 / (1 + np.exp(-(features @ np.array([-1.0, 0.7, 0.5]) + rng.normal(0, 1, n))))
    share[rng.random(n) < 0.05] = float(seed % 2)  # some certain wins or losses
    weight = np.where(features[:, 2] == 0, 0.1, 1.0)
    data = pd.DataFrame(features, columns=["a", "b", "c"]).assign(preference=share)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = glm.fit_LogisticRegressionCV(data, "preference", is_ytrue_proba=True,
                                             sample_weight=weight, tol=1e-12, max_iter=100_000)
    beta, chosen = lc.fit_glm(features, share, weight)
    assert chosen == pytest.approx(float(model.C_[0]), rel=1e-12)
    assert np.allclose(beta, model.coef_[0], atol=1e-7)


def test_the_report_reads_the_real_files_as_the_reference_does(real, tables, hub):
    root, records, _ = real
    frame = ef.load(root / "claude-2.1" / ANNOTATOR / "annotations.json.gz")
    # answer_a is AlpacaEval's output_1 (the baseline's), answer_b its output_2
    assert frame["answer_a"].to_list() == [row["output_1"] for row in records["claude-2.1"]]
    assert frame["answer_b"].to_list() == [row["output_2"] for row in records["claude-2.1"]]
    lengths = frame.select(pl.col("answer_b").str.len_chars())["answer_b"].to_list()
    assert lengths == [len(row["output_2"]) for row in records["claude-2.1"]]  # code points
