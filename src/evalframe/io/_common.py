"""Small helpers shared by the readers: error text and value previews."""

from __future__ import annotations


def first_line(error: BaseException) -> str:
    """The first line of an error's message (polars appends plans and hints below it).

    >>> first_line(ValueError("bad value\\n\\nhint: ..."))
    'bad value'
    """
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def short(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters.

    >>> short("x" * 100, limit=10)
    "'xxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
