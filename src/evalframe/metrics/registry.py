"""The metric registry: one frozen spec per metric, looked up by name.

A metric is a plain function of column names or expressions that returns a
``pl.Expr``. Registering it records everything the engine, the CLI, the docs
and :func:`evalframe.list_metrics` need, in one place.

Parameterised names (``pass@{k}``) register one spec whose name is a pattern;
``resolve("pass@10")`` returns the spec and ``{"k": 10}``.

>>> from evalframe.metrics.registry import resolve
>>> spec, params = resolve("pass@10")
>>> spec.name, params
('pass@{k}', {'k': 10})
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from evalframe._registry import Registry, canonical_name
from evalframe.errors import EvalframeError
from evalframe.metrics.reduce import MEAN, Reduction

Level = Literal["sample", "corpus"]


@dataclass(frozen=True)
class Reference:
    """The implementation a metric agrees with: package, version and function."""

    package: str
    version: str
    function: str

    def __str__(self) -> str:
        return f"{self.package} {self.version}: {self.function}"


@dataclass(frozen=True)
class MetricSpec:
    """Everything known about one registered metric."""

    name: str
    function: Callable[..., pl.Expr]
    level: Level
    higher_is_better: bool
    role_sets: tuple[tuple[str, ...], ...]
    reference: Reference
    description: str
    edge_rules: tuple[str, ...] = ()
    dtypes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    parameters: Mapping[str, Callable[[str], Any]] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    divergences: tuple[str, ...] = ()
    statistics: pl.DataType = pl.Float64
    reduce: Reduction | Callable[..., Reduction] = MEAN
    bounds: tuple[float, float] = (0.0, 1.0)
    statistics_of: Callable[..., pl.DataType] | None = None
    reference_signature: Callable[..., str] | None = None

    def reduction(self, options: Mapping[str, Any] | None = None) -> Reduction:
        """The reduction for the given keyword options (every option, defaults filled in)."""
        if callable(self.reduce):
            return self.reduce(**dict(options or {}))
        return self.reduce

    def statistics_for(self, options: Mapping[str, Any] | None = None) -> pl.DataType:
        """The per-row statistics dtype for the given keyword options (chrF's fields depend
        on its n-gram orders); :attr:`statistics` is the dtype of the defaults."""
        if self.statistics_of is not None:
            return self.statistics_of(**dict(options or {}))
        return self.statistics

    @property
    def worst(self) -> float:
        """The worst score: what a missing answer counts as (``missing="wrong"``)."""
        return self.bounds[0] if self.higher_is_better else self.bounds[1]

    @property
    def pattern(self) -> re.Pattern[str]:
        regex = re.escape(self.name)
        for parameter in self.parameters:
            regex = regex.replace(re.escape("{" + parameter + "}"), f"(?P<{parameter}>[^@_:]+)")
        return re.compile(regex + r"\Z")

    def roles(self) -> tuple[str, ...]:
        """Every role any of the metric's role sets uses, in order."""
        seen: dict[str, None] = {}
        for roles in self.role_sets:
            seen.update(dict.fromkeys(roles))
        return tuple(seen)

    def build(self, columns: Mapping[str, str | pl.Expr], params: Mapping[str, Any]) -> pl.Expr:
        """The metric's expression over the given role columns."""
        return self.function(**columns, **self.options, **params)


def positive_int(text: str) -> int:
    """A name parameter that is an integer >= 1 (``k`` of ``pass@k``).

    >>> positive_int("10")
    10
    """
    value = int(text)
    if value < 1:
        raise ValueError("expected an integer >= 1")
    return value


def unit_fraction(text: str) -> float:
    """A name parameter that is a number in [0, 1] (``tau`` of ``g-pass@k_tau``)."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError("expected a number between 0 and 1")
    return value


#: The modules whose import registers the built-in metrics (each registers at least one).
FAMILIES = (
    "exact_match", "word_overlap", "squad", "pass_at_k", "drop", "sampling", "classification",
    "perplexity", "choice", "judge", "chrf", "distance", "ter", "rouge", "bleu", "letters",
    "math", "inspect_scorers",
)

#: Every metric, by name (parameterised names as their pattern, ``pass@{k}``).
METRICS: Registry[MetricSpec] = Registry(
    "metric", package="evalframe.metrics", modules=FAMILIES, sort=True
)


def with_rules(
    doc: str | None, edge_rules: Sequence[str], divergences: Sequence[str]
) -> str | None:
    """``doc`` with the metric's edge rules and divergences appended as sections, so that a
    rule is written once (in :func:`register`) and read in ``help()`` and the API docs.

    >>> doc = "Summary." + chr(10) + chr(10) + "    More." + chr(10) + "    "
    >>> print(with_rules(doc, ["null gives null"], []))
    Summary.
    <BLANKLINE>
        More.
    <BLANKLINE>
        Edge rules
        ----------
        - null gives null
    <BLANKLINE>
    """
    if doc is None or not (edge_rules or divergences):
        return doc
    lines = doc.expandtabs().splitlines()[1:]
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    pad = " " * min(indents, default=0)
    sections = [doc.rstrip()]
    for title, rules in (("Edge rules", edge_rules), ("Divergences", divergences)):
        if rules:
            body = "\n".join(f"{pad}- {rule}" for rule in rules)
            sections.append(f"{pad}{title}\n{pad}{'-' * len(title)}\n{body}")
    return "\n\n".join(sections) + "\n" + pad


def register(
    name: str,
    *,
    roles: Sequence[str] | Sequence[Sequence[str]],
    reference: Reference,
    description: str,
    level: Level = "sample",
    higher_is_better: bool = True,
    edge_rules: Sequence[str] = (),
    dtypes: Mapping[str, Sequence[str]] | None = None,
    parameters: Mapping[str, Callable[[str], Any]] | None = None,
    options: Mapping[str, Any] | None = None,
    divergences: Sequence[str] = (),
    statistics: pl.DataType = pl.Float64,
    reduce: Reduction | Callable[..., Reduction] = MEAN,
    bounds: tuple[float, float] = (0.0, 1.0),
    function: Callable[..., pl.Expr] | None = None,
    statistics_of: Callable[..., pl.DataType] | None = None,
    reference_signature: Callable[..., str] | None = None,
):
    """Register a metric function under ``name``; usable as a decorator.

    ``roles`` is one tuple of role names, or several alternative tuples (the first
    one whose columns all exist is used). The function's keyword arguments for the
    roles are named as the roles. ``options`` are fixed keyword arguments, which
    lets one function back several named metrics.

    A sample metric's function returns a ``Float64`` score per row, reduced by the
    mean. A corpus metric (``level="corpus"``) returns per-row ``statistics`` (a
    ``pl.Struct`` of numeric or label fields, null where the row cannot be scored)
    and names its ``reduce``: a :mod:`evalframe.metrics.reduce` reduction, or a
    function of the metric's keyword options returning one (``f1(average=...)``).
    ``bounds`` are the smallest and largest score (intervals never leave them; a
    missing answer counts as the worst of them). ``statistics_of``, a function of the
    keyword options, gives the statistics dtype where it depends on them (chrF's fields on
    its orders); ``statistics`` is then the dtype of the defaults. ``reference_signature``,
    a function of the keyword options and ``nrefs`` (references per row: an int, or
    ``"var"``), gives the reference implementation's own signature string for the settings
    (sacrebleu's ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``), which
    ``aggregate`` writes beside evalframe's.
    """
    if level == "corpus" and reduce is MEAN:
        raise ValueError(f"corpus metric {name!r} needs a reduce (Sums or Table)")
    if level == "corpus" and not isinstance(statistics, pl.Struct):
        raise ValueError(f"corpus metric {name!r} needs statistics=pl.Struct({{...}})")
    if roles and isinstance(roles[0], str):
        role_sets = (tuple(roles),)
    else:
        role_sets = tuple(tuple(r) for r in roles)

    def decorate(func: Callable[..., pl.Expr]) -> Callable[..., pl.Expr]:
        METRICS.add(MetricSpec(
            name=name,
            function=func,
            level=level,
            higher_is_better=higher_is_better,
            role_sets=role_sets,
            reference=reference,
            description=description,
            edge_rules=tuple(edge_rules),
            dtypes={k: tuple(v) for k, v in (dtypes or {}).items()},
            parameters=dict(parameters or {}),
            options=dict(options or {}),
            divergences=tuple(divergences),
            statistics=statistics,
            reduce=reduce,
            bounds=(float(bounds[0]), float(bounds[1])),
            statistics_of=statistics_of,
            reference_signature=reference_signature,
        ))
        if not options:  # a preset shares its function's docstring
            func.__doc__ = with_rules(func.__doc__, edge_rules, divergences)
        return func

    if function is not None:
        return decorate(function)
    return decorate


def resolve(name: str) -> tuple[MetricSpec, dict[str, Any]]:
    """Find the spec for a metric name, with the parameters parsed out of it."""
    spec = METRICS.get(name)
    if spec is not None and not spec.parameters:
        return spec, {}
    for candidate in METRICS.entries():
        if not candidate.parameters:
            continue
        match = candidate.pattern.match(name)
        if match:
            params = {}
            for parameter, convert in candidate.parameters.items():
                raw = match.group(parameter)
                try:
                    params[parameter] = convert(raw)
                except (TypeError, ValueError) as error:
                    raise EvalframeError(
                        f"metric {name!r}: parameter {parameter}={raw!r} is invalid: {error}"
                    ) from None
            return candidate, params
    raise EvalframeError(_unknown_message(name))


#: Names that users of other tools reach for, and what evalframe calls the metric.
RENAMED: dict[str, str] = {
    "f1_score": "'f1' (scikit-learn's classification F1, a corpus metric) or 'word_set_f1' "
    "(lighteval's f1_score: F1 of the sets of words)",
    "f1_score_quasi": "'word_set_f1(normalizer=helm)' (lighteval's f1_score_quasi)",
    "acc_mutual_info": "'acc_pmi' (lm-evaluation-harness's acc_mutual_info)",
}


def suggestions(name: str) -> list[str]:
    """Registered names close to ``name``: case and ``-``/``_`` differences first."""
    specs = METRICS.entries()
    close = []
    for spec in specs:
        if spec.parameters:
            for variant in {name.lower(), name.lower().replace("_", "-", 1), canonical_name(name)}:
                if spec.pattern.match(variant):
                    close.append(variant)
                    break
    plain = [spec.name for spec in specs if not spec.parameters]
    same = [n for n in plain if canonical_name(n) == canonical_name(name)]
    if same or close:
        return list(dict.fromkeys([*same, *close]))
    return METRICS.suggestions(name)


def _unknown_message(name: str) -> str:
    if name in RENAMED:
        return f"unknown metric {name!r}: evalframe calls it {RENAMED[name]}"
    close = suggestions(name)
    hint = f"; did you mean {' or '.join(repr(n) for n in close)}?" if close else ""
    known = ", ".join(METRICS.names())
    return f"unknown metric {name!r}{hint} Known metrics: {known}"


def all_metrics() -> list[MetricSpec]:
    """Every registered spec, sorted by name."""
    return METRICS.entries()


def is_metric_name(name: str) -> bool:
    """Whether ``name`` names a registered metric (parameterised names included)."""
    try:
        resolve(name)
    except EvalframeError:
        return False
    return True


def list_metrics() -> pl.DataFrame:
    """The registry as a DataFrame: one row per metric.

    Columns: name, level (sample | corpus), higher_is_better, roles (alternative role
    sets separated by ``|``), statistics (the per-row dtype), reduce, options (the
    settable keyword options with types and defaults), reference, description.

    >>> import evalframe as ef
    >>> table = ef.list_metrics()
    >>> table.filter(table["name"] == "squad_f1").select("level", "reduce").row(0)
    ('sample', 'mean')
    """
    from evalframe.metrics.request import describe_options

    rows = [
        {
            "name": spec.name,
            "level": spec.level,
            "higher_is_better": spec.higher_is_better,
            "roles": " | ".join(", ".join(roles) for roles in spec.role_sets),
            "statistics": str(spec.statistics),
            "reduce": spec.reduce.name if not callable(spec.reduce) else "by options",
            "options": describe_options(spec),
            "reference": str(spec.reference),
            "description": spec.description,
        }
        for spec in all_metrics()
    ]
    return pl.DataFrame(rows, schema=dict.fromkeys(LIST_COLUMNS, pl.String) | {
        "higher_is_better": pl.Boolean
    })


#: The columns of :func:`list_metrics`.
LIST_COLUMNS = (
    "name", "level", "higher_is_better", "roles", "statistics", "reduce", "options",
    "reference", "description",
)
