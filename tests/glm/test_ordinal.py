"""OrdinalRegression against statsmodels ``OrderedModel``, R ``MASS::polr`` and closed forms.

statsmodels parametrises the cut-points as the first one and the logs of the increments
(``theta_k = c_0 + sum_{m<=k} exp(c_m)``); its fit is polished here by its own Newton
method, and the reference standard errors come from the observed information of its own
log-likelihood differentiated by Richardson-extrapolated central differences (its
``cov_params`` uses a plain two-point numerical Hessian, good to ~3e-6 only), mapped to
the cut-points by the delta method.
"""
import os
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels
from numpy.testing import assert_allclose
from scipy import optimize, stats
from statsmodels.miscmodels.ordinal_model import OrderedModel
from statsmodels.miscmodels.tests.results import results_ordinal_model as R

from problin import (
    LogisticRegression,
    OrdinalRegression,
    ProbitRegression,
    ProblinWarning,
    SeparationWarning,
    lr_test,
)

UCLA = pd.read_csv(os.path.join(os.path.dirname(statsmodels.__file__),
                                "miscmodels", "tests", "results", "ologit_ucla.csv"))
ORDER = ["unlikely", "somewhat likely", "very likely"]


def _simulated():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) * [1.0, 3.0, 0.5] + [0.0, 5.0, 1.0]
    latent = X @ [0.8, -0.3, 1.2] + rng.logistic(size=300)
    return pd.DataFrame(X, columns=["a", "b", "c"]), np.digitize(latent, [-1.0, 0.5, 1.5, 3.0])


def _data(name):
    if name == "ucla":
        return UCLA[["pared", "public", "gpa"]], UCLA["apply"].to_numpy(), ORDER
    X, y = _simulated()
    return X, y, None


def _sm_params(psi, D):
    """statsmodels' parameters of ``[beta, theta]``."""
    theta = psi[D:]
    return np.concatenate((psi[:D], [theta[0]], np.log(np.diff(theta))))


def _psi(par, D):
    return np.concatenate((par[:D], par[D] + np.concatenate(([0.0],
                                                             np.cumsum(np.exp(par[D + 1:]))))))


def _hessian(f, x, h=1e-3):
    """Richardson-extrapolated central-difference Hessian (error O(h^4))."""
    def central(step):
        p = x.size
        H = np.empty((p, p))
        E = np.eye(p) * step
        for i in range(p):
            for j in range(i, p):
                H[i, j] = H[j, i] = (f(x + E[i] + E[j]) - f(x + E[i] - E[j])
                                     - f(x - E[i] + E[j]) + f(x - E[i] - E[j])) / (4 * step ** 2)
        return H
    return (4 * central(h / 2) - central(h)) / 3


_SM = {}


def _statsmodels(name, link):
    """statsmodels' optimum, in ``[beta, theta]``, its model and the reference covariance."""
    if (name, link) not in _SM:
        X, y, order = _data(name)
        endog = pd.Series(pd.Categorical(y, categories=order, ordered=True))
        model = OrderedModel(endog, X, distr=link)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = model.fit(method="bfgs", disp=False, gtol=1e-10, maxiter=2000).params
            res = model.fit(method="newton", start_params=start, disp=False, maxiter=3)
        D = X.shape[1]
        psi = _psi(res.params.to_numpy(), D)
        H = _hessian(lambda v: -model.loglike(_sm_params(v, D)), psi)
        _SM[name, link] = psi, model, np.linalg.inv(H), res.llf
    return _SM[name, link]


@pytest.mark.parametrize("name", ["ucla", "simulated"])
@pytest.mark.parametrize("link", ["logit", "probit"])
def test_statsmodels_parity(name, link):
    X, y, order = _data(name)
    psi, model, cov, llf = _statsmodels(name, link)
    m = OrdinalRegression(link=link, classes=order).fit(X, y)
    assert m.converged_
    assert_allclose(np.concatenate((m.coef_, m.cutpoints_)), psi, rtol=0, atol=1e-7)
    assert_allclose(np.sqrt(np.diag(m.covariance_)), np.sqrt(np.diag(cov)), rtol=1e-6)
    assert_allclose(m.log_likelihood_, llf, rtol=1e-12)
    D = X.shape[1]
    assert_allclose(m.predict_proba(X), model.predict(_sm_params(psi, D)), atol=1e-9)
    table = m.summary()
    labels = [str(c) for c in m.classes_]
    assert list(table.index[D:]) == [f"{a}|{b}" for a, b in zip(labels[:-1], labels[1:])]
    # the null model: thresholds only, closed form from the class shares
    shares = np.unique(y, return_counts=True)[1]
    assert_allclose(m.null_log_likelihood_, np.sum(shares * np.log(shares / y.size)))
    assert_allclose(m.pseudo_r2_, 1 - m.log_likelihood_ / m.null_log_likelihood_)
    assert_allclose(m.bic_, -2 * llf + np.log(y.size) * psi.size)


@pytest.mark.parametrize("link, res", [("logit", R.res_ord_logit), ("probit", R.res_ord_probit),
                                       ("cloglog", R.res_ord_cloglog)])
def test_polr_reference(link, res):
    """R ``MASS::polr`` (statsmodels' test results). polr stops its BFGS at a relative
    change of 1e-8 in the deviance, which leaves its estimates up to 8e-4 standard errors
    from the optimum: compared to that accuracy, and R's point is checked to be no better
    a fit than ours."""
    df = R.data_store.df
    X = df[["pared", "public", "gpa"]]
    m = OrdinalRegression(link=link, classes=ORDER).fit(X, df["apply"])
    se = m.summary()["std_err"].to_numpy()
    assert np.all(np.abs(m.coef_ - res.coefficients_val) <= 1e-3 * se[:3])
    assert np.all(np.abs(m.cutpoints_ - res.thresholds) <= 1e-3 * se[3:])
    assert_allclose(se[:3], res.coefficients_stdE, rtol=0, atol=6e-5)
    assert_allclose(m.predict_proba(X[:7]), res.prob_pred, atol=5e-5)
    model = OrderedModel(df["apply"], X, distr={"cloglog": R_CLOGLOG}.get(link, link))
    at_r = model.loglike(_sm_params(np.concatenate((res.coefficients_val, res.thresholds)), 3))
    assert at_r <= m.log_likelihood_ + 1e-12


class _GumbelMin(stats.rv_continuous):
    """polr's cloglog, ``F = 1 - exp(-e^x)``, as a scipy distribution for OrderedModel."""

    def _cdf(self, x):
        return -np.expm1(-np.exp(x))

    def _pdf(self, x):
        return np.exp(x - np.exp(x))


R_CLOGLOG = _GumbelMin(name="cloglog")


def _sm_psi_loglikeobs(model, D):
    return lambda v: model.loglikeobs(_sm_params(v, D))


def _row_scores(f, x, h=1e-5):
    """Central-difference Jacobian of the rows' log-likelihoods (n x p)."""
    return np.column_stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("cov_type", ["HC0", "HC1", "cluster"])
def test_robust_covariances(cov_type):
    """Sandwiches ``c H^-1 (sum s s^T) H^-1`` from statsmodels' row log-likelihoods
    differentiated numerically, with statsmodels' small-sample factors."""
    X, y, order = _data("ucla")
    psi, model, bread, _ = _statsmodels("ucla", "logit")
    groups = np.arange(y.size) % 23
    S = _row_scores(_sm_psi_loglikeobs(model, 3), psi)
    n, k = S.shape
    if cov_type == "cluster":
        G = np.zeros((23, k))
        np.add.at(G, groups, S)
        meat, factor = G.T @ G, 23 / 22 * (n - 1) / (n - k)
    else:
        meat, factor = S.T @ S, 1.0 if cov_type == "HC0" else n / (n - k)
    want = factor * bread @ meat @ bread
    m = OrdinalRegression(classes=order, cov_type=cov_type).fit(
        X, y, groups=groups if cov_type == "cluster" else None)
    assert_allclose(np.sqrt(np.diag(m.covariance_)), np.sqrt(np.diag(want)), rtol=1e-6)
    with pytest.raises(ValueError, match="leverage"):
        OrdinalRegression(cov_type="HC3").fit(X, y)


def test_effects_per_category():
    """Average slopes per category: equal to central differences of the average predicted
    probabilities, and summing to zero across the categories (estimates and their
    Jacobians: the standard error of the sum is zero)."""
    X, y, order = _data("simulated")
    m = OrdinalRegression().fit(X, y)
    table = m.slopes(X)
    est = table["estimate"].unstack("class")
    assert_allclose(est.sum(axis=1), 0.0, atol=1e-12)
    h = 1e-5
    for j, name in enumerate(X.columns):
        up, down = X.copy(), X.copy()
        up[name] += h
        down[name] -= h
        numeric = (m.predict_proba(up) - m.predict_proba(down)).mean(axis=0) / (2 * h)
        got = est.xs(name, level="term").to_numpy().ravel()
        assert_allclose(got, numeric, rtol=1e-6, atol=1e-9)
    comp = m.comparisons(X, variables="a")["estimate"]
    assert_allclose(comp.sum(), 0.0, atol=1e-12)
    total = m.slopes(X, hypothesis=None)  # the table's standard errors are the delta method's
    assert (total["std_err"] > 0).all()


def test_predict_interval_and_median():
    X, y, order = _data("ucla")
    psi, model, cov, _ = _statsmodels("ucla", "logit")
    m = OrdinalRegression(classes=order).fit(X, y)
    rows = X[:4]
    table = m.predict_interval(rows, level=0.9)
    P = m.predict_proba(rows)
    assert_allclose(table["mean"].to_numpy().reshape(4, 3), P, rtol=1e-12)
    # delta method with statsmodels' probabilities differentiated numerically
    f = lambda v: model.predict(_sm_params(v, 3), exog=rows.to_numpy()).ravel()
    J = _row_scores(f, psi, 1e-6)
    se = np.sqrt(np.einsum("ij,jk,ik->i", J, m.covariance_, J))
    assert_allclose(table["std_err"].to_numpy(), se, rtol=1e-6)
    assert np.all((table["ci_low"] < table["mean"]) & (table["mean"] < table["ci_high"]))
    cumulative = np.cumsum(m.predict_proba(X), axis=1)
    median = np.asarray(order)[np.argmax(cumulative >= 0.5, axis=1)]
    assert (m.predict(X, kind="median") == median).all()
    assert (m.predict(X) == np.asarray(order)[np.argmax(m.predict_proba(X), axis=1)]).all()


def test_wald_lr_and_penalty():
    X, y, order = _data("ucla")
    full = OrdinalRegression(link="probit", classes=order).fit(X, y)
    small = OrdinalRegression(link="probit", classes=order).fit(X[["pared", "gpa"]], y)
    z = full.summary().loc["public", "z"]
    assert_allclose(full.wald_test(np.eye(5)[[1]]).statistic, z ** 2, rtol=1e-12)
    _, _, _, llf = _statsmodels("ucla", "probit")
    sm_small = OrderedModel(pd.Series(pd.Categorical(y, categories=order, ordered=True)),
                            X[["pared", "gpa"]], distr="probit").fit(method="bfgs", disp=False,
                                                                     gtol=1e-10)
    test = lr_test(small, full)
    assert_allclose(test.statistic, 2 * (llf - sm_small.llf), rtol=1e-6)
    assert test.df == 1
    # alpha: maximum of statsmodels' log-likelihood less alpha/2 |beta|^2
    psi, model, _, _ = _statsmodels("ucla", "probit")
    alpha = 30.0
    opt = optimize.minimize(lambda v: -model.loglike(_sm_params(v, 3)) + alpha / 2 * v[:3] @ v[:3],
                            psi, method="BFGS", options={"gtol": 1e-9})
    pen = OrdinalRegression(link="probit", alpha=alpha, classes=order).fit(X, y)
    assert_allclose(np.concatenate((pen.coef_, pen.cutpoints_)), opt.x, atol=2e-6)
    assert np.isnan(pen.aic_)


def test_weights_are_repeats_and_two_classes_are_binary():
    X, y, _ = _data("simulated")
    w = np.arange(y.size) % 3
    a = OrdinalRegression(link="probit").fit(X, y, sample_weight=w.astype(float))
    b = OrdinalRegression(link="probit").fit(np.repeat(X.to_numpy(), w, axis=0), np.repeat(y, w))
    assert_allclose(a.coef_, b.coef_, rtol=1e-10)
    assert_allclose(a.covariance_, b.covariance_, rtol=1e-9)
    y2 = (y > 1).astype(int)
    with pytest.warns(ProblinWarning, match="LogisticRegression"):
        m = OrdinalRegression().fit(X, y2)
    ref = LogisticRegression().fit(X, y2)
    assert_allclose(m.coef_, ref.coef_.ravel(), rtol=1e-8)
    assert_allclose(m.cutpoints_, -ref.intercept_, rtol=1e-8)
    assert_allclose(m.covariance_[:3, :3], ref.covariance_[1:, 1:], rtol=1e-6)
    ref = ProbitRegression().fit(X, y2)
    with pytest.warns(ProblinWarning, match="ProbitRegression"):
        assert_allclose(OrdinalRegression(link="probit").fit(X, y2).coef_, ref.coef_.ravel(),
                        rtol=1e-8)


def test_bad_input():
    X, y, _ = _data("simulated")
    with pytest.raises(ValueError, match=r"classes \[?9"):
        OrdinalRegression(classes=[0, 1, 2, 3, 4, 9]).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        OrdinalRegression().fit(X, np.zeros(y.size))
    with pytest.raises(ValueError, match=r"increase strictly: 1\|2 = 0.5 >= 2\|3 = 0.5"):
        OrdinalRegression().fit(X, y, start=[0, 0, 0, -1, 0.5, 0.5, 2])
    with pytest.raises(ValueError, match="cut-points are the intercepts"):
        OrdinalRegression(fit_intercept=True).fit(X, y)
    start = OrdinalRegression().fit(X, y)
    again = OrdinalRegression().fit(X, y, start=np.r_[start.coef_, start.cutpoints_] * 0.9)
    assert_allclose(again.coef_, start.coef_, rtol=1e-9)
    # separated categories: x alone orders the three classes without overlap
    x = np.linspace(-3, 3, 60)[:, None]
    with pytest.warns(SeparationWarning, match=r"0\|1, 1\|2"):
        OrdinalRegression().fit(x, np.digitize(x[:, 0], [-1.0, 1.0]))


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "loglog", "cauchit"])
def test_tails_in_log_space(link):
    """Rows far beyond the cut-points keep their log-probabilities (survival functions
    above the median, CDFs below): against mpmath at 50 digits."""
    mp = pytest.importorskip("mpmath")
    F = {"logit": lambda z: 1 / (1 + mp.exp(-z)), "probit": mp.ncdf,
         "cloglog": lambda z: -mp.expm1(-mp.exp(z)), "loglog": lambda z: mp.exp(-mp.exp(-z)),
         "cauchit": lambda z: mp.mpf(1) / 2 + mp.atan(z) / mp.pi}[link]
    X, y, _ = _data("simulated")
    m = OrdinalRegression(link=link).fit(X.to_numpy(), y)
    theta = m.cutpoints_
    saved, mp.mp.dps = mp.mp.dps, 150  # (probabilities 1 - 1e-100 keep their complements)
    for eta in (-21.0, -8.0, 0.3, 9.0, 22.0):
        x = np.array([[eta / m.coef_[0], 0.0, 0.0]])
        got = m.predict_log_proba(x)[0]
        bounds = [None, *[mp.mpf(float(t)) - mp.mpf(float(x[0, 0])) * mp.mpf(float(m.coef_[0]))
                          for t in theta], None]
        cdf = [mp.mpf(0)] + [F(b) for b in bounds[1:-1]] + [mp.mpf(1)]
        sf = [mp.mpf(1)] + [1 - F(b) if link != "probit" else mp.ncdf(-b)
                            for b in bounds[1:-1]] + [mp.mpf(0)]
        want = [float(mp.log(sf[k] - sf[k + 1]) if cdf[k] > 0.5 else mp.log(cdf[k + 1] - cdf[k]))
                for k in range(len(theta) + 1)]
        finite = np.isfinite(want)
        assert np.all(np.isfinite(got[finite]))
        assert_allclose(got[finite], np.asarray(want)[finite], rtol=1e-12, atol=1e-300)
    mp.mp.dps = saved  # (the 50-digit references of the other modules share mpmath's state)


def test_formula_and_model_file(tmp_path):
    """The generic Formula wrapper (its design without the intercept column, as polr)
    and model files give the plain estimator's fit."""
    from problin import Formula, load, save
    df = UCLA.copy()
    plain = OrdinalRegression(classes=ORDER).fit(df[["pared", "public", "gpa"]], df["apply"])
    model = Formula("apply ~ pared + public + gpa", OrdinalRegression(classes=ORDER)).fit(df)
    assert_allclose(model.cutpoints_, plain.cutpoints_, rtol=1e-12)
    assert_allclose(model.covariance_, plain.covariance_, rtol=1e-10)
    assert model.parameter_names()[3:] == ["unlikely|somewhat likely",
                                           "somewhat likely|very likely"]
    save(model, tmp_path / "m.problin")
    back = load(tmp_path / "m.problin")
    assert_allclose(back.predict_proba(df[:5]), plain.predict_proba(df[["pared", "public",
                                                                        "gpa"]][:5]), rtol=1e-12)


def test_average_predictions_delta_method():
    """``predictions`` per category at a chosen value (the other columns at their means,
    as marginaleffects' grid): the probabilities and their standard errors by the delta
    method, against statsmodels' probabilities differentiated numerically in
    ``[beta, theta]`` with the same covariance."""
    X, y, order = _data("ucla")
    psi, model, _, _ = _statsmodels("ucla", "logit")
    m = OrdinalRegression(classes=order).fit(X, y)
    table = m.predictions(X, at={"pared": [1.0]})
    at = X.mean().to_frame().T.assign(pared=1.0).to_numpy()
    f = lambda v: model.predict(_sm_params(v, 3), exog=at).mean(axis=0)
    J = _row_scores(f, psi, 1e-6)
    assert_allclose(table["estimate"].to_numpy(), f(psi), rtol=1e-9)
    assert_allclose(table["std_err"].to_numpy(),
                    np.sqrt(np.einsum("ij,jk,ik->i", J, m.covariance_, J)), rtol=1e-6)
    assert_allclose(table["estimate"].sum(), 1.0, rtol=1e-12)
