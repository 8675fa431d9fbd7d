"""Judge formats: template rendering, and each published template against its source."""

from __future__ import annotations

import gzip
import json
import re

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.judge import formats as F

#: FastChat ``fastchat/llm_judge/data/judge_prompts.jsonl``, the ``pair-v2`` and ``single-v1``
#: lines as published (lm-sys/FastChat), the reference the formats' texts must equal.
FASTCHAT_PAIR_V2 = r"""{"name": "pair-v2", "type": "pairwise", "system_prompt": "Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants to the user question displayed below. You should choose the assistant that follows the user's instructions and answers the user's question better. Your evaluation should consider factors such as the helpfulness, relevance, accuracy, depth, creativity, and level of detail of their responses. Begin your evaluation by comparing the two responses and provide a short explanation. Avoid any positional biases and ensure that the order in which the responses were presented does not influence your decision. Do not allow the length of the responses to influence your evaluation. Do not favor certain names of the assistants. Be as objective as possible. After providing your explanation, output your final verdict by strictly following this format: \"[[A]]\" if assistant A is better, \"[[B]]\" if assistant B is better, and \"[[C]]\" for a tie.", "prompt_template": "[User Question]\n{question}\n\n[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]", "description": "Prompt for general questions", "category": "general", "output_format": "[[A]]"}"""  # noqa: E501
FASTCHAT_SINGLE_V1 = r"""{"name": "single-v1", "type": "single", "system_prompt": "You are a helpful assistant.", "prompt_template": "[Instruction]\nPlease act as an impartial judge and evaluate the quality of the response provided by an AI assistant to the user question displayed below. Your evaluation should consider factors such as the helpfulness, relevance, accuracy, depth, creativity, and level of detail of the response. Begin your evaluation by providing a short explanation. Be as objective as possible. After providing your explanation, you must rate the response on a scale of 1 to 10 by strictly following this format: \"[[rating]]\", for example: \"Rating: [[5]]\".\n\n[Question]\n{question}\n\n[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]", "description": "Prompt for general questions", "category": "general", "output_format": "[[rating]]"}"""  # noqa: E501
#: Arena-Hard-Auto ``config/arena-hard-v2.0.yaml`` ``prompt_template`` as published.
ARENA_HARD_PROMPT_TEMPLATE = (
    "<|User Prompt|>\n{QUESTION}\n\n<|The Start of Assistant A's Answer|>\n{ANSWER_A}\n"
    "<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\n{ANSWER_B}\n"
    "<|The End of Assistant B's Answer|>"
)


def _render(template, frame, bindings=None, literals=None, prefix=""):
    return frame.select(F.render(template, frame.schema, bindings, literals, prefix)).to_series()


def test_render_builds_every_prompt_and_never_interprets_braces():
    frame = pl.DataFrame(
        {
            "question": ["What is {x}?", "Use {{braces}}", "{answer_b}"],
            "answer_a": ["{question}", "a}", "{"],
            "answer_b": ["b", "{0}", "{answer_a!r:>3}"],
        }
    )
    template = "Q: {question}\nA: {answer_a}\nB: {answer_b} {{literal}}"
    got = _render(template, frame).to_list()
    # The expected prompts, by plain concatenation.
    expected = [
        f"Q: {q}\nA: {a}\nB: {b} {{literal}}"
        for q, a, b in frame.select("question", "answer_a", "answer_b").rows()
    ]
    assert got == expected
    assert got[0] == "Q: What is {x}?\nA: {question}\nB: b {literal}"


def test_render_is_one_polars_expression():
    expr = F.render("{rubric}: {question}", {"question": pl.String}, literals={"rubric": "R"})
    assert isinstance(expr, pl.Expr)
    assert expr.meta.output_name() == "prompt"
    # Works lazily, and over a streaming-sized frame in one pass.
    lazy = pl.LazyFrame({"question": [str(i) for i in range(100_000)]})
    out = lazy.select(expr).collect()["prompt"]
    assert out[99_999] == "R: 99999"


def test_render_bindings_literals_numbers_and_nulls():
    frame = pl.DataFrame({"q": ["x", None], "n": [1, 2], "flag": [True, False]})
    got = _render(
        "{rubric}|{question}|{n}|{flag}",
        frame,
        bindings={"question": "q"},
        literals={"rubric": "{not a field}"},
        prefix="SYSTEM\n\n",
    ).to_list()
    assert got == ["SYSTEM\n\n{not a field}|x|1|true", None]


def test_a_template_naming_a_missing_column_names_it_and_the_columns():
    frame = pl.DataFrame({"question": ["q"], "answer_a": ["a"], "answer_b": ["b"]})
    with pytest.raises(EvalframeError) as info:
        F.render("{question} {reference}", frame.schema)
    message = str(info.value)
    assert "{reference}" in message
    assert "['question', 'answer_a', 'answer_b']" in message
    with pytest.raises(EvalframeError, match=r"mapped to column 'nope'"):
        F.render("{question}", frame.schema, {"question": "nope"})


@pytest.mark.parametrize(
    "template",
    ["{}", "{0}", "{a.b}", "{a[0]}", "{a!r}", "{a:>10}", "{ a }", "{", "}", "x {a"],
)
def test_bad_templates_are_errors(template):
    with pytest.raises(EvalframeError):
        F.render(template, {"a": pl.String})


def test_a_list_column_is_not_prompt_text():
    with pytest.raises(EvalframeError, match=r"List\(String\)"):
        F.render("{gold}", {"gold": pl.List(pl.String)})


def test_mtbench_format_is_fastchat_pair_v2():
    line = json.loads(FASTCHAT_PAIR_V2)
    fmt = F.FORMATS["mtbench"]
    assert fmt.system == line["system_prompt"]
    assert fmt.template == line["prompt_template"]
    single = json.loads(FASTCHAT_SINGLE_V1)
    grade = F.GRADE_FORMATS["mtbench"]
    assert grade.system == single["system_prompt"]
    assert grade.template == single["prompt_template"]


def test_arena_hard_format_is_arena_hard_auto():
    fields = {"QUESTION": "question", "ANSWER_A": "answer_a", "ANSWER_B": "answer_b"}
    published = ARENA_HARD_PROMPT_TEMPLATE
    for theirs, ours in fields.items():
        published = published.replace("{" + theirs + "}", "{" + ours + "}")
    fmt = F.FORMATS["arena_hard"]
    assert fmt.template == published
    assert fmt.system.startswith("Please act as an impartial judge")
    for label in ("[[A>>B]]", "[[A>B]]", "[[A=B]]", "[[B>A]]", "[[B>>A]]"):
        assert label in fmt.system
    assert fmt.strength is not None


def _jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _mtbench_questions(shared_data):
    path = shared_data / "mtbench-fastchat-fork" / "question.jsonl.gz"
    return {q["question_id"]: q for q in _jsonl(path)}


def test_mtbench_pair_template_reproduces_fastchat_prompts(shared_data):
    """Both of FastChat's stored prompts, game 1 and the swapped game 2, rendered again."""
    questions = _mtbench_questions(shared_data)
    path = shared_data / "mtbench-fastchat-fork" / "gpt-4_pair.jsonl.gz"
    records = _jsonl(path)
    # The answers, cut out of game 1's prompt at FastChat's literal markers.
    cut = re.compile(
        r"\A\[User Question\]\n(?P<q>.*)\n\n\[The Start of Assistant A's Answer\]\n(?P<a>.*)"
        r"\n\[The End of Assistant A's Answer\]\n\n\[The Start of Assistant B's Answer\]\n"
        r"(?P<b>.*)\n\[The End of Assistant B's Answer\]\Z",
        re.S,
    )
    rows = []
    for record in records:
        if record["judge"][1] != "pair-v2":
            continue
        found = cut.match(record["g1_user_prompt"])
        assert found is not None
        assert found["q"] == questions[record["question_id"]]["turns"][0]
        rows.append((found["q"], found["a"], found["b"], record["g1_user_prompt"],
                     record["g2_user_prompt"]))
    assert len(rows) == 50
    frame = pl.DataFrame(rows, schema=["question", "answer_a", "answer_b", "g1", "g2"],
                         orient="row")
    template = F.FORMATS["mtbench"].template
    swapped = {"answer_a": "answer_b", "answer_b": "answer_a"}
    assert _render(template, frame).to_list() == frame["g1"].to_list()
    assert _render(template, frame, swapped).to_list() == frame["g2"].to_list()


def test_mtbench_single_template_reproduces_fastchat_prompts(shared_data):
    questions = _mtbench_questions(shared_data)
    path = shared_data / "mtbench-fastchat-fork" / "gpt-4_single.jsonl.gz"
    records = _jsonl(path)
    cut = re.compile(
        r"\n\[Question\]\n(?P<q>.*)\n\n\[The Start of Assistant's Answer\]\n(?P<a>.*)"
        r"\n\[The End of Assistant's Answer\]\Z",
        re.S,
    )
    rows = []
    for record in records:
        if record["judge"][1] != "single-v1":
            continue
        found = cut.search(record["user_prompt"])
        assert found is not None
        assert found["q"] == questions[record["question_id"]]["turns"][0]
        rows.append((found["q"], found["a"], record["user_prompt"]))
    assert len(rows) == 50
    frame = pl.DataFrame(rows, schema=["question", "answer", "prompt"], orient="row")
    got = _render(F.GRADE_FORMATS["mtbench"].template, frame).to_list()
    assert got == frame["prompt"].to_list()


def test_inspect_formats_are_inspect_templates():
    model = pytest.importorskip("inspect_ai.scorer._model")
    assert F.INSPECT_QA_TEMPLATE == model.DEFAULT_MODEL_GRADED_QA_TEMPLATE
    assert F.INSPECT_FACT_TEMPLATE == model.DEFAULT_MODEL_GRADED_FACT_TEMPLATE
    for partial in (False, True):
        assert F.inspect_instructions(partial) == model.default_instructions(partial)
    assert F.GRADE_FORMATS["inspect_qa_partial"].literals["instructions"] == (
        model.default_instructions(True)
    )


def test_default_template_asks_for_one_word():
    fmt = F.FORMATS["default"]
    assert F.template_fields(fmt.template) == ["rubric", "question", "answer_a", "answer_b"]
    assert "exactly one word: FIRST" in fmt.template
    assert fmt.rubric == F.DEFAULT_RUBRIC


def test_custom_format_reads_its_pattern():
    fmt = F.custom_format(
        "Q: {question}\nA: {answer_a}\nB: {answer_b}",
        r"(?i)winner:\s*(A|B|tie)",
        {"A": "first", "B": "second", "tie": "tie"},
    )
    replies = pl.DataFrame({"r": ["Winner: B", "winner: tie", "Winner: A", "Winner: C"]})
    assert replies.select(fmt.parse(pl.col("r"))).to_series().to_list() == [
        "second", "tie", "first", "error"
    ]
    other = F.custom_format("{answer_a}{answer_b}", r"(?i)winner:\s*(A|B)", {"A": "first",
                            "B": "second"})
    assert other.fingerprint() != fmt.fingerprint()
    with pytest.raises(EvalframeError, match="capture group"):
        F.custom_format("{answer_a}{answer_b}", r"(A)|(B)", {"A": "first"})
    with pytest.raises(EvalframeError, match="not a valid format string"):
        F.custom_format("{answer_a", r"(A)", {"A": "first"})


def test_resolving_and_listing_formats():
    assert F.resolve_format("arena_hard") is F.FORMATS["arena_hard"]
    with pytest.raises(EvalframeError, match=r"\['arena_hard', 'default', 'mtbench'\]"):
        F.resolve_format("alpaca")
    with pytest.raises(EvalframeError, match="unknown grading format"):
        F.resolve_grade_format("default")
    table = F.list_judge_formats()
    assert table.columns == ["kind", "name", "description", "reference"]
    assert table.filter(kind="grade")["name"].to_list() == list(F.GRADE_FORMATS)
    assert table["reference"].null_count() == 0
