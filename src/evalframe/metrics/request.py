"""Metric requests: ``alias=name(key=value, ...)``, parsed and validated against the registry.

One syntax everywhere, in Python and on the command line::

    exact_match(ignore_case=true, regexes_to_ignore=[',', '\\$'])
    f1(average=macro)
    em_ci=exact_match(ignore_case=true)       # the output column is named em_ci
    pass@10                                    # parameters in the name, no options

Option values are Python literals (strings quoted or bare words, numbers, lists),
plus ``true``/``false``/``none`` in any case. They are validated against the
metric function's keyword-only parameters and converted to their annotated types;
an unknown option or a bad value is an :class:`evalframe.EvalframeError` that lists
the valid options. Options fixed by a registered variant (``quasi_exact_match``
fixes the normaliser) cannot be changed.

>>> request = parse_request("em_ci=exact_match(ignore_case=true)")
>>> request.column, request.name, request.options
('em_ci', 'exact_match', {'ignore_case': True})
>>> parse_request("pass@10").params
{'k': 10}
"""

from __future__ import annotations

import ast
import inspect
import re
import types
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.metrics.reduce import Reduction
from evalframe.metrics.registry import MetricSpec, resolve
from evalframe.schema import ROLES

_ALIAS = re.compile(r"\s*([^=()\s][^=()]*?)\s*=(?!=)(.*)\Z", re.DOTALL)
_BARE_WORDS = {"true": True, "false": False, "none": None, "null": None}


@dataclass(frozen=True)
class _Bare:
    """An unquoted word that has a literal meaning (``none``, ``true``...): the option takes
    that meaning where its type allows it, else the word as text (``tokenize=none`` is
    sacrebleu's tokenizer ``'none'``, as ``tokenize=13a`` would be ``'13a'``)."""

    word: str
    value: Any


def _meanings(value: Any, as_word: bool) -> Any:
    if isinstance(value, _Bare):
        return value.word if as_word else value.value
    if isinstance(value, list):
        return [_meanings(element, as_word) for element in value]
    return value


def _has_bare(value: Any) -> bool:
    return isinstance(value, _Bare) or (
        isinstance(value, list) and any(_has_bare(element) for element in value)
    )


@dataclass(frozen=True)
class MetricRequest:
    """One requested metric: the output column, the spec, and validated options."""

    column: str
    name: str
    spec: MetricSpec
    params: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The canonical request: ``name(key=value, ...)`` with options sorted."""
        if not self.options:
            return self.name
        inner = ", ".join(
            f"{key}={option_literal(value)}" for key, value in sorted(self.options.items())
        )
        return f"{self.name}({inner})"

    def keyword_options(self) -> dict[str, Any]:
        """Every keyword-only option of the metric function: defaults, fixed, then given."""
        values = {
            name: parameter.default
            for name, parameter in _keyword_parameters(self.spec).items()
            if parameter.default is not inspect.Parameter.empty and name not in ROLES
        }
        values.update(self.spec.options)
        values.update(self.params)
        values.update(self.options)
        return values

    def build(self, columns: Mapping[str, str | pl.Expr]) -> pl.Expr:
        """The metric's expression (per-row score or statistics) over the role columns."""
        return self.spec.function(**columns, **self.spec.options, **self.params, **self.options)

    def reduction(self) -> Reduction:
        """How this metric's statistics reduce to its score, for these options."""
        return self.spec.reduction(self.keyword_options())

    def statistics(self) -> pl.DataType:
        """The per-row statistics dtype of this metric, for these options."""
        return self.spec.statistics_for(self.keyword_options())


def parse_request(text: str, *, column: str | None = None) -> MetricRequest:
    """Parse ``[alias=]name[(key=value, ...)]`` into a validated :class:`MetricRequest`.

    The output column is ``column`` if given, else the alias, else ``text`` itself
    (stripped), so ``score`` names columns exactly as requested.
    """
    if not isinstance(text, str):
        raise EvalframeError(
            f"a metric must be given by its name (a str), got {text!r} of type "
            f"{type(text).__name__}; see evalframe.list_metrics()"
        )
    body = text.strip()
    alias = None
    match = _ALIAS.match(body)
    if match:
        alias, body = match.group(1), match.group(2).strip()
    name, options_text = _split_options(body, text)
    spec, params = resolve(name)
    options = _parse_options(name, options_text) if options_text is not None else {}
    options = validate_options(spec, name, options, params)
    if column is None:
        column = alias if alias is not None else text.strip()
    _check_column_name(column, spec, text)
    request = MetricRequest(column=column, name=name, spec=spec, params=params, options=options)
    _dry_build(request)
    return request


def _check_column_name(column: str, spec: MetricSpec, text: str) -> None:
    """An output column must not be empty, nor be named as a different metric.

    A column called ``acc`` is read back as the metric ``acc`` (its statistics, its
    reduce, its missing-answer rule); naming the output of ``exact_match`` so would make
    every later aggregate of it wrong.
    """
    if not column.strip():
        raise EvalframeError(f"metric {text!r}: the output column needs a name")
    try:
        other, _ = resolve(column)
    except EvalframeError:
        return
    if other is not spec:
        raise EvalframeError(
            f"metric {text!r}: the column name {column!r} is the name of another metric "
            f"({other.name!r}), so the column would be read back as that metric; choose "
            "another alias"
        )


def _dry_build(request: MetricRequest) -> None:
    """Build the expression on placeholder columns: option values the metric refuses (a
    bad regex, say) are reported now, before any input is read."""
    roles = request.spec.role_sets[0] if request.spec.role_sets else ()
    placeholders = {role: pl.col(f"__evalframe_{role}") for role in roles}
    try:
        request.build(placeholders)
    except EvalframeError as error:
        text = str(error)
        if text.startswith("metric "):
            raise
        raise EvalframeError(f"metric {request.column!r}: {text}") from None
    except Exception:  # the expression needs the real columns to be built: checked later
        return


def parse_requests(metrics: str | Sequence[str] | Mapping[str, str]) -> list[MetricRequest]:
    """Parse a list of requests (or a mapping column -> request); names must be distinct."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(metrics, Mapping):
        requests = [parse_request(text, column=column) for column, text in metrics.items()]
    else:
        if not isinstance(metrics, Sequence):
            raise EvalframeError(
                f"metrics must be a list of metric names or a mapping column -> metric, got "
                f"{type(metrics).__name__}"
            )
        requests = [parse_request(text) for text in metrics]
    if not requests:
        raise EvalframeError("no metrics requested; see evalframe.list_metrics()")
    columns = [request.column for request in requests]
    repeated = sorted({column for column in columns if columns.count(column) > 1})
    if repeated:
        raise EvalframeError(
            f"metric column(s) requested more than once: {repeated}; give each an alias "
            "(alias=metric(...))"
        )
    return requests


def _split_options(body: str, text: str) -> tuple[str, str | None]:
    if "(" not in body:
        if ")" in body:
            raise EvalframeError(f"metric {text!r}: unbalanced ')'; expected name(key=value, ...)")
        return body, None
    name, _, rest = body.partition("(")
    if not rest.rstrip().endswith(")"):
        raise EvalframeError(
            f"metric {text!r}: options must end with ')'; expected name(key=value, ...)"
        )
    return name.strip(), rest.rstrip()[:-1]


def _parse_options(name: str, inner: str) -> dict[str, Any]:
    if not inner.strip():
        return {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # '\$' in a pattern: kept as written
            tree = ast.parse(f"_({inner})", mode="eval")
    except SyntaxError as error:
        raise EvalframeError(
            f"metric {name!r}: cannot read options ({inner}): {error.msg}; expected "
            "key=value pairs separated by commas, e.g. exact_match(ignore_case=true)"
        ) from None
    call = tree.body
    assert isinstance(call, ast.Call)
    if call.args or any(keyword.arg is None for keyword in call.keywords):
        raise EvalframeError(
            f"metric {name!r}: options must be given as key=value ({inner}); positional "
            "values are not accepted"
        )
    options: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg in options:
            raise EvalframeError(f"metric {name!r}: option {keyword.arg!r} is given twice")
        options[keyword.arg] = _value(name, keyword.arg, keyword.value)
    return options


def _value(name: str, option: str, node: ast.expr) -> Any:
    if isinstance(node, ast.Name):
        if node.id.lower() in _BARE_WORDS:
            return _Bare(node.id, _BARE_WORDS[node.id.lower()])
        return node.id
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(name, option, element) for element in node.elts]
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        raise EvalframeError(
            f"metric {name!r}: option {option}={ast.unparse(node)} is not a literal value; "
            "quote strings ('...'), write lists as [...]"
        ) from None


def _keyword_parameters(spec: MetricSpec) -> dict[str, inspect.Parameter]:
    return {
        name: parameter
        for name, parameter in inspect.signature(spec.function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }


def option_table(spec: MetricSpec) -> dict[str, tuple[Any, Any]]:
    """The options a user may set: name -> (annotation, default); fixed ones left out."""
    hints = _hints(spec.function)
    return {
        name: (hints.get(name, Any), parameter.default)
        for name, parameter in _keyword_parameters(spec).items()
        if name not in spec.options and name not in spec.parameters and name not in ROLES
    }


def describe_options(spec: MetricSpec) -> str:
    """A one-line list of the settable options with their types and defaults."""
    table = option_table(spec)
    if not table:
        return "none"
    return ", ".join(
        f"{name}: {_type_name(annotation)} = {option_literal(default)}"
        if default is not inspect.Parameter.empty
        else f"{name}: {_type_name(annotation)}"
        for name, (annotation, default) in table.items()
    )


def validate_options(
    spec: MetricSpec, name: str, options: Mapping[str, Any], params: Mapping[str, Any]
) -> dict[str, Any]:
    """Check ``options`` against the metric's keyword-only parameters; convert their types."""
    table = option_table(spec)
    converted: dict[str, Any] = {}
    for option, value in options.items():
        if option in spec.options:
            raise EvalframeError(
                f"metric {name!r}: option {option!r} is fixed to {spec.options[option]!r} by "
                f"this metric; settable options: {describe_options(spec)}"
            )
        if option in params:
            raise EvalframeError(
                f"metric {name!r}: {option!r} is set by the name ({name}); it is not an option"
            )
        if option not in table:
            raise EvalframeError(
                f"metric {name!r} has no option {option!r}; settable options: "
                f"{describe_options(spec)}"
            )
        annotation, _ = table[option]
        literal = _meanings(value, as_word=False)
        try:
            converted[option] = convert(annotation, literal)
        except (TypeError, ValueError) as error:
            if _has_bare(value):
                try:  # an unquoted none/true/... where the option takes the word as text
                    converted[option] = convert(annotation, _meanings(value, as_word=True))
                    continue
                except (TypeError, ValueError):
                    pass
            raise EvalframeError(
                f"metric {name!r}: option {option}={literal!r} is invalid: {error}; expected "
                f"{_type_name(annotation)}"
            ) from None
    return converted


def convert(annotation: Any, value: Any) -> Any:
    """``value`` converted to ``annotation`` (bool, int, float, str, Literal, sequences, unions).

    >>> convert(float, 1), convert(typing.Literal["macro", "micro"], "macro")
    (1.0, 'macro')
    """
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if annotation is Any or annotation is inspect.Parameter.empty:
        return value
    if origin is typing.Literal:
        for allowed in arguments:
            if value == allowed and type(value) is type(allowed):
                return allowed
        raise ValueError(f"expected one of {', '.join(option_literal(a) for a in arguments)}")
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in arguments:
            return None
        errors = []
        for member in arguments:
            if member is type(None):
                continue
            try:
                return convert(member, value)
            except (TypeError, ValueError) as error:
                errors.append(str(error))
        raise ValueError("; ".join(dict.fromkeys(errors)))
    if annotation is bool:
        if isinstance(value, bool):
            return value
        raise ValueError("expected true or false")
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ValueError("expected an integer")
    if annotation is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str) and value.lower() in ("nan", "inf", "-inf"):
            return float(value)
        raise ValueError("expected a number")
    if annotation is str:
        if isinstance(value, str):
            return value
        raise ValueError("expected a string")
    if origin in (Sequence, list, tuple, typing.Sequence) or annotation in (list, tuple):
        inner = arguments[0] if arguments else Any
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple):
            raise ValueError("expected a list")
        return tuple(convert(inner, element) for element in value)
    if origin is Callable or annotation is Callable:
        if callable(value):
            return value
        raise ValueError("expected a function")
    return value


def _hints(function: Callable) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception:  # annotations that cannot be evaluated: no conversion
        return {}


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Literal:
        return " | ".join(option_literal(a) for a in arguments)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in arguments)
    if origin in (Sequence, list, tuple):
        return f"list[{_type_name(arguments[0]) if arguments else 'any'}]"
    if annotation is type(None):
        return "none"
    if origin is Callable or annotation is Callable:
        return "function"
    return getattr(annotation, "__name__", str(annotation))


def option_literal(value: Any) -> str:
    """A value as written in a request: true/false/none, numbers, quoted strings, lists."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(option_literal(element) for element in value) + "]"
    if isinstance(value, str):
        return repr(value)
    if callable(value):
        return getattr(value, "__name__", "function")
    return repr(value)
