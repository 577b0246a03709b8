r"""
Fisher's linear discriminant
============================

Projecting two classes onto a line ``y = w^T x`` and thresholding is the simplest linear
classifier; the question is which line. The obvious choice, the direction joining the
class means, ignores how the classes are spread: when their covariance is strongly
non-diagonal, the projected classes overlap badly. Fisher's criterion maximises the
separation of the projected means relative to the within-class spread,

.. math::

    J(w) = \frac{w^T S_B w}{w^T S_W w}, \qquad
    w \propto S_W^{-1} (m_2 - m_1)

(Bishop 2006, *Pattern Recognition and Machine Learning*, §4.1.4, eqs. 4.26-4.30;
Fisher 1936). This reproduces Figure 4.6 of Bishop (2006): the left column projects onto
the line joining the means, the right column onto Fisher's direction, with histograms of
the projected classes below.
"""

# %%
# Data
# ----
# Two Gaussian classes sharing a covariance that is elongated along the diagonal, with
# means separated mostly across it.

import matplotlib.pyplot as plt
import numpy as np

from problin import FisherDiscriminant

rng = np.random.default_rng(0)
angle = np.pi / 4
R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
cov = R @ np.diag([2.0, 0.03]) @ R.T
n = 100
X = np.vstack([rng.multivariate_normal([-0.6, 0.0], cov, size=n),
               rng.multivariate_normal([0.6, 0.4], cov, size=n)])
y = np.repeat([0, 1], n)

# %%
# Two directions
# --------------
# :class:`problin.FisherDiscriminant` finds ``w ∝ S_W^-1 (m_2 - m_1)``, scaled so that the
# projected classes have unit pooled within-class variance (``components_``), and
# classifies by the threshold ``threshold_`` on ``transform(x)``. For a fair comparison
# the mean-difference direction is scaled the same way, so both projections are in units
# of the within-class standard deviation and the distance between the projected means
# is the separation ``sqrt(J)``.

fisher = FisherDiscriminant().fit(X, y)
m0, m1 = fisher.means_
S_W = sum(np.cov(X[y == k].T, bias=True) * n for k in (0, 1)) / len(X)  # pooled covariance
w_mean = (m1 - m0) / np.sqrt((m1 - m0) @ S_W @ (m1 - m0))
w_fisher = fisher.components_[0]

directions = {"the mean difference": w_mean, "Fisher's direction": w_fisher}
for name, w in directions.items():
    z = X @ w
    gap = z[y == 1].mean() - z[y == 0].mean()
    print(f"{name:20s} {np.round(w / np.linalg.norm(w), 3)}, "
          f"separation {gap:.2f} within-class sd")
print(f"Fisher threshold_ {fisher.threshold_:.4f}, training accuracy {fisher.score(X, y)}")

# %%
# The figure
# ----------
# Top: the data, the projection direction (arrow from the overall mean) and the
# resulting decision boundary, perpendicular to it through the midpoint of the projected
# means. Bottom: histograms of the projections ``w^T x``. Along the mean difference the
# classes overlap heavily; along Fisher's direction they overlap little.

centre = X.mean(axis=0)
fig, axes = plt.subplots(2, 2, figsize=(9, 7.5), height_ratios=[3, 1.4],
                         layout="constrained")
for column, (name, w) in enumerate(directions.items()):
    ax, hist = axes[:, column]
    z = X @ w
    threshold = (z[y == 0].mean() + z[y == 1].mean()) / 2
    ax.plot(*X[y == 0].T, ".", color="tab:red", ms=5)
    ax.plot(*X[y == 1].T, ".", color="tab:blue", ms=5)
    unit = w / np.linalg.norm(w)
    ax.annotate("", xy=centre + 1.5 * unit, xytext=centre,
                arrowprops={"arrowstyle": "-|>", "color": "k", "lw": 2})
    # boundary: {x : w^T x = threshold}, a line perpendicular to w
    along = np.array([-unit[1], unit[0]])
    base = unit * threshold / np.linalg.norm(w)
    ends = base + np.outer([-6, 6], along)
    ax.plot(ends[:, 0], ends[:, 1], color="tab:green", lw=2)
    ax.set(xlim=(-4.5, 4.5), ylim=(-4.5, 4.5), aspect="equal", title=f"projection on {name}",
           xlabel="$x_1$", ylabel="$x_2$")

    bins = np.linspace(z.min(), z.max(), 30)
    hist.hist(z[y == 0], bins=bins, color="tab:red", alpha=0.6)
    hist.hist(z[y == 1], bins=bins, color="tab:blue", alpha=0.6)
    hist.axvline(threshold, color="tab:green", lw=2)
    hist.set(xlabel=r"$w^T x$ (within-class sd)", yticks=[])
    print(f"{name}: {int(((z > threshold) != (y == 1)).sum())} training errors")
fig.suptitle("Fisher's linear discriminant (Bishop 2006, Fig. 4.6)")
plt.show()
