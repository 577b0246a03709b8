"""Bundled and synthetic datasets used by ``problin compare`` and the examples."""
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_digits,
    load_iris,
    load_wine,
)
from sklearn.utils import check_random_state

__all__ = ["make_heights", "load_dataset", "DATASETS", "DEFAULT_DATASETS"]


def make_heights(n_samples: int = 1000, *, random_state: int | np.random.RandomState | None = 0
                 ) -> tuple[pd.DataFrame, pd.Series]:
    """Synthetic heights (cm) of adults and their sex: one Gaussian feature per class.

    Class conditionals are Gaussian, ``height | female ~ N(164, 7^2)`` and
    ``height | male ~ N(178, 7.5^2)``, with equal priors: a 1-D problem where
    the Bayes classifier is known and the classes overlap.

    Returns
    -------
    X : DataFrame with one column ``height``
    y : Series named ``sex`` with values ``"female"``/``"male"``
    """
    rng = check_random_state(random_state)
    male = rng.random_sample(n_samples) < 0.5
    height = np.where(male, rng.normal(178.0, 7.5, n_samples), rng.normal(164.0, 7.0, n_samples))
    X = pd.DataFrame({"height": np.round(height, 1)})
    y = pd.Series(np.where(male, "male", "female"), name="sex")
    return X, y


def _breast_cancer() -> tuple[pd.DataFrame, pd.Series]:
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X, y.rename("malignant").map({0: "malignant", 1: "benign"})


def _diabetes() -> tuple[pd.DataFrame, pd.Series]:
    """scikit-learn's diabetes data: a continuous target (disease progression)."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X, y.astype("float64").rename("progression")


def _named_classes(loader: Callable[..., Any],
                   target: str) -> Callable[[], tuple[pd.DataFrame, pd.Series]]:
    """A scikit-learn classification dataset with its class names as labels."""
    def load() -> tuple[pd.DataFrame, pd.Series]:
        bunch = loader(as_frame=True)
        return bunch.data, pd.Series(np.asarray(bunch.target_names)[bunch.target], name=target)
    load.__doc__ = f"scikit-learn's {loader.__name__[5:]} data, labels by name."
    return load


DATASETS: dict[str, Callable[[], tuple[Any, Any]]] = {
    "breast-cancer": _breast_cancer,
    "iris": _named_classes(load_iris, "species"),
    "wine": _named_classes(load_wine, "cultivar"),
    "heights": make_heights,
    "diabetes": _diabetes,
    "digits": _named_classes(load_digits, "digit"),
}
# What ``problin compare`` runs with no arguments (digits, 10 classes x 64 features,
# takes minutes with every model: ask for it with --datasets digits).
DEFAULT_DATASETS = ("breast-cancer", "iris", "wine", "heights", "diabetes")


def load_dataset(name: str) -> tuple[Any, Any]:
    """``(X, y)`` of a bundled dataset by name (see ``DATASETS``)."""
    try:
        return DATASETS[name]()
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; choose from {sorted(DATASETS)}") from None
