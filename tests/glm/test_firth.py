"""Firth's bias-reduced likelihood (``penalty="firth"``, the Jeffreys prior ``1/2 log |I|``):
coefficients and standard errors against an independent 50-digit mpmath maximisation of
the penalised likelihood (``_firth_mp``) and against R's logistf; finite estimates with a
vanishing penalised gradient on separated data; one clear error for what it does not take.
"""
import warnings

import numpy as np
import pytest

from problin import LogisticRegression, ProbitRegression

from tests.glm._firth_mp import firth_fit, numeric_gradient


def _small(seed: int = 3, n: int = 30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.5, -1.0, 0.5] + rng.logistic(size=n) > 0).astype(float)
    return X, y


def _params(model):
    return np.r_[model.intercept_, model.coef_.ravel()]


def _notes_separation(model) -> bool:
    """Whether the summary carries the note that the ML estimates do not exist."""
    return ("The data are (quasi-)separated: maximum-likelihood estimates do not exist;"
            in " ".join(str(model.summary_text()).split()))


@pytest.mark.parametrize("estimator, link", [(LogisticRegression, "logit"),
                                             (ProbitRegression, "probit")])
def test_firth_equals_mpmath(estimator, link):
    X, y = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = estimator(penalty="firth").fit(X, y)
    beta, cov = firth_fit(X, y, link)
    np.testing.assert_allclose(_params(model), [float(b) for b in beta], rtol=0, atol=1e-7)
    # logistf's standard errors: the inverse information of its augmented data.
    se = np.sqrt([float(cov[j, j]) for j in range(4)])
    np.testing.assert_allclose(model.summary()["std_err"].to_numpy(), se, rtol=1e-7)
    text = str(model.summary_text())
    assert "Firth" in text and "separated" not in text  # (the classes overlap)
    assert not model._result.firth_separated
    # The penalised log-likelihood is stationary at the answer (its own derivative).
    assert np.abs(numeric_gradient(X, y, _params(model), link)).max() < 1e-8
    assert model.converged_


def _modified_score(X, y, params):
    """Heinze & Schemper's (2002) modified score ``sum (y - p + h (1/2 - p)) x``."""
    Z = np.column_stack([np.ones(len(y)), X])
    p = 1.0 / (1.0 + np.exp(-Z @ params))
    w = p * (1 - p)
    h = w * np.einsum("ij,ij->i", Z @ np.linalg.inv(Z.T @ (w[:, None] * Z)), Z)
    return Z.T @ (y - p + h * (0.5 - p))


def test_firth_separated_is_finite():
    """Complete separation, and quasi-separation by an all-events level of a factor:
    finite estimates, the penalised gradient below 1e-8, and no SeparationWarning."""
    X, y = _small(5, 40)
    complete = (X[:, :1], (X[:, 0] > 0).astype(float))
    level = (X[:, 1] > 0.8).astype(float)  # every row of this level is an event
    quasi = (np.column_stack([level, X[:, 2]]), np.where(level == 1, 1.0, y))
    for Xs, ys in (complete, quasi):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = LogisticRegression(penalty="firth").fit(Xs, ys)
        params = _params(model)
        assert np.all(np.isfinite(params)) and np.abs(params).max() < 20
        assert np.abs(_modified_score(Xs, ys, params)).max() < 1e-8
        assert np.all(np.isfinite(model.summary()["std_err"]))
        assert not hasattr(model, "separated_") and _notes_separation(model)


def test_firth_weights_are_frequencies():
    """A weight-2 row is a duplicated row, in the penalty's leverages as in the data term."""
    X, y = _small(7, 20)
    w = np.arange(20) % 3 + 1.0
    weighted = LogisticRegression(penalty="firth").fit(X, y, sample_weight=w)
    rows = np.repeat(np.arange(20), w.astype(int))
    repeated = LogisticRegression(penalty="firth").fit(X[rows], y[rows])
    np.testing.assert_allclose(_params(weighted), _params(repeated), atol=1e-9)


def test_firth_refuses_what_it_does_not_take():
    X, y = _small()
    with pytest.raises(ValueError, match="takes no L2 alpha"):
        LogisticRegression(penalty="firth", alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="fitted by Newton"):
        LogisticRegression(penalty="firth", solver="lbfgs").fit(X, y)
    with pytest.raises(ValueError, match="penalty"):
        LogisticRegression(penalty="l1").fit(X, y)


def test_firth_poisson_regression_equals_mpmath():
    """The penalty is the family's, not the logit's: ``PoissonRegression(penalty="firth")``
    (``w'/w = 1``) equals the mpmath maximisation of l + 1/2 log|I|, standard errors
    included; ``GLM("poisson")`` is the same fit, and ``BinomialRegression`` on 0/1
    targets is ``LogisticRegression``'s."""
    from problin import GLM, BinomialRegression, PoissonRegression

    X, yb = _small(11)
    rng = np.random.default_rng(11)
    y = rng.poisson(np.exp(0.3 + X @ [0.8, 0.0, -0.5])).astype(float)
    model = PoissonRegression(penalty="firth").fit(X, y)
    params = np.r_[model.intercept_, model.coef_]
    beta, cov = firth_fit(X, y, "poisson")
    np.testing.assert_allclose(params, [float(b) for b in beta], rtol=0, atol=1e-7)
    se = np.sqrt([float(cov[j, j]) for j in range(4)])
    np.testing.assert_allclose(model.summary()["std_err"].to_numpy(), se, rtol=1e-7)
    assert np.abs(numeric_gradient(X, y, params, "poisson")).max() < 1e-8
    same = GLM("poisson", penalty="firth").fit(X, y)
    np.testing.assert_allclose(np.r_[same.intercept_, same.coef_], params, rtol=0, atol=1e-12)
    binomial = BinomialRegression(penalty="firth").fit(X, yb)
    logistic = LogisticRegression(penalty="firth").fit(X, yb)
    np.testing.assert_allclose(np.r_[binomial.intercept_, binomial.coef_], _params(logistic),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(binomial.summary()["std_err"].to_numpy(),
                               logistic.summary()["std_err"].to_numpy(), rtol=1e-8)


def test_firth_regressors_refuse_what_they_do_not_take():
    from problin import GLM, GammaRegression, PoissonRegression

    X, y = _small()
    with pytest.raises(ValueError, match="fixed dispersion"):
        GammaRegression(penalty="firth").fit(X, y + 1.0)
    with pytest.raises(ValueError, match="fixed dispersion"):
        GLM("gaussian", penalty="firth").fit(X, y)
    with pytest.raises(ValueError, match="takes no L2 alpha"):
        PoissonRegression(penalty="firth", alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="fitted by Newton"):
        PoissonRegression(penalty="firth", solver="lbfgs").fit(X, y)
    with pytest.raises(ValueError, match="information='expected'"):
        PoissonRegression(penalty="firth", information="observed").fit(X, y)


# logistf's bundled sex2 (Heinze & Schemper 2002): the 36 distinct rows of
# case, age, oc, vic, vicl, vis, dia and how often each occurs (239 rows in all).
_SEX2 = ("0000010:1 0001000:2 0001010:1 0001100:8 0001110:18 0010000:42 0010010:1 "
         "0011000:1 0011100:5 0011110:6 0101100:2 0101110:4 0110000:14 0110010:1 "
         "0111000:1 0111110:2 1000010:1 1001000:14 1001010:3 1001100:10 1001110:12 "
         "1001111:1 1010000:44 1010001:3 1011000:15 1011001:1 1011010:2 1011100:7 "
         "1011110:3 1101000:2 1101010:1 1101011:1 1101100:1 1101111:1 1110000:5 1111000:3")
# brglm2's endometrial (Heinze & Schemper 2002, §4): NV, PI, EH, HG for 79 patients;
# NV = 1 only where HG = 1 (quasi-separation).
_ENDOMETRIAL = np.array([
    [0, 13, 1.64, 0], [0, 16, 2.26, 0], [0, 8, 3.14, 0], [0, 34, 2.68, 0], [0, 20, 1.28, 0],
    [0, 5, 2.31, 0], [0, 17, 1.8, 0], [0, 10, 1.68, 0], [0, 26, 1.56, 0], [0, 17, 2.31, 0],
    [0, 8, 2.01, 0], [0, 7, 1.89, 0], [0, 20, 3.15, 0], [0, 10, 1.23, 0], [0, 18, 1.27, 0],
    [0, 16, 1.76, 0], [0, 18, 2.0, 0], [0, 8, 2.64, 1], [0, 29, 0.88, 1], [0, 12, 1.27, 1],
    [0, 20, 1.37, 1], [1, 38, 0.97, 1], [1, 22, 1.14, 1], [1, 7, 0.88, 1], [1, 25, 0.91, 1],
    [1, 15, 0.58, 1], [0, 7, 0.97, 1], [0, 28, 1.5, 0], [0, 11, 1.33, 0], [0, 19, 2.37, 0],
    [0, 10, 1.82, 0], [0, 10, 3.13, 0], [0, 18, 1.31, 0], [0, 14, 1.92, 0], [0, 21, 1.64, 0],
    [0, 11, 2.01, 0], [0, 17, 1.88, 0], [0, 25, 1.93, 0], [0, 16, 2.11, 0], [0, 19, 1.29, 0],
    [0, 15, 1.72, 0], [0, 33, 0.75, 0], [0, 24, 1.92, 0], [0, 48, 1.84, 1], [0, 12, 1.11, 1],
    [0, 19, 1.61, 1], [0, 2, 1.18, 1], [1, 22, 1.44, 1], [1, 40, 1.18, 1], [1, 5, 0.93, 1],
    [1, 0, 1.17, 1], [0, 21, 1.19, 1], [0, 15, 1.06, 1], [0, 29, 2.02, 0], [0, 15, 2.29, 0],
    [0, 12, 2.33, 0], [0, 3, 2.9, 0], [0, 20, 1.7, 0], [0, 23, 1.41, 0], [0, 12, 2.25, 0],
    [0, 22, 1.54, 0], [0, 42, 1.97, 0], [0, 15, 1.75, 0], [0, 13, 2.16, 0], [0, 14, 2.57, 0],
    [0, 19, 1.37, 0], [0, 12, 3.61, 0], [0, 13, 2.04, 0], [0, 10, 2.17, 0], [0, 12, 1.69, 1],
    [1, 49, 0.27, 1], [0, 6, 1.84, 1], [0, 5, 1.3, 1], [0, 17, 0.96, 1], [1, 11, 1.01, 1],
    [1, 21, 0.98, 1], [0, 5, 0.35, 1], [1, 19, 1.02, 1], [0, 33, 0.85, 1]])


def _sex2():
    rows = [(np.array(list(p), dtype=float), int(n))
            for p, n in (item.split(":") for item in _SEX2.split())]
    data = np.repeat(np.array([r for r, _ in rows]), [n for _, n in rows], axis=0)
    return data[:, 1:], data[:, 0]


# R 4.2, logistf 1.26.1 (georgheinze/logistf at f9f3641), converged tightly:
#   ctl <- logistf.control(maxit = 500, lconv = 1e-14, gconv = 1e-14, xconv = 1e-14)
#   f <- logistf(case ~ age + oc + vic + vicl + vis + dia, data = sex2, control = ctl,
#                pl = FALSE);  cbind(coef(f), sqrt(diag(vcov(f))))
#   f <- logistf(HG ~ NV + PI + EH, data = endometrial, control = ctl, pl = FALSE)
_LOGISTF = {
    "sex2": ([0.1202540491338, -1.1059813313813, -0.0688167270619, 2.2688746522391,
              -2.1114081853032, -0.7883169513967, 3.0960118273514],
             [0.476342941187, 0.414902109745, 0.434402571285, 0.538487276606,
              0.532039508241, 0.408962004265, 1.505221135671]),
    "endometrial": ([3.7745597136471, 2.9292733531971, -0.0347517598704, -2.6041639252937],
                    [1.4390069333362, 1.4649742201703, 0.0378923722161, 0.7536284420755]),
}


@pytest.mark.parametrize("name", ["sex2", "endometrial"])
def test_firth_equals_logistf(name):
    X, y = _sex2() if name == "sex2" else (_ENDOMETRIAL[:, :3], _ENDOMETRIAL[:, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (endometrial is quasi-separated: no warning)
        model = LogisticRegression(penalty="firth").fit(X, y)
    coef, se = _LOGISTF[name]
    np.testing.assert_allclose(_params(model), coef, rtol=0, atol=1e-7)
    np.testing.assert_allclose(model.summary()["std_err"].to_numpy(), se, rtol=1e-7)
    # Both are quasi-separated (endometrial: NV = 1 only where HG = 1; sex2: all 7 women
    # with dia = 1 are cases), which Firth's margins do not show: the LP's note.
    assert np.all(y[X[:, 0 if name == "endometrial" else 5] == 1] == 1)
    assert _notes_separation(model)


def test_firth_completely_separated_many_rows_converges():
    # y = 1[X w > 0] without noise: every leverage's change outweighs the data's weights
    # ~0, so Fisher scoring with held leverages crawled (~0.8 a step: 72 steps, then a
    # failed line search); the exact Hessian's Newton steps take ~20.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 10))
    y = (X @ rng.standard_normal(10) > 0).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = LogisticRegression(penalty="firth").fit(X, y)
    beta = _params(model)
    assert np.all(np.isfinite(beta)) and np.abs(beta).max() > 50  # (ML's are infinite)
    assert np.abs(_modified_score(X, y, beta)).max() < 1e-8  # (the penalised gradient)
    Z = np.column_stack([np.ones(len(y)), X])
    mu = 1.0 / (1.0 + np.exp(-(Z @ beta)))
    w = mu * (1.0 - mu)
    h = w * np.einsum("ij,ij->i", Z @ np.linalg.inv(Z.T @ (w[:, None] * Z)), Z)
    # The standard errors stay logistf's: the inverse information of the augmented data.
    augmented = Z.T @ ((w * (1.0 + h))[:, None] * Z)
    np.testing.assert_allclose(model.summary()["std_err"].to_numpy(),
                               np.sqrt(np.diag(np.linalg.inv(augmented))), rtol=1e-6)
    # Firth's own margins separate the classes: the summary says why it is Firth's.
    assert _notes_separation(model)


def test_firth_negative_binomial_at_a_fixed_alpha_is_the_glms():
    """The negative binomial regressor takes Firth's penalty at a fixed alpha (the
    dispersion known), equal to GLM('negative_binomial') at alpha 1, and refuses it with
    alpha estimated; its parameter round-trips through a model file's params."""
    import problin
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    y = rng.poisson(np.exp(0.5 + X @ [0.3, -0.2])).astype(float)
    nb = problin.NegativeBinomialRegression(nb_alpha=1.0, penalty="firth",
                                            information="expected").fit(X, y)
    glm = problin.GLM(family="negative_binomial", penalty="firth").fit(X, y)
    np.testing.assert_allclose(nb.coef_, glm.coef_, rtol=1e-10)
    np.testing.assert_allclose(nb.covariance_, glm.covariance_, rtol=1e-8)
    with pytest.raises(ValueError, match="fixed nb_alpha"):
        problin.NegativeBinomialRegression(penalty="firth", information="expected").fit(X, y)
    assert problin.NegativeBinomialRegression().get_params()["penalty"] == "l2"
