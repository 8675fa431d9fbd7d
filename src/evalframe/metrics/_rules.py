"""Edge rules that several metrics share, written once (registrations refer to them).

>>> from evalframe.metrics._rules import NULL_RULE
>>> NULL_RULE.startswith("a null prediction")
True
"""

__all__ = ["GOLD_EDGE_RULES", "MULTI_RULE", "NULL_RULE"]

MULTI_RULE = (
    "a list[str] gold holds alternatives and a list[str] prediction several samples; the "
    "score is the maximum over every (gold, prediction) pair, as lighteval's default "
    "aggregation_function=max"
)
NULL_RULE = (
    "a null prediction or gold (or a null element inside a list) gives a null score; an empty "
    "list raises EvalframeError (lighteval's max() of no pairs fails)"
)

GOLD_EDGE_RULES = (
    "gold may be one string or a list of alternatives; the score is the maximum over them",
    "an empty gold list is an error (EvalframeError with the count of rows and the first)",
    "null prediction or null gold -> null; null alternatives inside a gold list are "
    "skipped; a gold list whose alternatives are all null -> null",
)
