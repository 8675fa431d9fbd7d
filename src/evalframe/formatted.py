"""evalframe's tables formatted for people: values with their intervals, as Markdown,
LaTeX, HTML or CSV.

:func:`table` takes a table of :func:`evalframe.aggregate`, :func:`evalframe.compare`,
:func:`evalframe.judge.report`, :func:`evalframe.judge.ratings` or
:func:`evalframe.judge.audit` and returns a
:class:`FormattedTable`: one cell per number with its interval (``58.3% [44.9, 70.6]``,
percent where the metric is a rate, which its signature says), the counts that qualify it
(n, missing answers, null rows) in view, and what the intervals are in a note. It shows
itself as HTML in a notebook (through great_tables) and as Markdown in a terminal.

>>> import polars as pl, evalframe as ef
>>> scored = ef.score(pl.DataFrame({"model": ["a", "a", "b", "b"], "prediction": ["x", "y",
...                                 "x", "x"], "gold": ["x"] * 4}), ["exact_match"])
>>> print(ef.table(ef.aggregate(scored, by="model")).to_markdown())
| model | metric | score | n | missing |
|---|---|---|---|---|
| a | exact_match | 50.0% [9.5, 90.5] | 2 | 0 |
| b | exact_match | 100.0% [34.2, 100.0] | 2 | 0 |
<BLANKLINE>
95% intervals (wilson); missing answers counted as wrong
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.stats.signature import signature_fields

__all__ = ["FormattedTable", "table"]

_MISSING_WORDS = {
    "wrong": "missing answers counted as wrong",
    "exclude": "missing answers left out",
    "error": "missing answers refused",
    "unknown": "missing answers not known",
}
#: Columns of each kind of table that are not grouping keys.
_NOT_KEYS = {
    "aggregate": {"metric", "k", "n", "n_missing", "n_null", "value", "stderr", "ci_low",
                  "ci_high", "n_clusters", "signature", "reference_signature", "n_tasks"},
    "compare": {"model", "baseline", "metric", "n_pairs", "n_null_pairs", "n_unmatched_model",
                "n_unmatched_baseline", "value_model", "value_baseline", "diff", "stderr",
                "ci_low", "ci_high", "p_value", "p_adjusted", "correlation", "method",
                "signature"},
    "report": {"wins_a", "wins_b", "ties", "inconsistent", "errors", "n_valid", "win_rate_a",
               "stderr", "ci_low", "ci_high", "n_clusters", "position_bias", "n_decisive",
               "signature"},
    "ratings": {"model", "rating", "stderr", "ci_low", "ci_high", "n_battles", "wins",
                "losses", "ties", "bootstrap_dropped", "signature"},
    "audit": {"judge", "measure", "value", "ci_low", "ci_high", "n", "n_excluded", "signature"},
}
#: The rank columns (evalframe.ranks, judge.ratings): never keys.
for _columns in _NOT_KEYS.values():
    _columns.update({"rank", "rank_low", "rank_high", "tied_with"})
#: The judge audit's measures that are shares (shown as percents); the others keep units.
_AUDIT_RATES = ("position_bias", "flip_rate", "self_win_rate", "agreement")
#: The judge audit's measures that are differences (shown signed).
_AUDIT_SIGNED = ("length_bias", "self_preference")


@dataclass(frozen=True)
class FormattedTable:
    """A table of formatted cells (``frame``, all strings), its title and its notes."""

    frame: pl.DataFrame
    title: str
    notes: tuple[str, ...] = ()

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table, then the notes."""
        def cell(value: str | None) -> str:
            return "" if value is None else value.replace("|", "\\|").replace("\n", " ")

        header = "| " + " | ".join(cell(c) for c in self.frame.columns) + " |"
        rule = "|" + "---|" * self.frame.width
        rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in self.frame.iter_rows()]
        text = "\n".join([header, rule, *rows])
        return text + ("\n\n" + "\n".join(self.notes) if self.notes else "")

    def to_csv(self) -> str:
        """The formatted cells as CSV (the notes are not part of it)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.frame.columns)
        writer.writerows(self.frame.iter_rows())
        return buffer.getvalue()

    def gt(self) -> Any:
        """The table as a ``great_tables.GT`` (title, notes as source notes)."""
        try:
            from great_tables import GT
        except ImportError:  # pragma: no cover - the extra is installed in the tests
            raise EvalframeError(
                'HTML and LaTeX tables need great_tables: pip install "evalframe[plot]"'
            ) from None
        view = GT(self.frame).tab_header(title=self.title)
        for note in self.notes:
            view = view.tab_source_note(note)
        return view

    def to_html(self) -> str:
        """A self-contained HTML table (its style in the fragment), by great_tables."""
        return self.gt().as_raw_html()

    def to_latex(self) -> str:
        """A LaTeX ``table`` (booktabs), by great_tables."""
        return self.gt().as_latex()

    def render(self, form: str) -> str:
        """The table as ``form``: ``"markdown"``, ``"latex"``, ``"html"`` or ``"csv"``."""
        writers = {"markdown": self.to_markdown, "latex": self.to_latex,
                   "html": self.to_html, "csv": self.to_csv}
        if form not in writers:
            raise EvalframeError(
                f"a formatted table is rendered as {', '.join(writers)}, not {form!r}"
            )
        text = writers[form]()
        return text if text.endswith("\n") else text + "\n"

    def save(self, path: str | Path) -> Path:
        """Write the table to ``path``: ``.md``, ``.tex``, ``.html`` or ``.csv``."""
        path = Path(path)
        writers = {".md": self.to_markdown, ".markdown": self.to_markdown,
                   ".tex": self.to_latex, ".html": self.to_html, ".htm": self.to_html,
                   ".csv": self.to_csv}
        writer = writers.get(path.suffix.lower())
        if writer is None:
            raise EvalframeError(
                f"{path}: a formatted table is written as .md, .tex, .html or .csv"
            )
        text = writer()
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        return self.to_markdown()


def _is_rate(signature: str | None) -> bool:
    """Whether the metric the signature names scores in [0, 1] (shown as a percent)."""
    from evalframe.metrics.registry import resolve

    name = signature_fields(signature).get("metric")
    if not name:
        return False
    try:
        spec, _ = resolve(name)
    except EvalframeError:
        return False
    return tuple(spec.bounds) == (0.0, 1.0)


def _number(value: float | None, percent: bool, digits: int, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    shown = value * 100 if percent else value
    return f"{shown:+.{digits}f}" if sign else f"{shown:.{digits}f}"


def _with_interval(value: float | None, low: float | None, high: float | None, *,
                   percent: bool, digits: int, sign: bool = False) -> str:
    text = _number(value, percent, digits, sign)
    if percent and value is not None and text != "—":
        text += " pts" if sign else "%"
    if low is None or high is None:
        return text
    return (f"{text} [{_number(low, percent, digits, sign)}, "
            f"{_number(high, percent, digits, sign)}]")


def _kind(frame: pl.DataFrame) -> str:
    columns = set(frame.columns)
    if {"diff", "value_model", "baseline"} <= columns:
        return "compare"
    if {"win_rate_a", "position_bias"} <= columns:
        return "report"
    if {"rating", "model"} <= columns:
        return "ratings"
    if {"measure", "value", "ci_low", "ci_high", "n", "n_excluded"} <= columns:
        return "audit"
    if {"metric", "value", "ci_low", "ci_high", "n"} <= columns:
        return "aggregate"
    raise EvalframeError(
        "table: expected a table of evalframe.aggregate, compare, judge.report, "
        f"judge.ratings or judge.audit; its columns are {', '.join(frame.columns)}"
    )


def _interval_note(signatures: Sequence[str | None]) -> list[str]:
    fields = [signature_fields(text) for text in signatures]
    intervals = sorted({f["ci"] for f in fields if f.get("ci")})
    missing = sorted({f["missing"] for f in fields if f.get("missing")})
    notes = []
    if len(intervals) == 1:
        method, _, level = intervals[0].rpartition("-")
        try:
            notes.append(f"{float(level):.0%} intervals ({method})")
        except ValueError:
            notes.append(f"intervals: {intervals[0]}")
    elif intervals:
        parts = [interval.rpartition("-") for interval in intervals]
        levels = {level for _, _, level in parts}
        try:
            level = f"{float(levels.pop()):.0%} " if len(levels) == 1 else ""
        except ValueError:
            level = ""
        methods = ", ".join(method if level else f"{method} {lvl}" for method, _, lvl in parts)
        notes.append(f"{level}intervals ({methods}: by metric)")
    if len(missing) == 1:
        notes.append(_MISSING_WORDS.get(missing[0], f"missing answers: {missing[0]}"))
    elif missing:
        notes.append("missing answers: " + ", ".join(missing) + " (the policies differ)")
    return ["; ".join(notes)] if notes else []


def table(
    result: pl.DataFrame | pl.LazyFrame,
    *,
    wide: bool = False,
    percent: bool | None = None,
    digits: int | None = None,
    title: str | None = None,
) -> FormattedTable:
    """A formatted view of ``aggregate``, ``compare``, ``judge.report``, ``judge.ratings`` or
    ``judge.audit``.

    Parameters
    ----------
    result
        The table to format (which one it is, is read from its columns).
    wide
        For an aggregate: one row per value of the first grouping key (the model) and one
        column per combination of the other keys and the metric (model x task).
    percent
        Show rates as percents; None (default): where the metric scores in [0, 1], as its
        signature says.
    digits
        Decimals (default 1 for percents, 3 otherwise; 0 for ratings).
    title
        The table's title.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> frame = pl.DataFrame({"model": ["a", "b"] * 2, "task": ["t1"] * 2 + ["t2"] * 2,
    ...                       "prediction": ["x", "x", "y", "x"], "gold": ["x"] * 4})
    >>> wide = ef.table(ef.aggregate(ef.score(frame, ["exact_match"]), by=["model", "task"]),
    ...                 wide=True)
    >>> wide.frame.columns
    ['model', 't1 · exact_match', 't2 · exact_match']
    """
    frame = result.collect() if isinstance(result, pl.LazyFrame) else result
    if not isinstance(frame, pl.DataFrame):
        raise EvalframeError(f"table: expected a polars DataFrame, got {type(frame).__name__}")
    kind = _kind(frame)
    if wide and kind != "aggregate":
        raise EvalframeError("table: wide=True is for a table of evalframe.aggregate")
    signatures = frame["signature"].to_list() if "signature" in frame.columns else \
        [None] * frame.height
    rates = [_is_rate(text) if percent is None else percent for text in signatures]
    if kind == "report":  # the keys come first; the policy's own columns follow the counts
        keys = frame.columns[: frame.columns.index("wins_a")]
    else:
        keys = [column for column in frame.columns if column not in _NOT_KEYS[kind]]
    rows = frame.to_dicts()
    notes = _interval_note(signatures)
    if kind == "aggregate":
        return _aggregate(frame, rows, keys, rates, digits, wide, notes, title)
    if kind == "compare":
        return _compare(frame, rows, keys, rates, digits, notes, title)
    if kind == "report":
        return _report(rows, keys, digits, notes, title, percent)
    if kind == "audit":
        return _audit(rows, keys, digits, notes, title, percent)
    return _ratings(rows, keys, digits, title)


def _digits(digits: int | None, rate: bool) -> int:
    return digits if digits is not None else (1 if rate else 3)


def _aggregate(frame: pl.DataFrame, rows: list[dict], keys: list[str], rates: list[bool],
               digits: int | None, wide: bool, notes: list[str],
               title: str | None) -> FormattedTable:
    cells = [
        _with_interval(row["value"], row["ci_low"], row["ci_high"], percent=rate,
                       digits=_digits(digits, rate))
        for row, rate in zip(rows, rates, strict=True)
    ]
    show_null = "n_null" in frame.columns and (frame["n_null"].fill_null(0) > 0).any()
    if not wide:
        columns: dict[str, list[str | None]] = {
            key: [_text(row[key]) for row in rows] for key in keys
        }
        columns["metric"] = [row["metric"] for row in rows]
        columns["score"] = cells
        columns["n"] = [_text(row["n"]) for row in rows]
        if "n_missing" in frame.columns:
            columns["missing"] = [_text(row["n_missing"], "unknown") for row in rows]
        if show_null:
            columns["null"] = [_text(row["n_null"]) for row in rows]
        return FormattedTable(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)),
                              title or "Scores", tuple(notes))
    if not keys:
        raise EvalframeError("table: wide=True needs a grouping key (aggregate by=...)")
    row_key, column_keys = keys[0], keys[1:]
    grid: dict[str, dict[str, str]] = {}
    headers: dict[str, None] = {}
    for row, cell in zip(rows, cells, strict=True):
        header = " · ".join([*(_text(row[key]) or "null" for key in column_keys), row["metric"]])
        headers[header] = None
        name = _text(row[row_key]) or "null"
        if header in grid.setdefault(name, {}):
            raise EvalframeError(
                f"table: two rows for {row_key}={name!r} and {header!r}; aggregate by every "
                "key that tells them apart"
            )
        grid[name][header] = cell
    counts = sorted({_text(row["n"]) for row in rows})
    notes = [*notes, f"n = {counts[0]}" if len(counts) == 1 else
             "n differs by cell (see the long table)"]
    for column, what in (("n_missing", "missing answers"), ("n_null", "rows without a score")):
        cells = [
            " · ".join([_text(row[row_key]) or "null",
                        *(_text(row[k]) or "null" for k in column_keys), row["metric"]])
            + f": {row[column]}"
            for row in rows if row.get(column)
        ]
        if cells:
            shown = "; ".join(cells[:5]) + (f"; and {len(cells) - 5} more cell(s)"
                                             if len(cells) > 5 else "")
            notes.append(f"{what}: {shown}")
    columns = {row_key: list(grid)} | {
        header: [grid[name].get(header, "—") for name in grid] for header in headers
    }
    return FormattedTable(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)),
                          title or "Scores", tuple(notes))


def _text(value: Any, null: str | None = None) -> str | None:
    return null if value is None else str(value)


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else percent / 100


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _compare(frame: pl.DataFrame, rows: list[dict], keys: list[str], rates: list[bool],
             digits: int | None, notes: list[str], title: str | None) -> FormattedTable:
    columns: dict[str, list[str | None]] = {key: [_text(row[key]) for row in rows]
                                            for key in keys}
    columns["model"] = [f"{row['model']} vs {row['baseline']}" for row in rows]
    columns["metric"] = [row["metric"] for row in rows]
    columns["difference"] = [
        _with_interval(row["diff"], row["ci_low"], row["ci_high"], percent=rate,
                       digits=_digits(digits, rate), sign=True)
        for row, rate in zip(rows, rates, strict=True)
    ]
    columns["p"] = [_p(row["p_value"]) for row in rows]
    if "p_adjusted" in frame.columns and frame["p_adjusted"].is_not_null().any():
        columns["p adjusted"] = [_p(row["p_adjusted"]) for row in rows]
    columns["pairs"] = [_text(row["n_pairs"]) for row in rows]
    columns["test"] = [_text(row["method"]) for row in rows]
    return FormattedTable(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)),
                          title or "Paired differences (model - baseline)", tuple(notes))


def _report(rows: list[dict], keys: list[str], digits: int | None, notes: list[str],
            title: str | None, percent: bool | None) -> FormattedTable:
    rate = True if percent is None else percent
    columns: dict[str, list[str | None]] = {key: [_text(row[key]) for row in rows]
                                            for key in keys}
    if rows and "win_rate_ci_low" in rows[0]:  # a policy with a headline (AlpacaEval's)
        columns["win rate (B)"] = [
            _with_interval(_fraction(row["win_rate"]), _fraction(row["win_rate_ci_low"]),
                           _fraction(row["win_rate_ci_high"]), percent=rate,
                           digits=_digits(digits, rate)) for row in rows
        ]
    if rows and "length_controlled_winrate" in rows[0]:  # AlpacaEval's LC win rate
        columns["LC win rate (B)"] = [
            _with_interval(_fraction(row["length_controlled_winrate"]),
                           _fraction(row["lc_ci_low"]), _fraction(row["lc_ci_high"]),
                           percent=rate, digits=_digits(digits, rate)) for row in rows
        ]
    columns["win rate (A)"] = [
        _with_interval(row["win_rate_a"], row["ci_low"], row["ci_high"], percent=rate,
                       digits=_digits(digits, rate)) for row in rows
    ]
    columns["A / B / tie"] = [f"{row['wins_a']} / {row['wins_b']} / {row['ties']}"
                              for row in rows]
    columns["inconsistent"] = [_text(row["inconsistent"]) for row in rows]
    columns["errors"] = [_text(row["errors"]) for row in rows]
    columns["first position chosen"] = [
        _number(row["position_bias"], rate, _digits(digits, rate))
        + ("%" if rate and row["position_bias"] is not None else "") for row in rows
    ]
    return FormattedTable(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)),
                          title or "Judge report", tuple(notes))


def _rank(row: dict) -> str:
    """A rank with its interval where there is one: ``7 (7-8)``."""
    low, high = row.get("rank_low"), row.get("rank_high")
    if low is None or high is None or low == high:
        return _text(row["rank"])
    return f"{row['rank']} ({low}\u2013{high})"


def _ratings(rows: list[dict], keys: list[str], digits: int | None,
             title: str | None) -> FormattedTable:
    places = 0 if digits is None else digits
    columns: dict[str, list[str | None]] = {key: [_text(row[key]) for row in rows]
                                            for key in keys}
    if rows and "rank" in rows[0]:
        columns["rank"] = [_rank(row) for row in rows]
    columns["model"] = [row["model"] for row in rows]
    columns["rating"] = [
        _with_interval(row["rating"], row["ci_low"], row["ci_high"], percent=False,
                       digits=places) for row in rows
    ]
    columns["battles"] = [_text(row.get("n_battles")) for row in rows]
    fields = signature_fields(rows[0].get("signature")) if rows else {}
    notes = ("Bradley-Terry ratings (Elo scale), bootstrap intervals"
             + (f" ({fields['ci']})" if fields.get("ci") else ""),)
    return FormattedTable(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)),
                          title or "Ratings", notes)


def _audit(rows: list[dict], keys: list[str], digits: int | None, notes: list[str],
           title: str | None, percent: bool | None) -> FormattedTable:
    """The judge audit: shares as percents, differences signed, kappas as they are."""
    columns: dict[str, list[str | None]] = {key: [_text(row[key]) for row in rows]
                                            for key in keys}
    columns["judge"] = [_text(row["judge"]) for row in rows]
    columns["measure"] = [row["measure"] for row in rows]
    values = []
    for row in rows:
        rate = row["measure"] in _AUDIT_RATES if percent is None else percent
        values.append(_with_interval(row["value"], row["ci_low"], row["ci_high"], percent=rate,
                                     digits=_digits(digits, rate),
                                     sign=row["measure"] in _AUDIT_SIGNED))
    columns["value"] = values
    columns["n"] = [_text(row["n"]) for row in rows]
    columns["excluded"] = [_text(row["n_excluded"], "—") for row in rows]
    return FormattedTable(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)),
                          title or "Judge audit", tuple(notes))
