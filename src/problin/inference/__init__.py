"""Statistical inference shared by the estimators: tests, statistics and their display.

- :mod:`~problin.inference.hypothesis`: :func:`wald_test` of linear restrictions
  ``R theta = q`` (a matrix or a string such as ``"x1 = x2, x3 = 0"``, parsed by
  :mod:`~problin.inference.constraints`) and :func:`lr_test` of nested fits, both
  returning a :class:`TestResult` ``(statistic, df, p_value)``.
- :mod:`~problin.inference.text` and :mod:`~problin.inference.summaries`: the
  statsmodels-like text summary (:class:`SummaryText`, HTML in notebooks) of each
  estimator family.
"""
from .hypothesis import TestResult, lr_test, wald_test
from .text import SummaryText

__all__ = ["SummaryText", "TestResult", "lr_test", "wald_test"]
