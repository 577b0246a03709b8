"""Generalised linear classifiers fitted by the Newton/IRLS engine."""
from .logistic import LogisticRegression
from .probit import ProbitRegression

__all__ = ["LogisticRegression", "ProbitRegression"]
