"""Shared data for the Bayesian logistic regression tests."""
import numpy as np
from scipy.special import expit, log_expit


def two_parameter_problem(n=30, seed=2):
    """Intercept + one feature, few rows: a visibly skewed posterior."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = (rng.random(n) < expit(0.5 + 1.5 * x)).astype(int)
    return x[:, None], y


def grid_posterior(X, y, alpha, intercept_alpha, half_width=9.0, size=501):
    """Exact posterior of ``(b, w)`` on a fine grid (unnormalised log density, then
    weights), centred on a rough mode with ``half_width`` standard deviations."""
    x = X[:, 0]
    s = 2.0 * y - 1.0

    def log_post(b, w):
        eta = b[..., None] + w[..., None] * x
        return log_expit(s * eta).sum(-1) - 0.5 * alpha * w**2 - 0.5 * intercept_alpha * b**2

    # a rough centre and scale from a coarse grid
    bb, ww = np.meshgrid(np.linspace(-6, 6, 241), np.linspace(-6, 8, 281), indexing="ij")
    lp = log_post(bb, ww)
    p = np.exp(lp - lp.max())
    p /= p.sum()
    mb, mw = (p * bb).sum(), (p * ww).sum()
    sb, sw = np.sqrt((p * (bb - mb) ** 2).sum()), np.sqrt((p * (ww - mw) ** 2).sum())
    b = np.linspace(mb - half_width * sb, mb + half_width * sb, size)
    w = np.linspace(mw - half_width * sw, mw + half_width * sw, size)
    B, W = np.meshgrid(b, w, indexing="ij")
    lp = log_post(B, W)
    p = np.exp(lp - lp.max())
    p /= p.sum()
    theta = np.stack([B.ravel(), W.ravel()], axis=1)
    mean = p.ravel() @ theta
    C = theta - mean
    cov = (C * p.ravel()[:, None]).T @ C
    return theta, p.ravel(), mean, cov


def exact_predictive(theta, weights, x_new):
    """``p(t = 1 | x, D)`` by the same grid."""
    return np.array([weights @ expit(theta[:, 0] + theta[:, 1] * xv) for xv in x_new])
