"""Reproducibility signatures: what changes a reported number, as ``key:value|...|version:x``.

Modelled on sacrebleu's ``Signature``: every aggregate row carries the metric, its
options, normaliser and answer extractor (``extract:<name>`` for a metric that takes
``extractor=``, and ``gold_extract:<name>`` when the gold is extracted too), the
reduction, the standard-error method (with the bootstrap count and seed) and the interval
method, then evalframe's version, last.

>>> from evalframe.metrics.request import parse_request
>>> request = parse_request("exact_match(ignore_case=true)")
>>> text = signature(request, stderr="sem", ci=0.95)
>>> text.split("|")[0], text.split("|")[-1].startswith("version:")
('metric:exact_match', True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalframe._version import __version__
from evalframe.extract.table import resolve_extractor
from evalframe.metrics.reduce import Reduction
from evalframe.metrics.request import MetricRequest, option_literal
from evalframe.normalize.table import resolve_normalizer


@dataclass(frozen=True)
class Signature:
    """Ordered ``key:value`` pairs; ``str()`` joins them with ``|`` and ends with the version."""

    pairs: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        return "|".join(f"{key}:{value}" for key, value in (*self.pairs, ("version", __version__)))


def options_text(options: Mapping[str, Any]) -> str:
    """Options as ``key=value`` pairs joined by commas, sorted by key (``-`` for none)."""
    if not options:
        return "-"
    return ",".join(f"{key}={option_literal(value)}" for key, value in sorted(options.items()))


def metric_pairs(request: MetricRequest) -> list[tuple[str, str]]:
    options = {
        key: value for key, value in request.keyword_options().items() if key not in request.params
    }
    normalizer = options.pop("normalizer", None) if "normalizer" in options else None
    extracts = "extractor" in options
    extractor = options.pop("extractor", None)
    gold_extractor = options.pop("gold_extractor", None)
    pairs = [("metric", request.name), ("opts", options_text(options))]
    if normalizer is not None:
        pairs.append(("norm", resolve_normalizer(request.name, normalizer)[0]))
    if extracts:
        pairs.append(("extract", resolve_extractor(request.name, extractor)[0]))
    gold_name = resolve_extractor(request.name, gold_extractor)[0]
    if gold_name != "none":
        pairs.append(("gold_extract", gold_name))
    return pairs


def score_signature(request: MetricRequest) -> str:
    """What determines a scored column: the metric, its options and normaliser, the reduce.

    >>> from evalframe.metrics.request import parse_request
    >>> score_signature(parse_request("squad_em")).rsplit("|", 1)[0]
    'metric:squad_em|opts:-|reduce:mean'
    >>> score_signature(parse_request("exact_match(extractor=boxed)")).split("|")[2:4]
    ['norm:none', 'extract:boxed']
    """
    pairs = [*metric_pairs(request), ("reduce", request.reduction().name)]
    return str(Signature(tuple(pairs)))


def signature(
    request: MetricRequest | None,
    *,
    stderr: str,
    ci: float,
    column: str | None = None,
    reduction: Reduction | None = None,
    bootstrap: int | None = None,
    seed: int | None = None,
    interval: str = "normal",
    missing: str | None = None,
    extra: Sequence[tuple[str, str]] = (),
) -> str:
    """The signature of one aggregated metric column.

    ``request`` is None for a user's own score column (aggregated by its mean), which
    is then named by ``column``.
    """
    pairs: list[tuple[str, str]] = []
    if request is None:
        pairs.append(("metric", f"column:{column}"))
        reduce_name = "mean"
    else:
        pairs.extend(metric_pairs(request))
        reduce_name = (reduction or request.reduction()).name
    pairs.append(("reduce", reduce_name))
    if missing is not None:
        pairs.append(("missing", missing))
    pairs.append(("stderr", stderr))
    if stderr == "bootstrap" or stderr.startswith("bootstrap("):
        pairs.append(("B", str(bootstrap)))
        pairs.append(("seed", str(seed)))
    pairs.append(("ci", f"{interval}-{ci:g}"))
    pairs.extend(extra)
    return str(Signature(tuple(pairs)))


def signature_fields(text: str | None) -> dict[str, str]:
    """The ``key:value`` fields of a signature string (``metric``, ``ci``, ``missing``...).

    >>> signature_fields("metric:acc|opts:-|missing:wrong|ci:wilson-0.95|version:0.2.0")["ci"]
    'wilson-0.95'
    """
    fields: dict[str, str] = {}
    for part in (text or "").split("|"):
        key, sep, value = part.partition(":")
        if sep and key not in fields:
            fields[key] = value
    return fields
