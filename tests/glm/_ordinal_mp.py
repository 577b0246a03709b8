"""An independent 50-digit reference for cumulative-link (ordinal) regression (mpmath).

The model is McCullagh's (1980): ``P(y <= k | x) = F(theta_k - x^T beta)`` for the
categories ``k = 0, ..., K - 1`` (``theta_{-1} = -inf``, ``theta_{K-1} = +inf``), so that
``log P(y = k) = log(F(theta_k - eta) - F(theta_{k-1} - eta))``, written out directly
from the distribution functions of the five links of R's ``ordinal::clm``:

- logit ``F = 1 / (1 + e^-z)``, probit ``F = Phi(z)``, cauchit ``F = 1/2 + atan(z)/pi``,
- cloglog ``F = 1 - exp(-e^z)`` (Gumbel minimum), loglog ``F = exp(-e^-z)`` (Gumbel
  maximum).

``ordinal_fit`` maximises the log-likelihood over ``(beta, theta)`` by damped Newton with
the analytic gradient and Hessian (each row's ``log(F(u) - F(v))`` differentiated in its
two arguments ``u = theta_k - eta`` and ``v = theta_{k-1} - eta``, then the chain rule),
to a Newton decrement below 1e-40, and returns the inverse observed information (the
negative Hessian) as the covariance, ordered ``[beta, theta]``. ``numeric_gradient``
differentiates ``loglik`` by central differences at 50 digits: a check of the analytic
score that shares none of its formulas.
"""
from functools import lru_cache, wraps

import mpmath as mp
import numpy as np

DPS = 50  # every public function works at 50 digits whatever the global mpmath state
# (other test modules set ``mp.dps`` in their bodies: at 40 digits the 1e-40 Newton
# tolerance below is never met)


def _at_50_digits(function):
    @wraps(function)
    def wrapped(*args, **kwargs):
        with mp.workdps(DPS):
            return function(*args, **kwargs)
    return wrapped


def _logit(z):
    F = 1 / (1 + mp.exp(-z))
    f = F * (1 - F)
    return F, f, f * (1 - 2 * F)


def _probit(z):
    f = mp.npdf(z)
    return mp.ncdf(z), f, -z * f


def _cloglog(z):
    e = mp.exp(z)
    f = e * mp.exp(-e)
    return -mp.expm1(-e), f, f * (1 - e)


def _loglog(z):
    e = mp.exp(-z)
    f = e * mp.exp(-e)
    return mp.exp(-e), f, f * (e - 1)


def _cauchit(z):
    f = 1 / (mp.pi * (1 + z * z))
    return mp.mpf(1) / 2 + mp.atan(z) / mp.pi, f, -2 * z * f / (1 + z * z)


LINKS = {"logit": _logit, "probit": _probit, "cloglog": _cloglog, "loglog": _loglog,
         "cauchit": _cauchit}

_ZERO = (mp.mpf(0), mp.mpf(0), mp.mpf(0))
_ONE = (mp.mpf(1), mp.mpf(0), mp.mpf(0))


def _rows(X):
    return [[mp.mpf(float(v)) for v in row] for row in np.asarray(X, dtype=float)]


def _bounds(theta, k, eta, link):
    """``(F, f, f')`` at the upper ``theta_k - eta`` and lower ``theta_{k-1} - eta``."""
    upper = _ONE if k == len(theta) else LINKS[link](theta[k] - eta)
    lower = _ZERO if k == 0 else LINKS[link](theta[k - 1] - eta)
    return upper, lower


@_at_50_digits
def loglik(X, y, beta, theta, link="logit"):
    """The log-likelihood ``sum_i log(F(theta_{y_i} - x_i^T beta) - F(theta_{y_i-1} - ...))``."""
    beta, theta = [mp.mpf(b) for b in beta], [mp.mpf(t) for t in theta]
    total = mp.mpf(0)
    for x, k in zip(_rows(X), y):
        eta = mp.fsum(a * b for a, b in zip(x, beta))
        upper, lower = _bounds(theta, int(k), eta, link)
        total += mp.log(upper[0] - lower[0])
    return total


def _mask(nominal, D):
    """Which columns have a slope per cut: none (parallel), all (True) or a list."""
    if nominal is None or nominal is False:
        return [False] * D
    if nominal is True:
        return [True] * D
    return [bool(v) for v in nominal]


def _cut_slopes(beta, mask, m):
    """The slopes of cut ``m``: ``beta = [shared..., nominal of cut 0, cut 1, ...]``."""
    shared = [b for b in beta[:mask.count(False)]]
    width = mask.count(True)
    own = beta[mask.count(False) + m * width:mask.count(False) + (m + 1) * width]
    s, o = iter(shared), iter(own)
    return [next(o) if nominal else next(s) for nominal in mask]


def _jacobians(x, k, M, mask):
    """``du/dparams``, ``dv/dparams`` of a row of class ``k`` (``u = theta_k - x^T
    beta_k``), in ``[shared slopes, nominal slopes per cut, theta]``."""
    width = mask.count(True)

    def one(m):
        shared = [-xj for xj, nominal in zip(x, mask) if not nominal]
        blocks = [mp.mpf(0)] * (M * width)
        if 0 <= m < M:
            blocks[m * width:(m + 1) * width] = [-xj for xj, nom in zip(x, mask) if nom]
        return shared + blocks + [mp.mpf(1) if c == m else mp.mpf(0) for c in range(M)]
    return one(k), one(k - 1)


def _derivatives(Z, y, beta, theta, link, nominal=None):
    """Log-likelihood, score and Hessian in ``[beta, theta]`` (``beta``: the shared slopes,
    then those of the ``nominal`` columns cut by cut; :func:`_mask`)."""
    M = len(theta)
    mask = _mask(nominal, len(Z[0]))
    p = len(beta) + M
    value, grad = mp.mpf(0), [mp.mpf(0)] * p
    hess = [[mp.mpf(0)] * p for _ in range(p)]
    for x, k in zip(Z, y):
        k = int(k)
        eta_u = mp.fsum(a * b for a, b in zip(x, _cut_slopes(beta, mask, k))) if k < M else 0
        eta_l = mp.fsum(a * b for a, b in zip(x, _cut_slopes(beta, mask, k - 1))) if k else 0
        (Fu, fu, du) = _ONE if k == M else LINKS[link](theta[k] - eta_u)
        (Fv, fv, dv) = _ZERO if k == 0 else LINKS[link](theta[k - 1] - eta_l)
        prob = Fu - Fv
        if prob <= 0:
            raise ValueError("a row's cumulative probabilities cross")
        value += mp.log(prob)
        # d l / d(u, v) and the 2 x 2 second derivatives of log(F(u) - F(v))
        lu, lv = fu / prob, -fv / prob
        luu, lvv, luv = du / prob - lu * lu, -dv / prob - lv * lv, -lu * lv
        ju, jv = _jacobians(x, k, M, mask)
        for a in range(p):
            grad[a] += lu * ju[a] + lv * jv[a]
            for b in range(a + 1):
                hess[a][b] += (luu * ju[a] * ju[b] + lvv * jv[a] * jv[b]
                               + luv * (ju[a] * jv[b] + jv[a] * ju[b]))
    for a in range(p):
        for b in range(a):
            hess[b][a] = hess[a][b]
    return value, mp.matrix(grad), mp.matrix(hess)


def _start(y, K, link):
    """Cut-points at ``F^-1`` of the cumulative class shares, slopes zero."""
    n = len(y)
    shares = [mp.mpf(int(np.sum(np.asarray(y) <= k))) / n for k in range(K - 1)]
    F = LINKS[link]
    theta = []
    for s in shares:
        theta.append(mp.findroot(lambda z, s=s: F(z)[0] - s, mp.mpf(0), solver="secant"))
    return theta


@_at_50_digits
def ordinal_fit(X, y, K, link="logit", tol=mp.mpf("1e-40"), max_iter=200, nominal=None):
    """``(beta, theta, covariance, loglik)`` at 50 digits; covariance in ``[beta, theta]``.

    ``y`` holds the category indices ``0, ..., K - 1``; every category must be observed.
    ``nominal``: the columns with a slope vector per cut (``True``: all, the unconstrained
    cumulative model; a list of booleans: the partial proportional-odds model); ``beta``
    then holds the shared slopes and the nominal ones cut by cut. From zero slopes.
    """
    Z = _rows(X)
    mask = _mask(nominal, len(Z[0]))
    D = mask.count(False) + (K - 1) * mask.count(True)
    beta, theta = [mp.mpf(0)] * D, _start(y, K, link)
    value, grad, hess = _derivatives(Z, y, beta, theta, link, nominal)
    for _ in range(max_iter):
        step = mp.lu_solve(-hess, grad)
        decrement = mp.fsum(g * s for g, s in zip(grad, step))
        if decrement < tol:
            break
        t = mp.mpf(1)
        while True:
            new_beta = [b + t * s for b, s in zip(beta, step[:D])]
            new_theta = [c + t * s for c, s in zip(theta, step[D:])]
            if all(b > a for a, b in zip(new_theta, new_theta[1:])):
                try:
                    trial = _derivatives(Z, y, new_beta, new_theta, link, nominal)
                except ValueError:  # (a row's two cuts crossed: log of a negative)
                    trial = None
                if trial is not None and trial[0] >= value + t * decrement / 4:
                    break
            t /= 2
            if t < mp.mpf("1e-30"):
                raise RuntimeError("line search failed")
        beta, theta = new_beta, new_theta
        value, grad, hess = trial
    else:
        raise RuntimeError("no convergence")
    covariance = (-hess) ** -1
    return beta, theta, covariance, value


@_at_50_digits
def numeric_gradient(X, y, beta, theta, link="logit", h=mp.mpf("1e-20")):
    """The score by central differences of ``loglik`` (error ~h^2 at 50 digits)."""
    params = [mp.mpf(v) for v in list(beta) + list(theta)]
    D = len(beta)
    out = []
    for j in range(len(params)):
        up, down = list(params), list(params)
        up[j] += h
        down[j] -= h
        out.append((loglik(X, y, up[:D], up[D:], link) - loglik(X, y, down[:D], down[D:], link))
                   / (2 * h))
    return out


def dataset(seed=0, n=60, K=4):
    """A small ordinal problem: two columns, ``K`` categories from a logistic latent model."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.uniform(-1, 2, size=n)])
    latent = X @ np.array([0.8, -0.6]) + rng.logistic(size=n)
    y = np.searchsorted(np.quantile(latent, np.arange(1, K) / K), latent)
    return X, y


@lru_cache(maxsize=None)
@_at_50_digits
def reference(link, seed=0):
    """``(X, y, beta, theta, standard errors, loglik)`` as floats, the fit cached per link."""
    X, y = dataset(seed)
    K = int(y.max()) + 1
    beta, theta, cov, value = ordinal_fit(X, y, K, link)
    se = [mp.sqrt(cov[j, j]) for j in range(cov.rows)]

    def floats(values):
        return np.array([float(v) for v in values])

    return X, y, floats(beta), floats(theta), floats(se), float(value)


def _binary_logit_fit(Z, t, tol=mp.mpf("1e-40")):
    """Maximum-likelihood logistic regression on the rows ``Z`` (intercept included)."""
    p = len(Z[0])
    beta = [mp.mpf(0)] * p
    for _ in range(100):
        grad, info = [mp.mpf(0)] * p, [[mp.mpf(0)] * p for _ in range(p)]
        for z, ti in zip(Z, t):
            mu = 1 / (1 + mp.exp(-mp.fsum(a * b for a, b in zip(z, beta))))
            w = mu * (1 - mu)
            for a in range(p):
                grad[a] += (ti - mu) * z[a]
                for b in range(p):
                    info[a][b] += w * z[a] * z[b]
        step = mp.lu_solve(mp.matrix(info), mp.matrix(grad))
        beta = [b + s for b, s in zip(beta, step)]
        if mp.fsum(g * s for g, s in zip(grad, step)) < tol:
            return beta
    raise RuntimeError("no convergence")


@_at_50_digits
def brant_mp(X, y, K):
    """Brant's (1990) Wald tests of proportional odds at 50 digits.

    The K - 1 binary logits of ``y > k`` (k = 0..K-2), each with an intercept, fitted
    separately; the covariance of their slopes by Brant's formula
    ``Cov(b_m, b_l) = A_m^-1 B_ml A_l^-1`` with ``A_m = X^T diag(p_m (1 - p_m)) X`` and
    ``B_ml = X^T diag(p_l (1 - p_m)) X`` (``l >= m``, ``p_m`` the m-th fitted
    probability, X with its column of ones), the intercepts' rows and columns then
    dropped. Returns ``(omnibus chi2, [chi2 per variable])`` for the contrasts
    ``b_0 - b_m`` (m = 1..K-2): df ``D (K - 2)`` and ``K - 2``.
    """
    Z = [[mp.mpf(1)] + row for row in _rows(X)]
    n, p, D, M = len(Z), len(Z[0]), len(Z[0]) - 1, K - 1
    betas, probs = [], []
    for m in range(M):
        beta = _binary_logit_fit(Z, [1 if int(v) > m else 0 for v in y])
        betas.append(beta)
        probs.append([1 / (1 + mp.exp(-mp.fsum(a * b for a, b in zip(z, beta)))) for z in Z])

    def gram(w):
        return mp.matrix([[mp.fsum(w[i] * Z[i][a] * Z[i][b] for i in range(n))
                           for b in range(p)] for a in range(p)])

    inv = [gram([q * (1 - q) for q in probs[m]]) ** -1 for m in range(M)]
    V = mp.zeros(M * D, M * D)
    for m in range(M):
        for l in range(m, M):
            block = inv[m] * gram([probs[l][i] * (1 - probs[m][i]) for i in range(n)]) * inv[l]
            for a in range(D):
                for b in range(D):
                    V[m * D + a, l * D + b] = block[a + 1, b + 1]
                    V[l * D + b, m * D + a] = block[a + 1, b + 1]
    slopes = [betas[m][1 + a] for m in range(M) for a in range(D)]

    def wald(rows):
        C = mp.matrix([[mp.mpf(v) for v in r] for r in rows])
        d = C * mp.matrix(slopes)
        return (d.T * mp.lu_solve(C * V * C.T, d))[0]

    def contrast(m, a):
        row = [0] * (M * D)
        row[a], row[m * D + a] = 1, -1
        return row

    omnibus = wald([contrast(m, a) for m in range(1, M) for a in range(D)])
    per_variable = [wald([contrast(m, a) for m in range(1, M)]) for a in range(D)]
    return omnibus, per_variable
