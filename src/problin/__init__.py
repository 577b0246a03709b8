"""problin: probabilistic linear models with scikit-learn's interface.

Logistic and probit regression and the GLM regressors (Poisson, Gamma, Tweedie,
binomial, ...) fitted by Newton/IRLS with statsmodels-grade inference; see the README for the full list of models.

``import problin`` needs only the core dependencies (numpy, SciPy, scikit-learn, pandas,
threadpoolctl). What an extra adds is imported where it is used (:mod:`problin._optional`):
:class:`Formula` imports formulaic when it is created, and the submodules ``problin.report``
and ``problin.plot`` (matplotlib) load on first access as attributes of the package
(PEP 562); without the extra, the error names it (:class:`MissingDependencyError`).
"""
import importlib
from typing import Any

from ._version import __version__
from .bayesian import BayesianLogisticRegression, BayesianOrdinalRegression
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
                         MissingDependencyError,
                         NumericalWarning,
                         PerfectFitWarning,
                         PerformanceWarning,
                         ProblinWarning,
                         SeparationWarning,
                         SingularCovarianceWarning,
)
from .formula import Formula
from .glm import (
                         GLM,
                         BinomialRegression,
                         GammaRegression,
                         InverseGaussianRegression,
                         LogisticRegression,
                         NegativeBinomialRegression,
                         OrdinalRegression,
                         PoissonRegression,
                         ProbitRegression,
                         TweedieRegression,
                         brant_test,
                         proportional_odds_lr_test,
)
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
from .naive_bayes import BernoulliNB, ExponentialFamilyNB, GaussianNB, MultinomialNB

__all__ = [
    "LogisticRegression", "ProbitRegression", "GLM", "PoissonRegression", "GammaRegression",
    "InverseGaussianRegression", "TweedieRegression", "BinomialRegression",
    "NegativeBinomialRegression", "OrdinalRegression",
    "PolynomialBasis", "GaussianBasis", "SigmoidalBasis", "LinearRegression", "LMSRegressor",
    "BayesianLinearRegression", "BayesianLogisticRegression", "BayesianOrdinalRegression",
    "GaussianDiscriminantAnalysis", "LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis",
    "GaussianNB", "BernoulliNB", "MultinomialNB", "ExponentialFamilyNB",
    "FisherDiscriminant", "LeastSquaresClassifier", "Perceptron", "BayesDecision", "Formula",
    "ProblinWarning", "SeparationWarning", "PerfectFitWarning", "CollinearityWarning",
    "ConvergenceWarning", "NumericalWarning", "SingularCovarianceWarning",
    "PerformanceWarning", "save", "load",
    "ModelFileError", "MissingDependencyError", "lr_test", "brant_test",
    "proportional_odds_lr_test",
    "__version__",
]

# Submodules loaded on first access (``problin.report.build_report(...)``), not by
# ``import problin``: they need matplotlib (the ``report`` extra) to draw.
_LAZY_SUBMODULES = ("plot", "report")


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":  # something it imports is missing
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
