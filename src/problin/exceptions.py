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
    """Numerical trouble: a matrix was numerically singular and needed regularising
    jitter, or a least-squares problem is so ill-conditioned (the estimated condition
    number is in the message) that fewer than 6 significant digits can be guaranteed."""


class SingularCovarianceWarning(NumericalWarning):
    """A class covariance (or the shared one) is singular: it was regularised with jitter."""
