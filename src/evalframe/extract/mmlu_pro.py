r"""MMLU-Pro's answer extraction: its regex cascade, in the versions the benchmark shipped.

MMLU-Pro (TIGER-AI-Lab/MMLU-Pro) extracts the letter of a chain-of-thought answer with
up to three Python ``re`` steps, tried in order, the first that finds a letter winning:

1. ``extract_answer``: ``re.search(r"answer is \(?([A-J])\)?", text)`` (rule ``answer_is``);
2. ``extract_again``: ``re.search(r".*[aA]nswer:\s*([A-J])", text)`` (rule ``answer_colon``);
3. ``extract_final``: the last standalone letter, ``re.search(r"\b[A-J]\b(?!.*\b[A-J]\b)",
   text, re.DOTALL)`` (rule ``last_letter``).

Nothing found: ``pred`` is ``None`` (``extracted`` null, rule ``"none"``), which MMLU-Pro's
summaries score as a seeded random guess and evalframe counts as a missing answer.

Three extractors are registered, one per version of the cascade:

- ``mmlu_pro``: the three steps above, as in ``evaluate_from_api.py`` (commit 2a7ec7e4)
  and ``evaluate_from_local.py`` (commit 7478e268), and ``compute_accuracy.py``'s level
  ``l2`` (commit 453c1d99);
- ``mmlu_pro_answer_is``: step 1 alone (``run_gpt4o.py``, commits 75e5cf5b and bfa90e1c, and
  ``compute_accuracy.py``'s level ``l1``). This is the version that produced the ``pred``
  column of the GPT-4o results published at commit ff991b5b (``eval_results/gpt4o``):
  it reproduces all 12,032 rows, the 571 null ones included; the three-step cascade
  differs from that file on 492 rows;
- ``mmlu_pro_last_capital``: the three steps with the step 3 of commit 05c6997b
  (``evaluate_from_local.py`` and ``compute_accuracy.py``), ``re.search(r"[A-J](?=[^A-J]*$)",
  text)``: the last capital A-J anywhere, standalone or not (rule ``last_capital``).

How the regexes run in Polars (Rust ``regex``, no lookaround), with the same result as
Python ``re`` on every string:

- step 1 is literal text and ASCII letters: the same pattern;
- step 2's ``.`` (anything but ``"\n"``) means the same in both; its ``\s`` is replaced by
  the explicit class of Python's ``\s`` (which also holds ``\x1c``-``\x1f``);
- step 3's lookahead says "no standalone letter after this one", so the match is the
  *last* standalone letter: ``(?s)\A.*(?:\A|[^w])([A-J])(?:[^w]|\z)``, whose greedy
  ``.*`` makes the capture the last letter with a non-word character (or the text's
  edge) on both sides. ``w`` is the explicit class of Python's ``\w`` (``str.isalnum()``
  or ``"_"``, on which Python's ``\b`` is defined), not Rust's Unicode ``\w``: the two
  differ on about 13,000 code points (combining marks are word characters in Rust, not
  in Python; ``"²"``, ``"½"`` are in Python, not in Rust), so ``"A\u0301"`` is a standalone
  ``A`` for MMLU-Pro. The classes are built once per process from Python's own ``re``.
- version 05c6997b's step 3 is the last capital A-J: ``(?s)\A.*([A-J])``.

>>> import polars as pl
>>> from evalframe.extract.mmlu_pro import mmlu_pro_extract
>>> df = pl.DataFrame({"response": [
...     "so the answer is (B).", "Answer: C", "I pick D, not e", "the answer is **A**", "", None,
... ]})
>>> df.select(mmlu_pro_extract("response").alias("x")).unnest("x")
shape: (6, 2)
┌───────────┬──────────────┐
│ extracted ┆ rule         │
│ ---       ┆ ---          │
│ str       ┆ str          │
╞═══════════╪══════════════╡
│ B         ┆ answer_is    │
│ C         ┆ answer_colon │
│ D         ┆ last_letter  │
│ A         ┆ last_letter  │
│ null      ┆ none         │
│ null      ┆ null         │
└───────────┴──────────────┘
"""

from __future__ import annotations

from functools import cache

import polars as pl

from evalframe.extract.table import EXTRACTORS, extraction
from evalframe.normalize._python_text import whitespace_class, word_class

__all__ = ["mmlu_pro_answer_is", "mmlu_pro_extract", "mmlu_pro_last_capital"]

REPOSITORY = "TIGER-AI-Lab/MMLU-Pro"

#: Step 1, ``extract_answer``: the trailing ``\)?`` of the reference cannot change the group.
_ANSWER_IS = r"answer is \(?([A-J])"


@cache
def _patterns() -> tuple[str, str]:
    """Steps 2 and 3 in Rust ``regex`` syntax, with Python's ``\\s`` and ``\\w`` spelt out."""
    space, non_word = whitespace_class(), word_class(negate=True)
    answer_colon = rf".*[aA]nswer:{space}*([A-J])"
    last_letter = rf"(?s)\A.*(?:\A|{non_word})([A-J])(?:{non_word}|\z)"
    return answer_colon, last_letter


def _cascade(text: pl.Expr, steps: tuple[tuple[str, pl.Expr], ...]) -> pl.Expr:
    """The first step that finds a letter; ``rule`` names it (``"none"``: no step did)."""
    extracted = pl.coalesce([found for _, found in steps])
    rule = pl.when(text.is_null()).then(pl.lit(None, dtype=pl.String))
    for name, found in steps:
        rule = rule.when(found.is_not_null()).then(pl.lit(name))
    return extraction(extracted, rule.otherwise(pl.lit("none")))


def _answer_is(text: pl.Expr) -> pl.Expr:
    return text.str.extract(_ANSWER_IS, 1)


def _answer_colon(text: pl.Expr) -> pl.Expr:
    return text.str.extract(_patterns()[0], 1)


def _last_letter(text: pl.Expr) -> pl.Expr:
    return text.str.extract(_patterns()[1], 1)


def _last_capital(text: pl.Expr) -> pl.Expr:
    return text.str.extract(r"(?s)\A.*([A-J])", 1)


@EXTRACTORS.decorator(
    name="mmlu_pro",
    reference=f"{REPOSITORY}@2a7ec7e4: evaluate_from_api.py extract_answer (3 steps)",
    meaning="'answer is (X)', else the last 'answer: X' line, else the last standalone A-J",
)
def mmlu_pro_extract(text: pl.Expr | str) -> pl.Expr:
    r"""MMLU-Pro's three-step cascade (``extract_answer`` -> ``extract_again`` ->
    ``extract_final``), as its current evaluation scripts.

    Parameters
    ----------
    text
        ``String`` column (name or expression): the model's response.

    Returns
    -------
    pl.Expr
        :data:`evalframe.extract.EXTRACTION`: ``extracted`` the letter (null where no
        step finds one), ``rule`` ``"answer_is"``, ``"answer_colon"``, ``"last_letter"``
        or ``"none"`` (null for a null response, where the reference would raise).

    Notes
    -----
    Reference: TIGER-AI-Lab/MMLU-Pro ``evaluate_from_api.py`` (commit 2a7ec7e4) and
    ``evaluate_from_local.py`` (commit 7478e268), ``extract_answer``. The letters are the
    ASCII capitals A-J only (``"answer is b"`` finds no letter in steps 1-2).

    >>> import polars as pl
    >>> answer = mmlu_pro_extract(pl.lit("Answer: B ... the answer is (C)"))
    >>> pl.select(answer.struct.field("extracted"))
    shape: (1, 1)
    ┌───────────┐
    │ extracted │
    │ ---       │
    │ str       │
    ╞═══════════╡
    │ C         │
    └───────────┘
    """
    expr = pl.col(text) if isinstance(text, str) else text
    return _cascade(
        expr,
        (
            ("answer_is", _answer_is(expr)),
            ("answer_colon", _answer_colon(expr)),
            ("last_letter", _last_letter(expr)),
        ),
    )


@EXTRACTORS.decorator(
    name="mmlu_pro_answer_is",
    reference=f"{REPOSITORY}@bfa90e1c: run_gpt4o.py extract_answer (1 step)",
    meaning="'answer is (X)' only, else null (the GPT-4o results' pred)",
)
def mmlu_pro_answer_is(text: pl.Expr | str) -> pl.Expr:
    r"""MMLU-Pro's first extraction step alone: ``answer is \(?([A-J])\)?``, else null.

    The version of ``run_gpt4o.py`` (commit bfa90e1c) that wrote the published GPT-4o
    results (commit ff991b5b): it reproduces their ``pred`` column on every row.
    ``rule`` is ``"answer_is"`` or ``"none"`` (null for a null response).

    >>> import polars as pl
    >>> pl.select(mmlu_pro_answer_is(pl.lit("The answer is **A**")).struct.field("rule"))
    shape: (1, 1)
    ┌──────┐
    │ rule │
    │ ---  │
    │ str  │
    ╞══════╡
    │ none │
    └──────┘
    """
    expr = pl.col(text) if isinstance(text, str) else text
    return _cascade(expr, (("answer_is", _answer_is(expr)),))


@EXTRACTORS.decorator(
    name="mmlu_pro_last_capital",
    reference=f"{REPOSITORY}@05c6997b: evaluate_from_local.py extract_answer (3 steps)",
    meaning="'answer is (X)', else the last 'answer: X' line, else the last capital A-J",
)
def mmlu_pro_last_capital(text: pl.Expr | str) -> pl.Expr:
    r"""MMLU-Pro's cascade as of commit 05c6997b: step 3 is the last capital A-J anywhere.

    ``extract_final`` was then ``re.search(r"[A-J](?=[^A-J]*$)", text)``: the leftmost
    capital followed by no other up to the end, that is the last one in the text, inside a
    word or not. ``rule`` is ``"answer_is"``, ``"answer_colon"``, ``"last_capital"`` or
    ``"none"``.

    >>> import polars as pl
    >>> pl.select(mmlu_pro_last_capital(pl.lit("I pick D. Done")).struct.field("extracted"))
    shape: (1, 1)
    ┌───────────┐
    │ extracted │
    │ ---       │
    │ str       │
    ╞═══════════╡
    │ D         │
    └───────────┘
    """
    expr = pl.col(text) if isinstance(text, str) else text
    return _cascade(
        expr,
        (
            ("answer_is", _answer_is(expr)),
            ("answer_colon", _answer_colon(expr)),
            ("last_capital", _last_capital(expr)),
        ),
    )
