"""problin's own warning classes for ill-posed data and numerical trouble.

All derive from :class:`ProblinWarning`, so users can silence or escalate
every problin warning at once (``warnings.simplefilter("error", ProblinWarning)``).
"""
from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = [
    "ProblinWarning", "SeparationWarning", "CollinearityWarning",
    "ConvergenceWarning", "NumericalWarning", "SingularCovarianceWarning",
]


class ProblinWarning(UserWarning):
    """Base class of every warning problin raises."""


class SeparationWarning(ProblinWarning):
    """The classes are (quasi-)perfectly separable: maximum-likelihood estimates diverge."""


class CollinearityWarning(ProblinWarning):
    """Some parameters are not identified: collinear or constant columns."""


class ConvergenceWarning(ProblinWarning, _SklearnConvergenceWarning):
    """An iterative solver stopped before meeting its tolerance."""


class NumericalWarning(ProblinWarning):
    """A matrix was numerically singular and needed regularising jitter."""


class SingularCovarianceWarning(NumericalWarning):
    """A class covariance (or the shared one) is singular: it was regularised with jitter."""
