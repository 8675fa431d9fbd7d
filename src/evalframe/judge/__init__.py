"""LLM-as-judge: pairwise and pointwise judging, a durable judgment cache, reports and ratings.

>>> import polars as pl, evalframe as ef
>>> pairs = pl.DataFrame({"question": ["6 x 7?"], "answer_a": ["42"], "answer_b": ["41"]})
>>> judged = ef.judge.pairwise(pairs, lambda prompt: "TIE", quiet=True)
>>> judged["outcome"].to_list()
['tie']

- :func:`pairwise` asks for every row twice, the answers in both orders, and classifies the
  outcome (``A``, ``B``, ``tie``, ``inconsistent``, ``error``); :func:`classify` does the same
  for verdicts already collected.
- :func:`grade` asks once per row for a grade; :func:`regrade` re-reads collected replies.
- :func:`report` gives win rates with intervals under a named policy (:data:`POLICIES`), and
  the position-bias rate; :func:`ratings` and :func:`win_rate_matrix` rank many models.
- :func:`audit` measures the judge itself: position bias, flip rate, length bias,
  self-preference, and agreement with human labels or among judges (Cohen's and Fleiss'
  kappa), with bootstrap intervals.
- A judge is a callable ``judge(prompt) -> str`` (sync or async) or an :class:`OpenAIJudge`;
  :func:`ask` runs prompts through it with bounded concurrency, retries and a durable
  :class:`JudgmentCache`.
"""

from evalframe.judge.audit import audit
from evalframe.judge.backends import OpenAIJudge
from evalframe.judge.cache import JudgmentCache
from evalframe.judge.classify import classify
from evalframe.judge.formats import FORMATS, GRADE_FORMATS, custom_format, list_judge_formats
from evalframe.judge.grade import grade, regrade
from evalframe.judge.pairwise import pairwise
from evalframe.judge.policies import POLICIES
from evalframe.judge.ratings import ratings, win_rate_matrix
from evalframe.judge.report import report
from evalframe.judge.run import Reply, ask

__all__ = [
    "FORMATS",
    "GRADE_FORMATS",
    "POLICIES",
    "JudgmentCache",
    "OpenAIJudge",
    "Reply",
    "ask",
    "audit",
    "classify",
    "custom_format",
    "grade",
    "list_judge_formats",
    "pairwise",
    "ratings",
    "regrade",
    "report",
    "win_rate_matrix",
]
