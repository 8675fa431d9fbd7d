"""Arena-Hard-Auto's judgment files: ``data/<bench>/model_judgment/<judge>/<model>.jsonl``.

Arena-Hard-Auto's ``gen_judgment.py`` judges an evaluated model's answer against a baseline's
answer on every question, twice, and appends one JSON line per question to the model's file:

- v0.1: ``question_id, model, judge, games``. The baseline is not written: it is the judge
  config's ``baseline_model``, ``gpt-4-0314`` by default (as ``show_result.py --baseline``
  assumes); :func:`read_judgments` takes another with ``baseline=``.
- v2 (and the v0.1 files the v2 release re-published): ``uid, category, judge, model,
  baseline, games``.

``games`` holds two games. A game is ``{user_prompt, judgment, score}`` (v2: ``{score,
judgment: {answer, ...}, prompt: [system and user messages]}``, or null where the judge's API
call failed). The first game shows the baseline's answer as Assistant A and the model's as B;
the second swaps them (the model is A). ``score`` is the label the judgment ends with:
``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A`` (and the mirror spellings ``B<<A``, ``B<A``,
``B=A``, ``A<B``, ``A<<B``, which v2's ``show_result.py`` scores too), null when the judge's
text held no label (``gen_judgment.get_score``).

One row per line, in evalframe's pairwise columns, with A the evaluated model and B the
baseline (so a report's ``win_rate_a`` is the model's Arena-Hard score):

- ``sample_id``: ``question_id`` (v0.1) or ``uid`` (v2); ``model``, ``model_a``: the line's
  ``model``; ``baseline``, ``model_b``: the line's ``baseline`` or the ``baseline=`` given.
- the ``_ab`` columns are the second game (the model shown first, as A), the ``_ba`` columns
  the first (the baseline shown first). ``verdict_*`` is the winner in A/B terms (``"A"``,
  ``"B"``, ``"tie"``; ``"error"`` for a game without a label the table scores, or a null game),
  ``strength_*`` 3 for a strong verdict (``>>``, ``<<``) and 1 otherwise (null on error),
  ``label_*`` the label as written (in that game's slots), ``judgment_*`` the judge's text,
  ``user_prompt_*`` the prompt it was given.
- ``outcome``: the two verdicts classified (``"error"`` when either is, the same winner twice,
  two ties, else ``"inconsistent"``), ``judge``, and ``task`` = ``"arena_hard"``.

Every other key of a line (``category``...) is kept under its own name; so is anything else a
game holds, as ``<key>_ab`` / ``<key>_ba`` (a v2 game's system message is ``system_prompt_*``,
fields of its judgment other than ``answer`` are ``judgment_<field>_*``; values that are not
text are JSON text). A line that is not a JSON object with these keys, or a judgment (question,
model, judge) written twice, is an error naming the file and the lines.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._common import json_kind, short
from evalframe.io._duplicates import check_policy as check_duplicates_policy
from evalframe.io._duplicates import unique_samples
from evalframe.io._json import read_jsonl
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register
from evalframe.io.formats import READ_FORMATS, format_of

__all__ = ["ADAPTERS", "LABELS", "V01_BASELINE", "check_files", "read_judgments"]

DOC = "docs/harnesses/arena-hard.md"
TASK = "arena_hard"
WHAT = "Arena-Hard-Auto judgments (format 'arena_hard')"

#: Arena-Hard-Auto v0.1's baseline (``config/judge_config.yaml``), which its files do not name.
V01_BASELINE = "gpt-4-0314"
#: The question key: ``question_id`` in v0.1 files, ``uid`` in v2 files.
ID_KEYS = ("question_id", "uid")
#: The other keys every line has.
KEYS = ("model", "judge", "games")
#: The keys every game that is not null has.
GAME_KEYS = ("score", "judgment")
#: How many battles a strong verdict counts as (``show_result.py``'s ``weight``).
STRONG = 3
#: Each label ``show_result.py`` scores: the slot the judge preferred, and whether strongly.
LABELS: dict[str, tuple[str, bool]] = {
    "A>>B": ("A", True),
    "B<<A": ("A", True),
    "A>B": ("A", False),
    "B<A": ("A", False),
    "A=B": ("tie", False),
    "B=A": ("tie", False),
    "B>A": ("B", False),
    "A<B": ("B", False),
    "B>>A": ("B", True),
    "A<<B": ("B", True),
}
#: The evalframe side of each game of ``games``: the second shows the model (A) first.
SIDES = (("ab", 1), ("ba", 0))
SWAP = {"A": "B", "B": "A", "tie": "tie"}

#: The columns every file gives first, in this order (an empty file gives only these).
SCHEMA: dict[str, pl.DataType] = {
    "sample_id": pl.Null(),
    "model": pl.String(),
    "baseline": pl.String(),
    "model_a": pl.String(),
    "model_b": pl.String(),
    "verdict_ab": pl.String(),
    "verdict_ba": pl.String(),
    "strength_ab": pl.Int64(),
    "strength_ba": pl.Int64(),
    "outcome": pl.String(),
    "label_ab": pl.String(),
    "label_ba": pl.String(),
    "judgment_ab": pl.String(),
    "judgment_ba": pl.String(),
    "user_prompt_ab": pl.String(),
    "user_prompt_ba": pl.String(),
    "judge": pl.String(),
    "task": pl.String(),
}
#: Game fields whose ``_ab``/``_ba`` columns the layout computes.
COMPUTED = ("verdict", "strength", "label")
#: Keys of a line that the columns above replace.
REPLACED = (*ID_KEYS, *KEYS, "baseline")

BOM = b"\xef\xbb\xbf"
#: The columns that name one judgment: a question judged for a model by a judge.
SAMPLE_KEY = ("sample_id", "model", "judge")


# ---------------------------------------------------------------- detection


def _is_judgments(probe: Probe) -> bool:
    record = probe.record
    if probe.top != "lines" or record is None:
        return False
    ids = [key for key in ID_KEYS if key in record]
    games = record.get("games")
    return (
        len(ids) == 1
        and _is_id(record[ids[0]])
        and isinstance(record.get("model"), str)
        and isinstance(record.get("judge"), str)
        and isinstance(games, list)
        and len(games) == 2
        and all(
            game is None or (isinstance(game, dict) and all(key in game for key in GAME_KEYS))
            for game in games
        )
    )


def _is_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


# ---------------------------------------------------------------- reading


def read_judgments(
    path: Path, *, baseline: str = V01_BASELINE, duplicates: str = "error"
) -> pl.LazyFrame:
    """An Arena-Hard-Auto ``model_judgment/<judge>/<model>.jsonl`` as pairwise judgment rows.

    ``baseline`` names the baseline of lines that do not (v0.1 files). A question judged
    twice for one model by one judge is an error naming both lines, unless ``duplicates``
    is ``"first"`` or ``"last"`` (see :func:`evalframe.io._duplicates.unique_samples`).

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.jsonl"
    >>> def game(label):
    ...     return {"user_prompt": "<|User Prompt|>...", "judgment": f"[[{label}]]",
    ...             "score": label}
    >>> lines = [("q1", "B>>A", "A>B"), ("q2", "A=B", None)]  # games: baseline first, model first
    >>> _ = path.write_text("\\n".join(json.dumps({"question_id": q, "model": "m", "judge": "j",
    ...     "games": [game(g1), game(g2) if g2 else {**game("?"), "score": None}]})
    ...     for q, g1, g2 in lines))
    >>> read_judgments(path).select(
    ...     "sample_id", "model_b", "verdict_ab", "verdict_ba", "strength_ba", "outcome"
    ... ).collect().rows()
    [('q1', 'gpt-4-0314', 'A', 'A', 3, 'A'), ('q2', 'gpt-4-0314', 'error', 'tie', 1, 'error')]
    """
    compressed = _compressed(path)
    records = _records(path, compressed)
    if not records:
        return pl.LazyFrame(schema=SCHEMA)
    check_duplicates_policy(duplicates)
    rows = [_row(path, line, record, baseline) for line, record in records]
    if duplicates == "error":
        _check_unique(path, records)
    ids = _ids(path, records)
    extras = sorted({name for row in rows for name in row} - set(SCHEMA))
    rest = read_jsonl(path, compressed=compressed)
    rest = rest.drop([name for name in REPLACED if name in rest.columns])
    taken = sorted(set(rest.columns) & (set(SCHEMA) | set(extras)))
    if taken:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: it already has column(s) {taken}, which the "
            "layout's own columns would replace; read it with format='table'"
        )
    columns = [
        ids,
        *(
            pl.Series(name, [row.get(name) for row in rows], dtype=dtype)
            for name, dtype in SCHEMA.items()
            if name != "sample_id"
        ),
        *rest.get_columns(),
        *(pl.Series(name, [row.get(name) for row in rows], dtype=pl.String) for name in extras),
    ]
    frame = pl.DataFrame(columns).lazy()
    if duplicates == "error":
        return frame
    return unique_samples(
        frame, list(SAMPLE_KEY), duplicates=duplicates, source=str(path), what=WHAT,
        locate=lambda row: f"line {records[row][0]}",
    )


def _compressed(path: Path) -> bool:
    kind = format_of(path, READ_FORMATS, "read")
    if not kind.startswith("ndjson"):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: it is a {kind} file; Arena-Hard-Auto writes "
            "JSON lines (.jsonl, also .jsonl.gz)"
        )
    return kind.endswith(".gz")


def _records(path: Path, compressed: bool) -> list[tuple[int, dict[str, object]]]:
    """Every non-blank line of the file as (line number, JSON object)."""
    opener = gzip.open if compressed else open
    with opener(path, "rb") as handle:
        data = handle.read().removeprefix(BOM)
    found = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            detail = (
                "is not valid UTF-8"
                if isinstance(error, UnicodeDecodeError)
                else f"is not valid JSON: {error.msg} (column {error.colno})"
            )
            raise EvalframeError(
                f"cannot read {str(path)!r} as {WHAT}: line {number} {detail}"
            ) from error
        if not isinstance(value, dict) or not value:
            shown = "" if value is None or value == {} else f" ({short(value, 40)})"
            raise EvalframeError(
                f"cannot read {str(path)!r} as {WHAT}: line {number} holds {json_kind(value)}"
                f"{shown}; expected one JSON object per line with question_id (or uid), model, "
                "judge, games"
            )
        found.append((number, value))
    return found




def _row(path: Path, line: int, record: dict[str, object], baseline: str) -> dict[str, object]:
    """One line's columns (validated), with the extra columns its games give."""

    def fail(problem: str) -> EvalframeError:
        return EvalframeError(f"cannot read {str(path)!r} as {WHAT}: line {line} {problem}")

    ids = [key for key in ID_KEYS if key in record]
    if len(ids) != 1:
        found = "both 'question_id' and 'uid'" if ids else "no 'question_id' (or 'uid')"
        raise fail(f"has {found}; expected one of them, the question's id")
    if not _is_id(record[ids[0]]):
        raise fail(f"has {ids[0]!r} = {short(record[ids[0]], 40)}; expected text or an integer")
    for key in KEYS:
        if key not in record:
            raise fail(
                f"has no key {key!r}; every line needs question_id (or uid), {', '.join(KEYS)}"
            )
    for key in ("model", "judge"):
        if not isinstance(record[key], str):
            raise fail(f"has {key!r} = {short(record[key], 40)}; expected text")
    named = record.get("baseline", baseline)
    if not isinstance(named, str):
        raise fail(f"has 'baseline' = {short(named, 40)}; expected text")
    games = record["games"]
    if not isinstance(games, list) or len(games) != 2:
        raise fail(
            f"has 'games' = {short(games, 40)}; expected a list of two games (the baseline's "
            "answer shown first, then the model's)"
        )
    row: dict[str, object] = {
        "model": record["model"],
        "baseline": named,
        "model_a": record["model"],
        "model_b": named,
        "judge": record["judge"],
        "task": TASK,
    }
    verdicts = {}
    for side, index in SIDES:
        label, fields = _game(games[index], index + 1, fail)
        slot, strong = LABELS.get(label or "", ("error", False))
        verdict = slot if side == "ab" else SWAP.get(slot, "error")
        verdicts[side] = verdict
        row[f"verdict_{side}"] = verdict
        row[f"strength_{side}"] = None if verdict == "error" else (STRONG if strong else 1)
        row[f"label_{side}"] = label
        row.update({f"{name}_{side}": value for name, value in fields.items()})
    ab, ba = verdicts["ab"], verdicts["ba"]
    row["outcome"] = "error" if "error" in (ab, ba) else ab if ab == ba else "inconsistent"
    return row


def _game(
    game: object, number: int, line_fail: Callable[[str], EvalframeError]
) -> tuple[str | None, dict[str, str | None]]:
    """A game's label and its other fields as text columns (``judgment``, ``user_prompt``...)."""

    def fail(problem: str) -> EvalframeError:
        return line_fail(f"game {number} {problem}")

    if game is None:
        return None, {"judgment": None, "user_prompt": None}
    if not isinstance(game, dict):
        raise fail(
            f"is {json_kind(game)} ({short(game, 40)}); expected an object with score, judgment "
            "(or null: the judge's call failed)"
        )
    for key in GAME_KEYS:
        if key not in game:
            raise fail(f"has no key {key!r}; expected {', '.join(GAME_KEYS)}")
    label = game["score"]
    if label is not None and not isinstance(label, str):
        raise fail(f"has 'score' = {short(label, 40)}; expected a label such as 'A>B', or null")
    fields: dict[str, str | None] = {}

    def add(name: str, value: object) -> None:
        if name in COMPUTED:
            raise fail(
                f"has a key {name!r}, whose columns evalframe computes; read the file with "
                "format='table'"
            )
        if name in fields:
            raise fail(
                f"gives {name!r} twice (a key and a message of its prompt); read the file "
                "with format='table'"
            )
        fields[name] = _text(value)

    judgment = game["judgment"]
    if isinstance(judgment, dict):  # v2: the judge's reply, {"answer": text, ...}
        for key, value in judgment.items():
            if key != "answer":
                add(f"judgment_{key}", value)
        judgment = judgment.get("answer")
    if judgment is not None and not isinstance(judgment, str):
        raise fail(f"has 'judgment' = {short(judgment, 40)}; expected the judge's text")
    add("judgment", judgment)
    for key, value in game.items():
        if key in GAME_KEYS:
            continue
        messages = _messages(value) if key == "prompt" and "user_prompt" not in game else None
        if key == "user_prompt" and not (value is None or isinstance(value, str)):
            raise fail(f"has 'user_prompt' = {short(value, 40)}; expected text")
        for name, text in (messages or {key: value}).items():
            add(name, text)
    fields.setdefault("user_prompt", None)
    return label, fields


def _messages(value: object) -> dict[str, str] | None:
    """v2's ``prompt`` (a system and a user message) as ``system_prompt`` and ``user_prompt``;
    ``None`` when it is anything else (then it is kept whole, as JSON text)."""
    if not isinstance(value, list):
        return None
    found: dict[str, str] = {}
    for message in value:
        if not (
            isinstance(message, dict)
            and set(message) == {"role", "content"}
            and message["role"] in ("system", "user")
            and isinstance(message["content"], str)
            and f"{message['role']}_prompt" not in found
        ):
            return None
        found[f"{message['role']}_prompt"] = message["content"]
    return found


def _text(value: object) -> str | None:
    """Text as it is, any other JSON value as JSON text (null stays null)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _check_unique(path: Path, records: list[tuple[int, dict[str, object]]]) -> None:
    seen: dict[tuple[object, ...], int] = {}
    for line, record in records:
        question = _id_of(record)
        key = (type(question).__name__, question, record["model"], record["judge"])
        first = seen.setdefault(key, line)
        if first != line:
            raise EvalframeError(
                f"cannot read {str(path)!r} as {WHAT}: line {line} judges again what line "
                f"{first} judged ({_describe(*key[1:])}); expected one line per question, "
                "model and judge"
            )


def _id_of(record: dict[str, object]) -> object:
    return record["question_id"] if "question_id" in record else record["uid"]


def _describe(question: object, model: object, judge: object) -> str:
    return f"question {question!r}, model {model!r}, judge {judge!r}"


def _ids(path: Path, records: list[tuple[int, dict[str, object]]]) -> pl.Series:
    """The question ids, all text or all integers."""
    lines = {str: [], int: []}
    values = []
    for line, record in records:
        value = _id_of(record)
        lines[str if isinstance(value, str) else int].append(line)
        values.append(value)
    if lines[str] and lines[int]:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: the question id is text on line "
            f"{lines[str][0]} but an integer on line {lines[int][0]}; expected one type in "
            "the file"
        )
    return pl.Series("sample_id", values, dtype=pl.String if lines[str] else pl.Int64)


# ---------------------------------------------------------------- several files


def check_files(files: Sequence[tuple[Path, pl.LazyFrame]]) -> None:
    """No judgment (question, model, judge) is in two of the files read together.

    Arena-Hard-Auto's ``show_result.py`` reads every ``*.jsonl`` of a judge's folder and would
    count such a judgment twice (a copied file, a model's lines appended to another's file).

    >>> import polars as pl
    >>> frame = pl.LazyFrame({"sample_id": ["q1"], "model": ["m"], "judge": ["j"]})
    >>> check_files([(Path("a.jsonl"), frame), (Path("b.jsonl"), frame.clear())])
    """
    if len(files) < 2:
        return
    keys = pl.concat(
        [
            frame.select(pl.col("sample_id").cast(pl.String), "model", "judge")
            .with_row_index("row")
            .with_columns(pl.lit(number, pl.UInt32).alias("file"))
            for number, (_, frame) in enumerate(files)
        ]
    ).collect()
    repeated = keys.filter(pl.struct("sample_id", "model", "judge").is_duplicated())
    if repeated.is_empty():
        return
    key = repeated.row(0, named=True)
    same = repeated.filter(
        (pl.col("sample_id") == key["sample_id"])
        & (pl.col("model") == key["model"])
        & (pl.col("judge") == key["judge"])
    )
    (first_file, first_row), (second_file, second_row) = same.select("file", "row").rows()[:2]
    first, second = files[first_file][0], files[second_file][0]
    raise EvalframeError(
        f"cannot stack {WHAT}: {_describe(key['sample_id'], key['model'], key['judge'])} is "
        f"judged in {str(first)!r} line {_line(first, first_row)} and again in {str(second)!r} "
        f"line {_line(second, second_row)}; expected one line per question, model and judge "
        "(is a file there twice?)"
    )


def _line(path: Path, row: int) -> int:
    """The line number of the ``row``-th non-blank line of ``path`` (0-based row)."""
    return _records(path, _compressed(path))[row][0]


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="arena_hard",
        harness="Arena-Hard-Auto",
        files="model_judgment/<judge>/<model>.jsonl",
        expects="JSON lines with 'question_id' (or 'uid'), 'model', 'judge' (text) and 'games' "
        "(two games, each with 'score' and 'judgment')",
        detect=_is_judgments,
        read=read_judgments,
        doc=DOC,
        rows="pairwise judgments",
        check_files=check_files,
        keys=SAMPLE_KEY,
        fields=("question_id", "model", "judge", "games"),
    ),
)
