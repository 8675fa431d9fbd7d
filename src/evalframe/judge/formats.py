"""The table of judge formats: what the judge is shown, and how its reply is read.

A pairwise format (:class:`Format`) is a prompt template over the roles ``question``,
``answer_a`` (the answer shown first) and ``answer_b`` (shown second), optional fixed
instructions sent before it (``system``), and a parser from the reply to a slot verdict
(:mod:`evalframe.judge.parse`). A grading format (:class:`GradeFormat`) is the same for one
answer and a grade. ``FORMATS`` and ``GRADE_FORMATS`` are the tables, by name:

- ``default``: the rubric, the question, the FIRST and SECOND answers, and the instruction to
  reply with exactly one word, FIRST, SECOND or TIE;
- ``mtbench``: FastChat MT-bench's ``pair-v2`` judge (``[[A]]``, ``[[B]]``, ``[[C]]``);
- ``arena_hard``: Arena-Hard-Auto's judge (``[[A>>B]]`` ... ``[[B>>A]]``, strength 3 for ``>>``);
- :func:`custom_format`: a user's template and verdict regex;
- grading: ``mtbench`` (FastChat ``single-v1``, ``Rating: [[7]]``), ``inspect_qa`` and
  ``inspect_fact`` (Inspect's ``model_graded_qa`` / ``model_graded_fact``, ``GRADE: C``/``I``,
  and ``..._partial`` with ``P`` for partial credit), ``numeric`` (a number on a bounded scale).

Templates are Python format strings (``{question}``; ``{{`` and ``}}`` for literal braces) that
are *not* run through ``str.format``: :func:`render` splits the template once and builds one
``pl.concat_str`` of literals and columns, so the whole column of prompts is built at once and
braces inside questions and answers are never interpreted. A row whose field is null gets a
null prompt (the harnesses report it as an error, without asking the judge).

>>> import polars as pl
>>> frame = pl.DataFrame({"q": ["2+2? {x}"], "a": ["4"], "b": ["5"]})
>>> fmt = custom_format("Q: {question}\\nA: {answer_a}\\nB: {answer_b}", r"\\b(A|B|tie)\\b",
...                     {"A": "first", "B": "second", "tie": "tie"})
>>> bindings = {"question": "q", "answer_a": "a", "answer_b": "b"}
>>> print(frame.select(render(fmt.template, frame.schema, bindings)).item())
Q: 2+2? {x}
A: 4
B: 5
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from evalframe._registry import Registry
from evalframe.errors import EvalframeError
from evalframe.judge import parse as P

__all__ = [
    "DEFAULT_RUBRIC",
    "FORMATS",
    "GRADE_FORMATS",
    "Format",
    "GradeFormat",
    "custom_format",
    "list_judge_formats",
    "render",
    "resolve_format",
    "resolve_grade_format",
    "template_fields",
]

#: Dtypes a template field may read; numbers and booleans are written as text.
_TEXT_DTYPES = (pl.String, pl.Categorical, pl.Enum)


@dataclass(frozen=True)
class Format:
    """A pairwise judge format: prompt template, fixed instructions, verdict parser.

    ``template`` is a format string over ``question``, ``answer_a`` (shown first),
    ``answer_b`` (shown second), ``rubric`` (filled with the rubric text) and any other column
    of the frame. ``system`` is sent before it, joined by ``joiner``. ``parse`` maps a reply
    expression to a slot (``"first"``, ``"second"``, ``"tie"``, ``"error"``); ``strength``,
    where the format grades its verdicts, to an Int64 weight.
    """

    name: str
    template: str
    parse: Callable[[pl.Expr], pl.Expr]
    description: str
    reference: str
    system: str | None = None
    joiner: str = "\n\n"
    strength: Callable[[pl.Expr], pl.Expr] | None = None
    rubric: str | None = None
    pattern: str | None = field(default=None, compare=False)

    def prefix(self) -> str:
        """The fixed text sent before the template (empty when there is none)."""
        return "" if self.system is None else self.system + self.joiner

    def fingerprint(self, template: str | None = None, rubric: str | None = None) -> str:
        """A short hash of everything this format sends and reads (for signatures)."""
        parts = (self.name, self.prefix(), template or self.template, rubric or "", self.pattern)
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class GradeFormat:
    """A pointwise grading format: prompt template, fixed instructions, grade reader.

    ``read(reply, scale)`` returns two expressions, the grade as read (String, null where
    none) and its score (Float64, null where none, or out of ``scale``). ``scale`` is the
    default ``(low, high)`` bounds (``None``: unbounded); ``scaled`` says whether the format
    takes bounds at all.
    """

    name: str
    template: str
    read: Callable[[pl.Expr, tuple[float, float] | None], tuple[pl.Expr, pl.Expr]]
    description: str
    reference: str
    system: str | None = None
    joiner: str = "\n\n"
    scale: tuple[float, float] | None = None
    scaled: bool = True
    literals: Mapping[str, str] = field(default_factory=dict)
    rubric: str | None = None

    def prefix(self) -> str:
        """The fixed text sent before the template (empty when there is none)."""
        return "" if self.system is None else self.system + self.joiner

    def fingerprint(self, template: str | None = None, rubric: str | None = None) -> str:
        """A short hash of everything this format sends (for signatures)."""
        parts = (self.name, self.prefix(), template or self.template, rubric or "")
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def _row(kind: str) -> Callable[[Format | GradeFormat], dict[str, str]]:
    """A format's row in :func:`list_judge_formats`."""
    return lambda format: {
        "kind": kind, "name": format.name, "description": format.description,
        "reference": format.reference,
    }


#: The columns of :func:`list_judge_formats`.
_COLUMNS = ("kind", "name", "description", "reference")

FORMATS: Registry[Format] = Registry(
    "judge format",
    noun="pairwise judge format",
    columns=_COLUMNS,
    describe=_row("pairwise"),
    message="{where}unknown {noun} {name}; the formats are {sorted}, or a Format from "
    "evalframe.judge.custom_format(template, pattern, verdicts){hint}",
)
"""Pairwise formats by name.

The formats with a ``system`` text send it in the same message as the template (the judge
interface takes one prompt string), followed by a blank line; FastChat itself sends
``pair-v2``'s system prompt as a system message to GPT-4 and inline (after ``[Instruction]``)
to judges without one.
"""

GRADE_FORMATS: Registry[GradeFormat] = Registry(
    "judge grading format",
    noun="grading format",
    columns=_COLUMNS,
    describe=_row("grade"),
    message="{where}unknown {noun} {name}; the formats are {sorted}{hint}",
)
"""Grading formats by name (the system text is sent in the same message, as for pairs)."""


# ---------------------------------------------------------------- templates


def template_fields(template: str) -> list[str]:
    """The field names of a template, in order of first use.

    >>> template_fields("{rubric}\\n{question} {{not a field}} {answer_a} {question}")
    ['rubric', 'question', 'answer_a']
    """
    return list(dict.fromkeys(name for _, name in _pieces(template) if name is not None))


def _pieces(template: str) -> list[tuple[str, str | None]]:
    """``(literal, field)`` pairs of a template; a bad template is an error that says why."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        raise EvalframeError(
            f"the template {_short(template)!r} is not a valid format string ({error}); write "
            "fields as {name} and literal braces as {{ and }}"
        ) from None
    pieces = []
    for literal, name, spec, conversion in parsed:
        if name is not None and (
            not name.isidentifier() or spec or conversion or name.strip() != name
        ):
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (
                f":{spec}" if spec else ""
            ) + "}"
            raise EvalframeError(
                f"the template field {shown} is not a column name: fields are plain names "
                "such as {question}, without attributes, indexes, conversions or format specs"
            )
        pieces.append((literal, name))
    return pieces


def render(
    template: str,
    schema: Mapping[str, pl.DataType],
    bindings: Mapping[str, str] | None = None,
    literals: Mapping[str, str] | None = None,
    prefix: str = "",
) -> pl.Expr:
    """The template filled in for every row, as one String expression named ``prompt``.

    A field is filled, in this order, with ``literals[field]`` (fixed text such as the
    rubric), the column ``bindings[field]``, or the column named like the field. Strings are
    used as they are; numbers and booleans as their text. A field that names no column is an
    error naming it and the columns available. ``prefix`` is fixed text put first.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"question": ["Say {hi}"], "n": [3]})
    >>> frame.select(render("{rubric}: {question} x{n}", frame.schema,
    ...                     literals={"rubric": "Judge"})).item()
    'Judge: Say {hi} x3'
    """
    bindings = dict(bindings or {})
    literals = dict(literals or {})
    parts: list[pl.Expr] = []
    text = prefix
    for literal, name in _pieces(template):
        text += literal
        if name is None:
            continue
        if name in literals:
            text += literals[name]
            continue
        if text:
            parts.append(pl.lit(text, dtype=pl.String))
            text = ""
        parts.append(_field(name, bindings.get(name, name), schema, bindings))
    if text or not parts:
        parts.append(pl.lit(text, dtype=pl.String))
    return pl.concat_str(parts, ignore_nulls=False).alias("prompt")


def _field(
    name: str, column: str, schema: Mapping[str, pl.DataType], bindings: Mapping[str, str]
) -> pl.Expr:
    if column not in schema:
        mapped = f" (mapped to column {column!r})" if column != name else ""
        raise EvalframeError(
            f"the template field {{{name}}}{mapped} names no column of the frame; the frame "
            f"has columns {list(schema)}. Rename the field, or map it to a column with "
            f"columns={{{name!r}: 'your_column'}}"
        )
    dtype = schema[column]
    if isinstance(dtype, _TEXT_DTYPES) or dtype == pl.String:
        return pl.col(column).cast(pl.String)
    if dtype.is_numeric() or dtype == pl.Boolean:
        return pl.col(column).cast(pl.String)
    raise EvalframeError(
        f"the template field {{{name}}} reads column {column!r}, which is {dtype}; a prompt "
        "field needs text (String), a number or a boolean"
    )


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- pairwise formats

DEFAULT_RUBRIC = (
    "You are an impartial judge. Compare the two answers to the question below and decide "
    "which one answers it better: more correct, more helpful, more relevant. Do not let the "
    "order in which the answers are shown, or their length, influence your decision."
)

DEFAULT_TEMPLATE = (
    "{rubric}\n\n"
    "[Question]\n{question}\n\n"
    "[The Start of the FIRST Answer]\n{answer_a}\n[The End of the FIRST Answer]\n\n"
    "[The Start of the SECOND Answer]\n{answer_b}\n[The End of the SECOND Answer]\n\n"
    "Reply with exactly one word: FIRST if the first answer is better, SECOND if the second "
    "answer is better, or TIE if they are equally good."
)

#: FastChat ``fastchat/llm_judge/data/judge_prompts.jsonl``, ``pair-v2``: system prompt.
MTBENCH_PAIR_SYSTEM = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by "
    "two AI assistants to the user question displayed below. You should choose the assistant "
    "that follows the user's instructions and answers the user's question better. Your "
    "evaluation should consider factors such as the helpfulness, relevance, accuracy, depth, "
    "creativity, and level of detail of their responses. Begin your evaluation by comparing "
    "the two responses and provide a short explanation. Avoid any positional biases and "
    "ensure that the order in which the responses were presented does not influence your "
    "decision. Do not allow the length of the responses to influence your evaluation. Do not "
    "favor certain names of the assistants. Be as objective as possible. After providing "
    "your explanation, output your final verdict by strictly following this format: "
    '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a '
    "tie."
)
#: ``pair-v2``'s ``prompt_template``.
MTBENCH_PAIR_TEMPLATE = (
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)

#: Arena-Hard-Auto ``utils/judge_utils.py`` ``OG_ARENA_HARD_PROMPT`` (the system prompt).
ARENA_HARD_SYSTEM = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by "
    "two AI assistants to the user prompt displayed below. You will be given assistant A's "
    "answer and assistant B's answer. Your job is to evaluate which assistant's answer is "
    "better.\n\n"
    "Begin your evaluation by generating your own answer to the prompt. You must provide your "
    "answers before judging any answers.\n\n"
    "When evaluating the assistants' answers, compare both assistants' answers with your "
    "answer. You must identify and correct any mistakes or inaccurate information.\n\n"
    "Then consider if the assistant's answers are helpful, relevant, and concise. Helpful "
    "means the answer correctly responds to the prompt or follows the instructions. Note when "
    "user prompt has any ambiguity or more than one interpretation, it is more helpful and "
    "appropriate to ask for clarifications or more information from the user than providing "
    "an answer based on assumptions. Relevant means all parts of the response closely connect "
    "or are appropriate to what is being asked. Concise means the response is clear and not "
    "verbose or excessive.\n\n"
    "Then consider the creativity and novelty of the assistant's answers when needed. "
    "Finally, identify any missing important information in the assistants' answers that "
    "would be beneficial to include when responding to the user prompt.\n\n"
    "After providing your explanation, you must output only one of the following choices as "
    "your final verdict with a label:\n\n"
    "1. Assistant A is significantly better: [[A>>B]]\n"
    "2. Assistant A is slightly better: [[A>B]]\n"
    "3. Tie, relatively the same: [[A=B]]\n"
    "4. Assistant B is slightly better: [[B>A]]\n"
    "5. Assistant B is significantly better: [[B>>A]]\n\n"
    'Example output: "My final verdict is tie: [[A=B]]".'
)
#: Arena-Hard-Auto ``config/arena-hard-v2.0.yaml`` ``prompt_template`` (fields renamed).
ARENA_HARD_TEMPLATE = (
    "<|User Prompt|>\n{question}\n\n"
    "<|The Start of Assistant A's Answer|>\n{answer_a}\n<|The End of Assistant A's Answer|>\n\n"
    "<|The Start of Assistant B's Answer|>\n{answer_b}\n<|The End of Assistant B's Answer|>"
)

FORMATS.add(Format(
    name="default",
    template=DEFAULT_TEMPLATE,
    parse=P.parse_default,
    rubric=DEFAULT_RUBRIC,
    description="the rubric, the question, the FIRST and SECOND answers; the reply's first "
    "word (FIRST, SECOND or TIE, any case, .,! trimmed) is the verdict",
    reference="evalframe",
))
FORMATS.add(Format(
    name="mtbench",
    template=MTBENCH_PAIR_TEMPLATE,
    system=MTBENCH_PAIR_SYSTEM,
    joiner="\n\n",
    parse=P.parse_mtbench,
    description="FastChat MT-bench pair-v2: an explanation, then [[A]], [[B]] or [[C]] "
    "(tie); [[A]] anywhere wins over [[B]], which wins over [[C]]",
    reference="FastChat fastchat/llm_judge: data/judge_prompts.jsonl pair-v2, "
    "common.run_judge_pair",
))
FORMATS.add(Format(
    name="arena_hard",
    template=ARENA_HARD_TEMPLATE,
    system=ARENA_HARD_SYSTEM,
    parse=P.parse_arena_hard,
    strength=P.arena_hard_strength,
    description="Arena-Hard-Auto: the judge's own answer, then [[A>>B]], [[A>B]], [[A=B]], "
    "[[B>A]] or [[B>>A]]; the last label counts, >> weighs 3",
    reference="arena-hard-auto: utils/judge_utils.py OG_ARENA_HARD_PROMPT, "
    "gen_judgment.get_score, show_result.load_judgments (weight=3)",
))


def custom_format(
    template: str,
    pattern: str,
    verdicts: Mapping[str, str] | None = None,
    *,
    name: str = "custom",
    rubric: str | None = None,
    description: str = "a user-supplied template and verdict pattern",
) -> Format:
    """A pairwise format from a template over columns and a verdict regex.

    ``template`` is a format string over ``question``, ``answer_a`` (shown first),
    ``answer_b`` (shown second), ``rubric`` and any other column. ``pattern`` and ``verdicts``
    are read as by :func:`evalframe.judge.parse.parse_regex`: named groups ``first``,
    ``second`` (and ``tie``), or one capture group whose text ``verdicts`` maps to ``"first"``,
    ``"second"`` or ``"tie"``. The pattern is checked at once.

    >>> fmt = custom_format("Q: {question}\\nA: {answer_a}\\nB: {answer_b}\\nWinner?",
    ...                     r"(?i)winner:\\s*(A|B|tie)", {"A": "first", "B": "second",
    ...                     "tie": "tie"})
    >>> fmt.name, template_fields(fmt.template)
    ('custom', ['question', 'answer_a', 'answer_b'])
    """
    P._check_pattern(pattern, verdicts)
    template_fields(template)
    mapping = None if verdicts is None else dict(verdicts)
    return Format(
        name=name,
        template=template,
        parse=lambda reply: P.parse_regex(reply, pattern, mapping),
        rubric=rubric,
        description=description,
        reference="user",
        pattern=repr((pattern, sorted((mapping or {}).items()))),
    )


def resolve_format(format: str | Format) -> Format:
    """The pairwise format named ``format`` (a :class:`Format` is returned as it is).

    >>> resolve_format("mtbench").name
    'mtbench'
    """
    if isinstance(format, Format):
        return format
    return FORMATS.resolve(format)


# ---------------------------------------------------------------- grading formats

#: FastChat ``judge_prompts.jsonl`` ``single-v1``: system prompt and template.
MTBENCH_SINGLE_SYSTEM = "You are a helpful assistant."
MTBENCH_SINGLE_TEMPLATE = (
    "[Instruction]\nPlease act as an impartial judge and evaluate the quality of the response "
    "provided by an AI assistant to the user question displayed below. Your evaluation should "
    "consider factors such as the helpfulness, relevance, accuracy, depth, creativity, and "
    "level of detail of the response. Begin your evaluation by providing a short explanation. "
    "Be as objective as possible. After providing your explanation, you must rate the "
    'response on a scale of 1 to 10 by strictly following this format: "[[rating]]", for '
    'example: "Rating: [[5]]".\n\n'
    "[Question]\n{question}\n\n"
    "[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]"
)

#: Inspect ``inspect_ai/scorer/_model.py`` ``DEFAULT_MODEL_GRADED_QA_TEMPLATE``.
INSPECT_QA_TEMPLATE = """
You are assessing a submitted answer on a given task based on a criterion. Here is the data:

[BEGIN DATA]
***
[Task]: {question}
***
[Submission]: {answer}
***
[Criterion]: {criterion}
***
[END DATA]

Does the submission meet the criterion?

{instructions}
"""

#: Inspect ``DEFAULT_MODEL_GRADED_FACT_TEMPLATE``.
INSPECT_FACT_TEMPLATE = """
You are comparing a submitted answer to an expert answer on a given question. Here is the data:

[BEGIN DATA]
************
[Question]: {question}
************
[Expert]: {criterion}
************
[Submission]: {answer}
************
[END DATA]

Compare the factual content of the submitted answer with the expert answer. Ignore any differences in style, grammar, or punctuation.

Does the submission contain the content in the expert answer?

{instructions}
"""  # noqa: E501


def inspect_instructions(partial_credit: bool) -> str:
    """Inspect's ``default_instructions(partial_credit)``, word for word.

    >>> "GRADE: $LETTER" in inspect_instructions(True), "CPI" in inspect_instructions(True)
    (True, True)
    """
    partial_letter = "P" if partial_credit else ""
    partial_prompt = '"P" for partially correct answers,' if partial_credit else ""
    return (
        "\nAfter assessing the submitted answer, reply with 'GRADE: $LETTER' (without quotes) "
        f"where LETTER is one of C{partial_letter}I.  Please choose ONE option for the grade: "
        f'either "C" for correct answers, {partial_prompt}or "I" for incorrect answers.\n\n'
        "For example, after reviewing a correct answer you might write 'GRADE: C' or after "
        "reviewing an incorrect answer you might write 'GRADE: I'.\n\n"
        "First, write out in a step by step manner your reasoning about the criterion to be "
        "sure that your conclusion is correct. Avoid simply stating the correct answers at the "
        "outset. Then, end with your answer formatted as 'GRADE: $LETTER' (without quotes) "
        f"where LETTER is one of C{partial_letter}I.\n"
    )


NUMERIC_RUBRIC = (
    "You are an impartial judge. Rate how well the answer below responds to the question: "
    "how correct, helpful and relevant it is."
)
NUMERIC_TEMPLATE = (
    "{rubric}\n\n[Question]\n{question}\n\n[The Start of the Answer]\n{answer}\n"
    "[The End of the Answer]\n\n"
    "Reply with one number from {low} to {high} and nothing else."
)


def _read_rating(reply: pl.Expr, scale: tuple[float, float] | None) -> tuple[pl.Expr, pl.Expr]:
    text = pl.coalesce([reply.str.extract(p, 1) for p in P.MTBENCH_RATING_PATTERNS])
    low, high = scale if scale is not None else (None, None)
    score = P.bounded(text.cast(pl.Float64), low, high)
    return pl.when(score.is_not_null()).then(text), score


def _read_letters(grades: Sequence[str]) -> Callable[..., tuple[pl.Expr, pl.Expr]]:
    def read(reply: pl.Expr, scale: tuple[float, float] | None) -> tuple[pl.Expr, pl.Expr]:
        letter = P.parse_inspect_grade(reply, grades)
        score = letter.replace_strict(P.INSPECT_GRADE_VALUES, default=None, return_dtype=pl.Float64)
        return letter, score

    return read


def _read_number(reply: pl.Expr, scale: tuple[float, float] | None) -> tuple[pl.Expr, pl.Expr]:
    text = reply.str.extract(f"({P.NUMBER_PATTERN})", 1)
    low, high = scale if scale is not None else (None, None)
    score = P.bounded(text.cast(pl.Float64), low, high)
    return pl.when(score.is_not_null()).then(text), score


def _inspect(name: str, template: str, partial: bool, scorer: str) -> GradeFormat:
    grades = ("C", "P", "I") if partial else ("C", "I")
    return GradeFormat(
        name=name,
        template=template,
        read=_read_letters(grades),
        literals={"instructions": inspect_instructions(partial)},
        scale=None,
        scaled=False,
        description=f"Inspect {scorer}{' with partial credit' if partial else ''}: "
        f"'GRADE: {'/'.join(grades)}', the last one counts; "
        + ("C 1, P 0.5, I 0" if partial else "C 1, I 0"),
        reference=f"inspect_ai.scorer.{scorer} (DEFAULT_GRADE_PATTERN, value_to_float)",
    )


GRADE_FORMATS.add(GradeFormat(
    name="mtbench",
    template=MTBENCH_SINGLE_TEMPLATE,
    system=MTBENCH_SINGLE_SYSTEM,
    read=_read_rating,
    scale=None,
    description="FastChat MT-bench single-v1: an explanation, then 'Rating: [[n]]' on 1-10; "
    "the first [[n]] (else [n]) is the score",
    reference="FastChat fastchat/llm_judge: data/judge_prompts.jsonl single-v1, "
    "common.run_judge_single (one_score_pattern, one_score_pattern_backup)",
))
for _name, _template, _partial, _scorer in (
    ("inspect_qa", INSPECT_QA_TEMPLATE, False, "model_graded_qa"),
    ("inspect_qa_partial", INSPECT_QA_TEMPLATE, True, "model_graded_qa"),
    ("inspect_fact", INSPECT_FACT_TEMPLATE, False, "model_graded_fact"),
    ("inspect_fact_partial", INSPECT_FACT_TEMPLATE, True, "model_graded_fact"),
):
    GRADE_FORMATS.add(_inspect(_name, _template, _partial, _scorer))
GRADE_FORMATS.add(GradeFormat(
    name="numeric",
    template=NUMERIC_TEMPLATE,
    read=_read_number,
    scale=(1.0, 10.0),
    rubric=NUMERIC_RUBRIC,
    description="the rubric, the question, the answer; the reply's first number is the "
    "score, an error outside the scale's bounds",
    reference="evalframe",
))


def resolve_grade_format(format: str | GradeFormat) -> GradeFormat:
    """The grading format named ``format`` (a :class:`GradeFormat` is returned as it is).

    >>> resolve_grade_format("inspect_qa_partial").scaled
    False
    """
    if isinstance(format, GradeFormat):
        return format
    return GRADE_FORMATS.resolve(format)


def list_judge_formats() -> pl.DataFrame:
    """Every judge format: kind (pairwise / grade), name, description, reference.

    >>> list_judge_formats().filter(kind="pairwise")["name"].to_list()
    ['default', 'mtbench', 'arena_hard']
    """
    return pl.concat([FORMATS.frame(), GRADE_FORMATS.frame()])
