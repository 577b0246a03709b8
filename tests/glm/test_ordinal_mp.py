"""OrdinalRegression against an independent 50-digit mpmath Newton solution of the
cumulative-link likelihood (``_ordinal_mp``), for all five links: slopes, cut-points and
standard errors (the inverse observed information) to 1e-8, and the log-likelihood."""
import numpy as np
import pytest

from problin import OrdinalRegression
from tests.glm._ordinal_mp import LINKS, reference


@pytest.mark.parametrize("link", sorted(LINKS))
def test_ordinal_equals_mpmath(link):
    X, y, beta, theta, se, loglik = reference(link)
    model = OrdinalRegression(link=link).fit(X, y)
    np.testing.assert_allclose(model.coef_, beta, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.cutpoints_, theta, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.sqrt(np.diag(model.covariance_)), se, rtol=1e-8)
    assert model.log_likelihood_ == pytest.approx(loglik, rel=1e-12)
