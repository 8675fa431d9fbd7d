"""HELM run folders: ``scenario_state.json`` joined with ``per_instance_stats.json``, the
per-instance stats alone, ``stats.json``, and HELM's metric names as evalframe requests.

The fixtures in ``tests/fixtures/harness/helm/<run name>/`` are written by hand in the exact
structure ``helm-run`` writes (``json.dumps(asdict_without_nones(...), indent=2)``; fields that
are ``None`` absent). Their values, and every expected value below, come from HELM's
definitions worked out by hand (``helm.benchmark.metrics.evaluate_reference_metrics``):

- ``pred = completion.strip()`` (mapped through ``output_mapping`` for multiple choice);
- ``exact_match``: 0 if ``pred`` is empty, else ``gold.strip() == pred``;
- ``quasi_exact_match``: 0 if ``pred`` is empty, else ``normalize_text(gold) ==
  normalize_text(pred)``, where ``normalize_text`` lower-cases, removes ASCII punctuation, then
  the words a/an/the, and joins the words with single spaces;
- ``f1_score``: nltk's ``f_measure`` of the two sets of normalised words,
  ``1 / (0.5 / P + 0.5 / R)``, 0.0 when a set is empty;
- every score is the maximum over the references tagged ``correct``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import detect

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "harness" / "helm"
QA_RUN = (
    "natural_qa:mode=closedbook,data_augmentation=canonical,model=openai_gpt-3.5-turbo-instruct"
)
MC_RUN = "mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt-3.5-turbo-instruct"
QA = FIXTURES / QA_RUN
MC = FIXTURES / MC_RUN
MODEL = "openai/gpt-3.5-turbo-instruct"

#: HELM's f1_score requests and the ones reproducing exact_match and quasi_exact_match.
F1 = "word_set_f1(normalizer=squad)"
EM = "exact_match(strip=true, empty_prediction=wrong)"
QEM = "exact_match(strip=true, normalizer=squad, empty_prediction=wrong)"
PEM = "exact_match(strip=true, match=prefix, empty_prediction=wrong)"
QPEM = "exact_match(strip=true, normalizer=squad, match=prefix, empty_prediction=wrong)"

IDS = ["id1021", "id1021", "id1022", "id1023", "id1024", "id1025", "id1025", "id1026", "id1027"]
PERTURBATIONS = [None, "typos", None, None, None, None, "typos", None, None]
# HELM's predictions: the completions stripped
PREDICTIONS = [
    "Victor Hugo.", "Victor Hugo", "東京です。", "The river Seine flows through Paris!", "",
    "Three.", "Two", "1989", "Mont Blanc, 4 806 m.",
]
EXACT = [
    0.0,  # "Victor Hugo." != "Victor Hugo" (the dot)
    1.0,  # typos copy: "Victor Hugo"
    0.0,  # "東京です。" != "東京"
    0.0,
    0.0,  # empty completion
    0.0,  # "Three." (wrong)
    0.0,  # typos copy: "Two" != "two" (case)
    1.0,  # "1989"
    0.0,
]
QUASI = [
    1.0,  # "victor hugo" == "victor hugo"
    1.0,
    0.0,  # "。" is not ASCII punctuation: "東京です。" != "東京"
    0.0,  # "river seine flows through paris" is neither "seine" nor "seine river"
    0.0,  # empty: 0 whatever the gold
    0.0,  # "three" != "two"
    1.0,  # "two" == "two"
    1.0,
    0.0,  # "mont blanc 4 806 m" != "le mont blanc", "montblanc"
]
F1_SCORES = [
    1.0,  # {victor, hugo} both sides
    1.0,
    0.0,  # {東京です。} vs {東京}, {tokyo}: nothing shared
    # {river, seine, flows, through, paris}: "the Seine" {seine} P 1/5 R 1 -> 1/3;
    # "Seine River" {seine, river} P 2/5 R 1 -> 4/7 (the best); "the Loire" is not correct
    1 / (0.5 / (2 / 5) + 0.5 / (2 / 2)),
    0.0,  # the empty set
    0.0,  # {three} vs {two}, {2}
    1.0,  # {two} vs {two}
    1.0,
    # {mont, blanc, 4, 806, m}: "le mont Blanc" {le, mont, blanc} P 2/5 R 2/3 -> 0.5;
    # "Mont-Blanc" -> {montblanc} (the hyphen is removed, not split on): 0
    1 / (0.5 / (2 / 5) + 0.5 / (2 / 3)),
]


def copy_run(tmp_path: Path, run: Path = QA, name: str | None = None) -> Path:
    target = tmp_path / (name or run.name)
    shutil.copytree(run, target)
    return target


def state_of(folder: Path) -> dict:
    return json.loads((folder / "scenario_state.json").read_text())


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, indent=2))
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalframe", *args], capture_output=True, timeout=120, check=False
    )


# ---------------------------------------------------------------- detection


def test_the_layouts_are_listed():
    formats = ef.list_formats().filter(pl.col("harness") == "HELM")
    assert formats.select("format", "level").rows() == [
        ("helm", "samples"), ("helm_instance_stats", "samples"), ("helm_stats", "results"),
    ]
    assert set(formats["doc"]) == {"docs/harnesses/helm.md"}


@pytest.mark.parametrize(
    ("name", "layout"),
    [
        ("scenario_state.json", "helm"),
        ("per_instance_stats.json", "helm_instance_stats"),
        ("stats.json", "helm_stats"),
        ("run_spec.json", None),
        ("scenario.json", None),
    ],
)
def test_each_file_is_recognised_from_its_content(name, layout):
    found = detect(Probe(QA / name, "json"))
    assert (found.name if found is not None else None) == layout


def test_a_run_folder_is_read_through_its_scenario_state():
    frame = ef.load(QA)
    assert frame.equals(ef.load(QA / "scenario_state.json"))
    assert frame.equals(ef.load(QA, format="helm"))
    assert frame.equals(ef.scan(QA).collect())
    assert frame["sample_id"].to_list() == IDS
    assert frame["perturbation"].to_list() == PERTURBATIONS
    assert set(frame["model"]) == {MODEL}
    assert set(frame["task"]) == {"natural_qa:mode=closedbook,data_augmentation=canonical"}
    assert set(frame["run"]) == {QA_RUN}
    assert set(frame["method"]) == {"generation"}
    assert set(frame["split"]) == {"test"}
    assert frame["train_trial_index"].to_list() == [0] * 9


def test_scenario_state_with_another_key_order_is_still_recognised(tmp_path):
    state = state_of(QA)
    path = write_json(
        tmp_path / "scenario_state.json",
        {"request_states": state["request_states"], "adapter_spec": state["adapter_spec"]},
    )
    assert ef.load(path)["prediction"].to_list() == PREDICTIONS


def test_near_misses_are_not_helm(tmp_path):
    # an object with adapter_spec but no request_states, and one whose adapter_spec has no
    # method: neither is a scenario state (both fit no layout)
    for value in (
        {"adapter_spec": {"method": "generation", "model": "m"}, "states": []},
        {"adapter_spec": {"model": "m"}, "request_states": []},
    ):
        path = write_json(tmp_path / "state.json", value)
        assert detect(Probe(path, "json")) is None
    # records with instance_id and stats that are not HELM stats are a plain table
    rows = [{"instance_id": "a", "train_trial_index": 0, "stats": [{"acc": 1}]}]
    assert ef.load(write_json(tmp_path / "mine.json", rows)).columns == list(rows[0])


# ---------------------------------------------------------------- what maps to what


def test_canonical_columns_by_hand():
    frame = ef.load(QA)
    assert frame.columns[:5] == ["sample_id", "model", "task", "prediction", "gold"]
    assert frame["prediction"].to_list() == PREDICTIONS
    assert frame["completion"].to_list()[:2] == [" Victor Hugo.", " Victor Hugo"]
    assert frame["gold"].to_list() == [
        ["Victor Hugo", "Victor-Marie Hugo"], ["Victor Hugo", "Victor-Marie Hugo"],
        ["東京", "Tokyo"],
        ["the Seine", "Seine River"],  # "the Loire" has no 'correct' tag
        ["four", "4"], ["two", "2"], ["two", "2"], ["1989"], ["le mont Blanc", "Mont-Blanc"],
    ]
    assert frame["references"][3].to_list() == ["the Seine", "Seine River", "the Loire"]
    assert frame["reference_tags"][3].to_list() == [["correct"], ["correct"], []]
    assert frame["input"][2] == "日本の首都はどこですか？"
    assert frame["prompt"][0].endswith("Question: Who wrote the novel « Les Misérables »?\nAnswer:")
    assert frame["num_train_instances"].to_list() == [2] * 9
    assert frame["prompt_truncated"].to_list() == [False] * 9
    assert json.loads(frame["perturbation_details"][1]) == {
        "name": "typos", "robustness": True, "fairness": False, "computed_on": "perturbed",
        "prob": 0.1,
    }
    assert frame["perturbation_details"][0] is None
    completions = json.loads(frame["completions"][0])
    assert completions[0]["finish_reason"] == {"reason": "stop"}
    assert "completions" not in json.loads(frame["result"][0])
    assert "prompt" not in json.loads(frame["request"][0])


def test_per_instance_stats_join_each_row_its_own_key():
    frame = ef.load(QA)
    assert frame["harness.exact_match"].to_list() == EXACT
    assert frame["harness.quasi_exact_match"].to_list() == QUASI
    assert frame["harness.f1_score"].to_list() == F1_SCORES
    # count 0 (HELM's Stat.add skips None): no value
    assert frame["harness.training_co2_cost"].to_list() == [None] * 9
    assert frame["harness.num_references"].to_list() == [2, 2, 2, 3, 2, 2, 2, 1, 2]
    assert frame["harness.finish_reason_length"].to_list() == [0, 0, 0, 0, 1, 0, 0, 0, 0]
    harness = [name for name in frame.columns if name.startswith("harness.")]
    assert len(harness) == 18


def test_per_instance_stats_alone():
    stats = ef.load(QA / "per_instance_stats.json")
    joined = ef.load(QA)
    assert stats["sample_id"].to_list() == IDS
    assert stats["perturbation"].to_list() == PERTURBATIONS
    for column in ("harness.exact_match", "harness.quasi_exact_match", "harness.f1_score"):
        assert stats[column].to_list() == joined[column].to_list()
    assert set(stats["task"]) == set(joined["task"])
    assert set(stats["model"]) == {MODEL}


def test_stats_json_is_a_results_table():
    table = ef.load(QA / "stats.json")
    assert table.height == 12
    assert set(table["model"]) == {MODEL}
    plain = table.filter(pl.col("perturbation").is_null())
    values = dict(zip(plain["metric"], plain["value"], strict=True))
    # the 7 original instances: exact 1 of 7, quasi 2 of 7, F1 summed in instance order
    assert values["exact_match"] == 1 / 7
    assert values["quasi_exact_match"] == 2 / 7
    assert values["f1_score"] == (1.0 + 0.0 + F1_SCORES[3] + 0.0 + 0.0 + 1.0 + F1_SCORES[8]) / 7
    assert values["num_instances"] == 7
    assert set(plain["count"]) == {1}  # one value per train trial
    typos = table.filter(pl.col("perturbation") == "typos")
    # exact match: perturbed copies 1 and 0 -> 0.5; their originals 0 and 0; worst min -> 0
    exact = typos.filter(pl.col("metric") == "exact_match")
    assert exact.select("computed_on", "value").rows() == [
        ("perturbed", 0.5), ("original", 0.0), ("worst", 0.0)
    ]
    robust = table.filter(pl.col("perturbation") == "robustness")
    assert robust.select("metric", "computed_on", "value").rows() == [
        ("exact_match", "worst", 1 / 7)  # per instance the worst of original and typos
    ]


def test_rows_agree_with_helm_stats_json():
    # the mean of the original rows is the stat HELM writes for the split alone
    frame = ef.score(ef.load(QA), {"f1_score": F1, "exact_match": EM})
    stats = ef.load(QA / "stats.json").filter(pl.col("perturbation").is_null())
    originals = frame.filter(pl.col("perturbation").is_null())
    for metric in ("f1_score", "exact_match"):
        expected = stats.filter(pl.col("metric") == metric)["value"].item()
        assert originals[metric].mean() == pytest.approx(expected, rel=1e-12)


def test_multiple_choice_answers_are_mapped_to_choices():
    frame = ef.load(MC)
    assert frame["completion"].to_list() == [" B", " C", " E"]
    # " B" -> "Stapes"; " C" -> "jugular foramen"; " E" maps to no choice: a missing answer
    assert frame["prediction"].to_list() == ["Stapes", "jugular foramen", None]
    assert frame["gold"].to_list() == [["Stapes"], ["sella turcica"], ["Abducens nerve (VI)"]]
    assert json.loads(frame["output_mapping"][0]) == {
        "A": "Femur", "B": "Stapes", "C": "Radius", "D": "Tibia"
    }
    assert frame["harness.exact_match"].to_list() == [1.0, 0.0, 0.0]
    assert set(frame["task"]) == {"mmlu:subject=anatomy,method=multiple_choice_joint"}


def test_the_output_mapping_pattern_picks_the_letter(tmp_path):
    folder = copy_run(tmp_path, MC)
    state = state_of(folder)
    state["adapter_spec"]["output_mapping_pattern"] = r"Answer: ([A-D])"
    state["request_states"][0]["result"]["completions"][0]["text"] = " Answer: B."
    write_json(folder / "scenario_state.json", state)
    # " Answer: B." -> group 1 "B" -> "Stapes"; " C" and " E" do not match: "" maps to nothing
    assert ef.load(folder)["prediction"].to_list() == ["Stapes", None, None]
    state["adapter_spec"]["output_mapping_pattern"] = "([A-D]"
    write_json(folder / "scenario_state.json", state)
    with pytest.raises(EvalframeError, match=r"output_mapping_pattern '\(\[A-D\]' is not a "
                       "regular expression"):
        ef.load(folder)


def test_a_folder_of_runs_stacks_them():
    frame = ef.load(FIXTURES)
    assert frame.height == 12
    assert frame.group_by("run", maintain_order=True).len().sort("run").rows() == [
        (MC_RUN, 3), (QA_RUN, 9)
    ]
    # globs of run folders and lists of them read the same runs
    assert ef.load(str(FIXTURES / "*")).height == 12
    assert ef.load(str(FIXTURES / "*" / "scenario_state.json")).height == 12
    assert ef.load([QA, MC]).height == 12


def test_a_summarised_suite_gives_its_runs_and_names_what_it_leaves_out(tmp_path):
    suite = tmp_path / "v1"
    copy_run(suite, QA)
    copy_run(suite, MC)
    # what helm-summarize writes beside the run folders (summary.json is an {id: text}
    # mapping to the eye, runs_to_run_suites.json too, groups/ holds tables)
    write_json(suite / "summary.json", {"suite": "v1", "date": "2024-06-01"})
    write_json(suite / "runs_to_run_suites.json", {QA_RUN: "v1", MC_RUN: "v1"})
    (suite / "groups").mkdir()
    write_json(suite / "groups" / "natural_qa.json", [{"title": "Accuracy", "rows": []}])
    with pytest.warns(UserWarning, match=r"read the 2 dump folder\(s\) in .*left out the 3 "
                      r"other file\(s\) and folder\(s\) beside them, first 'runs_to_run_suites"):
        frame = ef.load(suite)
    assert frame.height == 12
    assert sorted(set(frame["run"])) == [MC_RUN, QA_RUN]


def test_other_files_of_a_run_folder_are_not_read(tmp_path):
    folder = copy_run(tmp_path)
    write_json(folder / "display_predictions.json", [{"instance_id": "id1021", "stats": {}}])
    write_json(folder / "instances.json", [{"input": {"text": "x"}}])
    (folder / "notes").mkdir()
    write_json(folder / "notes" / "x.json", [{"a": 1}])
    assert ef.load(folder).equals(ef.load(QA))
    # naming the aggregates reads them
    assert ef.load(folder, format="helm_stats").height == 12
    assert ef.load(folder, format="helm_instance_stats").height == 9


def test_without_run_spec_the_folder_names_the_run(tmp_path):
    folder = copy_run(tmp_path)
    (folder / "run_spec.json").unlink()
    (folder / "per_instance_stats.json").unlink()
    frame = ef.load(folder)
    assert set(frame["run"]) == {QA_RUN}
    assert set(frame["model"]) == {MODEL}  # from the scenario state's adapter_spec
    assert not [name for name in frame.columns if name.startswith("harness.")]
    stats = ef.load(folder / "stats.json")
    assert set(stats["model"]) == {None}  # stats.json names no model


def test_no_request_states(tmp_path):
    path = write_json(
        tmp_path / "scenario_state.json",
        {"adapter_spec": {"method": "generation", "model": "m"}, "request_states": []},
    )
    frame = ef.load(path)
    assert frame.height == 0
    assert frame.schema["gold"] == pl.List(pl.String)
    assert frame.columns[:5] == ["sample_id", "model", "task", "prediction", "gold"]


def test_request_without_a_result_is_a_missing_answer(tmp_path):
    folder = copy_run(tmp_path)
    state = state_of(folder)
    del state["request_states"][0]["result"]
    write_json(folder / "scenario_state.json", state)
    frame = ef.load(folder)
    assert frame["prediction"][0] is None and frame["completion"][0] is None
    scored = ef.score(frame, {"exact_match": EM})
    assert scored["exact_match:missing"].to_list() == [True] + [False] * 8


def test_the_best_completion_is_the_one_with_the_highest_logprob(tmp_path):
    folder = copy_run(tmp_path)
    state = state_of(folder)
    first = state["request_states"][0]["result"]["completions"][0]
    state["request_states"][0]["result"]["completions"] = [
        {**first, "text": " Hugo", "logprob": -3.0},
        {**first, "text": " V. Hugo ", "logprob": -0.5},
        {**first, "text": " Victor", "logprob": -0.5},
    ]
    write_json(folder / "scenario_state.json", state)
    # HELM's f1_score reads the first prediction, f1_score@3 the best of all three
    name = {"name": "f1_score", "split": "test"}
    stats = [
        # "V. Hugo" -> {v, hugo} vs {victor, hugo} (or {victormarie, hugo}): P 1/2 R 1/2
        {"name": name, "count": 1, "sum": 1 / (0.5 / (1 / 2) + 0.5 / (1 / 2))},
        # "Hugo" -> {hugo} vs {victor, hugo}: P 1 R 1/2 -> 2/3, as "Victor" -> {victor}
        {"name": {**name, "name": "f1_score@3"}, "count": 1, "sum": 1 / (0.5 / 1 + 0.5 / (1 / 2))},
    ]
    write_json(folder / "per_instance_stats.json",
               [{"instance_id": "id1021", "train_trial_index": 0, "stats": stats}])
    frame = ef.load(folder)
    # sorted by -logprob, stable: the second completion, the third, then the first
    assert frame["prediction"][0] == "V. Hugo"
    assert frame["predictions"][0].to_list() == ["V. Hugo", "Victor", "Hugo"]
    assert frame["completion"][0] == " V. Hugo "
    assert ef.rescore(frame[:1], {"f1_score": F1}).agrees
    at_k = ef.rescore(frame[:1], {"f1_score@3": F1}, columns={"prediction": "predictions"})
    assert at_k.agrees and at_k.scored["f1_score@3"].to_list() == [2 / 3]


def test_every_other_field_is_kept(tmp_path):
    folder = copy_run(tmp_path)
    state = state_of(folder)
    first = state["request_states"][0]
    first["instance"]["extra_data"] = {"source": "wiki", "rank": 3}
    first["instance"]["input"]["messages"] = [{"role": "user", "content": "¿Quién?"}]
    first["instance"]["references"][0]["test_cases"] = ["assert f() == 1"]
    first["annotations"] = {"judge": [{"score": 1}]}
    first["request_mode"] = "original"
    write_json(folder / "scenario_state.json", state)
    frame = ef.load(folder)
    assert json.loads(frame["extra_data"][0]) == {"source": "wiki", "rank": 3}
    assert frame["extra_data"][1:].to_list() == [None] * 8
    assert json.loads(frame["input_messages"][0]) == [{"role": "user", "content": "¿Quién?"}]
    details = json.loads(frame["reference_details"][0])
    assert details[0] == {"output": {"text": "Victor Hugo"}, "tags": ["correct"],
                          "test_cases": ["assert f() == 1"]}
    assert json.loads(frame["annotations"][0]) == {"judge": [{"score": 1}]}
    assert frame["request_mode"].to_list() == ["original"] + [None] * 8


def test_text_written_as_plain_strings_by_helm_before_0_2(tmp_path):
    folder = copy_run(tmp_path)
    state = state_of(folder)
    for request_state in state["request_states"]:
        instance = request_state["instance"]
        instance["input"] = instance["input"]["text"]
        for reference in instance["references"]:
            reference["output"] = reference["output"]["text"]
    write_json(folder / "scenario_state.json", state)
    frame = ef.load(folder)
    assert frame.equals(ef.load(QA))


# ---------------------------------------------------------------- HELM's metrics, rescored


def test_rescore_reproduces_helms_values_row_by_row():
    found = ef.rescore(
        QA,
        {"f1_score": F1, "exact_match": EM, "qem": QEM},
        against={"qem": "harness.quasi_exact_match"},
    )
    assert found.agrees, found.differences
    assert found.summary["n"].to_list() == [9, 9, 9]
    assert found.scored["f1_score"].to_list() == F1_SCORES
    assert found.scored["exact_match"].to_list() == EXACT
    assert found.scored["qem"].to_list() == QUASI


def test_rescore_of_the_multiple_choice_run():
    found = ef.rescore(
        MC,
        {"exact_match": EM, "qem": QEM, "pem": PEM, "qpem": QPEM},
        against={
            "qem": "harness.quasi_exact_match",
            "pem": "harness.prefix_exact_match",
            "qpem": "harness.quasi_prefix_exact_match",
        },
    )
    assert found.agrees, found.differences
    # the unmapped answer is a missing answer, scored 0 as HELM scores it
    assert found.scored["exact_match"].to_list() == [1.0, 0.0, 0.0]
    assert found.scored["exact_match:missing"].to_list() == [False, False, True]


def test_lightevals_helm_normaliser_is_not_helms():
    # evalframe's 'helm' normaliser is lighteval's helm_normalizer: it splits on hyphens, so
    # "Mont-Blanc" -> {mont, blanc}: P 2/5 R 1 -> 4/7, where HELM's f1_score is 0.5
    found = ef.rescore(QA, {"f1_score": "word_set_f1(normalizer=helm)"})
    assert found.differences.select("sample_id", "evalframe", "harness").rows() == [
        ("id1027", 1 / (0.5 / (2 / 5) + 0.5 / 1), 0.5)
    ]


def test_helms_definitions_on_hard_cases():
    frame = pl.DataFrame(
        {
            "prediction": ["", "  ", "The", "Paris, France", "a a b", "naïve café", "U.S.A."],
            "gold": [[""], ["a"], ["an"], ["Paris"], ["a b"], ["Naïve Café!"], ["usa"]],
        }
    )
    scored = ef.score(frame, {"em": EM, "qem": QEM, "pem": PEM, "f1_score": F1})
    # em: "" and "  " are empty (0); "The" != "an"; the rest differ as text -> all 0
    assert scored["em"].to_list() == [0.0] * 7
    # qem: empty -> 0 twice; "The" and "an" both normalise to "" -> 1; "paris france" !=
    # "paris"; "a a b" -> "b" == "b"; "naïve café" == "naïve café"; "usa" == "usa"
    assert scored["qem"].to_list() == [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    # pem: "Paris, France" starts with "Paris"
    assert scored["pem"].to_list() == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    # f1: empty sets -> 0.0; {paris, france} vs {paris}: P 1/2 R 1 -> 2/3; {b} vs {b} -> 1
    assert scored["f1_score"].to_list() == [
        0.0, 0.0, 0.0, 1 / (0.5 / (1 / 2) + 0.5 / 1), 1.0, 1.0, 1.0
    ]


# ---------------------------------------------------------------- refused


def test_a_repeated_instance_key_is_refused(tmp_path):
    folder = copy_run(tmp_path)
    state = state_of(folder)
    state["request_states"].append(state["request_states"][1])  # the typos copy of id1021
    path = write_json(folder / "scenario_state.json", state)
    with pytest.raises(EvalframeError) as error:
        ef.load(folder)
    message = str(error.value)
    assert str(path) in message
    assert "request states 2 and 10 have the same instance key" in message
    assert "instance id 'id1021', train trial 0, perturbation {'computed_on': 'perturbed'" in (
        message
    )


def test_a_stat_given_twice_for_one_key_is_refused(tmp_path):
    folder = copy_run(tmp_path)
    records = json.loads((folder / "per_instance_stats.json").read_text())
    extra = {"instance_id": "id1026", "train_trial_index": 0,
             "stats": [records[7]["stats"][-1]]}  # f1_score of id1026 again
    path = write_json(folder / "per_instance_stats.json", [*records, extra])
    with pytest.raises(EvalframeError) as error:
        ef.load(folder)
    message = str(error.value)
    assert str(path) in message
    assert (
        "stat 'f1_score' of instance id 'id1026', train trial 0, perturbation none is given "
        "twice, at record 8, stat 18 and record 10, stat 1"
    ) in message


def test_records_of_one_key_from_several_metrics_are_merged(tmp_path):
    folder = copy_run(tmp_path)
    records = json.loads((folder / "per_instance_stats.json").read_text())
    toxicity = {"name": {"name": "toxic_frac", "split": "test"}, "count": 1, "sum": 0.25}
    extra = {"instance_id": "id1026", "train_trial_index": 0, "stats": [toxicity]}
    write_json(folder / "per_instance_stats.json", [*records, extra])
    frame = ef.load(folder)
    assert frame["harness.toxic_frac"].to_list() == [None] * 7 + [0.25, None]
    assert frame["harness.f1_score"].to_list() == F1_SCORES


def test_stats_of_an_unknown_instance_are_refused(tmp_path):
    folder = copy_run(tmp_path)
    records = json.loads((folder / "per_instance_stats.json").read_text())
    records[0]["instance_id"] = "id9999"
    write_json(folder / "per_instance_stats.json", records)
    with pytest.raises(EvalframeError, match=r"1 instance key\(s\) have no request state.*"
                       r"instance id 'id9999', train trial 0, perturbation none"):
        ef.load(folder)


def test_a_stat_of_another_perturbation_is_refused(tmp_path):
    folder = copy_run(tmp_path)
    records = json.loads((folder / "per_instance_stats.json").read_text())
    del records[1]["stats"][2]["name"]["perturbation"]
    path = write_json(folder / "per_instance_stats.json", records)
    with pytest.raises(EvalframeError, match=r"record 2, stat 3 \('num_prompt_tokens'\) has "
                       r"perturbation None but its record is instance id 'id1021'"):
        ef.load(path)


@pytest.mark.parametrize(
    ("file", "edit", "message"),
    [
        ("scenario_state.json", lambda v: v["request_states"].insert(1, "id1"),
         r"request state 2 is a string \('id1'\); expected an object"),
        ("per_instance_stats.json", lambda v: v.insert(2, [1, 2]),
         r"record 3 is a list \(\[1, 2\]\); expected an object"),
        ("per_instance_stats.json", lambda v: v[0]["stats"].insert(0, 7),
         r"record 1, stat 1 is a number; expected a stat object"),
        ("stats.json", lambda v: v.insert(0, 0.5),
         r"record 1 is a number \(0.5\); expected an object"),
        ("scenario_state.json", lambda v: v["request_states"][4]["instance"].pop("id"),
         r"request state 5, instance has 'id' = None; expected a string"),
        ("scenario_state.json",
         lambda v: v["request_states"][0]["result"]["completions"][0].pop("logprob"),
         r"request state 1, completion 1 is .*expected an object with 'text' \(a string\) and "
         r"'logprob' \(a number\)"),
        ("scenario_state.json",
         lambda v: v["request_states"][2].update(num_train_instances="two"),
         r"request state 3 has 'num_train_instances' = 'two'; expected an integer"),
        ("per_instance_stats.json", lambda v: v[3].pop("train_trial_index"),
         r"record 4 has no 'train_trial_index'"),
        ("stats.json", lambda v: v[1].update(count=-1),
         r"record 2 has 'count' = -1; expected an integer >= 0"),
    ],
)
def test_malformed_records_are_named(tmp_path, file, edit, message):
    folder = copy_run(tmp_path)
    value = json.loads((folder / file).read_text())
    edit(value)
    path = write_json(folder / file, value)
    fmt = {"scenario_state.json": "helm", "per_instance_stats.json": "helm_instance_stats",
           "stats.json": "helm_stats"}[file]
    with pytest.raises(EvalframeError, match=message) as error:
        ef.load(path, format=fmt)
    assert str(path) in str(error.value)


@pytest.mark.parametrize(
    ("method", "state_edit", "message"),
    [
        ("multiple_choice_separate_original", {"reference_index": 1},
         r"request state 1 has reference_index 1 \(method 'multiple_choice_separate_original'"),
        ("language_modeling", {}, r"the run's method is 'language_modeling'"),
    ],
)
def test_runs_without_one_request_state_per_instance_are_refused(
    tmp_path, method, state_edit, message
):
    folder = copy_run(tmp_path)
    state = state_of(folder)
    state["adapter_spec"]["method"] = method
    state["request_states"][0].update(state_edit)
    write_json(folder / "scenario_state.json", state)
    with pytest.raises(EvalframeError, match=message):
        ef.load(folder)


def test_a_field_named_as_a_column_is_refused(tmp_path):
    folder = copy_run(tmp_path)
    state = state_of(folder)
    state["request_states"][3]["instance"]["gold"] = "x"
    write_json(folder / "scenario_state.json", state)
    with pytest.raises(EvalframeError, match="request state 4 has a field 'gold'"):
        ef.load(folder)


# ---------------------------------------------------------------- the command line


@pytest.mark.subprocess
def test_cli_scores_a_run_folder(tmp_path):
    out = tmp_path / "scored.parquet"
    result = run_cli(
        "score", str(QA), "-m", f"f1_score={F1}", "-m", f"exact_match={EM}", "-o", str(out)
    )
    assert result.returncode == 0, result.stderr.decode()
    scored = pl.read_parquet(out)
    assert scored["sample_id"].to_list() == IDS
    assert scored["f1_score"].to_list() == F1_SCORES
    assert scored["exact_match"].to_list() == EXACT
    forced = tmp_path / "forced.parquet"
    result = run_cli("score", str(QA), "--format", "helm", "-m", f"f1_score={F1}", "-o",
                     str(forced))
    assert result.returncode == 0, result.stderr.decode()
    assert pl.read_parquet(forced)["f1_score"].to_list() == F1_SCORES


@pytest.mark.subprocess
def test_cli_rescore_of_a_run_folder():
    result = run_cli(
        "rescore", str(QA), "-m", f"f1_score={F1}", "-m", f"qem={QEM}",
        "--against", "qem=harness.quasi_exact_match",
    )
    assert result.returncode == 0, result.stderr.decode()
    text = result.stdout.decode()
    assert "harness.f1_score" in text and "harness.quasi_exact_match" in text
