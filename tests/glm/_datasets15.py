"""Datasets bundled with statsmodels and scikit-learn for the issue-15 parity tests."""
import numpy as np
import pandas as pd
import statsmodels.api as sm
from sklearn.datasets import load_breast_cancer, load_wine


def spector():
    d = sm.datasets.spector.load_pandas()
    return d.exog[["GPA", "TUCE", "PSI"]], d.endog.to_numpy()


def fair():
    d = sm.datasets.fair.load_pandas().data
    X = d[["rate_marriage", "age", "yrs_married", "children", "religious", "educ"]]
    return X, (d["affairs"] > 0).astype(float).to_numpy()


def anes96_vote():
    d = sm.datasets.anes96.load_pandas().data
    return d[["logpopul", "selfLR", "age", "educ", "income"]], d["vote"].to_numpy()


def breast_cancer():
    data = load_breast_cancer(as_frame=True)
    X = data.data[["mean radius", "mean texture", "mean smoothness"]]
    return X, data.target.to_numpy().astype(float)


def anes96_party():
    d = sm.datasets.anes96.load_pandas().data
    return d[["logpopul", "selfLR", "age", "educ", "income"]], d["PID"].to_numpy()


def wine():
    X, y = load_wine(return_X_y=True, as_frame=True)
    return X[["alcohol", "malic_acid", "ash"]], y.to_numpy()


def fair_rating():
    d = sm.datasets.fair.load_pandas().data
    return d[["age", "yrs_married", "children", "religious", "educ"]], \
        d["rate_marriage"].to_numpy()


BINARY = {"spector": spector, "fair": fair, "anes96-vote": anes96_vote,
          "breast-cancer": breast_cancer}
SOFTMAX = {"anes96-party": anes96_party, "wine": wine, "fair-rating": fair_rating}


def design(X) -> np.ndarray:
    """``[1, X]`` as statsmodels takes it."""
    return sm.add_constant(np.asarray(X, dtype=np.float64), has_constant="add")


def weights(n: int) -> np.ndarray:
    """Integer frequency weights 0..3 (some rows dropped)."""
    return (np.arange(n) * 7 % 4).astype(np.float64)


__all__ = ["BINARY", "SOFTMAX", "design", "weights", "pd"]
