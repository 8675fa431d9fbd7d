"""How Inspect AI reads a number in ``match(numeric=True)``, for one string at a time.

Inspect (``inspect_ai`` 0.3.285, ``scorer/_common.py`` and ``scorer/_unicode.py``) calls a
word a number when, its sentence punctuation ``!?:;()[]{}'"` `` trimmed from both ends,
Python's ``float()`` reads it as a finite number, or else its Unicode reader does:

- leading signs (``-``, ``+``, ``−``, full-width and small forms, Chinese ``负``/``正``),
  each toggling or keeping the sign, spaces allowed between;
- one character with a Unicode numeric value (``½``, ``Ⅻ``, ``٣``);
- a trailing superscript exponent (``3²``, ``2⁻¹``), applied after the sign (``-2²`` is 4);
- one vulgar fraction added to the integer before it (``2½``);
- Chinese numerals (``十二``, ``三点五``, ``二〇二五``, units up to ``兆``);
- digits of any script, with ``.``/``,`` as decimal mark or grouping by a heuristic (the
  later of the two is the decimal mark; a lone comma is one before 1-3 digits),
  group separators (spaces, apostrophes, ``，``, ``、``...) skipped, and an ASCII
  exponent ``e``/``E``.

A number is written back as ``format(value, ".5g")``. These functions are evalframe's
own, written from that behaviour; the metric runs them once per *distinct* word of a
batch (and only on words holding a character with a numeric value, or a Chinese
numeral: no other word can be a number).

>>> normalize_number("1,234.50"), normalize_number("(42)"), normalize_number("2½")
('1234.5', '42', '2.5')
>>> parse_number("十二"), parse_number("nan"), parse_number("abc")
(12.0, None, None)
"""

from __future__ import annotations

import math
import unicodedata
from functools import cache

__all__ = ["could_be_number", "normalize_number", "parse_number"]

#: Trimmed from both ends of a word before it is read (not under ``location="exact"``).
SENTENCE_PUNCTUATION = "!?:;()[]{}'\"`"

_MINUS = frozenset("-\u2212\ufe63\uff0d")
_PLUS = frozenset("+\uff0b\ufe62")
_NEGATIVE_WORDS = frozenset("负負")
_POSITIVE_WORDS = frozenset("正")
_EXTRA_DECIMAL_MARKS = frozenset("\u066b\uff0e")
_GROUPING = frozenset(",\uff0c\ufe50\u3001\u066c \u00a0\u202f\u2009\u2007\u2008'\u2019\u02bc\uff07")
_SUPERSCRIPTS = {"⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6",
                 "⁷": "7", "⁸": "8", "⁹": "9"}
_SUPERSCRIPT_SIGNS = {"⁻": "-", "⁺": "+"}

_CHINESE_DIGITS = {
    **dict.fromkeys("零〇○", 0), "一": 1, "幺": 1, "壹": 1, "二": 2, "两": 2, "兩": 2,
    "贰": 2, "貳": 2, "三": 3, "叁": 3, "參": 3, "四": 4, "肆": 4, "五": 5, "伍": 5,
    "六": 6, "陆": 6, "陸": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9,
}
_CHINESE_TENS = {"廿": 20, "卅": 30, "卌": 40}
_CHINESE_SMALL_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CHINESE_LARGE_UNITS = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8, "兆": 10**12}
#: A set, as Inspect's: the point tried first in a text holding both follows its iteration order.
_CHINESE_POINTS = {"点", "點"}
_CHINESE_ZEROS = frozenset("零〇○")
#: Any of these makes a word a candidate Chinese numeral.
_CHINESE = frozenset(
    [*_CHINESE_DIGITS, *_CHINESE_TENS, *_CHINESE_SMALL_UNITS, *_CHINESE_LARGE_UNITS,
     *_CHINESE_POINTS, *_NEGATIVE_WORDS, *_POSITIVE_WORDS]
)


class _NotANumber(Exception):
    """Raised inside the Unicode reader: the text is not a number (Inspect's ValueError)."""


def _numeric_value(ch: str) -> float | None:
    value = unicodedata.numeric(ch, None)
    return None if value is None else float(value)


def _ascii_digit(ch: str) -> str | None:
    """The digit ``ch`` stands for: ASCII, a Unicode decimal or digit value, or Chinese."""
    if "0" <= ch <= "9":
        return ch
    for table in (unicodedata.decimal, unicodedata.digit):
        value = table(ch, None)
        if value is not None:
            return str(value)
    value = _CHINESE_DIGITS.get(ch)
    return None if value is None else str(value)


def _skippable(ch: str) -> bool:
    return ch.isspace() or ch in _GROUPING


def _take_signs(text: str) -> tuple[str, bool]:
    negative = False
    rest = text.lstrip()
    while rest and (rest[0] in _MINUS or rest[0] in _NEGATIVE_WORDS
                    or rest[0] in _PLUS or rest[0] in _POSITIVE_WORDS):
        if rest[0] in _MINUS or rest[0] in _NEGATIVE_WORDS:
            negative = not negative
        rest = rest[1:].lstrip()
    return rest, negative


def _one_numeric_character(text: str) -> float | None:
    return _numeric_value(text) if len(text) == 1 else None


def _superscript_exponent(text: str) -> tuple[str, int | None]:
    """``text`` without a trailing superscript exponent, and the exponent (or None)."""
    last = len(text) - 1
    while last >= 0 and _skippable(text[last]):
        last -= 1
    first = last
    while first >= 0 and text[first] in _SUPERSCRIPTS:
        first -= 1
    if first == last:  # no superscript digit at the end (or nothing but separators)
        return text.strip(), None
    start = first + 1
    if first >= 0 and text[first] in _SUPERSCRIPT_SIGNS:
        start = first
    base = text[:start].rstrip()
    if not base:
        return text.strip(), None
    exponent = "".join(
        _SUPERSCRIPTS.get(ch) or _SUPERSCRIPT_SIGNS[ch] for ch in text[start : last + 1]
    )
    return base, int(exponent)


def _with_vulgar_fraction(text: str) -> float | None:
    """A number with at most one embedded fraction character (``2½``): its value."""
    if not text:
        return None
    fractions = [
        (index, value)
        for index, ch in enumerate(text)
        if (value := _numeric_value(ch)) is not None and 0.0 < value < 1.0
    ]
    if not fractions:
        return _plain_number(text)
    if len(fractions) > 1:
        raise _NotANumber
    index, fraction = fractions[0]
    head, tail = text[:index].strip(), text[index + 1 :].strip()
    if not all(_skippable(ch) for ch in tail):
        raise _NotANumber
    if not head:
        return 0.0 + fraction
    whole = _plain_number(head)
    if whole is None:
        raise _NotANumber
    return whole + fraction


def _plain_number(text: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    if any(ch in _CHINESE for ch in text):
        value = _chinese_number(text)
        if value is not None:
            return float(value)
    value = _digits_number(text)
    if value is not None:
        return value
    return _one_numeric_character(text)


def _decimal_mark(text: str) -> str | None:
    last_dot, last_comma = text.rfind("."), text.rfind(",")
    if last_dot >= 0:
        return "." if last_dot > last_comma else ","
    if last_comma >= 0:
        after = sum(_ascii_digit(ch) is not None for ch in text[last_comma + 1 :])
        return "," if after in (1, 2, 3) else None
    return None


def _digits_number(text: str) -> float | None:
    """Digits of any script with decimal mark, grouping and an ASCII exponent."""
    text = text.strip()
    if not text:
        return None
    mark = _decimal_mark(text)
    out: list[str] = []
    has_decimal = has_exponent = False
    position = 0
    while position < len(text):
        ch = text[position]
        position += 1
        if ch in "eE" and not has_exponent:
            if not out:
                return None
            out.append(ch)
            has_exponent = True
            if position < len(text) and (text[position] in _PLUS or text[position] in _MINUS):
                out.append("+" if text[position] in _PLUS else "-")
                position += 1
        elif ch in _EXTRA_DECIMAL_MARKS or (mark is not None and ch == mark):
            if has_decimal:
                return None
            out.append(".")
            has_decimal = True
        elif _skippable(ch) or (mark is not None and ch in ",." and ch != mark):
            continue
        elif (digit := _ascii_digit(ch)) is not None:
            out.append(digit)
        else:
            return None
    if all(ch in ".eE+-" for ch in out):
        return None
    try:
        return float("".join(out))
    except ValueError:
        return None


def _chinese_number(text: str) -> float | None:
    text = text.strip()
    whole_part, fraction_part = text, ""
    for point in [*_CHINESE_POINTS, "\uff0e", "."]:
        if point in text:
            whole_part, _, fraction_part = text.partition(point)
            break
    if any(ch in _CHINESE_SMALL_UNITS or ch in _CHINESE_LARGE_UNITS or ch in _CHINESE_TENS
           for ch in whole_part):
        whole = _chinese_with_units(whole_part)
        if whole is None:
            return None
    else:
        digits = []
        for ch in whole_part:
            if ch.isspace():
                continue
            digit = _ascii_digit(ch)
            if digit is None:
                return None
            digits.append(digit)
        try:
            whole = int("".join(digits)) if digits else 0
        except ValueError as error:  # more digits than int() reads: not a number
            raise _NotANumber from error
    fraction, scale = 0.0, 0.1
    for ch in fraction_part:
        if ch.isspace():
            continue
        digit = _ascii_digit(ch)
        if digit is None:
            return None
        fraction += int(digit) * scale
        scale /= 10.0
    return float(whole) + fraction


def _chinese_with_units(text: str) -> int | None:
    total = section = number = 0
    for ch in text:
        if ch.isspace() or ch in _CHINESE_ZEROS:
            continue
        if ch in _CHINESE_TENS:
            section += _CHINESE_TENS[ch]
        elif ch in _CHINESE_DIGITS:
            number = _CHINESE_DIGITS[ch]
        elif (digit := _ascii_digit(ch)) is not None:
            number = int(digit)
        elif ch in _CHINESE_SMALL_UNITS:
            section += (number or 1) * _CHINESE_SMALL_UNITS[ch]
            number = 0
        elif ch in _CHINESE_LARGE_UNITS:
            total += (section + number) * _CHINESE_LARGE_UNITS[ch]
            section = number = 0
        else:
            return None
    return total + section + number


def _unicode_number(text: str) -> float:
    """Inspect's ``unicode_number_to_float``: the value, or :class:`_NotANumber`."""
    text = text.strip()
    if not text:
        raise _NotANumber
    text, negative = _take_signs(text)
    single = _one_numeric_character(text)
    if single is not None:
        return -single if negative else single
    base, exponent = _superscript_exponent(text)
    value = _with_vulgar_fraction(base)
    if value is None:
        raise _NotANumber
    if negative:
        value = -value
    if exponent is None:
        return float(value)
    try:
        return float(value**exponent)
    except (ArithmeticError, ValueError) as error:
        raise _NotANumber from error


def parse_number(text: str, *, trim_punctuation: bool = True) -> float | None:
    """The finite number Inspect reads in ``text``, or None (Inspect's ``_parse_number``).

    Divergence: a Chinese numeral too large for a float (over 309 digits), on which
    Inspect raises ``OverflowError``, is not a number here.
    """
    cleaned = text.strip(SENTENCE_PUNCTUATION) if trim_punctuation else text
    try:
        value = float(cleaned)
    except ValueError:
        value = math.nan
    if math.isfinite(value):
        return value
    try:
        value = _unicode_number(cleaned)
    except (_NotANumber, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def normalize_number(text: str, *, trim_punctuation: bool = True) -> str:
    """``text`` as Inspect writes a number (``format(value, ".5g")``), or unchanged."""
    value = parse_number(text, trim_punctuation=trim_punctuation)
    return text if value is None else format(value, ".5g")


@cache
def could_be_number() -> frozenset[str]:
    """Characters of which a number holds at least one: those with a numeric value, and
    the Chinese numeral characters (``点`` alone reads as 0). A word with none of them is
    never a number (``float()`` needs a digit, every other form a numeric character)."""
    from evalframe.normalize._python_text import all_characters

    numeric = (ch for ch in all_characters() if unicodedata.numeric(ch, None) is not None)
    return frozenset(numeric) | _CHINESE
