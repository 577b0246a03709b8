"""problin's own warning classes for ill-posed data and numerical trouble, and the error
for a missing optional dependency.

All warnings derive from :class:`ProblinWarning`, so users can silence or escalate
every problin warning at once (``warnings.simplefilter("error", ProblinWarning)``).
"""
import os
import sys
import warnings
from types import FrameType

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = [
    "ProblinWarning", "SeparationWarning", "PerfectFitWarning", "CollinearityWarning",
    "ConvergenceWarning", "NumericalWarning", "SingularCovarianceWarning",
    "PerformanceWarning", "MissingDependencyError",
]


class ProblinWarning(UserWarning):
    """Base class of every warning problin raises."""


class SeparationWarning(ProblinWarning):
    """The classes are (quasi-)perfectly separable: maximum-likelihood estimates diverge."""


class PerfectFitWarning(SeparationWarning):
    """The count models' separation: some rows are fitted at an end of the mean's range
    (zero counts by means tending to 0, binomial proportions of 0 or 1 by probabilities
    tending to them), and the maximum-likelihood coefficients diverge."""


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


class PerformanceWarning(ProblinWarning):
    """An input makes a fit much slower than it need be; the message says the faster way
    (e.g. a Dask array that reads its files again on every pass of a Newton fit)."""


class MissingDependencyError(ImportError):
    """A feature needs a package that an extra of problin installs and that is not installed.

    The message is one line naming the feature, the package and the command that installs
    it, e.g. ``problin.Formula needs formulaic: pip install 'problin[formula]'``; ``package``
    and ``extra`` hold the two names. An ``ImportError``, so ``except ImportError`` catches it.
    """

    def __init__(self, message: str, package: str = "", extra: str = "") -> None:
        super().__init__(message, name=package or None)
        self.package, self.extra = package, extra

    def __reduce__(self) -> tuple[type["MissingDependencyError"], tuple[str, str, str]]:
        # pickled whole (raised in a Dask worker, it reaches the client as it was raised)
        return type(self), (str(self), self.package, self.extra)


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` attributed to the first frame outside problin:
    the user's line, however deep in problin the warning arose (through the fit wrappers
    of ``_state``, a ``Formula``, a Pipeline step), as Python 3.12's
    ``skip_file_prefixes`` does. A fixed ``stacklevel`` names whichever problin frame
    sits at that depth for one caller and the right line only for another. Filters
    apply as ever: an "error" filter raises here, inside the fit that warned."""
    warnings.warn(message, category, stacklevel=caller_frame(sys._getframe(1))[1] + 1)


def caller_frame(frame: FrameType) -> tuple[FrameType, int]:
    """The first frame from ``frame`` outwards whose code is not problin's (the user's,
    or the outermost), and how many frames out it is (1: ``frame`` itself)."""
    level = 1
    while frame.f_back is not None and \
            os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return frame, level
