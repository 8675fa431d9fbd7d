"""What a gate decided, written for people and for CI systems: a one-screen summary,
Markdown (a job summary, a pull-request comment) and JSON.

Rows are listed worst first: the regressions, then the underpowered groups, then the
groups that passed (at most :data:`SHOWN` rows; the rest are counted).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from evalframe.stats.gate import GateResult

#: Rows listed in the summary and the Markdown before the rest are only counted.
SHOWN = 20

_HEADLINE = {
    "passed": "PASSED",
    "regressed": "REGRESSED",
    "underpowered": "UNDERPOWERED",
}
_ORDER = {"regressed": 0, "underpowered": 1, "passed": 2}


def _number(value: float | None, digits: int = 4, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _headline(result: GateResult) -> str:
    counts = result.table["status"].value_counts()
    count = dict(zip(counts["status"].to_list(), counts["count"].to_list(), strict=True))
    groups = result.table.height
    if result.status == "regressed":
        what = f"{count['regressed']} of {groups} comparison(s) regressed significantly"
    elif result.status == "underpowered":
        what = (f"no significant regression, but {count['underpowered']} of {groups} "
                f"comparison(s) cannot detect a regression of {result.mde:g} at power "
                f"{result.power:g}")
    else:
        what = (f"no significant regression in {groups} comparison(s), each able to detect "
                f"{result.mde:g} at power {result.power:g}")
    return f"evalframe gate: {_HEADLINE[result.status]} (exit {result.exit_code}): {what}"


def _design(result: GateResult) -> str:
    correction = (f"{result.correction} over {result.table['p_value'].is_not_null().sum()} "
                  "comparison(s)" if result.correction else "no correction")
    return (f"one-sided tests of a regression at alpha {result.alpha:g} ({correction}); "
            f"{result.ci:.0%} intervals of candidate - baseline; power for a regression of "
            f"{result.mde:g}")


def _rows(result: GateResult) -> tuple[list[list[str]], int]:
    table = result.table.with_columns(
        pl.col("status").replace_strict(_ORDER, return_dtype=pl.Int64).alias("__order")
    ).sort("__order", maintain_order=True)
    keys = list(result.by)
    header = [*keys, "metric", "n", "candidate", "baseline", "diff",
              f"{result.ci:.0%} interval", "p (adj.)", "power", "detectable", "status"]
    rows = [header]
    for row in table.head(SHOWN).iter_rows(named=True):
        rows.append([
            *(str(row[key]) for key in keys),
            row["metric"],
            str(row["n_pairs"]),
            _number(row["value_candidate"]),
            _number(row["value_baseline"]),
            _number(row["diff"], sign=True),
            f"[{_number(row['ci_low'], sign=True)}, {_number(row['ci_high'], sign=True)}]",
            _p(row["p_adjusted"]),
            _number(row["power"], 2),
            _number(row["detectable"]),
            row["status"] + (f" ({row['reason']})" if row["reason"] else ""),
        ])
    return rows, max(table.height - SHOWN, 0)


def summary(result: GateResult) -> str:
    """The one-screen text summary."""
    rows, more = _rows(result)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [_headline(result), _design(result), ""]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths,
                                                                       strict=True)).rstrip())
    if more:
        lines.append(f"... and {more} more row(s) (the whole table: --format json or -o)")
    unmatched = int(result.table["n_unmatched_candidate"].sum()
                    + result.table["n_unmatched_baseline"].sum())
    nulls = int(result.table["n_null_pairs"].sum())
    if unmatched or nulls:
        lines.append(f"note: {unmatched} item(s) present in one dump only and {nulls} pair(s) "
                     "with a null score were not compared")
    return "\n".join(lines) + "\n"


def markdown(result: GateResult) -> str:
    """The summary as Markdown."""
    rows, more = _rows(result)
    lines = [f"**{_headline(result)}**", "", _design(result), ""]
    lines.append("| " + " | ".join(rows[0]) + " |")
    lines.append("|" + "---|" * len(rows[0]))
    for row in rows[1:]:
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    if more:
        lines.append("")
        lines.append(f"... and {more} more row(s)")
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def as_json(result: GateResult) -> str:
    """The decision, its options and every row, as JSON."""
    rows = [{key: _plain(value) for key, value in row.items()}
            for row in result.table.iter_rows(named=True)]
    document = {
        "status": result.status,
        "exit_code": result.exit_code,
        "mde": result.mde,
        "alpha": result.alpha,
        "power": result.power,
        "correction": result.correction,
        "ci": result.ci,
        "by": list(result.by),
        "regressed": int((result.table["status"] == "regressed").sum()),
        "underpowered": int((result.table["status"] == "underpowered").sum()),
        "rows": rows,
    }
    return json.dumps(document, indent=2, default=str) + "\n"
