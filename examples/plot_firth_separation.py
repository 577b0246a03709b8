r"""
Separated data: Firth's penalised likelihood, profile intervals and FLIC
=========================================================================

A small study: 80 patients, their age, a binary marker and whether an event occurred.
Every patient with the marker had the event, so the marker's log odds ratio has no
maximum-likelihood estimate: the likelihood keeps rising as the coefficient grows
(quasi-separation, Albert & Anderson 1984). Firth's penalty (the Jeffreys prior,
Firth 1993) maximises

.. math::

    \ell^*(\beta) = \ell(\beta) + \tfrac12 \log |I(\beta)| ,

whose estimates are always finite. Wald intervals, symmetric around the estimate, are
poor near such a boundary; logistf (Heinze & Schemper 2002) reports profile
penalised-likelihood intervals and penalised likelihood-ratio tests instead. Firth's
predictions are pulled towards ½, so that their mean exceeds the event rate of a rare
outcome; FLIC refits the intercept so that it matches (Puhr et al. 2017).
"""

# %%
# Maximum likelihood diverges
# ---------------------------
# The fit warns and stops with a large coefficient and a huge standard error: its Wald
# interval spans tens of thousands. The profile interval of the marker has a finite
# lower bound and none above (``inf``): the likelihood never falls to the cut-off.

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from problin import LogisticRegression, SeparationWarning

rng = np.random.default_rng(7)
n = 80
age = rng.normal(size=n)
marker = (rng.random(n) < 0.15).astype(float)
event = (rng.random(n) < 1 / (1 + np.exp(2.5 - 0.8 * age))).astype(float)
event[marker == 1] = 1.0  # (every marker carrier had the event)
X = pd.DataFrame({"age": age, "marker": marker})
names = ["intercept", "age", "marker"]

with warnings.catch_warnings():
    warnings.simplefilter("ignore", SeparationWarning)
    ml = LogisticRegression(alpha=0.0).fit(X, event)
ml_profile = ml.summary(ci="profile", X=X, y=event)
print(ml_profile[["coef", "std_err", "ci_low", "ci_high"]])

# %%
# Firth's fit: finite estimates, profile intervals, penalised LR tests
# --------------------------------------------------------------------
# ``summary(ci="profile", pvalues="lr", X=X, y=y)`` is logistf's summary: each bound
# refits the model with one coefficient fixed, each p-value compares the penalised
# likelihood with the coefficient at 0 (the full model's penalty kept).

firth = LogisticRegression(penalty="firth").fit(X, event)
print(firth.summary_text(ci="profile", pvalues="lr", X=X, y=event))
firth_wald = firth.summary()
firth_profile = firth.summary(ci="profile", X=X, y=event)

# %%
# The intervals side by side: the ML intervals of the marker run off the plot (the
# Wald one both ways, the profile one upwards), Firth's Wald interval is symmetric, and
# its profile interval is skewed towards large effects, where the penalised likelihood
# is flat.

fig, ax = plt.subplots(figsize=(7, 3.2))
rows = [("ML, Wald", ml.summary(), "tab:gray"), ("ML, profile", ml_profile, "k"),
        ("Firth, Wald", firth_wald, "tab:blue"), ("Firth, profile", firth_profile, "tab:orange")]
for k, (label, table, color) in enumerate(rows):
    at = np.arange(3) + (k - 1.5) * 0.18
    low, high = np.clip(table["ci_low"], -8, 12), np.clip(table["ci_high"], -8, 12)
    ax.hlines(at, low, high, color=color, lw=3, label=label)
    ax.plot(np.clip(table["coef"], -8, 12), at, "o", color=color)
ax.set_yticks(range(3), names)
ax.set_xlim(-8, 12)
ax.axvline(0, color="k", lw=0.5)
ax.set_xlabel("log odds (95% interval; clipped at the edges)")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()

# %%
# Predicted risks: ML, Firth and FLIC
# -----------------------------------
# Without the marker, ML and Firth agree closely; with it, ML predicts certainty.
# Firth's mean predicted risk exceeds the observed event rate; FLIC's equals it.

flic = LogisticRegression(penalty="flic").fit(X, event)
grid = np.linspace(-2.5, 2.5, 101)
fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True)
for ax, m in zip(axes, (0.0, 1.0)):
    rows_at = pd.DataFrame({"age": grid, "marker": np.full_like(grid, m)})
    for label, model, style in (("ML", ml, ":"), ("Firth", firth, "-"), ("FLIC", flic, "--")):
        ax.plot(grid, model.predict_proba(rows_at)[:, 1], style, label=label)
    seen = marker == m
    ax.plot(age[seen], event[seen], "|", color="k", ms=8)
    ax.set_title(f"marker = {int(m)}")
    ax.set_xlabel("age (standardised)")
axes[0].set_ylabel("P(event)")
axes[0].legend(fontsize=8)
fig.tight_layout()

for label, model in (("ML", ml), ("Firth", firth), ("FLIC", flic)):
    print(f"{label:6s} mean predicted risk {model.predict_proba(X)[:, 1].mean():.4f}")
print(f"observed event rate       {event.mean():.4f}")
plt.show()
