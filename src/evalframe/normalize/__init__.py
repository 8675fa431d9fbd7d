"""Text normalisers: composable functions from ``pl.Expr`` to ``pl.Expr``.

Each normaliser reproduces one reference implementation's text handling exactly
(the SQuAD official script, lm-evaluation-harness, lighteval/HELM, DROP), so
metrics can take a normaliser and agree with that reference bit for bit. The
normaliser table (:data:`NORMALIZERS`) names them; every metric that normalises
takes ``normalizer=`` with one of these names or a function.

>>> import polars as pl
>>> from evalframe import normalize as N
>>> pl.select(N.squad_normalize(pl.lit("The  Cat!"))).item()
'cat'
"""

from evalframe.normalize import drop, harness, helm, math, squad, table

_MODULES = (squad, harness, helm, drop, math, table)

for _module in _MODULES:
    globals().update({_name: getattr(_module, _name) for _name in _module.__all__})

__all__ = [name for module in _MODULES for name in module.__all__]
