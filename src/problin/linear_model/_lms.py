"""Sequential least mean squares (the seeds' LMS algorithm)."""
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ..exceptions import ConvergenceWarning
from ._base import LinearRegressorBase

__all__ = ["LMSRegressor"]


class LMSRegressor(LinearRegressorBase):
    r"""Least mean squares: stochastic gradient descent on the sum-of-squares error.

    One update per sample, ``w <- w + eta (t_n - w^T phi_n) phi_n`` with
    ``phi_n = [1, x_n]`` (the dummy basis function ``phi_0 = 1`` carries the
    intercept). With a step that decays over epochs it converges to the
    least-squares solution.

    Parameters
    ----------
    eta0 : float, default=0.1
        Relative learning rate: the step is ``eta = eta0 / mean |phi_n|^2``
        (measured on the first data seen), so ``eta0`` does not depend on the
        scale of the inputs; LMS is stable in the mean for ``eta0 < 2``.
    learning_rate : {"invscaling", "constant"}, default="invscaling"
        ``"invscaling"``: ``eta_e = eta / e^power_t`` in epoch ``e = 1, 2, ...``
        (Robbins-Monro for ``1/2 < power_t <= 1``: converges to least squares);
        ``"constant"``: ``eta`` throughout (ends in a neighbourhood of it).
    power_t : float, default=1.0
    max_iter : int, default=100
        Epochs (passes over the data) of ``fit``; ``partial_fit`` makes one.
    tol : float, default=1e-4
        ``fit`` stops when an epoch moves no weight by more than ``tol``
        relative to the largest weight.
    shuffle : bool, default=True
        Visit the samples in a new random order each epoch.
    random_state : int, RandomState instance or None, default=None
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_outputs, n_features)
    intercept_ : float or ndarray of shape (n_outputs,)
    n_iter_ : int
        Epochs run by the last ``fit``.
    t_ : int
        Epochs run so far (the learning-rate schedule's clock).

    Examples
    --------
    >>> import numpy as np
    >>> from problin import LMSRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> t = X @ [1.0, -2.0] + 0.5
    >>> model = LMSRegressor(random_state=0).fit(X, t)
    >>> print(model.coef_.round(3), round(model.intercept_, 3))
    [ 1. -2.] 0.5
    """

    _parameter_constraints = {
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [StrOptions({"invscaling", "constant"})],
        "power_t": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, eta0=0.1, learning_rate="invscaling", power_t=1.0, max_iter=100,
                 tol=1e-4, shuffle=True, random_state=None, fit_intercept=True):
        self.eta0 = eta0
        self.learning_rate = learning_rate
        self.power_t = power_t
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def fit(self, X, y):
        """Run up to ``max_iter`` epochs of LMS from zero weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        self._validate_params()
        X, T, _ = self._check_data(X, y, None, reset=True)
        self._start(X, T)
        for epoch in range(1, self.max_iter + 1):
            change = self._epoch(X, T)
            if change <= self.tol * max(1.0, float(np.max(np.abs(self._W)))):
                break
        else:
            warnings.warn(f"LMS did not settle in {self.max_iter} epochs (tol={self.tol:g}); "
                          "increase max_iter", ConvergenceWarning, stacklevel=2)
        self.n_iter_ = epoch
        return self

    def partial_fit(self, X, y):
        """One epoch of LMS over ``(X, y)``, continuing from the current weights."""
        self._validate_params()
        first = not hasattr(self, "t_")
        X, T, _ = self._check_data(X, y, None, reset=first)
        if first:
            self._start(X, T)
        elif T.shape[1] != self._W.shape[0]:
            raise ValueError(f"y has {T.shape[1]} outputs, the model {self._W.shape[0]}")
        self._epoch(X, T)
        self.n_iter_ = 1
        return self

    def _start(self, X, T):
        self._rng = check_random_state(self.random_state)
        self._W = np.zeros((T.shape[1], X.shape[1] + int(self.fit_intercept)))
        square_norm = float(np.mean(np.einsum("ij,ij->i", X, X, dtype=np.float64)))
        self._step = self.eta0 / max(square_norm + int(self.fit_intercept), 1e-300)
        self.t_ = 0

    def _epoch(self, X, T):
        """One pass of ``w <- w + eta (t_n - w^T phi_n) phi_n``; returns the largest move."""
        self.t_ += 1
        eta = self._step
        if self.learning_rate == "invscaling":
            eta /= self.t_ ** self.power_t
        order = self._rng.permutation(X.shape[0]) if self.shuffle else np.arange(X.shape[0])
        W = self._W
        before = W.copy()
        off = int(self.fit_intercept)
        for lo in range(0, X.shape[0], 4096):  # visit rows in block-sized copies
            idx = order[lo:lo + 4096]
            Xb, Tb = np.asarray(X[idx], dtype=np.float64), T[idx]
            for k in range(W.shape[0]):  # the outputs' updates are independent
                W[k] = _lms_pass(W[k], Xb, Tb[:, k], eta, off)
        Wx = W[:, off:]
        self.coef_ = Wx[0].copy() if self._single_output else Wx.copy()
        self.intercept_ = (float(W[0, 0]) if self._single_output else W[:, 0].copy()) \
            if off else (0.0 if self._single_output else np.zeros(W.shape[0]))
        return float(np.max(np.abs(W - before)))


def _lms_pass(w, X, t, eta, off):
    """``w <- w + eta (t_n - w^T phi_n) phi_n`` over the rows, ``phi_n = [1, x_n]`` if ``off``."""
    v, b = w[off:].copy(), float(w[0]) if off else 0.0
    for x, tn in zip(X, t.tolist()):
        err = eta * (tn - v.dot(x) - b)
        v += err * x
        b += err * off  # phi_0 = 1 only with an intercept
    return np.concatenate(([b], v)) if off else v
