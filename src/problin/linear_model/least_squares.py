"""Least squares with an optional q-norm regulariser (Bishop 2006, §3.1.4 eq. 3.29)."""
from numbers import Integral, Real
from typing import Self

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.model.sandwich import COV_TYPES
from .._core.moments.least_squares import Moments
from .._core.moments.lstsq import solve_factors
from .._core.solvers.penalized import lasso_gram, lq_gram
from .._core.types import MatrixLike
from .._source import data_source
from .._frames import encode_frame
from .._params import validate_params
from ..exceptions import ConvergenceWarning, warn_at_caller
from ..inference.hypothesis import Restrictions, TestResult, table_wald_test
from ..inference.summaries import linear_summary_text
from ..inference.text import SummaryText
from ._base import LinearRegressorBase, warn_least_squares
from ._inference import (
    OLSFit,
    coefficient_table,
    ols_fit,
    parameter_names,
    prediction_frame,
    robust_fit,
)

__all__ = ["LinearRegression"]


class LinearRegression(LinearRegressorBase):
    r"""Least squares, plain or with a q-norm penalty, from sufficient statistics.

    ``t = W^T phi(x) + b + eps, eps ~ N(0, beta^-1 I)``; the weights minimise::

        1/2 sum_n |t_n - W^T phi_n - b|^2 + alpha/2 sum_j |w_j|^q

    (the intercept ``b`` is never penalised). ``alpha = 0``: maximum likelihood,
    ``W = Phi^+ T``; ``q = 2``: ridge, ``(Phi^T Phi + alpha I) W = Phi^T T``.

    Both are solved from the triangular factor ``R`` of the (centred) data,
    read in one pass (see :mod:`problin._core.moments.tsqr`), by back substitution, an
    SVD of ``R`` (minimum norm, rank-deficient data; ridge, by the filter factors
    ``s / (s^2 + alpha)``, to full precision at any ``alpha``): as accurate as QR of the rows
    (``numpy.linalg.lstsq``), not the normal equations, which square the
    condition number. A ``NumericalWarning`` gives the estimated condition
    number when fewer than 6 significant digits can be guaranteed.

    Parameters
    ----------
    alpha : float, default=0.0
        Regularisation strength (``lambda`` of Bishop 2006, eq. 3.29). For ``q = 2`` it is the
        precision of a Gaussian prior: scikit-learn's ``Ridge(alpha=alpha)``;
        for ``q = 1`` it is scikit-learn's ``Lasso(alpha=alpha / (2 n))``.
    q : float, default=2.0
        Exponent of the regulariser, ``q > 0``. ``q = 2`` is solved in closed
        form, ``q = 1`` (lasso) by coordinate descent on the Gram matrix,
        ``q < 2`` otherwise by majorise-minimise (iteratively reweighted ridge),
        ``q > 2`` by damped Newton; see :mod:`problin._core.solvers.penalized`.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (the data are centred through the
        sufficient statistics; X itself is never copied).
    tol : float, default=1e-10
        Relative tolerance of the iterative solvers (``q != 2``).
    max_iter : int, default=10000
        Iteration limit of the iterative solvers.
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}, default="nonrobust"
        Covariance of the coefficients (``alpha = 0``, one output): classical
        ``sigma^2 (X~^T V X~)^-1``, or the sandwich of White (1980) (HC0), with
        ``n / (n - k)`` (HC1), leverage-scaled scores ``e_i / sqrt(1 - h_i)`` (HC2),
        ``e_i / (1 - h_i)`` (HC3, MacKinnon & White 1985), or cluster-robust
        (Cameron & Miller 2015) over ``fit(..., groups=...)`` with statsmodels'
        correction ``G / (G - 1) (n - 1) / (n - k)`` and t tests on ``G - 1`` degrees
        of freedom. Equal to statsmodels ``OLS``/``WLS(...).fit(cov_type=...,
        use_t=True)`` (its defaults otherwise). Robust types need a second pass over
        the rows: numpy/scipy input to ``fit`` only (not Dask, not ``partial_fit``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_outputs, n_features)
    intercept_ : float or ndarray of shape (n_outputs,)
    noise_precision_ : float
        Maximum-likelihood noise precision ``beta = N K / sum |t - y|^2``.
    rank_ : int
        Numerical rank of the (penalised) normal equations (``q = 2``).
    n_iter_ : int
        Iterations of the iterative solver (1 in closed form).
    moments_ : Moments
        Sufficient statistics (weight, means, centred scatter of ``[x, t]``);
        ``partial_fit`` merges new data into them.
    covariance_ : ndarray of shape (n_params, n_params)
        Covariance of ``[intercept, coef...]`` (``cov_type``). Set, with the statistics
        below, only for ``alpha = 0`` and one output (the maximum-likelihood fit whose
        sampling distribution they describe); ``sample_weight`` are then precision
        weights (statsmodels ``WLS``, R's ``lm``): ``n`` counts the rows of positive weight.
    log_likelihood_, null_log_likelihood_ : float
        Gaussian log-likelihood at the ML noise variance ``SSR / n`` (statsmodels
        ``llf``), and that of the intercept-only model (no intercept: of the zero model,
        or of the constant-only one where the columns span a constant).
    aic_, bic_ : float
        ``-2 llf + 2 k`` and ``-2 llf + k log n`` (``k`` parameters with the intercept).
    deviance_ : float
        The (weighted) residual sum of squares: statsmodels ``ssr``, equal to
        ``GLM(family=Gaussian()).deviance``.
    df_model_, df_resid_, n_obs_ : float
        ``k - 1`` (``k`` without intercept, unless the columns span a constant), ``n - k``
        and ``n``.
    r2_, adj_r2_, f_statistic_, f_pvalue_, condition_number_ : float
        statsmodels ``rsquared`` (uncentred without intercept, unless the columns span a
        constant: a constant column, or every level's indicator; then centred, as
        statsmodels' ``k_constant`` has it), ``rsquared_adj``,
        ``fvalue``/``f_pvalue`` (a robust Wald F test for robust ``cov_type``, of the
        coefficients other than the constant's, also for an implicit constant, where
        statsmodels gives NaN; where
        its covariance is singular, e.g. a cluster covariance of fewer clusters than
        slopes, its pseudo-inverse is taken of the correlation-scaled matrix, unlike
        statsmodels', so the statistic does not depend on the units of the columns:
        see :func:`~problin.inference.hypothesis.wald_test`) and ``condition_number``
        (of the weighted design ``[1, X]``).
    scale_ : float
        ``sigma^2 = SSR / (n - k)``.

    Examples
    --------
    >>> import numpy as np
    >>> from problin import LinearRegression
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> model = LinearRegression().fit(X, 1.0 + 2.0 * X[:, 0])
    >>> print(round(model.intercept_, 6), model.coef_.round(6))
    1.0 [2.]
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "q": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "cov_type": [StrOptions(set(COV_TYPES))],
    }
    _ols: OLSFit | None
    _row_counts: tuple[float, float] | None
    _pending: tuple[float, float] | None

    def __init__(self, alpha: float = 0.0, q: float = 2.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 10000,
                 cov_type: str = "nonrobust") -> None:
        self.alpha = alpha
        self.q = q
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.cov_type = cov_type

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
            groups: ArrayLike | None = None) -> Self:
        """Fit on all of ``(X, y)``; with ``cov_type="cluster"``, ``groups`` labels each
        row's cluster (one label per row).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Or a Dask array/DataFrame (``cov_type="nonrobust"`` only).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights (precision weights for the inference, as statsmodels WLS).
        groups : array-like of shape (n_samples,), optional
            Cluster labels, needed by (and only used with) ``cov_type="cluster"``.

        Returns
        -------
        self
        """
        validate_params(self)
        if self.cov_type == "cluster" and groups is None:
            raise ValueError('cov_type="cluster" needs the cluster of each row: '
                             "fit(X, y, groups=...)")
        if self.cov_type not in ("nonrobust", "cluster") or groups is None:
            groups = None
        if self.cov_type != "nonrobust":
            data_source(X).require_in_memory(
                f"cov_type={self.cov_type!r} needs a second pass over the rows, which is not "
                'implemented for Dask input; use cov_type="nonrobust" or fit in memory')
        n_rows = None if groups is None else np.shape(X)[0]
        if groups is not None and np.shape(groups) != (n_rows,):
            raise ValueError(f"groups must hold one label per row: got shape "
                             f"{np.shape(groups)} for {n_rows} rows")
        # (The groups are checked by the robust pass, after the fit: a refusal there,
        # or bad data, leaves the previous fit whole -- AllOrNothingFit, _state.py.)
        self._row_counts = self._pending = None
        stats = self._statistics(X, y, sample_weight, merge=False)
        self._pending = _row_counts(sample_weight, stats.weight)
        self._fit_statistics(stats)
        if self.cov_type != "nonrobust" and self._ols is not None:
            Xc, T, sw = self._check_data(X, y, sample_weight, reset=False,
                                         check_values=False)
            self._ols = robust_fit(self._ols, Xc, T[:, 0], sw, self.cov_type, groups,
                                   (stats.origin, stats.offset))
            self._set_inference()
        return self

    def partial_fit(self, X: MatrixLike, y: ArrayLike,
                    sample_weight: ArrayLike | None = None) -> Self:
        """Add a batch of rows (see :meth:`LinearRegressorBase.partial_fit`). The
        classical inference (``cov_type="nonrobust"``) follows the merged statistics;
        a robust ``cov_type`` needs every row again, so after ``partial_fit`` the
        coefficients are fitted but ``summary`` and the inference attributes are not
        available (``summary`` says so)."""
        validate_params(self)
        merge = hasattr(self, "moments_")
        stats = self._statistics(X, y, sample_weight, merge=merge)
        new = _row_counts(sample_weight, stats.weight - (self.moments_.weight if merge else 0.0))
        old = getattr(self, "_row_counts", None) if merge else None
        self._pending = new if old is None else (old[0] + new[0], old[1] + new[1])
        self._fit_statistics(stats)
        if self.cov_type != "nonrobust":  # the robust pass needs all the rows at once
            self._ols = None
            self._set_inference()
        return self

    def _from_statistics(self, stats: Moments) -> Self:
        F = self._factors(stats)
        alpha, q = float(self.alpha), float(self.q)
        d, k = F.xt.shape
        self.n_iter_, converged = 1, True
        if alpha == 0.0 or q == 2.0:  # from the R factor: as accurate as QR of the rows
            solution = solve_factors(F, alpha)
            W, self.rank_ = solution.coef, solution.rank
            warn_least_squares(solution, d, "Phi^T Phi is singular (rank {rank} < {d} "
                               "features: collinear or constant columns, or fewer rows than "
                               "features); returning the minimum-norm least-squares solution")
        else:  # the iterative solvers work on the Gram matrix R^T R (formed accurately)
            G, C = F.gram()
            solver = (lambda c: lasso_gram(G, c, alpha, tol=self.tol, max_iter=self.max_iter)) \
                if q == 1.0 else \
                (lambda c: lq_gram(G, c, alpha, q, tol=self.tol, max_iter=self.max_iter))
            W = np.empty_like(C)
            for j in range(k):
                W[:, j], n_iter, ok = solver(C[:, j])
                self.n_iter_, converged = max(self.n_iter_, n_iter), converged and ok
            self.rank_ = int(np.sum(np.diag(G) > 0))
        if not converged:
            warn_at_caller(f"the q={q:g} solver did not converge in {self.max_iter} "
                           "iterations; increase max_iter or tol", ConvergenceWarning)
        self._set_coef(stats, W)
        # A perfect fit leaves only rounding: keep beta finite (at most 1 / tiny).
        sse = max(F.residual_sum_of_squares(W), np.finfo(np.float64).eps
                  * F.total_sum_of_squares, np.finfo(np.float64).tiny * max(stats.weight * k, 1.0))
        self.noise_precision_ = stats.weight * k / sse
        self._ols = None
        counts = getattr(self, "_pending", None) or _row_counts(None, stats.weight)
        self._row_counts = counts
        if alpha == 0.0 and k == 1:
            self._ols = ols_fit(stats, F, W, self.fit_intercept, counts[0], counts[1],
                                int(self.rank_))
        self._set_inference()
        return self

    def _set_inference(self) -> None:
        """The fitted attributes of the inference record (removed when there is none)."""
        names = ("covariance_", "cov_type_", "log_likelihood_", "null_log_likelihood_",
                 "aic_", "bic_", "deviance_", "df_model_", "df_resid_", "n_obs_", "r2_",
                 "adj_r2_", "f_statistic_", "f_pvalue_", "condition_number_", "scale_")
        for name in names:
            self.__dict__.pop(name, None)
        if self._ols is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                self.__dict__.update(self._ols.attributes())

    def _inference(self) -> OLSFit:
        check_is_fitted(self)
        if getattr(self, "_ols", None) is None:
            why = (f"alpha={self.alpha:g} > 0: the penalised estimate is biased and its "
                   "sampling covariance is not the one a coefficient table assumes; fit "
                   "alpha=0 for least-squares inference, or use BayesianLinearRegression "
                   "for a posterior" if self.alpha > 0 else
                   "the model has several outputs; fit one LinearRegression per output"
                   if not self._single_output else
                   f"cov_type={self.cov_type!r} needs every row again, which partial_fit "
                   'does not keep; use fit, or cov_type="nonrobust"')
            raise ValueError(f"no inference for this fit: {why}")
        record = self._ols
        assert record is not None
        return record

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Coefficient table ``coef, std_err, t, p_value, ci_low, ci_high`` (rows
        ``intercept`` then the features): Student t on ``n - k`` degrees of freedom
        (``G - 1`` for ``cov_type="cluster"``), statsmodels' ``OLS``/``WLS`` summary
        (robust types as ``fit(cov_type=..., use_t=True)``). Only for ``alpha = 0``
        and one output (a ``ValueError`` otherwise: ridge or q-norm estimates are
        biased, and a Wald table of them would mislead).

        Parameters
        ----------
        level : float, default=0.95
            Confidence level of the intervals.

        Returns
        -------
        pandas.DataFrame
        """
        record = self._inference()
        return coefficient_table(record, parameter_names(self, self.n_features_in_), level)

    def wald_test(self, R: Restrictions, q: ArrayLike | None = None, *,
                  use_f: bool = True) -> TestResult:
        """Wald test of the linear restrictions ``R theta = q``, ``theta = [intercept,
        coef...]`` (the order of ``covariance_`` and ``summary()``).

        ``F = (R theta - q)^T (R V R^T)^-1 (R theta - q) / J`` on ``(J, df)`` degrees of
        freedom, ``V = covariance_`` (robust or not) and ``df`` the t tests' (``n - k``;
        ``G - 1`` for clusters) (Greene, *Econometric Analysis*, 8th ed., §5.3):
        statsmodels' ``OLS(...).fit(use_t=True).wald_test(R, scalar=True)``;
        ``use_f=False`` gives the chi-squared form ``J F ~ chi2(J)``.

        Parameters
        ----------
        R : str, sequence of str, or array-like of shape (J, n_params)
            A matrix, or restrictions over the names of ``summary()``'s index such as
            ``"x1 = x2, x3 = 0"`` (an unknown name is an error listing the parameters).
        q : float or array-like of shape (J,), optional
            Right-hand side for a matrix ``R`` (default 0).
        use_f : bool, default=True

        Returns
        -------
        TestResult
            ``statistic, df, p_value`` (with ``df_denom`` and ``distribution``).
        """
        table = self.summary()
        return table_wald_test(table, self.covariance_, R, q, use_f=use_f,
                               df_resid=table.attrs["df"])

    def summary_text(self, level: float = 0.95) -> SummaryText:
        """R², the F test, log-likelihood, AIC, BIC, ... above the ``summary()`` table,
        as statsmodels prints an OLS summary (78 columns; as a notebook cell's value the
        :class:`~problin.inference.text.SummaryText` renders as HTML, while the
        estimator's own ``_repr_html_`` stays scikit-learn's parameter diagram)."""
        return linear_summary_text(self, self.summary(level))

    def predict_interval(self, X: MatrixLike, level: float = 0.95) -> pd.DataFrame:
        """Intervals of the mean and of a new observation at the rows of ``X``:
        ``mean, std_err, ci_low, ci_high, obs_ci_low, obs_ci_high`` (statsmodels'
        ``get_prediction(X).summary_frame()``; the mean's variance ``x~^T Cov x~`` uses
        ``covariance_``, robust or not; a new observation's adds ``sigma^2``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        level : float, default=0.95

        Returns
        -------
        pandas.DataFrame
        """
        record = self._inference()
        X = validate_data(self, encode_frame(self, X, False), reset=False,
                          dtype=[np.float64, np.float32], accept_sparse="csr")
        return prediction_frame(record, X, level)


def _row_counts(sample_weight: ArrayLike | None, weight: float) -> tuple[float, float]:
    """``(n, sum log v)`` over the rows of positive weight (``weight`` rows when unweighted)."""
    if sample_weight is None:
        return float(weight), 0.0
    v = np.asarray(sample_weight, dtype=np.float64)
    if v.ndim == 0:  # one weight for every row: their number, a whole one (the summed
        # weight rounds: 50 rows of 0.1 sum to 5.000000000000001, 49.999999999999986 rows)
        rows = float(np.rint(weight / v)) if v > 0 else 0.0
        return rows, rows * float(np.log(v)) if v > 0 else 0.0
    v = v.reshape(-1)
    positive = v[v > 0]
    return float(positive.size), float(np.sum(np.log(positive)))
