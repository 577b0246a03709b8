"""The Brant (1990) test of proportional odds for a cumulative-logit model.

The proportional-odds model says that the K − 1 binary logits of ``y > k``
(k = the first K − 1 classes) share their slopes: ``logit P(y > k | x) = x^T beta − theta_k``.
Brant's test fits these binary logits separately, each with its own intercept and slopes
``b_k``, and asks whether the slopes differ, by a Wald test of ``b_1 − b_k = 0``
(k = 2, …, K − 1) whose covariance comes from the joint asymptotics of the K − 1 fits
(Brant 1990, eq. 2.3):

.. math::

    \\operatorname{Cov}(\\hat b_m, \\hat b_l) = A_m^{-1} B_{ml} A_l^{-1}, \\quad
    A_m = X^T W_{mm} X, \\quad B_{ml} = X^T W_{ml} X, \\quad
    (W_{ml})_{ii} = \\hat\\pi_{il} (1 - \\hat\\pi_{im}) \\; (l \\ge m),

with ``X`` carrying its column of ones and ``pi_im`` the m-th fit's probability of
``y_i > m``; the intercepts' rows and columns are then dropped. The omnibus statistic
has ``D (K − 2)`` degrees of freedom, and the test of one variable (its K − 1 slopes
equal) ``K − 2``; all are referred to the chi-squared distribution, as R's ``brant``
package and Stata's ``brant`` (Long & Freese) report them. The test never uses the
ordinal fit's estimates, only its classes, link and columns, so it equals theirs on the
same data (``tests/glm/test_ordinal_brant.py``: R's documented example, and a 50-digit
implementation).

Every product with the rows is a sum over row blocks (``map_reduce`` of the weighted
Gram ``[1, X]^T diag(w) [1, X]``); the inverses are Cholesky solves.
"""
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy import stats
from sklearn.utils.validation import check_array, check_is_fitted

from .._core.blocks import map_reduce
from .._core.model.family_ordinal import CumulativeLink
from .._core.model.objective_cumulative import CumulativeObjective
from .._core.linalg import add_intercept_gram, cholesky, symmetrize
from .._core.numerics import log_sigmoid
from .._frames import encode_frame
from ..inference.hypothesis import TestResult
from .inference import parameter_names
from ._ordinal_nominal import fit_cumulative, nominal_mask
from .logistic import LogisticRegression

__all__ = ["BrantResult", "brant_test", "NonParallelFit", "proportional_odds_lr_test"]


class OrdinalFit(Protocol):
    """What the tests read of a fitted cumulative-link model."""

    link: str
    fit_intercept: bool
    classes_: NDArray[Any]
    n_features_in_: int
    coef_: NDArray[np.float64]
    cutpoints_: NDArray[np.float64]


@dataclass(frozen=True)
class BrantResult:
    """Brant's test of proportional odds.

    Attributes
    ----------
    table : DataFrame
        Indexed ``"Omnibus"`` then by variable, columns ``chi2``, ``df``, ``p_value``.
    omnibus : TestResult
        The test of all slopes equal across the K − 1 binary logits.
    binary_coef : DataFrame
        The binary logits' estimates, one row per split ``"y>k"``, columns
        ``intercept`` and the variables.
    covariance : ndarray of shape ((K − 1) D, (K − 1) D)
        Brant's joint covariance of the binary logits' slopes, split-major.
    """

    table: pd.DataFrame
    omnibus: TestResult
    binary_coef: pd.DataFrame
    covariance: NDArray[np.float64]

    def __iter__(self) -> Iterator[float]:
        return iter(self.omnibus)

    def __str__(self) -> str:
        lines = ["Brant test of proportional odds (H0: the binary logits share their slopes)",
                 f"{'':<16}{'chi2':>10}{'df':>6}{'p_value':>10}"]
        for name, row in self.table.iterrows():
            lines.append(f"{str(name):<16}{row['chi2']:>10.4g}{int(row['df']):>6d}"
                         f"{row['p_value']:>10.4g}")
        return "\n".join(lines)


def _binary_probabilities(fit: LogisticRegression, X: Any) -> tuple[NDArray[np.float64], ...]:
    """``(pi, 1 - pi)`` of ``y > k``, each from its own log-sigmoid (no cancellation)."""
    eta = np.asarray(fit.decision_function(X), dtype=np.float64)
    return np.exp(log_sigmoid(eta)), np.exp(log_sigmoid(-eta))


def _gram(X: Any, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """``[1, X]^T diag(w) [1, X]`` summed over row blocks."""
    p = X.shape[1] + 1

    def block(Xb: Any, wb: NDArray[np.float64]) -> NDArray[np.float64]:
        G = np.zeros((p, p))
        add_intercept_gram(G, Xb, wb, True, np.float64, None)
        return G

    return symmetrize(np.asarray(map_reduce(block, X, w)))


def _wald(d: NDArray[np.float64], V: NDArray[np.float64]) -> float:
    """``d^T V^-1 d`` by Cholesky."""
    return float(d @ cholesky(V).solve(d))


def _split_labels(classes: NDArray[Any]) -> list[str]:
    return [f"y>{c}" for c in classes[:-1]]


def _ordinal_data(model: OrdinalFit, X: Any, y: Any, sample_weight: Any
                  ) -> tuple[Any, NDArray[np.intp], NDArray[np.float64]]:
    """``(X, class codes, weights)`` of the rows a fitted ordinal model is tested on,
    encoded as at fit; errors name what does not match."""
    check_is_fitted(model, "classes_")
    classes = np.asarray(model.classes_)
    K = classes.size
    if K < 3:
        raise ValueError(f"a test of proportional odds needs at least three classes; the "
                         f"model has {K}")
    Xn = check_array(encode_frame(model, X, reset=False), accept_sparse=("csr", "csc"),
                     dtype=np.float64)
    n, D = Xn.shape
    if D != model.n_features_in_:
        raise ValueError(f"X has {D} features; the model was fitted on {model.n_features_in_}")
    labels = np.asarray(y).ravel()
    if labels.shape[0] != n:
        raise ValueError(f"X has {n} rows and y {labels.shape[0]}")
    codes = np.full(n, -1)
    for k, c in enumerate(classes):
        codes[labels == c] = k
    if np.any(codes < 0):
        bad = np.flatnonzero(codes < 0)
        raise ValueError(f"y has labels outside the model's classes {list(classes)} at rows "
                         f"{bad[:10].tolist()}: {list(np.unique(labels[bad]))[:10]}")
    weight = (np.ones(n) if sample_weight is None
              else np.asarray(sample_weight, dtype=np.float64).ravel())
    return Xn, codes, weight


def brant_test(model: OrdinalFit, X: Any, y: Any, sample_weight: Any = None) -> BrantResult:
    """Brant's (1990) Wald test of the proportional-odds assumption.

    Parameters
    ----------
    model : OrdinalRegression
        A fitted cumulative-link model with ``link="logit"``, at least three classes.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The rows it was fitted on (encoded as at fit).
    y : array-like of shape (n_samples,)
        Their labels, among ``model.classes_``.
    sample_weight : array-like of shape (n_samples,), optional
        Frequency weights, as at fit.

    Returns
    -------
    BrantResult
        The omnibus and per-variable chi-squared tests; unpacks as the omnibus
        ``chi2, df, p_value``.

    Raises
    ------
    ValueError
        A link other than the logit, fewer than three classes, labels outside
        ``classes_``, or rows that do not match.
    """
    if model.link != "logit":
        raise ValueError(f"the Brant test is a test of proportional odds, for link='logit'; "
                         f"this model has link={model.link!r}")
    Xn, codes, weight = _ordinal_data(model, X, y, sample_weight)
    classes = np.asarray(model.classes_)
    K, D = classes.size, Xn.shape[1]
    M = K - 1
    fits = [LogisticRegression(alpha=0.0, fit_intercept=True).fit(
        Xn, (codes > m).astype(np.float64), sample_weight=weight) for m in range(M)]
    probs = [_binary_probabilities(fit, Xn) for fit in fits]
    # the bread A_m^-1 of each split, then the cross blocks A_m^-1 B_ml A_l^-1
    factors = [cholesky(_gram(Xn, weight * p * q)) for p, q in probs]
    V = np.empty((M * D, M * D))
    for m in range(M):
        for l in range(m, M):
            B = _gram(Xn, weight * probs[l][0] * probs[m][1])
            block = factors[m].solve(factors[l].solve(B.T).T)[1:, 1:]
            V[m * D:(m + 1) * D, l * D:(l + 1) * D] = block
            V[l * D:(l + 1) * D, m * D:(m + 1) * D] = block.T
    slopes = np.concatenate([np.ravel(fit.coef_) for fit in fits])

    def test(variables: list[int]) -> TestResult:
        rows = [(m, a) for m in range(1, M) for a in variables]
        C = np.zeros((len(rows), M * D))
        for r, (m, a) in enumerate(rows):
            C[r, a], C[r, m * D + a] = 1.0, -1.0
        chi2 = _wald(C @ slopes, C @ V @ C.T)
        return TestResult(chi2, float(len(rows)), float(stats.chi2.sf(chi2, len(rows))))

    names = [name for name in parameter_names(model, D) if name != "intercept"]
    omnibus = test(list(range(D)))
    results = [omnibus] + [test([a]) for a in range(D)]
    table = pd.DataFrame([[r.statistic, r.df, r.p_value] for r in results],
                         index=pd.Index(["Omnibus"] + names, name="test"),
                         columns=["chi2", "df", "p_value"])
    binary = pd.DataFrame([np.concatenate([np.ravel(f.intercept_), np.ravel(f.coef_)])
                           for f in fits], index=pd.Index(_split_labels(classes), name="split"),
                          columns=["intercept"] + names)
    return BrantResult(table, omnibus, binary, V)


@dataclass(frozen=True)
class NonParallelFit:
    """The likelihood-ratio test of proportional odds against the unconstrained
    cumulative-link model (a slope vector per cut).

    Attributes
    ----------
    test : TestResult
        ``2 (l_1 - l_0)`` on ``D (K - 2)`` degrees of freedom (chi-squared).
    coef : DataFrame
        The alternative's slopes ``beta_k``, one row per cut ``"a|b"``.
    cutpoints : ndarray of shape (K - 1,)
    log_likelihood, null_log_likelihood : float
        Of the alternative and of the proportional-odds model, on the same rows.
    crossing_rows : int
        Rows whose fitted cumulative probabilities decrease across a cut (some class has
        a negative probability there: the alternative is then not a proper model at
        those rows, and the statistic is to be read with care).
    converged : bool
    """

    test: TestResult
    coef: pd.DataFrame
    cutpoints: NDArray[np.float64]
    log_likelihood: float
    null_log_likelihood: float
    crossing_rows: int
    converged: bool

    def __iter__(self) -> Iterator[float]:
        return iter(self.test)


def proportional_odds_lr_test(model: OrdinalFit, X: Any, y: Any, sample_weight: Any = None,
                              variables: Sequence[int | str] | None = None) -> NonParallelFit:
    """The likelihood-ratio test of proportional (parallel) slopes, any link.

    The alternative, ``P(y <= k | x) = F(theta_k - x^T beta_k)`` with a slope vector per
    cut for the ``variables`` tested (all by default: VGAM's
    ``cumulative(parallel = FALSE)``, Stata's unconstrained ``gologit2``; some: the partial
    proportional-odds model of Peterson & Harrell 1990, R's ``clm(nominal = ~ x)``), is
    fitted by the Newton engine from the model's own estimates
    (:class:`~problin._core.model.objective_cumulative.CumulativeObjective`); both
    log-likelihoods are evaluated on the rows given, so the statistic is
    ``2 (l_1 - l_0)`` on ``V (K - 2)`` degrees of freedom, ``V`` the variables tested.
    Dense rows in memory.

    Parameters
    ----------
    model : OrdinalRegression
        A fitted (unpenalised) cumulative-link model, at least three classes.
    X, y, sample_weight :
        The rows it was fitted on, as for :func:`brant_test`.
    variables : list of column names or indices, optional
        The columns whose slopes may differ between the cuts (default: all).

    Returns
    -------
    NonParallelFit
        Unpacks as ``chi2, df, p_value``.
    """
    if np.ndim(model.coef_) != 1:
        raise ValueError("the model has nominal= columns: test proportional odds on the "
                         "proportional-odds fit (OrdinalRegression without nominal=)")
    Xn, codes, weight = _ordinal_data(model, X, y, sample_weight)
    if sp.issparse(Xn):
        Xn = Xn.toarray()
    classes = np.asarray(model.classes_)
    M, D = classes.size - 1, Xn.shape[1]
    names = [name for name in parameter_names(model, D) if name != "intercept"]
    nominal = np.ones(D, dtype=bool) if variables is None else \
        nominal_mask(names, variables, "variables")
    objective = CumulativeObjective(Xn, CumulativeLink(model.link, classes.size), codes,
                                    weight, nominal)
    # the null model's estimates: a_k = theta_k, every cut's w = -beta
    result = fit_cumulative(objective, model.cutpoints_, model.coef_)
    start = objective.join(np.asarray(model.cutpoints_, dtype=np.float64),
                           np.tile(-np.asarray(model.coef_, dtype=np.float64), (M, 1)))
    null = -objective.value(start, objective.linear_predictor(start))
    a, W = objective.split(result.theta)
    alternative = -result.value
    statistic = max(0.0, 2.0 * (alternative - null))
    df = int(np.sum(nominal)) * (M - 1)
    cuts = [f"{lo}|{hi}" for lo, hi in zip(classes[:-1], classes[1:])]
    return NonParallelFit(
        TestResult(statistic, float(df), float(stats.chi2.sf(statistic, df))),
        pd.DataFrame(-W, index=pd.Index(cuts, name="cut"), columns=names),
        a.copy(), alternative, null, objective.crossing_rows(result.theta),
        bool(result.converged))
