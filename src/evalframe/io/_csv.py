"""CSV files: types inferred from every row, empty text kept as ``""``, one name per column.

Rules:

- Column types are inferred from every row, in one streaming pass when the file is scanned
  (the read itself stays lazy): the file is read as text and a column is Int64 when every
  non-empty field is an integer that fits, else Float64 when every one is a number
  (``NaN``, ``inf`` included) and none an integer too large for Int64, else Boolean when
  every one is ``true``/``false`` (or ``True``, ``TRUE``...), else String. A ``10.5`` after
  a million integers makes the column Float64. A column with number-like text a number
  would not give back (``007``, ``+1``, `` 2``) stays text, so ids and labels keep their
  spelling. (polars' own ``infer_schema_length=None`` does the same job about four times
  slower.)
- An empty field of a text column is the empty string ``""`` (``csv_empty="string"``, the
  default), which is how pandas and Python's ``csv`` write empty strings; a CSV cannot tell
  an empty string from a missing one, so a null text value written to CSV reads back as
  ``""``. With ``csv_empty="null"`` empty text fields are null. Empty fields of number and
  boolean columns are null either way.
- A duplicated header name is an error (polars would silently rename the second one).
- Columns named in ``schema=`` are read as text and converted from it, so ``007`` read as
  ``"str"`` keeps its zeros.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._cast import convert

CSV_EMPTY = ("string", "null")
INTEGER = r"^[+-]?[0-9]+$"
#: The booleans a CSV column is inferred from (``schema={"x": "bool"}`` takes any case).
BOOLEAN_SPELLINGS = ["true", "false", "True", "False", "TRUE", "FALSE"]


def check_csv_empty(csv_empty: str) -> None:
    """Raise unless ``csv_empty`` is ``"string"`` or ``"null"``.

    >>> check_csv_empty("null")
    """
    if csv_empty not in CSV_EMPTY:
        raise EvalframeError(
            f"csv_empty={csv_empty!r}: expected 'string' (an empty CSV text field is \"\") "
            "or 'null' (it is missing)"
        )


def scan_csv(path: Path, *, csv_empty: str, text_columns: Collection[str]) -> pl.LazyFrame:
    """A lazy scan of a CSV file whose column types come from all of its rows.

    ``text_columns`` are read as text whatever they look like (``schema=`` converts them).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = path.write_text('pred,id\\n"",007\\nParis,8\\n')
    >>> scan_csv(path, csv_empty="string", text_columns=["id"]).collect().rows()
    [('', '007'), ('Paris', '8')]
    """
    header = read_header(path)
    _check_unique(path, header)
    text = pl.scan_csv(
        path,
        glob=False,
        infer_schema=False,
        empty_string_is_null=csv_empty == "null",
        raise_if_empty=True,
    )
    names = [name for name in text.collect_schema().names() if name not in text_columns]
    inferred = infer_types(text, names)
    if not inferred:
        return text
    string = pl.String()
    return text.with_columns(convert(n, string, dtype, True) for n, dtype in inferred.items())


def infer_types(text: pl.LazyFrame, names: list[str]) -> dict[str, pl.DataType]:
    """The dtype of each text column of ``names`` that is not String, from all of its rows.

    >>> frame = pl.LazyFrame({"n": ["1", "", "2"], "x": ["1", "1.5", None], "s": ["", "", ""]})
    >>> infer_types(frame, ["n", "x", "s"])
    {'n': Int64, 'x': Float64}
    """
    if not names:
        return {}
    query = text.select(_evidence(name).alias(str(index)) for index, name in enumerate(names))
    found = query.collect(engine="streaming").row(0)
    inferred: dict[str, pl.DataType] = {}
    for name, seen in zip(names, found, strict=True):
        if not seen["any"]:
            continue  # nothing but empty fields: text
        if seen["not_canonical"]:
            continue  # '007', '+1', ' 2': reading them as numbers would change the text
        if not seen["not_int"]:
            inferred[name] = pl.Int64()
        elif not (seen["not_float"] or seen["big_int"]):
            inferred[name] = pl.Float64()
        elif not seen["not_bool"]:
            inferred[name] = pl.Boolean()
    return inferred


def _evidence(name: str) -> pl.Expr:
    """Whether column ``name`` has any value, any that is not an integer, not a number..."""
    column = pl.col(name)
    present = column.is_not_null() & (column != "")
    integer = column.cast(pl.Int64, strict=False).is_not_null()
    number = column.cast(pl.Float64, strict=False)
    too_big = present & ~integer & (number.abs() >= 2.0**63)  # only these need the regex
    return pl.struct(
        any=present.any(),
        not_int=(present & ~integer).any(),
        not_float=(present & number.is_null()).any(),
        big_int=column.filter(too_big).str.contains(INTEGER).any(),
        not_bool=(present & ~column.is_in(BOOLEAN_SPELLINGS)).any(),
        not_canonical=(present & column.str.contains(_NOT_CANONICAL)).any(),
    )


#: Number-like text that a number would not give back: a leading zero before a digit
#: (``007``, ``-01``), a leading ``+``, surrounding whitespace. Such a column stays text:
#: ids and labels keep their spelling (``'01' != '1'``).
_NOT_CANONICAL = r"^[+-]?0[0-9]|^\+|^\s|\s$"


def read_header(path: Path) -> list[str]:
    """The column names on the first line of a CSV file (a leading BOM dropped)."""
    with _reader(path) as reader:
        return next(reader, [])


def _check_unique(path: Path, header: list[str]) -> None:
    positions: dict[str, int] = {}
    for position, name in enumerate(header, 1):
        if name in positions:
            raise EvalframeError(
                f"cannot read {str(path)!r}: the header names column {name!r} twice (columns "
                f"{positions[name]} and {position}); rename one so each column has one name"
            )
        positions[name] = position


def csv_locator(path: Path) -> Callable[[int], str]:
    """A function naming a data row by its line in the file (quoted fields may span lines).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = path.write_text('a,b\\n"two\\nlines",1\\nx,2\\n')
    >>> csv_locator(path)(1)
    'row 1 (line 4)'
    """

    def locate(row: int) -> str:
        with _reader(path) as reader:
            next(reader, None)
            start = reader.line_num + 1
            for index, _ in enumerate(reader):
                if index == row:
                    return f"row {row} (line {start})"
                start = reader.line_num + 1
        return f"row {row}"

    return locate


def csv_problem(path: Path) -> str | None:
    """After polars failed on a CSV file: its first line that is not UTF-8 or has too many
    fields, or None."""
    problem = _utf8_problem(path)
    if problem:
        return problem
    with _reader(path) as reader:
        width = len(next(reader, []))
        start = reader.line_num + 1
        for fields in reader:
            if len(fields) > width:
                return f"line {start} has {len(fields)} fields but the header names {width}"
            start = reader.line_num + 1
    return None


def _utf8_problem(path: Path) -> str | None:
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                return f"line {number} is not valid UTF-8 (byte {error.start + 1} of the line)"
    return None


@contextmanager
def _reader(path: Path) -> Iterator[Iterator[list[str]]]:
    """A ``csv.reader`` over ``path`` that takes fields of any size (model outputs are long)."""
    limit = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            yield csv.reader(handle)
    except UnicodeDecodeError as error:
        problem = _utf8_problem(path) or "it is not UTF-8 text"
        raise EvalframeError(f"cannot read {str(path)!r}: {problem}") from error
    except csv.Error as error:
        raise EvalframeError(f"cannot read {str(path)!r} as CSV: {error}") from error
    finally:
        csv.field_size_limit(limit)
