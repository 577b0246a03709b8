"""The report of a GLM regressor: statsmodels' GLM header among the fit statistics, the
deviance and D² among the scores, deviance residuals against the fitted means; the
offset and exposure reach the predictions and the refits. References: statsmodels
``GLM`` (deviance, Pearson chi², AIC, ``resid_deviance``) and scikit-learn's
``d2_tweedie_score``."""
import html
import re

import numpy as np
import statsmodels.api as sm
from numpy.testing import assert_allclose
from sklearn.metrics import d2_tweedie_score

from problin import GammaRegression, PoissonRegression
from problin.report import build_report
from problin.report.scores import deviance_residuals, fitted_family

_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(60, 2))
_ETA = 0.3 + 0.5 * _X[:, 0]
_EXPOSURE = _RNG.uniform(0.5, 2.0, 60)


def _text(page):
    page = re.sub(r"<style.*?</style>|<img[^>]*>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _statistic(text, label):
    return re.search(re.escape(label) + r" (\S+)", text).group(1)


def test_poisson_report_with_exposure_shows_the_glm_header_and_scores():
    y = _RNG.poisson(_EXPOSURE * np.exp(_ETA))
    model = PoissonRegression().fit(_X, y, exposure=_EXPOSURE)
    text = _text(build_report(model, _X, y, cv=3, fit_arguments={"exposure": _EXPOSURE}))
    ref = sm.GLM(y, sm.add_constant(_X), family=sm.families.Poisson(),
                 exposure=_EXPOSURE).fit()
    assert "family poisson link log" in text
    assert _statistic(text, "Pearson χ²") == f"{ref.pearson_chi2:.2f}"
    assert _statistic(text, "deviance") == f"{ref.deviance:.2f}"
    assert _statistic(text, "AIC") == f"{ref.aic:.1f}"
    assert _statistic(text, "Pearson χ² / df") == f"{ref.pearson_chi2 / ref.df_resid:.3g}"
    in_sample = re.search(r"in sample: the fitted model (\S+) (\S+) (\S+) (\S+) (\S+)", text)
    d2 = d2_tweedie_score(y, ref.fittedvalues, power=1)  # with the exposure: the fit's own
    assert in_sample.group(5) == f"{d2:.3g}"
    assert "out of sample: 3-fold cross-validation" in text and "Deviance residuals" in text


def test_gamma_report_and_its_deviance_residuals():
    y = _RNG.gamma(3.0, np.exp(_ETA) / 3.0)
    model = GammaRegression().fit(_X, y)
    text = _text(build_report(model, _X, y, cv=None))
    ref = sm.GLM(y, sm.add_constant(_X), family=sm.families.Gamma(sm.families.links.Log())
                 ).fit(tol=1e-12)
    assert "family gamma link log" in text
    assert _statistic(text, "scale (dispersion)") == f"{ref.scale:.4g}"
    assert "Pearson χ² / df" not in text  # (the dispersion is estimated)
    resid = deviance_residuals(fitted_family(model), y, model.predict(_X))
    assert_allclose(resid, ref.resid_deviance, rtol=1e-6)
