"""Likelihood-ratio tests by refitting under restrictions: summary(pvalues="lr") and
restricted_lr_test. Firth's penalised likelihood ratio equals R logistf's p-values,
logistftest and anova (sex2, endometrial), and for the Poisson a direct scipy
maximisation; maximum-likelihood ones equal statsmodels' fits of the smaller models
(logistic, Poisson, Gamma with its estimated dispersion)."""

import numpy as np
import pytest
import statsmodels.api as sm

from problin import LogisticRegression, lr_test
from problin.glm import GammaRegression, PoissonRegression
from tests.glm.test_firth import _ENDOMETRIAL, _sex2

# R 4.2.2, logistf 1.26.1 (endometrial: brglm2's data as in test_firth.py, from a CSV),
# the same to 1e-12 at tol = 1e-10 and 1e-13:
#   ctl <- logistf.control(xconv = tol, gconv = tol, lconv = tol, maxit = 500)
#   f <- logistf(case ~ age + oc + vic + vicl + vis + dia, data = sex2, control = ctl,
#                pl = FALSE)
#   sapply(1:7, function(j) { t <- logistftest(f, test = j, control = ctl)
#                             -2 * (t$loglik["null"] - t$loglik["full"]) })
#   t <- logistftest(f, test = ~ vic + vicl - 1, control = ctl)  # = anova(f, f without
#   -2 * (t$loglik["null"] - t$loglik["full"])                   #   vic, vicl)$chisq
#   g <- logistf(HG ~ NV + PI + EH, data = endometrial, control = ctl, pl = FALSE)
#   (the same, 1:4, and test = ~ PI + EH - 1)
# logistf's prob (its summary's p) is pchisq(chisq, 1, lower.tail = FALSE) of these.
_LOGISTF_CHISQ = {
    "sex2": ([0.0628629791790445, 7.5077309249379027, 0.0246704356212604,
              22.9313902229451969, 19.1040725213439373, 3.6974097547694100,
              7.8969313868327049], "x2 = 0, x3 = 0", 28.0405311593818),
    "endometrial": ([8.198013575844804, 6.798457248666054, 0.746828513432114,
                     17.759317479438351], "x1 = 0, x2 = 0", 17.8666871075706),
}
_LOGISTF_PROB = {  # logistf's f$prob, 15 digits
    "sex2": [8.02026802337407e-01, 6.14347184508913e-03, 8.75191058626056e-01,
             1.67887695871633e-06, 1.23780476281422e-05, 5.44970080615323e-02,
             4.95187338639044e-03],
    "endometrial": [4.19362788558663e-03, 9.12366754708583e-03, 3.87482203566447e-01,
                    2.50686721485583e-05],
}


@pytest.mark.parametrize("name", ["sex2", "endometrial"])
def test_firth_penalised_lr_equals_logistf(name):
    X, y = _sex2() if name == "sex2" else (_ENDOMETRIAL[:, :3], _ENDOMETRIAL[:, 3])
    model = LogisticRegression(penalty="firth").fit(X, y)
    table = model.summary(pvalues="lr", X=X, y=y)
    chisq, restriction, joint = _LOGISTF_CHISQ[name]
    np.testing.assert_allclose(table["chi2"], chisq, rtol=0, atol=1e-6)
    np.testing.assert_allclose(table["p_value"], _LOGISTF_PROB[name], rtol=1e-6, atol=0)
    assert "z" not in table.columns and table.attrs["pvalues"] == "lr"
    result = model.restricted_lr_test(restriction, X=X, y=y)
    assert (result.statistic, result.df) == (pytest.approx(joint, abs=1e-6), 2.0)
    text = str(model.summary_text(pvalues="lr", X=X, y=y))
    assert "P>chi2" in text and "Penalised likelihood-ratio tests" in text


def test_ml_lr_pvalues_equal_statsmodels_smaller_fits():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    Xc = sm.add_constant(X)
    y = (X @ [0.8, -0.5, 0.1] + 0.3 + rng.logistic(size=150) > 0).astype(float)
    model = LogisticRegression(alpha=0.0, tol=1e-10).fit(X, y)
    table = model.summary(ci="profile", pvalues="lr", X=X, y=y)
    llf = sm.Logit(y, Xc).fit(disp=0).llf
    expected = [2 * (llf - sm.Logit(y, np.delete(Xc, j, axis=1)).fit(disp=0).llf)
                for j in range(4)]
    np.testing.assert_allclose(table["chi2"], expected, rtol=1e-7)
    # the joint test of two slopes is lr_test of the two fits
    small = LogisticRegression(alpha=0.0, tol=1e-10).fit(X[:, :1], y)
    nested = lr_test(small, model)
    joint = model.restricted_lr_test("x1 = 0, x2 = 0", X=X, y=y)
    assert joint.statistic == pytest.approx(nested.statistic, rel=1e-7)
    assert joint.p_value == pytest.approx(nested.p_value, rel=1e-6)


def test_glm_lr_pvalues_equal_statsmodels_deviances():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 2))
    Xc = sm.add_constant(X)
    mu = np.exp(Xc @ [0.3, 0.4, -0.1])
    yp, yg = rng.poisson(mu).astype(float), rng.gamma(2.0, mu / 2.0)
    families = [(PoissonRegression, yp, sm.families.Poisson()),
                (GammaRegression, yg, sm.families.Gamma(sm.families.links.Log()))]
    for estimator, y, family in families:
        model = estimator(tol=1e-12).fit(X, y)
        table = model.summary(pvalues="lr", X=X, y=y)
        full = sm.GLM(y, Xc, family=family).fit(tol=1e-12)
        # R's drop1(test="Chisq"): the deviance change over the full fit's dispersion
        expected = [(sm.GLM(y, np.delete(Xc, j, axis=1), family=family).fit(tol=1e-12)
                     .deviance - full.deviance) / full.scale for j in (1, 2)]
        np.testing.assert_allclose(table["chi2"].iloc[1:], expected, rtol=1e-7)
        assert "t" not in table.columns


def test_lr_pvalues_refuse_what_they_cannot_test():
    X, y = _ENDOMETRIAL[:, :3], _ENDOMETRIAL[:, 3]
    firth = LogisticRegression(penalty="firth").fit(X, y)
    with pytest.raises(ValueError, match="pvalues must be one of"):
        firth.summary(pvalues="score", X=X, y=y)
    with pytest.raises(ValueError, match="pass the training rows"):
        firth.summary(pvalues="lr")
    with pytest.raises(ValueError, match="restricted_lr_test"):
        lr_test(LogisticRegression(penalty="firth").fit(X[:, :1], y), firth)
    ridge = LogisticRegression(alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="L2 penalty"):
        ridge.summary(pvalues="lr", X=X, y=y)
    flic = LogisticRegression(penalty="flic").fit(X, y)
    with pytest.raises(ValueError, match="penalty='firth'"):
        flic.restricted_lr_test("x1 = 0", X=X, y=y)
    with pytest.raises(ValueError, match="x9"):
        firth.restricted_lr_test("x9 = 0", X=X, y=y)


def test_formula_refits_on_its_training_data():
    import pandas as pd

    from problin import Formula
    frame = pd.DataFrame(_ENDOMETRIAL, columns=["NV", "PI", "EH", "HG"])
    model = Formula("HG ~ NV + PI + EH", LogisticRegression(penalty="firth")).fit(frame)
    table = model.summary(ci="profile", pvalues="lr", data=frame)
    np.testing.assert_allclose(table["chi2"], _LOGISTF_CHISQ["endometrial"][0], atol=1e-6)
    assert table.attrs["ci"] == "profile" and list(table.index)[1:] == ["NV", "PI", "EH"]
    result = model.restricted_lr_test("PI = 0, EH = 0", data=frame)
    assert result.statistic == pytest.approx(_LOGISTF_CHISQ["endometrial"][2], abs=1e-6)
    assert "Dep. Variable" in str(model.summary_text(pvalues="lr", data=frame))


def test_firth_poisson_penalised_lr_equals_direct_maximisation():
    from scipy import optimize

    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 2))
    Xc = sm.add_constant(X)
    y = rng.poisson(np.exp(0.1 + X @ [0.6, 0.0])).astype(float)

    def npl(b):  # the negative penalised log-likelihood, the full design's Jeffreys term
        eta = Xc @ b
        info = Xc.T @ (Xc * np.exp(eta)[:, None])
        return -(np.sum(y * eta - np.exp(eta)) + 0.5 * np.linalg.slogdet(info)[1])

    def fixed(j):  # the penalised likelihood maximised with coefficient j at 0
        def at(u):
            return npl(np.insert(u, j, 0.0))
        return optimize.minimize(at, np.zeros(2), method="BFGS",
                                 options={"gtol": 1e-10}).fun

    full = optimize.minimize(npl, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).fun
    model = PoissonRegression(penalty="firth").fit(X, y)
    table = model.summary(pvalues="lr", X=X, y=y)
    np.testing.assert_allclose(table["chi2"], [2 * (fixed(j) - full) for j in range(3)],
                               atol=1e-6)
