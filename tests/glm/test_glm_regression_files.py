"""Model files of the GLM regressors: ``problin.save`` and ``problin.load`` round trips of
each one (fitted with an offset, an exposure or trials, and inside a ``Formula``) predict
bit-identically, and keep the fitted statistics and the summary."""
import hashlib
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import problin
from problin import (
    GLM,
    BinomialRegression,
    Formula,
    GammaRegression,
    InverseGaussianRegression,
    NegativeBinomialRegression,
    PoissonRegression,
    TweedieRegression,
)
from problin._core.model.distributions import Tweedie
from problin._core.model.exponential_family import family_to_params, make_family

_RNG = np.random.default_rng(0)
_N = 40
_X = _RNG.normal(size=(_N, 2))
_ETA = 0.4 + 0.3 * _X[:, 0] - 0.2 * _X[:, 1]
_EXPOSURE = _RNG.uniform(0.5, 2.0, _N)
_OFFSET = _RNG.normal(scale=0.1, size=_N)
_TRIALS = _RNG.integers(1, 8, _N).astype(float)
_COUNTS = _RNG.poisson(_EXPOSURE * np.exp(_ETA)).astype(float)
_OVERDISPERSED = _RNG.negative_binomial(2, 2 / (2 + _EXPOSURE * np.exp(_ETA))).astype(float)
_SIZES = _RNG.gamma(4.0, np.exp(_ETA) / 4.0)
_SUCCESSES = _RNG.binomial(_TRIALS.astype(int), 1 / (1 + np.exp(-_ETA))).astype(float)

_CASES = {  # name: (estimator, y, fit arguments, predict arguments)
    "poisson exposure": (PoissonRegression(), _COUNTS, {"exposure": _EXPOSURE},
                         {"exposure": _EXPOSURE[::-1]}),
    "nb offset": (NegativeBinomialRegression(), _OVERDISPERSED, {"offset": _OFFSET},
                  {"offset": _OFFSET[::-1]}),
    "gamma": (GammaRegression(cov_type="HC1"), _SIZES, {}, {}),
    "inverse gaussian": (InverseGaussianRegression(link="inverse_squared"), _SIZES + 1.0, {},
                         {}),
    "tweedie": (TweedieRegression(power=1.4), _COUNTS, {"offset": _OFFSET},
                {"offset": _OFFSET}),
    "binomial trials": (BinomialRegression(link="cloglog"), _SUCCESSES, {"trials": _TRIALS},
                        {}),
    "glm gaussian": (GLM("gaussian", alpha=0.5), _SIZES, {}, {}),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_saved_glm_regressor_predicts_identically(case, tmp_path):
    est, y, fit_args, predict_args = _CASES[case]
    est.fit(_X, y, **fit_args)
    path = tmp_path / "m.problin"
    problin.save(est, path)
    back = problin.load(path)
    assert type(back) is type(est) and back.get_params() == est.get_params()
    assert_array_equal(back.predict(_X, **predict_args), est.predict(_X, **predict_args))
    assert_array_equal(back.predict(_X, linear=True), est.predict(_X, linear=True))
    for name in ("deviance_", "pearson_chi2_", "scale_", "log_likelihood_", "aic_",
                 "df_resid_", "covariance_"):
        assert_array_equal(getattr(back, name), getattr(est, name), err_msg=name)
    pd.testing.assert_frame_equal(back.summary(), est.summary())
    assert str(back.summary_text()) == str(est.summary_text())
    assert_array_equal(back.predict_interval(_X[:5]).to_numpy(),
                       est.predict_interval(_X[:5]).to_numpy())
    if isinstance(est, NegativeBinomialRegression):
        assert back.alpha_ == est.alpha_ and back.alpha_se_ == est.alpha_se_


def test_saved_formula_of_a_glm_regressor_predicts_identically(tmp_path):
    frame = pd.DataFrame({"x": _X[:, 0], "g": np.where(_X[:, 1] > 0, "b", "a"),
                          "n": _OVERDISPERSED, "t": _EXPOSURE})
    model = Formula("n ~ x + C(g)", NegativeBinomialRegression()).fit(frame, exposure="t")
    path = tmp_path / "f.problin"
    problin.save(model, path)
    back = problin.load(path)
    assert_array_equal(back.predict(frame, exposure=frame["t"]),
                       model.predict(frame, exposure=frame["t"]))
    pd.testing.assert_frame_equal(back.summary(), model.summary())


@pytest.mark.parametrize("family", [Tweedie(power=1.2),
                                    make_family("negative_binomial", "sqrt", alpha=0.5)])
def test_a_family_object_is_saved_as_data(family, tmp_path):
    est = GLM(family=family).fit(_X, _COUNTS + 1.0)
    path = tmp_path / "m.problin"
    problin.save(est, path)
    back = problin.load(path)
    assert back.family == family and back.family is not family
    assert_array_equal(back.predict(_X), est.predict(_X))
    pd.testing.assert_frame_equal(back.summary(), est.summary())
    # a family the file names wrongly (edited, re-signed) is refused by name
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    text = json.dumps(meta)
    blob = text.replace(f'"name": "{family_to_params(family)["name"]}"', '"name": "bogus"')
    assert blob != text
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, blob if name == "metadata.json" else data)
        zf.comment = b"problin-model sha256=" + hashlib.sha256(blob.encode()).hexdigest().encode()
    with pytest.raises(problin.ModelFileError, match="bad family .*unknown family"):
        problin.load(path)
