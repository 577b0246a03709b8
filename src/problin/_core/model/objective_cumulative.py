"""The cumulative-link model with a slope vector per cut for some or all columns.

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
    """Negative log-likelihood of the cumulative-link model whose ``nominal`` columns have a
    slope vector per cut (all columns: the unconstrained model; none: proportional odds;
    some: the partial proportional-odds model of Peterson & Harrell 1990, R's
    ``ordinal::clm(nominal = ~ x)``). ``theta`` is ``[a_0..a_{K-2}, w_shared,
    w_nominal(cut 0), ..., w_nominal(cut K-2)]`` in raw units, ``u_k = a_k + x^T w``
    (``theta_k = a_k``, ``beta = -w``). Dense rows in memory: a test's alternative."""

    def __init__(self, X: np.ndarray, family: CumulativeLink, t: np.ndarray,
                 sample_weight: np.ndarray | None = None,
                 nominal: np.ndarray | None = None) -> None:
        self.X = np.asarray(X, dtype=np.float64)
        self.design = Design(self.X, True)
        self.family = family
        self.t = np.asarray(t, dtype=np.intp)
        self.sample_weight = sample_weight
        D = self.X.shape[1]
        self.nominal = np.ones(D, dtype=bool) if nominal is None else np.asarray(nominal, bool)
        self.M = family.n_classes - 1
        n_shared, n_nominal = int(np.sum(~self.nominal)), int(np.sum(self.nominal))
        self.n_params = self.M + n_shared + self.M * n_nominal
        self.penalty: Penalty = FlatPenalty()
        self.exact_hessian = True
        self._Z: np.ndarray | None = None

    # ---------------------------------------------------------------- layout
    def split(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(a, W)``: the K - 1 intercepts and the slopes of each cut (K-1 x D)."""
        theta = np.asarray(theta, dtype=np.float64)
        M, shared = self.M, int(np.sum(~self.nominal))
        W = np.empty((M, self.X.shape[1]))
        W[:, ~self.nominal] = theta[M:M + shared]
        W[:, self.nominal] = theta[M + shared:].reshape(M, -1)
        return theta[:M], W

    def join(self, a: np.ndarray, W: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`split` (the shared slopes read from the first cut)."""
        return np.concatenate((a, W[0, ~self.nominal], W[:, self.nominal].ravel()))

    def _columns(self, k: int) -> np.ndarray:
        """The entries of ``theta`` that ``u_k = a_k + x^T w_k`` reads, in the order of
        :attr:`_design_columns` (``[a_k, w_shared, w_nominal(cut k)]``)."""
        M, shared = self.M, int(np.sum(~self.nominal))
        width = int(np.sum(self.nominal))
        at = M + shared + k * width
        return np.concatenate(([k], M + np.arange(shared), at + np.arange(width)))

    def _ordered_design(self) -> np.ndarray:
        """``[1, X_shared, X_nominal]``: the columns of ``[1, X]`` in the order of
        :meth:`_columns` (formed once: every Newton step reads it)."""
        if self._Z is None:
            cols = np.arange(self.X.shape[1])
            self._Z = np.hstack((np.ones((self.X.shape[0], 1)), self.X[:, cols[~self.nominal]],
                                 self.X[:, cols[self.nominal]]))
        return self._Z

    # ---------------------------------------------------------------- rows
    def linear_predictor(self, theta: np.ndarray) -> np.ndarray:
        """``U`` (n x (K-1)): the cuts' linear predictors."""
        a, W = self.split(theta)
        return a + self.X @ W.T

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
        return -float(np.sum(self._weighted(self._log_p(eta))))

    def _ratios(self, eta: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(upper, lower, log p, f(upper)/p, f(lower)/p)`` of each row (0 at open ends)."""
        dist = self.family.dist
        upper, lower = self._bounds(eta)
        log_p = self._log_p(eta)
        with np.errstate(over="ignore", invalid="ignore"):
            r_u = np.where(np.isfinite(upper), np.exp(dist.log_pdf(upper) - log_p), 0.0)
            r_l = np.where(np.isfinite(lower), np.exp(dist.log_pdf(lower) - log_p), 0.0)
        return upper, lower, log_p, r_u, r_l

    def _cut_gradients(self, r_u: np.ndarray, r_l: np.ndarray) -> list[np.ndarray]:
        """Each cut's ``d loss_i / d u_k`` (weighted): ``-r_u`` at a row's upper cut,
        ``r_l`` at its lower."""
        up, low = self.t, self.t - 1
        return [np.where(up == k, self._weighted(-r_u), 0.0)
                + np.where(low == k, self._weighted(r_l), 0.0) for k in range(self.M)]

    def row_scores(self, theta: np.ndarray) -> np.ndarray:
        """Each row's gradient of its weighted loss in ``theta`` (n x p: robust
        covariances)."""
        _, _, _, r_u, r_l = self._ratios(self.linear_predictor(theta))
        Z = self._ordered_design()
        S = np.zeros((Z.shape[0], self.n_params))
        for k, g in enumerate(self._cut_gradients(r_u, r_l)):
            S[:, self._columns(k)] += g[:, None] * Z  # (a cut's columns are distinct)
        return S

    @property
    def total_weight(self) -> float:
        return float(self.X.shape[0] if self.sample_weight is None
                     else np.sum(self.sample_weight))

    def _derivatives(self, eta: np.ndarray, curvature: bool
                     ) -> tuple[float, np.ndarray, np.ndarray | None]:
        """``(f, gradient, Hessian or None)``: ``sum_k J_k^T g_k`` and
        ``sum_kl J_k^T diag(h_kl) J_l`` over the cuts each row reads."""
        dist, M = self.family.dist, self.M
        upper, lower, log_p, r_u, r_l = self._ratios(eta)
        f = -float(np.sum(self._weighted(log_p)))
        up, low = self.t, self.t - 1
        Z = self._ordered_design()
        columns = [self._columns(k) for k in range(M)]
        grad = np.zeros(self.n_params)
        for k, g in enumerate(self._cut_gradients(r_u, r_l)):  # J_k^T g_k
            np.add.at(grad, columns[k], Z.T @ g)
        if not curvature:
            return f, grad, None
        with np.errstate(invalid="ignore"):
            psi_u = np.where(r_u > 0, dist.score(np.where(r_u > 0, upper, 0.0)), 0.0)
            psi_l = np.where(r_l > 0, dist.score(np.where(r_l > 0, lower, 0.0)), 0.0)
        Luu = self._weighted(r_u * r_u - r_u * psi_u)
        Lll = self._weighted(r_l * r_l + r_l * psi_l)
        Lul = self._weighted(-r_u * r_l)
        H = np.zeros((self.n_params, self.n_params))
        for k in range(M):  # J_k^T diag(h_kl) J_l: a weighted Gram of Z per pair of cuts
            diag = np.where(up == k, Luu, 0.0) + np.where(low == k, Lll, 0.0)
            _scatter(H, columns[k], columns[k], Z.T @ (diag[:, None] * Z))
            if k:  # rows of class k read cut k (upper) and cut k - 1 (lower)
                cross = Z.T @ (np.where(up == k, Lul, 0.0)[:, None] * Z)
                _scatter(H, columns[k], columns[k - 1], cross)
                _scatter(H, columns[k - 1], columns[k], cross.T)
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

    def hessp(self, theta: np.ndarray, eta: np.ndarray, v: np.ndarray, single: bool = False
              ) -> np.ndarray:
        return self.observed_hessian(theta, eta) @ v

    # Fitted by Newton only (a test's alternative, small): no coordinate-wise solver.
    def column(self, j: int) -> np.ndarray:
        raise NotImplementedError("the non-parallel cumulative model is fitted by Newton")

    def coordinate_derivatives(self, eta: np.ndarray, c: np.ndarray, block: int = 0
                               ) -> tuple[float, float]:
        raise NotImplementedError("the non-parallel cumulative model is fitted by Newton")

    def block_direction(self, c: np.ndarray, block: int = 0) -> np.ndarray:
        raise NotImplementedError("the non-parallel cumulative model is fitted by Newton")

    def recentre(self, theta: np.ndarray) -> np.ndarray:
        """No flat direction: the intercepts pin every cut's location."""
        return theta

    def subsample(self, rows: np.ndarray) -> "CumulativeObjective":
        w = None if self.sample_weight is None else self.sample_weight[rows]
        return CumulativeObjective(self.X[rows], self.family, self.t[rows], w, self.nominal)

    def data_range_basis(self) -> np.ndarray:
        """Every direction (the test's design has full rank where the null fit had)."""
        return np.eye(self.n_params)

    def crossing_rows(self, theta: np.ndarray) -> int:
        """Rows at which the fitted cumulative probabilities decrease from one cut to the
        next (a negative probability of some class)."""
        U = self.linear_predictor(theta)
        return int(np.count_nonzero(np.any(np.diff(U, axis=1) < 0, axis=1)))


def _scatter(H: np.ndarray, rows: np.ndarray, cols: np.ndarray, block: np.ndarray) -> None:
    """``H[rows, cols] += block`` with repeated indices summed (the shared slopes appear
    in every cut's columns)."""
    np.add.at(H, (rows[:, None], cols[None, :]), block)
