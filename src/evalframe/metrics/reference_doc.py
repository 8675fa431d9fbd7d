"""Render the metric reference (docs/metrics.md) from the registry.

The registry is the single list of metrics; this page is generated from it, so
it cannot drift. ``python -m evalframe.metrics.reference_doc > docs/metrics.md``
rebuilds it; a test fails when the file is stale.

>>> text = render()
>>> text.startswith("# Metric reference")
True
"""

from __future__ import annotations

import inspect

from evalframe.metrics.reduce import Mean
from evalframe.metrics.registry import MetricSpec, all_metrics
from evalframe.metrics.request import describe_options
from evalframe.normalize.table import NORMALIZERS
from evalframe.schema import role_kinds

HEADER = """# Metric reference

Generated from the registry by `python -m evalframe.metrics.reference_doc > docs/metrics.md`;
do not edit by hand. Each metric states the reference implementation it agrees with, the
roles (input columns) it reads, its options and the edge rules it follows.

Every metric has two parts: per-row statistics and a reduce from them to the score.
`score` adds one column per metric, named as requested (`pass@10`,
`f1(average=macro)`, or an alias: `em_ci=exact_match(ignore_case=true)`): a `Float64`
score for a sample-level metric, which `aggregate` reduces by the mean with the standard
error of the mean; the row's statistics (a struct) for a corpus-level metric, which
`aggregate` reduces by the metric's formula with a seeded bootstrap standard error.
Options are set as `name(key=value, ...)` in Python and on the command line.
"""


def _summary_table(specs: list[MetricSpec]) -> list[str]:
    lines = [
        "| metric | level | higher is better | roles | reference |",
        "|---|---|---|---|---|",
    ]
    for spec in specs:
        roles = " or ".join("(" + ", ".join(r) + ")" for r in spec.role_sets)
        lines.append(
            f"| [`{spec.name}`](#{_anchor(spec.name)}) | {spec.level} | "
            f"{'yes' if spec.higher_is_better else 'no'} | {roles} | {spec.reference} |"
        )
    return lines


def _anchor(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum() or ch in "-_ ").replace(" ", "-")


def _section(spec: MetricSpec) -> list[str]:
    lines = [f"## {spec.name}", "", spec.description, ""]
    lines.append(f"- **Reference:** {spec.reference}")
    lines.append(f"- **Level:** {spec.level}; higher is better: {spec.higher_is_better}")
    lines.append(f"- **Per-row statistics:** `{_dtype_text(spec)}`")
    lines.append(f"- **Reduce:** {_reduce_text(spec)}")
    low, high = spec.bounds
    missing = (
        f"a missing answer counts as {spec.worst:g} under missing='wrong'"
        if spec.level == "sample"
        else "missing answers are left out of the statistics and counted"
    )
    lines.append(f"- **Bounds:** [{low:g}, {high:g}] (intervals stay inside; {missing})")
    lines.append(f"- **Options:** {_escape(describe_options(spec))}")
    if spec.parameters:
        lines.append(f"- **Parameters in the name:** {', '.join(spec.parameters)}")
    if spec.options:
        fixed = ", ".join(f"`{key}={value!r}`" for key, value in spec.options.items())
        lines.append(f"- **Fixed options:** {fixed}")
    lines.append(f"- **Function:** `evalframe.metrics.{spec.function.__name__}`")
    lines.append("- **Roles:**")
    for roles in spec.role_sets:
        described = ", ".join(
            f"`{role}` ({' or '.join(role_kinds(role, spec.dtypes))})" for role in roles
        )
        lines.append(f"  - {described}")
    if spec.edge_rules:
        lines += ["", "**Edge rules**", ""]
        lines += [f"- {rule}" for rule in spec.edge_rules]
    if spec.divergences:
        lines += ["", "**Deliberate divergences from the reference**", ""]
        lines += [f"- {divergence}" for divergence in spec.divergences]
    signature = _stable_signature(spec.function)
    lines += ["", "```python", f"{spec.function.__name__}{signature}", "```", ""]
    return lines


def _dtype_text(spec: MetricSpec) -> str:
    return str(spec.statistics)


def _reduce_text(spec: MetricSpec) -> str:
    if isinstance(spec.reduce, Mean):
        return "mean (standard error of the mean)"
    if callable(spec.reduce):
        return "the metric's formula for its options (bootstrap standard error)"
    return f"`{spec.reduce.name}` (bootstrap standard error)"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _normalizer_table() -> list[str]:
    lines = [
        "## Normalisers",
        "",
        "Metrics that normalise text take `normalizer=NAME` (or a function from `pl.Expr` to "
        "`pl.Expr` in Python); `evalframe normalizers` prints this table.",
        "",
        "| name | reference | meaning |",
        "|---|---|---|",
    ]
    for entry in NORMALIZERS.values():
        lines.append(f"| `{entry.name}` | {entry.reference} | {entry.meaning} |")
    return lines


def _stable_signature(function) -> inspect.Signature:
    """The signature with callable defaults shown by name (no memory addresses)."""

    class _Named:
        def __init__(self, name: str) -> None:
            self.name = name

        def __repr__(self) -> str:
            return self.name

    signature = inspect.signature(function)
    parameters = [
        parameter.replace(default=_Named(parameter.default.__name__))
        if parameter.default is not parameter.empty and callable(parameter.default)
        else parameter
        for parameter in signature.parameters.values()
    ]
    return signature.replace(parameters=parameters)


def render() -> str:
    """The whole metric reference page as Markdown."""
    specs = all_metrics()
    lines = [HEADER, *_summary_table(specs), "", *_normalizer_table(), ""]
    for spec in specs:
        lines += _section(spec)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(render(), end="")
