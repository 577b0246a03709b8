"""Bayesian logistic and softmax regression: Laplace, variational Bayes and MCMC."""
from .logistic import BayesianLogisticRegression

__all__ = ["BayesianLogisticRegression"]
