r"""
Moderated predictive of Bayesian logistic regression
====================================================

A logistic regression fitted by maximum likelihood or MAP predicts with the single weight
vector ``w_MAP``: ``p(C_1 | x) = sigma(w_MAP^T phi(x))``. Its contours of constant
probability are parallel straight lines, and it is as confident far from the data as
near them. The Bayesian predictive averages over the posterior of the weights instead.
Under the Laplace approximation ``w ~ N(w_MAP, S_N)`` the activation ``a = w^T phi`` is
Gaussian with mean ``mu_a = w_MAP^T phi`` and variance ``sigma_a^2 = phi^T S_N phi``, and
the probit approximation gives (Bishop 2006, *Pattern Recognition and Machine Learning*,
§4.5.2; MacKay 1992)

.. math::

    p(C_1 \mid \phi, \mathbf{t}) \simeq \sigma\big(\kappa(\sigma_a^2)\, \mu_a\big),
    \qquad \kappa(\sigma^2) = (1 + \pi \sigma^2 / 8)^{-1/2}.

The decision boundary ``p = 0.5`` is unchanged (``mu_a = 0`` there), but where the
weights are uncertain, away from the data, the probabilities are *moderated* towards 1/2.

D. J. C. MacKay (1992), The evidence framework applied to classification networks,
*Neural Computation* 4(5), 720-736.
"""

# %%
# Data and model
# --------------
# Twenty points per class in two dimensions, and a Gaussian prior of precision
# ``alpha = 1`` on the two weights (:class:`problin.BayesianLogisticRegression`, Laplace
# approximation by default).

import matplotlib.pyplot as plt
import numpy as np

from problin import BayesianLogisticRegression

rng = np.random.default_rng(4)
n = 20
X = np.vstack([rng.normal([-1.0, -0.5], 0.7, size=(n, 2)),
               rng.normal([1.0, 0.5], 0.7, size=(n, 2))])
y = np.repeat([0, 1], n)

model = BayesianLogisticRegression(alpha=1.0).fit(X, y)
print(model.summary().round(3))

# %%
# MAP against moderated probabilities
# -----------------------------------
# ``predict_proba(X, method="map")`` is the plug-in ``sigma(mu_a)``; the default
# ``method="moderated"`` is the probit approximation above. ``predict_activation``
# returns ``mu_a`` and ``sigma_a^2``: the right panel shows ``sigma_a``, which grows with
# the distance from the data along the directions the data do not pin down.

g0, g1 = np.meshgrid(np.linspace(-6, 6, 250), np.linspace(-6, 6, 250))
grid = np.column_stack([g0.ravel(), g1.ravel()])
p_map = model.predict_proba(grid, method="map")[:, 1].reshape(g0.shape)
p_mod = model.predict_proba(grid)[:, 1].reshape(g0.shape)
mu_a, var_a = model.predict_activation(grid)

levels = [0.1, 0.3, 0.5, 0.7, 0.9]
fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), sharey=True, layout="constrained")
for ax, p, title in ((axes[0], p_map, "MAP plug-in"), (axes[1], p_mod, "moderated")):
    filled = ax.contourf(g0, g1, p, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.7)
    lines = ax.contour(g0, g1, p, levels=levels, colors="k", linewidths=0.8)
    ax.clabel(lines, fmt="%.1f", fontsize=8)
    ax.set_title(f"{title}: $p(C_1 \\mid x)$")
fig.colorbar(filled, ax=axes[:2], shrink=0.8, label="probability")

spread = axes[2].contourf(g0, g1, np.sqrt(var_a).reshape(g0.shape), levels=15,
                          cmap="viridis")
fig.colorbar(spread, ax=axes[2], shrink=0.8, label=r"$\sigma_a$")
axes[2].set_title(r"sd of the activation $\sigma_a(x)$")
for ax in axes:
    ax.plot(*X[y == 0].T, "o", mfc="tab:blue", mec="white", ms=6)
    ax.plot(*X[y == 1].T, "s", mfc="tab:red", mec="white", ms=6)
    ax.set(aspect="equal", xlabel="$x_1$")
axes[0].set_ylabel("$x_2$")
plt.show()

# %%
# Along a contour of the MAP model
# --------------------------------
# Walk along the line where the MAP model says ``p(C_1 | x) = 0.9``, from one side of the
# data to the other. The MAP probability is 0.9 all the way; the moderated one is close
# to 0.9 beside the data and falls towards 1/2 as the walk leaves them, because there
# the weights, hence the activation, are uncertain.

b, w = model.intercept_[0], model.coef_[0]
foot = -(b - np.log(9.0)) * w / (w @ w)  # the point of w^T x + b = logit(0.9) nearest 0
along = np.array([-w[1], w[0]]) / np.linalg.norm(w)
dist = np.linspace(-10, 10, 400)
walk = foot + np.outer(dist, along)

fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
ax.plot(dist, model.predict_proba(walk, method="map")[:, 1], label="MAP plug-in")
ax.plot(dist, model.predict_proba(walk)[:, 1], label="moderated")
ax.set(xlabel="distance along the MAP contour p = 0.9", ylabel="$p(C_1 \\mid x)$",
       ylim=(0.45, 1.0))
ax.legend(loc="lower center")
plt.show()

gap = np.abs(p_map - p_mod).max()
print(f"largest difference between MAP and moderated on the grid: {gap:.3f}")
