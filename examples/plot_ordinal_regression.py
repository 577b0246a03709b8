r"""
Ordered outcomes: the cumulative-link model
===========================================

How likely is a student to apply to graduate school: "unlikely", "somewhat likely" or
"very likely"? The classes are ordered, but the distances between them are unknown. The
cumulative-link model (McCullagh 1980) treats them as the intervals of a latent response
``y* = x^T beta + e`` between increasing cut-points ``theta_1 < theta_2``:

.. math::

    P(y \le k \mid x) = F(\theta_k - x^\top \beta),

``F`` the distribution of the latent error (``link="logit"``: proportional odds). This
example fits :class:`problin.OrdinalRegression` to the UCLA data used by R's ``polr`` and
Stata's ``ologit`` tutorials (shipped with statsmodels' tests), draws the cumulative
probabilities against the grade point average, stacks the three class probabilities,
checks the proportional-odds assumption with Brant's test and the likelihood-ratio test,
and compares the links.
"""

# %%
# The fit
# -------
# ``classes=`` gives the order (text labels would otherwise be sorted alphabetically).
# The cut-points are named ``"a|b"`` after the classes they separate, as in R's
# ``polr``.

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import statsmodels.miscmodels.tests.results as results

from problin import (BayesianOrdinalRegression, OrdinalRegression, brant_test,
                     proportional_odds_lr_test)

data = pd.read_csv(os.path.join(os.path.dirname(results.__file__), "ologit_ucla.csv"))
levels = ["unlikely", "somewhat likely", "very likely"]
X, y = data[["pared", "public", "gpa"]], data["apply"]
model = OrdinalRegression(classes=levels).fit(X, y)
print(model.summary_text())

# %%
# Cumulative probabilities and the class probabilities
# ----------------------------------------------------
# For a student at a private institution, with and without a parent holding a graduate
# degree: ``P(y <= k)`` is a logistic curve in the GPA for each cut-point, the curves
# parallel (shifted copies of one another, the proportional-odds model), and the class
# probabilities are their differences, which stack to one.

gpa = np.linspace(1.5, 4.5, 121)
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for pared, style in ((0, "-"), (1, "--")):
    grid = pd.DataFrame({"pared": pared, "public": 0, "gpa": gpa})
    cumulative = np.cumsum(model.predict_proba(grid), axis=1)[:, :-1]
    for k in range(len(levels) - 1):
        axes[0].plot(gpa, cumulative[:, k], style, color=f"C{k}",
                     label=f"P(y ≤ {levels[k]}), pared={pared}")
axes[0].set(xlabel="GPA", ylabel="cumulative probability",
            title="P(y ≤ k | x) = F(θ_k − xᵀβ)")
axes[0].legend(fontsize=7)

grid = pd.DataFrame({"pared": 0, "public": 0, "gpa": gpa})
proba = model.predict_proba(grid)
axes[1].stackplot(gpa, proba.T, labels=levels, alpha=0.8)
axes[1].set(xlabel="GPA", title="class probabilities (pared = 0, private)")
axes[1].legend(loc="lower left", fontsize=7)
fig.tight_layout()

# %%
# Proportional odds, tested
# -------------------------
# Brant (1990) fits the two binary logits of ``y > unlikely`` and ``y > somewhat
# likely`` separately and tests whether their slopes are equal (one chi² per variable
# and an omnibus one): nothing is rejected at 5 %. The likelihood-ratio test fits the
# model with a slope vector per cut instead (all variables, or some: the partial
# proportional-odds model) by the same Newton engine: jointly nothing is rejected, and
# ``public`` alone is borderline (p ≈ 0.049, as Brant's 0.064 for it).

result = brant_test(model, X, y)
print(result)
print(result.binary_coef.round(3))
print("LR, every slope per cut:", proportional_odds_lr_test(model, X, y).test)
print("LR, public's slope per cut:",
      proportional_odds_lr_test(model, X, y, variables=["public"]).test)

# %%
# Links and the Bayesian model
# ----------------------------
# The links change the latent distribution: the slopes rescale with its spread (the
# logistic's sd is π/√3 ≈ 1.8 times the normal's), the fit hardly changes. The Bayesian
# model with weak priors, sampled by MCMC, gives nearly the same answer with credible
# intervals, and predictive probabilities averaged over its posterior.

for link in ("logit", "probit", "cloglog", "loglog", "cauchit"):
    fit = OrdinalRegression(link=link, classes=levels).fit(X, y)
    print(f"{link:8s} AIC {fit.aic_:7.2f}  coef {fit.coef_.round(3)}  "
          f"cut-points {fit.cutpoints_.round(3)}")

bayes = BayesianOrdinalRegression(classes=levels, inference="mcmc", n_samples=500,
                                  random_state=0, progress=False).fit(X, y)
print(bayes.summary().round(3))
new = pd.DataFrame({"pared": [0, 1], "public": [0, 0], "gpa": [3.0, 3.0]})
print("maximum likelihood", model.predict_proba(new).round(3).tolist())
print("posterior predictive", bayes.predict_proba(new).round(3).tolist())
plt.show()
