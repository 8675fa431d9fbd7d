"""Answer extractors: from a raw response to the answer a harness scores.

Each extractor reproduces one reference's extraction exactly (lm-evaluation-harness's
filters, lighteval's extractive match, MMLU-Pro's cascade, ``\\boxed{}``...). The
extractor table (:data:`EXTRACTORS`) names them; every metric that extracts takes
``extractor=`` with one of these names or a function. See :mod:`evalframe.extract.table`.

The modules that register extractors (:data:`EXTRACTOR_MODULES`) are imported the first
time the table is read, or one of their names is looked up here.
"""

import importlib

from evalframe.extract import api, audit, table
from evalframe.extract.table import EXTRACTOR_MODULES, load_table

_EAGER = (table, api, audit)

for _module in _EAGER:
    globals().update({_name: getattr(_module, _name) for _name in _module.__all__})


def _extractor_modules():
    load_table()
    return [importlib.import_module(f"{__name__}.{name}") for name in EXTRACTOR_MODULES]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    for module in _extractor_modules():
        if name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            globals()[name] = value
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    names = set(globals())
    for module in _extractor_modules():
        names.update(getattr(module, "__all__", ()))
    return sorted(names)


__all__ = [name for module in _EAGER for name in module.__all__]

# ``ef.extract(frame, ...)``: the package is callable, so that ``evalframe.extract`` stays
# the package (``import evalframe.extract.simple as module`` keeps working).
api.make_callable(__name__)
