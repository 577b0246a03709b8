"""FLIC and FLAC (Puhr, Heinze, Nold, Lusa & Geroldinger 2017): Firth's logistic
regression with the mean prediction equal to the event rate. Coefficients and standard
errors against R's logistf ``flic``/``flac`` on its ``sex2`` data; the calibration
exactly; frequency weights as repeated rows; one clear error where they do not apply."""
import numpy as np
import pytest

from problin import LogisticRegression, ProbitRegression

from tests.glm.test_firth import _SEX2, _LOGISTF, _sex2

# R 4.2, logistf 1.26.1 (as in test_firth), ctl as there:
#   f <- flic(case ~ age + oc + vic + vicl + vis + dia, data = sex2, control = ctl)
#   coef(f); (f$ci.upper[1] - f$ci.lower[1]) / (2 * 1.96)   # the intercept's se
#   g <- flac(case ~ ..., data = sex2, control = ctl, pl = FALSE); coef(g); sqrt(diag(g$var))
# (flac's inner logistf stops at maxit = 500 with the estimates converged to 1e-12:
# its mean prediction is 5e-13 off the event rate; an augmented ML fit in numpy agrees.)
_FLIC_INTERCEPT = (0.1315390994022, 0.485672667127447)
_FLAC = ([0.1222674257082, -1.0963400339428, -0.0660263135686, 2.2822029787173,
          -2.1141693396960, -0.7873168632653, 3.1817348522979],
         [0.476841085673608, 0.415273191552268, 0.434902657356425, 0.540222474202470,
          0.532657600218189, 0.409246442048249, 1.526280786073438])


def _params(model):
    return np.r_[model.intercept_, model.coef_.ravel()]


def test_flic_flac_equal_logistf():
    X, y = _sex2()
    flic = LogisticRegression(penalty="flic").fit(X, y)
    firth_coef, firth_se = _LOGISTF["sex2"]
    np.testing.assert_allclose(_params(flic), [_FLIC_INTERCEPT[0], *firth_coef[1:]],
                               rtol=0, atol=1e-7)
    np.testing.assert_allclose(flic.summary()["std_err"].to_numpy(),
                               [_FLIC_INTERCEPT[1], *firth_se[1:]], rtol=1e-7)
    flac = LogisticRegression(penalty="flac").fit(X, y)
    np.testing.assert_allclose(_params(flac), _FLAC[0], rtol=0, atol=1e-7)
    np.testing.assert_allclose(flac.summary()["std_err"].to_numpy(), _FLAC[1], rtol=1e-7)
    for model in (flic, flac):  # calibrated: the mean prediction is the event rate
        assert abs(model.predict_proba(X)[:, 1].mean() - y.mean()) < 1e-10


def test_calibrated_weights_are_frequencies():
    """On sex2's 36 distinct rows weighted by their counts: the fits of the 239 rows,
    and the weighted mean prediction is the weighted event rate."""
    rows = [(np.array(list(p), dtype=float), float(n))
            for p, n in (item.split(":") for item in _SEX2.split())]
    data = np.array([r for r, _ in rows])
    counts = np.array([n for _, n in rows])
    X, y = data[:, 1:], data[:, 0]
    Xr, yr = _sex2()
    for penalty in ("flic", "flac"):
        weighted = LogisticRegression(penalty=penalty).fit(X, y, sample_weight=counts)
        repeated = LogisticRegression(penalty=penalty).fit(Xr, yr)
        np.testing.assert_allclose(_params(weighted), _params(repeated), rtol=0, atol=1e-9)
        p = weighted.predict_proba(X)[:, 1]
        assert abs(counts @ p - counts @ y) / counts.sum() < 1e-10


def test_calibrated_refuses_what_it_does_not_take():
    X, y = _sex2()
    with pytest.raises(ValueError, match="calibrates Firth's logistic"):
        ProbitRegression(penalty="flic").fit(X, y)
    with pytest.raises(ValueError, match="takes no L2 alpha"):
        LogisticRegression(penalty="flac", alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="fit_intercept"):
        LogisticRegression(penalty="flic", fit_intercept=False).fit(X, y)
