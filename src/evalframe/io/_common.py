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


def json_kind(value: object) -> str:
    """How a parsed JSON value is named in messages.

    >>> json_kind([1]), json_kind({}), json_kind(None), json_kind(True), json_kind(2.5)
    ('a list', 'an empty object', 'null', 'a boolean', 'a number')
    """
    if isinstance(value, dict):
        return "an object" if value else "an empty object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else "a number"
