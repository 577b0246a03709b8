"""Wald tests of linear restrictions and likelihood-ratio tests of nested fits.

Both return a :class:`TestResult`; they equal statsmodels' ``wald_test`` (with the same
``use_f``) and the likelihood-ratio test from its ``llf`` (``compare_lr_test``).
"""
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

import numpy as np
import pandas as pd
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from .constraints import parse_constraints

__all__ = ["LikelihoodModel", "NestedFit", "TestResult", "likelihood_fit", "lr_test",
           "restriction_matrix", "table_names", "table_wald_test", "wald_test"]

Restrictions = str | Sequence[str] | ArrayLike


@dataclass(frozen=True)
class TestResult:
    """The statistic, degrees of freedom and p-value of a test.

    Unpacks as the triple ``statistic, df, p_value``. For an F test
    (``distribution == "F"``) ``df`` is the numerator's degrees of freedom (the number
    of restrictions, or the rank of their covariance where it is singular) and ``df_denom`` the denominator's (the residual degrees of
    freedom); for a chi-squared test ``df_denom`` is None.

    Attributes
    ----------
    statistic : float
    df : float
    p_value : float
    df_denom : float or None
    distribution : {"chi2", "F"}
    """

    __test__ = False  # not a pytest test class, whatever its name

    statistic: float
    df: float
    p_value: float
    df_denom: float | None = None
    distribution: str = "chi2"

    def __iter__(self) -> Iterator[float]:
        return iter((self.statistic, self.df, self.p_value))

    def __str__(self) -> str:
        if self.distribution == "F":
            return (f"F({self.df:g}, {self.df_denom:g}) = {self.statistic:.6g}, "
                    f"p = {self.p_value:.4g}")
        return f"chi2({self.df:g}) = {self.statistic:.6g}, p = {self.p_value:.4g}"


def table_names(index: pd.Index) -> list[str]:
    """The parameter names of a summary table's index: ``"class:parameter"`` for the
    ``(class, parameter)`` index of a softmax model, else the names themselves."""
    if isinstance(index, pd.MultiIndex):
        return [":".join(str(level) for level in entry) for entry in index]
    return [str(name) for name in index]


def restriction_matrix(R: Restrictions, q: ArrayLike | None, names: Sequence[str]
                       ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(R, q)`` from a restriction string (see :func:`~problin.inference.constraints.
    parse_constraints`; ``q`` must then be None) or an array of width ``len(names)``
    (one restriction per row; ``q`` a scalar, or one value per row, default 0),
    checked: right width and length, finite, rows linearly independent."""
    p = len(names)
    if isinstance(R, str) or (isinstance(R, Sequence) and len(R) > 0
                              and all(isinstance(r, str) for r in R)):
        if q is not None:
            raise ValueError("q is part of a restriction string ('x1 = 2'); pass q=None")
        R_arr, q_arr = parse_constraints(R, names)  # type: ignore[arg-type]
    else:
        R_arr = np.atleast_2d(np.asarray(R, dtype=np.float64))
        if R_arr.ndim != 2 or R_arr.shape[1] != p or R_arr.shape[0] == 0:
            raise ValueError(f"R must have {p} columns, one per parameter ({', '.join(names)}), "
                             f"and at least one row; got shape {np.shape(R)}")
        J = R_arr.shape[0]
        q_arr = np.zeros(J) if q is None else np.asarray(q, dtype=np.float64).reshape(-1)
        if q_arr.size == 1:
            q_arr = np.full(J, q_arr[0])
        if q_arr.size != J:
            raise ValueError(f"q must have one value per row of R ({J}); got {q_arr.size}")
    if not (np.all(np.isfinite(R_arr)) and np.all(np.isfinite(q_arr))):
        raise ValueError("R and q must be finite")
    rank = np.linalg.matrix_rank(R_arr)
    if rank < R_arr.shape[0]:
        raise ValueError(f"the {R_arr.shape[0]} restrictions are linearly dependent (R has rank "
                         f"{rank}): drop the redundant ones, so that each row of R is a new "
                         "restriction")
    return R_arr, q_arr


def wald_test(theta: ArrayLike, cov: ArrayLike, names: Sequence[str], R: Restrictions,
              q: ArrayLike | None = None, *, use_f: bool = False,
              df_resid: float | None = None) -> TestResult:
    r"""Wald test of the linear restrictions ``R theta = q``.

    .. math::

        W = (R\hat\theta - q)^\top (R \hat V R^\top)^{-1} (R\hat\theta - q)
        \sim \chi^2_J, \qquad F = W / J \sim F_{J,\, n - p}

    (Wald 1943; Greene, *Econometric Analysis*, 8th ed., §5.3–5.4 and §14.9.1), with
    ``V`` the estimated covariance of ``theta`` (whichever ``cov_type`` produced it) and
    ``J`` the number of restrictions. Where ``R V R^T`` is singular (a cluster covariance
    has rank at most ``G - 1``; restrictions that repeat one another) the quadratic form
    takes its pseudo-inverse and ``J`` its rank, as statsmodels does, but of the
    correlation-scaled matrix, so that the rank does not depend on the units of the
    parameters (statsmodels' pseudo-inverse of the raw matrix does: there the two
    differ); restrictions of zero estimated variance are not tested
    (:func:`wald_quadratic_form`).

    Parameters
    ----------
    theta : array-like of shape (p,)
    cov : array-like of shape (p, p)
    names : sequence of str
        Parameter names, in the order of ``theta``, for restriction strings.
    R : str, sequence of str, or array-like of shape (J, p) or (p,)
        The restrictions (see :func:`restriction_matrix`).
    q : array-like of shape (J,) or float, optional
        Right-hand side for an array ``R``; default 0.
    use_f : bool, default=False
        The F form (exact for the normal linear model), needing ``df_resid``.
    df_resid : float, optional
        Denominator degrees of freedom of the F form.

    Returns
    -------
    TestResult
    """
    theta = np.asarray(theta, dtype=np.float64).reshape(-1)
    V = np.asarray(cov, dtype=np.float64)
    R_arr, q_arr = restriction_matrix(R, q, names)
    involved = np.any(R_arr != 0.0, axis=0)
    if not (np.all(np.isfinite(theta[involved]))
            and np.all(np.isfinite(V[np.ix_(involved, involved)]))):
        bad = [n for n, ok in zip(names, np.isfinite(np.diag(V)) & np.isfinite(theta),
                                  strict=True) if not ok]
        raise ValueError("the restrictions involve parameters that are not identified "
                         f"({', '.join(bad)}), whose covariance is undefined")
    R_used = R_arr[:, involved]  # parameters outside the restrictions may be NaN
    d = R_used @ theta[involved] - q_arr
    RVR = R_used @ V[np.ix_(involved, involved)] @ R_used.T
    W, J = wald_quadratic_form(d, RVR)
    if J == 0:
        raise ValueError("R V R^T is zero: the restricted combinations have zero "
                         "estimated variance (parameters held fixed, or a perfect fit)")
    if use_f:
        if df_resid is None or not df_resid > 0:
            raise ValueError(f"the F form needs positive residual degrees of freedom, got "
                             f"{df_resid!r}")
        F = W / J
        return TestResult(F, float(J), float(stats.f.sf(F, J, df_resid)), float(df_resid), "F")
    return TestResult(W, float(J), float(stats.chi2.sf(W, J)))


def wald_quadratic_form(d: NDArray[np.float64], C: NDArray[np.float64]) -> tuple[float, int]:
    """``(d^T C^+ d, rank C)`` for a covariance ``C`` of ``d``, on the correlation-scaled
    matrix ``C / (s s^T)``, ``s = sqrt(diag C)``: its pseudo-inverse and rank do not depend
    on the units of the entries (statsmodels' ``pinv`` of the raw matrix does: a rank it
    drops can be a unit's choice). Entries of zero variance are left out of both."""
    scale = np.sqrt(np.maximum(np.diag(C), 0.0))
    kept = np.flatnonzero(scale > 0)
    if not kept.size:
        return float("nan"), 0
    z = d[kept] / scale[kept]
    corr = C[np.ix_(kept, kept)] / np.outer(scale[kept], scale[kept])
    P, rank = scipy.linalg.pinvh(0.5 * (corr + corr.T), return_rank=True)
    return float(z @ P @ z), int(rank)


def table_wald_test(table: pd.DataFrame, cov: ArrayLike, R: Restrictions,
                    q: ArrayLike | None = None, *, use_f: bool = False,
                    df_resid: float | None = None) -> TestResult:
    """:func:`wald_test` of the parameters of a ``summary()`` table (its first column,
    ``coef``, in the order of ``cov``), named by :func:`table_names` of its index."""
    return wald_test(table.iloc[:, 0].to_numpy(dtype=np.float64), cov,
                     table_names(table.index), R, q, use_f=use_f, df_resid=df_resid)


class NestedFit(Protocol):
    """What :func:`lr_test` reads of a fitted model: its likelihood statistics, its
    parameters (a penalty ``alpha`` is refused), the reference distribution of its
    tests and the fit whose likelihood it compares (:class:`LikelihoodModel` gives the
    defaults; a :class:`~problin.Formula` answers for the estimator it fitted)."""

    n_obs_: float
    df_resid_: float
    log_likelihood_: float | None
    deviance_: float
    scale_: float

    def get_params(self, deep: bool = True) -> dict[str, Any]: ...

    def lr_reference(self) -> Literal["chi2", "F"]: ...

    def likelihood_fit(self) -> "NestedFit": ...


class LikelihoodModel:
    """The base of the estimators whose nested fits :func:`lr_test` compares: the
    defaults of :class:`NestedFit`."""

    def likelihood_fit(self) -> NestedFit:
        """The fitted model whose likelihood :func:`lr_test` compares: the estimator
        itself (a wrapper such as :class:`~problin.Formula` gives the estimator it
        fitted, so that the class and penalty checks see that estimator)."""
        return cast(NestedFit, self)

    def lr_reference(self) -> Literal["chi2", "F"]:
        """The reference distribution of likelihood-ratio tests of this fit against a
        nested one: chi² on ``2 (l_full - l_restricted)`` (Wilks 1938). The GLM
        regressors whose dispersion is estimated say F (on the deviances)."""
        return "chi2"


def likelihood_fit(model: NestedFit) -> NestedFit:
    """``model.likelihood_fit()``: the fitted model whose likelihood :func:`lr_test`
    compares, or a ValueError for a model without one (a discriminant)."""
    try:
        return model.likelihood_fit()
    except AttributeError as exc:
        if exc.name != "likelihood_fit":
            raise
        raise ValueError(f"{type(model).__name__} has no likelihood that lr_test compares "
                         "(GLMs and linear regression have one)") from None


def _penalty(model: NestedFit) -> float:
    return float(model.get_params().get("alpha", 0.0) or 0.0)


def _fitted(model: NestedFit, value: float | None, name: str) -> float:
    """A likelihood statistic of ``model``, or a clear error for a fit without one."""
    if value is None:
        raise ValueError(f"{type(model).__name__} has no {name} for this fit (e.g. several "
                         "outputs): lr_test needs one maximum-likelihood fit of each model")
    return float(value)


def _f_test(restricted: NestedFit, full: NestedFit, df: float) -> TestResult:
    """The F test of nested GLMs whose dispersion is estimated: ``F = (D_r - D_f) /
    (df phi_f)`` on ``(df, df_resid_f)`` degrees of freedom, ``phi_f`` the full model's
    dispersion (McCullagh & Nelder 1989, §8.4.3; R's ``anova(..., test="F")``)."""
    if not df > 0:
        raise ValueError(f"the restricted model must have fewer parameters than the full "
                         f"model (df_resid_ {restricted.df_resid_:g} vs {full.df_resid_:g}): "
                         "pass lr_test(restricted, full)")
    change = float(restricted.deviance_) - float(full.deviance_)
    if change < -1e-8 * max(1.0, abs(full.deviance_)):
        raise ValueError(f"the restricted model fits better than the full one (deviance "
                         f"{restricted.deviance_:.6g} < {full.deviance_:.6g}): the models are "
                         "not nested")
    df_resid = float(full.df_resid_)
    F = max(change, 0.0) / (df * float(full.scale_))
    return TestResult(F, df, float(stats.f.sf(F, df, df_resid)), df_resid, "F")


def lr_test(restricted: NestedFit, full: NestedFit) -> TestResult:
    r"""Likelihood-ratio test of a restricted fit against the full fit it is nested in.

    .. math::

        LR = 2\,(\ell_\text{full} - \ell_\text{restricted}) \sim \chi^2_{df},
        \qquad df = df^\text{resid}_\text{restricted} - df^\text{resid}_\text{full}

    (Greene, *Econometric Analysis*, 8th ed., §14.9.1; Wilks 1938), as statsmodels'
    ``compare_lr_test`` computes it from ``llf`` and ``df_resid``. For GLM regressors
    whose dispersion is estimated (Gaussian, Gamma, inverse Gaussian, Tweedie, or any
    with ``scale="X2"``) the test is F: ``F = (D_r - D_f) / (df phi_f)`` on
    ``(df, df_resid_f)`` degrees of freedom, the deviances' difference scaled by the
    full model's dispersion (R's ``anova(restricted, full, test="F")``).

    Parameters
    ----------
    restricted, full : fitted estimators of the same class
        Maximum-likelihood fits (``alpha = 0``) with ``log_likelihood_``,
        ``df_resid_`` and ``n_obs_``; ``restricted`` has fewer parameters.

    Returns
    -------
    TestResult
        ``statistic, df, p_value`` (chi-squared, or F with ``df_denom``).

    Raises
    ------
    ValueError
        If the fits are of different classes, on different numbers of observations
        (or, for classifiers, classes), penalised, not fewer parameters in
        ``restricted``, or if ``restricted`` fits better than ``full``.

    Notes
    -----
    What can be checked is checked. What cannot: that both models were fitted to the
    same rows, targets and sample weights, and that the restricted model's columns
    span a subspace of the full model's (e.g. a subset of its features); the test is
    meaningless otherwise. Robust covariances (``cov_type``) do not change the
    statistic, but the chi-squared reference assumes the model is correctly specified.
    """
    for model in (restricted, full):
        check_is_fitted(model)
    restricted, full = likelihood_fit(restricted), likelihood_fit(full)
    if type(restricted) is not type(full):
        raise ValueError("lr_test compares fits of one model class, got "
                         f"{type(restricted).__name__} and {type(full).__name__}")
    if _penalty(restricted) > 0 or _penalty(full) > 0:
        raise ValueError("lr_test needs maximum-likelihood fits (alpha=0): a penalised "
                         "log-likelihood does not give a chi-squared statistic")
    if any(m.get_params().get("penalty") in ("firth", "flic", "flac") for m in (restricted, full)):
        raise ValueError("lr_test compares maximum-likelihood fits; for Firth's penalised "
                         "likelihood ratio (logistf's anova) refit the full model under the "
                         "restriction: full.restricted_lr_test('x3 = 0, x4 = 0', X=X, y=y)")
    try:
        return _lr_test(restricted, full)
    except AttributeError as exc:  # (a fit without the statistics: several outputs)
        model = full if exc.obj is full else restricted
        raise ValueError(f"{type(model).__name__} has no {exc.name} for this fit (e.g. "
                         "several outputs): lr_test needs one maximum-likelihood fit of each "
                         "model") from None


def _lr_test(restricted: NestedFit, full: NestedFit) -> TestResult:
    n_r, n_f = float(restricted.n_obs_), float(full.n_obs_)
    if n_r != n_f:
        raise ValueError(f"the fits are on different numbers of observations "
                         f"({n_r:g} and {n_f:g}): they are not nested")
    if is_classifier(full):  # (fits of the same outcomes: a classifier's classes_)
        labels_r, labels_f = cast(Any, restricted).classes_, cast(Any, full).classes_
        if not np.array_equal(np.asarray(labels_r), np.asarray(labels_f)):
            raise ValueError("the fits have different classes_: they are not nested")
    df = float(restricted.df_resid_) - float(full.df_resid_)
    if full.lr_reference() == "F":  # (an estimated dispersion)
        return _f_test(restricted, full, df)
    if not df > 0:
        raise ValueError(f"the restricted model must have fewer parameters than the full "
                         f"model (df_resid_ {restricted.df_resid_:g} vs {full.df_resid_:g}): "
                         "pass lr_test(restricted, full)")
    ll_r = _fitted(restricted, restricted.log_likelihood_, "log_likelihood_")
    ll_f = _fitted(full, full.log_likelihood_, "log_likelihood_")
    statistic = 2.0 * (ll_f - ll_r)
    if statistic < -1e-8 * max(1.0, abs(ll_f)):
        raise ValueError(f"the restricted model fits better than the full one (log-likelihood "
                         f"{ll_r:.6g} > {ll_f:.6g}): the models are not nested")
    statistic = max(statistic, 0.0)
    return TestResult(statistic, df, float(stats.chi2.sf(statistic, df)))
