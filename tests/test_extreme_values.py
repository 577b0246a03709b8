"""Issue 13, items 4 and 5: values near the top of the float range, at fit and at predict.

Fit: a value whose squares would overflow the models' sums (1e200, 1e308) is a
clear ValueError naming the columns and the number of rows, for every
estimator and path (numpy, sparse, DataFrame, partial_fit, Dask, the CLI).
Predict: rows at 1e200/1e308 get finite probabilities summing to 1 and the
class the model implies, checked against the same model's log posterior
evaluated in 700-digit arithmetic (mpmath); the CLI writes no empty cells and
``problin report`` says what is wrong instead of failing in numpy.
"""
import inspect
import warnings
import subprocess
import sys

import mpmath as mp
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor

import problin
from problin import (
    BayesianLogisticRegression,
    GaussianDiscriminantAnalysis,
    GaussianNB,
    LinearDiscriminantAnalysis,
    LinearRegression,
    LMSRegressor,
    LogisticRegression,
    QuadraticDiscriminantAnalysis,
)


@pytest.fixture(autouse=True, scope="module")
def _mpmath_digits():
    """700 digits for this module's references, restored after it (a module-level
    ``mp.dps = ...`` would hold for every module collected after it)."""
    with mp.mp.workdps(700):  # a_k of a row at 1e308 are ~1e616; their differences ~1e308
        yield


RNG = np.random.default_rng(13)
X = RNG.normal(size=(60, 3))
Y2 = (X[:, 0] + 0.7 * X[:, 1] + 0.6 * RNG.normal(size=60) > 0).astype(int)
Y3 = np.digitize(X[:, 0] - 0.5 * X[:, 2] + 0.4 * RNG.normal(size=60), [-0.5, 0.5])
T = X @ [1.0, -2.0, 0.5] + 0.1 * RNG.normal(size=60)


def _estimators():
    """Every estimator of ``problin.__all__`` that fits on numeric X (a wrapper: around
    GaussianNB)."""
    out = []
    for name in problin.__all__:
        obj = getattr(problin, name)
        if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and name != "Formula":
            out.append(obj(GaussianNB()) if name == "BayesDecision" else obj())
    return out


def _target(est):
    if is_regressor(est):
        return T
    return Y2 if is_classifier(est) else None


def _with(value, rows=(3, 17), col=1, base=X):
    Z = base.copy()
    Z[list(rows), col] = value
    return Z


# ------------------------------------------------------------------------------ fit
@pytest.mark.parametrize("value", [1e308, 1e200, -1e200])
@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_fit_names_the_column_and_the_rows(est, value):
    counts = type(est).__name__ == "MultinomialNB"  # non-negative
    Z = _with(abs(value), base=np.abs(X)) if counts else _with(value)
    with pytest.raises(ValueError, match=r"too large .* in 2 rows \(first: row 3\), in "
                                         r"column \[1\]"):
        clone(est).fit(Z, _target(est))


@pytest.mark.parametrize("est", [e for e in _estimators()
                                 if e.__sklearn_tags__().input_tags.sparse],
                         ids=lambda e: type(e).__name__)
def test_sparse_fit_names_the_column_and_the_rows(est):
    Z = sp.csr_matrix(np.abs(_with(1e308)))
    with pytest.raises(ValueError, match=r"in 2 rows \(first: row 3\), in column \[1\]"):
        clone(est).fit(Z, _target(est))


@pytest.mark.parametrize("est", [LogisticRegression(), LinearDiscriminantAnalysis(),
                                 problin.FisherDiscriminant(), problin.Perceptron(),
                                 problin.LinearRegression(), problin.GaussianBasis()],
                         ids=lambda e: type(e).__name__)
def test_dataframe_fit_names_the_column(est):
    frame = pd.DataFrame(_with(1e250, rows=(5,)), columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"in 1 row \(first: row 5\), in column \['b'\]"):
        clone(est).fit(frame, _target(est))


@pytest.mark.parametrize("est", [e for e in _estimators() if hasattr(e, "partial_fit")],
                         ids=lambda e: type(e).__name__)
def test_partial_fit_refuses_the_batch(est):
    kwargs = {"classes": [0, 1]} if is_classifier(est) else {}
    model = clone(est).partial_fit(np.abs(X), _target(est), **kwargs)
    with pytest.raises(ValueError, match=r"in 2 rows .* column \[1\]"):
        model.partial_fit(_with(1e300, base=np.abs(X)), _target(est))


@pytest.mark.parametrize("est", [problin.LinearRegression(), problin.BayesianLinearRegression(),
                                 problin.LMSRegressor()], ids=lambda e: type(e).__name__)
def test_a_regression_target_is_squared_too(est):
    t = T.copy()
    t[7] = 1e200
    with pytest.raises(ValueError, match=r"Input y holds values too large .* in 1 row"):
        clone(est).fit(X, t)


def test_values_inside_the_bound_fit_finitely():
    big = X * [1.0, 1e140, 1.0]
    for est in (problin.LinearRegression(), LinearDiscriminantAnalysis(), GaussianNB(),
                QuadraticDiscriminantAnalysis()):
        model = clone(est).fit(big, _target(est))
        params = [getattr(model, a) for a in ("coef_", "means_", "covariances_")
                  if hasattr(model, a)]
        assert all(np.all(np.isfinite(p)) for p in params), type(est).__name__


def test_a_fit_that_learns_nothing_accepts_them():
    # Unstandardised, PolynomialBasis.fit only records the number of features: it
    # computes the exact answer, and the powers it makes (inf) are refused downstream.
    basis = problin.PolynomialBasis(degree=2, standardize=False).fit(_with(1e200))
    with np.errstate(over="ignore"):
        powers = basis.transform(_with(1e200))
    assert np.isinf(powers[3]).any()
    with pytest.raises(ValueError, match="NaN or infinity: infinity in"):
        problin.LinearRegression().fit(powers, T)


@pytest.mark.parametrize("est", [LogisticRegression(), LinearDiscriminantAnalysis(),
                                 GaussianNB(), problin.LinearRegression(),
                                 problin.LMSRegressor(), problin.Perceptron(),
                                 problin.FisherDiscriminant(), problin.GaussianBasis()],
                         ids=lambda e: type(e).__name__)
def test_dask_fit_names_the_chunk(est):
    da = pytest.importorskip("dask.array")
    import dask
    t = _target(est)
    with dask.config.set(scheduler="synchronous"), \
            pytest.raises(ValueError, match=r"too large .* in chunk 2 \(row 45, 1 row of the "
                                            r"chunk; .*in column \[1\]"):
        clone(est).fit(da.from_array(_with(1e308, rows=(45,)), chunks=(20, 3)),
                       None if t is None else da.from_array(t, chunks=20))


def test_dask_sparse_chunks_are_checked():
    da = pytest.importorskip("dask.array")
    import dask
    Xd = da.from_array(np.abs(_with(1e308, rows=(45,))), chunks=(20, 3)).map_blocks(
        sp.csr_matrix, dtype=np.float64)
    with dask.config.set(scheduler="synchronous"), \
            pytest.raises(ValueError, match=r"in chunk 2 \(row 45"):
        problin.MultinomialNB().fit(Xd, da.from_array(Y2, chunks=20))


# -------------------------------------------------------------------------- predict
FAR = np.array([[1e200, 0.0, 0.0], [1e308, 0.0, 0.0], [-1e308, 0.0, 0.0],
                [0.0, 1e200, -1e200], [1e308, -1e308, 1e308], [-3e250, 2e250, 0.1],
                [1e100, 0.5, 0.0], [0.0, -1e100, 1e100]])


def _logsumexp(a):
    top = max(a)
    return top + mp.log(mp.fsum(mp.exp(v - top) for v in a))


def _gaussian_reference(model, x):
    """``log p(C_k | x)`` of a fitted Gaussian classifier, in 700 digits."""
    K, D = model.means_.shape
    cov = np.asarray(model.covariances_, dtype=np.float64)
    kind = "diag" if isinstance(model, GaussianNB) else getattr(model, "covariance_type",
                                                                 None)
    kind = kind or ("tied" if isinstance(model, LinearDiscriminantAnalysis) else "full")
    a = []
    for k in range(K):
        S = {"full": lambda: cov[k], "tied": lambda: cov, "diag": lambda: np.diag(cov[k]),
             "spherical": lambda: float(cov) * np.eye(D)}[kind]()
        S = mp.matrix(S.tolist())
        r = mp.matrix([mp.mpf(x[j]) - mp.mpf(model.means_[k, j]) for j in range(D)])
        q = (r.T * mp.lu_solve(S, r))[0]
        a.append(mp.log(model.priors_[k]) - mp.log(mp.det(S)) / 2 - q / 2
                 - D * mp.log(2 * mp.pi) / 2)
    return [v - _logsumexp(a) for v in a]


def _logistic_reference(model, x):
    W, b = np.atleast_2d(model.coef_), np.atleast_1d(model.intercept_)
    eta = [mp.mpf(b[k]) + mp.fsum(mp.mpf(W[k, j]) * mp.mpf(x[j]) for j in range(len(x)))
           for k in range(W.shape[0])]
    eta = [mp.mpf(0), eta[0]] if len(eta) == 1 else eta
    return [v - _logsumexp(eta) for v in eta]


def _bayes_reference(model, x):
    """MacKay's moderated predictive (and its pairwise softmax form for K > 2)."""
    K, p = model._n_blocks, model.posterior_mean_.size // model._n_blocks
    phi = mp.matrix([1] + [mp.mpf(v) for v in x])
    m = model.posterior_mean_.reshape(K, p)
    S = model.posterior_cov_
    mu = [(phi.T * mp.matrix(m[k].tolist()))[0] for k in range(K)]

    def cov(k, j):
        return (phi.T * mp.matrix(S[k * p:(k + 1) * p, j * p:(j + 1) * p].tolist()) * phi)[0]

    def kappa(v):
        return 1 / mp.sqrt(1 + mp.pi * v / 8)

    if K == 1:
        z = kappa(cov(0, 0)) * mu[0]
        return [-mp.log(1 + mp.exp(z)), -mp.log(1 + mp.exp(-z))]
    logp = [-_logsumexp([-kappa(cov(k, k) + cov(j, j) - 2 * cov(k, j)) * (mu[k] - mu[j])
                         for j in range(K)]) for k in range(K)]
    return [v - _logsumexp(logp) for v in logp]


def _assert_matches(model, reference):
    log_p = model.predict_log_proba(FAR)
    p = model.predict_proba(FAR)
    assert np.all(np.isfinite(p)) and not np.isnan(log_p).any()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    for i, x in enumerate(FAR):
        ref = reference(model, x)
        best = int(np.argmax([float(v) for v in ref]))
        assert model.predict(FAR[i:i + 1])[0] == model.classes_[best], (i, ref)
        for k, r in enumerate(ref):
            assert abs(p[i, k] - float(mp.exp(r))) <= 1e-9, (i, k, p[i, k], r)
            if r > -1e300:  # representable: the log posterior itself, to 1e-7
                assert abs(log_p[i, k] - float(r)) <= 1e-7 * max(1.0, abs(float(r))), (i, k)
            else:
                assert log_p[i, k] <= -1e300, (i, k)


GAUSSIAN = [LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis(), GaussianNB(),
            *(GaussianDiscriminantAnalysis(covariance_type=c)
              for c in ("full", "tied", "diag", "spherical"))]


@pytest.mark.parametrize("y", [Y2, Y3], ids=["2 classes", "3 classes"])
@pytest.mark.parametrize("est", GAUSSIAN, ids=repr)
def test_gaussian_classifiers_far_rows_match_high_precision(est, y):
    _assert_matches(clone(est).fit(X, y), _gaussian_reference)


# Three classes of one shape (each the same 8 points, shifted): equal variances per
# feature (naive Bayes, diagonal) and equal covariance matrices (full), estimated apart.
_SHAPE = np.array([[0.0, 0.0, 1.0], [2.0, 0.5, 0.0], [0.5, 2.0, 0.5], [2.0, 2.0, 2.0],
                   [1.0, 0.0, 2.0], [0.0, 1.5, 1.0], [1.5, 1.0, 0.0], [1.0, 1.0, 1.5]])
X_SAME = np.vstack([_SHAPE, _SHAPE + [10.0, 0.0, 0.0], _SHAPE + [0.0, 6.0, -3.0]])
Y_SAME = np.repeat([0, 1, 2], len(_SHAPE))
FAR_SAME = np.array([[1e6, 1.0, 1.0], [1e12, -3.0, 2.0], [3e16, 1e16, 0.0], [1e20, 0.0, -1e20],
                     [-1e100, 2.0, 5.0], [1e200, 1e200, 1e200], [0.0, -1e300, 0.0]])


@pytest.mark.parametrize("est", [GaussianNB(), QuadraticDiscriminantAnalysis(),
                                 GaussianDiscriminantAnalysis(covariance_type="diag")], ids=repr)
def test_far_rows_of_classes_with_equal_variances(est):
    """With class variances exactly equal (per feature, or the whole matrix), the log-odds
    far away are linear in x while each class score is quadratic: differenced as they
    were, they lost 3e-6 of themselves at 1e12 and 26 % at 1e16, and the posterior fell
    to the priors from ~1e20 (0.5 / 0.5 at 1e200 where one class is certain). They are
    now formed as the linear forms they are, against 700-digit arithmetic."""
    model = clone(est).fit(X_SAME, Y_SAME)
    log_p, p = model.predict_log_proba(FAR_SAME), model.predict_proba(FAR_SAME)
    for i, x in enumerate(FAR_SAME):
        ref = _gaussian_reference(model, x)
        assert model.predict(FAR_SAME[i:i + 1])[0] == int(np.argmax([float(v) for v in ref]))
        for k, r in enumerate(ref):
            assert abs(p[i, k] - float(mp.exp(r))) <= 1e-12, (i, k, p[i, k], r)
            if r > -1e300:
                assert abs(log_p[i, k] - float(r)) <= 1e-12 * max(1.0, abs(float(r))), (i, k)


@pytest.mark.parametrize("y", [Y2, Y3], ids=["2 classes", "3 classes"])
@pytest.mark.parametrize("est", GAUSSIAN, ids=repr)
def test_gaussian_classifiers_far_rows_other_outputs(est, y):
    model = clone(est).fit(X, y)
    assert not np.isnan(model.decision_function(FAR)).any()
    assert not np.isnan(model.score_samples(FAR)).any()
    assert np.all(model.score_samples(FAR)[:6] == -np.inf)  # below the float range


@pytest.mark.parametrize("est", [BayesianLogisticRegression(inference="laplace"),
                                 BayesianLogisticRegression(inference="variational")],
                         ids=repr)
def test_bayesian_logistic_far_rows_match_high_precision(est):
    # The moderated probability has a finite limit far away: sigma(mu / sqrt(pi var / 8)).
    _assert_matches(clone(est).fit(X, Y2), _bayes_reference)


def test_bayesian_softmax_far_rows_match_high_precision():
    _assert_matches(BayesianLogisticRegression(inference="laplace").fit(X, Y3),
                    _bayes_reference)


@pytest.mark.parametrize("method", ["map", "sample"])
def test_bayesian_logistic_sampled_far_rows_are_finite(method):
    model = BayesianLogisticRegression(n_samples=50, random_state=0).fit(X, Y2)
    p = model.predict_proba(FAR, method=method)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(axis=1), 1.0)


@pytest.mark.parametrize("y", [Y2, Y3], ids=["2 classes", "3 classes"])
def test_bayesian_map_log_proba_of_the_likely_class_keeps_its_digits(y):
    """At rows where one class has p = 1 - 1e-40 or so, its log p (about -1e-40) to
    1e-9 relative, not rounded to 0 (the mean of the draws' probabilities is 1 in
    floating point; the others' mean is not)."""
    model = BayesianLogisticRegression(inference="laplace").fit(X, y)
    signs = np.random.default_rng(1).choice([-1.0, 1.0], size=(4, X.shape[1]))
    rows = 60.0 * X.std(axis=0) * signs
    log_p = model.predict_log_proba(rows, method="map")
    K, p = model._n_blocks, model.posterior_mean_.size // model._n_blocks
    m = model.posterior_mean_.reshape(K, p)
    certain = 0
    for i, x in enumerate(rows):
        eta = [mp.mpf(m[k, 0]) + mp.fsum(mp.mpf(m[k, j + 1]) * mp.mpf(x[j])
                                          for j in range(len(x))) for k in range(K)]
        eta = [mp.mpf(0), eta[0]] if K == 1 else eta
        ref = [v - _logsumexp(eta) for v in eta]
        certain += max(float(v) for v in ref) > -1e-20  # one class near certain
        for k, r in enumerate(ref):
            assert abs(log_p[i, k] - float(r)) <= 1e-9 * abs(float(r)), (i, k, log_p[i, k], r)
    assert certain >= 2  # the rows exercise the case


@pytest.mark.parametrize("y", [Y2, Y3], ids=["2 classes", "3 classes"])
def test_logistic_regression_far_rows_match_high_precision(y):
    _assert_matches(LogisticRegression().fit(X, y), _logistic_reference)


@pytest.mark.parametrize("est", [problin.FisherDiscriminant(), problin.MultinomialNB(),
                                 problin.LeastSquaresClassifier(), problin.Perceptron()],
                         ids=repr)
@pytest.mark.filterwarnings("ignore::problin.ConvergenceWarning")  # the perceptron's
def test_linear_classifiers_far_rows(est):
    model = clone(est).fit(np.abs(X), Y3)
    rows = np.abs(FAR) if isinstance(est, problin.MultinomialNB) else FAR
    pred = model.predict(rows)
    assert set(pred) <= set(model.classes_)
    if hasattr(model, "predict_proba"):
        p = model.predict_proba(rows)
        assert np.all(np.isfinite(p)) and np.allclose(p.sum(axis=1), 1.0)
    if hasattr(model, "decision_function"):
        assert not np.isnan(model.decision_function(rows)).any()


def test_report_notes_far_rows():
    from problin.report import build_report
    rows, y = np.vstack([FAR, X]), np.r_[np.zeros(len(FAR), int), Y2]
    page = build_report(LinearDiscriminantAnalysis().fit(X, Y2), rows, y)
    assert "6 rows (first: row 0) hold feature values beyond ±1e+144" in page
    assert "Decision regions" in page and "Calibration" in page


# ------------------------------------------------------------------------------ CLI
def _problin(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "problin", *map(str, argv)], cwd=cwd,
                          capture_output=True, text=True, timeout=240)


def _frame(Z, y):
    frame = pd.DataFrame(Z, columns=["x0", "x1", "x2"])
    frame["y"] = y
    return frame


def _one_line_error(result):
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr + result.stdout
    assert len(lines) == 1 and lines[0].startswith("Error:"), result.stderr
    return lines[0]


@pytest.mark.parametrize("model", ["logistic", "lda", "gaussian-nb", "fisher", "linear"])
def test_cli_fit_refuses_in_one_line(tmp_path, model):
    _frame(_with(1e308), T if model == "linear" else Y2).to_csv(tmp_path / "d.csv",
                                                                index=False)
    line = _one_line_error(_problin("fit", "d.csv", "-t", "y", "-m", model, "-o", "m.problin",
                                    cwd=tmp_path))
    assert "2 rows" in line and "x1" in line and not (tmp_path / "m.problin").exists()


@pytest.mark.slow
def test_cli_fit_on_dask_refuses_in_one_line(tmp_path):
    pytest.importorskip("dask.dataframe")
    _frame(_with(1e308), Y2).to_csv(tmp_path / "d.csv", index=False)
    line = _one_line_error(_problin("fit", "d.csv", "-t", "y", "-m", "lda", "--engine", "dask",
                                    "-o", "m.problin", cwd=tmp_path))
    assert "chunk" in line and "too large" in line


@pytest.mark.parametrize("model", ["lda", "qda", "gaussian-nb", "bayes-logistic", "logistic",
                                   "linear"])
@pytest.mark.slow
def test_cli_predict_and_report_far_rows(tmp_path, model):
    y = (T, T[:4]) if model == "linear" else (Y2, Y2[:4])
    _frame(X, y[0]).to_csv(tmp_path / "train.csv", index=False)
    _frame(np.vstack([FAR, X[:4]]), np.r_[np.zeros(len(FAR)), y[1]]).to_csv(
        tmp_path / "far.csv", index=False)
    assert _problin("fit", "train.csv", "-t", "y", "-m", model, "-o", "m.problin",
                    cwd=tmp_path).returncode == 0
    proba = [] if model == "linear" else ["--proba"]
    pred = _problin("predict", "m.problin", "far.csv", *proba, "-o", "p.csv", cwd=tmp_path)
    assert pred.returncode == 0, pred.stderr
    out = pd.read_csv(tmp_path / "p.csv", keep_default_na=False)
    assert not (out.astype(str) == "").any().any(), out  # no empty cells
    if model != "linear":
        np.testing.assert_allclose(out[["p_0", "p_1"]].sum(axis=1), 1.0, atol=1e-12)
    report = _problin("report", "m.problin", "far.csv", "-o", "r.html", cwd=tmp_path)
    if report.returncode == 0:  # a report, with a note saying what is wrong
        page = (tmp_path / "r.html").read_text()
        assert "6 rows (first: row 0) hold feature values beyond" in page
        assert "Traceback" not in report.stderr
    else:
        _one_line_error(report)


@pytest.mark.parametrize("model", [LinearRegression(), LMSRegressor(random_state=0)],
                         ids=["LinearRegression", "LMSRegressor"])
def test_regression_predictions_never_nan_where_products_overflow(model):
    # weights 2 and -2 on a row of 1e308, 1e308: each product overflows to +-inf and
    # their sum was NaN; the scaled row gives the true value 1e308 (2 w_0 + ...) rounded
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = 2.0 * X[:, 0] - 2.0 * X[:, 1] + 0.01 * rng.normal(size=400)
    fit = model.fit(X, y)
    rows = np.array([[1e308, 1e308], [1e308, -1e308], [1.0, 2.0]])
    pred = fit.predict(rows)
    assert not np.isnan(pred).any()
    w = fit.coef_.ravel()
    assert pred[0] == pytest.approx(1e308 * (w[0] + w[1]), rel=1e-6)  # finite: ~1e305
    assert pred[1] == np.inf
    assert pred[2] == pytest.approx(fit.intercept_ + w @ [1.0, 2.0])


def _se_reference(cov, x, intercept=True):
    """``sqrt(x~^T Cov x~)`` in 700 digits."""
    z = ([mp.mpf(1)] if intercept else []) + [mp.mpf(float(v)) for v in x]
    return mp.sqrt(mp.fsum(mp.mpf(float(cov[i, j])) * z[i] * z[j]
                           for i in range(len(z)) for j in range(len(z))))


@pytest.mark.parametrize("model", [LogisticRegression(), problin.ProbitRegression(),
                                   LinearRegression()], ids=repr)
def test_predict_interval_at_far_rows_is_finite_and_exact(model):
    """Rows at 1e200 (and 1e300): the standard error of the linear predictor is finite
    (its square overflows), the probability's delta-method standard error its limit 0
    (not 0 * inf = NaN), the interval's ends the limits the signs of eta -+ q se give;
    least squares' standard error the value itself, to 1e-9. No numpy warnings."""
    from scipy import stats
    y = X @ [1.0, 2.0, 3.0] if isinstance(model, LinearRegression) else Y2
    model = clone(model).fit(X, y)
    rows = np.array([[1e200, -3e199, 5e199], [-2e300, 1e300, 0.0], [0.0, 0.0, 1e250]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        table = model.predict_interval(rows)
    assert not table.isna().to_numpy().any()
    cov = model.covariance_
    eta = model.decision_function(rows) if hasattr(model, "decision_function") else \
        model.predict(rows)
    for i, x in enumerate(rows):
        se = _se_reference(cov, x)
        if isinstance(model, LinearRegression):
            assert abs(table["std_err"].iloc[i] - float(se)) <= 1e-9 * float(se)
            continue
        assert table["std_err"].iloc[i] == 0.0
        q = stats.norm.isf(0.025)
        for end, sign in (("ci_low", -1), ("ci_high", 1)):
            limit = float(mp.mpf(float(eta[i])) + sign * q * se > 0)
            assert table[end].iloc[i] == limit, (i, end)
