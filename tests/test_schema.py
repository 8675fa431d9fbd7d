"""Role dtypes and column resolution."""

from __future__ import annotations

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.schema import ROLES, accepts, dtype_kind, resolve_columns


@pytest.mark.parametrize(
    ("dtype", "kind"),
    [
        (pl.String, "str"),
        (pl.List(pl.String), "list[str]"),
        (pl.List(pl.List(pl.String)), "list[list[str]]"),
        (pl.Int32, "int"),
        (pl.UInt64, "int"),
        (pl.Float32, "float"),
        (pl.List(pl.Boolean), "list[bool]"),
        (pl.Array(pl.Int8, 3), "list[int]"),
    ],
)
def test_dtype_kind(dtype, kind):
    assert dtype_kind(dtype) == kind


def test_accepts():
    assert accepts("float", pl.Int64)  # integers are valid floats
    assert not accepts("int", pl.Float64)  # but not the other way round
    assert accepts("str", pl.Null)  # an all-null column scores to all-null
    assert not accepts("str", pl.Categorical)


SCHEMA = {"pred": pl.String, "answers": pl.List(pl.String), "n": pl.Int64}


def test_resolve_picks_first_complete_role_set():
    chosen = resolve_columns("m", [("passed",), ("n",)], SCHEMA, {})
    assert chosen == {"n": "n"}


def test_resolve_uses_mapping():
    chosen = resolve_columns("m", [("prediction", "gold")], SCHEMA,
                             {"prediction": "pred", "gold": "answers"})
    assert chosen == {"prediction": "pred", "gold": "answers"}


def test_missing_lists_missing_and_available():
    with pytest.raises(EvalframeError) as error:
        resolve_columns("m", [("prediction", "gold")], SCHEMA, {"prediction": "pred"})
    message = str(error.value)
    assert "missing gold='gold'" in message and "'answers'" in message


def test_override_narrows_kinds():
    with pytest.raises(EvalframeError, match="expected str"):
        resolve_columns("m", [("prediction",)], SCHEMA, {"prediction": "answers"},
                        {"prediction": ("str",)})


def test_every_role_has_kinds():
    assert all(role.kinds for role in ROLES.values())
