"""Harness layouts: one module per layout, detected from a file's content or chosen by name.

An adapter maps a harness's dump to evalframe's canonical columns (roles such as
``prediction``, ``gold``, ``choices``, ``choice_logprobs``, ``gold_index``, and the keys
``task``, ``model``, ``sample_id``, ``filter``, ``epoch``) and keeps every other field under its
own name; a harness's own per-sample metric values are kept as ``harness.<metric>``. The
table of layouts (:data:`LAYOUTS`) names them: ``format=`` takes a name from it.
"""

from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import (
    LAYOUTS,
    adapter_named,
    adapters,
    by_extension,
    closest,
    describe,
    detect,
    format_names,
    list_formats,
    resolve_format,
    tried,
)

__all__ = [
    "LAYOUTS",
    "Adapter",
    "Probe",
    "adapter_named",
    "adapters",
    "by_extension",
    "closest",
    "describe",
    "detect",
    "format_names",
    "list_formats",
    "resolve_format",
    "tried",
]
