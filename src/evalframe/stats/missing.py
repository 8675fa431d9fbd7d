"""The missing-answer policy: what a missing answer counts as in a statistic.

Which rows are missing answers is :mod:`evalframe.metrics.answers`'s to say (and the
scored-result record's, :mod:`evalframe.scored`); this module names the policies that
``aggregate``, ``compare`` and ``paired_variance`` apply to them.

>>> check_policy("exclude")
'exclude'
"""

from __future__ import annotations

from typing import Literal

from evalframe.errors import OptionError

Missing = Literal["wrong", "exclude", "error"]
MISSING_POLICIES: tuple[str, ...] = ("wrong", "exclude", "error")


def check_policy(missing: object) -> str:
    """``missing`` must be one of :data:`MISSING_POLICIES`."""
    if missing not in MISSING_POLICIES:
        expected = ", ".join(repr(policy) for policy in MISSING_POLICIES)
        raise OptionError(
            f"missing={missing!r} is invalid; expected one of {expected}",
            option="missing", value=missing, problem=f"is invalid; expected one of {expected}",
        )
    return str(missing)
