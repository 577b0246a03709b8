"""problin.plot: each display draws what it says, checked against scikit-learn and the
models' own numbers, and refuses bad input with a clear error."""
import subprocess
import sys

import matplotlib.pyplot as plt  # on Agg (conftest.py)
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from matplotlib.axes import Axes
from scipy.stats import norm
from sklearn.calibration import calibration_curve
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import problin
from problin import plot
from problin.datasets import load_dataset


@pytest.fixture(scope="module")
def cancer():
    X, y = load_dataset("breast-cancer")
    X = X.iloc[:, :6]
    return X, y, problin.LogisticRegression(alpha=1.0).fit(X, y)


@pytest.fixture(scope="module")
def iris():
    X, y = load_dataset("iris")
    return X, y, problin.LogisticRegression(alpha=1.0).fit(X, y)


@pytest.fixture(scope="module")
def mixed():
    """Two continuous features and two indicators, the indicators with the largest
    coefficients (the default choice must still skip them)."""
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"smoker": rng.integers(0, 2, n).astype(float),
                      "age": rng.normal(50, 10, n), "male": rng.integers(0, 2, n).astype(float),
                      "bmi": rng.normal(25, 4, n)})
    eta = 4 * X.smoker - 3 * X.male + 0.05 * (X.age - 50) + 0.1 * (X.bmi - 25)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "sick", "well")
    return X, y, problin.LogisticRegression().fit(X, y)


def test_import_problin_does_not_import_matplotlib():
    code = ("import sys, problin; assert 'matplotlib' not in sys.modules; "
            "import problin.plot; assert 'matplotlib' in sys.modules; "
            "assert 'matplotlib.pyplot' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- decision regions
def test_decision_regions_show_the_predicted_class_on_the_grid(iris):
    X, y, model = iris
    d = plot.DecisionRegionsDisplay.from_estimator(model, X, y, features=["petal length (cm)",
                                                                          "petal width (cm)"])
    assert isinstance(d.ax_, Axes) and d.figure_ is d.ax_.figure
    xs, ys = d.axes
    G = np.tile(X.mean().to_numpy(), (xs.size * ys.size, 1))  # continuous: held at the mean
    G[:, 2], G[:, 3] = np.meshgrid(xs, ys)[0].ravel(), np.meshgrid(xs, ys)[1].ravel()
    pred = model.predict(pd.DataFrame(G, columns=X.columns))
    np.testing.assert_array_equal(np.asarray(model.classes_)[d.codes.ravel()], pred)
    assert [c.get_label() for c in d.scatter_] == list(model.classes_)
    assert sum(len(c.get_offsets()) for c in d.scatter_) == len(X)
    assert all(0 < c.get_alpha() < 1 for c in d.scatter_)  # translucent: overlaps show
    assert (d.ax_.get_xlabel(), d.ax_.get_ylabel()) == ("petal length (cm)", "petal width (cm)")


def test_decision_regions_default_to_continuous_features_and_jitter_indicators(mixed):
    X, y, model = mixed
    d = plot.DecisionRegionsDisplay.from_estimator(model, X, y)
    assert d.feature_names == ["age", "bmi"]  # never smoker or male, despite their weight
    assert plot.default_features(model, X) == [1, 3]
    held = plot.DecisionRegionsDisplay.from_estimator(model, X, y, features=["smoker", "age"])
    x = np.concatenate([c.get_offsets()[:, 0] for c in held.scatter_])
    assert held.discrete == [True, False]
    assert np.all(np.abs(x - np.round(x)) <= 0.15) and np.any(x != np.round(x))


def test_one_feature_draws_the_class_probabilities(iris):
    X, y, model = iris
    d = plot.DecisionRegionsDisplay.from_estimator(model, X, y, features=[3])
    lines = d.ax_.get_lines()
    G = np.tile(X.mean().to_numpy(), (d.axes[0].size, 1))
    G[:, 3] = d.axes[0]
    proba = model.predict_proba(pd.DataFrame(G, columns=X.columns))
    for k in range(3):
        np.testing.assert_allclose(lines[k].get_ydata(), proba[:, k])


def test_decision_regions_refuse_bad_input(iris, mixed):
    X, y, model = iris
    with pytest.raises(ValueError, match="unknown feature 'nope'"):
        plot.plot_decision_regions(model, X, y, features=["nope"])
    with pytest.raises(ValueError, match="give 1 to 2 features"):
        plot.plot_decision_regions(model, X, y, features=[0, 1, 2])
    with pytest.raises(ValueError, match="one label per row"):
        plot.plot_decision_regions(model, X, y[:10])
    with pytest.raises(TypeError, match="sparse"):
        plot.plot_decision_regions(model, sp.csr_matrix(X.to_numpy()), y)
    bad = X.copy()
    bad.iloc[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"not finite \(row 3, column 1\)"):
        plot.plot_decision_regions(model, bad, y)
    with pytest.raises(ValueError, match="numeric columns"):
        plot.plot_decision_regions(model, X.assign(s="a"), y)
    with pytest.raises(TypeError, match="classes_"):
        plot.plot_decision_regions(problin.LinearRegression().fit(X, np.arange(len(X))), X)
    Xm, ym, mm = mixed
    with pytest.raises(ValueError, match="no continuous feature"):
        plot.plot_decision_regions(mm, Xm[["smoker", "male"]], ym)


# ---------------------------------------------------------------- calibration
def test_reliability_bins_are_calibration_curves_with_counts(cancer):
    X, y, model = cancer
    d = plot.ReliabilityDisplay.from_estimator(model, X, y, n_bins=8)
    p = model.predict_proba(X)[:, 1]
    prob_true, prob_pred = calibration_curve(y == "malignant", p, n_bins=8)
    np.testing.assert_allclose(d.prob_true, prob_true)
    np.testing.assert_allclose(d.prob_pred, prob_pred)
    expected = np.bincount(np.digitize(p, np.linspace(0, 1, 9)[1:-1], right=True),
                           minlength=8)
    np.testing.assert_array_equal(d.counts, expected[expected > 0])
    assert [b.get_height() for b in d.bars_] == list(d.counts)
    np.testing.assert_allclose(d.line_.get_xydata(), np.column_stack([prob_pred, prob_true]))
    assert d.ax_.get_xlabel() == "mean p(malignant) in bin"


def test_reliability_of_several_classes_uses_the_top_class(iris):
    X, y, model = iris
    proba = model.predict_proba(X)
    d = plot.ReliabilityDisplay.from_predictions(y, proba, classes=model.classes_,
                                                 strategy="quantile", n_bins=4)
    top = proba.max(axis=1)
    hit = model.classes_[proba.argmax(axis=1)] == y
    np.testing.assert_allclose(d.prob_true,
                               calibration_curve(hit, top, n_bins=4, strategy="quantile")[0])
    assert d.counts.sum() == len(y) and "confidence" in d.what


def test_reliability_refuses_bad_input(iris):
    X, y, model = iris
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        plot.ReliabilityDisplay.from_predictions([0, 1], [0.2, 1.5])
    with pytest.raises(ValueError, match="classes="):
        plot.ReliabilityDisplay.from_predictions(y, model.predict_proba(X))
    with pytest.raises(ValueError, match="two classes"):
        plot.ReliabilityDisplay.from_predictions(y, model.predict_proba(X)[:, 0])
    with pytest.raises(TypeError, match="predict_proba"):
        plot.plot_reliability(problin.Perceptron().fit(X, y), X, y)


# ---------------------------------------------------------------- ROC
def test_roc_points_are_roc_curve(cancer, iris):
    X, y, model = cancer
    d = plot.RocDisplay.from_estimator(model, X, y)
    fpr, tpr, _ = roc_curve(y == "malignant", model.predict_proba(X)[:, 1])
    line = d.lines_["malignant"]
    np.testing.assert_array_equal(line.get_xdata(), fpr)
    np.testing.assert_array_equal(line.get_ydata(), tpr)
    assert d.aucs["malignant"] == pytest.approx(roc_auc_score(y == "malignant",
                                                              model.predict_proba(X)[:, 1]))
    Xi, yi, mi = iris
    many = plot.RocDisplay.from_estimator(mi, Xi, yi)
    assert list(many.lines_) == list(mi.classes_) and "rest" in many.ax_.get_title()


def test_roc_from_a_decision_function_and_bad_input(cancer):
    X, y, _ = cancer
    lda = problin.FisherDiscriminant().fit(X, y)
    ax = plot.plot_roc(lda, X, y)
    assert isinstance(ax, Axes)
    with pytest.raises(ValueError, match="only one class"):
        plot.RocDisplay.from_predictions(np.ones(5), np.linspace(0, 1, 5))
    with pytest.raises(ValueError, match="5 labels but y_score 4"):
        plot.RocDisplay.from_predictions(np.ones(5), np.ones(4))
    with pytest.raises(TypeError, match="neither predict_proba nor decision_function"):
        plot.plot_roc(problin.LinearRegression().fit(X, np.arange(len(X))), X, y)


# ---------------------------------------------------------------- predictive band
def test_band_is_mean_plus_minus_k_sd_of_the_posterior_predictive():
    X, y = load_dataset("diabetes")
    model = problin.BayesianLinearRegression().fit(X, y)
    d = plot.PredictiveBandDisplay.from_estimator(model, X, y, feature="bmi", k=1.5)
    G = np.tile(X.mean().to_numpy(), (d.x.size, 1))
    sex = X["sex"].value_counts().idxmax()  # two values: held at its mode, not its mean
    G[:, list(X.columns).index("sex")] = sex
    G[:, list(X.columns).index("bmi")] = d.x
    mean, std = model.predict(pd.DataFrame(G, columns=X.columns), return_std=True)
    np.testing.assert_allclose(d.line_.get_ydata(), mean)
    np.testing.assert_allclose(d.high - d.low, 3.0 * std)
    assert d.band_label == "mean ± 1.5 sd" and d.points.shape == (len(X), 2)


def test_band_from_predict_interval_has_the_same_coverage():
    X, y = load_dataset("diabetes")
    model = problin.LinearRegression().fit(X, y)
    d = plot.PredictiveBandDisplay.from_estimator(model, X, feature="bmi")
    G = np.tile(X.mean().to_numpy(), (d.x.size, 1))
    G[:, list(X.columns).index("sex")] = X["sex"].value_counts().idxmax()
    G[:, list(X.columns).index("bmi")] = d.x
    frame = model.predict_interval(pd.DataFrame(G, columns=X.columns),
                                   level=2 * norm.cdf(2) - 1)
    np.testing.assert_allclose(d.low, frame["obs_ci_low"])
    np.testing.assert_allclose(d.high, frame["obs_ci_high"])
    assert d.band_label == "95.4% prediction interval"


def test_band_refuses_models_without_uncertainty():
    X, y = load_dataset("diabetes")
    with pytest.raises(TypeError, match="neither predict"):
        plot.plot_predictive_band(problin.LMSRegressor(random_state=0).fit(X, y), X, y)
    with pytest.raises(ValueError, match="no inference"):
        plot.plot_predictive_band(problin.LinearRegression(alpha=1.0).fit(X, y), X, y)
    with pytest.raises(ValueError, match="k must be positive"):
        plot.plot_predictive_band(problin.LinearRegression().fit(X, y), X, k=0)
    with pytest.raises(ValueError, match="give 1 to 1 features"):
        plot.plot_predictive_band(problin.LinearRegression().fit(X, y), X, feature=[0, 1])


# ---------------------------------------------------------------- coefficients
def test_coefficient_intervals_are_the_summary(cancer):
    X, _, model = cancer
    d = plot.CoefficientDisplay.from_estimator(model)
    table = model.summary().drop(index="intercept")
    assert d.names == list(table.index)
    np.testing.assert_array_equal(d.estimate, table["coef"])
    np.testing.assert_array_equal(d.low, table["ci_low"])
    np.testing.assert_array_equal(d.high, table["ci_high"])
    segments = d.errorbar_.lines[2][0].get_segments()  # one per row, top row first
    np.testing.assert_allclose([s[:, 0] for s in segments], table[["ci_low", "ci_high"]])
    scaled = plot.CoefficientDisplay.from_estimator(model, X, level=0.9)
    sd = X.std(ddof=0).to_numpy()
    np.testing.assert_allclose(scaled.estimate, table["coef"] * sd)
    np.testing.assert_allclose(scaled.low, model.summary(0.9)["ci_low"].iloc[1:] * sd)


def test_coefficients_of_softmax_and_bayesian_models(iris):
    X, _, model = iris
    d = plot.CoefficientDisplay.from_estimator(model, include_intercept=True)
    assert d.names[0] == f"{model.classes_[0]}: intercept" and len(d.names) == 15
    bayes = problin.BayesianLinearRegression().fit(X.iloc[:, :3], X.iloc[:, 3])
    b = plot.CoefficientDisplay.from_estimator(bayes)
    np.testing.assert_array_equal(b.estimate, bayes.summary()["mean"].iloc[1:])
    assert b.xlabel == "posterior mean"


def test_coefficients_refuse_models_without_intervals(iris):
    X, y, model = iris
    with pytest.raises(TypeError, match="no summary"):
        plot.plot_coefficients(problin.GaussianNB().fit(X, y))
    with pytest.raises(ValueError, match="ci_low"):
        plot.CoefficientDisplay.from_summary(pd.DataFrame({"coef": [1.0]}))
    with pytest.raises(ValueError, match="not a column of X"):
        plot.plot_coefficients(model, X.rename(columns=str.upper))
    pipe = make_pipeline(StandardScaler(), problin.LogisticRegression(alpha=1.0)).fit(X, y)
    with pytest.raises(ValueError, match="Pipeline"):
        plot.plot_coefficients(pipe, X)


# ---------------------------------------------------------------- traces
@pytest.fixture(scope="module")
def mcmc(cancer):
    X, y, _ = cancer
    return problin.BayesianLogisticRegression(inference="mcmc", n_samples=300, random_state=0,
                                              progress=False).fit(X.iloc[:, :3], y)


def test_mcmc_trace_draws_each_chain(mcmc):
    d = plot.McmcTraceDisplay.from_estimator(mcmc, "mean texture")
    assert len(d.lines_) == mcmc.samples_.shape[0]
    for c, line in enumerate(d.lines_):
        np.testing.assert_array_equal(line.get_ydata(), mcmc.samples_[c, :, 2])
    assert f"R-hat {mcmc.rhat_[2]:.3f}" in d.ax_.get_title()
    assert d.ax_.yaxis.get_offset_text().get_text() == ""
    ax = plot.plot_mcmc_trace(mcmc, 0)
    assert ax.get_ylabel() == "intercept"


def test_mcmc_trace_refuses_other_models(mcmc, cancer):
    with pytest.raises(TypeError, match="inference='mcmc'"):
        plot.plot_mcmc_trace(cancer[2])
    with pytest.raises(ValueError, match="unknown parameter 'nope'"):
        plot.plot_mcmc_trace(mcmc, "nope")
    with pytest.raises(ValueError, match="out of range"):
        plot.plot_mcmc_trace(mcmc, 7)


def test_optimiser_trace_shows_the_distance_to_the_final_value(cancer):
    _, _, model = cancer
    d = plot.OptimiserTraceDisplay.from_estimator(model)
    h = model.history_
    gap = np.abs(h - h[-1])
    np.testing.assert_allclose(d.line_.get_ydata(), gap[gap > 0])
    assert d.gap and d.ax_.get_yscale() == "log"
    assert f"{h[-1]:.10g}" in d.ax_.get_title()
    d.figure_.canvas.draw()
    ticks = [t for t in d.ax_.get_xticks() if d.ax_.get_xlim()[0] <= t <= d.ax_.get_xlim()[1]]
    assert all(float(t).is_integer() for t in ticks)


def test_optimiser_trace_of_counts_and_plain_numbers(iris):
    X, y, _ = iris
    model = problin.Perceptron(random_state=0, max_iter=20).fit(X, y)
    d = plot.OptimiserTraceDisplay.from_estimator(model)
    assert not d.gap and d.ax_.get_ylabel() == "misclassified samples"
    assert d.ax_.get_xlabel() == "epoch" and d.line_.get_xdata()[0] == 1
    np.testing.assert_array_equal(d.line_.get_ydata(), model.history_)
    flat = plot.OptimiserTraceDisplay(history=np.array([105.68336, 105.68335, 105.68335]))
    flat.plot()
    flat.figure_.canvas.draw()
    assert flat.ax_.yaxis.get_offset_text().get_text() == ""  # no "+1.0568e2"
    with pytest.raises(TypeError, match="history_"):
        plot.plot_optimiser_trace(problin.GaussianNB().fit(X, y))


# ---------------------------------------------------------------- the rest
def test_activation_uncertainty_is_the_posterior_sd(cancer):
    X, y, _ = cancer
    model = problin.BayesianLogisticRegression().fit(X, y)
    d = plot.ActivationUncertaintyDisplay.from_estimator(model, X, features=[0, 1],
                                                         grid_resolution=20)
    G = np.tile(X.mean().to_numpy(), (400, 1))
    G[:, 0], G[:, 1] = (m.ravel() for m in np.meshgrid(*d.axes))
    var = model.predict_activation(pd.DataFrame(G, columns=X.columns))[1]
    np.testing.assert_allclose(d.std.ravel(), np.sqrt(var))
    with pytest.raises(TypeError, match="no posterior"):
        plot.ActivationUncertaintyDisplay.from_estimator(problin.GaussianNB().fit(X, y), X)


@pytest.mark.parametrize("function", ["plot_decision_regions", "plot_reliability", "plot_roc"])
def test_plain_functions_return_axes_drawn_on_the_given_one(function, iris):
    X, y, model = iris
    _, ax = plt.subplots()
    assert getattr(plot, function)(model, X, y, ax=ax) is ax
