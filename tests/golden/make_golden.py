"""Write the golden model files: every public estimator fitted on small fixed data and saved.

Run from the repository root with the code whose files are wanted on the path, e.g. the
pre-redesign commit of a worktree::

    PYTHONPATH=/path/to/worktree/src python tests/golden/make_golden.py v2
    PYTHONPATH=src python tests/golden/make_golden.py v3 --add   # new models only

It writes ``tests/golden/<dir>/<name>.problin`` (``problin.save``) and beside it
``<name>.npz``: the probe rows and what the model gave on them at save time (every
prediction method, ``predict_interval``, ``summary()``), plus ``manifest.json`` naming the
problin version and the file format that wrote them. ``tests/io/test_golden_files.py``
loads each file with today's code and asks for bit-identical outputs: a file a user saved
must keep predicting what it predicted, whatever the estimators' private state became.

The data are tiny and deterministic (a fixed generator); the directory stays well under
2 MB. With ``--add`` only the models that have no file yet are written (the files already
there are the net: they are never rewritten by newer code). This module is also imported by the test for :func:`outputs`, so the outputs are
computed the same way at save time and at load time.
"""
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform",
           "score_samples")
HERE = Path(__file__).resolve().parent


def outputs(model: Any, probe: Any) -> dict[str, np.ndarray]:
    """Everything a fitted model says about the probe rows, as arrays keyed by method."""
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in METHODS:
            if hasattr(model, name):
                out[name] = getattr(model, name)(probe)
        if _takes(model, "predict", "return_std"):
            mean, std = model.predict(probe, return_std=True)
            out["predict.mean"], out["predict.std"] = mean, std
        if hasattr(model, "predict_interval"):
            frame = _unless_refused(model.predict_interval, probe)
            if frame is not None:
                out["predict_interval"] = frame.to_numpy(dtype=float)
        frame = _unless_refused(model.summary) if hasattr(model, "summary") else None
        if frame is not None:
            out["summary"] = frame.select_dtypes("number").to_numpy(dtype=float)
            out["summary.index"] = np.asarray([str(i) for i in frame.index])
            out["summary.columns"] = np.asarray([str(c) for c in frame.columns])
    return {k: _plain(v) for k, v in out.items()}


def _unless_refused(method: Callable[..., Any], *args: Any) -> Any:
    """What ``method`` returns, or None where the model refuses it (softmax models have no
    ``predict_interval``, penalised least squares no ``summary``): such a key is not
    stored, and the test asks for the stored keys only."""
    try:
        return method(*args)
    except ValueError:
        return None


def _takes(model: Any, method: str, arg: str) -> bool:
    import inspect
    try:
        return arg in inspect.signature(getattr(model, method)).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def _plain(v: Any) -> np.ndarray:
    """An array ``np.savez`` stores without pickling (labels of object dtype as text: the
    test compares dtypes separately through the manifest)."""
    a = np.asarray(v)
    return a.astype(str) if a.dtype == object else a


def public_estimators(problin: Any) -> list[str]:
    """The public estimator classes of a problin (what the golden set must cover)."""
    return sorted(n for n in problin.__all__ if isinstance(getattr(problin, n), type)
                  and hasattr(getattr(problin, n), "get_params"))


def probe_frame(npz: Any) -> pd.DataFrame:
    """The probe DataFrame stored in an ``.npz`` as ``frame/<column>`` arrays."""
    cols = [str(c) for c in npz["frame.columns"]]
    return pd.DataFrame({c: npz[f"frame/{c}"] for c in cols})


# --------------------------------------------------------------------------------- data
_RNG = np.random.default_rng(20261129)
N, D = 40, 3
X = np.round(np.abs(_RNG.normal(size=(N, D))) + 0.1, 3)  # non-negative, exact decimals
_NOISE = _RNG.normal(size=N)
BINARY = np.where(X[:, 0] + 0.6 * _NOISE > 1.0, "yes", "no").astype(object)
THREE = np.asarray(["a", "b", "c"], dtype=object)[
    np.digitize(X[:, 0] - X[:, 1] + 0.5 * _NOISE, [-0.4, 0.4])]
T = X @ np.array([1.0, -2.0, 0.5]) + 0.3 * _NOISE
COUNTS = np.floor(X * 3).astype(float)
# inside the fitted range (a spline refuses values beyond its boundary knots)
PROBE = np.clip(np.round(np.abs(np.random.default_rng(7).normal(size=(6, D))) + 0.05, 3),
                X.min(axis=0), X.max(axis=0))
PROBE_COUNTS = np.floor(PROBE * 3)
FRAME = pd.DataFrame({"a": X[:, 0], "b": X[:, 1] + 0.5, "c": X[:, 2],
                      "g": np.asarray(["u", "v", "w", "u"] * 10),
                      "y": BINARY.astype(str), "t": T})
PROBE_FRAME = pd.DataFrame({"a": PROBE[:, 0], "b": PROBE[:, 1] + 0.5, "c": PROBE[:, 2],
                            "g": np.asarray(["w", "u", "v", "v", "u", "w"])})
GROUPS = np.repeat(np.arange(8), 5)
# Outcomes of the GLM regressors (a generator of their own: the draws above stay as they
# were when the v2 files were written).
_RNG_GLM = np.random.default_rng(11)
EXPOSURE = np.round(_RNG_GLM.uniform(0.5, 2.0, size=N), 2)
_MEAN = np.exp(0.4 * X[:, 0] - 0.3 * X[:, 1])
COUNT_Y = _RNG_GLM.poisson(EXPOSURE * _MEAN).astype(float)
OVERDISPERSED_Y = _RNG_GLM.negative_binomial(2, 2 / (2 + _MEAN)).astype(float)
POSITIVE_Y = np.round(_RNG_GLM.gamma(3.0, _MEAN / 3.0), 4)
TWEEDIE_Y = np.where(_RNG_GLM.random(N) < 0.3, 0.0, POSITIVE_Y)
TRIALS = _RNG_GLM.integers(1, 6, size=N).astype(float)
SUCCESSES = _RNG_GLM.binomial(TRIALS.astype(int), 1 / (1 + 1 / _MEAN)).astype(float)


def _cases() -> dict[str, tuple[Callable[[], Any], str]]:
    """name -> (fit the model, which probe: 'X', 'counts' or 'frame')."""
    import problin
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    P = problin

    def clf(make: Callable[[], Any], y: np.ndarray = BINARY, **kw: Any) -> Callable[[], Any]:
        return lambda: make().fit(X, y, **kw)

    def reg(make: Callable[[], Any], **kw: Any) -> Callable[[], Any]:
        return lambda: make().fit(X, T, **kw)

    def formula(text: str, make: Callable[[], Any]) -> Callable[[], Any]:
        return lambda: P.Formula(text, make()).fit(FRAME)

    bl = P.BayesianLogisticRegression
    cases: dict[str, tuple[Callable[[], Any], str]] = {
        # GLM classifiers
        "logistic_binary": (clf(P.LogisticRegression), "X"),
        "logistic_binary_alpha": (clf(lambda: P.LogisticRegression(alpha=1.0)), "X"),
        "logistic_binary_nointercept": (
            clf(lambda: P.LogisticRegression(alpha=0.5, fit_intercept=False)), "X"),
        "logistic_binary_hc1": (clf(lambda: P.LogisticRegression(cov_type="HC1")), "X"),
        "logistic_binary_cluster": (
            clf(lambda: P.LogisticRegression(cov_type="cluster"), groups=GROUPS), "X"),
        "logistic_binary_lbfgs": (
            clf(lambda: P.LogisticRegression(alpha=0.1, solver="lbfgs")), "X"),
        "logistic_softmax": (clf(P.LogisticRegression, THREE), "X"),
        "logistic_softmax_alpha": (clf(lambda: P.LogisticRegression(alpha=1.0), THREE), "X"),
        "logistic_softmax_nointercept": (
            clf(lambda: P.LogisticRegression(alpha=0.5, fit_intercept=False), THREE), "X"),
        "logistic_softmax_hc0": (
            clf(lambda: P.LogisticRegression(alpha=0.1, cov_type="HC0"), THREE), "X"),
        "probit_binary": (clf(P.ProbitRegression), "X"),
        "probit_binary_expected_alpha": (
            clf(lambda: P.ProbitRegression(alpha=1.0, information="expected")), "X"),
        "probit_binary_hc3": (clf(lambda: P.ProbitRegression(cov_type="HC3")), "X"),
        # Bayesian logistic regression
        "bayes_logistic_laplace": (clf(lambda: bl(alpha=1.0)), "X"),
        "bayes_logistic_laplace_evidence": (clf(lambda: bl(alpha=None)), "X"),
        "bayes_logistic_variational": (clf(lambda: bl(inference="variational")), "X"),
        "bayes_logistic_mcmc": (clf(lambda: bl(inference="mcmc", n_samples=40, n_chains=2,
                                               random_state=0, progress=False)), "X"),
        "bayes_logistic_softmax": (clf(lambda: bl(alpha=1.0), THREE), "X"),
        # linear models
        "linear": (reg(P.LinearRegression), "X"),
        "linear_ridge": (reg(lambda: P.LinearRegression(alpha=1.0)), "X"),
        "linear_q1": (reg(lambda: P.LinearRegression(alpha=0.5, q=1.0)), "X"),
        "linear_nointercept_hc2": (
            reg(lambda: P.LinearRegression(fit_intercept=False, cov_type="HC2")), "X"),
        "linear_cluster": (reg(lambda: P.LinearRegression(cov_type="cluster"), groups=GROUPS),
                           "X"),
        "lms": (reg(lambda: P.LMSRegressor(random_state=0)), "X"),
        "bayes_linear_evidence": (reg(P.BayesianLinearRegression), "X"),
        "bayes_linear_fixed": (reg(lambda: P.BayesianLinearRegression(alpha=0.5, beta=4.0)),
                               "X"),
        "polynomial_basis": (lambda: P.PolynomialBasis(degree=2).fit(X), "X"),
        "gaussian_basis": (lambda: P.GaussianBasis(n_centers=4).fit(X), "X"),
        "sigmoidal_basis": (lambda: P.SigmoidalBasis(n_centers=3).fit(X), "X"),
        "pipeline_gaussian_basis_linear": (lambda: make_pipeline(
            P.GaussianBasis(n_centers=4), P.LinearRegression(alpha=0.1)).fit(X, T), "X"),
        "pipeline_polynomial_bayes_linear": (lambda: make_pipeline(
            P.PolynomialBasis(degree=2), P.BayesianLinearRegression()).fit(X, T), "X"),
        # discriminants
        "gda_tied": (clf(P.GaussianDiscriminantAnalysis, THREE), "X"),
        "gda_full": (clf(lambda: P.GaussianDiscriminantAnalysis("full", reg_covar=1e-3),
                         THREE), "X"),
        "gda_diag": (clf(lambda: P.GaussianDiscriminantAnalysis("diag"), THREE), "X"),
        "gda_spherical_priors": (clf(lambda: P.GaussianDiscriminantAnalysis(
            "spherical", priors=[0.2, 0.8])), "X"),
        "lda": (clf(P.LinearDiscriminantAnalysis, THREE), "X"),
        "qda": (clf(lambda: P.QuadraticDiscriminantAnalysis(reg_covar=1e-3), THREE), "X"),
        "fisher_binary": (clf(P.FisherDiscriminant), "X"),
        "fisher_three": (clf(lambda: P.FisherDiscriminant(n_components=2), THREE), "X"),
        "least_squares_binary": (clf(P.LeastSquaresClassifier), "X"),
        "least_squares_three": (clf(P.LeastSquaresClassifier, THREE), "X"),
        "perceptron_binary": (clf(lambda: P.Perceptron(random_state=0)), "X"),
        "perceptron_three": (clf(lambda: P.Perceptron(random_state=0), THREE), "X"),
        # naive Bayes
        "gaussian_nb": (clf(P.GaussianNB, THREE), "X"),
        "bernoulli_nb": (clf(lambda: P.BernoulliNB(binarize=1.0)), "X"),
        "multinomial_nb": (lambda: P.MultinomialNB(alpha=0.5).fit(COUNTS, THREE), "counts"),
        # decisions
        "decision_logistic_cost": (clf(lambda: P.BayesDecision(
            P.LogisticRegression(alpha=1.0), cost=[[0, 1], [5, 0]])), "X"),
        "decision_gnb_priors": (clf(lambda: P.BayesDecision(
            P.GaussianNB(), priors=[0.5, 0.3, 0.2]), THREE), "X"),
        # Pipelines
        "pipeline_scaler_logistic": (lambda: make_pipeline(
            StandardScaler(), P.LogisticRegression(alpha=0.1)).fit(X, THREE), "X"),
        "pipeline_scaler_probit": (lambda: make_pipeline(
            StandardScaler(), P.ProbitRegression()).fit(X, BINARY), "X"),
        "pipeline_minmax_bayes_logistic": (lambda: make_pipeline(
            MinMaxScaler(), bl(alpha=1.0)).fit(X, BINARY), "X"),
        "pipeline_scaler_linear": (lambda: make_pipeline(
            StandardScaler(), P.LinearRegression()).fit(X, T), "X"),
        "pipeline_scaler_gda": (lambda: make_pipeline(
            StandardScaler(), P.GaussianDiscriminantAnalysis()).fit(X, THREE), "X"),
        # Formulas
        "formula_logistic": (formula("y ~ a + np.log(b) + C(g)", P.LogisticRegression), "frame"),
        "formula_logistic_spline": (formula("y ~ bs(a, df=4) + c + C(g)",
                                            lambda: P.LogisticRegression(alpha=1.0)), "frame"),
        "formula_linear": (formula("t ~ a * c + np.log(b) + C(g)", P.LinearRegression),
                           "frame"),
        "formula_linear_center_nointercept": (
            formula("t ~ center(a) + scale(c) + C(g) - 1", P.LinearRegression), "frame"),
        "formula_bayes_linear_poly": (formula("t ~ poly(a, 2) + b",
                                              P.BayesianLinearRegression), "frame"),
        "formula_probit": (formula("y ~ a + b", P.ProbitRegression), "frame"),
        "formula_gaussian_nb": (formula("y ~ a + c + C(g)", P.GaussianNB), "frame"),
    }
    # Inputs of other forms: pandas (feature names), a categorical DataFrame (the model's
    # own input encoding) and sparse matrices.
    import scipy.sparse as sp
    frame_x = FRAME[["a", "b", "c"]]
    cases["logistic_pandas"] = (lambda: P.LogisticRegression().fit(frame_x, BINARY), "frame_x")
    cases["logistic_categorical_frame"] = (
        lambda: P.LogisticRegression(alpha=0.1).fit(FRAME[["a", "c", "g"]], BINARY), "frame_acg")
    cases["linear_pandas"] = (lambda: P.LinearRegression().fit(frame_x, T), "frame_x")
    cases["logistic_sparse"] = (lambda: P.LogisticRegression(alpha=0.1).fit(
        sp.csr_matrix(X), THREE), "X")
    cases["bayes_logistic_sparse"] = (lambda: P.BayesianLogisticRegression().fit(
        sp.csr_matrix(X), BINARY), "X")
    cases.update(_regressor_cases(P))
    return cases


def _regressor_cases(P: Any) -> dict[str, tuple[Callable[[], Any], str]]:
    """The GLM regressors of issue 32 (where this problin has them)."""
    makers: dict[str, tuple[str, Callable[[Any], Any]]] = {
        "poisson_exposure": ("PoissonRegression",
                             lambda c: c().fit(X, COUNT_Y, exposure=EXPOSURE)),
        "poisson_sqrt_alpha": ("PoissonRegression",
                               lambda c: c(link="sqrt", alpha=0.5).fit(X, COUNT_Y)),
        "poisson_hc1": ("PoissonRegression",
                        lambda c: c(cov_type="HC1").fit(X, COUNT_Y)),
        "negative_binomial": ("NegativeBinomialRegression",
                              lambda c: c().fit(X, OVERDISPERSED_Y)),
        "gamma_log": ("GammaRegression", lambda c: c().fit(X, POSITIVE_Y)),
        "gamma_inverse_nointercept": ("GammaRegression", lambda c: c(
            link="inverse", fit_intercept=False).fit(X, POSITIVE_Y)),
        "inverse_gaussian": ("InverseGaussianRegression", lambda c: c().fit(X, POSITIVE_Y)),
        "tweedie": ("TweedieRegression", lambda c: c(power=1.5).fit(X, TWEEDIE_Y)),
        "binomial_trials": ("BinomialRegression",
                            lambda c: c().fit(X, SUCCESSES, trials=TRIALS)),
        "binomial_cloglog": ("BinomialRegression",
                             lambda c: c(link="cloglog").fit(X, SUCCESSES, trials=TRIALS)),
        "glm_gaussian": ("GLM", lambda c: c(family="gaussian").fit(X, T)),
        "glm_poisson_identity": ("GLM", lambda c: c(family="poisson", link="identity")
                                 .fit(X, COUNT_Y + 1.0)),
    }

    def fit(cls: Any, make: Callable[[Any], Any]) -> Callable[[], Any]:
        return lambda: make(cls)

    cases = {name: (fit(getattr(P, cls), make), "X") for name, (cls, make) in makers.items()
             if hasattr(P, cls)}
    if hasattr(P, "PoissonRegression"):
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        cases["formula_poisson"] = (lambda: P.Formula(
            "n ~ a + np.log(b) + C(g)", P.PoissonRegression()).fit(FRAME.assign(n=COUNT_Y)),
            "frame")
        cases["pipeline_scaler_poisson"] = (lambda: make_pipeline(
            StandardScaler(), P.PoissonRegression(alpha=0.1)).fit(X, COUNT_Y), "X")
        import scipy.sparse as sp
        cases["poisson_sparse"] = (lambda: P.PoissonRegression().fit(
            sp.csr_matrix(X), COUNT_Y, exposure=EXPOSURE), "X")
    return cases


def _dask_cases() -> dict[str, tuple[Callable[[], Any], str]]:
    """Fits on Dask arrays (files hold the computed arrays): the engine's other data path."""
    try:
        import dask.array as da
    except ImportError:
        return {}
    import problin as P
    Xd = da.from_array(X, chunks=(13, D))
    yb = da.from_array(BINARY.astype(str), chunks=13)
    y3 = da.from_array(THREE.astype(str), chunks=13)
    td = da.from_array(T, chunks=13)
    cases = {
        "dask_logistic_binary": (lambda: P.LogisticRegression(alpha=0.1).fit(Xd, yb), "X"),
        "dask_logistic_softmax": (lambda: P.LogisticRegression().fit(Xd, y3), "X"),
        "dask_linear": (lambda: P.LinearRegression().fit(Xd, td), "X"),
        "dask_bayes_logistic": (lambda: P.BayesianLogisticRegression().fit(Xd, yb), "X"),
    }
    if hasattr(P, "GammaRegression"):
        cases["dask_gamma"] = (lambda: P.GammaRegression().fit(
            Xd, da.from_array(POSITIVE_Y, chunks=13)), "X")
    return cases


def _probe(kind: str) -> Any:
    return {"X": PROBE, "counts": PROBE_COUNTS, "frame": PROBE_FRAME,
            "frame_x": PROBE_FRAME[["a", "b", "c"]],
            "frame_acg": PROBE_FRAME[["a", "c", "g"]]}[kind]


def main(subdir: str, add: bool = False) -> None:
    import problin
    from problin.io.model_file import FORMAT_VERSION
    print(f"problin {problin.__version__} from {problin.__file__}, format {FORMAT_VERSION}")
    out_dir = HERE / subdir
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"problin_version": problin.__version__,
                                "format_version": FORMAT_VERSION, "models": {}}
    if add:  # the files there stay as they are; only new models are written
        manifest = json.loads((out_dir / "manifest.json").read_text())
        if manifest["format_version"] != FORMAT_VERSION:
            sys.exit(f"{out_dir} holds format {manifest['format_version']} files; this "
                     f"problin writes format {FORMAT_VERSION}: write a new directory")
    manifest["public"] = public_estimators(problin)
    for name, (fit, kind) in {**_cases(), **_dask_cases()}.items():
        if name in manifest["models"]:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = fit()
        probe = _probe(kind)
        result = outputs(model, probe)
        problin.save(model, out_dir / f"{name}.problin")
        arrays = dict(result)
        if isinstance(probe, pd.DataFrame):
            arrays["frame.columns"] = np.asarray(list(probe.columns))
            for c in probe.columns:
                arrays[f"frame/{c}"] = _plain(probe[c].to_numpy())
        else:
            arrays["probe"] = probe
        np.savez_compressed(out_dir / f"{name}.npz", **arrays)
        manifest["models"][name] = {
            "class": type(model).__name__,
            "dtypes": {k: str(np.asarray(v).dtype) for k, v in _raw(model, probe).items()}}
        print(f"  {name}: {type(model).__name__}, {sorted(result)}")
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True)
                                           + "\n")


def _raw(model: Any, probe: Any) -> dict[str, Any]:
    """The dtypes before :func:`_plain` (labels of object dtype stay object)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {m: getattr(model, m)(probe) for m in ("predict",) if hasattr(model, m)}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "v2", add="--add" in sys.argv[2:])
