"""problin: probabilistic linear models with scikit-learn's interface.

Logistic and probit regression fitted by Newton/IRLS with statsmodels-grade
inference; see the README for the full list of models.
"""
from .exceptions import (CollinearityWarning, ConvergenceWarning, NumericalWarning,
                         ProblinWarning, SeparationWarning, SingularCovarianceWarning)
from .decision import BayesDecision
from .discriminant import (FisherDiscriminant, GaussianDiscriminantAnalysis,
                           LeastSquaresClassifier, LinearDiscriminantAnalysis, Perceptron,
                           QuadraticDiscriminantAnalysis)
from .glm import LogisticRegression, ProbitRegression
from .bayesian import BayesianLogisticRegression
from .naive_bayes import BernoulliNB, GaussianNB, MultinomialNB
from .linear_model import (BayesianLinearRegression, GaussianBasis, LinearRegression,
                           LMSRegressor, PolynomialBasis, SigmoidalBasis)
from .io import ModelFileError, load, save

__version__ = "0.1.0"

__all__ = [
    "LogisticRegression", "ProbitRegression",
    "PolynomialBasis", "GaussianBasis", "SigmoidalBasis", "LinearRegression", "LMSRegressor",
    "BayesianLinearRegression", "BayesianLogisticRegression",
    "GaussianDiscriminantAnalysis", "LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis",
    "GaussianNB", "BernoulliNB", "MultinomialNB",
    "FisherDiscriminant", "LeastSquaresClassifier", "Perceptron", "BayesDecision",
    "ProblinWarning", "SeparationWarning", "CollinearityWarning", "ConvergenceWarning",
    "NumericalWarning", "SingularCovarianceWarning", "save", "load", "ModelFileError",
    "__version__",
]
