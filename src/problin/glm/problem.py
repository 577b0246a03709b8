"""The fitting problem of a GLM classifier: validated data, design, prior and objective.

Shared by :mod:`problin.glm` and :mod:`problin.bayesian` (whose MAP is the same
penalised GLM fit with a proper prior on the intercepts). The backend is a
type: in-memory data give a :class:`~problin._core.model.design.Design` plus
class indices and weights; Dask input a :class:`~problin._dask.design.DaskDesign`,
which carries its own labels and weights and whose objectives run by
distributed passes.
"""
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.utils.validation import validate_data

from .._core.labels import encode_classes
from .._core.model.design import Design
from .._core.model.design_small import SmallDenseDesign, is_small_dense
from .._core.model.family_softmax import CategoricalSoftmax
from .._core.model.objective import GLMObjective, PriorPrecision
from .._core.model.objective_softmax import SoftmaxObjective
from .._core.validation import (
    check_class_weights,
    check_finite_magnitude,
    check_sample_weight,
    label_values,
)
from .._dask.chunks import is_dask
from .._dask.design import DaskDesign, dask_classifier_data
from .._dask.objective import DaskGLMObjective, DaskSoftmaxObjective
from .._frames import encode_frame

__all__ = [
    "ClassifierDesign",
    "parameter_blocks",
    "check_classifier_data",
    "classifier_design",
    "classifier_objective",
    "prior_precision",
]

#: The design of a classifier's training data, in memory or on Dask.
ClassifierDesign = Design | DaskDesign


def classifier_design(est: Any, X: Any, y: Any, sample_weight: Any, multiclass: bool,
                      intercept: bool, standardise: bool | str = False
                      ) -> tuple[ClassifierDesign, NDArray[np.intp] | None,
                                 NDArray[np.float64] | None]:
    """``(design, t, sw)`` of validated training data; sets ``est.classes_``.

    ``standardise``: the design works in the equilibrated, centred coordinates
    of :class:`~problin._core.model.basis.ColumnBasis` (results map back exactly);
    ``"centred"``: centred whenever dense (a prior on the intercept at the centre).

    Dask input gives a :class:`~problin._dask.design.DaskDesign`, which carries
    its labels and weights (``t`` and ``sw`` are None): the rows stay in their
    chunks, and the objectives of :func:`classifier_objective` on it read them
    by distributed passes.
    """
    if is_dask(X):
        design = dask_classifier_data(est, X, y, sample_weight, multiclass, intercept,
                                      classes=getattr(est, "classes", None),
                                      standardise=standardise)
        est.classes_ = design.classes
        return design, None, None
    X, t, sw = check_classifier_data(est, X, y, sample_weight, multiclass)
    if standardise:
        centre = "always" if standardise == "centred" else "auto"
        kind = SmallDenseDesign if is_small_dense(X, intercept) else Design
        return kind.standardised(X, intercept, sample_weight=sw, centre=centre), t, sw
    return Design(X, intercept), t, sw


def check_classifier_data(est: Any, X: Any, y: Any, sample_weight: Any, multiclass: bool
                          ) -> tuple[Any, NDArray[np.intp], NDArray[np.float64] | None]:
    """Validate a classifier's training data: returns ``(X, t, sw)`` and sets ``classes_``.

    ``t`` holds class indices ``0..K-1`` (the order of ``est.classes_``, fixed
    by ``est.classes`` where the estimator has that parameter); ``sw`` the
    validated sample weights or None. K > 2 is an error unless ``multiclass``.
    """
    y = label_values(y)
    # X's finiteness is checked below, on both cores (scikit-learn's check
    # reads it on one: ~14 ms per 400 MB); y's by validate_data.
    X = encode_frame(est, X, True)
    plain = _plain_arrays(est, X, y)
    if plain is None:
        X, y = validate_data(est, X, y, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], y_numeric=False,
                             ensure_all_finite=False)
    else:
        X, y = plain
    if sp.issparse(X):
        X = X.tocsr()
    check_finite_magnitude(X, est)  # NaN, infinity, or values whose squares overflow
    name = type(est).__name__
    est.classes_, t = encode_classes(y, getattr(est, "classes", None), owner=name)
    if est.classes_.size > 2 and not multiclass:
        raise ValueError(f"Only binary classification is supported. {name} got y with "
                         f"{est.classes_.size} classes: {est.classes_[:10].tolist()}")
    sw = check_sample_weight(sample_weight, X.shape[0])
    check_class_weights(t, sw, est.classes_, why="their parameters would be minus infinity")
    return X, t, sw


def _plain_arrays(est: Any, X: Any, y: Any) -> tuple[Any, Any] | None:
    """``validate_data``'s answer where ``X`` and ``y`` already are what it returns (a 2-D
    float ndarray and a 1-D numeric one, non-empty, of one length, y finite), recording
    what it records (the width; no feature names); None otherwise, for the full check and
    its error messages. scikit-learn's check costs ~0.1 ms, a tenth of a small fit."""
    if not (type(X) is np.ndarray and type(y) is np.ndarray and X.ndim == 2 and y.ndim == 1
            and X.dtype in (np.float64, np.float32) and y.dtype.kind in "biuf"
            and X.shape[0] == y.shape[0] >= 1 and X.shape[1] >= 1):
        return None
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        return None
    est.__dict__.pop("feature_names_in_", None)
    est.n_features_in_ = X.shape[1]
    return X, y


def _contrasts(alpha: float) -> bool:
    """Whether a softmax is parametrised by the K-1 contrasts against the first class
    (without a prior, which alone identifies all K blocks)."""
    return alpha == 0


def parameter_blocks(n_classes: int, alpha: float) -> int:
    """The parameter blocks of :func:`classifier_objective`'s objective, each one
    coefficient per column of ``[1, X]``: one for two classes, else K-1 contrasts
    without a prior and K with one."""
    return 1 if n_classes == 2 else n_classes - int(_contrasts(alpha))


def classifier_objective(design: ClassifierDesign, family: Any, t: NDArray[np.intp] | None,
                         sw: NDArray[np.float64] | None, n_classes: int, alpha: float, *,
                         information: str = "observed", intercept_alpha: float = 0.0,
                         offset: NDArray[np.float64] | None = None
                         ) -> tuple[Any, NDArray[np.float64]]:
    """The negative log-posterior of a GLM classifier and its starting point.

    Binary: ``family`` on 0/1 targets; K > 2: softmax with the K-1 contrasts
    against the first class when unpenalised (identifiable), all K blocks
    when ``alpha > 0`` (Bishop 2006, section 4.3.4). The prior is
    :func:`prior_precision`'s. On a :class:`~problin._dask.design.DaskDesign`
    the objectives run by distributed passes (``t`` and ``sw`` unused: the
    design holds them). ``offset``: a known term of the binary linear
    predictor (in-memory data only).
    """
    objective: Any
    if offset is not None and (n_classes != 2 or isinstance(design, DaskDesign)):
        raise ValueError("offset is supported for binary models on in-memory data only: "
                         "softmax probabilities do not change when one offset is added to "
                         "every logit, and Dask input would need the offset in its chunks")
    if n_classes == 2:
        prior = prior_precision(design, 1, alpha, intercept_alpha)
        if isinstance(design, DaskDesign):
            objective = DaskGLMObjective(design, family, prior, information=information)
        else:
            assert t is not None, "in-memory designs come with their class indices"
            y01 = t.astype(np.float64)
            objective = GLMObjective(design, family, y01, sw, prior, information=information,
                                     offset=offset)
        theta0 = np.zeros(design.n_params)
        if design.intercept:  # the intercept of the class frequencies
            if isinstance(design, DaskDesign):
                mean = float(design.class_weights[1] / design.total_weight)
            else:  # (np.average and np.clip cost ~10 us of a 0.6 ms fit)
                mean = float(y01.sum() / y01.size if sw is None else (sw @ y01) / sw.sum())
            theta0[0] = float(family.link(np.float64(min(max(mean, 1e-10), 1.0 - 1e-10))))
            if offset is not None:
                theta0[0] -= float(np.average(offset, weights=sw))
        return objective, theta0
    softmax = CategoricalSoftmax(n_classes, contrast=_contrasts(alpha))
    M, p = softmax.n_free, design.n_params
    prior = prior_precision(design, M, alpha, intercept_alpha)
    counts: Any  # the weight of each class (only needed with an intercept)
    if isinstance(design, DaskDesign):
        objective = DaskSoftmaxObjective(design, softmax, prior)
        counts = design.class_weights
    else:
        assert t is not None, "in-memory designs come with their class indices"
        objective = SoftmaxObjective(design, softmax, t, sw, prior)
        counts = np.bincount(t, weights=sw, minlength=n_classes) if design.intercept \
            else None
    start = np.zeros((M, p))
    if design.intercept:
        log_freq = np.log(counts)
        start[:, 0] = (log_freq[1:] - log_freq[0]) if softmax.contrast \
            else log_freq - log_freq.mean()
    return objective, start.ravel()


def prior_precision(design: ClassifierDesign, n_blocks: int, alpha: float,
                    intercept_alpha: float = 0.0) -> PriorPrecision | None:
    """``alpha I`` on the weights of each block, ``intercept_alpha`` on the intercepts.

    The GLMs leave intercepts unpenalised (``intercept_alpha = 0``). With all
    K softmax blocks free, adding a constant to every intercept changes no
    probability; ``c (sum_k b_k)^2 / 2`` pins the intercepts to sum zero (as
    scikit-learn's solution does) without moving any prediction or the
    optimum. ``covariance_`` is corrected for this term.
    """
    p = design.n_params
    if alpha == 0 and intercept_alpha == 0:
        return None
    diag = np.full(p, float(alpha))
    if design.intercept:
        diag[0] = float(intercept_alpha)
    basis = design.basis
    if basis is not None:  # alpha |w|^2 = sum_j alpha / s_j^2 w_z,j^2
        diag = basis.precision_to_standard(diag)  # (intercept_alpha: at the centre)
    rank_one = []
    if n_blocks > 1 and design.intercept:
        v = np.zeros(n_blocks * p)
        v[::p] = 1.0
        rank_one.append((v, 1.0))
    return PriorPrecision(np.tile(diag, n_blocks), rank_one)
