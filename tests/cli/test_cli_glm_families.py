"""The GLM regressors on the command line: ``-m poisson|negative-binomial|gamma|
inverse-gaussian|tweedie|binomial|glm``, ``--offset/--exposure/--trials`` columns, predict
with the new file's exposure, the GLM header of ``problin summary``, formulas, and one
clean message (no traceback) for each bad input of issue 32's point 4. References:
statsmodels ``GLM`` on the same rows."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import problin

from tests.cli.conftest import invoke


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 60
    x1, e = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    g = rng.choice(["a", "b"], n)
    y = rng.poisson(e * np.exp(0.3 + 0.5 * x1 + 0.4 * (g == "b")))
    frame = pd.DataFrame({"x1": x1, "g": g, "years": e, "y": y})
    path = tmp_path_factory.mktemp("glm") / "counts.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _sm_poisson(frame):
    X = sm.add_constant(np.column_stack([frame["x1"], frame["g"] == "b"]).astype(float))
    return sm.GLM(frame["y"], X, family=sm.families.Poisson(),
                  exposure=frame["years"]).fit(), X


def test_poisson_with_exposure_fits_predicts_and_summarises_as_statsmodels(counts, tmp_path):
    path, frame = counts
    out = tmp_path / "m.problin"
    fitted = invoke("fit", path, "-t", "y", "-m", "poisson", "--exposure", "years", "-o", out)
    assert fitted.exit_code == 0, fitted.output
    ref, X = _sm_poisson(frame)
    model = problin.load(out)
    assert_allclose(np.r_[model.intercept_, model.coef_], ref.params, rtol=1e-8)
    assert model.feature_names_in_.tolist() == ["x1", "g=b"]  # years is no feature
    # predict reads the exposure of the new rows from the column of the same name
    new = frame.assign(years=np.linspace(0.1, 3.0, len(frame)))
    new_path = tmp_path / "new.csv"
    new.drop(columns="y").to_csv(new_path, index=False)
    predicted = invoke("predict", out, new_path)
    assert predicted.exit_code == 0, predicted.output
    got = pd.read_csv(pd.io.common.StringIO(predicted.output))["predicted"]
    assert_allclose(got, ref.predict(X, exposure=new["years"]), rtol=1e-8)
    shown = invoke("summary", out)
    assert shown.exit_code == 0, shown.output
    assert "exposure column: years" in shown.output
    for label, value in [("Family:", "poisson"), ("Link:", "log"),
                         ("Deviance:", f"{ref.deviance:.3f}"),
                         ("Pearson chi2:", f"{ref.pearson_chi2:.3f}"),
                         ("Log-Likelihood:", f"{ref.llf:.2f}"), ("AIC:", f"{ref.aic:.2f}")]:
        line = next(row for row in shown.output.splitlines() if label in row)
        assert value in line, (label, line)


def test_formula_with_exposure_and_the_missing_exposure_column(counts, tmp_path):
    path, frame = counts
    out = tmp_path / "f.problin"
    fitted = invoke("fit", path, "-m", "poisson", "-f", "y ~ x1 + C(g)", "--exposure",
                    "years", "-o", out)
    assert fitted.exit_code == 0, fitted.output
    ref, X = _sm_poisson(frame)
    model = problin.load(out)
    assert_allclose(model.summary()["coef"], ref.params, rtol=1e-8)
    predicted = invoke("predict", out, path)
    got = pd.read_csv(pd.io.common.StringIO(predicted.output))["predicted"]
    assert_allclose(got, ref.fittedvalues, rtol=1e-8)
    assert "Family:" in invoke("summary", out).output
    table = tmp_path / "t.problin"
    assert invoke("fit", path, "-t", "y", "-m", "poisson", "--exposure", "years", "-o",
                  table).exit_code == 0
    bare = tmp_path / "bare.csv"
    frame.drop(columns="years").to_csv(bare, index=False)
    for saved in (out, table):  # a new file without the exposure column: a usage error
        missing = invoke("predict", saved, bare)
        assert missing.exit_code == 2 and "'years'" in missing.output
        assert "Traceback" not in missing.output


def test_binomial_trials_tweedie_power_and_glm_family(tmp_path):
    d = sm.datasets.star98.load_pandas()
    frame = d.exog[["LOWINC", "PERASIAN"]].iloc[:80].assign(
        k=d.endog["NABOVE"].iloc[:80], n=d.endog.sum(axis=1).iloc[:80])
    path = tmp_path / "star.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "b.problin"
    fitted = invoke("fit", path, "-t", "k", "-m", "binomial", "--trials", "n", "-p",
                    "link=probit", "-o", out)
    assert fitted.exit_code == 0, fitted.output
    X = sm.add_constant(frame[["LOWINC", "PERASIAN"]])
    ref = sm.GLM(np.column_stack([frame["k"], frame["n"] - frame["k"]]), X,
                 family=sm.families.Binomial(sm.families.links.Probit())).fit(tol=1e-12)
    model = problin.load(out)
    assert_allclose(np.r_[model.intercept_, model.coef_], ref.params, rtol=1e-7)
    assert_allclose(model.deviance_, ref.deviance, rtol=1e-8)
    page = tmp_path / "r.html"  # the report reads the trials column again
    reported = invoke("report", out, path, "--cv", "none", "-o", page)
    assert reported.exit_code == 0, reported.output
    assert "<dt>family</dt><dd>binomial</dd>" in page.read_text().replace("\n", "")
    y = frame["k"] / frame["n"] * 10 + 0.5  # positive, not whole
    frame.assign(y=y).drop(columns=["k", "n"]).to_csv(path, index=False)
    for args, sm_family in [(["-m", "tweedie", "-p", "power=1.3"],
                             sm.families.Tweedie(var_power=1.3, link=sm.families.links.Log())),
                            (["-m", "glm", "-p", "family=gamma", "-p", "link=log"],
                             sm.families.Gamma(sm.families.links.Log()))]:
        assert invoke("fit", path, "-t", "y", *args, "-o", out).exit_code == 0
        ref = sm.GLM(y, X, family=sm_family).fit(tol=1e-12)
        model = problin.load(out)
        assert_allclose(np.r_[model.intercept_, model.coef_], ref.params, rtol=1e-6)


_BAD = {  # name: (file text, arguments, exit code, what the message says)
    "negative count": ("x,y\n0,1\n1,-2\n2,3\n3,4\n", ["-m", "poisson"], 1,
                       "y[1] = -2"),
    "gamma y = 0": ("x,y\n0,1.5\n1,0\n2,3\n3,4\n", ["-m", "gamma"], 1, "y > 0: y[1] = 0"),
    "inverse Gaussian y < 0": ("x,y\n0,1.5\n1,2\n2,-3\n3,4\n", ["-m", "inverse-gaussian"], 1,
                               "y > 0: y[2] = -3"),
    "successes above trials": ("x,y,n\n0,1,3\n1,5,4\n2,2,5\n3,4,6\n",
                               ["-m", "binomial", "--trials", "n"], 1, "5 of 4"),
    "zero trials": ("x,y,n\n0,1,3\n1,0,0\n2,2,5\n3,4,6\n", ["-m", "binomial", "--trials", "n"],
                    1, "trials[1] = 0"),
    "zero exposure": ("x,y,e\n0,1,1\n1,2,0\n2,3,2\n3,4,1\n",
                      ["-m", "negative-binomial", "--exposure", "e"], 1, "exposure[1] = 0"),
    "power outside (1, 2)": ("x,y\n0,1\n1,2\n", ["-m", "tweedie", "-p", "power=2.5"], 2,
                             "range (1.0, 2.0). Got 2.5"),
    "link of no family": ("x,y\n0,1\n1,2\n", ["-m", "glm", "-p", "family=gamma", "-p",
                                               "link=logit"], 2,
                          "'logit' link is not defined for the gamma family"),
    "trials of a Poisson": ("x,y,n\n0,1,2\n1,2,2\n", ["-m", "poisson", "--trials", "n"], 2,
                            "takes no trials"),
    "exposure with an identity link": ("x,y,e\n0,1,1\n1,2,1\n", ["-m", "poisson", "-p",
                                                                  "link=identity", "--exposure",
                                                                  "e"], 2, "takes no exposure"),
    "offset of a classifier": ("x,y,o\n0,1,1\n1,0,1\n", ["-m", "lda", "--offset", "o"], 2,
                               "takes no offset"),
    "missing offset cell": ("x,y,o\n0,1,1\n1,2,\n2,3,0\n", ["-m", "poisson", "--offset", "o"], 1,
                            "missing or infinite values in 1 column: o (1 row)"),
}


@pytest.mark.parametrize("case", list(_BAD))
def test_each_bad_input_is_one_clean_message(case, tmp_path):
    text, args, code, said = _BAD[case]
    path = tmp_path / "bad.csv"
    path.write_text(text)
    result = invoke("fit", path, "-t", "y", *args, "-o", tmp_path / "m.problin")
    assert result.exit_code == code, result.output
    assert said in result.output
    assert "Traceback" not in result.output and result.output.count("Error:") == 1


@pytest.mark.parametrize("case", ["zero exposure", "successes above trials",
                                  "missing offset cell", "text offset"])
def test_bad_columns_with_the_dask_engine_are_one_clean_message(case, tmp_path):
    pytest.importorskip("dask.dataframe")
    text, args, code, said = _BAD.get(case) or (
        "x,y,o\n0,1,a\n1,2,b\n", ["-m", "poisson", "--offset", "o"], 1,
        "the offset column 'o' is not numeric")
    path = tmp_path / "bad.csv"
    path.write_text(text)
    result = invoke("fit", path, "-t", "y", *args, "--engine", "dask", "-o",
                    tmp_path / "m.problin")
    assert result.exit_code == code, result.output
    assert said in result.output
    assert "Traceback" not in result.output and result.output.count("Error:") == 1


@pytest.fixture(scope="module")
def columns_files(tmp_path_factory):
    """Counts with exposures, successes out of trials, an offset, a text feature, and
    one missing exposure; as CSV and as Parquet of four row groups."""
    rng = np.random.default_rng(4)
    n = 80
    x1, e, off = rng.normal(size=n), rng.uniform(0.5, 2.0, n), rng.normal(0.0, 0.2, n)
    g, trials = rng.choice(["a", "b"], n), rng.integers(1, 9, n)
    mu = e * np.exp(0.3 + 0.5 * x1 + 0.4 * (g == "b") + off)
    frame = pd.DataFrame({"x1": x1, "g": g, "years": e, "shift": off, "n": trials,
                          "s": rng.binomial(trials, 1 / (1 + np.exp(-0.5 * x1 - off))),
                          "y": rng.poisson(mu)})
    frame.loc[7, "years"] = np.nan
    d = tmp_path_factory.mktemp("glm-dask")
    frame.to_csv(d / "c.csv", index=False)
    frame.to_parquet(d / "c.parquet", row_group_size=20)
    return d


@pytest.mark.parametrize("data, args", [
    # (each pass reads the partitions again: a few cheap passes, the negative binomial's
    # alpha on Dask is tests/dask/test_dask_glm_regression.py's)
    ("c.parquet", ["-t", "y", "-m", "poisson", "--exposure", "years", "--offset", "shift"]),
    ("c.csv", ["-t", "s", "-m", "binomial", "--trials", "n", "--offset", "shift"])])
def test_dask_engine_reads_offset_exposure_and_trials_columns(columns_files, data, args,
                                                              tmp_path):
    """--engine dask: the columns come out of the features' partitions (CSV byte ranges,
    Parquet row groups), rows with a missing value in any of them dropped as in memory
    (--drop-missing); the fit and the model file equal the in-memory engine's."""
    pytest.importorskip("dask.dataframe")
    fitted = {}
    for engine, more in (("memory", []), ("dask", ["--blocksize", "2KiB"])):
        out = tmp_path / f"{engine}.problin"
        result = invoke("fit", columns_files / data, *args, "--drop-missing", "--engine",
                        engine, *more, "-o", out)
        assert result.exit_code == 0, result.output
        fitted[engine] = problin.load(out)
    lazy, whole = fitted["dask"], fitted["memory"]
    assert lazy.feature_names_in_.tolist() == whole.feature_names_in_.tolist()
    named = {args[i + 1] for i, a in enumerate(args) if a in ("--exposure", "--offset",
                                                                "--trials")}
    assert not named & set(whole.feature_names_in_)
    assert lazy.n_obs_ == whole.n_obs_ == 79  # (years is missing in one row)
    for name in ("coef_", "intercept_", "covariance_", "deviance_", "log_likelihood_",
                 "null_log_likelihood_"):
        assert_allclose(getattr(lazy, name), getattr(whole, name), rtol=1e-10, atol=1e-14,
                        err_msg=name)
    shown = invoke("summary", tmp_path / "dask.problin").output  # (the columns recorded)
    assert next(line for line in shown.splitlines()
                if line.startswith("offset column:")).split()[-1] == "shift", shown


def test_negative_binomial_without_overdispersion_warns_with_the_value(tmp_path):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.normal(size=40), "y": rng.binomial(4, 0.5, size=40)})
    path = tmp_path / "under.csv"
    frame.to_csv(path, index=False)
    result = invoke("fit", path, "-t", "y", "-m", "negative-binomial", "-o",
                    tmp_path / "m.problin")
    assert result.exit_code == 0, result.output
    warning = next(line for line in result.output.splitlines() if line.startswith("Warning"))
    assert "ConvergenceWarning" in warning and "alpha = " in warning
    assert "Traceback" not in result.output
    alpha = problin.load(tmp_path / "m.problin").alpha_
    assert f"NB alpha:   {alpha:.6g}" in invoke("summary", tmp_path / "m.problin").output


def test_compare_counts_poisson_negative_binomial_and_gaussian(tmp_path):
    from scipy import stats
    from sklearn.model_selection import KFold

    from problin.model_selection import compare_regressors
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    mu = np.exp(0.5 + 0.4 * X[:, 0] - 0.3 * X[:, 1])
    y = rng.negative_binomial(2, 2 / (2 + mu)).astype(float)  # overdispersed counts
    table = compare_regressors(X, y, ["poisson", "negative-binomial", "linear"], cv=3)
    rows = table.set_index("model")
    assert table["model"].iloc[0] == "negative-binomial"  # the lowest nlpd
    # Poisson's held-out log-probability and full-data AIC, from statsmodels and scipy
    nlpd = []
    for train, test in KFold(3, shuffle=True, random_state=0).split(X):
        m, s = X[train].mean(axis=0), X[train].std(axis=0)
        fit = sm.GLM(y[train], sm.add_constant((X[train] - m) / s),
                     family=sm.families.Poisson()).fit(tol=1e-12)
        mean = fit.predict(sm.add_constant((X[test] - m) / s))
        nlpd.append(-stats.poisson.logpmf(y[test], mean).mean())
    assert_allclose(rows.loc["poisson", "nlpd"], np.mean(nlpd), rtol=1e-7)
    full = sm.GLM(y, sm.add_constant(X), family=sm.families.Poisson()).fit()
    assert_allclose(rows.loc["poisson", "aic"], full.aic, rtol=1e-7)
    assert rows.loc["linear", "d2"] == rows.loc["linear", "r2"]
    path = tmp_path / "counts.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "n": y}).to_csv(path, index=False)
    result = invoke("compare", path, "-t", "n", "--task", "regression", "--cv", "3",
                    "--models", "poisson,negative-binomial,linear")
    assert result.exit_code == 0, result.output
    header = next(line.split() for line in result.output.splitlines()
                  if line.split()[:1] == ["model"])
    assert header[:7] == ["model", "rmse", "nlpd", "r2", "d2", "aic", "fit_ms"]
