r"""lm-evaluation-harness's filter chains: several responses per document, shipped pipelines.

lm-eval 0.4.13 keeps, for each document, the list of its responses (``resps``: one per
``repeats``) and runs each ``filter_list`` entry of the task over it, step after step
(``FilterEnsemble.apply``); what the last step leaves is the document's
``filtered_resps`` for that filter. Here:

- :func:`take_first`: ``TakeFirstFilter`` (``lm_eval/filters/selection.py``): the first
  response (``resps[0]``);
- :func:`take_first_k`: ``TakeKFilter(k)``: the first ``k`` responses; lm-eval checks that
  the *first* document has ``k`` and fails otherwise, as here;
- :func:`majority_vote`: ``MajorityVoteFilter``: ``[Counter(resps).most_common(1)[0][0]]``,
  the most frequent response in a one-item list, a tie going to the response seen first;
- :func:`apply_filters`: a chain of steps over a ``List(String)`` column (a ``String``
  column is one response per document); a step on one response (:func:`~evalframe.extract.
  lm_eval.regex`, ``lowercase``, ``uppercase``, ``remove_whitespace``, ``map``, any extractor
  of the table) runs on every response. A step is written as in a task's yaml
  (``{"function": "regex", "regex_pattern": ..., "group_select": -1}``), by name
  (``"take_first"``, ``"gsm8k_flexible"``) or as an :class:`~evalframe.extract.table.Extractor`;
- :func:`refilter`: lm-eval's ``filtered_resps`` computed again from the ``resps`` column
  of a samples file read by :func:`evalframe.load`, per row's ``filter``.

After ``take_first`` a document holds one string, and lm-eval's next step walks it as a
sequence, character by character; so do these steps (``["ab"]``, ``take_first`` twice:
``"a"``).
Taking the first of nothing (no response, an empty string) is an
:class:`~evalframe.EvalframeError`, as it is an ``IndexError`` in lm-eval.

The shipped chains whose steps are these filters are in :data:`TASK_FILTERS` (task ->
filter name -> steps, copied from the task's yaml, which the conformance tests read
again); their regex steps are registered in the extractor table (rule: the filter's name):

- ``gsm8k_strict``: ``gsm8k/gsm8k.yaml`` strict-match;
- ``gsm8k_flexible``: ``gsm8k/gsm8k.yaml`` flexible-extract (the same in ``gsm8k-cot``,
  ``gsm8k-cot-zeroshot``, ``gsm8k-cot-llama`` and llama3's ``gsm8k_llama``);
- ``gsm8k_cot_strict``: ``gsm8k/gsm8k-cot.yaml``, ``gsm8k-cot-zeroshot.yaml`` strict-match;
- ``gsm8k_cot_llama_strict``: ``gsm8k/gsm8k-cot-llama.yaml`` strict-match;
- ``gsm8k_cot_self_consistency``: ``gsm8k/gsm8k-cot-self-consistency.yaml`` score-first,
  maj@64, maj@8;
- ``gsm8k_llama_strict``: ``llama3/instruct/gsm8k/gsm8k.yaml`` strict_match;
- ``mmlu_flan_cot_zeroshot_strict``:
  ``mmlu/flan_cot_zeroshot/_mmlu_flan_cot_zeroshot_template_yaml`` strict-match;
- ``mmlu_flan_cot_fewshot``: ``mmlu/flan_cot_fewshot/_mmlu_flan_cot_fewshot_template_yaml``
  get-answer;
- ``bbh_cot_zeroshot_strict``: ``bbh/cot_zeroshot/<task>.yaml`` strict-match (27 tasks);
- ``bbh_cot_zeroshot_yes_no``: ``bbh/cot_zeroshot/navigate.yaml``,
  ``causal_judgement.yaml`` flexible-extract;
- ``bbh_cot_fewshot``: ``bbh/cot_fewshot/_cot_fewshot_template_yaml`` get-answer;
- ``gpqa_cot_strict``: ``gpqa/cot_zeroshot/_gpqa_cot_zeroshot_yaml`` strict-match (also
  ``cot_n_shot``, ``generative``);
- ``mmlu_pro_custom_extract``: ``mmlu_pro/_default_template_yaml`` custom-extract;
- ``remove_whitespace`` (:mod:`evalframe.extract.lm_eval`): ``nq_open/nq_open.yaml``,
  ``triviaqa/default.yaml`` remove_whitespace.

Rust forms written by hand (each one's chosen match is the same as Python's on every
text; the conformance tests run lm-eval's ``RegexFilter`` against them):

- ``gsm8k_flexible``, the last match of ``(-?[$0-9.,]{2,})|(-?[0-9]+)``: findall's
  matches are the maximal runs of ``[$0-9.,]`` of two characters or more and the lone
  digits, each with the ``-`` just before it; the last of them is the one followed only
  by characters outside the set and lone ``$ . ,``:
  ``(-?[$0-9.,]{2,}|-?[0-9]+)(?:[^$0-9.,]+[$.,]?)*\z`` (one search, no list of matches);
- the ``(?<=P)(.*)(?=.)`` patterns: the first place preceded by ``P`` that has a character
  other than ``"\n"`` after it; ``P(.*).`` finds the same place (no prefix of these lists
  sits inside another and ends before it) and the same ``.*``.

>>> import polars as pl
>>> df = pl.DataFrame({"resps": [["#### 5", "#### 6", "#### 6"], ["no", "#### 1,000"]]})
>>> df.select(
...     apply_filters("resps", ["gsm8k_strict", "take_first"]).alias("strict"),
...     apply_filters("resps", ["gsm8k_strict", "majority_vote", "take_first"]).alias("maj"),
... )
shape: (2, 2)
┌───────────┬───────────┐
│ strict    ┆ maj       │
│ ---       ┆ ---       │
│ str       ┆ str       │
╞═══════════╪═══════════╡
│ 5         ┆ 6         │
│ [invalid] ┆ [invalid] │
└───────────┴───────────┘
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.extract.lm_eval import (
    RUST_FORMS,
    Extractor,
    RustForm,
    map_values,
    regex,
    regex_expr,
)
from evalframe.extract.table import (
    EXTRACTORS,
    extracted_text,
    register_extractor,
    resolve_extractor,
)

__all__ = [
    "TASK_FILTERS",
    "apply_filters",
    "majority_vote",
    "refilter",
    "take_first",
    "take_first_k",
]

_REFERENCE = "lm-eval 0.4.13 lm_eval/tasks"
_STRING_LIST = pl.List(pl.String)

# ---------------------------------------------------------------- the shipped regexes

FLEXIBLE = r"(-?[$0-9.,]{2,})|(-?[0-9]+)"
_FLAN_ZEROSHOT = (
    "((?<=The answer is )(.*)(?=.)|(?<=answer is )(.*)(?=.)|(?<=The answer: )(.*)(?=.)"
    "|(?<=The final answer: )(.*)(?=.))"
)
_BBH_ZEROSHOT = (
    "((?<=The answer is )(.*)(?=.)|(?<=the answer is )(.*)(?=.)|(?<=The answer: )(.*)(?=.)"
    "|(?<=The final answer: )(.*)(?=.))"
)


@dataclass(frozen=True)
class _Shipped:
    name: str
    pattern: str
    group_select: int
    rule: str
    source: str
    meaning: str


_SHIPPED = (
    _Shipped("gsm8k_strict", r"#### (\-?[0-9\.\,]+)", 0, "strict-match", "gsm8k/gsm8k.yaml",
             "the number after the first '#### '"),
    _Shipped("gsm8k_flexible", FLEXIBLE, -1, "flexible-extract", "gsm8k/gsm8k.yaml",
             "the last number-like run ($ , . and digits; a lone digit), with its '-'"),
    _Shipped("gsm8k_cot_strict", r"The answer is (\-?[0-9\.\,]+).", 0, "strict-match",
             "gsm8k/gsm8k-cot.yaml", "the number of the first 'The answer is <n><any char>'"),
    _Shipped("gsm8k_cot_llama_strict", r"The final answer is ((-?[$0-9.,]{2,})|(-?[0-9]+))",
             -1, "strict-match", "gsm8k/gsm8k-cot-llama.yaml",
             "the number of the last 'The final answer is <n>'"),
    _Shipped("gsm8k_cot_self_consistency", r"The answer is (\-?[0-9\.\,]*[0-9]+)", 0,
             "score-first", "gsm8k/gsm8k-cot-self-consistency.yaml",
             "the number (ending in a digit) of the first 'The answer is <n>'"),
    _Shipped("gsm8k_llama_strict", r"final answer is (\-?[0-9\.\,]+)", -1, "strict_match",
             "llama3/instruct/gsm8k/gsm8k.yaml", "the number of the last 'final answer is <n>'"),
    _Shipped("mmlu_flan_cot_zeroshot_strict", _FLAN_ZEROSHOT, 0, "strict-match",
             "mmlu/flan_cot_zeroshot/_mmlu_flan_cot_zeroshot_template_yaml",
             "the rest of the line after the first 'The answer is '/'answer is '/'The answer: '"
             "/'The final answer: ', less its last character"),
    _Shipped("mmlu_flan_cot_fewshot", r"(?<=answer is )(.*)(?=.)", 0, "get-answer",
             "mmlu/flan_cot_fewshot/_mmlu_flan_cot_fewshot_template_yaml",
             "the rest of the line after the first 'answer is ', less its last character"),
    _Shipped("bbh_cot_zeroshot_strict", _BBH_ZEROSHOT, 0, "strict-match",
             "bbh/cot_zeroshot/date_understanding.yaml",
             "the rest of the line after the first 'The answer is '/'the answer is '/"
             "'The answer: '/'The final answer: ', less its last character"),
    _Shipped("bbh_cot_zeroshot_yes_no", r"\b(Yes|No|yes|no)\b", -1, "flexible-extract",
             "bbh/cot_zeroshot/navigate.yaml", "the last standalone Yes/No/yes/no"),
    _Shipped("bbh_cot_fewshot", r"(?<=the answer is )(.*)(?=.)", 0, "get-answer",
             "bbh/cot_fewshot/_cot_fewshot_template_yaml",
             "the rest of the line after the first 'the answer is ', less its last character"),
    _Shipped("gpqa_cot_strict", r"(?<=The answer is )(.*)(?=.)", 0, "strict-match",
             "gpqa/cot_zeroshot/_gpqa_cot_zeroshot_yaml",
             "the rest of the line after the first 'The answer is ', less its last character"),
    _Shipped("mmlu_pro_custom_extract", r"answer is \(?([ABCDEFGHIJ])\)?", 0, "custom-extract",
             "mmlu_pro/_default_template_yaml", "the letter A-J of the first 'answer is (X)'"),
)  # fmt: skip


def _after(prefixes: list[str]) -> str:
    escaped = [prefix.replace(" ", r"\x{20}") for prefix in prefixes]
    return "(?:" + "|".join(escaped) + ")(.*)."


RUST_FORMS.update({
    (FLEXIBLE, -1): RustForm(
        r"(-?[$0-9.,]{2,}|-?[0-9]+)(?:[^$0-9.,]+[$.,]?)*\z", tuple_like=True, strip=False
    ),
    (_FLAN_ZEROSHOT, 0): RustForm(
        _after(["The answer is ", "answer is ", "The answer: ", "The final answer: "]), True
    ),
    (_BBH_ZEROSHOT, 0): RustForm(
        _after(["The answer is ", "the answer is ", "The answer: ", "The final answer: "]), True
    ),
    (r"(?<=answer is )(.*)(?=.)", 0): RustForm(_after(["answer is "]), False),
    (r"(?<=the answer is )(.*)(?=.)", 0): RustForm(_after(["the answer is "]), False),
    (r"(?<=The answer is )(.*)(?=.)", 0): RustForm(_after(["The answer is "]), False),
})  # fmt: skip


def _shipped_function(entry: _Shipped):
    def function(text: pl.Expr) -> pl.Expr:
        return regex_expr(text, entry.pattern, entry.group_select, "[invalid]", entry.rule)

    function.__name__ = entry.name
    return function


for _entry in _SHIPPED:
    register_extractor(Extractor(
        _entry.name,
        _shipped_function(_entry),
        f"{_REFERENCE}/{_entry.source} filter {_entry.rule!r}: RegexFilter(regex_pattern="
        f"{_entry.pattern!r}, group_select={_entry.group_select}) (lm_eval/filters/extraction.py)",
        f"{_entry.meaning}; '[invalid]' where there is none",
    ))  # fmt: skip


def _regex_step(name: str) -> dict[str, Any]:
    entry = next(entry for entry in _SHIPPED if entry.name == name)
    step: dict[str, Any] = {"function": "regex", "regex_pattern": entry.pattern}
    if entry.group_select:
        step["group_select"] = entry.group_select
    return step


_FIRST = {"function": "take_first"}
_STRICT, _FLEX = ("strict-match", "flexible-extract")
_SC = [_regex_step("gsm8k_cot_self_consistency")]

#: lm-eval task -> {filter name: steps as in its yaml}, for the chains reproduced here.
TASK_FILTERS: dict[str, dict[str, list[dict[str, Any]]]] = {
    "gsm8k": {_STRICT: [_regex_step("gsm8k_strict"), _FIRST],
              _FLEX: [_regex_step("gsm8k_flexible"), _FIRST]},
    "gsm8k_cot": {_STRICT: [_regex_step("gsm8k_cot_strict"), _FIRST],
                  _FLEX: [_regex_step("gsm8k_flexible"), _FIRST]},
    "gsm8k_cot_zeroshot": {_STRICT: [_regex_step("gsm8k_cot_strict"), _FIRST],
                           _FLEX: [_regex_step("gsm8k_flexible"), _FIRST]},
    "gsm8k_cot_llama": {_STRICT: [_regex_step("gsm8k_cot_llama_strict"), _FIRST],
                        _FLEX: [_regex_step("gsm8k_flexible"), _FIRST]},
    "gsm8k_cot_self_consistency": {
        "score-first": [*_SC, _FIRST],
        "maj@64": [*_SC, {"function": "majority_vote"}, _FIRST],
        "maj@8": [{"function": "take_first_k", "k": 8}, *_SC, {"function": "majority_vote"},
                  _FIRST],
    },
    "gsm8k_llama": {"strict_match": [_regex_step("gsm8k_llama_strict"), _FIRST],
                    "flexible_extract": [_regex_step("gsm8k_flexible"), _FIRST]},
    "mmlu_flan_cot_zeroshot": {_STRICT: [_regex_step("mmlu_flan_cot_zeroshot_strict"), _FIRST]},
    "mmlu_flan_cot_fewshot": {"get-answer": [_regex_step("mmlu_flan_cot_fewshot"), _FIRST]},
    "bbh_cot_zeroshot": {_STRICT: [_regex_step("bbh_cot_zeroshot_strict"), _FIRST]},
    "bbh_cot_zeroshot_navigate": {_FLEX: [_regex_step("bbh_cot_zeroshot_yes_no"), _FIRST],
                                  _STRICT: [_regex_step("bbh_cot_zeroshot_strict"), _FIRST]},
    "bbh_cot_fewshot": {"get-answer": [_regex_step("bbh_cot_fewshot"), _FIRST]},
    "gpqa_cot_zeroshot": {_STRICT: [_regex_step("gpqa_cot_strict"), _FIRST]},
    "mmlu_pro": {"custom-extract": [_regex_step("mmlu_pro_custom_extract"), _FIRST]},
    "nq_open": {"remove_whitespace": [{"function": "remove_whitespace"}, _FIRST]},
    "triviaqa": {"remove_whitespace": [{"function": "remove_whitespace"}, _FIRST]},
}  # fmt: skip

#: Where each task's chains are written (``lm_eval/tasks/...``), for the docs and the tests.
TASK_SOURCES: dict[str, str] = {
    "gsm8k": "gsm8k/gsm8k.yaml",
    "gsm8k_cot": "gsm8k/gsm8k-cot.yaml",
    "gsm8k_cot_zeroshot": "gsm8k/gsm8k-cot-zeroshot.yaml",
    "gsm8k_cot_llama": "gsm8k/gsm8k-cot-llama.yaml",
    "gsm8k_cot_self_consistency": "gsm8k/gsm8k-cot-self-consistency.yaml",
    "gsm8k_llama": "llama3/instruct/gsm8k/gsm8k.yaml",
    "mmlu_flan_cot_zeroshot": "mmlu/flan_cot_zeroshot/_mmlu_flan_cot_zeroshot_template_yaml",
    "mmlu_flan_cot_fewshot": "mmlu/flan_cot_fewshot/_mmlu_flan_cot_fewshot_template_yaml",
    "bbh_cot_zeroshot": "bbh/cot_zeroshot/date_understanding.yaml",
    "bbh_cot_zeroshot_navigate": "bbh/cot_zeroshot/navigate.yaml",
    "bbh_cot_fewshot": "bbh/cot_fewshot/_cot_fewshot_template_yaml",
    "gpqa_cot_zeroshot": "gpqa/cot_zeroshot/_gpqa_cot_zeroshot_yaml",
    "mmlu_pro": "mmlu_pro/_default_template_yaml",
    "nq_open": "nq_open/nq_open.yaml",
    "triviaqa": "triviaqa/default.yaml",
}


# ---------------------------------------------------------------- steps


@dataclass(frozen=True)
class _Step:
    kind: str  # "each", "take_first", "take_first_k", "majority_vote"
    function: Any = None
    k: int = 0


_SELECTIONS = ("take_first", "majority_vote", "take_first_k")
_UNSUPPORTED = {
    "multi_choice_regex": "MultiChoiceRegexFilter reads each document's choices",
    "custom": "a custom filter is a Python function of the task",
    "regex_pos": "POSFilter",
    "format_span": "SPANFilter",
}


def _from_config(config: Mapping[str, Any]) -> _Step:
    options = dict(config)
    function = options.pop("function", None)
    if function == "regex":
        unknown = set(options) - {"regex_pattern", "group_select", "fallback"}
        if unknown:
            raise EvalframeError(f"apply_filters: regex has no option(s) {sorted(unknown)}")
        extractor = regex(
            options.get("regex_pattern", r"#### (\-?[0-9\.\,]+)"),
            group_select=options.get("group_select", 0),
            fallback=options.get("fallback", "[invalid]"),
        )
        return _Step("each", extractor.function)
    if function == "map":
        step = map_values(options.get("mapping_dict") or {}, options.get("default_value"))
        return _Step("each", step.function)
    if function == "take_first_k":
        k = options.get("k")
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise EvalframeError(f"apply_filters: take_first_k needs k >= 0, got {k!r}")
        return _Step("take_first_k", k=k)
    if function in _UNSUPPORTED:
        raise EvalframeError(
            f"apply_filters: lm-eval's filter {function!r} is not reproduced "
            f"({_UNSUPPORTED[function]})"
        )
    if isinstance(function, str) and not options:
        return _step(function)
    raise EvalframeError(f"apply_filters: {dict(config)!r} is not a filter step evalframe knows")


#: How :func:`apply_filters` words a step it does not know (fields as in
#: :data:`evalframe._registry.UNKNOWN`).
UNKNOWN_STEP = (
    "{where}step {name} is unknown; expected take_first, majority_vote, {{'function': "
    "'take_first_k', 'k': k}}, a yaml step (dict) or an extractor: one of {quoted}{hint}"
)


def _step(spec: Any) -> _Step:
    if isinstance(spec, _Step):
        return spec
    if isinstance(spec, Mapping):
        return _from_config(spec)
    if spec in ("take_first", "majority_vote"):
        return _Step(spec)
    if spec == "take_first_k":
        raise EvalframeError("apply_filters: take_first_k needs k: {'function': "
                             "'take_first_k', 'k': 8}")  # fmt: skip
    if spec == "regex":
        return _Step("each", regex().function)
    try:
        _, function = resolve_extractor("apply_filters", spec)
    except EvalframeError:
        raise EvalframeError(
            EXTRACTORS.unknown(spec, "apply_filters", message=UNKNOWN_STEP)
        ) from None
    if function is None:
        raise EvalframeError(f"apply_filters: step {spec!r} does nothing")
    return _Step("each", function)


def _steps(steps: Any) -> list[_Step]:
    if isinstance(steps, (str, Mapping, Extractor)) or callable(steps):
        steps = [steps]
    if not isinstance(steps, Sequence):
        raise EvalframeError(f"apply_filters: steps must be a list, got {type(steps).__name__}")
    return [_step(spec) for spec in steps]


# ---------------------------------------------------------------- running a chain


def _fail(what: str, count: int, first: int) -> EvalframeError:
    return EvalframeError(f"{what} on {count} document(s) (first: row {first} of the batch)")


def _characters(series: pl.Series) -> pl.Series:
    """A document that holds one string, as lm-eval's next step walks it: its characters."""
    return series.str.split("")


def _take_first(series: pl.Series) -> pl.Series:
    if series.dtype == pl.String:
        empty = (series == "").fill_null(False)
        if empty.any():
            raise _fail("take_first: an empty string has no first item (IndexError in lm-eval)",
                        int(empty.sum()), int(empty.arg_true()[0]))  # fmt: skip
        return series.str.slice(0, 1)
    empty = (series.list.len() == 0).fill_null(False)
    if empty.any():
        raise _fail("take_first: no response (IndexError in lm-eval's TakeFirstFilter)",
                    int(empty.sum()), int(empty.arg_true()[0]))  # fmt: skip
    return series.list.first()


def _take_first_k(series: pl.Series, k: int) -> pl.Series:
    if series.dtype == pl.String:
        series = _characters(series)
    documents = series.drop_nulls()
    if len(documents) and len(documents[0]) < k:
        raise EvalframeError(
            f"take_first_k: the first document has {len(documents[0])} response(s), fewer "
            f"than k={k} (lm-eval's TakeKFilter asserts it on the first document)"
        )
    return series.list.head(k)


def _majority_vote(series: pl.Series) -> pl.Series:
    if series.dtype == pl.String:
        series = _characters(series)
    empty = (series.list.len() == 0).fill_null(False)
    if empty.any():
        raise _fail("majority_vote: no response to vote on (IndexError in lm-eval)",
                    int(empty.sum()), int(empty.arg_true()[0]))  # fmt: skip
    frame = pl.DataFrame({"values": series}).with_row_index("row")
    flat = (
        frame.filter(pl.col("values").is_not_null())
        .with_columns(pl.int_ranges(pl.col("values").list.len()).alias("position"))
        .explode("values", "position")
    )
    votes = (
        flat.group_by("row", "values")
        .agg(pl.len().alias("count"), pl.col("position").min().alias("first"))
        .sort("row", "count", "first", descending=[False, True, False])
        .group_by("row", maintain_order=True)
        .agg(pl.col("values").first().alias("vote"))
    )
    joined = frame.join(votes, on="row", how="left", maintain_order="left")
    return (
        joined.select(
            pl.when(pl.col("values").is_null()).then(None).otherwise(pl.concat_list("vote"))
        )
        .to_series()
        .alias(series.name)
    )


def _run(series: pl.Series, steps: list[_Step]) -> pl.Series:
    if series.dtype == pl.String or series.dtype == pl.Null:
        series = pl.select(
            pl.when(pl.lit(series).is_not_null()).then(pl.concat_list(pl.lit(series, pl.String)))
        ).to_series()
    elif series.dtype != _STRING_LIST:
        raise EvalframeError(
            f"apply_filters: {series.name!r} is {series.dtype}; expected the responses of "
            "each document as List(String) (lm-eval's resps) or one String response"
        )
    for step in steps:
        if step.kind == "each":
            if series.dtype == pl.String:
                series = _characters(series)
            series = pl.select(extracted_text(pl.lit(series), step.function)).to_series()
        elif step.kind == "take_first":
            series = _take_first(series)
        elif step.kind == "take_first_k":
            series = _take_first_k(series, step.k)
        else:
            series = _majority_vote(series)
    return series


def _returns(steps: list[_Step]) -> pl.DataType:
    single = False
    for step in steps:
        single = step.kind == "take_first"
    return pl.String if single else _STRING_LIST


def apply_filters(resps: IntoExpr, steps: Any) -> pl.Expr:
    """The chain ``steps`` over ``resps``, as lm-eval's ``FilterEnsemble.apply`` runs it.

    ``resps`` is a ``List(String)`` column (a document's responses) or a ``String`` column
    (one response each). Steps are run in order (see the module docstring); the result is
    ``String`` when the chain ends with ``take_first``, else ``List(String)``. A null
    document stays null; a null response is ``""`` to a regex (lm-eval reads a non-string
    so) and null to the other steps.

    Parameters
    ----------
    resps
        A ``List(String)`` or ``String`` column name or expression.
    steps
        A list of steps (yaml dicts, names, extractors), or one step.

    Returns
    -------
    pl.Expr
        ``String`` after a final ``take_first``, else ``List(String)``.

    >>> import polars as pl
    >>> df = pl.DataFrame({"resps": [["The answer is 4.", "The answer is 5."], None]})
    >>> df.select(apply_filters("resps", [
    ...     {"function": "regex", "regex_pattern": r"The answer is (\\-?[0-9\\.\\,]+)."},
    ...     {"function": "take_first"},
    ... ])).to_series().to_list()
    ['4', None]
    """
    expr = parse_into_expr(resps)
    chain = _steps(steps)
    elementwise = all(step.kind != "take_first_k" for step in chain)
    return expr.map_batches(
        lambda series: _run(series, chain).alias(series.name),
        return_dtype=_returns(chain),
        is_elementwise=elementwise,
    )


def take_first(resps: IntoExpr) -> pl.Expr:
    """lm-eval's ``TakeFirstFilter``: each document's first response.

    Parameters
    ----------
    resps
        The responses of each document: a ``List(String)`` column name or expression.

    Returns
    -------
    pl.Expr
        ``String``: the first response (null for a null document).

    >>> import polars as pl
    >>> pl.DataFrame({"r": [["a", "b"], None]}).select(take_first("r")).to_series().to_list()
    ['a', None]
    """
    return apply_filters(resps, ["take_first"])


def take_first_k(resps: IntoExpr, k: int) -> pl.Expr:
    """lm-eval's ``TakeKFilter(k)``: each document's first ``k`` responses.

    Parameters
    ----------
    resps
        The responses of each document: a ``List(String)`` column name or expression.
    k
        How many to keep; the first document must hold at least ``k``.

    Returns
    -------
    pl.Expr
        ``List(String)``.

    >>> import polars as pl
    >>> pl.DataFrame({"r": [["a", "b", "c"], ["d", "e"]]}).select(
    ...     take_first_k("r", 2)).to_series().to_list()
    [['a', 'b'], ['d', 'e']]
    """
    return apply_filters(resps, [{"function": "take_first_k", "k": k}])


def majority_vote(resps: IntoExpr) -> pl.Expr:
    """lm-eval's ``MajorityVoteFilter``: the most frequent response, as a one-item list.

    A tie goes to the response that comes first (``Counter.most_common``).

    Parameters
    ----------
    resps
        The responses of each document: a ``List(String)`` column name or expression.

    Returns
    -------
    pl.Expr
        ``List(String)`` of one item.

    >>> import polars as pl
    >>> pl.DataFrame({"r": [["7", "8", "8"], ["9", "7", "7", "9"]]}).select(
    ...     majority_vote("r")).to_series().to_list()
    [['8'], ['9']]
    """
    return apply_filters(resps, ["majority_vote"])


# ---------------------------------------------------------------- samples files


def _chains(pipelines: Any) -> dict[str, Any] | None:
    """filter name -> steps (None: the same steps for every row)."""
    if isinstance(pipelines, str) and pipelines in TASK_FILTERS:
        return dict(TASK_FILTERS[pipelines])
    if isinstance(pipelines, Mapping) and "function" not in pipelines:
        return dict(pipelines)
    return None


def refilter(
    frame: pl.DataFrame | pl.LazyFrame,
    pipelines: Any,
    *,
    resps: str = "resps",
    filter_column: str = "filter",
    name: str = "refiltered",
) -> pl.DataFrame | pl.LazyFrame:
    """``frame`` with lm-eval's ``filtered_resps`` computed again from its responses.

    ``frame`` is a generation task's samples file as :func:`evalframe.load` reads it: its
    ``resps`` column holds, per row, the responses of the document's one request
    (``List(List(String))``), its ``filter`` column the filter of the row. ``pipelines``
    is a task of :data:`TASK_FILTERS` (``"gsm8k"``), a mapping filter name -> steps (or a
    shipped extractor name, followed by ``take_first``), or one chain for every row. The new
    column ``name`` holds, row for row, what lm-eval wrote in ``filtered_resps`` (the
    ``prediction`` column): ``String`` where the chains end with ``take_first``, else
    ``List(String)`` (a single answer then as a one-item list, as ``load`` reads a mixed
    file). A row whose filter has no chain is an :class:`~evalframe.EvalframeError`.

    Parameters
    ----------
    frame
        A samples file read by :func:`evalframe.load` (eager or lazy).
    pipelines
        A key of :data:`TASK_FILTERS`, a mapping filter name -> chain, or one chain.
    resps, filter_column
        The columns of the responses and of the filter names.
    name
        The new column.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        ``frame`` (of the same kind) with the column ``name``.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"filter": ["strict-match", "flexible-extract"],
    ...                       "resps": [[["So 3 + 4 = 7.\\n#### 7"]], [["It costs $1,250."]]]})
    >>> refilter(frame, "gsm8k").get_column("refiltered").to_list()
    ['7', '$1,250.']
    """
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    for column in (resps, filter_column):
        if column not in schema:
            raise EvalframeError(
                f"refilter: no column {column!r}; expected an lm-eval samples file read by "
                f"evalframe.load (columns {', '.join(map(repr, schema.names()))})"
            )
    source = pl.col(resps)
    if schema[resps] == pl.List(_STRING_LIST):
        several = lazy.select((source.list.len() > 1).fill_null(False).sum()).collect().item()
        if several:
            raise EvalframeError(
                f"refilter: {several} row(s) of {resps!r} hold several requests; a generation "
                "task has one request per document"
            )
        source = source.list.first()
    chains = _chains(pipelines)
    if chains is None:
        expr = apply_filters(source, _named(pipelines))
    else:
        present = lazy.select(pl.col(filter_column).unique()).collect().to_series().to_list()
        missing = [value for value in present if value not in chains]
        if missing:
            raise EvalframeError(
                f"refilter: no chain for filter(s) {missing!r} (chains for "
                f"{sorted(chains)!r}); filter those rows out first or name their chain"
            )
        used = {key: _steps(_named(chain)) for key, chain in chains.items() if key in present}
        kinds = {key: _returns(chain) for key, chain in used.items()}
        wrap = len(set(kinds.values())) > 1
        expr = None
        for key, chain in used.items():
            rows = pl.col(filter_column) == key
            value = apply_filters(pl.when(rows).then(source), chain)
            if wrap and kinds[key] == pl.String:
                value = pl.when(value.is_not_null()).then(pl.concat_list(value))
            expr = pl.when(rows).then(value) if expr is None else expr.when(rows).then(value)
        if expr is None:
            expr = pl.lit(None, dtype=pl.String)
    result = lazy.with_columns(expr.alias(name))
    return result.collect() if isinstance(frame, pl.DataFrame) else result


def _named(chain: Any) -> Any:
    """A shipped extractor's name alone is its regex then ``take_first``."""
    if isinstance(chain, str) and chain not in _SELECTIONS:
        return [chain, "take_first"]
    return chain
