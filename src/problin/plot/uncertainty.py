"""How uncertain a Bayesian classifier is about its linear predictor, over two features."""
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from ._base import Display
from ._data import columns_of, final_step, grid, jitter, plotted_features, subsample

__all__ = ["ActivationUncertaintyDisplay", "activation_std"]


class ActivationUncertaintyDisplay(Display):
    """The posterior standard deviation of the activation ``a = b + x^T w`` over two
    features (along one: a curve), the other features at their mean or mode. Small
    near the data, growing away from it: where the posterior predictive
    ``p(t | x, D)`` is pulled towards 1/2 (Bishop 2006, §4.5.2).

    Attributes: ``axes``, ``std`` (on the grid, shape ``(n, n)`` or ``(n,)``),
    ``feature_names``, ``points``; after :meth:`plot`, ``ax_``, ``figure_``.

    Examples
    --------
    >>> from problin import BayesianLogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import ActivationUncertaintyDisplay
    >>> X, y = load_dataset("breast-cancer")
    >>> model = BayesianLogisticRegression().fit(X.iloc[:, :4], y)
    >>> display = ActivationUncertaintyDisplay.from_estimator(model, X.iloc[:, :4])
    >>> bool((display.std > 0).all())
    True
    """

    def __init__(self, *, axes: list[np.ndarray], std: np.ndarray, feature_names: list[str],
                 points: np.ndarray | None = None, discrete: Sequence[bool] = (False, False)
                 ) -> None:
        self.axes, self.std, self.feature_names = axes, std, feature_names
        self.points, self.discrete = points, list(discrete)

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, *,
                       features: Sequence[int | str] | None = None, grid_resolution: int = 120,
                       max_points: int = 2000, ax: Axes | None = None
                       ) -> "ActivationUncertaintyDisplay":
        """Evaluate the activation's posterior sd over a grid and draw it.

        Parameters
        ----------
        estimator : fitted model or Pipeline
            With ``predict_activation`` (``BayesianLogisticRegression``) or a
            ``posterior_cov_`` over ``[intercept, coef...]``.
        X : DataFrame or ndarray of shape (n_samples, n_features)
        features : list of 1 or 2 names or indices, optional
            Default: :func:`problin.plot.default_features`.
        grid_resolution : int, default=120
        max_points : int, default=2000
            At most this many data points are drawn over it.
        ax : matplotlib Axes, optional

        Returns
        -------
        ActivationUncertaintyDisplay
        """
        cols = columns_of(X)
        chosen = plotted_features(estimator, cols, features)
        G, axes = grid(cols, chosen, grid_resolution if len(chosen) == 2 else 300)
        std = activation_std(estimator, cols.as_input(G))
        if std is None:
            raise TypeError(f"{type(final_step(estimator)).__name__} has no posterior "
                            "(predict_activation or posterior_cov_)")
        rows = subsample(len(cols.values), max_points)
        display = cls(axes=axes, std=std.reshape([len(a) for a in axes[::-1]]),
                      feature_names=[cols.names[j] for j in chosen],
                      points=cols.values[np.ix_(rows, np.asarray(chosen))],
                      discrete=[bool(cols.discrete[j]) for j in chosen])
        display.plot(ax)
        return display

    def _draw(self, ax: Axes) -> None:
        rng = np.random.default_rng(0)
        pts = self.points
        if len(self.axes) == 1:
            ax.plot(self.axes[0], self.std)
            if pts is not None:
                ax.plot(jitter(pts[:, 0], self.discrete[0], rng), np.zeros(len(pts)), "|",
                        color="k", alpha=0.3)
            ax.set_ylabel("posterior sd of the activation")
        else:
            filled = ax.contourf(self.axes[0], self.axes[1], self.std, levels=12,
                                 cmap="viridis")
            self.figure_.colorbar(filled, ax=ax, label="posterior sd of the activation")
            if pts is not None:
                ax.scatter(jitter(pts[:, 0], self.discrete[0], rng),
                           jitter(pts[:, 1], self.discrete[1], rng), s=6, color="w",
                           edgecolors="k", linewidths=0.3, alpha=0.6)
            ax.set_ylabel(self.feature_names[1])
        ax.set_xlabel(self.feature_names[0])
        ax.set_title("Posterior uncertainty of the activation")


def activation_std(model: Any, G: Any) -> np.ndarray | None:
    """Posterior sd of the activation at the rows ``G``: the model's
    ``predict_activation`` (the largest over the class logits for K > 2), else
    ``sqrt(x~^T S x~)``, ``x~ = [1, x]``, from ``posterior_cov_`` (ordered ``[intercept,
    coef...]``); None for a model without a posterior."""
    est = final_step(model)
    Z = model[:-1].transform(G) if hasattr(model, "steps") else G
    if hasattr(est, "predict_activation"):
        var = np.asarray(est.predict_activation(Z)[1], dtype=np.float64)
        return np.sqrt(np.clip(var if var.ndim == 1 else var.max(axis=1), 0.0, None))
    cov = getattr(est, "posterior_cov_", None)
    Z = np.asarray(Z, dtype=np.float64)
    if cov is None or np.shape(cov) != (Z.shape[1] + 1,) * 2:
        return None
    Zt = np.column_stack([np.ones(len(Z)), Z])
    return np.sqrt(np.clip(np.einsum("ij,jk,ik->i", Zt, cov, Zt), 0.0, None))
