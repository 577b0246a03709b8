"""The parameter layout of a classification family: its blocks, scores and start.

A classifier's family decides more than the per-row loss: how many parameter
blocks of ``[1, X]``'s columns it has (one linear predictor for a binary family,
K-1 contrasts or K free blocks for softmax), what its decision function returns
(one log-odds per row, or K logits), which class a score predicts, its start
values and its intercept-only model, what the separation diagnostics test
(the one split, or each class against the rest) and the rows' score vectors of a
robust covariance. Every answer that differs between binary and softmax is a
method of the layout here, so the estimators never branch on the two:

* :class:`OnePredictor`, mixed into the binary families (``families._Bernoulli``):
  one block, one score per row, ``F(eta)`` for the second class;
* :class:`ClassBlocks`, mixed into :class:`~problin._core.model.family_softmax.CategoricalSoftmax`.

Objects are built per data source and per layout (a binary GLM objective or a
softmax one, in memory or on Dask) by double dispatch: the family calls the case
of :class:`LayoutCases` that is its own (:meth:`OnePredictor.on_layout`), which
the data source implements, so neither tests the other's type.

:class:`ClassLayout` is the same idea for the discriminants, whose scores are one
column per class: the binary decision function is the difference of the two.
"""
from collections.abc import Callable
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..numerics import log_softmax
from ..types import FloatArray
from .separation import newton_certifies_overlap

__all__ = ["gradient_certainty", "ClassBlocks", "ClassCounts", "ClassLayout", "Layout", "LayoutCases", "ONE_PREDICTOR",
           "OnePredictor",
           "SoftmaxRows", "class_layout"]

_T = TypeVar("_T", covariant=True)
IntArray = NDArray[np.intp]


class SoftmaxRows(Protocol):
    """The softmax family's row state (``family_softmax.SoftmaxState``), as read here."""

    def observed_complements(self) -> FloatArray: ...

    def gradient_weights(self) -> FloatArray: ...


class LayoutCases(Protocol[_T]):
    """The two layouts, as the caller builds its object for each (double dispatch)."""

    def one_predictor(self) -> _T: ...

    def class_blocks(self) -> _T: ...


class ClassCounts(Protocol):
    """What a family's start values and null model ask of its training rows."""

    def positive_fraction(self) -> float:
        """The weighted share of the second class (binary targets)."""
        ...

    def binary_totals(self) -> FloatArray:
        """``[total weight - weight of class 1, weight of class 1]``."""
        ...

    def class_weights(self) -> FloatArray:
        """The total weight of each class."""
        ...


def gradient_certainty(g: FloatArray, sample_weight: FloatArray | None) -> FloatArray:
    """``|g_i| / s_i``: a one-predictor row's ``1 - p`` of its observed class (the
    logit's; the probit's inverse Mills ratio), ~0 where it is fitted with certainty."""
    return np.abs(g) if sample_weight is None else \
        np.abs(g) / np.where(sample_weight > 0, sample_weight, np.inf)


class OnePredictor:
    """The layout of a binary family: one linear predictor ``eta``, the log-odds-like
    score of the second class (``p = F(eta)``)."""

    #: parameter blocks of ``[1, X]``'s columns
    n_blocks = 1
    #: columns of the decision function (None: one value per row)
    score_columns: int | None = None
    #: columns of the per-block values of a row (None: one value per row)
    predictor_columns: int | None = None
    #: whether a first class's block is fixed at 0 (softmax contrasts only)
    reference_class = False

    def link(self, p: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - each binary family's own

    def log_proba(self, eta: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - each binary family's own

    def on_layout(self, cases: LayoutCases[_T]) -> _T:
        return cases.one_predictor()

    def start(self, counts: ClassCounts, n_params: int, intercept: bool) -> FloatArray:
        """The start: zero weights, the intercept of the class frequencies."""
        theta0 = np.zeros(n_params)
        if intercept:
            mean = counts.positive_fraction()
            p = np.asarray(np.float64(min(max(mean, 1e-10), 1.0 - 1e-10)))
            theta0[0] = float(self.link(p))
        return theta0

    def class_totals(self, counts: ClassCounts) -> FloatArray:
        """The total weight of each class (the intercept-only model's closed form)."""
        return counts.binary_totals()

    def add_offset(self, scores: FloatArray, offset: FloatArray) -> FloatArray:
        """The decision function with the rows' known term of the linear predictor."""
        return scores + offset

    def require_one_predictor(self, message: str) -> None:
        """Raise ``ValueError(message)`` unless the model has one linear predictor."""
        return None

    def decision_scores(self, eta: FloatArray,
                        reference: Callable[[], tuple[IntArray, FloatArray]]) -> FloatArray:
        """The decision function from the n x 1 linear predictors: one value per row."""
        return eta[:, 0]

    def predictors(self, A: FloatArray) -> FloatArray:
        """Per-block values of the rows (n x 1: linear predictors, their variances)
        as predictions return them: one value per row."""
        return A[:, 0]

    def scores_log_proba(self, scores: FloatArray) -> FloatArray:
        """``(n, 2)`` log class probabilities from the decision function."""
        return self.log_proba(scores)

    def predicted_index(self, scores: FloatArray) -> IntArray:
        """The index of the most probable class: the second where ``eta > 0``."""
        return (scores > 0).astype(int)

    def row_certainty(self, derivatives: tuple[float, FloatArray, FloatArray],
                      sample_weight: FloatArray | None) -> FloatArray:
        """``1 - p`` of each row's observed class (~0 where it is fitted with certainty),
        read off the row derivatives ``(loss, g, h)``: ``|g_i| / s_i`` (the logit's
        ``1 - p_i``, the probit's inverse Mills ratio)."""
        return gradient_certainty(derivatives[1], sample_weight)

    def separation_splits(self, t: IntArray, classes: np.ndarray
                          ) -> dict[object, FloatArray]:
        """The binary targets whose separation is checked: the one split (label None)."""
        return {None: t.astype(np.float64)}

    def certificate_margins(self, eta: FloatArray,
                            direction: Callable[[], FloatArray | None]) -> list[FloatArray]:
        """Margins that may certify the split's separation without a linear program:
        the fit's linear predictor and the solver's last direction ``X d``."""
        Xd = direction()
        return [eta] if Xd is None else [eta, Xd]

    def newton_overlap(self, t: IntArray, eta: FloatArray, sample_weight: FloatArray | None,
                       step: Callable[[FloatArray, FloatArray], FloatArray]) -> bool:
        """Whether one Newton step from ``eta`` proves that the classes overlap
        (:func:`~problin._core.model.separation.newton_certifies_overlap`); ``step(g, h)``:
        the linear predictor of the step ``-(sum h_i x_i x_i^T)^-1 sum g_i x_i`` for the
        rows' gradient weights ``g`` and curvatures ``h``."""
        _, g, h = self.derivatives(t.astype(np.float64), eta, sample_weight, "observed")
        used = None if sample_weight is None else sample_weight > 0
        return newton_certifies_overlap(g, h, step(g, h), used)

    def score_weights(self, t: IntArray, eta: FloatArray, sample_weight: FloatArray | None
                      ) -> tuple[FloatArray, FloatArray | None]:
        """``(G, h)``: each row's gradient weights, one column per block, and its
        curvature (for the leverages of HC2/HC3)."""
        _, g, h = self.derivatives(t.astype(np.float64), eta, sample_weight, "observed")
        return g[:, None], h

    def derivatives(self, y: np.ndarray, eta: np.ndarray, sample_weight: np.ndarray | None,
                    information: str) -> tuple[float, np.ndarray, np.ndarray]:
        raise NotImplementedError  # pragma: no cover - each binary family's own

    def block_labels(self, classes: np.ndarray, n_blocks: int) -> list[object]:
        """The class of each parameter block in the names of the parameters (None:
        the parameters are named by their columns alone)."""
        return [None]



#: The layout of every family with one linear predictor, as a value (the GLM regressors').
ONE_PREDICTOR = OnePredictor()

class ClassBlocks:
    """The layout of softmax: one linear predictor per free class, K-1 contrasts against
    the first class (``contrast``) or all K."""

    n_classes: int
    contrast: bool
    n_free: int

    @property
    def n_blocks(self) -> int:
        return self.n_free

    @property
    def score_columns(self) -> int | None:
        return self.n_classes

    @property
    def predictor_columns(self) -> int | None:
        return self.n_free

    @property
    def reference_class(self) -> bool:
        """With contrasts the first class is the reference, its block fixed at 0."""
        return self.contrast

    def on_layout(self, cases: LayoutCases[_T]) -> _T:
        return cases.class_blocks()

    def start(self, counts: ClassCounts, n_params: int, intercept: bool) -> FloatArray:
        """The start: zero weights, the intercepts of the log class frequencies
        (contrasts against the first class, or centred)."""
        start = np.zeros((self.n_free, n_params))
        if intercept:
            log_freq = np.log(counts.class_weights())
            start[:, 0] = (log_freq[1:] - log_freq[0]) if self.contrast \
                else log_freq - log_freq.mean()
        return start.ravel()

    def class_totals(self, counts: ClassCounts) -> FloatArray:
        return counts.class_weights()

    def add_offset(self, scores: FloatArray, offset: FloatArray) -> FloatArray:
        """Refused: one offset added to every logit changes no probability."""
        self.require_one_predictor("offset is supported for binary models only")
        return scores  # pragma: no cover - refused above

    def require_one_predictor(self, message: str) -> None:
        raise ValueError(message)

    def decision_scores(self, eta: FloatArray,
                        reference: Callable[[], tuple[IntArray, FloatArray]]) -> FloatArray:
        """The K logits from the n x M linear predictors: with contrasts, the reference
        class's logit 0 first (``reference()``: the rows whose logits were shifted to
        stay finite, and their K logits, the reference's shifted too)."""
        if not self.contrast:
            return eta
        logits = np.column_stack([np.zeros(eta.shape[0]), eta])
        rows, shifted = reference()
        if rows.size:
            logits[rows] = shifted
        return logits

    def predictors(self, A: FloatArray) -> FloatArray:
        """Per-block values of the rows (n x M), one column per free class."""
        return A

    def scores_log_proba(self, scores: FloatArray) -> FloatArray:
        return log_softmax(scores, axis=1)

    def predicted_index(self, scores: FloatArray) -> IntArray:
        return np.argmax(scores, axis=1)

    def row_certainty(self, derivatives: tuple[float, SoftmaxRows],
                      sample_weight: FloatArray | None) -> FloatArray:
        """The exact complement of the observed class's probability (~ the row's loss
        ``-log(1 - q)``, q small), from the row derivatives ``(loss, state)``."""
        return derivatives[1].observed_complements()

    def separation_splits(self, t: IntArray, classes: np.ndarray
                          ) -> dict[object, FloatArray]:
        """Each class against the rest: the common cases of softmax separation."""
        return {c: (t == k).astype(np.float64) for k, c in enumerate(classes)}

    def certificate_margins(self, eta: FloatArray,
                            direction: Callable[[], FloatArray | None]) -> list[FloatArray]:
        """None: no linear predictor is one split's margin (the exact LP decides)."""
        return []

    def newton_overlap(self, t: IntArray, eta: FloatArray, sample_weight: FloatArray | None,
                       step: Callable[[FloatArray, FloatArray], FloatArray]) -> bool:
        """False: the certificate is the binary one (a row's curvature is a scalar)."""
        return False

    def score_weights(self, t: IntArray, eta: FloatArray, sample_weight: FloatArray | None
                      ) -> tuple[FloatArray, FloatArray | None]:
        """``(G, None)``: one score block per free class; a row's leverage is a matrix."""
        return self.derivatives(t, eta, sample_weight)[1].gradient_weights(), None

    def derivatives(self, t: np.ndarray, eta: np.ndarray,
                    sample_weight: np.ndarray | None = None) -> tuple[float, SoftmaxRows]:
        raise NotImplementedError  # pragma: no cover - the softmax family's own

    def block_labels(self, classes: np.ndarray, n_blocks: int) -> list[object]:
        """The classes of the free blocks (the last ``n_blocks``)."""
        labels: list[object] = classes[classes.size - n_blocks:].tolist()
        return labels



#: A family's parameter layout.
Layout = OnePredictor | ClassBlocks


class ClassLayout:
    """How a discriminant's per-class scores (n x K) become its decision function."""

    #: columns of the decision function (None: one value per row)
    score_columns: int | None

    def __init__(self, n_classes: int) -> None:
        self.n_classes = int(n_classes)
        self.score_columns = self.n_classes

    def decision(self, scores: FloatArray) -> FloatArray:
        """The decision function of the n x K class scores: the scores themselves."""
        return scores

    def decision_from(self, absolute: Callable[[], FloatArray],
                      relative: Callable[[], FloatArray]) -> FloatArray:
        """The decision function from the class scores as they are (``absolute``), or
        shifted per row (``relative``: finite where every score overflows), whichever
        keeps it exact: K classes, the scores as they are."""
        return absolute()


    # The perceptron's weights: one vector per class (K), or one signed vector (two).
    def targets(self, codes: IntArray) -> np.ndarray:
        """The targets of the weights' updates: the class indices."""
        return np.asarray(codes, dtype=np.intp)

    def zero_weights(self, n_params: int) -> FloatArray:
        """The weights at the start: one zero vector per class."""
        return np.zeros((self.n_classes, n_params))

    def weight_matrix(self, weights: FloatArray) -> FloatArray:
        """The weights as a matrix of one row per score."""
        return weights

    def weight_scores(self, scores: FloatArray) -> FloatArray:
        """The decision function of the scores of :meth:`weight_matrix`'s rows."""
        return scores

    def weight_prediction(self, scores: Callable[[], FloatArray],
                          relative: Callable[[], FloatArray]) -> IntArray:
        """The predicted class: the largest score, shifted per row where the scores
        overflow (``relative``: no ties at +inf)."""
        return np.argmax(relative(), axis=1)


class _TwoClasses(ClassLayout):
    """Two classes: one score per row, the second class's against the first's."""

    def __init__(self) -> None:
        super().__init__(2)
        self.score_columns = None

    def decision(self, scores: FloatArray) -> FloatArray:
        return scores[:, 1] - scores[:, 0]

    def decision_from(self, absolute: Callable[[], FloatArray],
                      relative: Callable[[], FloatArray]) -> FloatArray:
        """Two classes: the difference of the shifted scores (the log-odds stay finite
        where both scores overflow, rows far from the data)."""
        return self.decision(relative())

    def targets(self, codes: IntArray) -> np.ndarray:
        """Signed targets: ``classes_[1]`` is +1, ``classes_[0]`` -1."""
        return 2.0 * codes - 1.0

    def zero_weights(self, n_params: int) -> FloatArray:
        """One signed weight vector."""
        return np.zeros(n_params)

    def weight_matrix(self, weights: FloatArray) -> FloatArray:
        return weights.reshape(1, -1)

    def weight_scores(self, scores: FloatArray) -> FloatArray:
        return scores.ravel()

    def weight_prediction(self, scores: Callable[[], FloatArray],
                          relative: Callable[[], FloatArray]) -> IntArray:
        """``classes_[1]`` where the signed score is positive."""
        return (scores() > 0).astype(np.intp)


def class_layout(n_classes: int) -> ClassLayout:
    """The layout of ``n_classes`` per-class scores (two: one score per row)."""
    return _TwoClasses() if n_classes == 2 else ClassLayout(n_classes)
