r"""
MCMC against the Laplace approximation
======================================

The posterior of logistic regression's weights has no closed form. The Laplace
approximation replaces it by the Gaussian ``N(w_MAP, S_N)`` centred at its mode, with
``S_N^-1`` the Hessian of the negative log posterior there (Bishop 2006, *Pattern
Recognition and Machine Learning*, §4.4 and §4.5.1). With few data and a steep slope
the true posterior is skewed: the likelihood falls off sharply on the side of small
slopes (some training points would be misclassified) and slowly on the side of large
ones (the data would merely be fitted more confidently). Markov chain Monte Carlo draws
from the exact posterior (Bishop §11.2) and shows what the Gaussian misses.

This example fits :class:`problin.BayesianLogisticRegression` to 20 points with one
feature, so that the posterior is over two parameters (intercept and slope) and can also
be computed on a grid, and compares ``inference="laplace"`` with ``inference="mcmc"``.
"""

# %%
# Data and fits
# -------------
# A weak prior (``alpha = 0.1``) on the slope, the default broad one on the intercept.
# ``samples_`` has shape (chains, draws, parameters), parameters ordered
# ``[intercept, slope]`` as ``posterior_mean_``; ``rhat_`` and ``ess_`` are the
# rank-normalised split R-hat and the bulk effective sample size (Vehtari et al. 2021).

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import chi2, norm

from problin import BayesianLogisticRegression

rng = np.random.default_rng(0)
x = rng.normal(size=20)
y = (rng.uniform(size=x.size) < 1 / (1 + np.exp(-(1.0 + 5.0 * x)))).astype(int)
X = x[:, None]

laplace = BayesianLogisticRegression(alpha=0.1).fit(X, y)
mcmc = BayesianLogisticRegression(alpha=0.1, inference="mcmc", n_samples=1000, n_chains=4,
                                  random_state=0, progress=False).fit(X, y)
draws = mcmc.samples_.reshape(-1, 2)

print(f"sampler {mcmc.sampler_}, acceptance rate {mcmc.acceptance_rate_:.2f}, "
      f"R-hat {mcmc.rhat_.round(4)}, ESS {mcmc.ess_.round(0)}")
print("Laplace mean", laplace.posterior_mean_.round(3),
      " sd", np.sqrt(np.diag(laplace.posterior_cov_)).round(3))
print("MCMC    mean", draws.mean(axis=0).round(3), " sd", draws.std(axis=0).round(3))

# %%
# Traces
# ------
# The four chains overlap and wander over the same range from the first kept draw: no
# trend, no chain stuck apart from the others (R-hat near 1).

names = ["intercept $b$", "slope $w$"]
fig, axes = plt.subplots(2, 1, figsize=(9, 4.5), sharex=True, layout="constrained")
for j, ax in enumerate(axes):
    for chain in mcmc.samples_[:, :, j]:
        ax.plot(chain, lw=0.5, alpha=0.8)
    ax.set_ylabel(names[j])
axes[-1].set_xlabel("draw")
axes[0].set_title("MCMC traces, 4 chains")
plt.show()

# %%
# Draws against the Laplace Gaussian
# ----------------------------------
# Left: the draws, the Laplace Gaussian's 50 %, 90 % and 99 % ellipses (dashed), and the
# exact posterior's contours containing the same probabilities, computed on a grid
# (solid). Right: the slope's marginal. The exact posterior is skewed towards large
# slopes; the Gaussian, symmetric about the mode, puts too little mass there and too much
# at small slopes, so its mean is too small.

b_grid, w_grid = np.meshgrid(np.linspace(-2.5, 5, 300), np.linspace(-1, 17, 360))
activation = b_grid[..., None] + w_grid[..., None] * x  # (360, 300, n)
log_post = (-np.logaddexp(0, -activation)[..., y == 1].sum(-1)
            - np.logaddexp(0, activation)[..., y == 0].sum(-1)
            - 0.1 * w_grid**2 / 2)  # the intercept's prior (precision 1e-10) is ~flat
post = np.exp(log_post - log_post.max())
post /= post.sum()
# density levels enclosing 50, 90 and 99 % of the grid posterior
ordered = np.sort(post.ravel())[::-1]
mass = np.cumsum(ordered)
exact_levels = sorted(ordered[np.searchsorted(mass, p)] for p in (0.5, 0.9, 0.99))

mean, cov = laplace.posterior_mean_, laplace.posterior_cov_
offset = np.dstack([b_grid - mean[0], w_grid - mean[1]])
mahalanobis = np.einsum("...i,ij,...j->...", offset, np.linalg.inv(cov), offset)

fig, (ax, ax_w) = plt.subplots(1, 2, figsize=(10, 4.5), layout="constrained")
ax.plot(*draws.T, ".", color="tab:blue", ms=2, alpha=0.3)
ax.contour(b_grid, w_grid, mahalanobis, levels=chi2(2).ppf([0.5, 0.9, 0.99]),
           colors="tab:red", linestyles="--")
ax.contour(b_grid, w_grid, post, levels=exact_levels, colors="k")
ax.plot(*mean, "x", color="tab:red", ms=9, mew=2)
ax.set(xlabel=names[0], ylabel=names[1], ylim=(-1, 14), title="posterior draws and contours")
ax.plot([], [], color="tab:red", ls="--", label="Laplace")
ax.plot([], [], color="k", label="exact (grid)")
ax.legend(loc="upper left")

w_axis = w_grid[:, 0]
ax_w.hist(draws[:, 1], bins=50, density=True, color="tab:blue", alpha=0.4, label="MCMC")
ax_w.plot(w_axis, post.sum(axis=1) / (w_axis[1] - w_axis[0]), color="k", label="exact")
ax_w.plot(w_axis, norm(mean[1], np.sqrt(cov[1, 1])).pdf(w_axis), "--", color="tab:red",
          label="Laplace")
ax_w.set(xlabel=names[1], ylabel="density", xlim=(-1, 15), title="marginal of the slope")
ax_w.legend()
plt.show()

grid_mean = np.array([(post * b_grid).sum(), (post * w_grid).sum()])
print("grid    mean", grid_mean.round(3))
