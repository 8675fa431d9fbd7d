"""What sibling text metrics share: their registration keywords and docstring sections.

A section several metrics' docstrings hold (the same parameters, the same returns) is
written once and put where a docstring has a placeholder line, ``{name}`` alone on its
line (:func:`fill_doc`). A metric written out gets the sections with :func:`documented`
(below its ``@register``); a family of metrics made by one factory (one signature, one
body) gets each member's name, docstring and registrations from :func:`generated`.

>>> doc = '''Summary.
...
...     {returns}
...     '''
>>> print(fill_doc(doc, returns='''
... Returns
... -------
... pl.Expr
...     Float64 per row.
... ''').strip())
Summary.
<BLANKLINE>
    Returns
    -------
    pl.Expr
        Float64 per row.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from evalframe.metrics._text_inputs import DTYPES, TEXT_DTYPES

__all__ = ["TEXT_PAIR", "TEXT_SAMPLES", "documented", "fill_doc", "generated"]

F = TypeVar("F", bound=Callable[..., Any])

#: The roles and dtypes of a metric of one prediction (``str``) and a gold (``str`` or
#: ``list[str]`` of alternatives or references).
TEXT_PAIR: Mapping[str, Any] = MappingProxyType(
    {"roles": ("prediction", "gold"), "dtypes": DTYPES}
)
#: The same where the prediction may also be several samples (``list[str]``).
TEXT_SAMPLES: Mapping[str, Any] = MappingProxyType(
    {"roles": ("prediction", "gold"), "dtypes": TEXT_DTYPES}
)

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>\w+)\}[ \t]*$")


def fill_doc(doc: str, **sections: str) -> str:
    """``doc`` with every line that is only ``{name}`` replaced by ``sections[name]``.

    A section is dedented, stripped of its leading and trailing blank lines, and indented
    as its placeholder; an empty section takes its line away, and the blank line after
    it. Other braces (``{k}``, a struct's ``{1,2.0}``) are left alone; a placeholder
    without a section raises ``KeyError``.

    >>> fill_doc("Title." + chr(10) + "    {notes}" + chr(10) + chr(10) + "    End.", notes="")
    'Title.\\n    End.'
    """
    lines: list[str] = []
    dropped = False
    for line in doc.splitlines():
        if dropped and not line.strip():
            dropped = False
            continue
        dropped = False
        match = _PLACEHOLDER.match(line)
        if match is None:
            lines.append(line)
            continue
        text = textwrap.dedent(sections[match["name"]]).strip("\n")
        dropped = not text
        lines.extend(textwrap.indent(text, match["indent"]).splitlines())
    return "\n".join(lines) + ("\n" if doc.endswith("\n") else "")


def documented(**sections: str) -> Callable[[F], F]:
    """A decorator that fills the placeholders of the function's docstring (:func:`fill_doc`)."""

    def decorate(function: F) -> F:
        function.__doc__ = fill_doc(function.__doc__ or "", **sections)
        return function

    return decorate


def generated(
    function: F, name: str, doc: str, *registrations: Callable[[F], object], **sections: str
) -> F:
    """``function``, made by a factory for a family of metrics, as the metric ``name``.

    Its ``__name__`` and ``__qualname__`` become ``name`` and its docstring ``doc`` with
    ``sections`` filled in (its ``__module__`` is the factory's); then each of
    ``registrations`` (a ``register(...)`` decorator) registers it, in order.
    """
    function.__name__ = function.__qualname__ = name
    function.__doc__ = fill_doc(doc, **sections)
    for registration in registrations:
        registration(function)
    return function
