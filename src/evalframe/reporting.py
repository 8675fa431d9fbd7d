"""One self-contained HTML report of scored results: tables, charts, comparisons and the
signature of every number, readable offline.

:func:`report` aggregates a scored frame (or files), compares every model with a baseline
when one is given, and lays out a summary table, the charts of :mod:`evalframe.plot` that
apply to the data, the comparisons, the counts that qualify the numbers (missing answers,
null rows, repeated samples) and every signature. :meth:`Report.save` writes one HTML file
with the chart library and the chart specs inlined: nothing is fetched when it is viewed.

Needs the ``plot`` extra: ``pip install "evalframe[plot]"``.

>>> import polars as pl, evalframe as ef
>>> frame = pl.DataFrame({"model": ["a", "b"] * 4, "task": ["t"] * 8,
...                       "sample_id": ["1", "1", "2", "2", "3", "3", "4", "4"],
...                       "prediction": ["x", "x", "y", "x", "x", "y", "x", "x"],
...                       "gold": ["x"] * 8})
>>> result = ef.report(ef.score(frame, ["exact_match"]), by="task", baseline="a")
>>> [section.title for section in result.sections]  # doctest: +NORMALIZE_WHITESPACE
['Scores', 'Scores by model', 'Scores with their intervals', 'Paired differences against a',
 'Counts', 'Signatures']
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._version import __version__
from evalframe.errors import EvalframeError, OptionError

__all__ = ["Report", "Section", "report"]


@dataclass(frozen=True)
class Section:
    """One part of a report: a title, and a chart (Altair), a table or text (shown in
    that order)."""

    title: str
    chart: Any = None
    table: Any = None
    text: str | None = None


@dataclass(frozen=True)
class Report:
    """A report: its sections, what it was made from, and the tables behind it."""

    title: str
    sections: tuple[Section, ...]
    aggregate: pl.DataFrame
    comparison: pl.DataFrame | None = None
    inputs: tuple[str, ...] = ()
    created: str = field(
        default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    )

    def charts(self) -> list[tuple[str, Any]]:
        """(title, chart) of every chart section."""
        return [(section.title, section.chart) for section in self.sections if section.chart]

    def to_html(self) -> str:
        """The whole report as one HTML document, with the chart library inlined."""
        return _document(self, _bundle())

    def save(self, path: str | Path, *, svg: str | Path | None = None) -> Path:
        """Write the report to ``path`` (HTML); with ``svg``, every chart as an SVG file in
        that folder too (``01-scores.svg``...)."""
        path = Path(path)
        if path.suffix.lower() not in (".html", ".htm"):
            raise EvalframeError(f"{path}: a report is an HTML file (.html)")
        text = self.to_html()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
        if svg is not None:
            save_svgs(self, svg)
        return path

    def _repr_html_(self) -> str:
        return self.to_html()


def save_svgs(result: Report, folder: str | Path) -> list[Path]:
    """Every chart of ``result`` as an SVG file in ``folder``; the paths written."""
    import vl_convert

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number, (title, chart) in enumerate(result.charts(), start=1):
        slug = "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-")
        target = folder / f"{number:02d}-{'-'.join(filter(None, slug.split('-')))}.svg"
        target.write_text(vl_convert.vegalite_to_svg(chart.to_json()), encoding="utf-8")
        written.append(target)
    return written


def report(
    scored: Any,
    *,
    by: str | Sequence[str] | None = None,
    baseline: str | None = None,
    model: str = "model",
    metrics: Sequence[str] | Mapping[str, str | None] | None = None,
    title: str = "Evaluation report",
    ci: float = 0.95,
    missing: str = "wrong",
    correction: str | None = "holm",
    columns: dict[str, str] | None = None,
) -> Report:
    """A report of scored results: aggregates, charts, comparisons with ``baseline``.

    Parameters
    ----------
    scored
        A scored frame (``ef.score``'s result), a LazyFrame, or scored file(s).
    by
        Grouping column(s) besides the model (``"task"``).
    baseline
        A model to compare every other model with (paired, on ``sample_id``), corrected
        for multiple comparisons with ``correction``.
    model
        The column naming the models (left out of the grouping when absent).
    metrics, ci, missing, columns
        As :func:`evalframe.aggregate`.
    title
        The report's title.
    """
    from evalframe import plot
    from evalframe.formatted import table
    from evalframe.stats import aggregate, compare

    frame = scored.collect() if isinstance(scored, pl.LazyFrame) else scored
    inputs: tuple[str, ...] = ()
    if isinstance(frame, (str, Path)) or (
        isinstance(frame, Sequence) and not isinstance(frame, pl.DataFrame)
    ):
        from evalframe.io import scan

        inputs = tuple(str(p) for p in ([frame] if isinstance(frame, (str, Path)) else frame))
        frame = scan(list(inputs)).collect()
    if not isinstance(frame, pl.DataFrame):
        raise EvalframeError(f"report: expected scored results, got {type(frame).__name__}")
    keys = [by] if isinstance(by, str) else list(by or [])
    absent = [key for key in keys if key not in frame.columns]
    if absent:
        available = ", ".join(column for column in frame.columns if column != "_evalframe")
        raise OptionError(
            f"report: by={absent}: no such column(s); available: {available}",
            option="by", value=absent, problem=f"no such column(s); available: {available}",
            clause=False,
        )
    if baseline is not None and model not in frame.columns:
        raise OptionError(
            f"report: baseline={baseline!r} needs the model column {model!r}, which the "
            "results do not have", option="model", value=model,
            problem="no such column", clause=False,
        )
    groups = ([model] if model in frame.columns and model not in keys else []) + keys
    options: dict[str, Any] = {"ci": ci, "missing": missing}
    if columns:
        options["columns"] = columns
    table_of_scores = aggregate(frame, by=groups or None, metrics=metrics, **options)
    shown = table_of_scores.filter(pl.col("n") > pl.col("n_null").fill_null(0))
    if shown.is_empty():
        raise EvalframeError(
            f"report: nothing to report: no metric has a score in the {frame.height} row(s) "
            f"(metric columns: {', '.join(table_of_scores['metric'].unique().sort()) or 'none'})"
        )
    sections = [Section("Scores", table=table(shown))]
    if model in groups and len(groups) > 1:
        sections.append(Section("Scores by model", table=table(shown, wide=True)))
    sections.append(Section("Scores with their intervals", chart=plot.scores(shown)))
    if "k" in shown.columns and shown["k"].is_not_null().any():
        sections.append(Section("Scores over k", chart=plot.curve(shown)))
    comparison = None
    if baseline is not None:
        comparison = compare(frame, baseline=baseline, model=model, by=keys or None,
                             metrics=metrics, ci=ci, missing=missing,
                             correction=correction, columns=columns)
        paired = comparison.filter(pl.col("n_pairs") > 0)
        if paired.height:
            sections.append(Section(f"Paired differences against {baseline}",
                                    chart=plot.comparison(paired), table=table(paired)))
    sections.append(Section("Counts", table=_counts(frame, table_of_scores, groups, model)))
    sections.append(Section("Signatures", table=_signatures(table_of_scores, comparison)))
    return Report(title, tuple(sections), table_of_scores, comparison, inputs)


def _counts(frame: pl.DataFrame, scores: pl.DataFrame, groups: list[str],
            model: str) -> pl.DataFrame:
    """Per metric: rows, missing answers, null rows; and samples that repeat."""
    counts = scores.group_by("metric", maintain_order=True).agg(
        rows=pl.col("n").sum(),
        missing_answers=pl.col("n_missing").sum() if "n_missing" in scores.columns
        else pl.lit(None),
        null_rows=pl.col("n_null").sum() if "n_null" in scores.columns else pl.lit(None),
    )
    if "sample_id" in frame.columns:
        identity = [*(c for c in groups if c in frame.columns), "sample_id"]
        repeated = frame.select(identity).is_duplicated().sum()
        counts = counts.with_columns(
            rows_repeating_a_sample=pl.lit(int(repeated), pl.Int64)
        )
    return counts


def _signatures(scores: pl.DataFrame, comparison: pl.DataFrame | None) -> pl.DataFrame:
    parts = [scores.select("metric", "signature").unique(maintain_order=True)
             .with_columns(table=pl.lit("aggregate"))]
    if comparison is not None:
        parts.append(comparison.select("metric", "signature").unique(maintain_order=True)
                     .with_columns(table=pl.lit("compare")))
    return pl.concat(parts).select("table", "metric", "signature")


@cache
def _bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed as one script (vl-convert builds it in seconds, so it
    is kept in evalframe's disk cache, keyed by the vl-convert version)."""
    from evalframe._disk_cache import load_or_build

    try:
        import vl_convert
    except ImportError:  # pragma: no cover - the extra is installed in the tests
        raise EvalframeError(
            'reports need vl-convert-python: pip install "evalframe[plot]"'
        ) from None
    stored = load_or_build(
        "vega-bundle", f"vl-convert {vl_convert.__version__}",
        lambda: {"script": vl_convert.javascript_bundle()},
    )
    return stored["script"]


def _json_in_script(value: Any) -> str:
    """JSON that cannot end the ``<script>`` element it is placed in (``<\\/`` is ``</``
    in a JSON string, and a JSON text has ``<`` only inside strings)."""
    return json.dumps(value).replace("</", "<\\/").replace("<!--", "<\\u0021--")


def _script_element(code: str) -> str:
    """``code`` in a ``<script>`` element, inline where the HTML parser cannot end it early,
    else as a ``data:`` URL (still nothing fetched)."""
    lowered = code.lower()
    if "</script" not in lowered and "<!--" not in lowered:
        return f"<script>{code}</script>"
    encoded = base64.b64encode(code.encode("utf-8")).decode("ascii")
    return f'<script src="data:text/javascript;base64,{encoded}"></script>'


#: Tables longer than this are written as plain HTML rather than styled by great_tables,
#: whose markup is about three times larger (a report of 10 models x 50 tasks stays < 2 MB).
_STYLED_ROWS = 300

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem;
       color: #1f2328; max-width: 1400px; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #d0d7de; }
.meta { color: #59636e; font-size: 0.9rem; }
.note { color: #59636e; font-size: 0.85rem; margin: 0.3rem 0; }
table.plain { border-collapse: collapse; font-size: 0.85rem; }
table.plain td, table.plain th { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; }
table.plain td.signature { font-family: ui-monospace, monospace; font-size: 0.75rem; }
.chart { margin: 1rem 0; overflow-x: auto; }
"""


def _plain_table(frame: pl.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = []
    for row in frame.iter_rows(named=True):
        cells = "".join(
            ('<td class="signature">' if k == "signature" else "<td>")
            + html.escape("" if v is None else str(v)) + "</td>"
            for k, v in row.items()
        )
        rows.append(f"<tr>{cells}</tr>")
    return f'<table class="plain"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}' \
           "</tbody></table>"


def _document(result: Report, bundle: str) -> str:
    from evalframe.formatted import FormattedTable

    body = []
    specs = []
    for number, section in enumerate(result.sections):
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        if section.chart is not None:
            element = f"chart-{number}"
            body.append(f'<div class="chart" id="{element}"></div>')
            specs.append((element, section.chart.to_dict()))
        if isinstance(section.table, FormattedTable) and section.table.frame.height <= _STYLED_ROWS:
            body.append(section.table.to_html())
        elif isinstance(section.table, FormattedTable):  # every row, in lighter markup
            body.append(_plain_table(section.table.frame))
            body.extend(f'<p class="note">{html.escape(note)}</p>' for note in section.table.notes)
        elif isinstance(section.table, pl.DataFrame):
            body.append(_plain_table(section.table))
        if section.text:
            body.append(f"<p>{html.escape(section.text)}</p>")
    inputs = ", ".join(result.inputs) if result.inputs else "a scored frame"
    meta = (f"evalframe {html.escape(__version__)} · {html.escape(result.created)} · "
            f"from {html.escape(inputs)}")
    embed = "\n".join(
        f"vegaEmbed({json.dumps('#' + element)}, {_json_in_script(spec)}, "
        '{"renderer": "svg", "actions": false}).catch(function (error) { '
        f"var box = document.getElementById({json.dumps(element)}); "
        "box.className = 'chart failed'; "
        "box.textContent = 'this chart could not be drawn: ' + error; console.error(error); });"
        for element, spec in specs
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(result.title)}</title>\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<style>{_STYLE}</style>\n"
        f"{_script_element(bundle)}\n</head>\n<body>\n"
        f"<h1>{html.escape(result.title)}</h1>\n<p class=\"meta\">{meta}</p>\n"
        + "\n".join(body)
        + f"\n<script>\n{embed}\n</script>\n</body>\n</html>\n"
    )
