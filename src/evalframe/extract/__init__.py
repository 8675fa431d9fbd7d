"""Answer extractors: from a raw response to the answer a harness scores.

Each extractor reproduces one reference's extraction exactly (lm-evaluation-harness's
filters, lighteval's extractive match, MMLU-Pro's cascade, ``\\boxed{}``...). The
extractor table (:data:`EXTRACTORS`) names them; every metric that extracts takes
``extractor=`` with one of these names or a function. See :mod:`evalframe.extract.table`.

The modules that register extractors (``EXTRACTORS.modules``) are imported the first time
the table is read, or one of their public names is looked up here.
"""

import importlib

from evalframe.extract import api
from evalframe.extract.api import extract, extraction_expr
from evalframe.extract.audit import ExtractionAudit, audit_extractors
from evalframe.extract.table import (
    EXTRACTION,
    EXTRACTORS,
    ExtractFunction,
    Extractor,
    ExtractorLike,
    answer_of,
    extraction,
    list_extractors,
    register_extractor,
    resolve_extractor,
)

__all__ = [
    "EXTRACTION",
    "EXTRACTORS",
    "ExtractFunction",
    "ExtractionAudit",
    "Extractor",
    "ExtractorLike",
    "answer_of",
    "audit_extractors",
    "extract",
    "extraction",
    "extraction_expr",
    "list_extractors",
    "register_extractor",
    "resolve_extractor",
]


def _extractor_modules():
    EXTRACTORS.load()
    return [importlib.import_module(f"{__name__}.{name}") for name in EXTRACTORS.modules]


def __getattr__(name: str):
    if not name.startswith("__"):
        for module in _extractor_modules():
            if name in module.__all__:
                value = globals()[name] = getattr(module, name)
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    names = set(globals())
    for module in _extractor_modules():
        names.update(module.__all__)
    return sorted(names)


# ``ef.extract(frame, ...)``: the package is callable, so that ``evalframe.extract`` stays
# the package (``import evalframe.extract.simple as module`` keeps working).
api.make_callable(__name__)
