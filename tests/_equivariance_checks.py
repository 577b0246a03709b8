"""What "transforms exactly with the units of the inputs" means, estimator by estimator.

The transformation of column ``j`` is ``x'_j = c_j (x_j + s_j)`` (:class:`Transform`):
the shift is in the column's own units, applied before the scaling. A fit on
``X' `` is compared with the fit on ``X`` mapped by hand.

Tolerances (issue 13): coefficients 1e-8 relative, predictions and probabilities
1e-9 absolute, standard errors and z-values 1e-6 relative, Dask against numpy
1e-10. "Relative" for a vector of coefficients is measured unit-free: each
coefficient times its column's standard deviation (its effect on the linear
predictor), against the largest effect; an intercept against the size of the
terms it balances, ``|b| + sum_j |w_j| max |x_j + s_j|`` -- no representation
in raw units can hold it more accurately than that.

What the test data make possible (see ``_equivariance_cases``): the columns are
dyadic (multiples of 2^-10) with standard deviations of 2^8 to 2^10, so that
``x + s`` is exact for integer shifts up to 1e8 and the one rounding of
``10^k (x + s)`` moves a value by at most 2^-53 |x + s| < 5e-11 of its column's
spread: well below every tolerance, so the assertions measure the estimator,
not the input.
"""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.pipeline import Pipeline

COEF = 1e-8
PROB = 1e-9
INFER = 1e-6
DASK = 1e-10


@dataclass(frozen=True)
class Transform:
    """``x'_j = c_j (x_j + s_j)`` for every column ``j``; ``c > 0``."""

    c: np.ndarray
    s: np.ndarray

    @classmethod
    def identity(cls, d):
        return cls(np.ones(d), np.zeros(d))

    def apply(self, X):
        if sp.issparse(X):  # scaling only: a shift would fill the matrix in
            assert not np.any(self.s)
            return sp.csr_matrix(X @ sp.diags(self.c))
        return self.c * (X + self.s)

    def param_map(self, n_blocks=1):
        """``T`` with ``[b', w'] = T [b, w]`` per class block:
        ``b' = b - s^T w``, ``w' = w / c``."""
        d = self.c.size
        T = np.zeros((d + 1, d + 1))
        T[0, 0] = 1.0
        T[0, 1:] = -self.s
        T[1:, 1:] = np.diag(1.0 / self.c)
        return np.kron(np.eye(n_blocks), T)

    @property
    def log_jacobian(self):
        """``sum_j log c_j``: a density of ``x'`` is that of ``x`` less this."""
        return float(np.sum(np.log(self.c)))


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def _spread(X):
    sd = dense(X).std(axis=0)
    return np.where(sd > 0, sd, 1.0)


# ------------------------------------------------------------------- helpers
def assert_linear_map(ref_coef, ref_icpt, got_coef, got_icpt, tf, X, what="coef_",
                      icpt_rounding=0.0):
    """``w' = w / c`` and ``b' = b - w^T s``, per row of ``coef`` (class or output);
    ``icpt_rounding``: what the rounding of the shifted data alone may move ``b'`` by."""
    W, G = np.atleast_2d(ref_coef), np.atleast_2d(got_coef)
    sd = _spread(X)
    effect = W * sd
    assert_allclose(G * tf.c * sd, effect, rtol=COEF, atol=COEF * np.max(np.abs(effect)),
                    err_msg=f"{what}: w' = w / c")
    if ref_icpt is None:
        return
    b = np.atleast_1d(np.asarray(ref_icpt, dtype=np.float64))
    reach = np.max(np.abs(dense(X) + tf.s), axis=0)
    size = np.abs(b) + np.abs(W) @ reach
    assert_allclose(np.atleast_1d(got_icpt), b - W @ tf.s, rtol=0,
                    atol=COEF * np.max(size) + icpt_rounding, err_msg=f"{what}: b' = b - w^T s")


def assert_param_map(ref_theta, got_theta, tf, X, what):
    """``[b, w...]`` blocks (``posterior_mean_`` and the like) by :func:`assert_linear_map`."""
    p = tf.c.size + 1
    R, G = np.reshape(ref_theta, (-1, p)), np.reshape(got_theta, (-1, p))
    assert_linear_map(R[:, 1:], R[:, 0], G[:, 1:], G[:, 0], tf, X, what)


def assert_cov_map(ref_cov, got_cov, tf, what):
    """``Cov' = T Cov T^T``: standard errors to 1e-6 relative, correlations to 1e-6."""
    p = tf.c.size + 1
    T = tf.param_map(ref_cov.shape[0] // p)
    want = T @ ref_cov @ T.T
    se_want, se_got = np.sqrt(np.diag(want)), np.sqrt(np.diag(got_cov))
    assert_allclose(se_got, se_want, rtol=INFER, err_msg=f"{what}: standard errors")
    assert_allclose(got_cov / np.outer(se_want, se_want), want / np.outer(se_want, se_want),
                    rtol=0, atol=INFER, err_msg=f"{what}: correlations")


def assert_slope_z(ref_z, got_z, tf, what):
    """z-values of the slopes are unchanged (the intercepts' move with the shift)."""
    p = tf.c.size + 1
    R, G = np.reshape(np.asarray(ref_z), (-1, p)), np.reshape(np.asarray(got_z), (-1, p))
    assert_allclose(G[:, 1:], R[:, 1:], rtol=INFER, atol=INFER, err_msg=f"{what}: z of slopes")
    if not np.any(tf.s):  # no shift: the intercepts' z too
        assert_allclose(G[:, 0], R[:, 0], rtol=INFER, atol=INFER, err_msg=f"{what}: z")


def assert_same_labels(ref, got, X, Xt, scores=None):
    """Equal predictions, except at a tie of the reference's top two scores."""
    want, have = ref.predict(X), got.predict(Xt)
    if scores is not None:
        top = np.sort(scores, axis=1)
        clear = top[:, -1] - top[:, -2] > 10 * PROB
        want, have = want[clear], have[clear]
    assert_array_equal(have, want, err_msg="predict")


def assert_probabilities(ref, got, X, Xt):
    P = ref.predict_proba(X)
    assert_allclose(got.predict_proba(Xt), P, rtol=0, atol=PROB, err_msg="predict_proba")
    assert_allclose(got.predict_log_proba(Xt), ref.predict_log_proba(X), rtol=0, atol=PROB,
                    err_msg="predict_log_proba")
    assert_same_labels(ref, got, X, Xt, P)


def assert_scores(ref, got, X, Xt, method="decision_function"):
    """Unnormalised scores (a perceptron's, least squares'): 1e-9 of their size."""
    want = np.asarray(getattr(ref, method)(X))
    scale = max(1.0, float(np.max(np.abs(want))))
    assert_allclose(getattr(got, method)(Xt), want, rtol=0, atol=PROB * scale, err_msg=method)
    return want


# ------------------------------------------------------------ per estimator
def check_glm(ref, got, tf, X, Xt, y):
    """LogisticRegression / ProbitRegression (alpha = 0): equivariant by definition."""
    assert_linear_map(ref.coef_, ref.intercept_, got.coef_, got.intercept_, tf, X)
    assert_probabilities(ref, got, X, Xt)
    assert_array_equal(got.identified_, ref.identified_, err_msg="identified_")
    assert got.converged_
    assert_cov_map(ref.covariance_, got.covariance_, tf, "covariance_")
    a, b = ref.summary(), got.summary()
    assert_slope_z(a["z"], b["z"], tf, "summary")
    assert_allclose(b.attrs["log_likelihood"], a.attrs["log_likelihood"], rtol=1e-9,
                    err_msg="log-likelihood")


def check_linear_regression(ref, got, tf, X, Xt, y):
    assert_linear_map(ref.coef_, ref.intercept_, got.coef_, got.intercept_, tf, X)
    assert_allclose(got.predict(Xt), ref.predict(X), rtol=0, atol=PROB, err_msg="predict")
    assert_allclose(got.noise_precision_, ref.noise_precision_, rtol=COEF)
    assert got.rank_ == ref.rank_ == X.shape[1]


def check_bayesian_linear(ref, got, tf, X, Xt, y):
    """Common scale c: alpha' = alpha c^2 (given, or found by the evidence); beta, gamma
    and the evidence are unchanged."""
    assert_param_map(ref.posterior_mean_, got.posterior_mean_, tf, X, "posterior_mean_")
    assert_cov_map(ref.posterior_cov_, got.posterior_cov_, tf, "posterior_cov_")
    assert_allclose(got.alpha_, ref.alpha_ * tf.c[0] ** 2, rtol=COEF, err_msg="alpha_")
    assert_allclose(got.beta_, ref.beta_, rtol=COEF, err_msg="beta_")
    assert_allclose(got.gamma_, ref.gamma_, rtol=COEF, err_msg="gamma_")
    assert_allclose(got.log_evidence_, ref.log_evidence_, rtol=COEF, err_msg="log_evidence_")
    mean, std = ref.predict(X, return_std=True)
    got_mean, got_std = got.predict(Xt, return_std=True)
    assert_allclose(got_mean, mean, rtol=0, atol=PROB, err_msg="predictive mean")
    assert_allclose(got_std, std, rtol=0, atol=PROB, err_msg="predictive std")


def check_bayesian_logistic(ref, got, tf, X, Xt, y):
    """Common scale c, flat intercept prior: the posterior maps as the parameters do."""
    assert_param_map(ref.posterior_mean_, got.posterior_mean_, tf, X, "posterior_mean_")
    assert_cov_map(ref.posterior_cov_, got.posterior_cov_, tf, "posterior_cov_")
    assert_allclose(got.alpha_, ref.alpha_ * tf.c[0] ** 2, rtol=COEF, err_msg="alpha_")
    assert_allclose(got.log_evidence_, ref.log_evidence_, rtol=COEF, err_msg="log_evidence_")
    if getattr(ref, "samples_", None) is not None:  # the same seed: the same chain, mapped
        assert_param_map(ref.samples_, got.samples_, tf, X, "samples_ (each draw)")
    assert_probabilities(ref, got, X, Xt)
    assert_slope_z(ref.summary()["z"], got.summary()["z"], tf, "summary")


def _assert_means(ref_means, got_means, tf, X, what="means_"):
    """``mu' = c (mu + s)``, to 1e-8 of each column's spread."""
    error = (got_means - tf.c * (ref_means + tf.s)) / (tf.c * _spread(X))
    assert_allclose(error, np.zeros_like(error), rtol=0, atol=COEF, err_msg=what)


def _assert_covariances(ref_cov, got_cov, tf, kind, what="covariances_"):
    """``Sigma' = C Sigma C`` in correlation units (variances: relative)."""
    c = tf.c
    if kind == "spherical":
        assert_allclose(got_cov, ref_cov * c[0] ** 2, rtol=COEF, err_msg=what)
    elif kind == "diag":
        assert_allclose(got_cov, ref_cov * c ** 2, rtol=COEF, err_msg=what)
    else:
        ref_cov, got_cov = np.asarray(ref_cov), np.asarray(got_cov)
        sd = np.sqrt(np.diagonal(ref_cov, axis1=-2, axis2=-1))
        unit = sd[..., :, None] * sd[..., None, :]
        assert_allclose(got_cov / np.outer(c, c) / unit, ref_cov / unit, rtol=0, atol=COEF,
                        err_msg=what)


def check_gaussian(kind):
    """GDA / LDA / QDA / GaussianNB: means and covariances transform, posteriors do not;
    log-densities of x' are those of x less sum_j log c_j."""
    def check(ref, got, tf, X, Xt, y):
        assert_allclose(got.priors_, ref.priors_, rtol=1e-14, err_msg="priors_")
        assert_array_equal(got.class_count_, ref.class_count_)
        _assert_means(ref.means_, got.means_, tf, X)
        _assert_covariances(ref.covariances_, got.covariances_, tf, kind)
        assert_probabilities(ref, got, X, Xt)
        density = ref.score_samples(X)
        assert_allclose(got.score_samples(Xt) + tf.log_jacobian, density, rtol=0,
                        atol=PROB * max(1.0, np.max(np.abs(density))), err_msg="score_samples")
        if kind in ("tied", "spherical"):
            assert_linear_map(ref.coef_, ref.intercept_, got.coef_, got.intercept_, tf, X)
        if hasattr(ref, "epsilon_"):  # GaussianNB: the floor is per feature, in its units
            assert_allclose(got.epsilon_, ref.epsilon_ * tf.c ** 2, rtol=COEF,
                            err_msg="epsilon_")
    return check


def check_exponential_family_nb(ref, got, tf, X, Xt, y):
    """ExponentialFamilyNB with Gaussian columns: each column's means and variances
    transform as GaussianNB's, posteriors do not, log-densities shift by the Jacobian."""
    assert_allclose(got.priors_, ref.priors_, rtol=1e-14, err_msg="priors_")
    assert_array_equal(got.class_count_, ref.class_count_)
    for i, what in ((0, "means"), (1, "variances")):
        a, b = (np.stack([p[:, i] for p in m.params_], axis=1) for m in (ref, got))
        if i == 0:
            _assert_means(a, b, tf, X, f"params_ ({what})")
        else:
            _assert_covariances(a, b, tf, "diag", f"params_ ({what})")
    assert_allclose(got.epsilon_, ref.epsilon_ * tf.c ** 2, rtol=COEF, err_msg="epsilon_")
    assert_probabilities(ref, got, X, Xt)
    density = ref.score_samples(X)
    assert_allclose(got.score_samples(Xt) + tf.log_jacobian, density, rtol=0,
                    atol=PROB * max(1.0, np.max(np.abs(density))), err_msg="score_samples")


def check_fisher(ref, got, tf, X, Xt, y):
    assert_linear_map(ref.components_, None, got.components_, None, tf, X, "components_")
    assert_allclose(got.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=COEF,
                    atol=COEF)
    _assert_means(ref.means_, got.means_, tf, X)
    assert_linear_map(ref.coef_, ref.intercept_, got.coef_, got.intercept_, tf, X)
    assert_probabilities(ref, got, X, Xt)
    moved = ref.components_ @ tf.s  # z' = z + W^T s
    terms = np.abs(ref.components_) @ np.max(np.abs(X + tf.s), axis=0)
    assert_allclose(got.transform(Xt), ref.transform(X) + moved, rtol=0,
                    atol=COEF * np.max(terms), err_msg="transform")
    if ref.classes_.size == 2:
        assert_allclose(got.threshold_, ref.threshold_ + moved[0], rtol=0,
                        atol=COEF * terms[0], err_msg="threshold_")


def check_least_squares_classifier(ref, got, tf, X, Xt, y):
    assert_linear_map(ref.coef_, ref.intercept_, got.coef_, got.intercept_, tf, X)
    scores = assert_scores(ref, got, X, Xt)
    assert_same_labels(ref, got, X, Xt, scores.reshape(len(X), -1) if scores.ndim > 1
                       else np.column_stack([-scores, scores]))
    assert got.rank_ == ref.rank_ == X.shape[1]


def check_perceptron(ref, got, tf, X, Xt, y):
    """Standardised updates: the same mistakes, the weights mapped."""
    assert_array_equal(got.history_, ref.history_, err_msg="mistakes per epoch")
    # The weights are sums of standardised rows z_i (one per mistake). The shifted data
    # x + s are stored to eps |x + s|, so each z_ij to delta_j = eps reach_j / sd_j, and
    # a sum of n_updates of them (|z| <= z_max) to n_updates z_max delta_j absolute: the
    # cancellation in the sum makes that relative error of w far above delta_j, and
    # b' = b - w^T s carries it times s_j / sd_j (found by hypothesis: a shift of 1e8,
    # b' off by 1.2e-8 relative after ~500 updates).
    reach = np.max(np.abs(dense(X) + tf.s), axis=0)
    sd = _spread(X)
    z_max = np.max(np.abs(dense(X) - dense(X).mean(axis=0)), axis=0) / sd
    n_updates = float(np.sum(ref.history_))
    rounding = np.finfo(np.float64).eps * reach / sd * n_updates * z_max * np.abs(tf.s) / sd
    assert_linear_map(ref.coef_, ref.intercept_, got.coef_, got.intercept_, tf, X,
                      icpt_rounding=float(np.sum(rounding)))
    scores = assert_scores(ref, got, X, Xt)
    assert_same_labels(ref, got, X, Xt, scores if scores.ndim > 1
                       else np.column_stack([-scores, scores]))


def check_lms(ref, got, tf, X, Xt, y):
    assert got.n_iter_ == ref.n_iter_
    assert_linear_map(ref.coef_, ref.intercept_, got.coef_, got.intercept_, tf, X)
    assert_allclose(got.predict(Xt), ref.predict(X), rtol=0, atol=PROB, err_msg="predict")


def check_basis_pipeline(ref, got, tf, X, Xt, y):
    """The basis functions are unit-free (standardised powers, bumps and sigmoids about
    placed centres): the same features, so the same least-squares predictions."""
    assert_allclose(got[0].transform(Xt), ref[0].transform(X), rtol=PROB, atol=PROB,
                    err_msg="basis functions (to 1e-9 of their size: z^3 reaches 50)")
    assert_allclose(got.predict(Xt), ref.predict(X), rtol=0, atol=PROB, err_msg="predict")


def check_bernoulli(ref, got, tf, X, Xt, y):
    """Presence (x > threshold) is unchanged bit for bit: the same counts, the same model,
    the same posteriors (bit for bit on dense input; sparse rows are summed in
    another order, to rounding)."""
    assert_array_equal(got.feature_count_, ref.feature_count_)
    assert_array_equal(got.class_count_, ref.class_count_)
    assert_array_equal(got.feature_log_prob_, ref.feature_log_prob_)
    rounding = 1e-13 if sp.issparse(Xt) else 0.0
    assert_allclose(got.predict_proba(Xt), ref.predict_proba(X), rtol=0, atol=rounding)
    assert_same_labels(ref, got, X, Xt, ref.predict_proba(X))


def check_multinomial(ref, got, tf, X, Xt, y):
    """Counts times an integer c, alpha times c: theta = (N + alpha) / (sum N + D alpha)
    is unchanged, so are the priors and the posterior of every unscaled row."""
    c = tf.c[0]
    assert_array_equal(got.feature_count_, c * ref.feature_count_)
    assert_array_equal(got.class_log_prior_, ref.class_log_prior_)
    assert_allclose(got.feature_log_prob_, ref.feature_log_prob_, rtol=0, atol=1e-12)
    assert_allclose(got.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-12)


def check_bayes_decision(ref, got, tf, X, Xt, y):
    e, f = ref.estimator_, got.estimator_
    assert_linear_map(e.coef_, e.intercept_, f.coef_, f.intercept_, tf, X, "estimator_")
    assert_allclose(got.training_priors_, ref.training_priors_, rtol=1e-14)
    assert_allclose(got.expected_cost(Xt), ref.expected_cost(X), rtol=0, atol=PROB,
                    err_msg="expected_cost")
    assert_probabilities(ref, got, X, Xt)


# ------------------------------------------------------------ Dask vs numpy
_ATTRIBUTES = ("coef_", "intercept_", "cutpoints_", "covariance_", "posterior_mean_", "posterior_cov_",
               "alpha_", "beta_", "log_evidence_", "noise_precision_", "means_",
               "covariances_", "priors_", "epsilon_", "components_",
               "explained_variance_ratio_", "threshold_", "feature_count_",
               "feature_log_prob_", "class_log_prior_", "samples_", "centers_", "width_",
               "mean_", "scale_")
_METHODS = ("predict_proba", "decision_function", "transform", "predict")


def snapshot(est, X):
    """Every fitted quantity and every prediction on ``X`` (numpy) that the estimator has."""
    out = {}
    for i, part in enumerate(est.steps if isinstance(est, Pipeline) else [("", est)]):
        for name in _ATTRIBUTES:
            if getattr(part[1], name, None) is not None:
                out[f"{i}.{name}"] = np.asarray(getattr(part[1], name))
    for name in _METHODS:
        if hasattr(est, name):
            out[name] = np.asarray(getattr(est, name)(X))
    if hasattr(est, "history_"):
        out["history_"] = np.asarray(est.history_)
    return out


def assert_same_fit(got, want):
    """Two snapshots (Dask and numpy) agree to 1e-10 of each quantity's size."""
    assert got.keys() == want.keys()
    for name, value in want.items():
        if value.dtype.kind in "fc":
            scale = float(np.max(np.abs(value), initial=0.0))
            assert_allclose(got[name], value, rtol=DASK, atol=DASK * scale, err_msg=name)
        else:
            assert_array_equal(got[name], value, err_msg=name)
