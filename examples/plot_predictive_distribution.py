r"""
Predictive distribution of Bayesian linear regression
=====================================================

Bayesian linear regression with nine Gaussian basis functions is fitted to 1, 2, 4 and 25
noisy points of ``sin(2 pi x)``, as in Figure 3.8 of Bishop (2006), *Pattern Recognition
and Machine Learning*, §3.3.2. The predictive distribution is Gaussian,

.. math::

    p(t \mid x, \mathbf{t}) = \mathcal{N}\big(t \mid \mathbf{m}_N^T \phi(x),
    \sigma_N^2(x)\big), \qquad
    \sigma_N^2(x) = \frac{1}{\beta} + \phi(x)^T \mathbf{S}_N \phi(x)

(Bishop eqs. 3.58-3.59): the noise on the targets plus the uncertainty of the weights.
The second term shrinks as data arrive and is smallest near the observations, so the
band of one standard deviation around the predictive mean is narrow where there are
data and wide where there are none.
"""

# %%
# Data and model
# --------------
# :class:`problin.GaussianBasis` turns ``x`` into nine Gaussian bumps with centres evenly
# spaced over [0, 1]; :class:`problin.BayesianLinearRegression` puts the prior
# ``N(0, alpha^-1 I)`` on their weights. As in Bishop's figure the noise precision is
# known (``beta = 25``, noise sd 0.2) and ``alpha = 2``. Without an intercept
# (``fit_intercept=False``, Bishop's model has none outside the basis) the predictive
# mean falls back to the prior mean 0 away from the data.

import matplotlib.pyplot as plt
import numpy as np
from sklearn.pipeline import make_pipeline

from problin import BayesianLinearRegression, GaussianBasis

rng = np.random.default_rng(3)
x = rng.uniform(0, 1, size=25)
t = np.sin(2 * np.pi * x) + rng.normal(scale=0.2, size=x.size)
x_plot = np.linspace(0, 1, 300)


def make_model(alpha=2.0, beta=25.0):
    return make_pipeline(
        GaussianBasis(centers=np.linspace(0, 1, 9), width=0.1),
        BayesianLinearRegression(alpha=alpha, beta=beta, fit_intercept=False))


# %%
# Predictive mean and standard deviation
# --------------------------------------
# ``predict(X, return_std=True)`` returns the mean ``m_N^T phi(x)`` and ``sigma_N(x)``.

fig, axes = plt.subplots(2, 2, figsize=(9, 6.5), sharex=True, sharey=True,
                         layout="constrained")
for ax, n in zip(axes.flat, (1, 2, 4, 25)):
    model = make_model().fit(x[:n, None], t[:n])
    mean, std = model.predict(x_plot[:, None], return_std=True)
    ax.plot(x_plot, np.sin(2 * np.pi * x_plot), color="tab:green", label="sin(2πx)")
    ax.plot(x_plot, mean, color="tab:red", label="predictive mean")
    ax.fill_between(x_plot, mean - std, mean + std, color="tab:red", alpha=0.2,
                    label="± 1 sd")
    ax.plot(x[:n], t[:n], "o", mfc="none", mec="tab:blue", ms=7)
    ax.set(title=f"N = {n}", ylim=(-1.6, 1.6))
for ax in axes[1]:
    ax.set_xlabel("$x$")
for ax in axes[:, 0]:
    ax.set_ylabel("$t$")
axes[0, 0].legend(loc="lower left", fontsize="small")
fig.suptitle("Predictive distribution (Bishop 2006, Fig. 3.8)")
plt.show()

# %%
# Functions drawn from the posterior
# ----------------------------------
# The band is pointwise. Whole functions ``y(x, w)`` with ``w`` drawn from the posterior
# (``sample_posterior``, Bishop Fig. 3.9) show how the uncertainty is correlated along
# ``x``: with four points they agree near the data and scatter between and beyond them.

four = make_model().fit(x[:4, None], t[:4])
basis, bayes = four[0], four[-1]
weights = bayes.sample_posterior(5, random_state=0)  # (5, 9): no intercept
curves = basis.transform(x_plot[:, None]) @ weights.T

fig, ax = plt.subplots(figsize=(5, 3.5), layout="constrained")
ax.plot(x_plot, curves, color="tab:red", lw=1)
ax.plot(x[:4], t[:4], "o", mfc="none", mec="tab:blue", ms=7)
ax.set(xlabel="$x$", ylabel="$t$", ylim=(-1.6, 1.6), title="posterior draws, N = 4")
plt.show()

# %%
# Letting the evidence choose alpha and beta
# ------------------------------------------
# With ``alpha=None`` and ``beta=None`` both are set by maximising the marginal likelihood
# (the evidence approximation, Bishop §3.5). On the 25 points the estimated noise
# standard deviation comes close to the true 0.2, and ``gamma_`` counts how many of the
# nine weights the data determine (Bishop eq. 3.91).

evidence_model = make_model(alpha=None, beta=None).fit(x[:, None], t)
fitted = evidence_model[-1]
print(f"alpha = {fitted.alpha_:.3g}, noise sd = {1 / np.sqrt(fitted.beta_):.3f}, "
      f"gamma = {fitted.gamma_:.2f} of 9 parameters")
