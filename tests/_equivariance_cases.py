"""The estimators of issue 13 and the strongest unit property each one has.

Every case names the data it is fitted on, how a hypothesis draw becomes a
:class:`~tests._equivariance_checks.Transform` (per-column, or the common
scaling an isotropic prior allows, ...), the estimator for data in the
transformed units (its hyperparameters transformed with them where the model
has units of its own, e.g. a prior precision), and the check that compares it
with the fit on the original data.
"""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numpy.testing import assert_allclose
from sklearn.pipeline import make_pipeline
from tests import _equivariance_checks as chk
from tests._equivariance_checks import Transform

from problin import (
    BayesDecision,
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianOrdinalRegression,
    BernoulliNB,
    ConvergenceWarning,
    ExponentialFamilyNB,
    GLM,
    BinomialRegression,
    FisherDiscriminant,
    GammaRegression,
    GaussianBasis,
    GaussianDiscriminantAnalysis,
    GaussianNB,
    InverseGaussianRegression,
    LeastSquaresClassifier,
    LinearDiscriminantAnalysis,
    LinearRegression,
    LMSRegressor,
    LogisticRegression,
    MultinomialNB,
    NegativeBinomialRegression,
    OrdinalRegression,
    Perceptron,
    PoissonRegression,
    PolynomialBasis,
    ProbitRegression,
    QuadraticDiscriminantAnalysis,
    SigmoidalBasis,
    TweedieRegression,
)

N_ROWS = 120


# ---------------------------------------------------------------------- data
def _dyadic(values):
    """Multiples of 2^-10: ``x + s`` is exact for integer ``|s| <= 1e8``."""
    return np.round(values * 1024.0) / 1024.0


def _spreads(rng, d):
    """Column standard deviations 2^8..2^10 (see ``_equivariance_checks``)."""
    return 2.0 ** rng.integers(8, 11, size=d)


def make_data(kind, seed, d):
    """``(X, y)`` of one kind, dyadic X with spreads of 2^8 to 2^10."""
    rng = np.random.default_rng(seed)
    n = N_ROWS
    if kind == "regression":
        Z = rng.normal(size=(n, d))
        X = _dyadic(Z * _spreads(rng, d))
        w = rng.choice([-1.0, 1.0], size=d) * rng.uniform(0.5, 1.5, size=d)
        T = (Z @ w)[:, None] + [0.3, -2.0] + 0.5 * rng.normal(size=(n, 2))
        return X, T
    if kind in GLM_TARGETS:  # a GLM regressor's targets from log mu = 0.3 + 0.4 z^T w
        Z = rng.normal(size=(n, d))
        w = rng.choice([-1.0, 1.0], size=d) * rng.uniform(0.5, 1.5, size=d) / np.sqrt(d)
        mu = np.exp(0.3 + 0.4 * Z @ w)
        return _dyadic(Z * _spreads(rng, d)), GLM_TARGETS[kind](rng, mu)
    if kind == "counts":
        y = rng.permutation(np.arange(n) % 3)
        rates = rng.gamma(2.0, 2.0, size=(3, d))
        return rng.poisson(rates[y]).astype(np.float64), y
    k = {"binary": 2, "multiclass": 3}[kind]
    # Gaussian classes about 1 sd apart, every class > d rows; one label in ten
    # redrawn at random, so that no draw separates the classes (the MLE exists).
    y = rng.permutation(np.arange(n) % k)
    means = rng.normal(scale=0.6, size=(k, d))
    Z = means[y] + rng.normal(size=(n, d)) * rng.uniform(0.7, 1.4, size=(k, 1))[y]
    y = np.where(rng.random(n) < 0.1, rng.integers(k, size=n), y)
    return _dyadic(Z * _spreads(rng, d)), y


GLM_TARGETS = {
    "poisson": lambda rng, mu: rng.poisson(mu).astype(np.float64),
    # (alpha = 1: at alpha = 0.5 some draws of 120 rows showed none, alpha_ -> 0)
    "overdispersed": lambda rng, mu: rng.poisson(rng.gamma(1.0, mu)).astype(np.float64),
    "positive": lambda rng, mu: rng.gamma(4.0, mu / 4.0),
    "tweedie": lambda rng, mu: rng.poisson(mu) * rng.gamma(3.0, mu / 3.0),  # exact zeros
    "proportions": lambda rng, mu: rng.binomial(8, mu / (1.0 + mu)) / 8.0,
}


def check_glm_regression(ref, got, tf, X, Xt, y):
    """GLM regressors (alpha = 0): equivariant by definition, as the classifiers; the
    means, deviance, dispersion and log-likelihood unchanged."""
    chk.assert_linear_map(ref.coef_, ref.intercept_, got.coef_, got.intercept_, tf, X)
    # (an identity link's mean is the linear score b + x^T w: where it nears zero by
    # cancellation its error is relative to the scores' size, as assert_scores takes it)
    want = ref.predict(X)
    assert_allclose(got.predict(Xt), want, rtol=chk.PROB,
                    atol=chk.PROB * float(np.max(np.abs(want))), err_msg="predict")
    assert got.converged_
    chk.assert_cov_map(ref.covariance_, got.covariance_, tf, "covariance_")
    a, b = ref.summary(), got.summary()
    statistic = a.attrs["statistic"]
    chk.assert_slope_z(a[statistic], b[statistic], tf, "summary")
    for name in ("log_likelihood_", "deviance_", "scale_", "pearson_chi2_"):
        assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-9, err_msg=name)


def _ordinal_map(tf, d, K1):
    """``[beta, theta] -> [beta / c, theta + beta^T s]`` as a matrix."""
    T = np.zeros((d + K1, d + K1))
    T[:d, :d] = np.diag(1.0 / tf.c)
    T[d:, :d] = tf.s
    T[d:, d:] = np.eye(K1)
    return T


def check_bayes_ordinal(ref, got, tf, X, Xt, y):
    """BayesianOrdinalRegression, common scale with alpha' = alpha c^2: the prior (slopes,
    the first cut-point at the centre of the data, the log gaps) maps with the data, so
    the posterior's mode, mean and covariance map as OrdinalRegression's parameters, and
    the Laplace draws of the same seed give the same predictive probabilities."""
    d, K1 = tf.c.size, ref.cutpoints_.size
    T = _ordinal_map(tf, d, K1)
    for name in ("theta_map_", "posterior_mean_"):
        want, have = T @ getattr(ref, name), getattr(got, name)
        se = np.sqrt(np.diag(T @ ref.posterior_cov_ @ T.T))
        assert_allclose(have / se, want / se, rtol=0, atol=chk.COEF, err_msg=name)
    want = T @ ref.posterior_cov_ @ T.T
    se = np.sqrt(np.diag(want))
    assert_allclose(got.posterior_cov_ / np.outer(se, se), want / np.outer(se, se), rtol=0,
                    atol=chk.INFER, err_msg="posterior_cov_")
    chk.assert_probabilities(ref, got, X, Xt)


def check_ordinal(ref, got, tf, X, Xt, y):
    """OrdinalRegression (alpha = 0): equivariant by definition. ``beta' = beta / c`` and
    every cut-point moves as minus an intercept, ``theta' = theta + beta^T s``; the
    covariance of ``[beta, theta]`` maps by the same linear map."""
    for theta, theta_t in zip(ref.cutpoints_, got.cutpoints_):
        chk.assert_linear_map(ref.coef_, -theta, got.coef_, -theta_t, tf, X)
    chk.assert_probabilities(ref, got, X, Xt)
    assert got.converged_
    d, K1 = tf.c.size, ref.cutpoints_.size
    T = _ordinal_map(tf, d, K1)
    want = T @ ref.covariance_ @ T.T
    se = np.sqrt(np.diag(want))
    assert_allclose(np.sqrt(np.diag(got.covariance_)), se, rtol=chk.INFER)
    assert_allclose(got.covariance_ / np.outer(se, se), want / np.outer(se, se), rtol=0,
                    atol=chk.INFER)
    assert_allclose(got.summary()["z"][:d], ref.summary()["z"][:d], rtol=chk.INFER)
    assert_allclose(got.log_likelihood_, ref.log_likelihood_, rtol=1e-9)


def sparsify(X, seed):
    """About 40 % of the entries set to zero (for the sparse input cases)."""
    rng = np.random.default_rng(seed + 1)
    return X * (rng.random(X.shape) < 0.6)


# ---------------------------------------------------------------- transforms
def per_column(p):
    """Random columns scaled by 10^k (k in [-12, 12]) and shifted by up to 1e8."""
    which = np.asarray(p["which"])
    c = np.where(which, 10.0 ** np.asarray(p["k"], dtype=np.float64), 1.0)
    return Transform(c, np.where(which, np.asarray(p["s"], dtype=np.float64), 0.0))


def common_scale(p):
    """Every column scaled by the same 10^k; random columns shifted by up to 1e8."""
    tf = per_column(p)
    return Transform(np.full(tf.c.size, 10.0 ** p["k"][0]), tf.s)


def common_shift(p):
    """Every column scaled by the same 10^k and shifted by the same s."""
    d = len(p["k"])
    return Transform(np.full(d, 10.0 ** p["k"][0]), np.full(d, float(p["s"][0])))


def integer_scale(p):
    """Counts times the same integer 10^k, k in [0, 8] (exact in float64)."""
    d = len(p["k"])
    return Transform(np.full(d, 10.0 ** (abs(p["k"][0]) % 9)), np.zeros(d))


def scale_only(tf):
    """The sparse cases: the same scaling, no shift (it would fill the matrix in)."""
    return Transform(tf.c, np.zeros_like(tf.s))


# --------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    id: str
    make: Callable  # Transform -> estimator for data in the transformed units
    data: str
    transform: Callable  # hypothesis draw -> Transform
    check: Callable  # (ref, got, tf, X, Xt, y) -> None
    sparse: bool = False
    dask: bool = True
    allowed: tuple = field(default=())  # warnings the fit may give (others are errors)


def _fixed(est):
    return lambda tf: est


CASES = [
    # Equivariant by definition (maximum likelihood, no prior): per-column scale and
    # shift; identifiability, z-values and the slopes' standard errors unchanged.
    Case("logistic-binary", _fixed(LogisticRegression()), "binary", per_column,
         chk.check_glm, sparse=True),
    Case("logistic-softmax", _fixed(LogisticRegression()), "multiclass", per_column,
         chk.check_glm, sparse=True),
    Case("probit", _fixed(ProbitRegression()), "binary", per_column, chk.check_glm,
         sparse=True),
    Case("ordinal", _fixed(OrdinalRegression()), "multiclass", per_column, check_ordinal,
         sparse=True),
    Case("linear-regression", _fixed(LinearRegression()), "regression", per_column,
         chk.check_linear_regression),
    Case("bayes-ordinal-laplace", lambda tf: BayesianOrdinalRegression(
        alpha=0.1 * tf.c[0] ** 2, n_samples=100, random_state=0), "multiclass", common_scale,
         check_bayes_ordinal, sparse=True, dask=False),
    # The GLM regressors, in memory (dense and sparse) and on Dask; the negative
    # binomial's alpha estimate needs the rows in memory (Dask refuses it).
    Case("poisson", _fixed(PoissonRegression()), "poisson", per_column, check_glm_regression,
         sparse=True),
    Case("gamma", _fixed(GammaRegression()), "positive", per_column, check_glm_regression,
         sparse=True),
    Case("inverse-gaussian", _fixed(InverseGaussianRegression()), "positive", per_column,
         check_glm_regression),
    Case("tweedie", _fixed(TweedieRegression(1.5)), "tweedie", per_column,
         check_glm_regression),
    Case("binomial-proportions", _fixed(BinomialRegression("cloglog")), "proportions",
         per_column, check_glm_regression),
    Case("negative-binomial", _fixed(NegativeBinomialRegression()), "overdispersed",
         per_column, check_glm_regression, sparse=True),
    Case("glm-gaussian", _fixed(GLM("gaussian")), "positive", per_column,
         check_glm_regression),
    Case("bayes-decision", _fixed(BayesDecision(
        LogisticRegression(), priors=[0.2, 0.3, 0.5], cost=[[0, 1, 4], [2, 0, 1], [5, 1, 0]])),
        "multiclass", per_column, chk.check_bayes_decision, sparse=True),
    # Generative models: ML means and covariances transform with the columns;
    # reg_covar and var_smoothing are fractions of each feature's own variance.
    Case("gda-tied", _fixed(GaussianDiscriminantAnalysis("tied")), "multiclass", per_column,
         chk.check_gaussian("tied")),
    Case("gda-full", _fixed(GaussianDiscriminantAnalysis("full", reg_covar=1e-3)),
         "multiclass", per_column, chk.check_gaussian("full")),
    Case("gda-diag", _fixed(GaussianDiscriminantAnalysis("diag")), "binary", per_column,
         chk.check_gaussian("diag")),
    Case("lda", _fixed(LinearDiscriminantAnalysis()), "binary", per_column,
         chk.check_gaussian("tied")),
    Case("qda", _fixed(QuadraticDiscriminantAnalysis()), "multiclass", per_column,
         chk.check_gaussian("full")),
    Case("gaussian-nb", _fixed(GaussianNB()), "multiclass", per_column,
         chk.check_gaussian("diag")),
    Case("exponential-family-nb", _fixed(ExponentialFamilyNB()), "multiclass", per_column,
         chk.check_exponential_family_nb, dask=False),
    # "spherical" shares one variance lambda over all features: it mixes their
    # units, so only a common scaling (and any shifts) can leave it unchanged.
    Case("gda-spherical", _fixed(GaussianDiscriminantAnalysis("spherical")), "multiclass",
         common_scale, chk.check_gaussian("spherical")),
    Case("fisher-multiclass", _fixed(FisherDiscriminant()), "multiclass", per_column,
         chk.check_fisher, sparse=True),
    Case("fisher-binary", _fixed(FisherDiscriminant(priors=[0.3, 0.7])), "binary",
         per_column, chk.check_fisher, dask=False),
    Case("least-squares-classifier", _fixed(LeastSquaresClassifier()), "multiclass",
         per_column, chk.check_least_squares_classifier, sparse=True),
    # An isotropic prior alpha |w|^2 on the raw weights compares weights in
    # different units: scaling one column by c changes how strongly its weight is
    # shrunk relative to the others', so no per-column property can hold. Scaling
    # every column by c with alpha' = alpha c^2 (w' = w / c, so alpha'|w'|^2 =
    # alpha|w|^2) is exact, as are shifts (the intercept is not penalised); with
    # alpha=None the evidence finds alpha c^2 by itself.
    Case("bayes-linear-evidence", _fixed(BayesianLinearRegression()), "regression",
         common_scale, chk.check_bayesian_linear),
    Case("bayes-linear-fixed", lambda tf: BayesianLinearRegression(
        alpha=1e4 * tf.c[0] ** 2, beta=3.0), "regression", common_scale,
        chk.check_bayesian_linear, dask=False),
    Case("bayes-logistic-laplace", lambda tf: BayesianLogisticRegression(
        alpha=1e5 * tf.c[0] ** 2, intercept_alpha=0.0), "binary", common_scale,
        chk.check_bayesian_logistic, sparse=True),
    # (Where the features carry almost nothing, the evidence has no interior fixed
    # point and alpha_ ends at the search's bound, with a ConvergenceWarning for the
    # original and the transformed fit alike: the bound is unit-free too.)
    Case("bayes-logistic-evidence-softmax", _fixed(BayesianLogisticRegression(
        alpha=None, intercept_alpha=0.0)), "multiclass", common_scale,
        chk.check_bayesian_logistic, dask=False, allowed=(ConvergenceWarning,)),
    Case("bayes-logistic-variational", lambda tf: BayesianLogisticRegression(
        alpha=1e5 * tf.c[0] ** 2, intercept_alpha=0.0, inference="variational"), "binary",
        common_scale, chk.check_bayesian_logistic, dask=False),
    # MCMC with a fixed seed: the chain is the same up to rounding where the sampler
    # works in coordinates that transform with the data.
    Case("bayes-logistic-mcmc", lambda tf: BayesianLogisticRegression(
        alpha=1e5 * tf.c[0] ** 2, intercept_alpha=0.0, inference="mcmc", n_samples=100,
        n_chains=2, random_state=0, progress=False), "binary", common_scale,
        chk.check_bayesian_logistic, dask=False, allowed=(ConvergenceWarning,)),
    # Sequential learners: not equivariant as plain algorithms; problin runs them
    # on standardised columns and maps the weights back, so every epoch is.
    # (A fixed number of epochs on overlapping classes: ConvergenceWarning.)
    Case("perceptron-binary", _fixed(Perceptron(max_iter=8, random_state=0)), "binary",
         per_column, chk.check_perceptron, allowed=(ConvergenceWarning,)),
    Case("perceptron-multiclass", _fixed(Perceptron(max_iter=8, shuffle=False)),
         "multiclass", per_column, chk.check_perceptron, allowed=(ConvergenceWarning,)),
    Case("lms", _fixed(LMSRegressor(max_iter=4, tol=0.0, random_state=0)), "regression",
         per_column, chk.check_lms, allowed=(ConvergenceWarning,)),
    # Basis functions in front of least squares: the features are unit-free.
    Case("polynomial-basis", _fixed(make_pipeline(PolynomialBasis(3), LinearRegression())),
         "regression", per_column, chk.check_basis_pipeline),
    Case("gaussian-basis", _fixed(make_pipeline(GaussianBasis(n_centers=4),
                                                LinearRegression())),
         "regression", per_column, chk.check_basis_pipeline),
    Case("sigmoidal-basis", _fixed(make_pipeline(SigmoidalBasis(n_centers=3, spacing="quantile"),
                                                 LinearRegression())),
         "regression", per_column, chk.check_basis_pipeline),
    # Radial bumps exp(-|x - mu|^2 / 2 s^2) with one width mix the columns' units.
    Case("gaussian-basis-radial", _fixed(make_pipeline(GaussianBasis(n_centers=6, radial=True),
                                                       LinearRegression())),
         "regression", common_scale, chk.check_basis_pipeline, dask=False),
    # No units by definition. BernoulliNB sees only x > threshold: any positive
    # per-column scaling keeps presence at threshold 0; a common scale and shift
    # keep it when the threshold moves with them.
    Case("bernoulli-nb-scaled", _fixed(BernoulliNB(alpha=0.5)), "binary",
         lambda p: scale_only(per_column(p)), chk.check_bernoulli, sparse=True),
    Case("bernoulli-nb-threshold", lambda tf: BernoulliNB(
        binarize=float(tf.c[0] * (0.0 + tf.s[0]))), "multiclass", common_shift,
        chk.check_bernoulli),
    # MultinomialNB models counts: scaling columns differently changes what is
    # counted (no per-column property), and the posterior of c x is that of x
    # tempered by c. What holds: counts times an integer c with alpha times c
    # leave theta, the priors and every posterior of the original rows unchanged.
    Case("multinomial-nb", lambda tf: MultinomialNB(alpha=tf.c[0]), "counts", integer_scale,
         chk.check_multinomial, sparse=True),
]
