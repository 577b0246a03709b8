"""The result of a GLM's fit, in one frozen record.

Every fit of :class:`~problin.LogisticRegression` (binary or softmax),
:class:`~problin.ProbitRegression` and the GLM regressors (:class:`~problin.GLM`,
:class:`~problin.PoissonRegression`, ...), in memory, sparse or on Dask, produces one
:class:`GLMFit`; the estimator's fitted attributes (``coef_``, ``covariance_``,
``n_iter_``, ...), its predictions and ``summary()`` are all read from it.
"""
import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .._core.model.basis import ColumnBasis
from .._core.model.contract import DesignShape
from .._core.model.penalty import Penalty
from .._core.solvers.steps import SolverResult
from .statistics import likelihood_statistics

__all__ = ["GLMFit"]


class SolvedObjective(Protocol):
    """What a fit record reads of the objective it was solved on (any
    :class:`~problin._core.model.contract.Objective`, in memory or on Dask)."""

    @property
    def design(self) -> DesignShape: ...
    @property
    def n_blocks(self) -> int: ...
    @property
    def penalty(self) -> Penalty: ...
    @property
    def total_weight(self) -> float: ...


@dataclass(frozen=True, eq=False)
class GLMFit:
    """A fitted GLM classifier: parameters, their covariance, and how the fit went.

    Parameters are ordered ``[intercept, coef...]`` per free class block
    (the order of ``covariance``); the blocks follow the classes, without
    the reference class where that is fixed at zero.

    Attributes
    ----------
    theta : ndarray of shape (n_blocks * p,)
        The estimate (maximum likelihood, or the MAP under the Gaussian prior
        ``alpha``) in raw units: the ``coef`` column of ``summary()``.
    theta_standard : ndarray of shape (n_blocks * p,)
        The same in the coordinates the solver worked in: the equilibrated
        (and, for dense data, centred) basis ``scale``/``center``, or raw units
        where ``scale`` is None. Predictions on dense data read these
        (the intercept at the centre keeps every digit far from the origin).
    scale, center : ndarray of shape (n_features,) or None
        The basis (:class:`~problin._core.model.basis.ColumnBasis`): column
        scales ``s`` and centres ``c`` (None: not centred; ``scale`` None: no basis).
    fit_intercept : bool
        Whether each block starts with an intercept.
    n_blocks : int
        Free parameter blocks: 1 for binary models, K - 1 softmax contrasts
        against the first class when unpenalised, K when ``alpha > 0``.
    reference_class : bool
        Whether the first class is a reference whose parameters are fixed at
        zero (unpenalised softmax: the K - 1 contrasts of Bishop 2006, section
        4.3.4, identified as statsmodels' ``MNLogit``).
    objective : float
        The minimised negative log-posterior: the negative log-likelihood plus
        ``alpha |w|^2 / 2`` (deviance / 2 when ``alpha = 0``).
    alpha : float
        The prior precision of the weights the fit used.
    n_obs : int
        Rows of the training data.
    solver : str
        The solver used (what ``"auto"`` chose).
    n_iter, converged, message, history :
        Iterations, whether the tolerance was met, the solver's stopping
        message, the objective per iterate.
    covariance : ndarray of shape (n_blocks * p, n_blocks * p) or None
        Inverse observed information (of the penalised objective when
        ``alpha > 0``: the Laplace posterior covariance, Bishop 2006, eq. 4.143),
        NaN on parameters that are not identified; None where fit skipped it
        (too many parameters).
    identified : ndarray of bool, shape (n_blocks * p,) or None
        False for parameters that collinear or constant columns leave
        undetermined (decided on the rank of the information matrix).
    separated : ndarray of bool, shape (n_obs,) or None
        Where the classes are (quasi-)separated (Albert & Anderson 1984;
        Konis 2007): the rows fitted with probability 0 or 1. None otherwise.
    covariance_standard : ndarray or None
        ``covariance`` in the solver's coordinates (``theta_standard``'s): what
        prediction intervals read, with no digits lost far from the origin.
    penalty : float
        The prior term ``alpha |w|^2 / 2`` at the estimate (0 when ``alpha = 0``):
        ``objective - penalty`` is the negative log-likelihood.
    null_log_likelihood : float or None
        The log-likelihood of the intercept-only model with the same weights
        (and offset); None for records made without it.
    weight_total : float or None
        The sum of the sample weights (the rows without weights): the number of
        observations of frequency-weighted data.
    cov_type : str
        What ``covariance`` is: ``"nonrobust"`` (inverse information) or a
        sandwich (``"HC0"`` ... ``"HC3"``, ``"cluster"``; see
        :mod:`problin.glm.robust`).
    dispersion : float
        The dispersion ``phi`` (``scale_``) by which the model-based covariance
        multiplies the inverse information: 1 for the classifiers and the families
        whose dispersion is fixed, the estimate where it is estimated (a robust
        covariance does not depend on it).
    t_df : float or None
        The degrees of freedom of t statistics where the dispersion is estimated
        (``df_resid``): ``summary()`` shows t and tests use F; None: z and chi².
    regression_statistics : dict or None
        A regressor's fitted statistics (``deviance_``, ``pearson_chi2_``,
        ``scale_``, ``aic_``, ...; :func:`problin.glm.statistics.regression_statistics`),
        None for the classifiers, whose :meth:`statistics` derive from the likelihood.
    """

    theta: NDArray[np.float64]
    theta_standard: NDArray[np.float64]
    scale: NDArray[np.float64] | None
    center: NDArray[np.float64] | None
    fit_intercept: bool
    n_blocks: int
    reference_class: bool
    objective: float
    alpha: float
    n_obs: int
    solver: str
    n_iter: int
    converged: bool
    message: str
    history: NDArray[np.float64]
    covariance: NDArray[np.float64] | None = None
    identified: NDArray[np.bool_] | None = None
    separated: Any = None  # (a lazy Dask array for Dask fits)
    covariance_standard: NDArray[np.float64] | None = None
    penalty: float = 0.0
    null_log_likelihood: float | None = None
    weight_total: float | None = None
    cov_type: str = "nonrobust"
    dispersion: float = 1.0
    t_df: float | None = None
    regression_statistics: dict[str, float] | None = None
    penalty_name: str = "l2"
    firth_separated: bool = False  # Firth's fitted margins separate the classes

    @classmethod
    def from_solver(cls, objective: SolvedObjective, result: SolverResult, *, solver: str,
                    alpha: float,
                    covariance: NDArray[np.float64] | None = None,
                    identified: NDArray[np.bool_] | None = None,
                    separated: Any = None, null_log_likelihood: float | None = None,
                    covariance_standard: NDArray[np.float64] | None = None,
                    reference_class: bool = False, penalty_name: str = "l2",
                    firth_separated: bool = False) -> "GLMFit":
        """The fit from a solver's result on ``objective`` (in its design's basis), with
        the diagnostics' covariance, identified parameters and separated rows, and the
        intercept-only model's log-likelihood (:mod:`problin.glm.statistics`);
        ``reference_class``: the family's layout fixes the first class's block at 0."""
        design = objective.design
        basis = design.basis
        theta = result.theta if basis is None else basis.to_raw(result.theta)
        return cls(theta=np.array(theta, dtype=np.float64),
                   theta_standard=result.theta.copy(),
                   scale=None if basis is None else basis.scale.copy(),
                   center=None if basis is None or basis.center is None
                   else basis.center.copy(),
                   fit_intercept=bool(design.intercept), n_blocks=int(objective.n_blocks),
                   reference_class=reference_class,
                   objective=float(result.value), alpha=alpha, n_obs=int(design.n_samples),
                   solver=solver, n_iter=int(result.n_iter), converged=bool(result.converged),
                   message=result.message, history=np.asarray(result.history, dtype=np.float64),
                   covariance=covariance, identified=identified, separated=separated,
                   covariance_standard=covariance_standard,
                   penalty=float(objective.penalty.value(result.theta)),
                   null_log_likelihood=null_log_likelihood,
                   weight_total=float(objective.total_weight), penalty_name=penalty_name,
                   firth_separated=firth_separated)

    def replace(self, **changes: Any) -> "GLMFit":
        """A copy with ``changes`` (e.g. a covariance computed after the fit)."""
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------ derived
    @property
    def basis(self) -> ColumnBasis | None:
        """The solver's coordinates (None for fits made without a basis)."""
        if self.scale is None:
            return None
        return ColumnBasis(self.scale, self.center, self.fit_intercept)

    @property
    def n_params(self) -> int:
        """Parameters in all: ``n_blocks * p``."""
        return int(self.theta.size)

    @property
    def log_likelihood(self) -> float:
        """The log-likelihood at the estimate, ``-(objective - penalty)``: the
        maximised log-likelihood when ``alpha = 0``, at the MAP estimate otherwise."""
        return -(self.objective - self.penalty)

    @property
    def n_null_params(self) -> int:
        """Parameters of the intercept-only (null) model: 1 (binary), K - 1 (softmax),
        also for models fitted without an intercept (statsmodels' convention)."""
        return self.n_blocks - int(self.common_shift)

    @property
    def n_estimated(self) -> int:
        """Estimated parameters ``k`` of the likelihood: identified columns per block
        times the free contrasts (``(K - 1) r`` for softmax, as statsmodels ``MNLogit``)."""
        p = self.theta.size // self.n_blocks
        per_block = p if self.identified is None else \
            int(self.identified.reshape(self.n_blocks, p).sum(axis=1).max())
        return (self.n_blocks - int(self.common_shift)) * per_block

    @property
    def common_shift(self) -> bool:
        """Whether the blocks share a direction no likelihood sees: softmax with all K
        blocks free (one shift of every logit), not binary models or contrasts."""
        return self.n_blocks > 1 and not self.reference_class

    def statistics(self) -> dict[str, Any]:
        """``log_likelihood_``, ``aic_``, ``bic_``, ... (:mod:`problin.glm.statistics`);
        empty for records made without the null model; a regressor's own statistics."""
        if self.regression_statistics is not None:
            return dict(self.regression_statistics)
        if self.null_log_likelihood is None:
            return {}
        n_obs = float(self.n_obs if self.weight_total is None else self.weight_total)
        return likelihood_statistics(self.log_likelihood, self.null_log_likelihood, n_obs,
                                     self.n_estimated, self.n_null_params, self.penalised)

    @property
    def penalised(self) -> bool:
        """Whether the estimate maximises a penalised likelihood (an L2 ``alpha``, or
        Firth's Jeffreys prior): AIC, BIC and the ML likelihood-ratio test do not apply."""
        return self.alpha > 0 or self.penalty_name != "l2"

    def raw_blocks(self) -> NDArray[np.float64]:
        """``[b_k, w_k]`` per free block, in raw units (``b_k = 0`` without an intercept)."""
        Theta = self.theta.reshape(self.n_blocks, -1)
        if not self.fit_intercept:
            Theta = np.column_stack([np.zeros(self.n_blocks), Theta])
        return Theta

    def attributes(self) -> dict[str, Any]:
        """The estimator's fitted attributes, in the order they are set."""
        Theta = self.theta.reshape(self.n_blocks, -1)
        if self.reference_class:
            Theta = np.vstack([np.zeros((1, Theta.shape[1])), Theta])
        off = int(self.fit_intercept)
        intercepts = Theta[:, 0] if off else np.zeros(Theta.shape[0])
        attrs: dict[str, Any] = {
            "solver_": self.solver, "coef_": np.ascontiguousarray(Theta[:, off:]),
            "intercept_": np.asarray(intercepts, dtype=np.float64).copy(),
            "n_iter_": self.n_iter, "converged_": self.converged, "history_": self.history,
            "covariance_": self.covariance, "identified_": self.identified}
        if self.separated is not None:
            attrs["separated_"] = self.separated
        attrs.update(self.statistics())
        return attrs
