"""The unconstrained cumulative-link model: a slope vector per cut (non-proportional odds).

    P(y <= k | x) = F(u_k),   u_k = a_k + x^T w_k,   k = 0..K-2,

the alternative of the likelihood-ratio test of proportional odds (``theta_k = a_k``,
``beta_k = -w_k``; VGAM's ``cumulative(parallel = FALSE)``, Stata's ``gologit2``
without constraints). Each cut has its own block ``[a_k, w_k]`` of the design
``[1, X]``, so the parameters are class blocks as the softmax's, and a row of class
``t`` reads two of them: ``p = F(u_t) - F(u_{t-1})`` (``u_{-1} = -inf``,
``u_{K-1} = +inf``). With ``r_u = f(u)/p``, ``r_l = f(l)/p`` and ``psi = f'/f`` its loss
``-log p`` has the derivatives of the proportional-odds family
(:mod:`.family_ordinal`): ``-r_u``, ``r_l``; ``r_u^2 - r_u psi(u)``,
``r_l^2 + r_l psi(l)``, ``-r_u r_l``; the Hessian is block tridiagonal over the cuts.
The log-likelihood is concave in ``u`` for a log-concave ``F`` (Pratt 1981), but its
domain is where every row's two cuts stay ordered: a step out of it has an infinite
loss and the engine's line search backtracks. At the optimum the fitted cumulative
curves may still cross for other classes of a row (the known defect of this model,
McCullagh 1980, §3); :meth:`CumulativeObjective.crossing_rows` counts them.
"""
import numpy as np

from .contract import ObjectiveBase
from .design import Design
from .family_ordinal import CumulativeLink, log_interval
from .penalty import FlatPenalty, Penalty

__all__ = ["CumulativeObjective"]


class CumulativeObjective(ObjectiveBase[np.ndarray]):
    """Negative log-likelihood of the cumulative-link model with a slope vector per cut;
    ``theta`` is the ``K - 1`` blocks ``[a_k, w_k]`` of the dense design ``[1, X]``, in
    raw units (in memory: a test's alternative, fitted from the proportional-odds fit)."""

    def __init__(self, X: np.ndarray, family: CumulativeLink, t: np.ndarray,
                 sample_weight: np.ndarray | None = None) -> None:
        self.X = np.asarray(X, dtype=np.float64)
        self.Z = np.column_stack((np.ones(self.X.shape[0]), self.X))
        self.design = Design(self.X, True)
        self.family = family
        self.t = np.asarray(t, dtype=np.intp)
        self.sample_weight = sample_weight
        self.n_blocks = family.n_classes - 1
        self.n_params = self.n_blocks * self.Z.shape[1]
        self.penalty: Penalty = FlatPenalty()
        self.exact_hessian = True

    # ---------------------------------------------------------------- rows
    def linear_predictor(self, theta: np.ndarray) -> np.ndarray:
        """``U`` (n x (K-1)): the cuts' linear predictors."""
        return self.Z @ np.asarray(theta, dtype=np.float64).reshape(self.n_blocks, -1).T

    def _bounds(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's upper and lower bound ``u_t``, ``u_{t-1}`` (``+-inf`` at the ends)."""
        n = U.shape[0]
        full = np.hstack((np.full((n, 1), -np.inf), U, np.full((n, 1), np.inf)))
        rows = np.arange(n)
        return full[rows, self.t + 1], full[rows, self.t]

    def _log_p(self, U: np.ndarray) -> np.ndarray:
        upper, lower = self._bounds(U)
        with np.errstate(invalid="ignore"):
            log_p = log_interval(self.family.dist, upper, lower)
        return np.where(upper > lower, log_p, -np.inf)  # out of the domain: loss +inf

    def _weighted(self, v: np.ndarray) -> np.ndarray:
        return v if self.sample_weight is None else self.sample_weight * v

    def value(self, theta: np.ndarray, eta: np.ndarray) -> float:
        with np.errstate(invalid="ignore"):
            return -float(np.sum(self._weighted(self._log_p(eta))))

    def _derivatives(self, eta: np.ndarray, curvature: bool
                     ) -> tuple[float, np.ndarray, np.ndarray | None]:
        """``(f, gradient, Hessian or None)``."""
        dist, (n, M) = self.family.dist, eta.shape
        upper, lower = self._bounds(eta)
        log_p = self._log_p(eta)
        f = -float(np.sum(self._weighted(log_p)))
        with np.errstate(over="ignore", invalid="ignore"):
            r_u = np.where(np.isfinite(upper), np.exp(dist.log_pdf(upper) - log_p), 0.0)
            r_l = np.where(np.isfinite(lower), np.exp(dist.log_pdf(lower) - log_p), 0.0)
        rows, up, low = np.arange(n), self.t, self.t - 1
        G = np.zeros((n, M + 1))  # column M: the open top end (dropped)
        G[rows, up] = self._weighted(-r_u)
        G[rows[low >= 0], low[low >= 0]] += self._weighted(r_l)[low >= 0]
        grad = (self.Z.T @ G[:, :M]).T.ravel()
        if not curvature:
            return f, grad, None
        with np.errstate(invalid="ignore"):
            psi_u = np.where(r_u > 0, dist.score(np.where(r_u > 0, upper, 0.0)), 0.0)
            psi_l = np.where(r_l > 0, dist.score(np.where(r_l > 0, lower, 0.0)), 0.0)
        Luu = self._weighted(r_u * r_u - r_u * psi_u)
        Lll = self._weighted(r_l * r_l + r_l * psi_l)
        Lul = self._weighted(-r_u * r_l)
        p = self.Z.shape[1]
        H = np.zeros((M * p, M * p))
        for k in range(M):
            diag = np.where(up == k, Luu, 0.0) + np.where(low == k, Lll, 0.0)
            H[k * p:(k + 1) * p, k * p:(k + 1) * p] = self.Z.T @ (diag[:, None] * self.Z)
            if k:  # rows of class k read cut k (upper) and cut k - 1 (lower)
                cross = self.Z.T @ (np.where(up == k, Lul, 0.0)[:, None] * self.Z)
                H[k * p:(k + 1) * p, (k - 1) * p:k * p] = cross
                H[(k - 1) * p:k * p, k * p:(k + 1) * p] = cross.T
        return f, grad, H

    def value_grad(self, theta: np.ndarray, eta: np.ndarray) -> tuple[float, np.ndarray]:
        f, g, _ = self._derivatives(eta, False)
        return f, g

    def value_grad_hess(self, theta: np.ndarray, eta: np.ndarray, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]:
        f, g, H = self._derivatives(eta, True)
        assert H is not None
        return f, g, H

    def observed_hessian(self, theta: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return self.value_grad_hess(theta, eta)[2]

    def subsample(self, rows: np.ndarray) -> "CumulativeObjective":
        w = None if self.sample_weight is None else self.sample_weight[rows]
        return CumulativeObjective(self.X[rows], self.family, self.t[rows], w)

    def data_range_basis(self) -> np.ndarray:
        """Every direction (the test's design has full rank where the null fit had)."""
        return np.eye(self.n_params)

    def crossing_rows(self, theta: np.ndarray) -> int:
        """Rows at which the fitted cumulative probabilities decrease from one cut to the
        next (a negative probability of some class)."""
        U = self.linear_predictor(theta)
        return int(np.count_nonzero(np.any(np.diff(U, axis=1) < 0, axis=1)))
