r"""
Model evidence against polynomial degree
========================================

The marginal likelihood (evidence) of a Bayesian model, ``p(t | M)``, is the probability
of the observed targets averaged over the model's prior: it rewards fitting the data and
penalises the flexibility that fitting needed (Bishop 2006, *Pattern Recognition and
Machine Learning*, §3.4 and §3.5.1). For Bayesian linear regression it has a closed form
(Bishop eq. 3.86),

.. math::

    \ln p(\mathbf{t} \mid \alpha, \beta) = \frac{M}{2} \ln \alpha + \frac{N}{2} \ln \beta
    - E(\mathbf{m}_N) - \frac{1}{2} \ln |\mathbf{A}| - \frac{N}{2} \ln (2\pi),

with ``M`` the number of weights and ``A = alpha I + beta Phi^T Phi``.
:class:`problin.BayesianLinearRegression` reports it as ``log_evidence_``. This example
reproduces Figure 3.14 of Bishop (2006): ten points of ``sin(2 pi x)`` with noise of sd
0.3, polynomials of degree 0 to 9, the prior precision fixed at ``alpha = 5e-3`` and the
noise precision at its true value ``beta = 1/0.3^2 = 11.1``.
"""

# %%
# Data
# ----
# Ten points evenly spaced over [0, 1], as in Bishop's chapter 1 example.

import matplotlib.pyplot as plt
import numpy as np
from sklearn.pipeline import make_pipeline

from problin import BayesianLinearRegression, PolynomialBasis

rng = np.random.default_rng(7)
x = np.linspace(0, 1, 10)
t = np.sin(2 * np.pi * x) + rng.normal(scale=0.3, size=x.size)

# %%
# One model per degree
# --------------------
# Bishop's polynomial is ``w_0 + w_1 x + ... + w_M x^M`` with the same prior on every
# weight, ``w_0`` included: so :class:`problin.PolynomialBasis` supplies the constant
# (``include_bias=True``) and the raw powers of ``x`` (``standardize=False``), and the
# regression has no separate intercept (``fit_intercept=False``).


def polynomial_model(degree):
    return make_pipeline(
        PolynomialBasis(degree, include_bias=True, standardize=False),
        BayesianLinearRegression(alpha=5e-3, beta=1 / 0.3**2, fit_intercept=False))


degrees = np.arange(10)
models = [polynomial_model(M).fit(x[:, None], t) for M in degrees]
log_evidence = np.array([model[-1].log_evidence_ for model in models])
for M, value in zip(degrees, log_evidence):
    print(f"M = {M}: ln p(t | M) = {value:7.2f}")

# %%
# Evidence against degree
# -----------------------
# The constant (``M = 0``) fits badly and has a low evidence; a straight line fits much
# better. ``M = 2`` hardly improves the fit of an odd-symmetric sinusoid and pays for an
# extra parameter, so its evidence falls; ``M = 3`` captures the shape and is the most
# probable model. Beyond it each extra degree improves the fit little and the evidence
# declines slowly. (The seed was chosen to match Bishop's figure: over other draws of the
# noise the maximum is as often at ``M = 4`` or ``5``, within a nat or so of ``M = 3``;
# with ten points the evidence is itself a noisy quantity.)

best = degrees[np.argmax(log_evidence)]
x_plot = np.linspace(0, 1, 200)

fig, (ax_ev, ax_fit) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
ax_ev.plot(degrees, log_evidence, "o-", color="tab:red")
ax_ev.axvline(best, color="0.6", ls="--", lw=1)
ax_ev.set(xlabel="degree $M$", ylabel=r"$\ln p(\mathbf{t} \mid M)$",
          title="model evidence (Bishop 2006, Fig. 3.14)", xticks=degrees)

ax_fit.plot(x_plot, np.sin(2 * np.pi * x_plot), color="tab:green", label="sin(2πx)")
for M, color in ((1, "tab:orange"), (best, "tab:red"), (9, "tab:purple")):
    mean, std = models[M].predict(x_plot[:, None], return_std=True)
    ax_fit.plot(x_plot, mean, color=color, label=f"M = {M}")
    ax_fit.fill_between(x_plot, mean - std, mean + std, color=color, alpha=0.12)
ax_fit.plot(x, t, "o", mfc="none", mec="tab:blue", ms=7)
ax_fit.set(xlabel="$x$", ylabel="$t$", ylim=(-1.8, 1.8),
           title="predictive mean ± 1 sd")
ax_fit.legend(fontsize="small")
plt.show()

# %%
# Checking the formula
# --------------------
# For the cubic, the evidence of eq. 3.86 computed from scratch with numpy equals the
# model's ``log_evidence_``.

alpha, beta = 5e-3, 1 / 0.3**2
Phi = np.vander(x, 4, increasing=True)
A = alpha * np.eye(4) + beta * Phi.T @ Phi
m_N = beta * np.linalg.solve(A, Phi.T @ t)
E = beta / 2 * np.sum((t - Phi @ m_N) ** 2) + alpha / 2 * m_N @ m_N
by_hand = (4 / 2 * np.log(alpha) + x.size / 2 * np.log(beta) - E
           - np.linalg.slogdet(A)[1] / 2 - x.size / 2 * np.log(2 * np.pi))
print(f"by hand: {by_hand:.10f}   problin: {models[3][-1].log_evidence_:.10f}")
