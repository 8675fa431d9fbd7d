"""One rule for repeated samples in a harness file: refuse them, or keep the first or the last.

A harness writes each sample once, under a key its layout defines (lm-eval: task, model,
``doc_id`` and filter; Inspect: sample id and epoch; SQuAD: the question id...). A key written
twice is a file that was appended to: a resumed run writes its records again, a copy was
concatenated. Reading it as it is would count those samples twice, so every layout calls
:func:`unique_samples`, which by default refuses the file, naming the key and both lines.
``duplicates="first"`` or ``"last"`` keeps one record of each key (the first or the last
written) and warns how many were dropped. Identical copies are refused too: they are the
resumed run's case, and which copy to keep is still the user's choice to state.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._common import short

#: What ``duplicates=`` takes.
POLICIES = ("error", "first", "last")

#: Names a row of the frame in the file (``"line 34"``, ``"record 12"``).
Locate = Callable[[int], str]


def check_policy(duplicates: object) -> str:
    """``duplicates`` checked against :data:`POLICIES`.

    >>> check_policy("first")
    'first'
    >>> check_policy("keep")
    Traceback (most recent call last):
    ...
    evalframe.errors.EvalframeError: duplicates='keep' is not one of 'error', 'first', 'last'
    """
    if not isinstance(duplicates, str) or duplicates not in POLICIES:
        known = ", ".join(repr(policy) for policy in POLICIES)
        raise EvalframeError(f"duplicates={duplicates!r} is not one of {known}")
    return duplicates


def unique_samples(
    frame: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    *,
    duplicates: str,
    source: str,
    what: str,
    locate: Locate,
    optional: Sequence[str] = (),
) -> pl.LazyFrame:
    """``frame`` with each value of ``keys`` once, as ``duplicates`` says.

    ``keys`` are columns of ``frame`` (the layout's sample key); a row whose ``optional`` key
    columns are null (a sample without an id) is never a duplicate. ``locate`` names a row in
    the file; ``source`` is the file and ``what`` the layout, for messages. Only the key
    columns are read to find repeats; a file without any is returned as it is.

    >>> frame = pl.DataFrame({"id": ["q1", "q2", "q1"], "answer": ["a", "b", "c"]})
    >>> where = lambda row: f"line {row + 1}"
    >>> try:
    ...     unique_samples(frame, ["id"], duplicates="error", source="p.jsonl", what="answers",
    ...                    locate=where)
    ... except EvalframeError as error:
    ...     print(error)
    cannot read 'p.jsonl' as answers: the sample id='q1' is on line 1 and again on line 3 \
(1 repeated record in all); pass duplicates='first' or 'last' to keep one record of each
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     kept = unique_samples(frame, ["id"], duplicates="last", source="p.jsonl",
    ...                           what="answers", locate=where)
    >>> kept.collect().rows()
    [('q2', 'b'), ('q1', 'c')]
    """
    policy = check_policy(duplicates)
    lazy = frame.lazy()
    key = pl.struct([pl.col(name) for name in keys])
    known = (
        pl.all_horizontal([pl.col(name).is_not_null() for name in optional])
        if optional
        else pl.lit(True)
    )
    marks = lazy.select(
        (key.is_duplicated() & known).alias("repeated"),
        key.is_first_distinct().alias("first"),
        key.is_last_distinct().alias("last"),
    ).collect()
    repeated = marks.get_column("repeated")
    if not repeated.any():
        return lazy
    rows = lazy.select(keys).with_row_index("__row").filter(pl.lit(repeated)).collect()
    dropped = ~marks.get_column("first") & repeated
    second = int(dropped.arg_max() or 0)  # the first row that repeats an earlier key
    values = lazy.select(keys).slice(second, 1).collect().row(0)
    pairs = list(zip(keys, values, strict=True))
    earlier = rows.filter(
        pl.all_horizontal([pl.col(name).eq_missing(value) for name, value in pairs])
    ).get_column("__row")[0]
    shown = ", ".join(f"{name}={short(value, 60)}" for name, value in pairs)
    extra = int(dropped.sum())
    fact = f"the sample {shown} is on {locate(int(earlier))} and again on {locate(second)}"
    if policy == "error":
        plural = "record" if extra == 1 else "records"
        raise EvalframeError(
            f"cannot read {source!r} as {what}: {fact} ({extra} repeated {plural} in all); "
            "pass duplicates='first' or 'last' to keep one record of each"
        )
    keep = marks.get_column(policy) | ~repeated
    warnings.warn(
        f"{source!r}: dropped {extra} repeated record(s) of {what}, keeping the {policy} of "
        f"each (duplicates={policy!r}); the first: {fact}",
        stacklevel=3,
    )
    return lazy.filter(pl.lit(keep))
