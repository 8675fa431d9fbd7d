"""Column roles, the dtypes each accepts, and validation with clear errors.

A metric names the roles it needs (``prediction``, ``gold``, ``n``, ``c``...).
The user maps roles to their own column names; anything not mapped uses the
role's default column name. Validation happens once, before any compute.

>>> import polars as pl
>>> from evalframe.schema import dtype_kind
>>> dtype_kind(pl.List(pl.String))
'list[str]'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from evalframe.errors import EvalframeError

#: Kinds a role may accept, as written in errors and docs.
STR = "str"
LIST_STR = "list[str]"
LIST_LIST_STR = "list[list[str]]"
INT = "int"
FLOAT = "float"
BOOL = "bool"
LIST_BOOL = "list[bool]"
LIST_INT = "list[int]"
LIST_FLOAT = "list[float]"
ANY = "any"


def dtype_kind(dtype: pl.DataType) -> str:
    """Classify a polars dtype into one of the role kinds (or its own name)."""
    if dtype == pl.String:
        return STR
    if dtype == pl.Boolean:
        return BOOL
    if dtype.is_integer():
        return INT
    if dtype.is_float():
        return FLOAT
    if isinstance(dtype, pl.List | pl.Array):
        inner = dtype_kind(dtype.inner)
        if inner in (STR, BOOL, INT, LIST_STR):
            return f"list[{inner}]"
        if inner == FLOAT:
            return LIST_FLOAT
        return f"list[{inner}]"
    if dtype == pl.Null:
        return "null"
    return str(dtype)


def accepts(kind: str, dtype: pl.DataType) -> bool:
    """Whether a column of ``dtype`` can play a role that accepts ``kind``."""
    found = dtype_kind(dtype)
    if kind == ANY:
        return True
    if found == "null":  # an all-null column: every score is null, which is well defined
        return True
    if kind == FLOAT:
        return found in (FLOAT, INT)
    if kind == LIST_FLOAT:
        return found in (LIST_FLOAT, LIST_INT)
    return found == kind


@dataclass(frozen=True)
class Role:
    """A column role: its default column name, accepted kinds, and meaning."""

    name: str
    kinds: tuple[str, ...]
    meaning: str

    @property
    def default_column(self) -> str:
        return self.name


ROLES: dict[str, Role] = {
    role.name: role
    for role in [
        Role("prediction", (STR, LIST_STR), "model output; a list is several samples or spans"),
        Role(
            "gold",
            (STR, LIST_STR, LIST_LIST_STR),
            "reference(s); a list is alternatives, any may match (max over them)",
        ),
        Role("n", (INT,), "pass@k: samples drawn"),
        Role("c", (INT,), "pass@k: samples that passed"),
        Role("passed", (LIST_BOOL,), "pass@k: one boolean per sample drawn"),
        Role("choices", (LIST_STR,), "multiple-choice options"),
        Role("choice_logprobs", (LIST_FLOAT,), "summed log-probability of each choice"),
        Role("unconditioned_logprobs", (LIST_FLOAT,), "for PMI normalisation"),
        Role("choice_token_counts", (LIST_INT,), "for token-length normalisation"),
        Role("gold_index", (INT, LIST_INT), "index(es) of the correct choice(s)"),
        Role("len_mc1", (INT,), "TruthfulQA: the first len_mc1 choices are MC1's, the rest MC2's"),
        Role("loglikelihood", (FLOAT,), "perplexity family: summed log-likelihood"),
        Role("n_words", (INT,), "perplexity family: word count"),
        Role("n_bytes", (INT,), "perplexity family: byte count"),
        Role("n_tokens", (INT,), "perplexity family: token count"),
        Role("text", (STR,), "the document whose log-likelihood was scored"),
        Role("task", (ANY,), "grouping key"),
        Role("model", (ANY,), "grouping and pairing key"),
        Role("sample_id", (ANY,), "pairing key"),
        Role("cluster", (ANY,), "clustering key for clustered standard errors"),
        Role("outcome", (STR,), "pairwise judgment: A, B, tie, inconsistent or error"),
    ]
}


def role_kinds(role: str, overrides: Mapping[str, Sequence[str]] | None = None) -> tuple[str, ...]:
    """The kinds a role accepts, narrowed by a metric's overrides."""
    if overrides and role in overrides:
        return tuple(overrides[role])
    return ROLES[role].kinds


def check_mapped_columns(mapping: Mapping[str, str], schema: Mapping[str, pl.DataType]) -> None:
    """Every column the user mapped a role to must exist: an error names the closest names.

    >>> import polars as pl
    >>> check_mapped_columns({"c": "num_correct"}, {"num_correct": pl.Int64})
    """
    import difflib

    for role, column in mapping.items():
        if column in schema:
            continue
        close = difflib.get_close_matches(column, list(schema), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else "."
        available = ", ".join(repr(name) for name in list(schema)[:20])
        more = f" (and {len(schema) - 20} more)" if len(schema) > 20 else ""
        raise EvalframeError(
            f"role {role!r} is mapped to column {column!r}, which the input does not have"
            f"{hint} Available columns: {available}{more}."
        )


def resolve_columns(
    metric: str,
    role_sets: Sequence[Sequence[str]],
    schema: Mapping[str, pl.DataType],
    mapping: Mapping[str, str],
    overrides: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, str]:
    """Pick the first role set whose columns all exist, check their dtypes, return role->column.

    Raises :class:`EvalframeError` naming the metric, the role, the column and
    what was found when no role set is complete or a dtype is wrong.
    """

    def column_for(role: str) -> str:
        return mapping.get(role, ROLES[role].default_column)

    mapped = {role for role in mapping if any(role in roles for roles in role_sets)}
    complete = [roles for roles in role_sets if all(column_for(role) in schema for role in roles)]
    if mapped:
        # A role set the user mapped a role of is theirs: never fall back to another set
        # because theirs is incomplete.
        theirs = [roles for roles in role_sets if mapped & set(roles)]
        if complete and not any(roles in complete for roles in theirs):
            missing = sorted(
                {f"{role}={column_for(role)!r}" for roles in theirs for role in roles
                 if column_for(role) not in schema}
            )
            given = ", ".join(f"{role}={mapping[role]!r}" for role in sorted(mapped))
            raise EvalframeError(
                f"metric {metric!r}: you mapped {given}, but the columns that go with it are "
                f"missing: {', '.join(missing)}. Map them with columns={{'role': 'column'}} "
                "(CLI: --col role=column); evalframe does not fall back to other columns "
                "when a mapping is incomplete."
            )
    for roles in complete:
        chosen = {role: column_for(role) for role in roles}
        for role, column in chosen.items():
            kinds = role_kinds(role, overrides)
            dtype = schema[column]
            if not any(accepts(kind, dtype) for kind in kinds):
                raise EvalframeError(
                    f"metric {metric!r}: role {role!r} is column {column!r} of dtype "
                    f"{dtype} ({dtype_kind(dtype)}); expected {' or '.join(kinds)}"
                )
        return chosen

    wanted = " or ".join(
        "(" + ", ".join(f"{role}={column_for(role)!r}" for role in roles) + ")"
        for roles in role_sets
    )
    missing = sorted(
        {f"{role}={column_for(role)!r}" for roles in role_sets for role in roles}
        - {f"{role}={column_for(role)!r}" for roles in role_sets for role in roles
           if column_for(role) in schema}
    )
    available = ", ".join(repr(name) for name in list(schema)[:20])
    more = f" (and {len(schema) - 20} more)" if len(schema) > 20 else ""
    raise EvalframeError(
        f"metric {metric!r} needs columns {wanted}; missing {', '.join(missing)}. "
        f"Available columns: {available}{more}. Map a role to a column with "
        f"columns={{'role': 'column'}} (CLI: --col role=column)."
    )
