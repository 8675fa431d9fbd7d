"""The pairwise harness with plain Python judges that read the prompt."""

from __future__ import annotations

import re
import threading

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.judge.formats import DEFAULT_RUBRIC, custom_format
from evalframe.judge.pairwise import PAIRWISE_COLUMNS, pairwise

#: The three-example set: only A contains 42; only B; both (and a fourth set: neither).
THREE = pl.DataFrame(
    {
        "sample_id": [1, 2, 3],
        "question": ["What is 6 x 7?", "What is 6 x 7?", "Say a number"],
        "answer_a": ["It is 42.", "It is 41.", "42 or 42"],
        "answer_b": ["It is 40.", "Surely 42", "I say 42"],
    }
)

_FIRST = re.compile(
    r"\[The Start of the FIRST Answer\]\n(.*)\n\[The End of the FIRST Answer\]", re.S
)
_SECOND = re.compile(
    r"\[The Start of the SECOND Answer\]\n(.*)\n\[The End of the SECOND Answer\]", re.S
)


def _shown(prompt: str) -> tuple[str, str]:
    """The answers the default template shows first and second."""
    return _FIRST.search(prompt).group(1), _SECOND.search(prompt).group(1)


def prefers_42(prompt: str) -> str:
    """Whichever answer contains "42"; a tie when both or neither do."""
    first, second = _shown(prompt)
    if ("42" in first) == ("42" in second):
        return "TIE"
    return "FIRST" if "42" in first else "SECOND"


def always_first(prompt: str) -> str:
    return "FIRST"


def _win_rate_a(outcomes: list[str]) -> float | None:
    """The issue's formula: (wins_a + 0.5 * (ties + inconsistent)) / n_valid."""
    counts = {o: outcomes.count(o) for o in ("A", "B", "tie", "inconsistent", "error")}
    valid = len(outcomes) - counts["error"]
    if valid == 0:
        return None
    return (counts["A"] + 0.5 * (counts["tie"] + counts["inconsistent"])) / valid


def test_a_judge_preferring_42_gives_a_b_and_tie():
    judged = pairwise(THREE, prefers_42, quiet=True)
    assert judged.select("verdict_ab", "verdict_ba", "outcome").rows() == [
        ("A", "A", "A"),
        ("B", "B", "B"),
        ("tie", "tie", "tie"),
    ]
    assert _win_rate_a(judged["outcome"].to_list()) == 0.5
    neither = THREE.with_columns(answer_a=pl.lit("no"), answer_b=pl.lit("nope"))
    assert pairwise(neither, prefers_42, quiet=True)["outcome"].to_list() == ["tie"] * 3


def test_a_judge_that_always_answers_first_is_inconsistent_everywhere():
    judged = pairwise(THREE, always_first, quiet=True)
    assert judged["verdict_ab"].to_list() == ["A"] * 3
    assert judged["verdict_ba"].to_list() == ["B"] * 3
    assert judged["outcome"].to_list() == ["inconsistent"] * 3
    assert _win_rate_a(judged["outcome"].to_list()) == 0.5


def test_result_frame_keeps_input_and_adds_the_columns():
    judged = pairwise(THREE.lazy(), prefers_42, quiet=True)
    added = [c for c in PAIRWISE_COLUMNS if not c.startswith("strength")]
    assert judged.columns == THREE.columns + added
    assert judged.select(THREE.columns).equals(THREE)
    assert judged["judgment_ab"].to_list() == ["FIRST", "SECOND", "TIE"]
    assert judged["judgment_ba"].to_list() == ["SECOND", "FIRST", "TIE"]
    assert judged["judge_error"].null_count() == 3
    assert judged["judge_model"].unique().to_list() == [f"{__name__}.prefers_42"]
    assert judged["judge_format"].unique().to_list() == ["default"]
    signature = judged["judge_signature"][0]
    assert signature.startswith(f"judge:{__name__}.prefers_42|params:-|format:default|prompt:")
    other = pairwise(THREE, prefers_42, rubric="Be harsh.", quiet=True)["judge_signature"][0]
    assert other != signature


def test_the_judge_sees_both_orders_and_braces_verbatim():
    seen: list[str] = []

    def judge(prompt: str) -> str:
        seen.append(prompt)
        return "TIE"

    frame = pl.DataFrame({"question": ["Is {x} {{y}}?"], "answer_a": ["{answer_b}"],
                          "answer_b": ["}{"]})
    pairwise(frame, judge, quiet=True)
    assert len(seen) == 2
    shown = sorted(_shown(p) for p in seen)
    assert shown == sorted([("{answer_b}", "}{"), ("}{", "{answer_b}")])
    assert all(p.startswith(DEFAULT_RUBRIC + "\n\n[Question]\nIs {x} {{y}}?\n") for p in seen)


def test_each_distinct_prompt_is_asked_once_and_the_cache_is_reused(tmp_path):
    calls: list[str] = []
    lock = threading.Lock()

    def judge(prompt: str) -> str:
        with lock:
            calls.append(prompt)
        return prefers_42(prompt)

    frame = pl.concat([THREE, THREE, THREE])
    cache = tmp_path / "judgments.sqlite"
    first = pairwise(frame, judge, cache=cache, quiet=True)
    assert len(calls) == len(set(calls)) == 6  # 3 distinct rows x 2 orders
    assert first["outcome"].to_list() == ["A", "B", "tie"] * 3
    again = pairwise(frame, judge, cache=str(cache), quiet=True)
    assert len(calls) == 6  # everything cached: no call at all
    assert again.equals(first)


def test_null_inputs_failed_calls_and_unparseable_replies_are_kept_errors():
    calls: list[str] = []

    def judge(prompt: str) -> str:
        calls.append(prompt)
        first, _ = _shown(prompt)
        if "boom" in first:
            raise RuntimeError("server on fire")
        if "mumble" in first:
            return "**first**"
        return "FIRST"

    frame = pl.DataFrame(
        {
            "question": ["q", None, "q", "q", "q"],
            "answer_a": ["a", "a", "boom", "mumble", None],
            "answer_b": ["b", "b", "b", "b", None],
        }
    )
    judged = pairwise(frame, judge, quiet=True)
    assert judged.height == 5
    assert judged["outcome"].to_list() == ["inconsistent", "error", "error", "error", "error"]
    reasons = judged["judge_error"].to_list()
    assert reasons[0] is None
    assert reasons[1] == "not asked: null question"
    assert reasons[2] == "judge failed (A first): RuntimeError: server on fire"
    assert reasons[3] == "unparseable reply (A first)"
    assert reasons[4] == "not asked: null answer_a, answer_b"
    assert judged["judgment_ab"].to_list()[3] == "**first**"  # kept with the raw text
    # The swapped calls showed "b" first and were answered FIRST: B won them.
    assert judged["verdict_ba"].to_list()[2:4] == ["B", "B"]
    assert not any("None" in p for p in calls)
    assert len(calls) == 6  # rows 0, 2, 3 twice; the null rows never


def test_async_judges_work():
    async def judge(prompt: str) -> str:
        return prefers_42(prompt)

    assert pairwise(THREE, judge, quiet=True)["outcome"].to_list() == ["A", "B", "tie"]


def test_columns_map_roles_and_extra_fields():
    frame = THREE.rename({"question": "prompt", "answer_a": "base", "answer_b": "model"})
    frame = frame.with_columns(ref=pl.lit("42"))
    template = "Reference: {ref}\nQ: {question}\n1) {answer_a}\n2) {answer_b}"

    def judge(prompt: str) -> str:
        one = prompt.split("1) ")[1].split("\n2) ")[0]
        two = prompt.split("\n2) ")[1]
        ref = prompt.split("Reference: ")[1].split("\n")[0]
        return "TIE" if (ref in one) == (ref in two) else ("FIRST" if ref in one else "SECOND")

    columns = {"question": "prompt", "answer_a": "base", "answer_b": "model"}
    judged = pairwise(frame, judge, template=template, columns=columns, quiet=True)
    assert judged["outcome"].to_list() == ["A", "B", "tie"]


def test_mtbench_format_with_a_fastchat_style_judge():
    def judge(prompt: str) -> str:
        a = prompt.split("[The Start of Assistant A's Answer]\n")[1].split("\n[The End")[0]
        b = prompt.split("[The Start of Assistant B's Answer]\n")[1].split("\n[The End")[0]
        assert prompt.startswith("Please act as an impartial judge")
        verdict = "[[C]]" if ("42" in a) == ("42" in b) else "[[A]]" if "42" in a else "[[B]]"
        return f"Explanation... Final verdict: {verdict}"

    judged = pairwise(THREE, judge, format="mtbench", quiet=True)
    assert judged["outcome"].to_list() == ["A", "B", "tie"]
    assert judged["judge_format"].unique().to_list() == ["mtbench"]


def test_arena_hard_format_keeps_strengths():
    def judge(prompt: str) -> str:
        a = prompt.split("<|The Start of Assistant A's Answer|>\n")[1].split("\n<|The End")[0]
        return "My final verdict: [[A>>B]]" if "42" in a else "[[B>A]]"

    judged = pairwise(THREE.head(1), judge, format="arena_hard", quiet=True)
    # A first: A contains 42 -> A>>B (A, 3). B first: B lacks 42 -> B>A, the second shown
    # (answer A) slightly better -> (A, 1).
    assert judged.select("verdict_ab", "strength_ab", "verdict_ba", "strength_ba",
                         "outcome").row(0) == ("A", 3, "A", 1, "A")


def test_custom_format():
    fmt = custom_format(
        "Q: {question}\nX: {answer_a}\nY: {answer_b}\nSay 'winner: X', 'winner: Y' or 'draw'.",
        r"(?P<first>winner: X)|(?P<second>winner: Y)|(?P<tie>draw)",
    )

    def judge(prompt: str) -> str:
        x = prompt.split("\nX: ")[1].split("\nY: ")[0]
        y = prompt.split("\nY: ")[1].split("\nSay")[0]
        return "draw" if ("42" in x) == ("42" in y) else ("winner: X" if "42" in x else "winner: Y")

    assert pairwise(THREE, judge, format=fmt, quiet=True)["outcome"].to_list() == ["A", "B", "tie"]


def test_template_and_rubric_errors():
    with pytest.raises(EvalframeError, match=r"\{reference\}.*columns \['sample_id'"):
        pairwise(THREE, prefers_42, template="{reference} {answer_a} {answer_b}", quiet=True)
    with pytest.raises(EvalframeError, match="must show both answers"):
        pairwise(THREE, prefers_42, template="{question} {answer_a}", quiet=True)
    with pytest.raises(EvalframeError, match="has no \\{rubric\\} field"):
        pairwise(THREE, prefers_42, format="mtbench", rubric="Be fair.", quiet=True)
    with pytest.raises(EvalframeError, match="does not use"):
        pairwise(THREE, prefers_42, columns={"answer": "x"}, quiet=True)
    with pytest.raises(EvalframeError, match="DataFrame or LazyFrame"):
        pairwise(THREE.to_dicts(), prefers_42, quiet=True)


def test_empty_frames_and_replaced_columns():
    empty = THREE.clear()
    judged = pairwise(empty, prefers_42, quiet=True)
    assert judged.height == 0
    assert judged.schema["outcome"] == pl.String
    stale = THREE.with_columns(outcome=pl.lit("stale"), verdict_ab=pl.lit("B"))
    judged = pairwise(stale, prefers_42, quiet=True)
    assert judged.columns.count("outcome") == 1
    assert judged["outcome"].to_list() == ["A", "B", "tie"]
    assert judged["verdict_ab"].to_list() == ["A", "B", "tie"]


def test_a_reply_polars_cannot_hold_is_kept_with_its_lone_surrogate_replaced(tmp_path):
    # JSON lets a server escape a lone surrogate ("\\ud800"); Polars holds UTF-8 only
    def odd(prompt: str) -> str:
        return prefers_42(prompt) + " \ud800"

    cache = tmp_path / "c.sqlite"
    judged = pairwise(THREE, odd, cache=cache, quiet=True)
    # by hand: prefers_42's verdicts (A, B, tie), the first word read as before
    assert judged["outcome"].to_list() == ["A", "B", "tie"]
    assert judged["judgment_ab"].to_list() == ["FIRST \ufffd", "SECOND \ufffd", "TIE \ufffd"]
    again = pairwise(THREE, odd, cache=cache, quiet=True)
    assert again["judgment_ba"].to_list() == judged["judgment_ba"].to_list()
