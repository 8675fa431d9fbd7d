"""evalframe.extract.lm_eval and lm_eval_pipelines: lm-eval's filters, by hand-computed cases.

The comparison with lm-eval's own filter classes is in
``tests/conformance/test_lm_eval_filters_conformance.py``; here every expected value is
worked out by hand from lm-eval 0.4.13's rules (written next to each case).
"""

from __future__ import annotations

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.extract import lm_eval as L
from evalframe.extract import lm_eval_pipelines as P
from evalframe.extract.table import EXTRACTORS, answer_of, list_extractors


def run(extractor, texts: list[str | None]) -> list[tuple]:
    frame = pl.DataFrame({"r": pl.Series(texts, dtype=pl.String)})
    return frame.select(extractor(pl.col("r")).alias("x")).unnest("x").rows()


def extracted(extractor, texts):
    return [row[0] for row in run(extractor, texts)]


# ---------------------------------------------------------------- regex


def test_findall_item_rules():
    # No group: the whole match, stripped.
    assert extracted(L.regex(r" ?\d+ "), ["a 12 b"]) == ["12"]
    # One group: that group; "" where it took no part ("b" matched the second branch).
    assert run(L.regex(r"(a)|b"), ["b", "a"]) == [("", "regex"), ("a", "regex")]
    # Several groups: the first non-empty one.
    assert extracted(L.regex(r"(x?)(y)"), ["y"]) == ["y"]
    # Every group empty: fallback.strip() (no match at all: the fallback as it is).
    assert run(L.regex(r"(x?)(y?)z", fallback=" F "), ["z", "q"]) == [
        ("F", "none"), (" F ", "none"),
    ]  # fmt: skip


def test_group_select_counts_matches_from_either_end():
    texts = ["1 22 333", "4"]
    assert extracted(L.regex(r"(\d+)", group_select=1), texts[:1]) == ["22"]
    assert extracted(L.regex(r"(\d+)", group_select=-1), texts) == ["333", "4"]
    assert extracted(L.regex(r"(\d+)", group_select=-3), texts[:1]) == ["1"]
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="1 response"):
        extracted(L.regex(r"(\d+)", group_select=-2), texts)  # "4" has one match


def test_null_response_reads_as_empty_string():
    # lm-eval: a response that is not a string is "" -> no match -> the fallback; rule null.
    assert run(EXTRACTORS["gsm8k_strict"], [None]) == [("[invalid]", None)]
    # A pattern that matches "" gives "" for it.
    assert run(L.regex(r"(a*)"), [None, ""]) == [("", None), ("", "regex")]


def test_strip_is_pythons():
    # str.strip() removes \x1c-\x1f and U+3000 (Rust's trim does not remove \x1c).
    assert extracted(L.regex(r"#(.*)#"), ["#\x1c 7\u3000\x1f#"]) == ["7"]


def test_rust_and_python_routes():
    assert L._plan(r"#### (\-?[0-9\.\,]+)").rust is not None
    assert L._plan(r"(?<=a)b").rust is None  # lookbehind
    assert L._plan(r"\bx").rust is None  # Python's \b
    assert L._plan(r"x$").rust is None  # Python's $ also matches before a final "\n"
    empty = L._plan(r"(a*)")
    assert empty.rust is not None and empty.can_be_empty
    # "(a*)" on "baa": findall gives "", "aa", "" (the empty match after "aa" counts).
    assert extracted(L.regex(r"(a*)", group_select=-1), ["baa"]) == [""]
    assert extracted(L.regex(r"(a*)", group_select=1), ["baa"]) == ["aa"]
    assert extracted(L.regex(r"(a*)", group_select=2), ["baa"]) == [""]


def test_anchors_in_a_later_match():
    # "(^a)|(a)" on "aa": match 1 is "a" by group 1, match 2 is "a" by group 2 -> findall
    # [("a", ""), ("", "a")]; either way the item is "a". "^" kept its meaning: text start.
    assert extracted(L.regex(r"(^a)|(b)", group_select=-1), ["ab", "ba"]) == ["b", "b"]
    assert extracted(L.regex(r"^(a)", group_select=-1), ["aa", "ba"]) == ["a", "[invalid]"]


def test_ignore_case_is_the_inline_flag():
    extractor = L.regex(r"answer is (\w)", ignore_case=True)
    assert extractor.name.startswith("regex(pattern='(?i)answer is")
    assert extracted(extractor, ["The ANSWER IS b", "none"]) == ["b", "[invalid]"]


def test_regex_name_and_bad_options():
    assert L.regex().name == (
        "regex(pattern='#### (\\\\-?[0-9\\\\.\\\\,]+)',group_select=0,fallback='[invalid]')"
    )
    with pytest.raises(EvalframeError, match="not a valid Python regex"):
        L.regex("(")
    with pytest.raises(EvalframeError, match="group_select must be an integer"):
        L.regex("a", group_select=1.0)
    with pytest.raises(EvalframeError, match="must be strings"):
        L.regex("a", fallback=None)


def test_row_order_lazy_and_chunks():
    texts = [f"value {i}, then {i * 7}." if i % 3 else None for i in range(200)]
    eager = pl.DataFrame({"r": texts}).select(EXTRACTORS["gsm8k_flexible"]("r"))
    lazy = pl.LazyFrame({"r": texts}).select(EXTRACTORS["gsm8k_flexible"]("r")).collect()
    chunked = pl.concat([pl.DataFrame({"r": texts[:77]}), pl.DataFrame({"r": texts[77:]})],
                        rechunk=False).select(EXTRACTORS["gsm8k_flexible"]("r"))  # fmt: skip
    assert eager.equals(lazy) and eager.equals(chunked)
    answers = eager.to_series().struct.field("extracted").to_list()
    # i = 1: "value 1, then 7." -> the runs "1," and "7." -> the last: "7."
    assert answers[1] == "7." and answers[0] == "[invalid]"


# ---------------------------------------------------------------- shipped extractors


@pytest.mark.parametrize(
    ("name", "text", "answer"),
    [
        ("gsm8k_strict", "so 5 + 7 = 12\n#### 1,200.", "1,200."),
        ("gsm8k_strict", "#### $12", "[invalid]"),  # "$" is not in [0-9.,-]
        ("gsm8k_flexible", "It costs $1,250. Done", "$1,250."),
        ("gsm8k_flexible", "from -3 to 4", "4"),  # a lone digit: the second branch
        ("gsm8k_flexible", "wait... so", "..."),  # "..." is a run of two or more
        ("gsm8k_cot_strict", "The answer is 42!", "42"),  # the final "." is any character
        ("gsm8k_cot_strict", "The answer is 42", "4"),  # "." takes the last digit
        ("gsm8k_cot_llama_strict", "The final answer is 3 and The final answer is $4", "$4"),
        ("mmlu_flan_cot_zeroshot_strict", "so the answer is (B).\nThe answer is (C).", "(B)"),
        ("mmlu_flan_cot_zeroshot_strict", "answer is X", "[invalid]"),  # nothing before "X"
        ("mmlu_flan_cot_fewshot", "answer is X", ""),  # one group: "" is kept
        ("bbh_cot_zeroshot_strict", "The final answer: valid.\r\n", "valid."),  # "\r" dropped
        ("bbh_cot_zeroshot_yes_no", "No, wait: yes.", "yes"),
        ("gpqa_cot_strict", "The answer is (D)", "(D"),
        ("mmlu_pro_custom_extract", "the answer is (J).", "J"),
    ],
)
def test_shipped(name, text, answer):
    assert extracted(EXTRACTORS[name], [text]) == [answer]


def test_shipped_entries_name_their_reference():
    table = list_extractors().filter(pl.col("name").is_in([e.name for e in P._SHIPPED]))
    assert table.height == len(P._SHIPPED)
    assert table.get_column("reference").str.contains("lm-eval 0.4.13 lm_eval/tasks/").all()
    rules = run(EXTRACTORS["gsm8k_flexible"], ["7", "x"])
    assert [rule for _, rule in rules] == ["flexible-extract", "none"]


def test_answer_of_a_list_of_responses():
    frame = pl.DataFrame({"r": [["#### 1", "no"], None, []]})
    got = frame.select(answer_of(pl.col("r"), "m", "gsm8k_strict")).to_series().to_list()
    assert got == [["1", "[invalid]"], None, []]


# ---------------------------------------------------------------- other one-response filters


def test_case_filters():
    # Python: final sigma at a word's end; "ß".upper() is "SS"; "İ".lower() is "i̇".
    assert extracted(L.lowercase, ["ΟΔΟΣ ΣΑ", "İ", None]) == ["οδος σα", "i̇", None]
    assert extracted(L.uppercase, ["straße", "ﬁ"]) == ["STRASSE", "FI"]
    assert run(L.lowercase, ["A"]) == [("a", "lowercase")]


def test_case_follows_pythons_unicode_tables():
    # A character cased in a later Unicode than Python's (Polars maps it): unchanged by Python.
    from evalframe.normalize._python_text import _case_disagreements

    for upper, step in ((False, L.lowercase), (True, L.uppercase)):
        special = _case_disagreements(upper=upper)
        assert special  # the tables differ in this environment (Python 3.11: Unicode 14)
        expected = [c.upper() if upper else c.lower() for c in special]
        assert extracted(step, list(special)) == expected


def test_remove_whitespace():
    assert run(L.remove_whitespace, [" \x1c a b \u3000", None]) == [
        ("a b", "remove_whitespace"), (None, None),
    ]  # fmt: skip


def test_map_values():
    step = L.map_values({"A": 0, "B": None}, default="?")
    assert run(step, ["A", "B", "C", None]) == [
        ("0", "map"), (None, "map"), ("?", "none"), ("?", "none"),
    ]  # fmt: skip
    with pytest.raises(EvalframeError, match="must be a dict"):
        L.map_values([("A", 0)])


# ---------------------------------------------------------------- several responses


def frame_of(resps):
    return pl.DataFrame({"r": pl.Series(resps, dtype=pl.List(pl.String))})


def test_take_first_and_vote():
    resps = [["7", "8", "8"], ["b", "a", "a", "b"], ["x"], None]
    frame = frame_of(resps)
    assert frame.select(P.take_first("r")).to_series().to_list() == ["7", "b", "x", None]
    # Counter.most_common: the most frequent; a tie ("b" and "a", twice each) goes to "b",
    # seen first.
    assert frame.select(P.majority_vote("r")).to_series().to_list() == [
        ["8"], ["b"], ["x"], None,
    ]  # fmt: skip
    assert frame.head(3).select(P.take_first_k("r", 1)).to_series().to_list() == [
        ["7"], ["b"], ["x"],
    ]  # fmt: skip


def test_vote_counts_nulls_and_empty_answers():
    frame = frame_of([["", "", "1"], [None, "2", None]])
    assert frame.select(P.majority_vote("r")).to_series().to_list() == [[""], [None]]


def test_chains_and_their_types():
    frame = frame_of([["The answer is 4.", "The answer is 5."], ["x", "The answer is 5."]])
    strict = P.TASK_FILTERS["gsm8k_cot"]["strict-match"]
    assert frame.select(P.apply_filters("r", strict)).to_series().to_list() == ["4", "[invalid]"]
    every = frame.select(P.apply_filters("r", ["gsm8k_cot_strict"]))
    assert every.to_series().to_list() == [["4", "5"], ["[invalid]", "5"]]
    # A String column: one response per document.
    single = pl.DataFrame({"r": ["#### 3", None]}).select(P.apply_filters("r", "gsm8k_strict"))
    assert single.to_series().to_list() == [["3"], None]


def test_steps_after_take_first_see_characters():
    # lm-eval: after take_first a document is a string; the next step walks its characters.
    frame = frame_of([["Hello"], ["ab"]])
    chain = ["take_first", "uppercase", "majority_vote", "take_first"]
    assert frame.select(P.apply_filters("r", chain)).to_series().to_list() == ["L", "A"]
    assert frame.select(P.apply_filters("r", ["take_first", "take_first"])).to_series()\
        .to_list() == ["H", "a"]  # fmt: skip


def test_step_errors():
    frame = frame_of([["a"], []])
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="1 document"):
        frame.select(P.take_first("r"))
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="empty string"):
        frame_of([[""]]).select(P.apply_filters("r", ["take_first", "take_first"]))
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="vote on"):
        frame.select(P.majority_vote("r"))
    with pytest.raises(EvalframeError, match="is unknown"):
        P.apply_filters("r", ["take_last"])
    with pytest.raises(EvalframeError, match="needs k"):
        P.apply_filters("r", ["take_first_k"])
    with pytest.raises(EvalframeError, match="multi_choice_regex.*not reproduced"):
        P.apply_filters("r", [{"function": "multi_choice_regex", "regex_pattern": "x"}])
    with pytest.raises(EvalframeError, match="no option"):
        P.apply_filters("r", [{"function": "regex", "pattern": "x"}])
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="List\\(String\\)"):
        pl.DataFrame({"r": [1]}).select(P.apply_filters("r", ["take_first"]))


def test_take_first_k_checks_the_first_document_only():
    # TakeKFilter asserts len(resps[0]) >= k; later documents may hold fewer.
    frame = frame_of([["a", "b"], ["c"]])
    assert frame.select(P.take_first_k("r", 2)).to_series().to_list() == [["a", "b"], ["c"]]
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="fewer than k=2"):
        frame_of([["c"], ["a", "b"]]).select(P.take_first_k("r", 2))


def test_refilter_one_chain_for_every_row():
    frame = pl.DataFrame({"filter": ["a", "b"], "resps": [[["#### 1", "#### 2"]], [["x"]]]})
    again = P.refilter(frame, ["gsm8k_strict"], name="again")
    assert again.get_column("again").to_list() == [["1", "2"], ["[invalid]"]]
    named = P.refilter(frame, "gsm8k_strict")  # a name alone: the regex, then take_first
    assert named.get_column("refiltered").to_list() == ["1", "[invalid]"]


def test_refilter_mixed_results_are_lists():
    frame = pl.DataFrame({"filter": ["one", "all"], "resps": [[["#### 1", "x"]], [["#### 2"]]]})
    again = P.refilter(frame, {"one": "gsm8k_strict", "all": ["gsm8k_strict"]})
    assert again.get_column("refiltered").to_list() == [["1"], ["2"]]


def test_refilter_rejects_several_requests():
    frame = pl.DataFrame({"filter": ["a"], "resps": [[["x"], ["y"]]]})
    with pytest.raises(EvalframeError, match="several requests"):
        P.refilter(frame, ["take_first"])
