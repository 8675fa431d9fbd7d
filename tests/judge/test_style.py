"""Style features: counts against Python's ``re`` with FastChat's patterns, by hand, errors.

FastChat's ``fastchat/serve/monitor/add_markdown_info.py`` (``count_markdown_elements``)
counts with Python's ``re`` and these patterns; evalframe counts with Polars (Rust regex).
The oracle below applies the same patterns with ``re`` row by row, so the two regex engines
are compared on adversarial text (multi-line whitespace, unicode digits, CRLF, nested
markers), not just on the easy cases.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.judge.style import (
    STYLE_FEATURES,
    check_style,
    standardized,
    style_counts,
    style_differences,
)

#: FastChat's patterns (add_markdown_info.py), compiled with Python's re.
FASTCHAT = {
    "markdown_headers": [re.compile(rf"^#{{{k}}}\s", re.MULTILINE) for k in range(1, 7)],
    "markdown_lists": [re.compile(r"^\s*\d+\.\s", re.MULTILINE),
                       re.compile(r"^\s*[-*+]\s", re.MULTILINE)],
    "bold": [re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__")],
}


def oracle(text: str, feature: str) -> float:
    """One answer's count with Python's re: FastChat's patterns after emptying code blocks
    (evalframe's rule: the fenced block only), words as whitespace-separated runs."""
    if feature == "length":
        return float(len(text.split()))
    body = re.sub(r"```[^`]*```", "``````", text)
    return float(sum(len(pattern.findall(body)) for pattern in FASTCHAT[feature]))


ADVERSARIAL = [
    "",
    "# h1\n## h2\n### h3\n#### h4\n##### h5\n###### h6\n####### seven\n#nospace",
    "#\n# x",  # a header whose whitespace is the newline, then another
    "- a\n* b\n+ c\n-no\n  - nested\n\t* tab\n1. one\n22. two\n3.no",
    "\n\n\n- after blank lines\n\n1. after one\n",
    "- \n1. x",
    "-\n1. x",
    "١. arabic-indic digit\n٢. again",  # unicode digits: \d in both engines
    "**bold** and __under__ and **unclosed and __ __ and ****",
    "**a__b**__",  # the ** span and the __ span overlap: each counted by its own pattern
    "**two\nlines**",
    "```python\n# comment\n- not a list\n**not bold**\n```\n# real header",
    "```\n# a\n``` text ```\n# b\n```",  # two fences, the second pair empties '\n# b\n'
    "line\r\n# crlf header\r\n- crlf item\r\n",
    "   # indented header is not one\n  1. indented item is one",
    "mixed ＃ full-width # sign\n## ok",
    "word  word\tword\nword\u00a0nbsp",  # non-breaking space splits words in both
]


def test_counts_match_pythons_re_with_fastchats_patterns_on_adversarial_text():
    frame = pl.DataFrame({"answer_a": ADVERSARIAL, "answer_b": list(reversed(ADVERSARIAL))})
    counted = frame.select(style_counts(STYLE_FEATURES))
    for feature in STYLE_FEATURES:
        for side, column in (("a", "answer_a"), ("b", "answer_b")):
            expected = [oracle(text, feature) for text in frame[column]]
            assert counted[f"{feature}_{side}"].to_list() == expected, (feature, side)


def test_counts_match_pythons_re_on_random_markdown():
    rng = np.random.default_rng(4)
    pieces = ["# ", "## ", "###", "- ", "* ", "+ ", "1. ", "10.", "**", "__", "```", "`",
              "\n", "\n\n", " ", "\t", "word", "x", "2", ".", "#", "-", "*", "_"]
    texts = ["".join(rng.choice(pieces, size=rng.integers(0, 40))) for _ in range(2000)]
    frame = pl.DataFrame({"answer_a": texts, "answer_b": texts[::-1]})
    counted = frame.select(style_counts(STYLE_FEATURES))
    for feature in STYLE_FEATURES:
        expected = [oracle(text, feature) for text in texts]
        assert counted[f"{feature}_a"].to_list() == expected, feature


def test_counts_by_hand():
    text = (
        "# Title\n"
        "Some **bold** text, __more__.\n"
        "```\n# code comment\n- code\n```\n"
        "1. first\n"
        "2. second\n"
        "- bullet **b**\n"
    )
    frame = pl.DataFrame({"answer_a": [text], "answer_b": ["plain"]})
    row = frame.select(style_counts(STYLE_FEATURES)).row(0, named=True)
    # headers: "# Title" (the code comment is inside the block); lists: 1., 2., -;
    # bold: **bold**, **b** and __more__
    assert (row["markdown_headers_a"], row["markdown_lists_a"], row["bold_a"]) == (1, 3, 3)
    # words, the code included: # Title | Some **bold** text, __more__. | ``` | # code
    # comment | - code | ``` | 1. first | 2. second | - bullet **b**: 2+4+1+3+2+1+2+2+3
    assert row["length_a"] == 20 and row["length_b"] == 1


def test_the_code_block_rule_differs_from_fastchats_replace_only_on_repeated_text():
    # FastChat deletes every occurrence of a block's content ("x\n- y\n") anywhere in the
    # answer (str.replace); the same text outside the block then is no list item either.
    # evalframe empties the fenced block only: the item outside it counts.
    text = "```x\n- y\n```\nx\n- y\n"
    frame = pl.DataFrame({"answer_a": [text], "answer_b": [""]})
    assert frame.select(style_counts(["markdown_lists"]))["markdown_lists_a"].item() == 1
    fastchat_body = text.replace("x\n- y\n", "")  # what FastChat counts in: "``````\n"
    assert sum(len(p.findall(fastchat_body)) for p in FASTCHAT["markdown_lists"]) == 0


def test_characters_and_null_answers():
    frame = pl.DataFrame({"answer_a": ["héllo wörld", None], "answer_b": ["", "x"]})
    counted = frame.select(style_counts(["length", "bold"], length_unit="characters"))
    assert counted.rows() == [(11.0, 0.0, 0.0, 0.0), (None, 1.0, None, 0.0)]


def test_chatbot_arena_normalisation_by_hand():
    counts = pl.DataFrame({"length_a": [10.0, 0.0, 3.0], "length_b": [30.0, 0.0, 3.0]})
    got = style_differences(counts, ["length"], "chatbot_arena")["length"].to_list()
    # (a - b) / (a + b + 1)
    assert got == pytest.approx([-20 / 41, 0.0, 0.0], abs=1e-15)


def test_arena_hard_normalisation_by_hand():
    counts = pl.DataFrame({
        "length_a": [10.0, 0.0], "length_b": [30.0, 0.0],
        "bold_a": [2.0, 0.0], "bold_b": [3.0, 1.0],
    })
    got = style_differences(counts, ["length", "bold"], "arena_hard")
    # length: (a - b) / (a + b), 0 when both are 0
    assert got["length"].to_list() == pytest.approx([-0.5, 0.0], abs=1e-15)
    # bold as densities d = count / (length + 1): 2/11 and 3/31; then (da - db)/(da + db + 1)
    da, db = 2 / 11, 3 / 31
    first = (da - db) / (da + db + 1)
    second = (0 - 1.0) / (0 + 1.0 + 1)  # 0/1 and 1/1
    assert got["bold"].to_list() == pytest.approx([first, second], abs=1e-15)


def test_standardisation_is_numpys_population_std_and_refuses_a_constant_feature():
    differences = pl.DataFrame({"length": [0.5, -0.25, 0.0, 0.75], "bold": [0.1] * 4})
    with pytest.raises(EvalframeError, match=r"\['bold'\] do not vary"):
        standardized(differences)
    matrix, mean, std = standardized(differences.select("length"))
    values = np.array([0.5, -0.25, 0.0, 0.75])
    assert mean[0] == pytest.approx(values.mean()) and std[0] == pytest.approx(values.std())
    assert matrix[:, 0] == pytest.approx((values - values.mean()) / values.std())


def test_check_style():
    assert check_style(None) is None
    assert check_style(True).features == STYLE_FEATURES
    spec = check_style(["length", "code"], style_columns={"code": ["c_a", "c_b"]})
    assert spec.features == ("length", "code") and spec.columns == {"code": ("c_a", "c_b")}
    assert spec.counted() == ["length"]
    # arena_hard's markdown densities need the length even when it is not controlled for
    assert check_style(["bold"], normalization="arena_hard").counted() == ["bold", "length"]
    mistakes = [
        (dict(style="italics"), "style feature 'italics' is not one of"),
        (dict(style=[]), "name at least one feature"),
        (dict(style=["bold", "bold"]), r"\['bold'\] more than once"),
        (dict(style=3), "style=3: expected True"),
        (dict(style=None, style_columns={"length": ("a", "b")}), "style is not"),
        (dict(style=["bold"], style_columns={"length": ("a", "b")}), "which style does not"),
        (dict(style=["length"], style_columns={"length": "ab"}), "a pair of column names"),
        (dict(style=True, length_unit="tokens"), "length_unit='tokens'"),
        (dict(style=True, normalization="lmsys"), "style_normalization='lmsys'"),
    ]
    for kwargs, message in mistakes:
        style = kwargs.pop("style")
        with pytest.raises(EvalframeError, match=message):
            check_style(style, **kwargs)
