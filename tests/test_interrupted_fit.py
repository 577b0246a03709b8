"""A fit that does not complete leaves the estimator as it was (issue 31, item 8).

Interrupting ``fit`` on new data (Ctrl-C) left ``classes_`` of the new data with the
coefficients of the old (``predict_proba`` gave 2 columns for 3 classes). The rule, for
every public estimator's ``fit`` and ``partial_fit``: any exception, KeyboardInterrupt
included, leaves every attribute as it was. The interrupt is raised at chosen points
of the refit -- at the k-th call of a problin function, as a signal would arrive
between two bytecodes -- and the estimator is then compared byte for byte (its pickle)
and by its predictions with the model before the refit.
"""
import pickle
import sys

import numpy as np
import pandas as pd
import pytest

import problin as pl
from problin._state import AllOrNothingFit

_PACKAGE = pl.__path__[0]

_rng = np.random.default_rng(0)
X1 = _rng.poisson(3.0, (40, 3)).astype(float)
X2 = _rng.poisson(3.0, (50, 3)).astype(float)
# The refit has a class more than the first fit: the case that left a mixed model.
Y1 = (X1[:, 0] + _rng.normal(0, 1.5, 40) > 3).astype(int)
Y2 = np.digitize(X2[:, 0] + _rng.normal(0, 1.5, 50), [2.5, 4.0])
R1 = X1 @ [1.0, -1.0, 0.5] + _rng.normal(size=40)
R2 = X2 @ [0.5, 2.0, -1.0] + _rng.normal(size=50)
PROBE = X2[:7]

CLASSIFIERS = [pl.LogisticRegression(), pl.LogisticRegression(alpha=1.0),
               pl.ProbitRegression(), pl.BayesianLogisticRegression(progress=False),
               pl.GaussianDiscriminantAnalysis(), pl.LinearDiscriminantAnalysis(),
               pl.QuadraticDiscriminantAnalysis(), pl.GaussianNB(), pl.BernoulliNB(),
               pl.MultinomialNB(), pl.ExponentialFamilyNB(), pl.FisherDiscriminant(),
               pl.LeastSquaresClassifier(),
               pl.Perceptron(max_iter=5), pl.BayesDecision(pl.LogisticRegression()),
               pl.OrdinalRegression(), pl.BayesianOrdinalRegression(progress=False)]
REGRESSORS = [pl.LinearRegression(), pl.BayesianLinearRegression(), pl.LMSRegressor()]
# GLM regressors fit targets in (0, 1): proportions for the binomial, positive for the rest.
GLM_REGRESSORS = [pl.GLM("gaussian"), pl.PoissonRegression(), pl.GammaRegression(),
                  pl.InverseGaussianRegression(), pl.TweedieRegression(),
                  pl.BinomialRegression(), pl.NegativeBinomialRegression(nb_alpha=0.5)]
TRANSFORMERS = [pl.PolynomialBasis(degree=2), pl.GaussianBasis(), pl.SigmoidalBasis()]
PARTIAL = [pl.GaussianDiscriminantAnalysis(), pl.LinearDiscriminantAnalysis(),
           pl.QuadraticDiscriminantAnalysis(), pl.GaussianNB(), pl.BernoulliNB(),
           pl.MultinomialNB(), pl.ExponentialFamilyNB(), pl.LinearRegression(),
           pl.BayesianLinearRegression(),
           pl.LMSRegressor()]


def _frame(X, y):
    return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y})


def _outputs(est, probe):
    out = [getattr(est, name)(probe) for name in ("predict", "predict_proba", "transform")
           if hasattr(est, name)]
    return [np.asarray(o) for o in out]


def _calls(run):
    """The number of problin functions a run calls (Python frames under the package)."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" and frame.f_code.co_filename.startswith(_PACKAGE):
            count += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count


def _interrupted(run, at):
    """Run ``run`` with a KeyboardInterrupt raised on entering its ``at``-th problin
    function; True if it was interrupted (it may finish first, or swallow the raise)."""
    seen = 0

    def profile(frame, event, arg):
        nonlocal seen
        if event == "call" and frame.f_code.co_filename.startswith(_PACKAGE):
            seen += 1
            if seen == at:
                raise KeyboardInterrupt  # (the profiler is unset and this propagates)

    sys.setprofile(profile)
    try:
        run()
    except KeyboardInterrupt:
        return True
    finally:
        sys.setprofile(None)
    return False


def _check_refit(fitted, refit, probe):
    """Interrupt ``refit(estimator)`` at a spread of points of its run; each time the
    estimator must be the fitted one, byte for byte and in what it predicts."""
    # (one round trip first: views of a fitted array pickle as copies after it)
    blob = pickle.dumps(pickle.loads(pickle.dumps(fitted)))
    expected = _outputs(fitted, probe)
    total = _calls(lambda: refit(pickle.loads(blob)))
    points = sorted({1, 2, 3, total - 1, total, *np.linspace(1, total, 12).astype(int)})
    interrupted = 0
    for at in points:
        est = pickle.loads(blob)
        if not _interrupted(lambda: refit(est), at):
            continue
        interrupted += 1
        assert pickle.dumps(est) == blob, f"attributes changed (interrupted at call {at})"
        for got, want in zip(_outputs(est, probe), expected, strict=True):
            np.testing.assert_array_equal(got, want)
    assert interrupted >= len(points) - 2, (interrupted, points)


def _ids(estimators):
    return [repr(e) for e in estimators]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("estimator", CLASSIFIERS, ids=_ids(CLASSIFIERS))
def test_interrupted_classifier_refit_leaves_the_model(estimator):
    fitted = estimator.fit(X1, Y1)
    y2 = Y2 > 0 if isinstance(estimator, pl.ProbitRegression) else Y2  # (binary only)
    _check_refit(fitted, lambda est: est.fit(X2, y2), PROBE)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("estimator", REGRESSORS, ids=_ids(REGRESSORS))
def test_interrupted_regressor_refit_leaves_the_model(estimator):
    fitted = estimator.fit(X1, R1)
    _check_refit(fitted, lambda est: est.fit(X2, R2), PROBE)


@pytest.mark.parametrize("estimator", GLM_REGRESSORS, ids=_ids(GLM_REGRESSORS))
def test_interrupted_glm_regressor_refit_leaves_the_model(estimator):
    fitted = estimator.fit(X1, 1.0 / (1.0 + np.exp(-R1 / 5.0)))
    _check_refit(fitted, lambda est: est.fit(X2, 1.0 / (1.0 + np.exp(-R2 / 5.0))), PROBE)


@pytest.mark.parametrize("estimator", TRANSFORMERS, ids=_ids(TRANSFORMERS))
def test_interrupted_transformer_refit_leaves_the_model(estimator):
    fitted = estimator.fit(X1)
    _check_refit(fitted, lambda est: est.fit(X2 * 3.0 - 1.0), PROBE)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("estimator", PARTIAL, ids=_ids(PARTIAL))
def test_interrupted_partial_fit_leaves_the_model(estimator):
    if hasattr(estimator, "predict_proba"):
        fitted = estimator.partial_fit(X1, Y1, classes=[0, 1, 2])
        _check_refit(fitted, lambda est: est.partial_fit(X2, Y2), PROBE)
    else:
        fitted = estimator.partial_fit(X1, R1)
        _check_refit(fitted, lambda est: est.partial_fit(X2, R2), PROBE)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_interrupted_formula_refit_leaves_the_model():
    fitted = pl.Formula("y ~ a + b + c", pl.LogisticRegression()).fit(_frame(X1, Y1))
    _check_refit(fitted, lambda est: est.fit(_frame(X2, Y2)), _frame(X2, Y2)[:7])


def test_every_public_estimator_is_covered():
    covered = {type(e) for e in CLASSIFIERS + REGRESSORS + GLM_REGRESSORS + TRANSFORMERS} \
        | {pl.Formula}
    public = {getattr(pl, name) for name in pl.__all__}
    estimators = {c for c in public if isinstance(c, type) and hasattr(c, "fit")}
    assert estimators <= covered, estimators - covered
    # ... and a new one gets the rule from its base (not from remembering it)
    assert all(issubclass(c, AllOrNothingFit) for c in estimators)
