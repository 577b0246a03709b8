"""The Brant (1990) test of proportional odds: R's published example (``brant`` package,
``MASS::survey``: Smoke ~ Sex + Height) to its printed precision, and a 50-digit
implementation of Brant's formula (``_ordinal_mp.brant_mp``) to 1e-8; the likelihood-ratio
test against the unconstrained cumulative model (a slope vector per cut) against a 50-digit
Newton fit of that model."""
import numpy as np
import pandas as pd
import pytest

from problin import OrdinalRegression
from problin.glm._ordinal_tests import brant_test, proportional_odds_lr_test
from tests.glm._ordinal_mp import brant_mp, ordinal_fit, reference
from tests.glm._ordinal_ref import SMOKE_LEVELS, SURVEY_BRANT, SURVEY_POLR, survey


@pytest.fixture(scope="module")
def survey_fit():
    X, y = survey()
    frame = pd.DataFrame(X, columns=["SexMale", "Height"])
    labels = np.array(SMOKE_LEVELS)[y]
    model = OrdinalRegression(classes=list(SMOKE_LEVELS)).fit(frame, labels)
    return model, frame, labels, X, y


def test_survey_polr_reproduced(survey_fit):
    """The data are R's: polr's printed estimates and deviance (polr's own optimiser
    stops at reltol 1e-8, so its 4-5 printed digits carry that error)."""
    model, *_ = survey_fit
    table = model.summary()
    for name, (coef, se) in {**SURVEY_POLR["coef"], **SURVEY_POLR["cutpoints"]}.items():
        assert table.loc[name, "coef"] == pytest.approx(coef, abs=2e-3, rel=2e-3)
        assert table.loc[name, "std_err"] == pytest.approx(se, rel=1e-2)
    assert -2 * model.log_likelihood_ == pytest.approx(SURVEY_POLR["deviance"], abs=5e-5)


def test_brant_equals_published_and_mpmath(survey_fit):
    """brant(polr(Smoke ~ Sex + Height)): X2 3.28 (df 4), 1.58 (2), 0.02 (2), p 0.51,
    0.45, 0.99 as printed; and the 50-digit statistics to 1e-8 relative."""
    model, frame, labels, X, y = survey_fit
    result = brant_test(model, frame, labels)
    for name, (chi2, df, p) in SURVEY_BRANT.items():
        row = result.table.loc[name]
        assert round(row["chi2"], 2) == chi2
        assert row["df"] == df
        assert round(row["p_value"], 2) == p
    omnibus, per_variable = brant_mp(X, y, 4)
    np.testing.assert_allclose(result.table["chi2"], [float(omnibus)]
                               + [float(v) for v in per_variable], rtol=1e-8)
    statistic, df, p = result  # unpacks as the omnibus test
    assert (statistic, df) == (result.table.loc["Omnibus", "chi2"], 4.0)
    assert list(result.binary_coef.index) == ["y>Never", "y>Occas", "y>Regul"]
    assert "Omnibus" in str(result)


def test_brant_refusals(survey_fit):
    model, frame, labels, X, y = survey_fit
    probit = OrdinalRegression(link="probit", classes=list(SMOKE_LEVELS)).fit(frame, labels)
    with pytest.raises(ValueError, match="link='logit'"):
        brant_test(probit, frame, labels)
    with pytest.raises(ValueError, match="outside the model's classes"):
        brant_test(model, frame, np.where(np.arange(len(labels)) == 3, "Often", labels))
    with pytest.raises(ValueError, match="rows"):
        brant_test(model, frame, labels[:-1])


@pytest.mark.parametrize("variables, nominal", [(None, True), (["x0"], [True, False])])
def test_lr_test_against_non_parallel_models_equals_mpmath(variables, nominal):
    """2 (l_1 - l_0) on V (K - 2) df, the alternative's slopes per cut and cut-points
    against the 50-digit fits of both models (``ordinal_fit(nominal=...)``) to 1e-8: the
    unconstrained cumulative model (every slope per cut), and the partial
    proportional-odds model (x0's slopes per cut, x1's shared)."""
    X, y, *_, loglik = reference("logit")
    beta, theta, _, alternative = ordinal_fit(X, y, 4, "logit", nominal=nominal)
    model = OrdinalRegression().fit(X, y)
    result = proportional_odds_lr_test(model, X, y, variables=variables)
    statistic, df, p = result
    assert df == (4.0 if variables is None else 2.0) and result.converged
    assert statistic == pytest.approx(2 * (float(alternative) - loglik), rel=1e-8)
    assert result.null_log_likelihood == pytest.approx(loglik, rel=1e-12)
    beta = [float(b) for b in beta]
    want = np.reshape(beta, (3, 2)) if variables is None else \
        np.column_stack((beta[1:], np.full(3, beta[0])))  # [shared x1, x0 per cut]
    np.testing.assert_allclose(result.coef.to_numpy(), want, rtol=1e-7)
    np.testing.assert_allclose(result.cutpoints, [float(t) for t in theta], rtol=1e-7)
    assert list(result.coef.index) == ["0|1", "1|2", "2|3"]
    with pytest.raises(ValueError, match="not a column"):
        proportional_odds_lr_test(model, X, y, variables=["x7"])
    with pytest.raises(ValueError, match="at least one"):
        proportional_odds_lr_test(model, X, y, variables=[])


def test_weights_are_frequencies():
    """Integer sample weights give both tests of the rows repeated that many times."""
    X, y, *_ = reference("logit")
    counts = np.arange(len(y)) % 3 + 1
    Xr, yr = np.repeat(X, counts, axis=0), np.repeat(y, counts)
    weighted = OrdinalRegression().fit(X, y, sample_weight=counts)
    repeated = OrdinalRegression().fit(Xr, yr)
    np.testing.assert_allclose(brant_test(weighted, X, y, sample_weight=counts).table,
                               brant_test(repeated, Xr, yr).table, rtol=1e-7)
    a = proportional_odds_lr_test(weighted, X, y, sample_weight=counts)
    b = proportional_odds_lr_test(repeated, Xr, yr)
    assert a.test.statistic == pytest.approx(b.test.statistic, rel=1e-7)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-7)
