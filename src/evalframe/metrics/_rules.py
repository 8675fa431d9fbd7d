"""Edge rules that several metrics share, written once (registrations refer to them).

>>> from evalframe.metrics._rules import NULL_RULE
>>> NULL_RULE.startswith("a null prediction")
True
"""

__all__ = [
    "ALTERNATIVES_RULE",
    "COMPUTE_F1_RULE",
    "EMPTY_GOLD_LIST_RULE",
    "GOLD_EDGE_RULES",
    "MULTI_RULE",
    "NULL_ALTERNATIVES_RULE",
    "NULL_RULE",
]

MULTI_RULE = (
    "a list[str] gold holds alternatives and a list[str] prediction several samples; the "
    "score is the maximum over every (gold, prediction) pair, as lighteval's default "
    "aggregation_function=max"
)
NULL_RULE = (
    "a null prediction or gold (or a null element inside a list) gives a null score; an empty "
    "list raises EvalframeError (lighteval's max() of no pairs fails)"
)

#: A gold column of one string or a list of alternatives (metrics that take the best).
ALTERNATIVES_RULE = (
    "gold may be one string or a list of alternatives; the score is the maximum over them"
)
EMPTY_GOLD_LIST_RULE = (
    "an empty gold list is an error (EvalframeError with the count of rows and the first)"
)
NULL_ALTERNATIVES_RULE = (
    "null prediction or null gold -> null; null alternatives inside a gold list are "
    "skipped; a gold list whose alternatives are all null -> null"
)
GOLD_EDGE_RULES = (ALTERNATIVES_RULE, EMPTY_GOLD_LIST_RULE, NULL_ALTERNATIVES_RULE)

#: The token F1 of SQuAD's official script, which token_f1 and squad_f1 reproduce.
COMPUTE_F1_RULE = (
    "F1 is bit-identical to compute_f1: precision = same/len(pred), recall = "
    "same/len(gold), f1 = (2*precision*recall)/(precision+recall)"
)
