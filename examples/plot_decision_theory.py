r"""
Decisions with costs and class priors
=====================================

A probabilistic classifier gives posteriors ``p(C_k | x)``; what to *do* with them is a
separate step, decision theory (Bishop 2006, *Pattern Recognition and Machine Learning*,
§1.5). Two things change the best decision without changing the model:

* **costs.** With a loss ``L[k, j]`` for deciding class ``j`` when the truth is ``k``,
  the decision of least expected loss is ``argmin_j sum_k p(C_k | x) L[k, j]``
  (Bishop §1.5.2, eq. 1.81; his Figure 1.25 is the loss matrix of a cancer screening
  where a missed cancer costs 1000 times a false alarm);
* **priors.** A model trained on a balanced study, where half the patients are ill,
  overstates the risk in a population where one in a hundred is. By Bayes' theorem the
  posteriors are re-weighted, ``p'(C_k | x) ∝ p(C_k | x) pi'_k / pi_k`` (Bishop §1.5.4).

:class:`problin.BayesDecision` does both over any classifier with ``predict_log_proba``.
For two classes the rule is a threshold on the posterior: decide "disease" when
``p'(disease | x) > L[0, 1] / (L[0, 1] + L[1, 0])``, which moves the boundary in ``x``.
"""

# %%
# A screening test
# ----------------
# One biomarker ``x``: healthy people (class 0) have ``x ~ N(0, 1)``, ill ones (class 1)
# ``x ~ N(2, 1)``. The model is a logistic regression fitted to a balanced study of 200
# of each, so its training priors are ``(0.5, 0.5)``.

import matplotlib.pyplot as plt
import numpy as np

from problin import BayesDecision, LogisticRegression

rng = np.random.default_rng(0)


def draw(n_healthy, n_ill):
    x = np.concatenate([rng.normal(0.0, 1.0, n_healthy), rng.normal(2.0, 1.0, n_ill)])
    return x[:, None], np.repeat([0, 1], [n_healthy, n_ill])


X, y = draw(200, 200)
x_plot = np.linspace(-3, 5, 801)[:, None]


def threshold(decider):
    """Smallest x at which the decision is 'disease' (the decision is monotone in x)."""
    return x_plot[np.argmax(decider.predict(x_plot) == 1), 0]


# %%
# Posteriors under deployment priors
# ----------------------------------
# ``priors=`` re-weights the posterior to the population where the test is used: with a
# prevalence of 10 % or 1 %, the same biomarker value means a much smaller risk. With the
# 0-1 loss (no ``cost``) the threshold is where the posterior crosses 1/2.

prevalences = [0.5, 0.1, 0.01]
fig, ax_post = plt.subplots(figsize=(6, 3.8), layout="constrained")
for prevalence in prevalences:
    decider = BayesDecision(LogisticRegression(), priors=[1 - prevalence, prevalence])
    decider.fit(X, y)
    ax_post.plot(x_plot, decider.predict_proba(x_plot)[:, 1],
                 label=f"prevalence {prevalence:g}")
    print(f"prevalence {prevalence:5g}: 0-1 loss threshold x* = {threshold(decider):.2f}")
ax_post.axhline(0.5, color="0.6", lw=0.8, ls="--")
ax_post.set(xlabel="biomarker $x$", ylabel="p'(disease | x)", title="posterior")
ax_post.legend(fontsize="small")
plt.show()

# %%
# Expected cost of each decision
# ------------------------------
# Now take the 1 % population, where missing a disease costs 20 and a false alarm 1:
# ``cost[true, decided] = [[0, 1], [20, 0]]``. ``expected_cost`` gives the risk of each
# decision, ``R_j(x) = sum_k p'(C_k | x) cost[k, j]``; the decision switches where the
# two curves cross, at a posterior of 1/21 instead of 1/2, so at a lower biomarker value
# than the priors alone would give.

cost = [[0, 1], [20, 0]]
careful = BayesDecision(LogisticRegression(), priors=[0.99, 0.01], cost=cost).fit(X, y)
risk = careful.expected_cost(x_plot)
fig, ax_risk = plt.subplots(figsize=(6, 3.8), layout="constrained")
ax_risk.plot(x_plot, risk[:, 0], label="decide healthy")
ax_risk.plot(x_plot, risk[:, 1], label="decide disease")
ax_risk.axvline(threshold(careful), color="0.4", ls="--", lw=1)
ax_risk.set(xlabel="biomarker $x$", ylabel="expected cost", ylim=(0, 1.2),
            title="risk at prevalence 0.01, cost 20 : 1")
ax_risk.legend(fontsize="small")
plt.show()
print(f"prevalence 0.01, cost 20:1: threshold x* = {threshold(careful):.2f}")

# %%
# The threshold against the cost of a miss
# ----------------------------------------
# Raising the cost of a missed disease lowers the threshold (more people are sent for
# further tests); a rarer disease raises it. Costs and priors trade off exactly: a
# ten-fold cost of a miss undoes a ten-fold drop of the prevalence, since only the
# product ``pi'_1 L[1, 0]`` against ``pi'_0 L[0, 1]`` matters.

miss_costs = np.geomspace(1, 1000, 13)
fig, ax_thr = plt.subplots(figsize=(6, 3.8), layout="constrained")
for prevalence in prevalences:
    thresholds = [threshold(BayesDecision(LogisticRegression(),
                                          priors=[1 - prevalence, prevalence],
                                          cost=[[0, 1], [c, 0]]).fit(X, y))
                  for c in miss_costs]
    ax_thr.semilogx(miss_costs, thresholds, "o-", ms=3, label=f"prevalence {prevalence:g}")
ax_thr.set(xlabel="cost of a missed disease / cost of a false alarm",
           ylabel="threshold $x^*$", title="decision threshold")
ax_thr.legend(fontsize="small")
plt.show()

# %%
# What it buys
# ------------
# On a fresh population of 100,000 with 1 % prevalence, the average cost per person of
# three rules: the most probable class under the training priors (what ``predict`` of
# the model itself does), the most probable class under the true priors (right
# probabilities, but ignoring the costs: it almost never raises an alarm and misses most
# of the ill), and the Bayes decision for those priors and costs, which is the cheapest.

X_new, y_new = draw(99_000, 1_000)
cost = np.asarray(cost)
rules = {
    "training priors": LogisticRegression().fit(X, y),
    "true priors": BayesDecision(LogisticRegression(), priors=[0.99, 0.01]).fit(X, y),
    "priors and costs": careful,
}
for name, model in rules.items():
    decided = model.predict(X_new)
    misses = int(((decided == 0) & (y_new == 1)).sum())
    alarms = int(((decided == 1) & (y_new == 0)).sum())
    print(f"{name:17s} misses {misses:4d} of 1000, false alarms {alarms:5d}, "
          f"mean cost {cost[y_new, decided].mean():.4f}")
