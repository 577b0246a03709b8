"""The validated training data of a GLM regressor: targets, weights, offset, exposure, trials.

Each argument of ``fit`` is checked once, with an error that names the offending
rows and values (the first few of them): a count below zero, a Gamma target at
or below zero, successes above their trials, a non-positive exposure. What is
valid for ``y`` is the family's to say (its ``check_y``); everything else is
the same for every family.

Weights (as statsmodels ``GLM``): ``sample_weight`` are frequency weights (a
row of weight 2 is two rows: they count in ``n_obs_`` and ``df_resid_``);
``var_weights`` divide the row's dispersion, ``Var(y_i) = phi V(mu_i) / v_i``
(McCullagh & Nelder 1989, §2.2), and do not count as observations; a binomial
row of ``n`` trials is its proportion of successes with variance weight ``n``.
The per-row weight of the likelihood is their product.
"""
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from .._core.model.distributions import offending_rows
from .._core.model.exponential_family import ExponentialFamily
from .._core.model.family_statistics import NullModel
from .._core.model.fitted_rows import FittedRows, RowProducts, RowSum
from .._core.model.objective import GLMObjective
from .._core.model.penalty_firth import Jeffreys
from .._core.model.penalty import GaussianPenalty
from .._core.solvers.steps import SolverResult
from .._core.validation import check_sample_weight
from .._core.model.contract import Objective
from ._regression_fit import Penalised, boundary_fit
from .interval import check_offset

__all__ = ["RegressionData", "RegressionObjective", "RegressionRows", "check_positive",
           "log_exposure", "regression_data"]

_SHOWN = 5  # rows named in an error message


def bad_rows(name: str, values: NDArray[np.float64], bad: NDArray[np.bool_], what: str) -> str:
    """``"exposure must be positive: exposure[3] = 0, ... (2 rows)"``."""
    return f"{name} must be {what}: {offending_rows(bad, values, name, _SHOWN)}"


def _vector(name: str, values: Any, n_rows: int) -> NDArray[np.float64]:
    if hasattr(values, "dask") or type(values).__module__.startswith("dask"):
        raise TypeError(f"{name} must be an in-memory array, not a Dask collection")
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        hint = ": a column name is read by Formula(...).fit/predict, not by the estimator" \
            if isinstance(values, str) else ""
        raise TypeError(f"{name} must be numeric, one value per row{hint}") from None
    if v.ndim == 0:
        v = np.full(n_rows, float(v))
    if v.ndim != 1 or v.shape[0] != n_rows:
        raise ValueError(f"{name} must be a 1-D array with one value per row: got shape "
                         f"{v.shape} for {n_rows} rows")
    if not np.all(np.isfinite(v)):
        raise ValueError(bad_rows(name, v, ~np.isfinite(v), "finite"))
    return v


def check_positive(name: str, values: Any, n_rows: int, allow_zero: bool = False
                   ) -> NDArray[np.float64] | None:
    """A finite vector of one value per row, each above zero (at least zero with
    ``allow_zero``), or None."""
    if values is None:
        return None
    v = _vector(name, values, n_rows)
    bad = v < 0 if allow_zero else v <= 0
    if bad.any():
        raise ValueError(bad_rows(name, v, bad, "non-negative" if allow_zero else "positive"))
    return v


def log_exposure(family: ExponentialFamily, exposure: Any, n_rows: int) -> NDArray[np.float64]:
    """``log(exposure)``, checked positive, for a model of the log link (the mean is then
    proportional to the exposure); a ValueError for any other link."""
    link = family.link_function.name
    if link != "log":
        raise ValueError(f"exposure multiplies the mean, which needs the log link; this "
                         f"model has the {link} link: pass log(exposure) as offset= "
                         "only if that is what you mean")
    values = check_positive("exposure", exposure, n_rows)
    assert values is not None  # (exposure is not None)
    return np.log(values)


class RegressionObjective(Objective[Any], Protocol):
    """A regressor's objective, in memory or by passes over Dask chunks."""

    @property
    def information(self) -> str: ...


Obj = TypeVar("Obj", bound=RegressionObjective)


class RegressionRows(Protocol[Obj]):
    """A regressor's validated rows, wherever they are: in memory (:class:`RegressionData`)
    or in Dask chunks (:class:`~problin._dask.regression.DaskRegressionRows`, each answer
    a distributed pass). The fit asks them, never which they are."""

    @property
    def n_obs(self) -> float: ...

    def in_memory(self, message: str) -> "RegressionData":
        """The rows in memory; a ValueError(message) where they are not."""
        ...

    def objective(self, design: Any, family: ExponentialFamily, prior: GaussianPenalty | None,
                  information: str, penalty: Jeffreys | None = None) -> Obj:
        """The negative log-likelihood of ``family`` on ``design`` (the rows' own), with
        the prior ``prior`` or Firth's ``penalty`` (bound to the rows)."""
        ...

    def start_intercept(self, family: ExponentialFamily) -> float: ...

    def check_solver(self, solver: str) -> None: ...

    def exact_final(self, affordable: bool) -> bool: ...

    def fitted_sums(self, family: ExponentialFamily, eta: Any) -> tuple[float, float]: ...

    def null_model(self, family: ExponentialFamily) -> Any: ...

    def likelihoods(self, family: ExponentialFamily, eta: Any, null: Any, ll_scale: float,
                    phi: float) -> tuple[float, float, float]: ...

    def boundary(self, est: Penalised, objective: Obj, result: SolverResult
                 ) -> NDArray[np.bool_] | None: ...

    def row_sums(self, design: RowProducts | None, family: ExponentialFamily, eta: Any,
                 op: RowSum) -> tuple[float | NDArray[np.float64], ...]:
        """``op`` summed over the rows at the linear predictor ``eta`` (no offset) of
        ``design``: a parameter of the family outside the linear predictor (the negative
        binomial's alpha) and the maximum-likelihood dispersion (no design) are fitted
        from such sums."""
        ...


@dataclass(frozen=True)
class RegressionData:
    """A regressor's validated targets and weights.

    Attributes
    ----------
    y : ndarray of shape (n,)
        The targets on the family's scale (a binomial's proportions of successes).
    weights : ndarray of shape (n,) or None
        The likelihood's per-row weights: frequency times variance weights (times
        trials); None where all are 1.
    frequency : ndarray of shape (n,) or None
        The frequency weights alone (``sample_weight``): what counts as observations.
    variance : ndarray of shape (n,) or None
        The variance weights alone (``var_weights`` times a binomial's trials).
    offset : ndarray of shape (n,) or None
        The offset, with ``log(exposure)`` added.
    """

    y: NDArray[np.float64]
    weights: NDArray[np.float64] | None
    frequency: NDArray[np.float64] | None
    variance: NDArray[np.float64] | None
    offset: NDArray[np.float64] | None
    # (the last fitted_sums: its eta and deviance, which likelihoods reuses at that eta)
    _fitted: dict[str, Any] = field(default_factory=dict, init=False, repr=False,
                                    compare=False)

    @property
    def n_obs(self) -> float:
        """The number of observations: the sum of the frequency weights."""
        return float(self.y.size if self.frequency is None else self.frequency.sum())

    # -- the rows' questions (the same on Dask: ``problin._dask.regression``) ---------
    def in_memory(self, message: str) -> "RegressionData":
        return self

    def objective(self, design: Any, family: ExponentialFamily,
                  prior: GaussianPenalty | None, information: str,
                  penalty: Jeffreys | None = None) -> GLMObjective[ExponentialFamily]:
        """The negative log-likelihood of ``family`` on ``design`` and these targets."""
        if penalty is not None:
            return GLMObjective(design, family, self.y, self.weights, information=information,
                                offset=self.offset,
                                penalty=penalty.bind(design, family, self.y, self.weights,
                                                     self.offset))
        return GLMObjective(design, family, self.y, self.weights, information=information,
                            offset=self.offset, penalty=prior)

    def start_intercept(self, family: ExponentialFamily) -> float:
        return family.start_intercept(self.y, self.weights, self.offset)

    def check_solver(self, solver: str) -> None:
        return None  # every solver reads rows in memory

    def exact_final(self, affordable: bool) -> bool:
        """Whether Newton's final Hessian is exact (``affordable``: a full one in memory)."""
        return affordable

    def boundary(self, est: Penalised, objective: GLMObjective[ExponentialFamily],
                 result: SolverResult) -> NDArray[np.bool_] | None:
        """The rows fitted at an end of the mean's range (:func:`~problin.glm.
        _regression_fit.boundary_fit`)."""
        return boundary_fit(est, objective, result)

    def fitted_sums(self, family: ExponentialFamily, eta: NDArray[np.float64]
                    ) -> tuple[float, float]:
        """``(deviance, Pearson's chi²)`` at the linear predictors ``eta`` (no offset)."""
        mu = family.mean(eta if self.offset is None else eta + self.offset)
        deviance = family.deviance(self.y, mu, self.weights)
        self._fitted.update(eta=eta, deviance=deviance)
        return deviance, family.pearson_chi2(self.y, mu, self.weights)

    def null_model(self, family: ExponentialFamily) -> NullModel:
        return family.null_model(self.y, self.weights, self.offset)

    def row_sums(self, design: RowProducts | None, family: ExponentialFamily,
                 eta: NDArray[np.float64], op: RowSum
                 ) -> tuple[float | NDArray[np.float64], ...]:
        """``op`` of all the rows at once, at the linear predictor ``eta`` (no offset)."""
        eta = eta if self.offset is None else eta + self.offset
        return op(FittedRows.at(design, family.link_function, self.y, self.weights, eta,
                                self.frequency, self.variance))

    def likelihoods(self, family: ExponentialFamily, eta: NDArray[np.float64],
                    null: NullModel, ll_scale: float, phi: float
                    ) -> tuple[float, float, float]:
        """``(log-likelihood at eta and ll_scale, the null model's at phi, its deviance)``.

        A family's log-likelihood is the saturated model's less the deviance over twice
        the scale, ``sum f l(y, mu) = sum f l(y, y) - D / (2 s)`` (the deviance's
        definition; ``D = sum f v d``): the saturated sum, the rows' only term without
        ``mu`` (a Poisson's ``log y!``), is computed once for both models and the
        deviances are the ones at hand, instead of a log-likelihood pass each. Fixed-
        dispersion families at a scale other than 1 (the binomial's log-likelihood ignores
        the scale, the Poisson's does not), and scales that are not positive numbers
        (an exact fit's 0, no residual degrees of freedom), are summed directly."""
        null_deviance = family.deviance(self.y, null.mean, self.weights)
        if (family.fixed_dispersion and not ll_scale == phi == 1.0) \
                or not (0.0 < ll_scale < np.inf and 0.0 < phi < np.inf):
            mu = family.mean(eta if self.offset is None else eta + self.offset)
            return (family.log_likelihood(self.y, mu, self.variance, self.frequency,
                                          ll_scale),
                    family.log_likelihood(self.y, null.mean, self.variance, self.frequency,
                                          phi), null_deviance)
        deviance = self._fitted["deviance"] if self._fitted.get("eta") is eta \
            else self.fitted_sums(family, eta)[0]
        saturated = family.log_likelihood(self.y, self.y, self.variance, self.frequency,
                                          ll_scale)
        saturated0 = saturated if phi == ll_scale else family.log_likelihood(
            self.y, self.y, self.variance, self.frequency, phi)
        return (saturated - deviance / (2.0 * ll_scale),
                saturated0 - null_deviance / (2.0 * phi), null_deviance)


def _product(*factors: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
    out = None
    for f in factors:
        if f is not None:
            out = f if out is None else out * f
    return out


def regression_data(family: ExponentialFamily, y: Any, n_rows: int, sample_weight: Any = None,
                    offset: Any = None, exposure: Any = None, var_weights: Any = None,
                    trials: Any = None) -> RegressionData:
    """Validate a regressor's ``fit`` arguments against ``family`` (module docstring).

    ``exposure`` adds ``log(exposure)`` to the offset (log link only: the mean is then
    proportional to the exposure); ``trials`` turns binomial counts of successes into
    proportions with ``trials`` as variance weights (binomial families only).
    """
    y = np.asarray(y, dtype=np.float64)
    frequency = check_sample_weight(sample_weight, n_rows)
    variance = check_positive("var_weights", var_weights, n_rows, allow_zero=True)
    n_trials = None
    if trials is not None:  # (the family's: a ValueError where it has no trials)
        y, n_trials = family.from_trials(y, _vector("trials", trials, n_rows))
    family.check_y(y)
    off = check_offset(offset, n_rows)
    if exposure is not None:
        log_e = log_exposure(family, exposure, n_rows)
        off = log_e if off is None else off + log_e
    variance = _product(variance, n_trials)
    return RegressionData(y=y, weights=_product(frequency, variance), frequency=frequency,
                          variance=variance, offset=off)
