"""problin: probabilistic linear models with scikit-learn's interface.

Logistic and probit regression fitted by Newton/IRLS with statsmodels-grade
inference; see the README for the full list of models.
"""
from .exceptions import (CollinearityWarning, ConvergenceWarning, NumericalWarning,
                         ProblinWarning, SeparationWarning)
from .glm import LogisticRegression, ProbitRegression

__version__ = "0.1.0"

__all__ = [
    "LogisticRegression", "ProbitRegression",
    "ProblinWarning", "SeparationWarning", "CollinearityWarning", "ConvergenceWarning",
    "NumericalWarning", "__version__",
]
