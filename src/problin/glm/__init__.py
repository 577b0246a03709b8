"""Generalised linear models fitted by the Newton/IRLS engine: the classifiers and the
regressors of counts, rates, sizes and grouped outcomes."""
from .logistic import LogisticRegression
from ._ordinal_tests import BrantResult, NonParallelFit, brant_test, proportional_odds_lr_test
from .negative_binomial import NegativeBinomialRegression
from .ordinal import OrdinalRegression
from .probit import ProbitRegression
from .regressors import (
    GLM,
    BinomialRegression,
    GammaRegression,
    InverseGaussianRegression,
    PoissonRegression,
    TweedieRegression,
)

__all__ = ["LogisticRegression", "ProbitRegression", "GLM", "PoissonRegression",
           "GammaRegression", "InverseGaussianRegression", "TweedieRegression",
           "BinomialRegression", "NegativeBinomialRegression", "OrdinalRegression",
           "brant_test", "BrantResult", "proportional_odds_lr_test", "NonParallelFit"]
