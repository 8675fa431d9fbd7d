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


def test_a_mapped_column_that_is_missing_is_an_error_naming_the_closest():
    import evalframe as ef

    frame = pl.DataFrame({"n": [4, 4], "num_correct": [4, 4], "passed": [[True], [False]]})
    # a typo never falls back to another role set (here: passed, which would give 0.5)
    with pytest.raises(EvalframeError, match=r"role 'c' is mapped to column 'num_corect'.*"
                                             r"did you mean 'num_correct'"):
        ef.score(frame, ["pass@1"], columns={"c": "num_corect"})
    # even for a role the requested metrics do not read
    with pytest.raises(EvalframeError, match="role 'gold' is mapped to column 'answers'"):
        ef.score(frame, ["pass@1"], columns={"gold": "answers"})
    assert ef.score(frame, ["pass@1"], columns={"c": "num_correct"})["pass@1"].to_list() == [
        1.0, 1.0
    ]


def test_an_incomplete_mapped_role_set_never_falls_back():
    import evalframe as ef

    # c is mapped, but its partner n is missing: not silently scored from `passed`
    frame = pl.DataFrame({"num_correct": [4, 4], "passed": [[True, False], [False, False]]})
    with pytest.raises(EvalframeError, match=r"you mapped c='num_correct'.*missing: n='n'"):
        ef.score(frame, ["pass@1"], columns={"c": "num_correct"})
