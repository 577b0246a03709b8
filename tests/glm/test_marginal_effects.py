"""Marginal effects: parity with statsmodels' get_margeff, weights, penalised fits, bad input."""
import functools
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats
from sklearn.datasets import load_breast_cancer, load_wine

from problin import LogisticRegression, ProbitRegression

COLUMNS = ["dy/dx", "std_err", "z", "p_value", "ci_low", "ci_high"]
REFERENCE = {LogisticRegression: sm.Logit, ProbitRegression: sm.Probit}
FIT = {"method": "newton", "tol": 1e-14, "maxiter": 200, "disp": 0}


def spector():
    data = sm.datasets.spector.load_pandas()
    return data.exog, data.endog


def breast_cancer_standardised():
    X = load_breast_cancer(as_frame=True).data[["mean radius", "mean texture",
                                               "mean smoothness", "mean symmetry"]]
    return (X - X.mean()) / X.std(), load_breast_cancer().target


def anes96():
    data = sm.datasets.anes96.load_pandas()
    return data.exog[["logpopul", "selfLR", "age", "educ", "income"]], data.endog


def wine():
    data = load_wine(as_frame=True)
    return data.data[["alcohol", "malic_acid", "ash"]], data.target


BINARY = {"spector": spector, "breast-cancer": breast_cancer_standardised}
MULTI = {"anes96": anes96, "wine": wine}


def _assert_table_matches(ours, ref_frame):
    assert list(ours.columns) == COLUMNS
    theirs = ref_frame.to_numpy()
    assert_allclose(ours[COLUMNS[:3]].to_numpy(), theirs[:, :3], rtol=1e-6)
    # p-values: a relative error e in z is one of about z^2 e in p (statsmodels
    # differentiates numerically): compare the z they come from instead
    assert_allclose(ours["p_value"], 2 * stats.norm.sf(np.abs(ours["z"])), rtol=1e-12)
    p_gap = np.abs(ours["p_value"].to_numpy() - theirs[:, 3])
    assert np.all(p_gap <= 1e-6 * (1 + theirs[:, 2] ** 2) * theirs[:, 3])
    # interval ends near zero: relative to the scale of the estimate and its error
    gap = np.abs(ours[["ci_low", "ci_high"]].to_numpy() - theirs[:, 4:])
    assert np.all(gap <= 1e-6 * (np.abs(theirs[:, 4:]) + theirs[:, 1:2]))


@pytest.mark.parametrize("at", ["overall", "mean"])
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_binary_matches_statsmodels(model, name, at):
    X, y = BINARY[name]()
    ours = model().fit(X, y)
    ref = REFERENCE[model](np.asarray(y, float), sm.add_constant(np.asarray(X, float))).fit(**FIT)
    table = ours.marginal_effects(X, at=at)
    _assert_table_matches(table, ref.get_margeff(at=at, method="dydx").summary_frame())
    assert list(table.index) == list(X.columns)
    assert table.index.name == "feature"
    assert table.attrs["at"] == at


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
@pytest.mark.parametrize("at", ["overall", "mean"])
@pytest.mark.parametrize("name", sorted(MULTI))
def test_softmax_matches_mnlogit_for_every_class(name, at):
    X, y = MULTI[name]()
    ours = LogisticRegression().fit(X, y)
    ref = sm.MNLogit(np.asarray(y), sm.add_constant(np.asarray(X, float))).fit(**FIT)
    table = ours.marginal_effects(X, at=at)
    frame = ref.get_margeff(at=at, method="dydx").summary_frame()
    _assert_table_matches(table, frame)
    K, d = ours.classes_.size, X.shape[1]
    assert table.index.names == ["class", "feature"]
    assert table.shape[0] == K * d  # all K classes, the reference included
    assert list(table.index.get_level_values("class")) == np.repeat(ours.classes_, d).tolist()
    assert list(table.index.get_level_values("feature")) == list(X.columns) * K
    # the effects on the K probabilities sum to zero
    assert_allclose(table["dy/dx"].to_numpy().reshape(K, d).sum(axis=0), 0.0, atol=1e-14)


def test_robust_covariance_flows_through_the_delta_method():
    # statsmodels' margeff uses the fit's cov_params(), robust when cov_type says so
    X, y = spector()
    ours = LogisticRegression(cov_type="HC0").fit(X, y)
    ref = sm.Logit(np.asarray(y), sm.add_constant(np.asarray(X, float))).fit(
        cov_type="HC0", **FIT)
    _assert_table_matches(ours.marginal_effects(X), ref.get_margeff().summary_frame())


def test_without_intercept_and_plain_arrays():
    X, y = spector()
    X = np.asarray(X, float)
    ours = LogisticRegression(fit_intercept=False).fit(X, y)
    ref = sm.Logit(np.asarray(y), X).fit(**FIT)
    table = ours.marginal_effects(X)
    _assert_table_matches(table, ref.get_margeff().summary_frame())
    assert list(table.index) == ["x0", "x1", "x2"]


@pytest.mark.parametrize("at", ["overall", "mean"])
@pytest.mark.parametrize("multi", [False, True])
def test_integer_weights_equal_repeated_rows_in_statsmodels(multi, at):
    # statsmodels' discrete models take no weights: a row of weight 2 is a duplicated row.
    X, y = anes96() if multi else spector()
    X, y = np.asarray(X, float), np.asarray(y)
    w = np.random.default_rng(0).integers(0, 4, size=y.size)
    ours = LogisticRegression().fit(X, y, sample_weight=w)
    rows = np.repeat(np.arange(y.size), w)
    model = sm.MNLogit if multi else sm.Logit
    ref = model(y[rows], sm.add_constant(X[rows])).fit(**FIT)
    table = ours.marginal_effects(X, at=at, sample_weight=w)
    _assert_table_matches(table, ref.get_margeff(at=at).summary_frame())


def _effects(theta, X, K, L, link, intercept):
    """Reference: average marginal effects straight from the formulas."""
    d = X.shape[1]
    Theta = theta.reshape(L, -1)
    b = Theta[:, 0] if intercept else np.zeros(L)
    W = Theta[:, int(intercept):]
    eta = X @ W.T + b
    if K == 2:
        f = stats.norm.pdf(eta[:, 0]) if link == "probit" else \
            np.exp(-eta[:, 0]) / (1 + np.exp(-eta[:, 0])) ** 2
        return (f.mean() * W[0])
    W = np.vstack([np.zeros((K - L, d)), W])
    eta = np.column_stack([np.zeros((X.shape[0], K - L)), eta])
    P = np.exp(eta - eta.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return (P[:, :, None] * (W[None] - (P @ W)[:, None, :])).mean(axis=0).ravel()


def _numerical_jacobian(func, theta, h=1e-6):
    cols = []
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = h * max(1.0, abs(theta[i]))
        cols.append((func(theta + e) - func(theta - e)) / (2 * e[i]))
    return np.column_stack(cols)


@pytest.mark.parametrize("case", ["logit", "probit", "softmax", "softmax-no-intercept"])
def test_penalised_fits_use_the_laplace_covariance(case):
    X, y = wine() if case.startswith("softmax") else breast_cancer_standardised()
    X = np.asarray(X, float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    intercept = case != "softmax-no-intercept"
    model = ProbitRegression if case == "probit" else LogisticRegression
    ours = model(alpha=2.0, fit_intercept=intercept).fit(X, y)
    fit = ours._result
    K = ours.classes_.size
    L = fit.n_blocks
    assert L == (K if K > 2 else 1)  # penalised softmax: all K blocks
    link = "probit" if case == "probit" else "logit"
    me = _effects(fit.theta, X, K, L, link, intercept)
    J = _numerical_jacobian(lambda t: _effects(t, X, K, L, link, intercept), fit.theta)
    se = np.sqrt(np.diag(J @ ours.covariance_ @ J.T))
    table = ours.marginal_effects(X)
    assert_allclose(table["dy/dx"], me, rtol=1e-10, atol=1e-14)
    assert_allclose(table["std_err"], se, rtol=1e-6)


@pytest.mark.parametrize("link", ["probit", "softmax"])
def test_many_row_blocks_in_parallel_ranges_equal_the_formulas(link):
    # enough rows for several blocks in each of the thread ranges of the pass
    rng = np.random.default_rng(1)
    n, d = (200_000, 2) if link == "probit" else (70_000, 4)
    X = rng.normal(size=(n, d)) + 3.0
    eta = X @ rng.normal(0, 0.5, (d, 4)) - 1.5
    y = np.argmax(eta + rng.gumbel(size=eta.shape), axis=1)
    if link == "probit":
        y = (eta[:, 0] + rng.normal(size=n) > 0).astype(int)
    ours = (ProbitRegression() if link == "probit" else LogisticRegression()).fit(X, y)
    fit = ours._result
    K, L = ours.classes_.size, fit.n_blocks
    effects = lambda t: _effects(t, X, K, L, "probit" if K == 2 else "logit", True)
    J = _numerical_jacobian(effects, fit.theta)
    table = ours.marginal_effects(X, sample_weight=np.ones(n))
    assert_allclose(table["dy/dx"], effects(fit.theta), rtol=1e-10, atol=1e-14)
    assert_allclose(table["std_err"], np.sqrt(np.diag(J @ ours.covariance_ @ J.T)), rtol=1e-6)


def test_sparse_float32_and_dense_agree():
    X, y = breast_cancer_standardised()
    X = np.array(X, float)
    X[np.abs(X) < 0.5] = 0.0
    ours = LogisticRegression().fit(X, y)
    dense = ours.marginal_effects(X)
    for at in ["overall", "mean"]:
        assert_allclose(ours.marginal_effects(sp.csr_matrix(X), at=at),
                        ours.marginal_effects(X, at=at), rtol=1e-12, atol=1e-15)
    assert_allclose(ours.marginal_effects(X.astype(np.float32))["dy/dx"], dense["dy/dx"],
                    rtol=1e-5)


def test_far_rows_give_finite_effects():
    X, y = spector()
    X = np.asarray(X, float)
    ours = ProbitRegression().fit(X, y)
    far = np.vstack([np.asarray(X, float), [[1e200, -1e200, 1e200]]])
    table = ours.marginal_effects(far)
    assert np.isfinite(table.to_numpy()).all()
    near = ours.marginal_effects(np.asarray(X, float))
    # the far row's density is 0: it only adds to the row count
    assert_allclose(table["dy/dx"] * far.shape[0], near["dy/dx"] * X.shape[0], rtol=1e-12)


@functools.cache
def _anes96_softmax():
    X, y = anes96()
    return LogisticRegression().fit(np.asarray(X, float), y)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(0.1, 10.0))
def test_rows_order_and_weight_scale_do_not_matter(seed, scale):
    X, y = anes96()
    X = np.asarray(X, float)
    ours = _anes96_softmax()
    rng = np.random.default_rng(seed)
    w = rng.random(y.size)
    order = rng.permutation(y.size)
    a = ours.marginal_effects(X, sample_weight=w)
    b = ours.marginal_effects(X[order], sample_weight=scale * w[order])
    assert_allclose(a.to_numpy(), b.to_numpy(), rtol=1e-9, atol=1e-15)


def test_level_sets_interval_width():
    X, y = spector()
    table = LogisticRegression().fit(X, y).marginal_effects(X, level=0.9)
    assert_allclose(table["ci_high"] - table["ci_low"],
                    2 * stats.norm.isf(0.05) * table["std_err"], rtol=1e-12)


def test_bad_input_has_one_clear_error_each():
    X, y = spector()
    X = np.asarray(X, float)
    model = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="at must be one of"):
        model.marginal_effects(X, at="median")
    with pytest.raises(ValueError, match="3 features"):
        model.marginal_effects(np.asarray(X)[:, :2])
    with pytest.raises(ValueError, match="needs X"):
        model.marginal_effects()
    with pytest.raises(ValueError, match="sample_weight has shape"):
        model.marginal_effects(X, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="level must be in"):
        model.marginal_effects(X, level=1.5)
    with pytest.raises(ValueError, match="compute_covariance"):
        model._set_fit(model._result.replace(covariance=None))
        model.marginal_effects(X)
    unfitted = ProbitRegression()
    with pytest.raises(Exception, match="not fitted"):
        unfitted.marginal_effects(X)


def test_dask_input_is_refused():
    da = pytest.importorskip("dask.array")
    X, y = spector()
    model = LogisticRegression().fit(X, y)
    with pytest.raises(TypeError, match="in memory"):
        model.marginal_effects(da.from_array(np.asarray(X, float), chunks=10))


def test_table_is_a_dataframe_with_readable_names():
    X, y = wine()
    y = pd.Series(np.array(["a", "b", "c"])[y])
    table = LogisticRegression().fit(X, y).marginal_effects(X, at="mean")
    assert isinstance(table, pd.DataFrame)
    assert table.loc[("a", "alcohol"), "dy/dx"] == table["dy/dx"].iloc[0]


def _mp_effects(link, theta, x, K):
    """Marginal effects at one row and their Jacobian from the formulas of the module
    docstring, in mpmath (binary: the second class's effects; softmax: every class's,
    the first class's logits fixed at 0). Products of probabilities are formed as
    such (``1 - p_k`` as the others' sum), which mpmath's unbounded exponents keep."""
    import mpmath as mp
    d = len(x)
    xt = [mp.mpf(1)] + list(x)
    blocks = [theta[i:i + d + 1] for i in range(0, len(theta), d + 1)]
    if K == 2:
        b = blocks[0]
        eta = mp.fsum(b[a] * xt[a] for a in range(d + 1))
        if link == "probit":
            f, df = mp.npdf(eta), -eta * mp.npdf(eta)
        else:
            sig, rest = 1 / (1 + mp.exp(-eta)), 1 / (1 + mp.exp(eta))
            f = sig * rest
            df = f * (rest - sig)
        me = [f * b[1 + j] for j in range(d)]
        J = [[df * b[1 + j] * xt[a] + (f if a == 1 + j else 0) for a in range(d + 1)]
             for j in range(d)]
        return me, J
    L = K - 1
    W = [[mp.mpf(0)] * d] + [[b[1 + j] for j in range(d)] for b in blocks]
    eta = [mp.mpf(0)] + [mp.fsum(b[a] * xt[a] for a in range(d + 1)) for b in blocks]
    top = max(eta)
    z = mp.fsum(mp.exp(e - top) for e in eta)
    p = [mp.exp(e - top) / z for e in eta]
    G = [[(mp.fsum(p[m] for m in range(K) if m != k) if k == m_ else -p[m_]) * p[k]
          for m_ in range(K)] for k in range(K)]
    ME = [[mp.fsum(p[k] * p[m] * (W[k][j] - W[m][j]) for m in range(K)) for j in range(d)]
          for k in range(K)]
    dev = [[mp.fsum(p[m] * (W[k][j] - W[m][j]) for m in range(K)) for j in range(d)]
           for k in range(K)]  # w_k - wbar
    me, J = [], []
    for k in range(K):
        for j in range(d):
            me.append(ME[k][j])
            row = []
            for l in range(1, L + 1):  # free blocks
                for a in range(d + 1):
                    v = (G[k][l] * dev[k][j] - p[k] * ME[l][j]) * xt[a]
                    row.append(v + (G[k][l] if a == 1 + j else 0))
            J.append(row)
    return me, J


@pytest.mark.parametrize("case", ["logit", "probit", "softmax"])
@pytest.mark.parametrize("row", [[0.3, -0.2], [50.0, -30.0], [600.0, 1.0], [-1e4, 3.0], [1e200, 1.0]])
def test_effects_at_rows_far_out_match_an_80_digit_reference(case, row):
    """At rows far out the effects are tiny, and their squares in the delta method
    underflowed: z was 0/0 (NaN) or, with the probit, the standard error 0 and z
    infinite. Each output is now carried on its own log scale; z, p and the
    effects (where representable) match the formulas in 80-digit arithmetic."""
    import mpmath as mp
    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 2))
    logits = X @ np.array([[1.0, -0.5, 0.3], [-0.4, 0.8, 0.6]])
    if case == "softmax":
        y = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
        est = LogisticRegression().fit(X, y)
    else:
        y = (logits[:, 0] + rng.logistic(size=400) > 0).astype(int)
        est = (ProbitRegression() if case == "probit" else LogisticRegression()).fit(X, y)
    if case == "probit" and abs(row[0]) > 1e150:
        with pytest.raises(ValueError, match="overflows float64"):
            est.marginal_effects(np.array([row]), at="mean")
        return
    K = est.classes_.size
    table = est.marginal_effects(np.array([row]), at="mean")
    theta = np.concatenate([est.intercept_[:, None] if K > 2 else est.intercept_[None, :],
                            np.atleast_2d(est.coef_)], axis=1)
    if K > 2:
        theta = theta[1:] - theta[0]  # the contrasts to the first class
    with mp.workdps(80):
        th = [mp.mpf(float(v)) for v in theta.ravel()]
        x = [mp.mpf(v) for v in row]
        me, J = _mp_effects(case, th, x, K)
        cov = mp.matrix(est.covariance_.tolist())
        for o, (effect, row_J) in enumerate(zip(me, J)):
            Jo = mp.matrix([row_J])
            se = mp.sqrt((Jo * cov * Jo.T)[0, 0])
            z = effect / se
            got = table.iloc[o]
            assert got["z"] == pytest.approx(float(z), rel=1e-9, abs=1e-300)
            assert got["p_value"] == pytest.approx(float(2 * mp.ncdf(-abs(z))), rel=1e-9)
            assert got["dy/dx"] == pytest.approx(float(effect), rel=1e-9, abs=1e-300)
            assert got["std_err"] == pytest.approx(float(se), rel=1e-9, abs=1e-300)


def test_a_far_row_alone_in_its_block_adds_nothing():
    """The last row block holds only a row at 1e200, whose probit Jacobian overflows on
    its own scale: beside the other blocks it weighs 0, without NaN or a warning."""
    from problin.glm.marginal import block_rows
    X, y = spector()
    X = np.asarray(X, float)
    ours = ProbitRegression().fit(X, y)
    rows = block_rows(2 * X.shape[1] + 2)
    near = X[np.arange(rows) % X.shape[0]]
    far = np.vstack([near, [[1e200, -1e200, 1e200]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = ours.marginal_effects(far)
    expected = ours.marginal_effects(near)
    assert_allclose(table["dy/dx"] * far.shape[0], expected["dy/dx"] * rows, rtol=1e-12)
    assert_allclose(table["z"], expected["z"], rtol=1e-12)


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
@pytest.mark.parametrize("at", ["overall", "mean"])
def test_offsets_enter_the_effects_as_they_enter_the_predictions(model, at):
    """A model fitted with an offset: its effects at the training rows take the rows'
    offsets (they were computed at offset 0, 54 % off, with no way to pass them).
    Reference: the closed-form average effect f(eta) w and its delta-method Jacobian,
    written out here with the offset in eta (at="mean": at the mean row and offset)."""
    rng = np.random.default_rng(6)
    n = 300
    X = rng.normal(size=(n, 2))
    off = rng.normal(size=n) + 2.0
    y = (rng.random(n) < stats.norm.cdf(X @ [1.0, -0.5] + 0.5 * off)).astype(int)
    m = model().fit(X, y, offset=off)
    table = m.marginal_effects(X, at=at, offset=off)
    theta = np.r_[m.intercept_, np.ravel(m.coef_)]
    Xa, o = np.c_[np.ones(n), X], off
    if at == "mean":
        Xa, o = Xa.mean(axis=0, keepdims=True), off.mean(keepdims=True)
    eta = Xa @ theta + o
    if model is LogisticRegression:
        p = 1.0 / (1.0 + np.exp(-eta))
        f, fp = p * (1 - p), p * (1 - p) * (1 - 2 * p)
    else:
        f, fp = stats.norm.pdf(eta), -eta * stats.norm.pdf(eta)
    J = np.outer(theta[1:], (fp[:, None] * Xa).mean(axis=0))
    J[:, 1:] += np.eye(2) * f.mean()
    assert_allclose(table["dy/dx"], f.mean() * theta[1:], rtol=1e-12)
    assert_allclose(table["std_err"], np.sqrt(np.diag(J @ m.covariance_ @ J.T)), rtol=1e-10)
    with pytest.raises(ValueError, match="binary models only"):
        LogisticRegression().fit(X, rng.integers(0, 3, n)).marginal_effects(X, offset=off)


@pytest.mark.parametrize("classes", [2, 3])
def test_a_collinear_feature_gets_a_note_and_the_others_keep_their_errors(classes):
    """x3 = x0 + x1: x3's weight is not identified (NaN in covariance_), and every
    effect's standard error was NaN, x2's too. x2's effect and standard error now equal
    those of the fit without the redundant column (same fitted probabilities); x3's
    effects have none, with the note the coefficient table gives."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 3))
    eta = X @ [1.0, 0.5, -1.0]
    y = ((rng.random(400) < 1 / (1 + np.exp(-eta))).astype(int) if classes == 2
         else np.digitize(eta + rng.logistic(size=400), [-1.0, 1.0]))
    X4 = np.column_stack([X, X[:, 0] + X[:, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the collinearity warning
        full = LogisticRegression().fit(X4, y).marginal_effects(X4)
    plain = LogisticRegression().fit(X, y).marginal_effects(X)
    rows = ["x2"] if classes == 2 else [(k, "x2") for k in range(3)]
    assert_allclose(full.loc[rows, COLUMNS], plain.loc[rows, COLUMNS], rtol=1e-6)
    x3 = full.index.get_level_values(-1) == "x3"
    assert full.loc[x3, "std_err"].isna().all()
    assert (full.loc[x3, "note"] == "not identified (collinear)").all()
    assert full.loc[~x3, "std_err"].notna().all() and (full.loc[~x3, "note"] == "").all()
