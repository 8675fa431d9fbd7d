"""lighteval's math extractive match: its extraction cascade and its comparison.

lighteval 0.13.0 does not call math-verify: ``metrics/utils/extractive_match_utils.py``
and ``metrics/utils/math_comparison.py`` hold its own copy of the extraction and of the
comparison, which has drifted from math-verify 0.9.0 (see ``docs/extraction.md``, "Math
equivalence"). This module reproduces lighteval's copy (English, as its math metrics
use it), on top of the same libraries (``latex2sympy2_extended``, ``sympy``):

- the extraction cascade (``get_extraction_regexes`` + ``extract_target_from_pred``
  with ``fallback_mode="first_match"``, ``extraction_mode="any_match"``): LaTeX and
  plain-expression regexes by priority (``final answer is ... I hope`` 0, a boxed answer
  0 or 55, ``final answer ... is`` 50, ``answer:`` 100, ``answer`` 200, anywhere 300),
  the rightmost match of the best priority first, the parsed value plus the text of the
  first match (lighteval's fallback string) -- :func:`extract`;
- ``compare_gold_target`` (``strict=True``): string, structural, relational, set,
  interval, symbol, numeric (``precision`` decimal places where a float is involved)
  and symbolic (``simplify``) equality -- :func:`compare`;
- three extractors in the table: ``lighteval_math`` (LaTeX and expressions, the
  prediction side of lighteval's ``pass_at_k_math`` / ``avg_at_n_math``),
  ``lighteval_latex`` (LaTeX only) and ``lighteval_expr`` (expressions only). Their
  ``extracted`` is the text the cascade parsed (normalised LaTeX, or the number as
  lighteval rewrites it: ``"1,234"`` -> ``"1234"``), or the first match's text when
  nothing parsed; ``rule`` is ``"latex"``/``"expr"`` (parsed), ``"latex-text"``/
  ``"expr-text"`` (matched, not parsed), ``"none"`` or ``"timeout"``.

Parsing runs batched over the distinct strings (``map_batches``). lighteval bounds each
parse with a 5 s signal (its ``timeout_seconds``), which can only be set in the main
thread, and nothing else: a response with many matches, or a 200 kB ``\\boxed{1+1+...}``
where polars runs the kernel on one of its own threads, runs for minutes. Here each
response also has a budget (``timeout=``, :data:`EXTRACTION_TIMEOUT` = 10 s by default);
large batches, and batches outside the main thread, run in the session's killable worker
processes (:mod:`evalframe.extract._workers`, which the math comparison shares), where a
response that does not stop at its budget is killed 5 s later. A response past its
budget is not extracted (answer null, rule ``"timeout"``; a missing answer to a metric)
and counted in an :class:`ExtractionTimeoutWarning` naming the rows. lighteval (0.13.0)
and math-verify (0.9.0) put no limit on the input's size, and none is added.

>>> import polars as pl
>>> df = pl.DataFrame({"text": ["so $\\\\frac{1}{2}$", "Answer: 1,234 apples", "none", None]})
>>> out = df.select(lighteval_math("text").struct.unnest())
>>> out["extracted"].to_list(), out["rule"].to_list()
(['\\\\frac{1}{2}', '1234', None, None], ['latex', 'expr', 'none', None])
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe._kernel_cache import KernelCache
from evalframe.errors import EvalframeError
from evalframe.extract._workers import POOL, default_workers
from evalframe.extract.table import EXTRACTION, EXTRACTORS

__all__ = [
    "EXTRACTION_TIMEOUT",
    "ExtractionTimeoutWarning",
    "lighteval_expr",
    "lighteval_latex",
    "lighteval_math",
]

logger = logging.getLogger(__name__)

LIGHTEVAL = "lighteval 0.13.0"

# --- timeouts ---------------------------------------------------------------------------


class OutOfTime(BaseException):
    """The time budget of one response's extraction ran out (see :func:`extract_one`).

    A ``BaseException``, like ``KeyboardInterrupt``: the ``except Exception`` clauses of
    the cascade (lighteval's, which read a failed parse as "no value") do not swallow it.
    """


#: The wall-clock deadline (``time.monotonic()``) of the response being extracted, if any.
_DEADLINE: ContextVar[float | None] = ContextVar("extraction_deadline", default=None)


#: Seconds between repeats of a budget alarm once the budget is spent.
_BUDGET_REPEAT = 0.05


class _Alarm:
    """lighteval's ``utils/timeout.py`` decorator as a context: SIGALRM raises TimeoutError.

    Without a timeout, or outside the main thread (where signals cannot be set), the
    block runs unbounded. ``fired`` records that an alarm went off, even when the code
    it interrupted swallowed the ``TimeoutError`` (as sympy's broad ``except`` clauses
    can, in lighteval too).

    Within a response's time budget (:data:`_DEADLINE`) the alarm is cut to what is left
    of it, and when it is the budget that runs out the alarm raises :class:`OutOfTime`
    (also on entering the block, in any thread, once the deadline has passed).
    """

    fired = 0
    #: Alarms that ended a response's budget (swallowed or not).
    budget_fired = 0

    @classmethod
    @contextlib.contextmanager
    def limit(cls, seconds: float | None, what: str) -> Iterator[None]:
        deadline = _DEADLINE.get()
        budget = False
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise OutOfTime(what)
            budget = not seconds or remaining < seconds
            seconds = remaining if budget else seconds
        if not seconds or threading.current_thread() is not threading.main_thread():
            yield
            return

        active = True

        def handler(signum: int, frame: Any) -> None:
            if not active:
                return
            cls.fired += 1
            if budget:
                cls.budget_fired += 1
                raise OutOfTime(what)
            logger.warning("Timeout during %s", what)
            raise TimeoutError("Operation timed out!")

        previous = signal.signal(signal.SIGALRM, handler)
        # A budget alarm repeats until the block ends: an alarm that lands in code that
        # swallows exceptions (a parser's bare ``except``, a garbage-collector callback)
        # must not let the parse run on unbounded.
        signal.setitimer(signal.ITIMER_REAL, seconds, _BUDGET_REPEAT if budget else 0)
        try:
            yield
        finally:
            active = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


# --- the regexes (English literals: answer, ':', '.', ',', ' ', and, or) ------------------

_CURRENCIES = re.escape("$€£¥₹₽₪₩₫฿₡₢₣₤₥₦₧₨₩₪₫₭₮₯₰₱₲₳₴₵₶₷₸₹₺₻₼₽₾₿")
_OPERATORS = r"\+\-\*\×\/\^\(\)\÷"
_EXPR_CHARS = rf"[\d\.\s{_OPERATORS}]"


@cache
def _expr_patterns() -> tuple[tuple[re.Pattern[str], int], ...]:
    """lighteval's ``lazy_expr_regex`` (English, ``try_extract_without_anchor=True``)."""
    number = (
        r"(?:(?P<integer1>-?\d{1,3}(?:[ ,]\d{3})+)(?P<decimal1>\.\d+)?"
        r"|(?P<integer2>-?\d+)(?P<decimal2>[.,]\d+)"
        r"|(?P<decimal3>\.\d+)"
        r"|(?P<integer3>-?\d+))"
        r"(?P<percent>\s*(?:%|[Pp]ercent|\s*[Pp]ercentage|\s*[Pp]ct))?"
    )
    # at least one operator, starting with a digit (after an optional sign / parenthesis)
    expression = rf"(?P<expr>-?\(?-?\d{_EXPR_CHARS}*[{_OPERATORS}]{_EXPR_CHARS}+\)?)"
    before = r"(?:^|\s|\=)(?:\*\*)?"
    after = r"(?:\*\*)?(?:\.|,|\s?:|\s|\)|\$|$)"
    anchored_expression = rf"(?:{before}{expression}{after})"
    anchored_number = rf"(?:{before}[{_CURRENCIES}]?{number})"
    either = rf"(?:{anchored_expression}|{anchored_number})"
    patterns = [
        (rf"(?i:final answer is)\:?\s*{either}\.?\s?I hope", 0),
        (rf"(?i:final answer.{{0,100}}?)\s+is\:?{either}", 50),
        (rf"(?i:answer)\s?:(?:.{{0,100}}=\s*|.{{0,50}}?){either}(?!\s*=)", 100),
        (rf"(?i:answer)(?:.{{0,100}}=\s*|.{{0,50}}?){either}(?!\s*=)", 200),
        (anchored_expression, 300),
        (anchored_number, 300),
    ]
    return tuple((re.compile(pattern), priority) for pattern, priority in patterns)


def _latex_environments(prefix: str, boxed: bool) -> str:
    """lighteval's ``make_latex_env_pattern``: the math environments, then a percent sign."""
    percent = rf"(?P<{prefix}percent>(?:\\?%|[Pp]ercent|[Pp]ercentage|[Pp]ct))"
    contents = {
        "display_dollar": r"(?:[^$]|\$(?!\$))",
        "display_bracket": r"(?:[^\\]|\\(?!\]))",
        "inline_dollar": r"(?:\\[$]|[^\n$])",
        "inline_parenthesis": r"(?:[^\\\n]|\\(?!\)))",
        "inline_bracket": r"[^\n\]\[]",
    }
    if boxed:
        body = {key: rf"{c}*?\\boxed{{{c}+?}}{c}*?" for key, c in contents.items()}
    else:
        body = {key: rf"{c}+?" for key, c in contents.items()}
    alternatives = [
        rf"(?<!\\)\$\$(?P<{prefix}latexDisplayDollar>{body['display_dollar']})(?<!\\)\$\$",
        rf"(?<!\\)\\\[(?P<{prefix}latexDisplayBracket>{body['display_bracket']})(?<!\\)\\\]",
        rf"(?<!\\|\d)\$(?P<{prefix}latexInlineDollar>{body['inline_dollar']})(?<!\\)\$",
        rf"(?<!\\)\\\((?P<{prefix}latexInlineParenthesis>{body['inline_parenthesis']})"
        rf"(?<!\\)\\\)",
        rf"\s\[(?P<{prefix}latexInlineBracket>{body['inline_bracket']})\]\s",
    ]
    if not boxed:
        number = r"-?\d+(?:[.,]\d+)?"
        alternatives.append(rf"(?P<{prefix}latexFraction>-?\\frac{{{number}}}{{{number}}})")
    return rf"(?:(?:{'|'.join(alternatives)})\s*{percent}?)"


def _chained(boxed: bool) -> str:
    """Up to six environments joined by 'and' / 'or' / ',' (``first_``, ``next1_``...)."""
    rest = "".join(
        rf"(?:\s*(?:and|or|,)\s*{_latex_environments(f'next{i}_', boxed)})?" for i in range(1, 6)
    )
    return _latex_environments("first_", boxed) + rest


@cache
def _latex_patterns(boxed_priority: int) -> tuple[tuple[re.Pattern[str], int], ...]:
    """lighteval's ``lazy_latex_regex`` (English, ``try_extract_without_anchor=True``)."""
    latex = rf"(?:{_chained(False)})"
    patterns = [
        (rf"(?i:final answer is)\:?\s*{latex}\.?\s?I hope", 0),
        (rf"(?i:final answer.{{0,100}}?)\s+is\:?\s*{latex}", 50),
        (rf"(?i:answer)\s?:.{{0,50}}?{latex}", 100),
        (rf"(?i:answer).{{0,50}}?{latex}", 200),
        (latex, 300),
    ]
    if boxed_priority >= 0:
        patterns.append((_chained(True), boxed_priority))
        # a bare \boxed{...} up to the last '}': normalisation cuts it at its brace
        patterns.append((r"(?P<first_latexBoxed>\\boxed{.+})", boxed_priority))
    return tuple((re.compile(pattern, re.DOTALL), priority) for pattern, priority in patterns)


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    priority: int
    kind: str  # "latex" | "expr"


def extraction_patterns(
    targets: Sequence[str], *, boxed_first: bool = False
) -> tuple[Pattern, ...]:
    """The patterns of ``targets`` in lighteval's order: LaTeX before expressions, then
    by priority (a stable sort, as ``get_extraction_regexes`` + ``extract_target_from_pred``).

    ``boxed_first``: ``LatexExtractionConfig(boxed_match_priority=0)``; else lighteval's
    default 55.
    """
    ordered = [t for t in ("latex", "expr") if t in targets]
    found: list[Pattern] = []
    for kind in ordered:
        source = _latex_patterns(0 if boxed_first else 55) if kind == "latex" else _expr_patterns()
        found.extend(Pattern(regex, priority, kind) for regex, priority in source)
    return tuple(sorted(found, key=lambda p: p.priority))


# --- parsing one match --------------------------------------------------------------------


class _DeprecatedEquations(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("equations=True in NormalizationConfig")


@cache
def _normalization(boxed: str) -> Any:
    """lighteval's ``latex_normalization_config_default_factory`` (``boxed`` "all" or "last")."""
    from latex2sympy2_extended.latex2sympy2 import NormalizationConfig

    # lighteval passes equations=True, which latex2sympy2_extended 1.11 still applies but
    # announces as deprecated at every call: that one message is dropped
    logging.getLogger("latex2sympy2_extended.math_normalization").addFilter(_DeprecatedEquations())
    return NormalizationConfig(
        basic_latex=True, units=True, malformed_operators=True, nits=True, boxed=boxed,
        equations=True,
    )


@cache
def _complex() -> re.Pattern[str]:
    """lighteval's ``should_treat_as_complex`` tokens (complex numbers, matrix operators)."""
    return re.compile(_COMPLEX_TOKENS)


_COMPLEX_TOKENS = (
    "|".join(
        [
            r"\\mathbb\{C\}", r"\\i\b", r"\bi\b", r"\\text\{i\}", r"\\mathrm\{i\}", r"\\imath\b",
            r"\\det", r"\\operatorname\{tr\}", r"\\operatorname\{rank\}", r"\\text\{rank\}",
            r"\\arg\{", r"\\Re\{", r"\\Im\{", r"\\operatorname\{Re\}", r"\\operatorname\{Im\}",
            r"\\text\{Re\}", r"\\text\{Im\}",
        ]
    )
)


def _percent(value: Any) -> Any:
    import sympy

    return sympy.Mul(value, sympy.Rational(1, 100), evaluate=False)


def _group(groups: dict[str, str | None], start: str) -> str:
    return next((v for name, v in groups.items() if name.startswith(start) and v), "")


def _parse_expr_match(match: re.Match[str], timeout: int | None) -> tuple[Any, str]:
    """lighteval's ``extract_expr``: a number (commas/spaces dropped, leading zeros cut,
    ``,`` as the decimal mark, a percent as ``x * 1/100``), else the expression text
    parsed by ``sympy.parse_expr(evaluate=False)``."""
    groups = match.groupdict()
    integer, decimal = _group(groups, "integer"), _group(groups, "decimal")
    if integer or decimal:
        from sympy import Number

        integer = integer.replace(",", "").replace(" ", "").lstrip("0") or "0"
        text = integer + decimal.replace(",", ".")
        try:
            number = Number(text)
        except Exception:
            return None, text
        return (_percent(number) if groups.get("percent") else number), text
    expression = groups.get("expr") or ""
    if expression:
        from sympy.parsing import parse_expr

        try:
            with _Alarm.limit(timeout, "parsing"):
                return (
                    parse_expr(expression.replace("\n", " ").replace("^", "**"), evaluate=False),
                    expression,
                )
        except Exception:
            pass
    return None, expression


def _parse_latex_match(match: re.Match[str], timeout: int | None) -> tuple[Any, str]:
    """lighteval's ``extract_latex``: each environment normalised and parsed by latex2sympy;
    several environments (``$1$ and $2$``), all parsed, become one set."""
    from latex2sympy2_extended.latex2sympy2 import FiniteSet as L2SFiniteSet
    from latex2sympy2_extended.latex2sympy2 import latex2sympy, normalize_latex
    from sympy import FiniteSet

    groups = match.groupdict()
    found = []
    first = next(
        ((v, n) for n, v in groups.items() if n.startswith("first_latex") and v), None
    )
    if first is not None:
        found.append(first)
    for i in range(1, 6):
        item = next(
            ((v, n) for n, v in groups.items() if n.startswith(f"next{i}_latex") and v), None
        )
        if item is not None:
            found.append(item)
    values, texts = [], []
    for latex, name in found:
        prefix, _, rest = name.partition("_")
        config = _normalization("last" if rest == "latexBoxed" else "all")
        # lighteval does not time normalisation; only a response's budget bounds it here
        with _Alarm.limit(None, "normalisation") if _DEADLINE.get() else contextlib.nullcontext():
            normalized = normalize_latex(latex, config=config)
        texts.append(normalized)
        try:
            with _Alarm.limit(timeout, "parsing"):
                value = latex2sympy(
                    normalized,
                    is_real=not _complex().search(normalized),
                    convert_degrees=False,
                    normalization_config=None,
                )
            if groups.get(f"{prefix}_percent"):
                value = _percent(value)
            values.append(value)
        except Exception:
            values.append(None)
    if not values:
        return None, ""
    if len(values) > 1 and all(v is not None for v in values):
        elements = []
        for value in values:
            elements.extend(value.args if isinstance(value, FiniteSet) else [value])
        return L2SFiniteSet(*elements), " and ".join(texts)
    return values[0], texts[0]


@dataclass(frozen=True)
class Found:
    """What the cascade found in one text: lighteval's list, and what the extractor shows."""

    values: list  # lighteval's result: [parsed, first match's text], [text], or []
    text: str | None  # the text of the match that parsed (else the first match's)
    rule: str  # "latex" / "expr" / "latex-text" / "expr-text" / "none"


def find(text: str, patterns: Sequence[Pattern], timeout: int | None = 5) -> Found:
    """lighteval's ``extract_target_from_pred`` (``first_match`` fallback, ``any_match``).

    Priorities are tried from the best; within one, every match of every pattern, the
    one ending last first (ties: the one starting first, then pattern order). The first
    match that parses wins; the text of the first match tried (that had any text) is
    appended as lighteval's fallback string.
    """
    fallbacks: list[tuple[str, str]] = []
    parsed = None
    index = 0
    while index < len(patterns) and parsed is None:
        priority = patterns[index].priority
        group = []
        while index < len(patterns) and patterns[index].priority == priority:
            group.append(patterns[index])
            index += 1
        matches = [(m, p.kind) for p in group for m in p.regex.finditer(text)]
        matches.sort(key=lambda item: (item[0].end(), -item[0].start()), reverse=True)
        for match, kind in matches:
            if kind == "latex":
                value, shown = _parse_latex_match(match, timeout)
            else:
                value, shown = _parse_expr_match(match, timeout)
            if shown:
                fallbacks.append((shown, kind))
            if value is not None:
                parsed = (value, shown, kind)
                break
    values = [] if parsed is None else [parsed[0]]
    if fallbacks:
        values.append(fallbacks[0][0])
    if parsed is not None:
        return Found(values, parsed[1], parsed[2])
    if fallbacks:
        return Found(values, fallbacks[0][0], f"{fallbacks[0][1]}-text")
    return Found(values, None, "none")


def extract(text: str, patterns: Sequence[Pattern], *, timeout: int | None = 5) -> list:
    """lighteval's extraction result for ``text``: ``[parsed, text]``, ``[text]`` or ``[]``."""
    return find(text, patterns, timeout).values


# --- comparison (math_comparison.py, strict=True) -------------------------------------------


def _doit(value: Any) -> Any:
    try:
        return value.doit()
    except TimeoutError:
        raise
    except Exception:
        return value


def _is_number_or_percent(value: Any, kind: type) -> bool:
    from sympy import Mul, Rational

    if isinstance(value, kind):
        return True
    return (
        isinstance(value, Mul)
        and len(value.args) == 2
        and value.args[1] == Rational(1, 100)
        and isinstance(value.args[0], kind)
    )


def _numeric_equal(a: Any, b: Any, precision: int) -> bool:
    from sympy import Float, MatrixBase, MatrixExpr, Number

    if isinstance(a, (MatrixBase, MatrixExpr)) and isinstance(b, (MatrixBase, MatrixExpr)):
        a, b = _doit(a), _doit(b)
        if isinstance(a, MatrixBase) and isinstance(b, MatrixBase) and a.shape == b.shape:
            return all(
                _numeric_equal(x, y, precision) for x, y in zip(a.flat(), b.flat(), strict=False)
            )
        return False
    if _is_number_or_percent(a, Number) or _is_number_or_percent(b, Number):
        if _is_number_or_percent(a, Float) or _is_number_or_percent(b, Float):
            a, b = _doit(a), _doit(b)
            if isinstance(a, Number) and isinstance(b, Number):
                return a.round(precision) == b.round(precision)
            return False
        return _doit(a) == _doit(b)
    try:
        return (a - b).evalf(chop=True) == 0
    except TimeoutError:
        raise
    except Exception:
        return False


def _symbolic_equal(a: Any, b: Any) -> bool:
    from sympy import Basic, MatrixBase, simplify

    try:
        difference = simplify(a - b)
        if isinstance(difference, MatrixBase) and difference.is_zero_matrix:
            return True
        if isinstance(difference, Basic) and difference.is_zero:
            return True
    except TimeoutError:
        raise
    except Exception:
        pass
    return False


def _is_relation(value: Any) -> bool:
    from sympy import And
    from sympy.core.relational import Relational

    if isinstance(value, Relational):
        return True
    return isinstance(value, And) and all(isinstance(arg, Relational) for arg in value.args)


def _is_equation(value: Any) -> bool:
    from sympy import And, Eq

    if isinstance(value, Eq):
        return True
    return isinstance(value, And) and len(value.args) > 0 and all(
        isinstance(arg, Eq) for arg in value.args
    )


def _is_assignment(value: Any) -> bool:
    from latex2sympy2_extended.latex2sympy2 import is_expr_of_only_symbols
    from sympy import And, Eq

    if isinstance(value, Eq) and is_expr_of_only_symbols(value.lhs):
        return True
    return (
        isinstance(value, And)
        and len(value.args) > 0
        and all(isinstance(arg, Eq) for arg in value.args)
        and is_expr_of_only_symbols(value.args[0].lhs)
    )


def _last_relation(value: Any) -> Any:
    from sympy import And

    while isinstance(value, And):
        value = value.args[-1]
    return value


def _unwrap_functions(value: Any) -> Any:
    """Undefined functions ``f(x)`` become symbols ``f_x`` (so ``as_set`` can work)."""
    from sympy import Basic, Symbol
    from sympy.core.function import UndefinedFunction

    if not isinstance(value, Basic):
        return value
    if hasattr(value, "func") and isinstance(value.func, UndefinedFunction):
        arguments = [str(_unwrap_functions(arg)) for arg in value.args]
        return Symbol(f"{value.func.__name__}_{'_'.join(arguments)}")
    try:
        arguments = [_unwrap_functions(arg) for arg in value.args]
        if arguments:
            return value.func(*arguments)
    except TimeoutError:
        raise
    except Exception:
        pass
    return value


def _structurally_equal(a: Any, b: Any) -> bool:
    a, b = _doit(a), _doit(b)
    try:
        return bool(a == b) or str(a).strip() == str(b).strip()
    except TimeoutError:
        raise
    except Exception:
        return False


def _relations_equal(gold: Any, pred: Any, precision: int) -> bool:
    from sympy import And, Eq, GreaterThan, LessThan, StrictGreaterThan, StrictLessThan

    if isinstance(gold, And):
        return all(
            _relations_equal(g, p, precision) for g, p in zip(gold.args, pred.args, strict=False)
        )
    try:
        if type(gold) is type(pred) and expressions_equal(
            gold.lhs - gold.rhs, pred.lhs - pred.rhs, precision
        ):
            return True
    except TimeoutError:
        raise
    except Exception:
        pass
    flipped = (
        (isinstance(gold, GreaterThan) and isinstance(pred, LessThan))
        or (isinstance(gold, LessThan) and isinstance(pred, GreaterThan))
        or (isinstance(gold, StrictGreaterThan) and isinstance(pred, StrictLessThan))
        or (isinstance(gold, StrictLessThan) and isinstance(pred, StrictGreaterThan))
        or (isinstance(gold, Eq) and isinstance(pred, Eq))
    )
    if not flipped:
        return False
    try:
        return expressions_equal(gold.lhs - gold.rhs, pred.rhs - pred.lhs, precision)
    except TimeoutError:
        raise
    except Exception:
        return False


def _ordered_elements(values: Any) -> list:
    from sympy import default_sort_key, ordered

    def key(value: Any) -> Any:
        if _is_assignment(value):
            value = _last_relation(value).rhs
        try:
            return default_sort_key(value.evalf())
        except TimeoutError:
            raise
        except Exception:
            return default_sort_key(value)

    return list(ordered(values.args, keys=key, default=False))


def _elements_equal(gold: Any, pred: Any, precision: int) -> bool:
    """Finite sets / tuples element by element (sets sorted by value first)."""
    from latex2sympy2_extended.sets import FiniteSet as L2SFiniteSet
    from sympy import FiniteSet, Tuple

    if len(gold) != len(pred):
        return False
    if isinstance(gold, FiniteSet):
        gold_items, pred_items = _ordered_elements(gold), _ordered_elements(pred)
    elif isinstance(gold, Tuple) and isinstance(pred, L2SFiniteSet):
        gold_items, pred_items = gold.args, pred._unsorted_args
    elif isinstance(pred, FiniteSet):
        gold_items, pred_items = gold.args, _ordered_elements(pred)
    else:
        gold_items, pred_items = gold.args, pred.args
    return all(
        expressions_equal(g, p, precision) for g, p in zip(gold_items, pred_items, strict=False)
    )


def _sets_equal(gold: Any, pred: Any, precision: int) -> bool:
    from sympy import FiniteSet, Interval, Set, Tuple

    a = gold if isinstance(gold, (Set, Tuple)) else FiniteSet(gold)
    b = pred if isinstance(pred, (Set, Tuple)) else FiniteSet(pred)
    if isinstance(a, Interval) and isinstance(b, Interval):
        return (
            a.left_open == b.left_open
            and a.right_open == b.right_open
            and expressions_equal(a.start, b.start, precision)
            and expressions_equal(a.end, b.end, precision)
        )
    if a == b:
        return True
    if isinstance(a, Set) and isinstance(b, Set) and a.symmetric_difference(b).is_empty:
        return True
    finite = (FiniteSet, Tuple)
    if isinstance(a, finite) and isinstance(b, finite):
        return _elements_equal(a, b, precision)
    # an open interval (1, 2) against the pair 1, 2
    if isinstance(a, Interval) and isinstance(b, finite) and a.is_open and len(b) == 2:
        return _elements_equal(Tuple(a.start, a.end), b, precision)
    if isinstance(b, Interval) and isinstance(a, finite) and b.is_open and len(a) == 2:
        return _elements_equal(a, Tuple(b.start, b.end), precision)
    return False


def _symbols_equal(gold: Any, pred: Any) -> bool:
    """A symbol against ``E`` or against a product of symbols read as one word."""
    from sympy import E, Mul, Symbol

    if (isinstance(gold, Symbol) and gold.name.lower() == "e" and pred == E) or (
        isinstance(pred, Symbol) and pred.name.lower() == "e" and gold == E
    ):
        return True

    def word(product: Any) -> str | None:
        if isinstance(product, Mul) and all(
            arg == E or isinstance(arg, Symbol) for arg in product.args
        ):
            return "".join(arg.name if isinstance(arg, Symbol) else "e" for arg in product.args)
        return None

    if isinstance(gold, Symbol) and (spelled := word(pred)) is not None:
        return gold.name.lower() == spelled.lower()
    if isinstance(pred, Symbol) and (spelled := word(gold)) is not None:
        return pred.name.lower() == spelled.lower()
    return bool(gold == pred)


def expressions_equal(gold: Any, pred: Any, precision: int) -> bool:
    """lighteval's ``sympy_expr_eq`` (``strict=True``)."""
    from sympy import Basic, MatrixBase, Set, Symbol, Tuple

    if _is_assignment(gold) and not _is_equation(pred):
        gold = _last_relation(gold).rhs
    if _is_equation(pred) and not _is_equation(gold):
        pred = _last_relation(pred).rhs
    if _is_relation(gold) and isinstance(pred, Set):
        try:
            gold = _unwrap_functions(gold).as_set()
        except TimeoutError:
            raise
        except Exception:
            pass
    if _structurally_equal(gold, pred):
        return True
    if _is_relation(gold) and _is_relation(pred):
        return _relations_equal(gold, pred, precision)
    if isinstance(gold, (Set, Tuple)) or isinstance(pred, (Set, Tuple)):
        return _sets_equal(gold, pred, precision)
    if isinstance(gold, Symbol) or isinstance(pred, Symbol):
        return _symbols_equal(gold, pred)
    if isinstance(gold, (Basic, MatrixBase)) and isinstance(pred, (Basic, MatrixBase)):
        return _numeric_equal(gold, pred, precision) or _symbolic_equal(gold, pred)
    return False


def _one_pair(gold: Any, pred: Any, precision: int, timeout: int | None) -> bool:
    from sympy import Basic, MatrixBase

    try:
        with _Alarm.limit(timeout, "comparison"):
            if isinstance(gold, (Basic, MatrixBase)) and isinstance(pred, (Basic, MatrixBase)):
                return bool(expressions_equal(gold, pred, precision))
            if isinstance(gold, str) and isinstance(pred, str):
                gold, pred = gold.strip(), pred.strip()
                return bool(gold) and bool(pred) and gold == pred
            return False
    except Exception:
        return False


def compare(
    gold: Sequence[Any], prediction: Sequence[Any], *, precision: int = 6, timeout: int | None = 5
) -> bool:
    """lighteval's ``compare_gold_target``: any (gold value, predicted value) pair equal.

    Both sides are extraction results (:func:`extract`): sympy values or strings; a
    string equals only a string (both stripped, non-empty and identical).
    """
    return any(_one_pair(g, p, precision, timeout) for g in gold for p in prediction)


# --- the extractors -------------------------------------------------------------------------


#: Seconds one response's extraction may take, by default (see :func:`extract_one`).
EXTRACTION_TIMEOUT = 10.0
#: lighteval's own timeout of each parse (``timeout_seconds=5``), kept within the budget.
PARSE_TIMEOUT = 5
#: Distinct texts above which a batch is spread over worker processes.
PARALLEL_THRESHOLD = 256
#: The rule of a response whose extraction ran out of time (its answer is null).
TIMEOUT_RULE = "timeout"

_NAMES = {("latex", "expr"): "lighteval_math", ("latex",): "lighteval_latex",
          ("expr",): "lighteval_expr"}


class ExtractionTimeoutWarning(UserWarning):
    """Some responses ran past the extraction timeout and count as not extracted."""


@dataclass(frozen=True)
class ExtractOptions:
    """What one extraction runs with (sent to the worker processes)."""

    targets: tuple[str, ...]
    timeout: float | None = EXTRACTION_TIMEOUT


def check_timeout(where: str, timeout: object) -> float | None:
    """``timeout`` as seconds (a number > 0) or None; an :class:`EvalframeError` otherwise.

    >>> check_timeout("extract", 2)
    2.0
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise EvalframeError(
            f"{where}: timeout={timeout!r} is invalid; expected seconds per response (a number "
            f"> 0, default {EXTRACTION_TIMEOUT:g}) or None for no limit"
        )
    return float(timeout)


def check_workers(where: str, workers: object) -> int | None:
    """``workers`` must be None (one per core), 0 (in this process) or a positive integer."""
    if workers is not None and (
        not isinstance(workers, int) or isinstance(workers, bool) or workers < 0
    ):
        raise EvalframeError(
            f"{where}: workers={workers!r} is invalid; expected None (one per core), 0 (in "
            "this process) or a positive integer"
        )
    return workers


def hard_limit(timeout: float | None) -> float:
    """Seconds a worker may spend on one response before it is killed: ``timeout + 5``.

    The worker itself stops a response at its budget (a signal in its main thread); the
    limit only stops what the signal cannot interrupt (a long operation in C). Without a
    timeout: 600 s.
    """
    return 600.0 if timeout is None else timeout + 5.0


def _warm(targets: tuple[str, ...]) -> tuple[Pattern, ...]:
    """Import the parsers and compile the patterns, before a response's clock starts."""
    from latex2sympy2_extended.latex2sympy2 import latex2sympy, normalize_latex  # noqa: F401
    from sympy.parsing import parse_expr  # noqa: F401

    _normalization("all"), _normalization("last"), _complex()
    return extraction_patterns(targets)


def extract_one(text: str, options: ExtractOptions) -> tuple[str | None, str]:
    """(extracted, rule) of one response, within ``options.timeout`` seconds.

    lighteval's cascade (:func:`find`), each parse under lighteval's own 5 s timeout, the
    whole response under the budget: when it runs out the response is not extracted,
    ``(None, "timeout")``. The budget is enforced by a signal in the main thread (as a
    worker process runs it); elsewhere it is checked only between parses.

    >>> extract_one("so $x=2$", ExtractOptions(("latex",)))
    ('x=2', 'latex')
    """
    patterns = _warm(options.targets)
    token = _DEADLINE.set(
        None if options.timeout is None else time.monotonic() + options.timeout
    )
    budget_alarms = _Alarm.budget_fired
    try:
        with _quiet_parse_timeouts():
            found = find(text, patterns, PARSE_TIMEOUT)
    except OutOfTime:
        return None, TIMEOUT_RULE
    finally:
        _DEADLINE.reset(token)
    # the budget's alarm may land in code that swallows every exception (sympy's and
    # antlr's bare ``except``): the parse then merely fails, and the cascade would fall
    # back to the match's text, an answer made of an interrupted parse. A response whose
    # budget's alarm went off is not extracted, however the interruption was handled.
    if _Alarm.budget_fired != budget_alarms:
        return None, TIMEOUT_RULE
    return found.text, found.rule


class _ParseTimeouts(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Timeout during")


@contextlib.contextmanager
def _quiet_parse_timeouts() -> Iterator[None]:
    """Within the block, lighteval's "Timeout during parsing" log lines are dropped.

    A parse that runs out of its 5 s is lighteval's rule (the match did not parse), not
    news; a response that runs out of its budget is reported, with its row, instead.
    """
    quiet = _ParseTimeouts()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def _extract_distinct(
    texts: list[str], options: ExtractOptions, workers: int | None
) -> list[tuple[str | None, str]]:
    """(extracted, rule) of distinct texts: in this process, or in the worker processes.

    As the math comparison: above :data:`PARALLEL_THRESHOLD` texts, or when polars runs
    the kernel outside the main thread (where no signal can stop a parse), the texts go
    to the session's killable workers (:mod:`evalframe.extract._workers`), each under
    :func:`hard_limit`; ``workers=0`` keeps them here.
    """
    n_workers = default_workers() if workers is None else workers
    main = threading.current_thread() is threading.main_thread()
    if n_workers > 0 and texts and (len(texts) > PARALLEL_THRESHOLD or not main):
        answers, _ = POOL.run(
            "evalframe.extract.lighteval_math:extract_one", options, texts,
            workers=n_workers, limit=hard_limit(options.timeout),
            stopped=(None, TIMEOUT_RULE), what="lighteval extraction",
        )
        return answers
    return [extract_one(text, options) for text in texts]


def _shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _extract_kernel(options: ExtractOptions, workers: int | None) -> Any:
    name = _NAMES[options.targets]

    def kernel(texts: pl.Series) -> pl.Series:
        texts = texts.cast(pl.String)
        distinct = texts.drop_nulls().unique(maintain_order=True)
        results = _extract_distinct(distinct.to_list(), options, workers)
        table = pl.DataFrame(
            {
                "text": distinct,
                "extracted": pl.Series([r[0] for r in results], dtype=pl.String),
                "rule": pl.Series([r[1] for r in results], dtype=pl.String),
            }
        )
        frame = pl.DataFrame({"text": texts})
        joined = frame.join(table, on="text", how="left", maintain_order="left")
        late = joined["rule"] == TIMEOUT_RULE
        if late.any():
            rows = late.arg_true()
            distinct_late = int((table["rule"] == TIMEOUT_RULE).sum())
            limit = (
                f"the {options.timeout:g} s timeout" if options.timeout is not None
                else f"the hard limit of {hard_limit(None):g} s"
            )
            warnings.warn(
                f"extractor {name!r}: {len(rows)} response(s) ({distinct_late} distinct) ran "
                f"past {limit} and count as not extracted (answer "
                f"null, rule {TIMEOUT_RULE!r}); first: row {rows[0]} of the {len(texts)} "
                f"extracted together, text={_shorten(texts[rows[0]])!r}. Change the limit "
                "with timeout= (ef.extract(..., timeout=60), or "
                f"functools.partial({name}, timeout=60) as an extractor)",
                ExtractionTimeoutWarning,
                stacklevel=2,
            )
        return joined.select(pl.struct("extracted", "rule")).to_series().alias(texts.name)

    return kernel


#: One kernel object per settings, so polars can share the work of equal expressions.
_KERNELS: KernelCache[tuple[ExtractOptions, int | None], Any] = KernelCache("lighteval_math", 256)


def _extractor(
    targets: tuple[str, ...], text: IntoExpr, timeout: object = EXTRACTION_TIMEOUT,
    workers: object = None,
) -> pl.Expr:
    from evalframe.metrics._math_equal import require_math_verify

    name = _NAMES[targets]
    require_math_verify(name)
    options = ExtractOptions(targets, check_timeout(name, timeout))
    key = (options, check_workers(name, workers))
    kernel = _KERNELS.get_or_build(key, lambda: _extract_kernel(*key))
    # the kernel's struct is the EXTRACTION struct itself: taking its fields apart and
    # building it again would run the kernel once per field
    return parse_into_expr(text).cast(pl.String).map_batches(
        kernel, return_dtype=EXTRACTION, is_elementwise=True
    )


def gold_found(text: IntoExpr, targets: Sequence[str]) -> pl.Expr:
    """Whether lighteval's extraction finds anything in ``text`` (null for a null text).

    A text whose extraction ran out of time found nothing.
    """
    ordered = tuple(t for t in ("latex", "expr") if t in targets)
    return ~_extractor(ordered, text).struct.field("rule").is_in(["none", TIMEOUT_RULE])


_OPTIONS_DOC = """
    Parameters
    ----------
    text
        The responses: a ``String`` column (name or expression).
    timeout
        Seconds one response's extraction may take (default :data:`EXTRACTION_TIMEOUT`,
        10; a number > 0, or None for no limit). Within it each parse keeps lighteval's
        own 5 s timeout (a parse that runs out is a match that did not parse, and the
        cascade goes on, as in lighteval). A response past it is not extracted: answer
        null, rule ``"timeout"``, counted in an :class:`ExtractionTimeoutWarning` that
        names how many rows and the first. lighteval has no such limit (a 120 kB response
        can take minutes); it has no limit on the input's size either, nor has
        math-verify, so none is added: the timeout bounds the work.
    workers
        Worker processes (None: one per core; 0: in this process). Batches of more than
        256 distinct texts, and batches polars hands the kernel outside the main thread
        (where no signal can stop a parse), run in the session's killable workers, each
        response under a hard limit of ``timeout + 5`` seconds; ``workers=0`` keeps them
        in this process, where the budget is only checked between parses outside the
        main thread.
"""


_REFERENCE = (
    f"{LIGHTEVAL}: metrics/utils/extractive_match_utils.py extract_target_from_pred "
    "(fallback_mode='first_match', extraction_mode='any_match', English)"
)


@EXTRACTORS.decorator(
    name="lighteval_math",
    reference=_REFERENCE + " with [ExprExtractionConfig(), LatexExtractionConfig()]",
    meaning="lighteval's math answer: LaTeX (boxed, $...$, \\[...\\], \\frac) or a number / "
    "expression, by anchor priority, rightmost first; the text that parsed",
)
def lighteval_math(
    text: IntoExpr, *, timeout: float | None = EXTRACTION_TIMEOUT, workers: int | None = None
) -> pl.Expr:
    """lighteval's math extraction: LaTeX (``boxed_match_priority=55``) and expressions.

    The prediction side of lighteval 0.13.0's ``pass_at_k_math`` / ``avg_at_n_math``
    (``MultilingualExtractiveMatchMetric`` with ``[ExprExtractionConfig(),
    LatexExtractionConfig()]``). ``extracted`` is the text the cascade parsed (null where
    nothing matched); ``rule`` the config that matched (``"latex"``/``"expr"``, with
    ``-text`` when the match did not parse), ``"none"``, ``"timeout"`` (the response ran
    past ``timeout``: not extracted), or null for a null text.
    {options}
    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"t": ["final answer is $x=3$. I hope", "it is 50%", "", None]})
    >>> df.select(lighteval_math("t").struct.unnest())
    shape: (4, 2)
    ┌───────────┬───────┐
    │ extracted ┆ rule  │
    │ ---       ┆ ---   │
    │ str       ┆ str   │
    ╞═══════════╪═══════╡
    │ x=3       ┆ latex │
    │ 50        ┆ expr  │
    │ null      ┆ none  │
    │ null      ┆ null  │
    └───────────┴───────┘

    A response that runs past the timeout is counted, not waited for:

    >>> import warnings
    >>> slow = pl.DataFrame({"t": ["\\\\boxed{" + "+".join(["1"] * 60_000) + "}", "$x=2$"]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     out = slow.select(lighteval_math("t", timeout=0.5, workers=1).struct.unnest())
    >>> out.rows(), caught[0].category.__name__
    ([(None, 'timeout'), ('x=2', 'latex')], 'ExtractionTimeoutWarning')
    """
    return _extractor(("latex", "expr"), text, timeout, workers)


@EXTRACTORS.decorator(
    name="lighteval_latex",
    reference=_REFERENCE + " with [LatexExtractionConfig()]",
    meaning="lighteval's LaTeX answer only: boxed, $...$, \\[...\\], \\(...\\), \\frac{a}{b}",
)
def lighteval_latex(
    text: IntoExpr, *, timeout: float | None = EXTRACTION_TIMEOUT, workers: int | None = None
) -> pl.Expr:
    """lighteval's LaTeX extraction only (``LatexExtractionConfig()``, the gold side of
    ``g_pass_at_k_latex``): math environments, ``\\boxed{}``, ``\\frac{a}{b}``.
    {options}
    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"t": ["so \\\\boxed{\\\\frac{1}{2}}", "42", None]})
    >>> df.select(lighteval_latex("t").struct.unnest())["extracted"].to_list()
    ['\\\\frac{1}{2}', None, None]
    """
    return _extractor(("latex",), text, timeout, workers)


@EXTRACTORS.decorator(
    name="lighteval_expr",
    reference=_REFERENCE + " with [ExprExtractionConfig()]",
    meaning="lighteval's plain answer only: a number (thousands separators, %, currency) or an "
    "arithmetic expression",
)
def lighteval_expr(
    text: IntoExpr, *, timeout: float | None = EXTRACTION_TIMEOUT, workers: int | None = None
) -> pl.Expr:
    """lighteval's plain-expression extraction only (``ExprExtractionConfig()``, the gold
    side of ``expr_gold_metric`` / ``g_pass_at_k_math``): numbers and ``1/2``-like sums.
    {options}
    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"t": ["The answer is 1 234.5", "$\\\\frac{1}{2}$", None]})
    >>> df.select(lighteval_expr("t").struct.unnest())["extracted"].to_list()
    ['1234.5', None, None]
    """
    return _extractor(("expr",), text, timeout, workers)


for _function in (lighteval_math, lighteval_latex, lighteval_expr):
    _function.__doc__ = _function.__doc__.replace("    {options}\n", _OPTIONS_DOC)
