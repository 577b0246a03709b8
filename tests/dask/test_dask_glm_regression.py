"""The GLM regressors on Dask equal their numpy fits whatever the chunking (issue 32).

Every regressor fitted on a chunked Dask array (targets, frequency and variance
weights, offsets, exposures and trials in the chunks; on Dask's threaded scheduler here,
on the two-process LocalCluster of ``test_dask_glm.py`` there): coefficients, covariance, deviance, Pearson's chi²,
the dispersion and the log-likelihoods (of the null model too, fitted with the
offset by distributed Newton steps) equal the in-memory fit's to 1e-10 relative, and
the predictions are lazy; the negative binomial's alpha_ and alpha_se_ too, estimated
from sums over the chunks. What needs all rows in one place is refused by name.
"""
import warnings

import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("dask.distributed")

import pandas as pd  # noqa: E402

from problin import (  # noqa: E402
    GLM,
    BinomialRegression,
    GammaRegression,
    InverseGaussianRegression,
    NegativeBinomialRegression,
    PoissonRegression,
    TweedieRegression,
)

N = 150
FITTED = ("coef_", "intercept_", "covariance_", "deviance_", "null_deviance_",
          "pearson_chi2_", "scale_", "log_likelihood_", "null_log_likelihood_", "aic_",
          "bic_", "df_resid_", "n_obs_", "n_iter_")


def random_chunks(n, seed, most=6):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, n), size=rng.integers(1, most), replace=False))
    return tuple(int(c) for c in np.diff(np.concatenate([[0], cuts, [n]])))


def rows(a, chunks):
    return da.from_array(a, chunks=(chunks,) + a.shape[1:])


def _data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(N, 3))
    eta = 0.2 + X @ np.array([0.3, -0.2, 0.1])
    exposure = rng.uniform(0.5, 3.0, N)
    trials = rng.integers(1, 12, N).astype(float)
    return {
        "X": X,
        "counts": rng.poisson(exposure * np.exp(eta)).astype(float),
        "sizes": rng.gamma(4.0, np.exp(eta) / 4.0),
        "tweedie": np.where(rng.random(N) < 0.3, 0.0, rng.gamma(2.0, np.exp(eta) / 2.0)),
        "successes": rng.binomial(trials.astype(int), 1 / (1 + np.exp(-eta))).astype(float),
        "exposure": exposure, "trials": trials, "offset": rng.normal(0.0, 0.2, N),
        "freq": rng.integers(0, 4, N).astype(float), "var": rng.uniform(0.5, 2.0, N),
        # (drawn last: the other columns stay those above)
        "overdispersed": rng.poisson(rng.gamma(2.0, exposure * np.exp(eta) / 2.0)).astype(float),
    }


DATA = _data()
# (model, target, fit arguments by name in DATA)
# (model, target, fit arguments by name in DATA): every regressor, each family's
# per-row arguments, and null models with an offset (a distributed 1-D Newton solve)
CASES = {
    "poisson-exposure-freq": (PoissonRegression(), "counts", ("exposure", "freq")),
    "gamma-log-var-offset": (GammaRegression(link="log"), "sizes", ("var", "offset")),
    "tweedie-offset": (TweedieRegression(power=1.5), "tweedie", ("offset",)),
    "binomial-trials-offset": (BinomialRegression(), "successes", ("trials", "offset")),
    "nb-fixed-alpha": (NegativeBinomialRegression(nb_alpha=0.4), "counts", ("exposure",)),
    # (alpha by ML: each evaluation in alpha a pass summing the rows' terms)
    "nb-alpha-estimated": (NegativeBinomialRegression(), "overdispersed",
                           ("exposure", "freq", "offset")),
    "glm-gaussian-ridge": (GLM(family="gaussian", alpha=0.5), "sizes", ("freq", "var")),
    "inverse-gaussian-log": (InverseGaussianRegression(link="log"), "sizes", ("freq",)),
    "binomial-cloglog": (BinomialRegression(link="cloglog"), "successes", ("trials",)),
}
_NAMES = {"freq": "sample_weight", "var": "var_weights"}


def _arguments(names, chunks=None):
    out = {}
    for name in names:
        v = DATA[name]
        out[_NAMES.get(name, name)] = v if chunks is None else rows(v, chunks)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_dask_equals_numpy_whatever_the_chunks(case):
    """Dask's threaded scheduler (a pass costs milliseconds, on a cluster ~0.1 s; the
    chunk arithmetic is the same: ``test_dask_glm.py`` fits a regressor there)."""
    model, target, names = CASES[case]
    X, y = DATA["X"], DATA[target]
    want = clone(model).fit(X, y, **_arguments(names))
    chunks = random_chunks(N, list(CASES).index(case))  # (one chunking per case: lean)
    got = clone(model).fit(rows(X, chunks), rows(y, chunks), **_arguments(names, chunks))
    _assert_same_fit(got, want, f"{case} {chunks}")
    if isinstance(model, NegativeBinomialRegression):
        for name in ("alpha_", "alpha_se_"):
            np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-10,
                                       err_msg=f"{case} {chunks} {name}")
    predicted = got.predict(rows(X, chunks))
    assert isinstance(predicted, da.Array)
    np.testing.assert_allclose(predicted.compute(), want.predict(X), rtol=1e-10)


def test_negative_binomial_alpha_on_dask_matches_statsmodels():
    """alpha by maximum likelihood from Dask chunks (with an exposure): statsmodels'
    ``NegativeBinomial`` (nb2) alpha, its standard error and the coefficients' SEs."""
    sm = pytest.importorskip("statsmodels.api")
    X, y, exposure = DATA["X"], DATA["overdispersed"], DATA["exposure"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (statsmodels' own convergence chatter)
        ref = sm.NegativeBinomial(y, sm.add_constant(X), exposure=exposure,
                                  loglike_method="nb2").fit(method="newton", maxiter=100,
                                                            tol=1e-14, disp=0)
    got = NegativeBinomialRegression().fit(rows(X, 60), rows(y, 60), exposure=rows(exposure, 60))
    np.testing.assert_allclose(got.alpha_, ref.params[-1], rtol=1e-8)
    np.testing.assert_allclose(got.alpha_se_, ref.bse[-1], rtol=1e-6)
    np.testing.assert_allclose(np.r_[got.intercept_, got.coef_], ref.params[:-1], rtol=1e-8)
    np.testing.assert_allclose(got.summary()["std_err"], ref.bse[:-1], rtol=1e-6)
    np.testing.assert_allclose(got.log_likelihood_, ref.llf, rtol=1e-10)


def _assert_same_fit(got, want, err_msg=""):
    for name in FITTED:
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-10,
                                   atol=1e-13 if name == "covariance_" else 0,
                                   err_msg=f"{err_msg} {name}")


def test_dask_dataframe_input():
    """A Dask DataFrame and Series (numpy weights, exposures and variance weights aligned
    with their partitions): the same fit, the feature names kept, the lazy predictions
    reading the frame's chunks."""
    X, y = DATA["X"], DATA["sizes"]
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    arguments = _arguments(("freq", "var", "exposure"))
    want = GammaRegression(link="log").fit(frame, y, **arguments)
    ddf = dd.from_pandas(frame, npartitions=3)
    got = GammaRegression(link="log").fit(ddf, dd.from_pandas(pd.Series(y), npartitions=3),
                                          **arguments)
    assert list(got.feature_names_in_) == ["a", "b", "c"]
    _assert_same_fit(got, want)
    np.testing.assert_allclose(got.predict(ddf).compute(), want.predict(frame), rtol=1e-10)


def test_sparse_chunks():
    """Chunks of scipy.sparse rows: the sparse in-memory fit's numbers."""
    sp = pytest.importorskip("scipy.sparse")
    X = DATA["X"] * (np.abs(DATA["X"]) > 0.5)
    want = PoissonRegression().fit(sp.csr_matrix(X), DATA["counts"], exposure=DATA["exposure"])
    Xd = rows(X, 50).map_blocks(sp.csr_matrix, dtype=np.float64, meta=sp.csr_matrix((0, 3)))
    got = PoissonRegression().fit(Xd, rows(DATA["counts"], 50), exposure=DATA["exposure"],
                                  sample_weight=1.0)  # (a number: every row's, as in memory)
    _assert_same_fit(got, want)


def test_what_dask_cannot_do_is_refused():
    X, y = rows(DATA["X"], 50), rows(DATA["counts"], 50)
    with pytest.raises(ValueError, match=r"In chunk 1 \(rows 50 to 99.*y\[2\] = -1"):
        bad = DATA["counts"].copy()
        bad[52] = -1.0
        PoissonRegression().fit(X, rows(bad, 50))
    with pytest.raises(ValueError, match="exposure must be positive"):
        PoissonRegression().fit(X, y, exposure=np.r_[DATA["exposure"][:-1], 0.0])
    with pytest.raises(ValueError, match="cov_type='HC3'.*needs the rows in memory"):
        PoissonRegression(cov_type="HC3").fit(X, y)
    with pytest.raises(ValueError, match="solver='coordinate'"):
        PoissonRegression(solver="coordinate").fit(X, y)
    model = PoissonRegression().fit(DATA["X"], DATA["counts"])  # (in memory: no passes)
    with pytest.raises(ValueError, match="exposure is not supported with Dask X"):
        model.predict(X, exposure=DATA["exposure"])
    with pytest.raises(ValueError, match="needs the rows in memory"):
        model.score(X, y)
