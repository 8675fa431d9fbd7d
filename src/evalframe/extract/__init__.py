"""Answer extractors: from a raw response to the answer a harness scores.

Each extractor reproduces one reference's extraction exactly (lm-evaluation-harness's
filters, lighteval's extractive match, MMLU-Pro's cascade, ``\\boxed{}``...). The
extractor table (:data:`EXTRACTORS`) names them; every metric that extracts takes
``extractor=`` with one of these names or a function. See :mod:`evalframe.extract.table`.
"""

from evalframe.extract import table

_MODULES = (table,)

for _module in _MODULES:
    globals().update({_name: getattr(_module, _name) for _name in _module.__all__})

__all__ = [name for module in _MODULES for name in module.__all__]
