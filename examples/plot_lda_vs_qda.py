"""
Linear and quadratic discriminant analysis
==========================================

Gaussian class-conditional densities ``p(x | C_k) = N(x | mu_k, Sigma_k)`` with class
priors ``pi_k`` give posterior probabilities ``p(C_k | x) ∝ pi_k N(x | mu_k, Sigma_k)``
(Bishop 2006, *Pattern Recognition and Machine Learning*, §4.2.1-4.2.2). If all classes
share one covariance, the quadratic terms ``x^T Sigma^-1 x`` cancel between classes and
the decision boundaries are straight lines: linear discriminant analysis (LDA). With a
covariance per class they do not cancel and the boundaries are conics: quadratic
discriminant analysis (QDA), Bishop's Figure 4.11 (right). See also Hastie, Tibshirani
and Friedman (2009), *The Elements of Statistical Learning*, §4.3.

Both are fitted by maximum likelihood in closed form, from the class means and
covariances. Here the three classes have very different covariances, so the shared
covariance of LDA is a poor compromise.
"""

# %%
# Data
# ----
# A broad round class, a narrow tilted one and a small tight one.

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from sklearn.metrics import accuracy_score, log_loss

from problin import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

rng = np.random.default_rng(1)
means = np.array([[0.0, 0.0], [2.5, 2.5], [-2.0, 2.5]])
covs = [np.array([[2.0, 0.0], [0.0, 2.0]]),
        np.array([[1.2, -0.9], [-0.9, 1.0]]),
        np.array([[0.15, 0.0], [0.0, 0.15]])]


def sample(n_per_class):
    X = np.vstack([rng.multivariate_normal(m, c, size=n_per_class)
                   for m, c in zip(means, covs)])
    return X, np.repeat([0, 1, 2], n_per_class)


X, y = sample(80)
X_test, y_test = sample(1000)

# %%
# Fits
# ----
# ``covariances_`` holds the fitted covariance of each class for QDA (shape ``(3, 2, 2)``)
# and the shared one for LDA (``(2, 2)``): the average of QDA's weighted by the class
# sizes. On held-out data QDA is both more accurate and, much more so, better calibrated
# (lower log-loss); its class-conditional densities also fit the data better (higher
# mean ``log p(x)``, ``score_samples``).

lda = LinearDiscriminantAnalysis().fit(X, y)
qda = QuadraticDiscriminantAnalysis().fit(X, y)
pooled = np.einsum("k,kij->ij", qda.priors_, qda.covariances_)
print("LDA covariance equals the pooled QDA covariances:",
      np.allclose(lda.covariances_, pooled))
for name, model in (("LDA", lda), ("QDA", qda)):
    print(f"{name}: test accuracy {accuracy_score(y_test, model.predict(X_test)):.3f}, "
          f"log-loss {log_loss(y_test, model.predict_proba(X_test)):.3f}, "
          f"mean log p(x) {model.score_samples(X_test).mean():.3f}")

# %%
# Decision regions
# ----------------
# The colours are the predicted class; the black lines are the contours
# ``max_k p(C_k | x) = 0.5, 0.9`` of the most probable class, which show where each
# model is confident. LDA's regions are bounded by straight lines and cut through the
# narrow class; QDA wraps an ellipse around the tight class and bends around the others.

g0, g1 = np.meshgrid(np.linspace(-5, 6, 300), np.linspace(-4, 6, 300))
grid = np.column_stack([g0.ravel(), g1.ravel()])
colors = ["tab:blue", "tab:orange", "tab:green"]
light = ListedColormap(["#c6dbef", "#fdd0a2", "#c7e9c0"])

fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True, layout="constrained")
for ax, (name, model) in zip(axes, (("linear (LDA)", lda), ("quadratic (QDA)", qda))):
    proba = model.predict_proba(grid)
    ax.pcolormesh(g0, g1, proba.argmax(axis=1).reshape(g0.shape), cmap=light,
                  shading="auto")
    ax.contour(g0, g1, proba.max(axis=1).reshape(g0.shape), levels=[0.5, 0.9],
               colors="k", linewidths=[0.8, 1.4])
    for k in range(3):
        ax.plot(*X[y == k].T, ".", color=colors[k], ms=5)
    ax.set(aspect="equal", title=name, xlabel="$x_1$")
axes[0].set_ylabel("$x_2$")
fig.suptitle("Discriminant analysis with unequal class covariances")
plt.show()
