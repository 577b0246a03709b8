"""
Sequential Bayesian learning of a straight line
===============================================

A linear model ``y(x, w) = w0 + w1 x`` is learned one observation at a time, the
posterior after each point becoming the prior for the next. This reproduces Figure 3.7 of
Bishop (2006), *Pattern Recognition and Machine Learning*, §3.3.1: the data come from
``f(x) = -0.3 + 0.5 x`` with Gaussian noise of standard deviation 0.2, so the noise
precision is ``beta = (1/0.2)^2 = 25``, and the prior over the two weights is the isotropic
Gaussian ``N(0, alpha^-1 I)`` with ``alpha = 2``.

Each row of the figure shows, after 0, 1, 2 and 20 observations:

* left, the likelihood ``p(t_n | x_n, w)`` of the latest observation as a function of
  ``w`` (a ridge: every line through that point fits it);
* middle, the prior or posterior density ``p(w | t)``, with the true weights marked;
* right, six lines ``y(x, w)`` with ``w`` drawn from that density, and the data seen so far.

:meth:`problin.BayesianLinearRegression.partial_fit` is exactly this sequential update:
with fixed ``alpha`` and ``beta``, ``S_{N+1}^-1 = S_N^-1 + beta phi phi^T`` and
``m_{N+1} = S_{N+1} (S_N^-1 m_N + beta phi t)`` (Bishop eqs. 3.50-3.51).
"""

# %%
# Data and model
# --------------
# Bishop's prior is on both weights, intercept included, whereas problin's intercept has
# a flat prior. So the model is given the basis ``phi(x) = (1, x)`` as two columns and no
# intercept of its own (``fit_intercept=False``): both weights are then under the
# ``N(0, alpha^-1 I)`` prior.

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import multivariate_normal, norm

from problin import BayesianLinearRegression

rng = np.random.default_rng(0)
a0, a1 = -0.3, 0.5  # the true weights
alpha, beta = 2.0, 25.0

x = rng.uniform(-1, 1, size=20)
t = a0 + a1 * x + rng.normal(scale=1 / np.sqrt(beta), size=x.size)
Phi = np.column_stack([np.ones_like(x), x])

model = BayesianLinearRegression(alpha=alpha, beta=beta, fit_intercept=False)

# %%
# Learning one point at a time
# ----------------------------
# ``partial_fit`` on a single row updates the posterior; we keep its mean and covariance
# (``posterior_mean_``, ``posterior_cov_``) and six weight vectors drawn by
# ``sample_posterior`` after 1, 2 and 20 points. Before any data the "posterior" is the
# prior itself.

snapshots = {0: (np.zeros(2), np.eye(2) / alpha,
                 rng.multivariate_normal(np.zeros(2), np.eye(2) / alpha, size=6))}
for n in range(x.size):
    model.partial_fit(Phi[n:n + 1], t[n:n + 1])
    if n + 1 in (1, 2, 20):
        snapshots[n + 1] = (model.posterior_mean_.copy(), model.posterior_cov_.copy(),
                            model.sample_posterior(6, random_state=n))

print("posterior mean after 20 points:", model.posterior_mean_.round(3))
print("posterior sd after 20 points:  ", np.sqrt(np.diag(model.posterior_cov_)).round(3))

# %%
# The figure
# ----------
# The posterior contracts around the true weights (white cross) as the points arrive,
# and the sampled lines gather around the data.

grid = np.linspace(-1, 1, 201)
W0, W1 = np.meshgrid(grid, grid)
W = np.dstack([W0, W1])
x_line = np.linspace(-1, 1, 2)

fig, axes = plt.subplots(4, 3, figsize=(9, 11.5), layout="constrained")
for row, n in enumerate((0, 1, 2, 20)):
    mean, cov, draws = snapshots[n]
    ax_like, ax_post, ax_data = axes[row]

    if n == 0:
        ax_like.set_axis_off()
        ax_like.text(0.5, 0.5, "no data yet", ha="center", va="center",
                     transform=ax_like.transAxes)
    else:  # likelihood of the latest point, as a function of (w0, w1)
        like = norm.pdf(t[n - 1], loc=W0 + W1 * x[n - 1], scale=1 / np.sqrt(beta))
        ax_like.contourf(W0, W1, like, levels=20, cmap="jet")
        ax_like.plot(a0, a1, "w+", markersize=12, markeredgewidth=2)
        ax_like.set(xlabel="$w_0$", ylabel="$w_1$", aspect="equal",
                    title=f"likelihood of point {n}")

    density = multivariate_normal(mean, cov).pdf(W)
    ax_post.contourf(W0, W1, density, levels=20, cmap="jet")
    ax_post.plot(a0, a1, "w+", markersize=12, markeredgewidth=2)
    ax_post.set(xlabel="$w_0$", ylabel="$w_1$", aspect="equal",
                title="prior" if n == 0 else f"posterior, N = {n}")

    for w in draws:
        ax_data.plot(x_line, w[0] + w[1] * x_line, color="tab:red", lw=1)
    ax_data.plot(x[:n], t[:n], "o", mfc="none", mec="tab:blue", ms=7)
    ax_data.set(xlim=(-1, 1), ylim=(-1, 1), xlabel="$x$", ylabel="$y$", aspect="equal",
                title="data space")

fig.suptitle("Sequential Bayesian learning (Bishop 2006, Fig. 3.7)")
plt.show()
