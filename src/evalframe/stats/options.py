"""Checks of the options the statistics functions share: a confidence level, a number of
bootstrap replicates, a seed, a flag.

Each raises an :class:`~evalframe.errors.OptionError` whose message names the option as
the function takes it (``ci=1.5 ...``) and whose ``problem`` fits any spelling of it (the
command line's ``--ci 1.5 must be strictly between 0 and 1``).

>>> check_level(1.5)
Traceback (most recent call last):
...
evalframe.errors.OptionError: ci=1.5 must be a number strictly between 0 and 1 (e.g. 0.95)
"""

from __future__ import annotations

from evalframe.errors import OptionError

__all__ = ["check_flag", "check_level", "check_replicates", "check_replicates_or_none",
           "check_seed"]


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_level(ci: object, option: str = "ci") -> float:
    """A confidence level: a number strictly between 0 and 1."""
    number = isinstance(ci, int | float) and not isinstance(ci, bool)
    if not number or not 0 < ci < 1:  # type: ignore[operator]
        raise OptionError(
            f"{option}={ci!r} must be a number strictly between 0 and 1 (e.g. 0.95)",
            option=option, value=ci,
            problem=f"must be {'' if number else 'a number '}strictly between 0 and 1",
        )
    return float(ci)  # type: ignore[arg-type]


def check_replicates(bootstrap: object, option: str = "bootstrap") -> int:
    """A number of bootstrap replicates (or randomisation trials): an integer >= 2."""
    if not _integer(bootstrap) or bootstrap < 2:  # type: ignore[operator]
        raise OptionError(
            f"{option}={bootstrap!r} must be an integer >= 2 (e.g. 1000)",
            option=option, value=bootstrap,
            problem="must be >= 2" if _integer(bootstrap) else "must be an integer >= 2",
        )
    return int(bootstrap)  # type: ignore[call-overload]


def check_replicates_or_none(bootstrap: object, option: str = "bootstrap") -> int:
    """A number of bootstrap replicates where 0 means no intervals: 0 or an integer >= 2.

    >>> check_replicates_or_none(1)
    Traceback (most recent call last):
    ...
    evalframe.errors.OptionError: bootstrap=1 gives no spread; use 0 (no intervals) or >= 2
    """
    if not _integer(bootstrap) or bootstrap < 0:  # type: ignore[operator]
        raise OptionError(
            f"{option}={bootstrap!r} must be an integer >= 0 (0: no intervals)",
            option=option, value=bootstrap,
            problem="must be >= 0" if _integer(bootstrap) else "must be an integer >= 0",
        )
    if bootstrap == 1:
        raise OptionError(
            f"{option}=1 gives no spread; use 0 (no intervals) or >= 2",
            option=option, value=bootstrap, problem="must be 0 (no intervals) or >= 2",
        )
    return int(bootstrap)  # type: ignore[call-overload]


def check_seed(seed: object, option: str = "seed") -> int:
    """A seed: a non-negative integer."""
    if not _integer(seed) or seed < 0:  # type: ignore[operator]
        raise OptionError(
            f"{option}={seed!r} must be a non-negative integer",
            option=option, value=seed,
            problem="must be >= 0" if _integer(seed) else "must be a non-negative integer",
        )
    return int(seed)  # type: ignore[call-overload]


def check_flag(flag: object, option: str) -> bool:
    """A flag: True or False."""
    if not isinstance(flag, bool):
        raise OptionError(
            f"{option}={flag!r} must be True or False", option=option, value=flag,
            problem="must be True or False",
        )
    return flag
