"""The report's plots, drawn with matplotlib's object API on the Agg canvas (no pyplot,
no global backend change) and returned as base64-encoded PNG ``data:`` URIs.

Every function takes the fitted model (an estimator or a Pipeline) and plain arrays and
returns a data URI, or ``None`` when the plot does not apply.
"""
import base64
import inspect
import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from sklearn.metrics import auc, roc_curve

from .tables import final_estimator

__all__ = ["confusion_plot", "roc_plot", "calibration_plot", "regions_plot",
           "uncertainty_plot", "regression_plot", "trace_plot", "to_data_uri"]

_MAX_POINTS = 2000


def _figure(width: float = 5.2, height: float = 4.0) -> Figure:
    fig = Figure(figsize=(width, height), dpi=96, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def to_data_uri(fig: Figure) -> str:
    """A PNG ``data:`` URI of a matplotlib Figure."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _subsample(n: int, rng: int = 0) -> np.ndarray:
    if n <= _MAX_POINTS:
        return np.arange(n)
    return np.sort(np.random.default_rng(rng).choice(n, _MAX_POINTS, replace=False))


def confusion_plot(classes: Sequence[Any], y: np.ndarray, pred: np.ndarray) -> str:
    """Confusion matrix: counts of true (rows) against predicted (columns) classes."""
    k = len(classes)
    index = {c: i for i, c in enumerate(classes)}
    counts = np.zeros((k, k), dtype=np.int64)
    np.add.at(counts, ([index[v] for v in y], [index[v] for v in pred]), 1)
    fig = _figure()
    ax = fig.add_subplot()
    ax.imshow(counts, cmap="Blues")
    for i in range(k):
        for j in range(k):
            dark = counts[i, j] > counts.max() / 2
            ax.text(j, i, str(counts[i, j]), ha="center", va="center",
                    color="white" if dark else "black")
    labels = [str(c) for c in classes]
    ax.set_xticks(range(k), labels, rotation=45 if k > 4 else 0)
    ax.set_yticks(range(k), labels)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    ax.set_title("Confusion matrix")
    return to_data_uri(fig)


def _scores(model: Any, X: Any) -> np.ndarray | None:
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    if hasattr(model, "decision_function"):
        s = np.asarray(model.decision_function(X), dtype=np.float64)
        return np.column_stack([-s, s]) if s.ndim == 1 else s
    return None


def roc_plot(model: Any, X: Any, y: np.ndarray, classes: Sequence[Any]) -> str | None:
    """ROC curve (binary) or one-vs-rest ROC curves (K > 2), with the areas under them."""
    scores = _scores(model, X)
    if scores is None:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    pairs = [(1, classes[1])] if len(classes) == 2 else list(enumerate(classes))
    for k, c in pairs:
        truth = np.asarray(y) == c
        if truth.all() or not truth.any():
            continue
        fpr, tpr, _ = roc_curve(truth, scores[:, k])
        ax.plot(fpr, tpr, label=f"{c} (AUC {auc(fpr, tpr):.3f})")
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title("ROC curve" + ("s (one vs rest)" if len(classes) > 2 else ""))
    ax.legend(loc="lower right", fontsize="small")
    return to_data_uri(fig)


def calibration_plot(proba: np.ndarray | None, y: np.ndarray, classes: Sequence[Any],
                     n_bins: int = 10) -> str | None:
    """Reliability diagram: mean predicted probability against observed frequency, in
    equal-width bins (binary: of the second class; K > 2: of the predicted class)."""
    if proba is None:
        return None
    y = np.asarray(y)
    if len(classes) == 2:
        p, hit, what = proba[:, 1], y == classes[1], f"p({classes[1]})"
    else:
        top = np.argmax(proba, axis=1)
        p, hit, what = proba[np.arange(len(y)), top], y == np.asarray(classes)[top], \
            "confidence (top class)"
    bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    used = counts > 0
    mean_p = np.bincount(bins, weights=p, minlength=n_bins)[used] / counts[used]
    freq = np.bincount(bins, weights=hit.astype(float), minlength=n_bins)[used] / counts[used]
    fig = _figure()
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="perfect")
    ax.plot(mean_p, freq, marker="o", label="model")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(f"mean predicted {what}")
    ax.set_ylabel("observed frequency")
    ax.set_title("Calibration")
    ax.legend(loc="upper left", fontsize="small")
    return to_data_uri(fig)


def grid_frame(X: np.ndarray, names: list[str], features: Sequence[int],
               n: int = 120) -> tuple[np.ndarray, list[np.ndarray]]:
    """A grid over two features (all others held at their mean) and its axes."""
    X = np.asarray(X, dtype=np.float64)
    axes = []
    for j in features:
        lo, hi = np.min(X[:, j]), np.max(X[:, j])
        pad = 0.05 * (hi - lo) if hi > lo else 1.0
        axes.append(np.linspace(lo - pad, hi + pad, n))
    G = np.tile(X.mean(axis=0), (n ** len(features), 1))
    mesh = np.meshgrid(*axes)
    for j, m in zip(features, mesh):
        G[:, j] = m.ravel()
    return G, axes


def _as_input(model: Any, G: np.ndarray, names: list[str]) -> Any:
    return pd.DataFrame(G, columns=names) if hasattr(model, "feature_names_in_") else G


def regions_plot(model: Any, X: np.ndarray, y: np.ndarray | None, names: list[str],
                 features: Sequence[int], classes: Sequence[Any]) -> str | None:
    """Decision regions and class-probability contours over two features (one feature:
    the class probabilities along it), the other features held at their mean."""
    X = np.asarray(X, dtype=np.float64)
    idx = _subsample(len(X))
    fig = _figure()
    ax = fig.add_subplot()
    y = None if y is None else np.asarray(y)
    if len(features) == 1:
        G, (xs,) = grid_frame(X, names, features, 300)
        proba = _scores(model, _as_input(model, G, names))
        if proba is None or not hasattr(model, "predict_proba"):
            return None
        for k, c in enumerate(classes):
            ax.plot(xs, proba[:, k], label=f"p({c} | x)")
        if y is not None:
            for k, c in enumerate(classes):
                rows = idx[y[idx] == c]
                ax.plot(X[rows, features[0]], np.full(len(rows), -0.04 - 0.03 * k), "|",
                        color=f"C{k % 10}", alpha=0.4)
        ax.set_xlabel(names[features[0]])
        ax.set_ylabel("posterior probability")
        ax.set_title("Class probabilities")
        ax.legend(fontsize="small")
        return to_data_uri(fig)
    G, (xs, ys) = grid_frame(X, names, features)
    Gin = _as_input(model, G, names)
    pred = np.asarray(model.predict(Gin))
    codes = np.searchsorted(np.asarray(classes), pred).reshape(len(ys), len(xs))
    colours = [f"C{k % 10}" for k in range(len(classes))]
    ax.contourf(xs, ys, codes, levels=np.arange(len(classes) + 1) - 0.5,
                cmap=ListedColormap(colours), alpha=0.25)
    if hasattr(model, "predict_proba"):
        p = model.predict_proba(Gin)
        z = p[:, 1] if len(classes) == 2 else p.max(axis=1)
        cs = ax.contour(xs, ys, z.reshape(len(ys), len(xs)),
                        levels=[0.1, 0.25, 0.5, 0.75, 0.9], colors="k", linewidths=0.7)
        ax.clabel(cs, fontsize="x-small")
    if y is not None:
        for k, c in enumerate(classes):
            rows = idx[y[idx] == c]
            ax.scatter(X[rows, features[0]], X[rows, features[1]], s=10, label=str(c),
                       color=colours[k], edgecolors="k", linewidths=0.3)
        ax.legend(fontsize="small", loc="best")
    what = f"p({classes[1]})" if len(classes) == 2 else "max class probability"
    ax.set_title(f"Decision regions, contours of {what}")
    ax.set_xlabel(names[features[0]])
    ax.set_ylabel(names[features[1]])
    return to_data_uri(fig)


def _activation_std(model: Any, G: np.ndarray) -> np.ndarray | None:
    """Posterior std of the activation (linear predictor) over the rows of ``G``: the
    model's ``predict_activation`` (largest over the class logits for K > 2), else
    ``sqrt(x~^T S x~)``, ``x~ = [1, x]``, from ``posterior_cov_`` (ordered ``[intercept,
    coef...]``, docs/design.md); ``None`` for models without a posterior."""
    est = final_estimator(model)
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


def uncertainty_plot(model: Any, X: np.ndarray, y: np.ndarray | None, names: list[str],
                     features: Sequence[int]) -> str | None:
    """Predictive uncertainty of a Bayesian model: regression, mean ± 2 predictive std
    along one feature; binary classification, the posterior std of the activation over
    two features. ``None`` for models without a posterior."""
    est = final_estimator(model)
    X = np.asarray(X, dtype=np.float64)
    fig = _figure()
    ax = fig.add_subplot()
    if "return_std" in inspect.signature(est.predict).parameters:
        G, (xs,) = grid_frame(X, names, features[:1], 300)
        mean, std = model.predict(_as_input(model, G, names), return_std=True)
        ax.fill_between(xs, mean - 2 * std, mean + 2 * std, alpha=0.3, label="± 2 std")
        ax.plot(xs, mean, label="predictive mean")
        if y is not None:
            idx = _subsample(len(X))
            ax.scatter(X[idx, features[0]], np.asarray(y)[idx], s=8, color="k", alpha=0.5,
                       label="data")
        ax.set_xlabel(f"{names[features[0]]} (other features at their mean)")
        ax.set_ylabel("prediction")
        ax.set_title("Predictive distribution")
        ax.legend(fontsize="small")
        return to_data_uri(fig)
    if len(features) == 1:
        G, (xs,) = grid_frame(X, names, features, 300)
        s = _activation_std(model, _as_input(model, G, names))
        if s is None:
            return None
        ax.plot(xs, s)
        ax.plot(X[_subsample(len(X)), features[0]], np.zeros(min(len(X), _MAX_POINTS)), "|",
                color="k", alpha=0.3)
        ax.set_xlabel(names[features[0]])
        ax.set_ylabel("posterior std of the activation")
        ax.set_title("Posterior uncertainty")
        return to_data_uri(fig)
    G, (xs, ys) = grid_frame(X, names, features)
    s = _activation_std(model, _as_input(model, G, names))
    if s is None:
        return None
    cs = ax.contourf(xs, ys, s.reshape(len(ys), len(xs)), levels=12, cmap="viridis")
    fig.colorbar(cs, ax=ax, label="posterior std of the activation")
    idx = _subsample(len(X))
    ax.scatter(X[idx, features[0]], X[idx, features[1]], s=6, color="w", edgecolors="k",
               linewidths=0.3)
    ax.set_xlabel(names[features[0]])
    ax.set_ylabel(names[features[1]])
    ax.set_title("Posterior uncertainty")
    return to_data_uri(fig)


def regression_plot(y: np.ndarray, pred: np.ndarray, kind: str) -> str:
    """``kind="actual"``: predicted against actual values; ``"residuals"``: residuals
    against predicted values."""
    y, pred = np.asarray(y, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    idx = _subsample(len(y))
    fig = _figure()
    ax = fig.add_subplot()
    if kind == "actual":
        ax.scatter(y[idx], pred[idx], s=10, alpha=0.6)
        lo, hi = min(y.min(), pred.min()), max(y.max(), pred.max())
        ax.plot([lo, hi], [lo, hi], color="grey", linestyle=":")
        ax.set_xlabel("actual")
        ax.set_ylabel("predicted")
        ax.set_title("Predicted against actual")
    else:
        ax.scatter(pred[idx], (y - pred)[idx], s=10, alpha=0.6)
        ax.axhline(0.0, color="grey", linestyle=":")
        ax.set_xlabel("predicted")
        ax.set_ylabel("residual (actual - predicted)")
        ax.set_title("Residuals")
    return to_data_uri(fig)


def trace_plot(history: Sequence[float] | np.ndarray | None, label: str) -> str | None:
    """The optimiser's trace: ``history_`` per iteration (log scale when positive)."""
    h = np.asarray(history, dtype=np.float64).ravel()
    h = h[np.isfinite(h)]
    if h.size < 2:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    ax.plot(np.arange(1, h.size + 1), h, marker="o" if h.size < 40 else None, markersize=3)
    if np.all(h > 0) and h.max() / h.min() > 20:
        ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel(label)
    ax.set_title("Optimiser trace")
    return to_data_uri(fig)
