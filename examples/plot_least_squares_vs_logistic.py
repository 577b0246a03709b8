"""
Least squares and logistic regression as classifiers
====================================================

Least squares can be used for classification: fit a linear function to 1-of-K target
codes and predict the class whose output is largest (Bishop 2006, *Pattern Recognition
and Machine Learning*, §4.1.3). Its sum-of-squares error, however, penalises predictions
that are "too correct": a point far on the right side of the boundary has a large output
and hence a large squared error, so a few such points pull the boundary towards them.
Logistic regression (§4.3.2) uses the cross-entropy error, under which a confidently
correct point costs almost nothing, and is hardly moved.

This reproduces Figure 4.4 of Bishop (2006): the same two classes without (left) and with
(right) a group of extra points far into the blue class's territory. The least-squares
boundary (magenta) swings; the logistic one (green) stays put.
"""

# %%
# Data
# ----
# Two overlapping Gaussian clouds, and twelve extra blue points at the bottom right,
# correctly classified by any sensible boundary.

import matplotlib.pyplot as plt
import numpy as np

from problin import LeastSquaresClassifier, LogisticRegression

rng = np.random.default_rng(2)
n = 50
X = np.vstack([rng.normal([-1.0, 1.0], 0.8, size=(n, 2)),
               rng.normal([1.0, -1.0], 0.8, size=(n, 2))])
y = np.repeat([0, 1], n)
outliers = rng.normal([6.0, -7.0], 0.6, size=(12, 2))
X_out = np.vstack([X, outliers])
y_out = np.concatenate([y, np.ones(len(outliers), dtype=int)])

# %%
# Fits and boundaries
# -------------------
# Both models are linear in ``x``, so each boundary is the line where its decision
# function is zero: for :class:`problin.LeastSquaresClassifier` the difference of the two
# fitted outputs, for :class:`problin.LogisticRegression` the log-odds.

g0, g1 = np.meshgrid(np.linspace(-4, 8, 300), np.linspace(-9, 4, 300))
grid = np.column_stack([g0.ravel(), g1.ravel()])

fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True, layout="constrained")
for ax, (data, labels), title in zip(axes, ((X, y), (X_out, y_out)),
                                     ("without outliers", "with outliers")):
    least_squares = LeastSquaresClassifier().fit(data, labels)
    logistic = LogisticRegression().fit(data, labels)
    for model, color in ((least_squares, "magenta"), (logistic, "tab:green")):
        ax.contour(g0, g1, model.decision_function(grid).reshape(g0.shape), levels=[0.0],
                   colors=color, linewidths=2)
    ax.plot(*data[labels == 0].T, "x", color="tab:red", ms=6)
    ax.plot(*data[labels == 1].T, "o", mfc="none", mec="tab:blue", ms=6)
    ax.set(xlim=(-4, 8), ylim=(-9, 4), aspect="equal", title=title, xlabel="$x_1$")
    errors = {name: int((m.predict(data) != labels).sum())
              for name, m in (("least squares", least_squares), ("logistic", logistic))}
    print(f"{title}: training errors {errors}")
axes[0].set_ylabel("$x_2$")
axes[0].plot([], [], color="magenta", label="least squares")
axes[0].plot([], [], color="tab:green", label="logistic regression")
axes[0].legend(loc="lower left")
fig.suptitle("Least squares against logistic regression (Bishop 2006, Fig. 4.4)")
plt.show()

# %%
# How far each model moved
# ------------------------
# The outliers are predicted with probability near one by the logistic model, so their
# gradient and curvature are negligible and its weights barely change; the
# least-squares weights change at first order.

for name, Model in (("least squares", LeastSquaresClassifier), ("logistic", LogisticRegression)):
    before, after = Model().fit(X, y), Model().fit(X_out, y_out)
    change = np.linalg.norm(after.coef_ - before.coef_) / np.linalg.norm(before.coef_)
    print(f"{name}: relative change of the weights {change:.2g}")
