"""Naive Bayes: features independent given the class.

``p(x | C_k) = prod_j p(x_j | C_k)``, so every class needs only per-feature
statistics: Gaussian (means and variances, :class:`GaussianNB`), Bernoulli (how
often a feature is present, :class:`BernoulliNB`), multinomial (how often it
occurs, :class:`MultinomialNB`), or any of several exponential families chosen
column by column (:class:`ExponentialFamilyNB`).
"""
from .discrete import BernoulliNB, MultinomialNB
from .exponential import ExponentialFamilyNB
from .gaussian import GaussianNB

__all__ = ["GaussianNB", "BernoulliNB", "MultinomialNB", "ExponentialFamilyNB"]
