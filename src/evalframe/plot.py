"""Charts of evalframe's own tables, as Altair (Vega-Lite) charts.

Each function takes a table evalframe returns (``aggregate``, ``compare``, the judge's
``report``, ``ratings`` and ``win_rate_matrix``, or a scored frame) and returns an
``altair`` chart: it renders in Jupyter, VS Code and browsers, and exports offline to SVG,
PNG or HTML (``chart.save("scores.svg")``, through ``vl-convert-python``). What a number
is (its metric, interval method and missing-answer policy) is read from the table's
``signature`` column, never guessed from a column name; every chart states n, the
interval and the missing-answer policy in its tooltip and subtitle.

Needs the ``plot`` extra: ``pip install "evalframe[plot]"``.

>>> import polars as pl
>>> import evalframe as ef
>>> from evalframe import plot
>>> scored = ef.score(pl.DataFrame({"model": ["a", "a", "b", "b"], "task": ["t"] * 4,
...                                 "n": [5, 5, 5, 5], "c": [1, 2, 4, 5]}), ["pass@1"])
>>> spec = plot.scores(ef.aggregate(scored, by=["model", "task"])).to_dict()
>>> [layer["mark"]["type"] for layer in spec["layer"]]
['rule', 'point']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.stats.signature import signature_fields

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "audit",
    "calibration",
    "comparison",
    "curve",
    "distribution",
    "judge_bias",
    "length_controlled",
    "ratings",
    "scores",
    "win_rates",
]

#: Columns of an aggregate table that are not grouping keys.
_AGGREGATE_COLUMNS = (
    "metric", "k", "n", "n_missing", "n_null", "value", "stderr", "ci_low", "ci_high",
    "n_clusters", "signature", "reference_signature", "n_tasks",
)
#: Columns of a compare table that are not grouping keys.
_COMPARE_COLUMNS = (
    "model", "baseline", "metric", "n_pairs", "n_null_pairs", "n_unmatched_model",
    "n_unmatched_baseline", "value_model", "value_baseline", "diff", "stderr", "ci_low",
    "ci_high", "p_value", "p_adjusted", "correlation", "method", "signature",
)
_MISSING_WORDS = {
    "wrong": "missing answers counted as wrong",
    "exclude": "missing answers left out",
    "error": "no missing answers (refused)",
    "unknown": "missing answers not known",
}


def _altair() -> Any:
    try:
        import altair
    except ImportError:  # pragma: no cover - the extra is installed in the tests
        raise EvalframeError(
            'charts need Altair: pip install "evalframe[plot]" (altair, vl-convert-python)'
        ) from None
    return altair


def _frame(table: Any, what: str) -> pl.DataFrame:
    if isinstance(table, pl.LazyFrame):
        table = table.collect()
    if not isinstance(table, pl.DataFrame):
        raise EvalframeError(f"{what}: expected a polars DataFrame, got {type(table).__name__}")
    return table


def _require(frame: pl.DataFrame, columns: Sequence[str], what: str, source: str) -> None:
    absent = [column for column in columns if column not in frame.columns]
    if absent:
        raise EvalframeError(
            f"{what}: the table has no column(s) {', '.join(map(repr, absent))}; expected "
            f"{source} (its columns: {', '.join(frame.columns)})"
        )


def _described(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``interval`` and ``missing`` columns read from its signatures."""
    if "signature" not in frame.columns:
        return frame.with_columns(interval=pl.lit(None, pl.String), missing=pl.lit(None, pl.String))
    fields = [signature_fields(text) for text in frame["signature"].to_list()]
    return frame.with_columns(
        interval=pl.Series([f.get("ci") for f in fields], dtype=pl.String),
        missing=pl.Series(
            [_MISSING_WORDS.get(f.get("missing", ""), f.get("missing")) for f in fields],
            dtype=pl.String,
        ),
    )


def _one_or_mixed(values: pl.Series, mixed: str) -> str | None:
    distinct = [value for value in values.unique(maintain_order=True).to_list() if value]
    if not distinct:
        return None
    return distinct[0] if len(distinct) == 1 else mixed


def _subtitle(frame: pl.DataFrame, n_column: str = "n") -> list[str]:
    """What every number of the chart is: intervals, missing answers, n."""
    lines = []
    interval = _one_or_mixed(frame["interval"], "mixed")
    if interval == "mixed":
        lines.append("interval methods differ by metric (see tooltips)")
    elif interval:
        method, _, level = interval.rpartition("-")
        try:
            lines.append(f"{float(level):.0%} intervals ({method})")
        except ValueError:
            lines.append(f"intervals: {interval}")
    missing = _one_or_mixed(frame["missing"], "missing-answer policies differ (see tooltips)")
    if missing:
        lines.append(missing)
    if n_column in frame.columns and frame.height:
        low, high = frame[n_column].min(), frame[n_column].max()
        lines.append(f"n = {low}" if low == high else f"n = {low} to {high}")
    return ["; ".join(lines)] if lines else []


def _chart_data(frame: pl.DataFrame, tooltip: Sequence[Any], *extra: str) -> pl.DataFrame:
    """Only the columns the chart reads (its tooltips, encodings and ``extra``), numbers
    rounded to 5 decimals: a chart embeds its data, and a report holds many charts."""
    wanted = [*(t.split(":")[0] if isinstance(t, str) else t.to_dict().get("field")
                for t in tooltip), *extra]
    columns = [column for column in dict.fromkeys(wanted) if column in frame.columns]
    return frame.select(columns).with_columns(pl.col(pl.Float64).round(5))


def _keys(frame: pl.DataFrame, known: Sequence[str]) -> list[str]:
    return [column for column in frame.columns if column not in known and column not in (
        "interval", "missing")]


def _title(alt: Any, title: str | None, default: str, subtitle: list[str]) -> Any:
    return alt.TitleParams(text=title or default, subtitle=subtitle, anchor="start")


def _panels(frame: pl.DataFrame, fields: Sequence[str]) -> tuple[pl.DataFrame, list[str]]:
    """``frame`` with a ``panel`` column naming its facet (the ``fields`` that vary, joined
    by " · "), and those fields; no panel where none varies."""
    varying = [field for field in dict.fromkeys(fields) if frame[field].n_unique() > 1]
    if not varying:
        return frame, []
    panel = pl.concat_str([pl.col(field).cast(pl.String).fill_null("null") for field in varying],
                          separator=" · ")
    return frame.with_columns(panel=panel), varying


def _facet(chart: Any, alt: Any, frame: pl.DataFrame, varying: list[str],
           columns: int | None) -> Any:
    """One panel per value of ``panel`` (only the combinations present: no empty panel),
    wrapped ``columns`` to a row, each with its own value axis."""
    if not varying:
        return chart
    count = frame["panel"].n_unique()
    wrap = columns or min(count, 2 if count == 4 else 3)
    return chart.facet(
        facet=alt.Facet("panel:N", title=" · ".join(varying), sort=None,
                        header=alt.Header(labelFontWeight="bold")),
        columns=wrap,
    ).resolve_scale(x="independent")


def scores(
    table: pl.DataFrame,
    *,
    y: str | None = None,
    facet: str | Sequence[str] | None = None,
    columns: int | None = None,
    title: str | None = None,
) -> alt.Chart:
    """A forest plot of ``aggregate``'s scores with their confidence intervals.

    One point per row at ``value`` with a bar from ``ci_low`` to ``ci_high``. The value
    axis is not forced to zero (intervals would collapse to dots). By default the rows are
    the first grouping key (``model`` where there is one), and there is one panel per
    combination of the other keys and the metric that occurs (``task`` · ``metric``), each
    with its own value axis.

    Parameters
    ----------
    table
        A table of :func:`evalframe.aggregate` (or :func:`evalframe.group_tasks`).
    y
        The column of each panel's rows.
    facet, columns
        The column(s) that make the panels (default: the other grouping keys, then
        ``metric``), and how many panels a row holds.
    title
        The chart's title.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> scored = ef.score(pl.DataFrame({"model": ["a", "b"] * 3, "c": [1, 2, 0, 2, 1, 2],
    ...                                 "n": [2] * 6}), ["pass@1"])
    >>> spec = scores(ef.aggregate(scored, by="model")).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['rule', 'point']
    >>> spec["layer"][0]["encoding"]["x"]["scale"]["zero"]
    False
    """
    alt = _altair()
    frame = _described(_frame(table, "scores"))
    _require(frame, ("metric", "value", "ci_low", "ci_high", "n"), "scores",
             "a table of evalframe.aggregate")
    keys = _keys(frame, _AGGREGATE_COLUMNS)
    y = y or ("model" if "model" in keys else (keys[0] if keys else "metric"))
    fields = ([facet] if isinstance(facet, str) else list(facet)) if facet is not None else [
        *(key for key in keys if key != y), *(["metric"] if y != "metric" else [])]
    frame, varying = _panels(frame, fields)
    tooltip = [
        *(alt.Tooltip(f"{key}:N") for key in keys), alt.Tooltip("metric:N"),
        alt.Tooltip("value:Q", format=".4f"), alt.Tooltip("ci_low:Q", format=".4f"),
        alt.Tooltip("ci_high:Q", format=".4f"), alt.Tooltip("n:Q"),
        *([alt.Tooltip("n_missing:Q")] if "n_missing" in frame.columns else []),
        alt.Tooltip("interval:N"), alt.Tooltip("missing:N"),
    ]
    base = alt.Chart(_chart_data(frame, tooltip, y, "panel")).encode(
        y=alt.Y(f"{y}:N", title=y, sort=None), tooltip=tooltip
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", title="value", scale=alt.Scale(zero=False)), x2="ci_high:Q"
    )
    points = base.mark_point(filled=True, size=60).encode(
        x=alt.X("value:Q", scale=alt.Scale(zero=False))
    )
    chart = _facet(alt.layer(bars, points), alt, frame, varying, columns)
    return chart.properties(title=_title(alt, title, "Scores", _subtitle(frame)))


def curve(
    table: pl.DataFrame,
    *,
    color: str | None = None,
    facet: str | Sequence[str] | None = None,
    columns: int | None = None,
    title: str | None = None,
) -> alt.Chart:
    """pass@k, maj@k (any metric with a ``k``) over k, with interval bands.

    The rows of ``aggregate`` with a ``k`` are drawn as one line per model (``color``)
    and metric family (``pass@{k}``, ``maj@{k}``: read from the signature, so aliases are
    recognised), with the interval as a band; k is on a log-2 axis when it spans a factor
    of 8 or more.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> scored = ef.score(pl.DataFrame({"model": ["a", "b"] * 2, "n": [10] * 4,
    ...                                 "c": [1, 5, 2, 7]}), ["pass@1", "pass@2", "pass@5"])
    >>> spec = curve(ef.aggregate(scored, by="model")).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['area', 'line', 'point']
    """
    from evalframe.metrics.registry import resolve

    alt = _altair()
    frame = _described(_frame(table, "curve"))
    if "k" not in frame.columns:
        frame = frame.with_columns(k=pl.lit(None, pl.Int64))
    _require(frame, ("metric", "k", "value", "ci_low", "ci_high", "n", "signature"), "curve",
             "a table of evalframe.aggregate with pass@k-style metrics (a k column)")
    frame = frame.filter(pl.col("k").is_not_null())
    if frame.is_empty():
        raise EvalframeError(
            "curve: no row has a k (score metrics such as pass@1, pass@10 or maj@8)"
        )
    series = []
    for text in frame["signature"].to_list():
        fields = signature_fields(text)
        spec, params = resolve(fields.get("metric", ""))
        name = spec.name
        for parameter, value in params.items():  # k is the axis; tau and the like stay
            name = name.replace("{" + parameter + "}", "k" if parameter == "k" else str(value))
        series.append((name, fields.get("opts", "-")))
    options = {}
    for name, opts in series:
        options.setdefault(name, set()).add(opts)
    families = [name if len(options[name]) == 1 or opts == "-" else f"{name}({opts})"
                for name, opts in series]
    frame = frame.with_columns(family=pl.Series(families, dtype=pl.String))
    keys = _keys(frame, (*_AGGREGATE_COLUMNS, "family"))
    color = color or ("model" if "model" in keys else (keys[0] if keys else "family"))
    fields = ([facet] if isinstance(facet, str) else list(facet)) if facet is not None else [
        key for key in keys if key != color]
    frame, varying = _panels(frame, fields)
    k_values = sorted(frame["k"].unique().to_list())
    domain = [k_values[0], k_values[-1]]
    scale = (alt.Scale(type="log", base=2, domain=domain, nice=False)
             if k_values[-1] >= 8 * k_values[0] else alt.Scale(domain=domain, nice=False))
    tooltip = [*(alt.Tooltip(f"{key}:N") for key in keys), "metric:N", "k:Q",
               alt.Tooltip("value:Q", format=".4f"), alt.Tooltip("ci_low:Q", format=".4f"),
               alt.Tooltip("ci_high:Q", format=".4f"), "n:Q", "interval:N", "missing:N"]
    base = alt.Chart(_chart_data(frame.sort("k"), tooltip, color, "family", "panel")).encode(
        x=alt.X("k:Q", scale=scale, title="k", axis=alt.Axis(values=k_values)),
        color=alt.Color(f"{color}:N", title=color),
        detail="family:N",
        tooltip=tooltip,
    )
    band = base.mark_area(opacity=0.2).encode(y=alt.Y("ci_low:Q", title="value"),
                                              y2="ci_high:Q")
    line = base.mark_line().encode(y="value:Q", strokeDash=alt.StrokeDash("family:N",
                                                                         title="metric"))
    points = base.mark_point(filled=True).encode(y="value:Q")
    chart = _facet(alt.layer(band, line, points), alt, frame, varying, columns)
    return chart.properties(title=_title(alt, title, "Scores over k", _subtitle(frame)))


def comparison(
    table: pl.DataFrame,
    *,
    alpha: float = 0.05,
    facet: str | Sequence[str] | None = None,
    columns: int | None = None,
    title: str | None = None,
) -> alt.Chart:
    """A forest plot of ``compare``'s paired differences, significance marked.

    One point per model (against its baseline) at ``diff`` with its interval, a rule at
    0, and the point filled where the difference is significant at ``alpha`` after the
    table's correction (``p_adjusted`` when the comparison was corrected, else
    ``p_value``). Rows without pairs (no difference could be computed) are left out and
    counted in the subtitle.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> frame = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "sample_id": list("wxyz") * 2,
    ...                       "prediction": ["1", "2", "3", "4", "1", "0", "3", "0"],
    ...                       "gold": ["1", "2", "3", "4"] * 2})
    >>> table = ef.compare(ef.score(frame, ["exact_match"]), baseline="a")
    >>> spec = comparison(table).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['rule', 'rule', 'point']
    """
    alt = _altair()
    frame = _described(_frame(table, "comparison"))
    _require(frame, ("model", "baseline", "metric", "diff", "ci_low", "ci_high", "p_value"),
             "comparison", "a table of evalframe.compare")
    keys = _keys(frame, _COMPARE_COLUMNS)
    empty = frame.filter(pl.col("diff").is_null()).height
    frame = frame.filter(pl.col("diff").is_not_null())
    p = "p_adjusted" if "p_adjusted" in frame.columns and frame["p_adjusted"].is_not_null().any() \
        else "p_value"
    frame = frame.with_columns(
        versus=pl.col("model") + " vs " + pl.col("baseline"),
        significant=pl.when(pl.col(p) < alpha).then(pl.lit(f"{p} < {alpha}"))
        .otherwise(pl.lit("not significant")),
    )
    fields = ([facet] if isinstance(facet, str) else list(facet)) if facet is not None else [
        *keys, "metric"]
    frame, varying = _panels(frame, fields)
    tooltip = [*(alt.Tooltip(f"{key}:N") for key in keys), "versus:N", "metric:N",
               alt.Tooltip("diff:Q", format="+.4f"), alt.Tooltip("ci_low:Q", format="+.4f"),
               alt.Tooltip("ci_high:Q", format="+.4f"), alt.Tooltip("p_value:Q", format=".4g"),
               *([alt.Tooltip("p_adjusted:Q", format=".4g")] if "p_adjusted" in frame.columns
                 else []),
               *([alt.Tooltip("n_pairs:Q")] if "n_pairs" in frame.columns else []),
               *([alt.Tooltip("method:N")] if "method" in frame.columns else []),
               "interval:N", "missing:N"]
    base = alt.Chart().encode(y=alt.Y("versus:N", title=None, sort=None), tooltip=tooltip)
    zero = alt.Chart().mark_rule(strokeDash=[4, 4], color="gray").encode(x=alt.datum(0.0))
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", title="difference (model - baseline)",
                scale=alt.Scale(zero=False)),
        x2="ci_high:Q",
    )
    points = base.mark_point(size=70).encode(
        x="diff:Q",
        fill=alt.Fill("significant:N", title="significance",
                      scale=alt.Scale(domain=[f"{p} < {alpha}", "not significant"],
                                      range=["#d62728", "white"])),
        color=alt.value("#d62728"),
    )
    subtitle = _subtitle(frame.rename({"n_pairs": "n"}) if "n_pairs" in frame.columns
                         else frame)
    corrections = {signature_fields(text).get("correction") for text in
                   frame["signature"].to_list()} if "signature" in frame.columns else set()
    if p == "p_adjusted":
        named = ", ".join(sorted(c for c in corrections if c)) or "corrected"
        subtitle.append(f"filled: p_adjusted < {alpha} ({named}); the intervals are not "
                        "adjusted for multiple comparisons")
    if empty:
        subtitle.append(f"{empty} comparison(s) without pairs left out")
    layers = alt.layer(zero, bars, points,
                       data=_chart_data(frame, tooltip, "versus", "significant", "panel"))
    chart = _facet(layers, alt, frame, varying, columns)
    return chart.properties(title=_title(alt, title, "Paired differences", subtitle))


def win_rates(matrix: pl.DataFrame, *, title: str | None = None) -> alt.Chart:
    """A heatmap of :func:`evalframe.judge.win_rate_matrix` (wide or ``long=True``).

    Cell (row, column) is the row model's win rate against the column model, ties half;
    the number of battles is in the tooltip of the long form.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> battles = pl.DataFrame({"model_a": ["x", "y", "x"], "model_b": ["y", "z", "z"],
    ...                         "outcome": ["A", "tie", "B"]})
    >>> spec = win_rates(ef.judge.win_rate_matrix(battles, long=True)).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['rect', 'text']
    """
    alt = _altair()
    frame = _frame(matrix, "win_rates")
    if "opponent" not in frame.columns:
        _require(frame, ("model",), "win_rates", "a table of evalframe.judge.win_rate_matrix")
        frame = frame.unpivot(index="model", variable_name="opponent", value_name="win_rate")
    _require(frame, ("model", "opponent", "win_rate"), "win_rates",
             "a table of evalframe.judge.win_rate_matrix")
    frame = frame.filter(pl.col("win_rate").is_not_null())
    order = sorted(set(frame["model"].to_list()) | set(frame["opponent"].to_list()))
    tooltip = ["model:N", "opponent:N", alt.Tooltip("win_rate:Q", format=".3f"),
               *(["n:Q"] if "n" in frame.columns else [])]
    base = alt.Chart(frame).encode(
        x=alt.X("opponent:N", sort=order, title="against"),
        y=alt.Y("model:N", sort=order, title="model"),
        tooltip=tooltip,
    )
    cells = base.mark_rect().encode(
        color=alt.Color("win_rate:Q", scale=alt.Scale(scheme="redblue", domain=[0, 1],
                                                      domainMid=0.5), title="win rate")
    )
    labels = base.mark_text(fontSize=11).encode(text=alt.Text("win_rate:Q", format=".2f"))
    subtitle = ["ties count half; errors left out"]
    return alt.layer(cells, labels).properties(
        title=_title(alt, title, "Win rates", subtitle)
    )


def ratings(table: pl.DataFrame, *, title: str | None = None) -> alt.Chart:
    """Bradley-Terry ratings of :func:`evalframe.judge.ratings` with their intervals.

    The models are sorted by rating. When the table has rank intervals (``rank_low``,
    ``rank_high``: with a bootstrap, or from :func:`evalframe.ranks`), each model's label
    carries its rank range (``gpt-4  #1-2``) and the tooltip the models it is not
    separable from (``tied_with``); a style-controlled table says so in its subtitle.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> battles = pl.DataFrame({"sample_id": [f"q{i}" for i in range(24)],
    ...                         "model_a": ["x", "y", "z"] * 8, "model_b": ["y", "z", "x"] * 8,
    ...                         "outcome": ["A", "A", "B", "A", "tie", "A", "B", "A"] * 3})
    >>> spec = ratings(ef.judge.ratings(battles, bootstrap=20)).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['rule', 'point']
    """
    alt = _altair()
    frame = _frame(table, "ratings")
    _require(frame, ("model", "rating", "ci_low", "ci_high"), "ratings",
             "a table of evalframe.judge.ratings")
    frame = _ranked_labels(frame.sort("rating", descending=True, nulls_last=True))
    order = frame["label"].to_list()
    tooltip = ["model:N", alt.Tooltip("rating:Q", format=".1f"),
               alt.Tooltip("ci_low:Q", format=".1f"), alt.Tooltip("ci_high:Q", format=".1f"),
               *(["n_battles:Q"] if "n_battles" in frame.columns else []),
               *([alt.Tooltip("rank_low:Q", title="best rank"),
                  alt.Tooltip("rank_high:Q", title="worst rank")]
                 if "rank_low" in frame.columns else []),
               *(["tied:N"] if "tied" in frame.columns else [])]
    base = alt.Chart(_chart_data(frame, tooltip, "label")).encode(
        y=alt.Y("label:N", sort=order, title=None), tooltip=tooltip
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", title="rating", scale=alt.Scale(zero=False)), x2="ci_high:Q"
    )
    points = base.mark_point(filled=True, size=60).encode(x="rating:Q")
    fields = signature_fields(frame["signature"][0]) if "signature" in frame.columns and \
        frame.height else {}
    model = "Bradley-Terry (Elo scale)"
    if fields.get("style") not in (None, "", "-", "none"):
        features = fields["style"].split(";")[0].replace("+", ", ")
        model = f"Bradley-Terry controlled for style ({features})"
    subtitle = [f"{model}; bootstrap intervals" + (f" ({fields['ci']})" if "ci" in fields else "")]
    if "n_battles" in frame.columns and frame.height:
        subtitle[0] += f"; {int(frame['n_battles'].sum()) // 2} battles"
    if "rank_low" in frame.columns:
        subtitle.append("#: the range of ranks the model takes in the bootstrap")
    return alt.layer(bars, points).properties(title=_title(alt, title, "Ratings", subtitle))


def _ranked_labels(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``label`` (the model, with its rank range when the table has one)
    and ``tied`` (the models it is not separable from, as text)."""
    label = pl.col("model").cast(pl.String)
    if {"rank_low", "rank_high"} <= set(frame.columns):
        low, high = pl.col("rank_low").cast(pl.String), pl.col("rank_high").cast(pl.String)
        label = pl.when(pl.col("rank_low").is_null()).then(label).when(
            pl.col("rank_low") == pl.col("rank_high")
        ).then(pl.format("{}  #{}", label, low)).otherwise(
            pl.format("{}  #{}-{}", label, low, high))
    frame = frame.with_columns(label=label)
    if "tied_with" in frame.columns and isinstance(frame.schema["tied_with"], pl.List):
        frame = frame.with_columns(tied=pl.col("tied_with").list.join(", "))
    return frame


def judge_bias(report: pl.DataFrame, *, title: str | None = None) -> alt.Chart:
    """Position bias and inconsistency per group of :func:`evalframe.judge.report`.

    ``position_bias`` is the share of decisive verdicts that chose the first position
    (0.5 is no bias); the inconsistency rate is ``inconsistent / n_valid`` (the two
    orders disagree). Both are shown per group, with 0.5 and 0 marked.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> result = pl.DataFrame({"sample_id": ["q1", "q2", "q3", "q4"], "model_a": ["x"] * 4,
    ...                        "model_b": ["y"] * 4, "verdict_ab": ["A", "A", "B", "tie"],
    ...                        "verdict_ba": ["A", "B", "A", "tie"]})
    >>> spec = judge_bias(ef.judge.report(result, by="model_a")).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["spec"]["layer"]]
    ['bar', 'rule']
    """
    alt = _altair()
    frame = _frame(report, "judge_bias")
    _require(frame, ("position_bias", "inconsistent", "n_valid", "n_decisive"), "judge_bias",
             "a table of evalframe.judge.report")
    # the keys come first; the policy's own columns follow the counts
    keys = (frame.columns[: frame.columns.index("wins_a")] if "wins_a" in frame.columns
            else [column for column in frame.columns if column not in _REPORT_COLUMNS])
    group = (pl.concat_str([pl.col(key).cast(pl.String) for key in keys], separator=" / ")
             if keys else pl.lit("all"))
    frame = frame.with_columns(group=group)
    long = pl.concat([
        frame.select("group", measure=pl.lit("position bias (first chosen)"),
                     rate=pl.col("position_bias"), n=pl.col("n_decisive").cast(pl.Int64)),
        frame.select("group", measure=pl.lit("inconsistent"),
                     rate=pl.col("inconsistent") / pl.col("n_valid"),
                     n=pl.col("n_valid").cast(pl.Int64)),
    ])
    long = long.with_columns(
        ideal=pl.when(pl.col("measure") == "inconsistent").then(0.0).otherwise(0.5)
    )
    base = alt.Chart(long)
    bars = base.mark_bar().encode(
        x=alt.X("rate:Q", scale=alt.Scale(domain=[0, 1]), title="rate"),
        y=alt.Y("group:N", title=None, sort=None),
        tooltip=["group:N", "measure:N", alt.Tooltip("rate:Q", format=".3f"), "n:Q"],
    )
    ideal = base.mark_rule(strokeDash=[4, 4], color="gray").encode(x="ideal:Q")
    chart = alt.layer(bars, ideal).facet(column=alt.Column("measure:N", title=None))
    return chart.properties(title=_title(
        alt, title, "Judge position bias and inconsistency",
        ["dashed: no bias (0.5), no inconsistency (0)"]))


_REPORT_COLUMNS = (
    "wins_a", "wins_b", "ties", "inconsistent", "errors", "n_valid", "win_rate_a", "win_rate",
    "stderr", "ci_low", "ci_high", "n_clusters", "position_bias", "n_decisive", "signature",
    "n", "score",
)


def distribution(
    scored: pl.DataFrame, metric: str, *, by: str | None = "model", bins: int = 20,
    title: str | None = None,
) -> alt.Chart:
    """The distribution of one metric's per-sample scores (a histogram per ``by`` group).

    Rows whose score is null (not scoreable, or a missing answer the policy leaves out)
    are counted in the subtitle, not drawn.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> scored = ef.score(pl.DataFrame({"model": ["a", "b"] * 2, "prediction": ["x y", "x",
    ...                   "y", None], "gold": ["x y", "x z", "y", "z"]}), ["squad_f1"])
    >>> distribution(scored, "squad_f1").to_dict()["mark"]["type"]
    'bar'
    """
    alt = _altair()
    frame = _frame(scored, "distribution")
    _require(frame, (metric,), "distribution", f"a scored frame with the column {metric!r}")
    if not frame.schema[metric].is_numeric():
        raise EvalframeError(
            f"distribution: column {metric!r} is {frame.schema[metric]}, not per-sample "
            "scores (a corpus metric's statistics cannot be drawn as a distribution)"
        )
    columns = [metric, *([by] if by else [])]
    data = frame.select(columns)
    nulls = data[metric].null_count()
    data = data.drop_nulls(metric)
    encode: dict[str, Any] = {
        "x": alt.X(f"{metric}:Q", bin=alt.Bin(maxbins=bins), title=metric),
        "y": alt.Y("count():Q", title="samples"),
        "tooltip": [alt.Tooltip("count():Q", title="samples")],
    }
    if by:
        encode["color"] = alt.Color(f"{by}:N", title=by)
        encode["yOffset"] = alt.YOffset(f"{by}:N")
    subtitle = [f"n = {data.height}" + (f"; {nulls} null score(s) not drawn" if nulls else "")]
    return alt.Chart(data).mark_bar(opacity=0.8).encode(**encode).properties(
        title=_title(alt, title, f"Distribution of {metric}", subtitle)
    )


def calibration(
    frame: pl.DataFrame,
    *,
    confidence: str,
    correct: str,
    by: str | None = None,
    bins: int = 10,
    title: str | None = None,
) -> alt.Chart:
    """A reliability diagram: accuracy against the model's confidence, in equal-width bins.

    ``confidence`` is a column of probabilities in [0, 1] (the probability the model gave
    its chosen answer, for multiple choice), ``correct`` a column of 0/1 (or booleans).
    Each bin's point is at its mean confidence and its accuracy, sized by its count; the
    diagonal is perfect calibration. The expected calibration error (the count-weighted
    mean of |accuracy - confidence|) of each group is in the subtitle. Rows where either
    column is null are counted, not drawn.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"p": [0.9, 0.8, 0.6, 0.3], "ok": [1, 1, 0, 0]})
    >>> spec = calibration(frame, confidence="p", correct="ok").to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['rule', 'line', 'point']
    """
    alt = _altair()
    data = _frame(frame, "calibration")
    _require(data, (confidence, correct, *([by] if by else [])), "calibration",
             "a frame with a confidence and a correctness column")
    if bins < 1:
        raise EvalframeError(f"calibration: bins={bins} must be >= 1")
    data = data.select(confidence, correct, *([by] if by else []))
    nulls = data.height - data.drop_nulls([confidence, correct]).height
    data = data.drop_nulls([confidence, correct])
    probability = pl.col(confidence).cast(pl.Float64)
    outside = data.filter(~probability.is_between(0.0, 1.0) | probability.is_nan())
    if outside.height:
        raise EvalframeError(
            f"calibration: column {confidence!r} must hold probabilities in [0, 1]; found "
            f"{outside[confidence][0]!r}"
        )
    score = pl.col(correct).cast(pl.Float64)
    wrong = data.filter(~score.is_in([0.0, 1.0]))
    if wrong.height:
        raise EvalframeError(
            f"calibration: column {correct!r} must hold 0/1 (or booleans); found "
            f"{wrong[correct][0]!r}"
        )
    group = [by] if by else []
    binned = (
        data.with_columns(
            bin=(probability * bins).floor().clip(0, bins - 1).cast(pl.Int64),
        )
        .group_by([*group, "bin"])
        .agg(confidence=probability.mean(), accuracy=score.mean(), n=pl.len())
        .sort([*group, "bin"])
    )
    ece = binned.group_by(group or pl.lit(0)).agg(
        ece=((pl.col("accuracy") - pl.col("confidence")).abs() * pl.col("n")).sum()
        / pl.col("n").sum()
    )
    if by:
        parts = [f"{row[by]}: ECE {row['ece']:.3f}" for row in ece.sort(by).iter_rows(named=True)]
    else:
        parts = [f"ECE {ece['ece'][0]:.3f}"]
    subtitle = ["; ".join(parts) + f"; {bins} bins; n = {data.height}" +
                (f"; {nulls} row(s) with a null left out" if nulls else "")]
    diagonal = alt.Chart(pl.DataFrame({"x": [0.0], "x2": [1.0]})).mark_rule(
        strokeDash=[4, 4], color="gray"
    ).encode(x=alt.X("x:Q"), y=alt.Y("x:Q"), x2="x2:Q", y2="x2:Q")
    encode: dict[str, Any] = {
        "x": alt.X("confidence:Q", scale=alt.Scale(domain=[0, 1]), title="confidence"),
        "y": alt.Y("accuracy:Q", scale=alt.Scale(domain=[0, 1]), title="accuracy"),
        "tooltip": [*group, alt.Tooltip("confidence:Q", format=".3f"),
                    alt.Tooltip("accuracy:Q", format=".3f"), "n:Q"],
    }
    if by:
        encode["color"] = alt.Color(f"{by}:N", title=by)
    base = alt.Chart(binned).encode(**encode)
    chart = alt.layer(diagonal, base.mark_line(), base.mark_point(filled=True).encode(
        size=alt.Size("n:Q", title="samples")))
    return chart.properties(title=_title(alt, title, "Calibration", subtitle))


def length_controlled(report: pl.DataFrame, *, title: str | None = None) -> alt.Chart:
    """AlpacaEval's raw and length-controlled win rates per model, with their intervals.

    Reads a table of :func:`evalframe.judge.report` made with ``policy="alpaca_eval",
    length_controlled=True``: for each group (the ``by`` keys, usually ``model``) one
    point and interval for the raw win rate (``win_rate``, ``win_rate_ci_low`` /
    ``win_rate_ci_high``) and one for the length-controlled win rate
    (``length_controlled_winrate``, ``lc_ci_low`` / ``lc_ci_high``), both in percent; the
    groups are sorted by the length-controlled rate, and 50% (as good as the baseline) is
    marked.

    Examples
    --------
    >>> import polars as pl
    >>> table = pl.DataFrame({"model": ["m1", "m2"], "win_rate": [23.6, 76.9],
    ...     "win_rate_ci_low": [20.8, 74.0], "win_rate_ci_high": [26.6, 79.6],
    ...     "length_controlled_winrate": [38.1, 86.5], "lc_ci_low": [35.0, 84.0],
    ...     "lc_ci_high": [41.2, 88.9], "n_total": [805, 805]})
    >>> spec = length_controlled(table).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['rule', 'rule', 'point']
    """
    alt = _altair()
    frame = _frame(report, "length_controlled")
    needed = ("win_rate", "win_rate_ci_low", "win_rate_ci_high", "length_controlled_winrate",
              "lc_ci_low", "lc_ci_high")
    _require(frame, needed, "length_controlled", "a table of evalframe.judge.report("
             "..., policy='alpaca_eval', length_controlled=True)")
    keys = (frame.columns[: frame.columns.index("wins_a")] if "wins_a" in frame.columns
            else [column for column in frame.columns
                  if column not in (*needed, *_REPORT_COLUMNS, *_ALPACA_COLUMNS)])
    group = (pl.concat_str([pl.col(key).cast(pl.String).fill_null("null") for key in keys],
                           separator=" / ") if keys else pl.lit("all"))
    frame = frame.with_columns(group=group)
    n = pl.col("n_total").cast(pl.Int64) if "n_total" in frame.columns else pl.lit(None, pl.Int64)
    long = pl.concat([
        frame.select("group", measure=pl.lit("raw win rate"), value=pl.col("win_rate"),
                     ci_low=pl.col("win_rate_ci_low"), ci_high=pl.col("win_rate_ci_high"), n=n),
        frame.select("group", measure=pl.lit("length-controlled"),
                     value=pl.col("length_controlled_winrate"), ci_low=pl.col("lc_ci_low"),
                     ci_high=pl.col("lc_ci_high"), n=n),
    ]).with_columns(pl.col("value", "ci_low", "ci_high").cast(pl.Float64))
    order = frame.sort("length_controlled_winrate", descending=True, nulls_last=True)[
        "group"].to_list()
    tooltip = ["group:N", "measure:N", alt.Tooltip("value:Q", format=".2f"),
               alt.Tooltip("ci_low:Q", format=".2f"), alt.Tooltip("ci_high:Q", format=".2f"),
               "n:Q"]
    color = alt.Color("measure:N", title=None,
                      sort=["length-controlled", "raw win rate"],
                      scale=alt.Scale(domain=["length-controlled", "raw win rate"],
                                      range=["#1f77b4", "#aaaaaa"]))
    base = alt.Chart(_chart_data(long, tooltip)).encode(
        y=alt.Y("group:N", sort=order, title=None),
        yOffset=alt.YOffset("measure:N", sort=["length-controlled", "raw win rate"]),
        color=color, tooltip=tooltip,
    )
    even = alt.Chart(pl.DataFrame({"even": [50.0]})).mark_rule(
        strokeDash=[4, 4], color="gray").encode(x="even:Q")
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", title="win rate against the baseline (%)",
                scale=alt.Scale(zero=False)), x2="ci_high:Q")
    points = base.mark_point(filled=True, size=60).encode(x="value:Q")
    signature = (signature_fields(frame["signature"][0])
                 if "signature" in frame.columns and frame.height else {})
    subtitle = ["AlpacaEval 2.0 length-controlled (GLM) and raw win rates, percent; "
                "dashed: as good as the baseline"]
    if signature.get("lc"):
        subtitle.append(f"instruction difficulty: {signature['lc']}")
    return alt.layer(even, bars, points).properties(
        title=_title(alt, title, "Length-controlled win rates", subtitle))


_ALPACA_COLUMNS = (
    "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total", "discrete_win_rate",
    "lc_standard_error", "group",
)

#: Where each audit measure shows no bias or no agreement beyond chance.
_AUDIT_REFERENCE = {
    "position_bias": 0.5, "flip_rate": 0.0, "length_bias": 0.0, "self_preference": 0.0,
    "cohen_kappa": 0.0, "fleiss_kappa": 0.0,
}


def audit(table: pl.DataFrame, *, title: str | None = None, columns: int | None = None
          ) -> alt.Chart:
    """The measures of :func:`evalframe.judge.audit` with their intervals, a panel each.

    One panel per ``measure`` (position bias, flip rate, length bias, self-preference,
    agreement and kappa with human labels), each with its own axis; one row per judge
    (and ``by`` group), a point at ``value`` and a bar from ``ci_low`` to ``ci_high``.
    A dashed line marks where the measure shows no bias (position bias 0.5; flip rate,
    length bias and self-preference 0) or no agreement beyond chance (kappa 0). Measures
    that could not be computed (a null value) are listed in the subtitle, not drawn.

    Examples
    --------
    >>> import polars as pl
    >>> table = pl.DataFrame({"judge": ["gpt-4"] * 2, "measure": ["position_bias",
    ...     "flip_rate"], "value": [0.62, 0.18], "ci_low": [0.58, 0.15],
    ...     "ci_high": [0.66, 0.21], "n": [1200, 1500]})
    >>> spec = audit(table).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["spec"]["layer"]]
    ['rule', 'rule', 'point']
    """
    alt = _altair()
    frame = _frame(table, "audit")
    _require(frame, ("measure", "value", "ci_low", "ci_high"), "audit",
             "a table of evalframe.judge.audit")
    keys = [column for column in frame.columns if column not in (
        "measure", "value", "ci_low", "ci_high", "n", "n_excluded", "signature")]
    # a key with one value (the judge, usually) goes to the subtitle, not every label
    constant = [key for key in keys if len(keys) > 1 and frame[key].n_unique() == 1]
    keys = [key for key in keys if key not in constant] or keys
    row = (pl.concat_str([pl.col(key).cast(pl.String).fill_null("null") for key in keys],
                         separator=" / ") if keys else pl.lit("judge"))
    frame = frame.with_columns(row=row, reference=pl.col("measure").replace_strict(
        _AUDIT_REFERENCE, default=None, return_dtype=pl.Float64))
    absent = frame.filter(pl.col("value").is_null())
    drawn = frame.filter(pl.col("value").is_not_null())
    tooltip = [*(alt.Tooltip(f"{key}:N") for key in keys), "measure:N",
               alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("ci_low:Q", format=".3f"),
               alt.Tooltip("ci_high:Q", format=".3f"),
               *(["n:Q"] if "n" in frame.columns else [])]
    data = _chart_data(drawn, tooltip, "row", "reference")
    base = alt.Chart().encode(y=alt.Y("row:N", title=None, sort=None), tooltip=tooltip)
    reference = alt.Chart().mark_rule(strokeDash=[4, 4], color="gray").encode(x="reference:Q")
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", title=None, scale=alt.Scale(zero=False)), x2="ci_high:Q")
    points = base.mark_point(filled=True, size=60).encode(x="value:Q")
    measures = list(dict.fromkeys(drawn["measure"].to_list()))
    chart = alt.layer(reference, bars, points, data=data).facet(
        facet=alt.Facet("measure:N", title=None, sort=measures,
                        header=alt.Header(labelFontWeight="bold")),
        columns=columns or min(max(len(measures), 1), 3),
    ).resolve_scale(x="independent")
    subtitle = [", ".join(f"{key}: {frame[key][0]}" for key in constant)] if constant else []
    subtitle.append("dashed: no bias (position bias 0.5; flip rate, length bias, "
                    "self-preference 0), kappa 0 = chance agreement")
    if absent.height:
        rows = frame["row"].n_unique()
        counts = absent.group_by("measure", maintain_order=True).agg(
            pl.col("row").unique(maintain_order=True))
        subtitle.append("not computable: " + ", ".join(
            f"{measure} ({found[0] if len(found) == 1 else f'{len(found)} of {rows}'})"
            for measure, found in counts.iter_rows()))
    return chart.properties(title=_title(alt, title, "Judge audit", subtitle))
