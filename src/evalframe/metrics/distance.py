"""String distances: lighteval's ``StringDistance`` (its ``copyright`` metric) and plain ones.

Two families, named so the difference is plain:

=================================  ===========================================================
metric                             what is compared
=================================  ===========================================================
``edit_distance``                  lighteval 0.13.0 ``StringDistance``: the prediction is
``edit_similarity``                stripped, the (first) gold is cut to the prediction's
``longest_common_prefix_length``   length in characters, both are split by nltk's
                                   ``TreebankWordTokenizer``; token Levenshtein distance,
                                   ``1 - distance / max(len)`` (0.0 when either side has no
                                   tokens), common prefix length in tokens
``word_edit_distance``             Levenshtein distance between the whitespace words
``word_edit_similarity``           (``str.split()``) of prediction and gold, and
                                   ``1 - distance / max(len)`` (1.0 when both have none)
``char_edit_distance``             the same on characters (Unicode code points), nothing
``char_edit_similarity``           stripped or cut
=================================  ===========================================================

Several samples (a ``list[str]`` prediction): lighteval keeps the smallest distance and the
largest similarity and prefix length over the samples; so do all metrics here. Several
golds: lighteval's ``StringDistance`` uses only the **first** gold (``golds[0]``), and so do
the three lighteval metrics; the plain variants take the best over every gold alternative.

Everything runs as one batched kernel over whole columns: each *distinct* text is
tokenised once, tokens get integer ids, and the distances of all pairs come from
``rapidfuzz.process.cpdist`` (``Levenshtein.distance``, ``Prefix.similarity``,
multi-threaded). The Treebank tokeniser is nltk 3.10's, as Polars expressions: its regular
expressions run with character classes built from the very engines nltk uses (the
``regex`` module for ``\\s``/``\\d``; ``re`` for the contractions' ``\\b`` and
case-insensitive letters), so the tokens are identical to nltk's.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"pred": ["Once upon a time there was a dragon", None],
...                    "gold": ["Once upon a time there was a princess", "x"]})
>>> df.select(M.edit_distance("pred", "gold").alias("d"),
...           M.edit_similarity("pred", "gold").alias("sim"),
...           M.longest_common_prefix_length("pred", "gold").alias("lcp"))
shape: (2, 3)
┌──────┬───────┬──────┐
│ d    ┆ sim   ┆ lcp  │
│ ---  ┆ ---   ┆ ---  │
│ f64  ┆ f64   ┆ f64  │
╞══════╪═══════╪══════╡
│ 1.0  ┆ 0.875 ┆ 7.0  │
│ null ┆ null  ┆ null │
└──────┴───────┴──────┘
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable
from functools import cache
from typing import Literal

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, RowCheck, describe, guard, parse_into_expr, shared_kernel
from evalframe.errors import EvalframeError
from evalframe.metrics._text_rules import TEXT_SAMPLES, generated
from evalframe.metrics.exact_match import LIGHTEVAL_VERSION
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import (
    all_characters,
    as_class,
    split,
    whitespace_characters,
    whitespace_class,
    word_class,
)

__all__ = [
    "char_edit_distance",
    "char_edit_similarity",
    "edit_distance",
    "edit_similarity",
    "longest_common_prefix_length",
    "treebank_tokenize",
    "word_edit_distance",
    "word_edit_similarity",
]

Mode = Literal["lighteval", "word", "char"]

#: The per-row values one kernel computes (each metric reads one field).
_FIELDS = ("edit_distance", "edit_similarity", "longest_common_prefix_length")
_RESULT = pl.Struct({name: pl.Float64 for name in _FIELDS})


# --------------------------------------------------------------------------------------
# nltk's TreebankWordTokenizer as polars expressions
# --------------------------------------------------------------------------------------


@cache
def _regex_module_classes() -> tuple[str, str]:
    """``\\s`` and ``[^\\d]`` of the ``regex`` module (which nltk 3.10 compiles with)."""
    try:
        import regex
    except ImportError as error:  # pragma: no cover - nltk depends on regex
        raise EvalframeError(
            "the Treebank tokeniser needs the 'regex' package (a dependency of nltk): "
            "pip install nltk"
        ) from error
    chars = all_characters()
    return as_class(regex.findall(r"\s", chars)), as_class(regex.findall(r"[^\d]", chars))


@cache
def _ignorecase(letter: str) -> str:
    """A class of what ``re``'s ``(?i)`` matches for ``letter`` (``s`` also matches ``ſ``)."""
    return as_class(re.findall("(?i)" + re.escape(letter), all_characters()))


def _caseless(word: str) -> str:
    return "".join(_ignorecase(ch) if ch.isalpha() else re.escape(ch) for ch in word)


#: A step: (pattern, replacement, passes); ``None`` pads the text with a space each side.
_Step = tuple[str, str, int] | None


@cache
def _treebank_steps() -> tuple[_Step, ...]:
    """``TreebankWordTokenizer.tokenize`` (nltk 3.10) as Rust-regex substitutions.

    Python's ``$`` also matches before a final newline, which is kept; ``\\s``/``\\d``
    are the ``regex`` module's. The contractions' ``\\b`` and ``(?=\\s)`` are matched as
    characters (or the text's ends) and put back; two occurrences sharing one boundary
    character need a second pass, which cannot create a match nltk would not make (the
    boundaries are on both sides zero-width in nltk).
    """
    space, not_digit = _regex_module_classes()
    non_word = word_class(negate=True)
    steps: list[_Step] = [
        # starting quotes
        (r'^"', "``", 1),
        (r"``", " `` ", 1),
        (r"""([ (\[{<])("|'')""", "${1} `` ", 1),
        # punctuation
        (rf"([:,])({not_digit})", " ${1} ${2}", 1),
        (r"([:,])(\n?)$", " ${1} ${2}", 1),
        (r"\.\.\.", " ... ", 1),
        (r"[;@#$%&]", " ${0} ", 1),
        (rf"""([^.])(\.)([\])}}>"']*){space}*$""", "${1} ${2}${3} ", 1),
        (r"[?!]", " ${0} ", 1),
        (r"([^'])' ", "${1} ' ", 1),
        # parentheses and brackets, double dashes
        (r"[\]\[(){}<>]", " ${0} ", 1),
        (r"--", " -- ", 1),
        None,
        # ending quotes
        (r"''", " '' ", 1),
        (r'"', " '' ", 1),
        (r"([^' ])('[sS]|'[mM]|'[dD]|') ", "${1} ${2} ", 1),
        (r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "${1} ${2} ", 1),
    ]
    for first, second in (
        ("can", "not"), ("d", "'ye"), ("gim", "me"), ("gon", "na"), ("got", "ta"),
        ("lem", "me"), ("more", "'n"),
    ):
        steps.append((
            f"(^|{non_word})({_caseless(first)})({_caseless(second)})({non_word}|$)",
            "${1} ${2} ${3} ${4}",
            2,
        ))
    steps.append((
        f"(^|{non_word})({_caseless('wan')})({_caseless('na')})({whitespace_class()})",
        "${1} ${2} ${3} ${4}",
        2,
    ))
    return tuple(steps)


#: nltk's last two contractions (`` 'tis``, `` 'twas``): a literal space before, a ``\b``
#: after. A match's boundary character can open the next match, which a consuming Rust
#: pattern cannot follow, so these run with ``re`` itself, on the texts that hold one.
_TIS_TWAS = (re.compile(r"(?i) ('t)(is)\b"), re.compile(r"(?i) ('t)(was)\b"))


@cache
def _tis_twas_candidates() -> str:
    return f" {_caseless(chr(39) + 't')}(?:{_caseless('is')}|{_caseless('was')})(?:" + (
        f"{word_class(negate=True)}|$)"
    )


def _treebank_text(expr: pl.Expr) -> pl.Expr:
    for step in _treebank_steps():
        if step is None:
            expr = pl.concat_str(pl.lit(" "), expr, pl.lit(" "))
            continue
        pattern, replacement, passes = step
        for _ in range(passes):
            expr = expr.str.replace_all(pattern, replacement)
    return expr


def _treebank_series(texts: pl.Series) -> pl.Series:
    """``TreebankWordTokenizer().tokenize`` of each text (``List(String)``; null stays null)."""
    text = pl.select(_treebank_text(pl.lit(texts.cast(pl.String)))).to_series()
    candidates = text.str.contains(_tis_twas_candidates()).fill_null(False)
    if candidates.any():
        rows = candidates.arg_true()
        fixed = []
        for value in text.gather(rows).to_list():
            for pattern in _TIS_TWAS:
                value = pattern.sub(r" \1 \2 ", value)
            fixed.append(value)
        text = text.scatter(rows, pl.Series(fixed, dtype=pl.String))
    return pl.select(split(pl.lit(text))).to_series().alias(texts.name)


def treebank_tokenize(text: IntoExpr) -> pl.Expr:
    """nltk 3.10's ``TreebankWordTokenizer().tokenize`` as an expression (``list[str]``).

    Identical tokens (``convert_parentheses=False``): contractions split (``can't`` ->
    ``ca``, ``n't``), punctuation separated, a final period split off, ``"`` turned into
    ````` / ``''``. Null stays null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"text": ["They'll save $3.88, cannot.", None]})
    >>> df.select(treebank_tokenize("text").alias("tokens"))["tokens"].to_list()
    [['They', "'ll", 'save', '$', '3.88', ',', 'can', 'not', '.'], None]
    """
    return shared_kernel(parse_into_expr(text).cast(pl.String), _treebank_series,
                         pl.List(pl.String))


# --------------------------------------------------------------------------------------
# The kernel: distinct texts tokenised once, distances of every pair by rapidfuzz
# --------------------------------------------------------------------------------------


def _rapidfuzz():
    try:
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein, Prefix
    except ImportError as error:  # pragma: no cover - a declared dependency
        raise EvalframeError(
            "the string distance metrics need rapidfuzz: pip install rapidfuzz"
        ) from error
    return process, Levenshtein, Prefix


def _as_list(series: pl.Series) -> pl.Series:
    if isinstance(series.dtype, pl.List):
        return series.cast(pl.List(pl.String))
    return pl.select(pl.concat_list([pl.lit(series.cast(pl.String))])).to_series()


def _encode(tokens: pl.Series) -> list[str]:
    """Each token list as a string of one code point per token (equal tokens, equal points).

    rapidfuzz compares strings natively, with no Python object per token. Ids skip the
    surrogate range; a batch with more distinct tokens than code points is refused.
    """
    flat = tokens.explode(empty_as_null=False, keep_nulls=False)
    ids = flat.rank("dense").cast(pl.UInt32).to_numpy() if flat.len() else np.zeros(0, np.uint32)
    if ids.size and int(ids.max()) > 0x10FFFF - 0x800:
        raise EvalframeError(
            f"string distance: {int(ids.max())} distinct tokens in one batch; at most "
            f"{0x10FFFF - 0x800} are supported (score the data in smaller batches)"
        )
    points = (ids + np.where(ids >= 0xD800, 0x800, 0)).astype("<u4")
    joined = points.tobytes().decode("utf-32-le")
    ends = np.cumsum(tokens.list.len().fill_null(0).to_numpy())
    starts = ends - tokens.list.len().fill_null(0).to_numpy()
    return [joined[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def _distances(mode: Mode, strip: bool, inputs: pl.Series) -> pl.Series:
    prediction = _as_list(inputs.struct.field("prediction"))
    gold = _as_list(inputs.struct.field("gold"))
    if mode == "lighteval":  # lighteval reads doc.get_golds()[0]
        gold = pl.select(pl.concat_list([pl.lit(gold).list.first()])).to_series()
    n = len(prediction)
    frame = pl.DataFrame({"p": prediction, "g": gold}).with_row_index("row")
    null_row = (
        pl.col("p").is_null() | pl.col("g").is_null()
        | pl.col("p").list.contains(None) | pl.col("g").list.contains(None)
    )
    scored = frame.filter(~null_row)
    pairs = (
        scored.select("row", "p").explode("p", empty_as_null=False, keep_nulls=False)
        .join(scored.select("row", "g").explode("g", empty_as_null=False, keep_nulls=False),
              on="row", how="inner")
    )
    if mode == "lighteval":
        side_a = pl.col("p").str.strip_chars(whitespace_characters()) if strip else pl.col("p")
        pairs = pairs.with_columns(side_a.alias("a")).with_columns(
            pl.col("g").str.slice(0, pl.col("a").str.len_chars()).alias("b")
        )
    else:
        pairs = pairs.rename({"p": "a", "g": "b"})
    texts = pl.concat([pairs["a"], pairs["b"]]).unique(maintain_order=True)
    distinct = pl.DataFrame({"text": texts}).with_row_index("id")
    pairs = pairs.join(distinct.rename({"text": "a", "id": "ia"}), on="a", how="left").join(
        distinct.rename({"text": "b", "id": "ib"}), on="b", how="left"
    )
    if mode == "char":
        encoded = texts.to_list()
        lengths = texts.str.len_chars().to_numpy()
    else:
        if mode == "lighteval":
            # numpy's fixed-width strings (lighteval holds the tokens in np.array) drop
            # trailing NUL characters, so 'a\x00' equals 'a' there.
            tokens = _treebank_series(texts).list.eval(pl.element().str.strip_chars_end("\x00"))
        else:
            tokens = pl.select(split(pl.lit(texts))).to_series()
        encoded = _encode(tokens)
        lengths = tokens.list.len().to_numpy()
    process, levenshtein, prefix = _rapidfuzz()
    ia, ib = pairs["ia"].to_numpy(), pairs["ib"].to_numpy()
    holder = np.empty(len(encoded), dtype=object)
    holder[:] = encoded
    queries, choices = holder[ia].tolist(), holder[ib].tolist()
    distance = process.cpdist(queries, choices, scorer=levenshtein.distance, workers=-1,
                              dtype=np.int64)
    la, lb = lengths[ia].astype(np.int64), lengths[ib].astype(np.int64)
    longest = np.maximum(la, lb)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = 1.0 - distance / longest
    if mode == "lighteval":
        similarity = np.where((la > 0) & (lb > 0), ratio, 0.0)
        common = process.cpdist(queries, choices, scorer=prefix.similarity, workers=-1,
                                dtype=np.int64).astype(np.float64)
    else:
        similarity = np.where(longest > 0, ratio, 1.0)
        common = np.full(len(queries), np.nan)
    values = pl.DataFrame({
        "row": pairs["row"],
        "edit_distance": distance.astype(np.float64),
        "edit_similarity": similarity,
        "longest_common_prefix_length": common,
    })
    per_row = values.group_by("row").agg(
        pl.col("edit_distance").min(),
        pl.col("edit_similarity").max(),
        pl.col("longest_common_prefix_length").max(),
    )
    rows = pl.DataFrame({"row": pl.int_range(n, eager=True, dtype=pl.UInt32)})
    joined = rows.join(per_row, on="row", how="left", maintain_order="left")
    return joined.select(pl.struct(*_FIELDS).alias("distance")).to_series()


def _fingerprint(inputs: pl.Series) -> tuple[int, ...]:
    """128 bits identifying a batch: two seeded row hashes, mixed with the row positions."""
    positions = np.arange(1, len(inputs) + 1, dtype=np.uint64)
    parts = [len(inputs)]
    for seed in (0x9E3779B9, 0x85EBCA6B):
        hashes = inputs.hash(seed=seed).to_numpy()
        with np.errstate(over="ignore"):
            parts.append(int(np.bitwise_xor.reduce(hashes * positions, initial=np.uint64(0))))
            parts.append(int(np.sum(hashes ^ (positions * np.uint64(0xC2B2AE35)),
                                    dtype=np.uint64)))
    return tuple(parts)


@cache
def _kernel(mode: Mode, strip: bool) -> Callable[[pl.Series], pl.Series]:
    """The kernel of one setting; metrics requested together share its work.

    Polars evaluates each metric's expression on its own, so the kernel remembers the
    results of the last two batches it scored, by a fingerprint of the batch (its length
    and two seeded polars row hashes mixed with the row positions): the next metric of
    the same request reads the result instead of recomputing it. Only results are kept
    (three floats per row), not the texts.
    """
    lock = threading.Lock()
    last: list[tuple[tuple[int, ...], pl.Series]] = []

    def kernel(inputs: pl.Series) -> pl.Series:
        key = _fingerprint(inputs)
        with lock:
            for seen, result in last:
                if seen == key:
                    return result
            result = _distances(mode, strip, inputs)
            last[:] = [(key, result), *last[:1]]
            return result

    return kernel


def _field(
    metric: str, mode: Mode, field: str, prediction: IntoExpr, gold: IntoExpr, strip: bool = True
) -> pl.Expr:
    pred, ref = parse_into_expr(prediction), parse_into_expr(gold)
    inputs = pl.struct(pred.alias("prediction"), ref.alias("gold"))
    values = shared_kernel(inputs, _kernel(mode, strip), _RESULT).struct.field(field)
    checks = [
        RowCheck(
            invalid=pl.concat_list([source]).list.len() == 0,
            what=f"an empty {role} list",
            expected=f"at least one string in {role} column {describe(original)}",
        )
        for role, source, original in (("prediction", pred, prediction), ("gold", ref, gold))
    ]
    return guard(metric, values, checks)


# --------------------------------------------------------------------------------------
# The metrics: two families, each made by one factory (one signature, one docstring
# template, one set of registration keywords)
# --------------------------------------------------------------------------------------

_NULL_RULE = (
    "a null prediction, a null sample in a prediction list, or a null gold gives null "
    "(for the lighteval metrics only the first gold is read, so only it must be non-null); "
    "an empty prediction or gold list raises EvalframeError (lighteval's min()/max() of "
    "no samples fails)"
)
_LIGHTEVAL_RULES = (
    "the prediction is stripped (str.strip(), Python whitespace) when strip_prediction; the "
    "FIRST gold is cut to the stripped prediction's length in characters (code points); "
    "both are tokenised by nltk's TreebankWordTokenizer (nltk 3.10, reproduced exactly)",
    "several golds: only the first is used, as lighteval's StringDistance does",
    "several samples (list[str] prediction): the smallest distance, the largest similarity "
    "and prefix length over the samples",
    "tokens compare as lighteval's numpy arrays compare them: trailing NUL characters "
    "do not count ('a\\x00' equals 'a')",
    _NULL_RULE,
)
_SAMPLE_AGGREGATION = (
    "lighteval's copyright task reduces over documents by max (prefix length, similarity) "
    "and min (distance); evalframe reports the mean over rows, as for every sample metric"
)
_PLAIN_RULES = (
    "no stripping, no cutting of the gold, no Treebank tokenisation",
    "several samples and several gold alternatives: the best (smallest distance, largest "
    "similarity) over every (sample, alternative) pair",
    _NULL_RULE,
)
_NLTK_LIMIT = (
    "nltk 3.10's edit_distance raises ValueError for more than 2000 tokens "
    "(MAX_DISTANCE_INPUT_LEN), so lighteval fails on such rows; evalframe computes them"
)
_LIGHTEVAL_REF = "metrics.metrics_sample.StringDistance (Metrics.copyright)"
_RAPIDFUZZ = Reference("rapidfuzz", "3.14", "rapidfuzz.distance.Levenshtein")

#: What a distance (lower is better, unbounded above) registers besides its family's.
_DISTANCE = {"higher_is_better": False, "bounds": (0.0, math.inf)}

_DOC = """{summary}

    {details}

    Parameters
    ----------
    {parameters}

    Returns
    -------
    pl.Expr
        {returns}

    {notes}

    Examples
    --------
    {example}
    """

_LIGHTEVAL_PARAMETERS = """
    prediction
        ``str``, or ``list[str]`` of samples.
    gold
        ``str``, or ``list[str]``: only the first is used, as in lighteval.
    strip_prediction
        lighteval's ``strip_prediction`` (``True`` in its ``copyright`` metric).
    """

_PLAIN_PARAMETERS = """
    prediction
        ``str``, or ``list[str]`` of samples.
    gold
        ``str``, or ``list[str]`` of alternatives (the best one counts).
    """


def _lighteval_metric(
    field: str, *, summary: str, details: str, values: str, example: str, notes: str = "",
    **registration: object,
) -> Callable[..., pl.Expr]:
    """The lighteval ``StringDistance`` metric ``field``, documented and registered."""

    def metric(
        prediction: IntoExpr, gold: IntoExpr, *, strip_prediction: bool = True
    ) -> pl.Expr:
        return _field(field, "lighteval", field, prediction, gold, strip_prediction)

    reference = Reference("lighteval", LIGHTEVAL_VERSION, _LIGHTEVAL_REF)
    return generated(
        metric, field, _DOC,
        register(field, **TEXT_SAMPLES, reference=reference, **registration),
        summary=summary, details=details, parameters=_LIGHTEVAL_PARAMETERS, notes=notes,
        example=example,
        returns=f"{values} per row; null where the prediction, a sample or the first gold "
        "is null.",
    )


def _plain_metric(
    name: str, mode: Mode, field: str, *, summary: str, details: str, values: str,
    example: str, **registration: object,
) -> Callable[..., pl.Expr]:
    """The Levenshtein metric ``name`` on words or characters, documented and registered."""

    def metric(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
        return _field(name, mode, field, prediction, gold)

    return generated(
        metric, name, _DOC, register(name, **TEXT_SAMPLES, reference=_RAPIDFUZZ, **registration),
        summary=summary, details=details, parameters=_PLAIN_PARAMETERS, notes="",
        example=example,
        returns=f"{values} per row; null where an input (or an element of a list) is null.",
    )


edit_distance = _lighteval_metric(
    "edit_distance",
    **_DISTANCE,
    description="Treebank-token edit distance to the gold cut to the prediction's length "
    "(lighteval copyright)",
    edge_rules=(
        *_LIGHTEVAL_RULES,
        "nltk edit_distance: Levenshtein with unit costs, no transpositions; an empty "
        "(or blank) prediction cuts the gold to '' and scores 0.0",
    ),
    divergences=(_SAMPLE_AGGREGATION, _NLTK_LIMIT),
    summary="Token edit distance in lighteval's ``StringDistance`` semantics (``copyright``).",
    details="""
        nltk's ``edit_distance`` (Levenshtein: insertions, deletions, substitutions of cost 1)
        between the Treebank tokens of the stripped prediction and of the first gold cut to
        the prediction's length in characters; the smallest over the samples.
        """,
    values="``Float64`` >= 0",
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["  the cat sat", "a b", None],
        ...                    "gold": [["the cat sat on the mat"], ["x y"], ["z"]]})
        >>> df.with_columns(edit_distance("pred", "gold").alias("edit_distance"))
        shape: (3, 3)
        ┌───────────────┬────────────────────────────┬───────────────┐
        │ pred          ┆ gold                       ┆ edit_distance │
        │ ---           ┆ ---                        ┆ ---           │
        │ str           ┆ list[str]                  ┆ f64           │
        ╞═══════════════╪════════════════════════════╪═══════════════╡
        │   the cat sat ┆ ["the cat sat on the mat"] ┆ 0.0           │
        │ a b           ┆ ["x y"]                    ┆ 2.0           │
        │ null          ┆ ["z"]                      ┆ null          │
        └───────────────┴────────────────────────────┴───────────────┘
        """,
)

edit_similarity = _lighteval_metric(
    "edit_similarity",
    description="Edit similarity, 1 - edit distance / max token count, Treebank tokens "
    "(lighteval copyright)",
    edge_rules=(
        *_LIGHTEVAL_RULES,
        "1.0 - distance / max(len(prediction tokens), len(gold tokens)); 0.0 when either "
        "side has no tokens, both empty included",
    ),
    divergences=(_SAMPLE_AGGREGATION, _NLTK_LIMIT),
    summary="Token edit similarity in lighteval's ``StringDistance`` semantics (``copyright``).",
    details="""
        ``1.0 - distance / max(len(prediction tokens), len(gold tokens))`` on the tokens of
        :func:`edit_distance`; the largest over the samples.
        """,
    values="``Float64`` in [0, 1]",
    notes="""
        Notes
        -----
        The arithmetic is lighteval's (an integer distance over an integer length, subtracted
        from 1.0), so the values are bit-identical. Similarity from Lee et al. (2021),
        "Deduplicating training data makes language models better".
        """,
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["a b c d", "", None], "gold": ["a x c d e", "a", "z"]})
        >>> df.with_columns(edit_similarity("pred", "gold").alias("edit_similarity"))
        shape: (3, 3)
        ┌─────────┬───────────┬─────────────────┐
        │ pred    ┆ gold      ┆ edit_similarity │
        │ ---     ┆ ---       ┆ ---             │
        │ str     ┆ str       ┆ f64             │
        ╞═════════╪═══════════╪═════════════════╡
        │ a b c d ┆ a x c d e ┆ 0.75            │
        │         ┆ a         ┆ 0.0             │
        │ null    ┆ z         ┆ null            │
        └─────────┴───────────┴─────────────────┘
        """,
)

longest_common_prefix_length = _lighteval_metric(
    "longest_common_prefix_length",
    bounds=(0.0, math.inf),
    description="Common prefix length in Treebank tokens with the cut gold (lighteval "
    "copyright)",
    edge_rules=(*_LIGHTEVAL_RULES, "0.0 when either side has no tokens"),
    divergences=(_SAMPLE_AGGREGATION,),
    summary="Common prefix length in tokens, in lighteval's ``StringDistance`` semantics.",
    details="""
        How many leading Treebank tokens the stripped prediction shares with the first gold
        cut to the prediction's length in characters; the largest over the samples.
        """,
    values="``Float64`` >= 0 (a whole number)",
    notes="""
        Notes
        -----
        Cutting the gold to the prediction's length can split its last word, which then
        differs (``"Once upon a time there was a prince"`` for a 35-character prediction).
        """,
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["Once upon a time", "Twice", None],
        ...                    "gold": ["Once upon a time there was", "Once", "z"]})
        >>> df.with_columns(longest_common_prefix_length("pred", "gold").alias("lcp"))
        shape: (3, 3)
        ┌──────────────────┬────────────────────────────┬──────┐
        │ pred             ┆ gold                       ┆ lcp  │
        │ ---              ┆ ---                        ┆ ---  │
        │ str              ┆ str                        ┆ f64  │
        ╞══════════════════╪════════════════════════════╪══════╡
        │ Once upon a time ┆ Once upon a time there was ┆ 4.0  │
        │ Twice            ┆ Once                       ┆ 0.0  │
        │ null             ┆ z                          ┆ null │
        └──────────────────┴────────────────────────────┴──────┘
        """,
)

word_edit_distance = _plain_metric(
    "word_edit_distance", "word", "edit_distance",
    **_DISTANCE,
    description="Levenshtein distance between whitespace words (str.split()), best gold",
    edge_rules=(*_PLAIN_RULES, "two texts without words: 0.0"),
    summary="Levenshtein distance between the whitespace words of prediction and gold.",
    details="""
        Words are Python's ``str.split()`` pieces, unlike :func:`edit_distance`'s Treebank
        tokens. The smallest over every (sample, gold alternative) pair.
        """,
    values="``Float64`` >= 0",
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["the cat  sat", "", None],
        ...                    "gold": [["a cat sat", "the dog"], ["x y"], ["z"]]})
        >>> df.with_columns(word_edit_distance("pred", "gold").alias("d"))
        shape: (3, 3)
        ┌──────────────┬──────────────────────────┬──────┐
        │ pred         ┆ gold                     ┆ d    │
        │ ---          ┆ ---                      ┆ ---  │
        │ str          ┆ list[str]                ┆ f64  │
        ╞══════════════╪══════════════════════════╪══════╡
        │ the cat  sat ┆ ["a cat sat", "the dog"] ┆ 1.0  │
        │              ┆ ["x y"]                  ┆ 2.0  │
        │ null         ┆ ["z"]                    ┆ null │
        └──────────────┴──────────────────────────┴──────┘
        """,
)

word_edit_similarity = _plain_metric(
    "word_edit_similarity", "word", "edit_similarity",
    description="Word edit similarity, 1 - word Levenshtein distance / max word count, best gold",
    edge_rules=(
        *_PLAIN_RULES,
        "1.0 - distance / max(word counts) (Levenshtein.normalized_similarity); two texts "
        "without words: 1.0",
    ),
    summary="``1 - distance / max(len)`` on whitespace words; 1.0 when both have no words.",
    details="""
        The distance of :func:`word_edit_distance` over the larger word count (rapidfuzz's
        ``Levenshtein.normalized_similarity``); the largest over every (sample, gold
        alternative) pair. Unlike lighteval's :func:`edit_similarity`, two texts without
        words are identical.
        """,
    values="``Float64`` in [0, 1]",
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["a b c d", " ", None], "gold": ["a x c d e", "", "z"]})
        >>> df.with_columns(word_edit_similarity("pred", "gold").alias("sim"))
        shape: (3, 3)
        ┌─────────┬───────────┬──────┐
        │ pred    ┆ gold      ┆ sim  │
        │ ---     ┆ ---       ┆ ---  │
        │ str     ┆ str       ┆ f64  │
        ╞═════════╪═══════════╪══════╡
        │ a b c d ┆ a x c d e ┆ 0.6  │
        │         ┆           ┆ 1.0  │
        │ null    ┆ z         ┆ null │
        └─────────┴───────────┴──────┘
        """,
)

char_edit_distance = _plain_metric(
    "char_edit_distance", "char", "edit_distance",
    **_DISTANCE,
    description="Levenshtein distance between characters (code points), best gold",
    edge_rules=(
        *_PLAIN_RULES,
        "characters are Unicode code points; whitespace and combining marks count",
    ),
    summary="Levenshtein distance between the characters (Unicode code points) of the texts.",
    details="""
        Code point by code point: ``"é"`` precomposed and ``"e\\u0301"`` differ. The
        smallest over every (sample, gold alternative) pair.
        """,
    values="``Float64`` >= 0",
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["kitten", "", None], "gold": ["sitting", "abc", "z"]})
        >>> df.with_columns(char_edit_distance("pred", "gold").alias("d"))
        shape: (3, 3)
        ┌────────┬─────────┬──────┐
        │ pred   ┆ gold    ┆ d    │
        │ ---    ┆ ---     ┆ ---  │
        │ str    ┆ str     ┆ f64  │
        ╞════════╪═════════╪══════╡
        │ kitten ┆ sitting ┆ 3.0  │
        │        ┆ abc     ┆ 3.0  │
        │ null   ┆ z       ┆ null │
        └────────┴─────────┴──────┘
        """,
)

char_edit_similarity = _plain_metric(
    "char_edit_similarity", "char", "edit_similarity",
    description="Character edit similarity, 1 - Levenshtein distance / max length, best gold",
    edge_rules=(
        *_PLAIN_RULES,
        "1.0 - distance / max(lengths in code points) (Levenshtein.normalized_similarity); "
        "two empty texts: 1.0",
    ),
    summary="``1 - distance / max(len)`` on characters; 1.0 when both texts are empty.",
    details="""
        The distance of :func:`char_edit_distance` over the longer length in code points
        (rapidfuzz's ``Levenshtein.normalized_similarity``); the largest over every
        (sample, gold alternative) pair.
        """,
    values="``Float64`` in [0, 1]",
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["kitten", "", None], "gold": ["sitting", "", "z"]})
        >>> df.with_columns(char_edit_similarity("pred", "gold").alias("sim"))
        shape: (3, 3)
        ┌────────┬─────────┬──────────┐
        │ pred   ┆ gold    ┆ sim      │
        │ ---    ┆ ---     ┆ ---      │
        │ str    ┆ str     ┆ f64      │
        ╞════════╪═════════╪══════════╡
        │ kitten ┆ sitting ┆ 0.571429 │
        │        ┆         ┆ 1.0      │
        │ null   ┆ z       ┆ null     │
        └────────┴─────────┴──────────┘
        """,
)
