"""Bayesian logistic, softmax and ordinal regression: Laplace, variational Bayes and MCMC."""
from .logistic import BayesianLogisticRegression
from .ordinal import BayesianOrdinalRegression

__all__ = ["BayesianLogisticRegression", "BayesianOrdinalRegression"]
