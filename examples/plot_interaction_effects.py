r"""
What a coefficient means: effects through an interaction
========================================================

Extramarital affairs in 6,366 marriages (statsmodels' ``fair`` data, Fair 1978): the
probability that a woman reports any affair, by the rating of her marriage, her age, the
number of children and the years married, with an interaction of age and children,

.. math::

    \operatorname{logit} P(\text{affair}) = b + \beta_{\text{rate}} + w_1\,\text{age}
    + w_2\,\text{children} + w_3\,\text{age}\cdot\text{children} + w_4\,\text{years}.

The coefficient :math:`w_1` is not "the effect of age": age enters two columns, and the
probability is not linear in them. ``slopes`` differentiates the predicted probability with
respect to each *variable* through the formula, averages over the women in the data, and
gives delta-method standard errors (Williams 2012; Arel-Bundock 2024).
"""

# %%
# The fit and the average effect of each variable
# -----------------------------------------------

import matplotlib.pyplot as plt
import numpy as np
import statsmodels.api as sm

from problin import Formula, LogisticRegression

fair = sm.datasets.fair.load_pandas().data
fair["aff"] = (fair["affairs"] > 0).astype(int)
model = Formula("aff ~ C(rate_marriage) + age*children + yrs_married",
                LogisticRegression()).fit(fair)
print(model.slopes(fair).round(4))

# %%
# The per-column marginal effect of ``age`` (statsmodels' ``get_margeff``, problin's
# ``marginal_effects``) holds the column ``age:children`` fixed while ``age`` moves, which no
# woman can do: it is about a third of the variable's effect here.

print(model.marginal_effects(fair).loc[["age", "age:children"], ["dy/dx", "std_err"]].round(4))

# %%
# The effect of age depends on the number of children
# ---------------------------------------------------
# ``by=`` averages within groups; ``predictions(at=...)`` gives the average predicted
# probability with every woman set to the grid's values (the other variables as observed).

by_children = model.slopes(fair, variables="age", by="children")
ages = np.arange(18, 43, 2.0)
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
kids = by_children.index.get_level_values("children")
left.errorbar(kids, by_children["estimate"],
              yerr=[by_children["estimate"] - by_children["ci_low"],
                    by_children["ci_high"] - by_children["estimate"]], fmt="o", capsize=3)
left.axhline(0.0, color="grey", lw=0.8)
left.set(xlabel="children", ylabel="average d P(affair) / d age",
         title="slope of age within groups (95 % CI)")
for k in (0.0, 2.0, 4.0):
    grid = model.predictions(fair, at={"age": ages, "children": [k]})
    right.plot(ages, grid["estimate"], label=f"{k:g} children")
    right.fill_between(ages, grid["ci_low"], grid["ci_high"], alpha=0.2)
right.set(xlabel="age", ylabel="average predicted P(affair)",
          title="predictions on a grid (95 % CI)")
right.legend()
fig.tight_layout()
plt.show()
