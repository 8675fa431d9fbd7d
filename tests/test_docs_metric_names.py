"""docs/metric-names.md: every evalframe request on the page parses against the registry.

The page maps other tools' metric names to evalframe requests. Its tables have a column
headed "evalframe request" whose code spans are requests a user pastes; its fenced
examples pass requests with ``-m "..."`` (bash) or as the values of a Python dict. Each
one must pass :func:`evalframe.metrics.request.parse_request`.

Metrics that are planned but not registered yet (:data:`PLANNED`) are skipped with a
message until they are registered. A planned name found in the registry under another
spelling fails, so the page is updated when the registry settles on a name.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalframe import EvalframeError
from evalframe.metrics.registry import all_metrics, resolve
from evalframe.metrics.request import parse_request
from evalframe.schema import ROLES

REPO_ROOT = Path(__file__).resolve().parents[1]
PAGE = REPO_ROOT / "docs" / "metric-names.md"

#: Names the page uses for metrics other engineers are adding; skipped while unregistered.
PLANNED = (
    # multiple choice (metrics/choice.py)
    "acc",
    "acc_norm",
    "acc_bytes",
    "acc_token",
    "acc_pmi",
    "prob",
    "prob_norm",
    "mrr",
    "recall@{k}",
    "brier_score",
    "mc1",
    "mc2",
    # classification (metrics/classification.py)
    "accuracy",
    "f1",
    "precision",
    "recall",
    "mcc",
    # perplexity (metrics/perplexity.py)
    "word_perplexity",
    "byte_perplexity",
    "bits_per_byte",
    "perplexity",
    "token_perplexity",
)

#: Other spellings a planned metric might be registered under (besides case, '-' and '_').
OTHER_SPELLINGS = {
    "acc_pmi": ("acc_mutual_info", "acc_norm_pmi"),
    "acc_token": ("acc_norm_token",),
    "recall@{k}": ("recall_at_k", "recall_at_{k}", "recall@k"),
    "mc1": ("truthfulqa_mc1",),
    "mc2": ("truthfulqa_mc2",),
    "prob_norm": ("normalized_mc_prob",),
    "mcc": ("matthews_corrcoef", "matthews_correlation"),
}

REQUEST_HEADER = "evalframe request"
ROLES_HEADER = "roles"


@dataclass(frozen=True)
class Row:
    line: int
    requests: tuple[str, ...]
    roles: tuple[str, ...]


def _cells(line: str) -> list[str]:
    """The cells of a GFM table row; ``\\|`` is a pipe inside a cell (code spans too)."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    return [part.strip().replace("\\|", "|") for part in parts[1:-1]]


def _code_spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _table_rows(text: str) -> list[Row]:
    rows: list[Row] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            i += 1
            continue
        header = [cell.lower() for cell in _cells(lines[i])]
        start = i
        i += 2  # header and separator
        while i < len(lines) and lines[i].startswith("|"):
            if REQUEST_HEADER in header:
                cells = _cells(lines[i])
                assert len(cells) == len(header), (
                    f"docs/metric-names.md line {i + 1}: {len(cells)} cells, the table at line "
                    f"{start + 1} has {len(header)} columns (a '|' inside a cell must be '\\|')"
                )
                roles = cells[header.index(ROLES_HEADER)] if ROLES_HEADER in header else ""
                rows.append(
                    Row(
                        line=i + 1,
                        requests=tuple(_code_spans(cells[header.index(REQUEST_HEADER)])),
                        roles=tuple(_code_spans(roles)),
                    )
                )
            i += 1
    return rows


def _bash_double_quoted(text: str) -> str:
    """What bash passes for the inside of a double-quoted word (no expansions used here)."""
    return re.sub(r"\\([\\$`\"])", r"\1", text)


def _example_requests(text: str) -> list[str]:
    """Requests in the fenced examples: ``-m "..."`` and Python ``"alias": "..."``."""
    found = []
    for block in re.findall(r"```(\w*)\n(.*?)```", text, re.DOTALL):
        language, body = block
        if language == "bash":
            found += [_bash_double_quoted(m) for m in re.findall(r'-m "((?:[^"\\]|\\.)*)"', body)]
        elif language == "python":
            found += [
                ast.literal_eval(m) for m in re.findall(r'"\w+":\s*("(?:[^"\\]|\\.)*")', body)
            ]
    return found


TEXT = PAGE.read_text(encoding="utf-8")
ROWS = _table_rows(TEXT)
TABLE_REQUESTS = list(dict.fromkeys(r for row in ROWS for r in row.requests))
EXAMPLE_REQUESTS = _example_requests(TEXT)


def _name(request: str) -> str:
    body = request.split("(", 1)[0].strip()
    alias = re.match(r"[A-Za-z_][\w@.\-]*=(.*)\Z", body)
    return alias.group(1).strip() if alias else body


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(name).replace(re.escape("{k}"), r"\d+") + r"\Z")


def _planned(name: str) -> str | None:
    return next((p for p in PLANNED if _pattern(p).match(name)), None)


def _canonical(name: str) -> str:
    return re.sub(r"[^a-z0-9{}]", "", name.lower())


def _registered_names() -> set[str]:
    return {spec.name for spec in all_metrics()}


def _check(request: str) -> None:
    try:
        parse_request(request)
        return
    except EvalframeError:
        planned = _planned(_name(request))
        registered = _registered_names()
        if planned is None or planned in registered:
            raise
    others = {_canonical(planned)} | {_canonical(o) for o in OTHER_SPELLINGS.get(planned, ())}
    respelled = sorted(name for name in registered if _canonical(name) in others)
    if respelled:
        pytest.fail(
            f"docs/metric-names.md uses {planned!r}, but the registry has {respelled}: "
            "update the page (and PLANNED in this test)"
        )
    pytest.skip(f"{planned!r} is planned and not registered yet (request {request!r})")


def test_page_has_requests_in_every_section():
    assert len(TABLE_REQUESTS) >= 60
    assert len(EXAMPLE_REQUESTS) == 2
    sections = re.split(r"^## ", TEXT, flags=re.MULTILINE)
    for title in ("lm-evaluation-harness", "lighteval", "Inspect AI", "Hugging Face `evaluate`"):
        section = next(s for s in sections if s.startswith(title))
        assert _table_rows(section), f"no table of requests under '## {title}'"


@pytest.mark.parametrize("request_text", TABLE_REQUESTS)
def test_table_request_parses(request_text):
    _check(request_text)


@pytest.mark.parametrize("request_text", EXAMPLE_REQUESTS)
def test_example_request_parses(request_text):
    _check(request_text)


def test_example_regexes_reach_evalframe_unchanged():
    """The quoting note on the page: '\\\\$' in bash or Python double quotes is the regex \\$."""
    for text in EXAMPLE_REQUESTS:
        assert parse_request(text).options["regexes_to_ignore"][1] == "\\$"


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"line{row.line}")
def test_roles_column_names_the_metrics_roles(row):
    unknown = [role for role in row.roles if role not in ROLES]
    assert not unknown, f"line {row.line}: not roles: {unknown}"
    assert row.requests, f"line {row.line}: a row with no evalframe request"
    known = set()
    for request in row.requests:
        try:
            spec, _ = resolve(_name(request))
        except EvalframeError:
            if _planned(_name(request)) is None:
                raise
            continue
        known |= set(spec.roles())
    if known:
        extra = [role for role in row.roles if role not in known]
        assert not extra, f"line {row.line}: {row.requests} do not read {extra}"


def test_not_yet_section_has_no_request_table():
    section = TEXT.split("## Not yet in evalframe", 1)[1]
    assert REQUEST_HEADER not in section.lower()


def test_guide_and_readme_link_to_the_page():
    assert "(metric-names.md)" in (REPO_ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    assert "(docs/metric-names.md)" in (REPO_ROOT / "README.md").read_text(encoding="utf-8")
