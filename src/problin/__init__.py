"""problin: probabilistic linear models with scikit-learn's interface.

Logistic and probit regression fitted by Newton/IRLS with statsmodels-grade
inference; see the README for the full list of models.
"""
from ._version import __version__
from .bayesian import BayesianLogisticRegression
from .decision import BayesDecision
from .discriminant import (
                         FisherDiscriminant,
                         GaussianDiscriminantAnalysis,
                         LeastSquaresClassifier,
                         LinearDiscriminantAnalysis,
                         Perceptron,
                         QuadraticDiscriminantAnalysis,
)
from .exceptions import (
                         CollinearityWarning,
                         ConvergenceWarning,
                         NumericalWarning,
                         ProblinWarning,
                         SeparationWarning,
                         SingularCovarianceWarning,
)
from .formula import Formula
from .glm import LogisticRegression, ProbitRegression
from .inference.hypothesis import lr_test
from .io import ModelFileError, load, save
from .linear_model import (
                         BayesianLinearRegression,
                         GaussianBasis,
                         LinearRegression,
                         LMSRegressor,
                         PolynomialBasis,
                         SigmoidalBasis,
)
from .naive_bayes import BernoulliNB, GaussianNB, MultinomialNB

__all__ = [
    "LogisticRegression", "ProbitRegression",
    "PolynomialBasis", "GaussianBasis", "SigmoidalBasis", "LinearRegression", "LMSRegressor",
    "BayesianLinearRegression", "BayesianLogisticRegression",
    "GaussianDiscriminantAnalysis", "LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis",
    "GaussianNB", "BernoulliNB", "MultinomialNB",
    "FisherDiscriminant", "LeastSquaresClassifier", "Perceptron", "BayesDecision", "Formula",
    "ProblinWarning", "SeparationWarning", "CollinearityWarning", "ConvergenceWarning",
    "NumericalWarning", "SingularCovarianceWarning", "save", "load", "ModelFileError",
    "lr_test",
    "__version__",
]
