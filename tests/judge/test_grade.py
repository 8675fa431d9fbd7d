"""Pointwise grading, and re-reading collected grades, against FastChat and Inspect."""

from __future__ import annotations

import asyncio
import gzip
import json

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.judge.grade import GRADE_COLUMNS, grade, regrade

FRAME = pl.DataFrame(
    {
        "question": ["What is 6 x 7?", "What is 6 x 7?", "Name a prime", None],
        "answer": ["42", "It is 41", "9", "42"],
    }
)


def _answer(prompt: str) -> str:
    return prompt.split("[The Start of Assistant's Answer]\n")[1].split("\n[The End")[0]


def mtbench_judge(prompt: str) -> str:
    answer = _answer(prompt)
    if answer == "42":
        return "The answer is right.\n\nRating: [[10]]"
    if answer == "9":
        return "Nine is not prime; I cannot rate this."
    return "Wrong. Rating: [2]"


def test_mtbench_grades_and_keeps_errors():
    graded = grade(FRAME, mtbench_judge, quiet=True)
    assert graded.columns == FRAME.columns + list(GRADE_COLUMNS)
    assert graded.select("grade", "score", "judge_error").rows() == [
        ("10", 10.0, None),
        ("2", 2.0, None),  # FastChat's backup pattern [n]
        ("error", None, "no grade in the reply"),
        ("error", None, "not asked: null question"),
    ]
    assert graded["judgment"][2] == "Nine is not prime; I cannot rate this."
    assert graded["judgment"][3] is None
    assert graded["judge_format"].unique().to_list() == ["mtbench"]
    assert graded["judge_model"][0] == f"{__name__}.mtbench_judge"
    # The prompt FastChat's single-v1 judge gets: the system text, then the template.
    seen = []
    grade(FRAME.head(1), lambda p: seen.append(p) or "[[5]]", quiet=True)
    assert seen[0].startswith("You are a helpful assistant.\n\n[Instruction]\nPlease act as")
    assert seen[0].endswith("[Question]\nWhat is 6 x 7?\n\n[The Start of Assistant's Answer]\n42"
                            "\n[The End of Assistant's Answer]")


def test_scale_bounds_make_out_of_range_grades_errors():
    def judge(prompt: str) -> str:
        return {"42": "Rating: [[11]]", "It is 41": "[[0.5]]", "9": "[[3]]"}[_answer(prompt)]

    unbounded = grade(FRAME.head(3), judge, quiet=True)
    assert unbounded["score"].to_list() == [11.0, 0.5, 3.0]  # FastChat keeps any number
    bounded = grade(FRAME.head(3), judge, scale=(1, 10), quiet=True)
    assert bounded.select("grade", "score", "judge_error").rows() == [
        ("error", None, "11 is outside the scale [1, 10]"),
        ("error", None, "0.5 is outside the scale [1, 10]"),
        ("3", 3.0, None),
    ]
    assert bounded["judge_signature"][0] != unbounded["judge_signature"][0]


def test_numeric_format_writes_its_scale_into_the_prompt():
    seen: list[str] = []

    def judge(prompt: str) -> str:
        seen.append(prompt)
        return "I'd say 4" if "42" in prompt else "nine"

    frame = pl.DataFrame({"question": ["q", "q"], "prediction": ["42", "x"]})
    graded = grade(frame, judge, format="numeric", scale=(0, 5), rubric="Rate it.", quiet=True)
    assert graded.select("grade", "score").rows() == [("4", 4.0), ("error", None)]
    assert seen[0].startswith("Rate it.\n\n[Question]\nq\n")
    assert seen[0].endswith("Reply with one number from 0 to 5 and nothing else.")


def test_grading_errors():
    with pytest.raises(EvalframeError, match="takes no scale"):
        grade(FRAME, mtbench_judge, format="inspect_qa", scale=(0, 1), quiet=True)
    with pytest.raises(EvalframeError, match="low < high"):
        grade(FRAME, mtbench_judge, scale=(10, 1), quiet=True)
    with pytest.raises(EvalframeError, match="two finite numbers"):
        grade(FRAME, mtbench_judge, scale=(1, float("inf")), quiet=True)
    with pytest.raises(EvalframeError, match="two finite numbers"):
        grade(FRAME, mtbench_judge, scale=(float("nan"), 10), quiet=True)
    with pytest.raises(EvalframeError, match="has no \\{rubric\\} field"):
        grade(FRAME, mtbench_judge, rubric="Be fair", quiet=True)
    with pytest.raises(EvalframeError, match=r"\{criterion\}.*columns \['question', 'answer'\]"):
        grade(FRAME, mtbench_judge, format="inspect_qa", quiet=True)
    with pytest.raises(EvalframeError, match="no column 'reply'"):
        regrade(FRAME, "reply")


def test_cached_grades_make_no_second_call(tmp_path):
    calls: list[str] = []

    def judge(prompt: str) -> str:
        calls.append(prompt)
        return mtbench_judge(prompt)

    frame = pl.concat([FRAME, FRAME])
    first = grade(frame, judge, cache=tmp_path / "cache.sqlite", quiet=True)
    assert len(calls) == 3  # three distinct prompts; the null row is never asked
    again = grade(frame, judge, cache=tmp_path / "cache.sqlite", quiet=True)
    assert len(calls) == 3
    assert again.equals(first)


def test_regrade_mtbench_single_file_gives_fastchat_scores(shared_data):
    path = shared_data / "mtbench-fastchat-fork" / "gpt-4_single.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    assert len(records) == 160
    regraded = regrade(ef.load(path))
    assert regraded.height == 160
    expected = [None if r["score"] == -1 else float(r["score"]) for r in records]
    assert regraded["score"].to_list() == expected
    assert (regraded["grade"] == "error").sum() == sum(r["score"] == -1 for r in records)
    lazy = regrade(ef.load(path).lazy())
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["score"].to_list() == expected


def test_regrade_null_and_unparseable_replies():
    dump = pl.DataFrame({"judgment": ["Rating: [[8]]", "Rating: 8/10", None]})
    assert regrade(dump).select("grade", "score", "judge_error", "judge_format").rows() == [
        ("8", 8.0, None, "mtbench"),
        ("error", None, "no grade in the reply", "mtbench"),
        ("error", None, "no reply", "mtbench"),
    ]
    letters = pl.DataFrame({"judgment": ["GRADE: P", "GRADE: C", "GRADE: X"]})
    got = regrade(letters, format="inspect_qa_partial").select("grade", "score").rows()
    assert got == [("P", 0.5), ("C", 1.0), ("error", None)]


# ---------------------------------------------------------------- Inspect, end to end

REPLIES = [
    "The submission says four.\nGRADE: C",
    "Partly right.\n\nGRADE: P",
    "GRADE: C ... on reflection, GRADE: I",
    "grade: incorrect",
    "I cannot decide.",
    "GRADE: CI",
]


def _inspect_scores(partial: bool, fact: bool) -> list[tuple[str, object]]:
    """Inspect's own scorer on REPLIES (its mock model answers them): prompt and value."""
    model_module = pytest.importorskip("inspect_ai.model")
    scorer_module = pytest.importorskip("inspect_ai.scorer")
    solver_module = pytest.importorskip("inspect_ai.solver")

    def output(text: str):
        out = model_module.ModelOutput.from_content("mockllm/model", text)
        # Usage given, so the mock model counts no tokens (that would need a download).
        out.usage = model_module.ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    grader = model_module.get_model(
        "mockllm/model", custom_outputs=[output(text) for text in REPLIES]
    )
    make = scorer_module.model_graded_fact if fact else scorer_module.model_graded_qa
    scorer = make(model=grader, partial_credit=partial)

    async def run() -> list[tuple[str, object]]:
        results = []
        for index in range(len(REPLIES)):
            question = f"Question {index}: what is 2+2? {{x}}"
            state = solver_module.TaskState(
                model="mockllm/model",
                sample_id=index,
                epoch=1,
                input=question,
                messages=[model_module.ChatMessageUser(content=question)],
                output=output(f"four {{y}} #{index}"),
            )
            score = await scorer(state, scorer_module.Target("4"))
            results.append((score.metadata["grading"][0].text, score.value))
        return results

    return asyncio.run(run())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(("partial", "fact"), [(False, False), (True, False), (True, True)])
def test_inspect_formats_match_inspect_scorers(partial, fact):
    expected = _inspect_scores(partial, fact)
    to_float = pytest.importorskip("inspect_ai.scorer").value_to_float()
    frame = pl.DataFrame(
        {
            "question": [f"Question {i}: what is 2+2? {{x}}" for i in range(len(REPLIES))],
            "prediction": [f"four {{y}} #{i}" for i in range(len(REPLIES))],
            "gold": ["4"] * len(REPLIES),
        }
    )
    seen: dict[str, str] = {}

    def judge(prompt: str) -> str:
        index = int(prompt.split("Question ")[1].split(":")[0])
        seen[prompt] = REPLIES[index]
        return REPLIES[index]

    name = ("inspect_fact" if fact else "inspect_qa") + ("_partial" if partial else "")
    graded = grade(frame, judge, format=name, quiet=True)
    prompts = [prompt for prompt, _ in expected]
    assert sorted(seen) == sorted(prompts)  # the very prompts Inspect sends its grader
    for row, (_, value) in zip(graded.iter_rows(named=True), expected, strict=True):
        if isinstance(value, float) and value != value:  # Inspect's unscored: NaN
            assert row["grade"] == "error"
            assert row["score"] is None
        else:
            assert row["grade"] == value
            assert row["score"] == to_float(value)
