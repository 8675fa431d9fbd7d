"""lm-evaluation-harness's filters against evalframe's, row for row (lm-eval 0.4.13).

Every expected value comes from lm-eval's own filter classes, called as ``FilterEnsemble``
calls them: ``Filter().apply(resps, docs)`` over a list of documents, each a list of
responses (``lm_eval/filters/extraction.py`` ``RegexFilter``, ``WhitespaceFilter``;
``selection.py`` ``TakeFirstFilter``, ``TakeKFilter``, ``MajorityVoteFilter``;
``transformation.py`` ``LowercaseFilter``, ``UppercaseFilter``, ``MapFilter``). The
responses are adversarial (several matches, none, multi-line text, Unicode digits,
thousands separators, signs, decimals, ``$`` and ``%``, trailing dots, CRLF, empty and very
long strings) and random (hypothesis). The shipped chains are read again from the yaml
files of the installed lm-eval.
"""

from __future__ import annotations

import importlib.util
import itertools
import random
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalframe import EvalframeError
from evalframe.extract import lm_eval as L
from evalframe.extract import lm_eval_pipelines as P
from evalframe.extract.table import EXTRACTORS
from evalframe.normalize._python_text import all_characters

if importlib.util.find_spec("lm_eval") is None:
    pytest.skip("lm-eval (the reference) is not installed", allow_module_level=True)

from lm_eval.filters import build_filter_ensemble
from lm_eval.filters.extraction import RegexFilter, WhitespaceFilter
from lm_eval.filters.selection import MajorityVoteFilter, TakeFirstFilter, TakeKFilter
from lm_eval.filters.transformation import (
    LowercaseFilter,
    MapFilter,
    UppercaseFilter,
)

TASKS = Path(next(iter(importlib.util.find_spec("lm_eval").submodule_search_locations))) / "tasks"

#: Adversarial responses.
RESPONSES = [
    "", " ", "\n", "\r\n", "\x1c", "\u3000", "no number here", "[invalid]",
    "#### 72", "#### 72\n", "#### -1,000.50", "####  72", "#### $72", "#### ٣", "####72",
    "#### 1\n#### 2", "The answer is 42.", "The answer is 42", "The answer is -3.5.\n",
    "The answer is 1,234,567!", "The answer is $5.", "The answer is ３.", "the answer is 9.",
    "So the answer is (B).", "The answer is (C)\nmore", "answer is X", "answer is \n",
    "The answer: yes.", "The final answer: 12\r\n", "The final answer is 7", "The final answer "
    "is $1,000.", "The final answer is -2 and The final answer is 3.", "final answer is 4",
    "The answer is The answer is 8.", "answer is answer is 9.", "The answer is ",
    "I have 3 apples and $1,200.", "-5", "--5", "- 5", "5-", "1.2.3", "...", "..", ".", ",",
    "$", "$$", "%", "50%", "$5", "5$", "-$5", "$-5", "1,000", "1 000", "3.14159", "-0.5",
    ".5", "5.", "x5y", "٣ apples", "３ apples", "１２３", "٣٤", "०१२", "3\u00a0000",
    "first 1 then 22 then 333", "a\nb\nc 4\n", "line1\r\nline2 5\r\n", "Σ 5 ΟΔΟΣ",
    "Yes", "No.", "yes, no, yes", "Yesterday no", "NO", "yes\n", "True or False", "invalid",
    "(A) (B)", "answer is (J)", "answer is K", "the answer is (A) or (B)", "İstanbul 1",
    "x" * 3000 + " 9", "The answer is 1. " * 200, " 7 " * 500, "Ⅻ 12 ½", "1e5", "0x1F",
    "#### 7\r\n", "72\n", "tab\t3\t", "😀 4 😀", "𝟕 math digit", "a\u0301 5",
]  # fmt: skip

SHIPPED = [entry.name for entry in P._SHIPPED]


def lm_eval_regex(pattern: str, group_select: int, responses: list[str], fallback="[invalid]"):
    docs = [{} for _ in responses]
    return [row[0] for row in RegexFilter(pattern, group_select, fallback).apply(
        [[response] for response in responses], docs)]  # fmt: skip


def ours(function, responses: list[str | None]) -> list:
    frame = pl.DataFrame({"r": pl.Series(responses, dtype=pl.String)})
    return frame.select(function(pl.col("r")).struct.field("extracted")).to_series().to_list()


# ---------------------------------------------------------------- the shipped regexes


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_extractor_matches_regex_filter(name):
    entry = next(entry for entry in P._SHIPPED if entry.name == name)
    expected = lm_eval_regex(entry.pattern, entry.group_select, RESPONSES)
    assert ours(EXTRACTORS[name], RESPONSES) == expected
    rules = pl.DataFrame({"r": RESPONSES}).select(EXTRACTORS[name]("r").struct.field("rule"))
    assert set(rules.to_series()) <= {entry.rule, "none"}


@pytest.mark.parametrize("name", SHIPPED)
def test_every_route_of_a_shipped_pattern(name):
    """The hand-written Rust form, the general Rust path and Python's re agree."""
    entry = next(entry for entry in P._SHIPPED if entry.name == name)
    expected = lm_eval_regex(entry.pattern, entry.group_select, RESPONSES)
    plan = L._plan(entry.pattern)
    series = pl.Series("r", RESPONSES)
    python = L._python_regex(series, plan, entry.group_select, "[invalid]", "x")
    assert python.struct.field("extracted").to_list() == expected
    if plan.rust is not None:
        rust = ours(lambda t: L._rust_regex(t, plan, entry.group_select, "[invalid]", "x"),
                    RESPONSES)  # fmt: skip
        assert rust == expected
    form = L.RUST_FORMS.get((entry.pattern, entry.group_select))
    if form is not None:
        assert ours(lambda t: L._rust_form(t, form, "[invalid]", "x"), RESPONSES) == expected
    assert plan.rust is not None or form is not None or name == "bbh_cot_zeroshot_yes_no"


def test_null_response_is_read_as_empty():
    # lm-eval turns a response that is not a string into "" before matching.
    expected = lm_eval_regex(r"(x*)", 0, [None]) + lm_eval_regex(P.FLEXIBLE, -1, [None])
    got = ours(L.regex(r"(x*)").function, [None]) + ours(EXTRACTORS["gsm8k_flexible"], [None])
    assert got == expected == ["", "[invalid]"]
    rule = pl.DataFrame({"r": [None]}, schema={"r": pl.String}).select(
        EXTRACTORS["gsm8k_flexible"]("r").struct.field("rule")).item()  # fmt: skip
    assert rule is None


@pytest.mark.parametrize("fallback", ["[invalid]", "  padded  ", ""])
def test_fallbacks_no_match_and_empty_groups(fallback):
    # No match: the fallback as it is; a match whose groups are all empty: fallback.strip().
    responses = ["b", "a", "ab", "c"]
    for pattern in [r"(a)|(b)?c", r"(x)?(y)?b", r"(a)"]:
        extractor = L.regex(pattern, fallback=fallback)
        assert ours(extractor, responses) == lm_eval_regex(pattern, 0, responses, fallback)


# ---------------------------------------------------------------- random patterns

_PIECES = [
    "a", "b", ".", r"\.", ",", "-", r"\$", "%", " ", r"\n", "[0-9]", r"\d", r"\s", r"\w", r"\W",
    r"\S", r"\D", "[^0-9]", "[$0-9.,]", "[a-c]", "[^a-z ]", "٣", "(?:ab|a)", "(?s:.)",
]  # fmt: skip
_QUANTIFIERS = ["", "", "?", "*", "+", "{2,}", "{1,3}", "*?", "+?", "??"]
#: Bounded, so that Python's backtracking stays polynomial on nested repetition.
_GROUP_QUANTIFIERS = ["", "", "?", "{1,2}", "{0,2}?", "??"]


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.25 and depth < 2:
            inner = _random_pattern(rng, depth + 1)
            piece = f"({inner})" if rng.random() < 0.7 else f"(?:{inner})"
            quantifier = rng.choice(_GROUP_QUANTIFIERS)
        elif roll < 0.33 and depth < 2:
            piece = f"({_random_pattern(rng, depth + 1)}|{_random_pattern(rng, depth + 1)})"
            quantifier = rng.choice(_GROUP_QUANTIFIERS)
        else:
            piece = rng.choice(_PIECES)
            quantifier = rng.choice(_QUANTIFIERS)
        parts.append(piece + quantifier)
    pattern = "".join(parts)
    if depth == 0:
        if rng.random() < 0.1:
            pattern = "^" + pattern
        if rng.random() < 0.08:
            pattern = pattern + r"\Z"
        if rng.random() < 0.05:
            pattern = r"\b" + pattern
        if rng.random() < 0.05:
            pattern = pattern + "$"
    return pattern


def _expected_or_error(pattern, group_select, responses):
    try:
        return lm_eval_regex(pattern, group_select, responses)
    except IndexError:
        return IndexError


def _ours_or_error(pattern, group_select, responses):
    try:
        return ours(L.regex(pattern, group_select=group_select), responses)
    except (EvalframeError, pl.exceptions.ComputeError) as error:
        assert "fewer matches than group_select" in str(error)
        return IndexError


#: The responses of at most 200 characters, and a few more.
TEXTS = [text for text in RESPONSES if len(text) <= 200] + [
    "ab", "aab", "a.b", "a b", "ba", "٣٣", "a-1,2", "$.,", "-",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(60))
def test_random_patterns(seed):
    rng = random.Random(seed)
    for _ in range(10):
        pattern = _random_pattern(rng)
        group_select = rng.choice([0, 0, -1, -1, 1, -2])
        expected = _expected_or_error(pattern, group_select, TEXTS)
        if expected is not IndexError:
            assert _ours_or_error(pattern, group_select, TEXTS) == expected, pattern
            continue
        # Each response alone: an out-of-range group_select fails on its rows only.
        for text in TEXTS:
            expected = _expected_or_error(pattern, group_select, [text])
            assert _ours_or_error(pattern, group_select, [text]) == expected, (pattern, text)


def test_random_patterns_take_every_route():
    rng = random.Random(1)
    plans = [L._plan(_random_pattern(rng)) for _ in range(300)]
    assert sum(plan.rust is None for plan in plans) > 10
    assert sum(plan.rust is not None and plan.groups >= 2 for plan in plans) > 10
    assert sum(plan.rust is not None and plan.can_be_empty for plan in plans) > 10


def test_out_of_range_group_select_fails_as_lm_eval_does():
    with pytest.raises(IndexError):
        lm_eval_regex(r"(\d)", 2, ["1 2"])
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="fewer matches"):
        ours(L.regex(r"(\d)", group_select=2), ["1 2 3", "1 2"])
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="fewer matches"):
        ours(L.regex(r"\b(\d)", group_select=-3), ["1 2"])  # the Python route
    assert ours(L.regex(r"(\d)", group_select=2), ["1 2 3", "none"]) == ["3", "[invalid]"]


_ALPHABET = st.sampled_from([
    "The answer is ", "the answer is ", "answer is ", "The answer: ", "The final answer: ",
    "The final answer is ", "final answer is ", "#### ", "#", "Yes", "no", "(B)", "A", "J",
    "0", "1", "7", "42", "٣", "３", "𝟕", "$", "%", ",", ".", "-", " ", "\n", "\r", "\t", "\x1c",
    "\u3000", "\u00a0", "Σ", "é", "東", "😀", "x", "_",
])  # fmt: skip
_TEXT = st.one_of(st.lists(_ALPHABET, max_size=25).map("".join), st.text(max_size=40))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TEXT, min_size=1, max_size=20))
def test_hypothesis_shipped(texts):
    for entry in P._SHIPPED:
        expected = lm_eval_regex(entry.pattern, entry.group_select, texts)
        assert ours(EXTRACTORS[entry.name], texts) == expected, entry.name


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), _TEXT)
def test_hypothesis_random_patterns(seed, text):
    rng = random.Random(seed)
    pattern = _random_pattern(rng)
    group_select = rng.choice([0, -1, 1, -2])
    assert _ours_or_error(pattern, group_select, [text]) == _expected_or_error(
        pattern, group_select, [text]
    ), pattern


# ---------------------------------------------------------------- Python's classes in Rust


@pytest.mark.parametrize(
    "escape", [r"\d", r"\D", r"\s", r"\S", r"\w", r"\W", r"[^\d\W]", r"[\s,]", r"(?a:\w)", "."]
)
def test_classes_match_the_same_characters_as_python(escape):
    characters = all_characters()
    rust = L._plan(escape).rust
    matched = pl.Series(list(characters)).str.contains(f"^(?:{rust})$")
    compiled = re.compile(escape)
    expected = [compiled.fullmatch(character) is not None for character in characters]
    assert matched.to_list() == expected


def test_untranslatable_parts_go_to_python():
    for pattern in [r"(?<=a)b", r"a(?=b)", r"(?!a)b", r"\bword", r"a$", r"(?i)a", r"(?i:a)b",
                    r"(a)\1", r"(?m)^a", r"(?>a)", r"a++", r"(x)?(?(1)a|b)"]:  # fmt: skip
        assert L._plan(pattern).rust is None, pattern


# ---------------------------------------------------------------- the other filters


@pytest.mark.parametrize(
    ("ours_function", "reference"),
    [
        (L.lowercase, LowercaseFilter),
        (L.uppercase, UppercaseFilter),
        (L.remove_whitespace, WhitespaceFilter),
    ],
)
def test_case_and_whitespace(ours_function, reference):
    # every character whose Polars case mapping differs from Python's, found here one by one
    characters = pl.Series([c for c in all_characters() if c != "\n"])
    lowered, uppered = characters.str.to_lowercase(), characters.str.to_uppercase()
    special = "".join(
        c for c, low, up in zip(characters, lowered, uppered, strict=True)
        if low != c.lower() or up != c.upper()
    )
    texts = [*RESPONSES, special, "ΑΣ ΑΣ. ΑΣ", "Σ", "aΣ", "İI", "ﬃ ß ŉ", "ǅ", special + " Σ x"]
    expected = [row[0] for row in reference().apply([[text] for text in texts], None)]
    assert ours(ours_function, texts) == expected


def test_case_of_every_character():
    characters = [c for c in all_characters() if c != "\n"]
    for function, method in [(L.lowercase, str.lower), (L.uppercase, str.upper)]:
        assert ours(function, characters) == [method(c) for c in characters]


def test_map_filter():
    mapping, default = {"A": 0, "B": "b", "C": None}, -1
    texts = ["A", "B", "C", "D", "", "a"]
    expected = MapFilter(mapping, default).apply([[text] for text in texts], None)
    assert ours(L.map_values(mapping, default), texts) == [
        None if row[0] is None else str(row[0]) for row in expected
    ]


# ---------------------------------------------------------------- several responses


def _chain_reference(config: list[dict], resps: list[list[str]]):
    ensemble = build_filter_ensemble("x", [(step["function"], {k: v for k, v in step.items()
                                              if k != "function"}) for step in config])  # fmt: skip
    out = resps
    for make in ensemble.filters:
        out = list(make().apply(out, [{} for _ in out]))
    return out


def _documents(rng: random.Random, n: int, repeats: int) -> list[list[str]]:
    return [[rng.choice(RESPONSES[:90]) for _ in range(repeats)] for _ in range(n)]


def test_take_first_and_majority_vote():
    rng = random.Random(0)
    pool = ["7", "8", "9", "[invalid]", ""]
    resps = [[rng.choice(pool) for _ in range(rng.randint(1, 6))] for _ in range(500)]
    frame = pl.DataFrame({"r": resps})
    assert frame.select(P.take_first("r")).to_series().to_list() == list(
        TakeFirstFilter().apply(resps, None))  # fmt: skip
    assert frame.select(P.majority_vote("r")).to_series().to_list() == list(
        MajorityVoteFilter().apply(resps, None))  # fmt: skip
    equal = [r for r in resps if len(r) >= 3]
    assert pl.DataFrame({"r": equal}).select(P.take_first_k("r", 3)).to_series().to_list() == (
        list(TakeKFilter(k=3).apply(equal, None)))  # fmt: skip


def test_majority_vote_ties_go_to_the_first_seen():
    resps = [["b", "a", "a", "b"], ["x", "y"], ["z"], ["c", "d", "d", "c", "c"]]
    expected = list(MajorityVoteFilter().apply(resps, None))
    assert expected == [["b"], ["x"], ["z"], ["c"]]
    assert pl.DataFrame({"r": resps}).select(P.majority_vote("r")).to_series().to_list() == (
        expected)  # fmt: skip


def test_selection_errors_as_lm_eval():
    with pytest.raises(IndexError):
        list(TakeFirstFilter().apply([["a"], []], None))
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="no response"):
        pl.DataFrame({"r": [["a"], []]}).select(P.take_first("r"))
    with pytest.raises(AssertionError):
        TakeKFilter(k=3).apply([["a"], ["a", "b", "c"]], None)
    with pytest.raises((EvalframeError, pl.exceptions.ComputeError), match="fewer than k=3"):
        pl.DataFrame({"r": [["a"], ["a", "b", "c"]]}).select(P.take_first_k("r", 3))


@pytest.mark.parametrize(("task", "filter_name"), [
    (task, name) for task, chains in P.TASK_FILTERS.items() for name in chains
])  # fmt: skip
def test_task_chains(task, filter_name):
    config = P.TASK_FILTERS[task][filter_name]
    rng = random.Random(hash((task, filter_name)) % 1000)
    repeats = 8 if any(step["function"] == "take_first_k" for step in config) else 3
    resps = _documents(rng, 300, repeats)
    expected = _chain_reference(config, resps)
    got = pl.DataFrame({"r": resps}).select(P.apply_filters("r", config)).to_series().to_list()
    assert got == expected


def test_steps_after_take_first_walk_the_string():
    # polemo2's chain: regex, take_first, map, take_first (map then sees characters).
    config = [
        {"function": "regex", "regex_pattern": r"(\b[ABCD]\b)"},
        {"function": "take_first"},
        {"function": "map", "mapping_dict": {"A": "0", "B": "1"}, "default_value": "-1"},
        {"function": "take_first"},
    ]
    resps = [["A"], ["so B"], ["none"], ["C"]]
    expected = _chain_reference(config, resps)
    assert expected == ["0", "1", "-1", "-1"]  # "[invalid]"[0] is "[": the default
    got = pl.DataFrame({"r": resps}).select(P.apply_filters("r", config)).to_series().to_list()
    assert got == expected


# ---------------------------------------------------------------- the yaml files


def _yaml(path: Path) -> dict:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: f"!{suffix}")
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)


@pytest.mark.parametrize("task", list(P.TASK_FILTERS))
def test_chains_are_the_shipped_ones(task):
    shipped = {entry["name"]: entry["filter"] for entry in _yaml(TASKS / P.TASK_SOURCES[task])[
        "filter_list"]}  # fmt: skip

    def canonical(steps):
        return [{k: v for k, v in step.items() if not (k == "group_select" and v == 0)}
                for step in steps]  # fmt: skip

    for name, steps in P.TASK_FILTERS[task].items():
        assert canonical(steps) == canonical(shipped[name]), (task, name)


def test_shipped_strict_match_is_the_same_in_every_bbh_cot_zeroshot_task():
    paths = sorted((TASKS / "bbh" / "cot_zeroshot").glob("*.yaml"))
    chains = [
        entry["filter"]
        for path in paths
        for entry in _yaml(path).get("filter_list") or ()
        if entry["name"] == "strict-match"
    ]
    assert len(chains) == 27
    assert all(chain == chains[0] for chain in chains)
    assert chains[0][0]["regex_pattern"] == P._BBH_ZEROSHOT


def test_long_lists_of_documents():
    rng = random.Random(5)
    resps = _documents(rng, 3000, 2)
    for task, name in itertools.product(["gsm8k", "mmlu_flan_cot_zeroshot"], ["strict-match"]):
        config = P.TASK_FILTERS[task][name]
        got = pl.DataFrame({"r": resps}).select(P.apply_filters("r", config)).to_series()
        assert got.to_list() == _chain_reference(config, resps)
