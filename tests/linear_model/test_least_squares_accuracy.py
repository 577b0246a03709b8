"""Least squares as accurate as QR (issue 13): the R-factor statistics, not the normal
equations, on designs whose Gram matrix squares a large condition number.

The polynomial designs are exactly representable, so the exact answers are known (all
coefficients 1), or computed in exact rational arithmetic (``fractions``).
"""
import warnings
from fractions import Fraction

import numpy as np
import pytest

from problin import (
    BayesianLinearRegression,
    CollinearityWarning,
    ConvergenceWarning,
    LeastSquaresClassifier,
    LinearRegression,
    NumericalWarning,
    ProblinWarning,
)
from problin._core.moments import least_squares

X_POLY = np.column_stack([np.arange(21.0) ** p for p in range(1, 6)])  # x, ..., x^5
COEFS = {"ones": np.ones(6), "tenths": 0.1 ** np.arange(6)}  # [intercept, x, ..., x^5]


def poly_targets(name):
    c = COEFS[name]
    return c[0] + X_POLY @ c[1:], c


def digits(got, exact):
    """Correct significant digits of the worst entry."""
    rel = np.abs(np.asarray(got) - exact) / np.abs(exact)
    return float(-np.log10(max(float(np.max(rel)), 1e-17)))


def chunkings(n, seeds=range(6)):
    """Row splits: halves, single rows, and random cuts."""
    yield [np.arange(n // 2), np.arange(n // 2, n)]
    yield [np.array([i]) for i in range(n)]
    for seed in seeds:
        rng = np.random.default_rng(seed)
        cuts = np.sort(rng.choice(np.arange(1, n), size=rng.integers(1, n // 2), replace=False))
        yield np.split(np.arange(n), cuts)


def exact_least_squares(X, T, alpha=Fraction(0)):
    """Intercept and coefficients of (ridge) least squares in exact rational arithmetic:
    the normal equations of ``[1, X]`` (penalty ``alpha`` on all but the intercept),
    solved by Gauss-Jordan elimination on Fractions."""
    rows = [[Fraction(1)] + [Fraction(float(v)) for v in x] for x in X]
    p = len(rows[0])
    T = np.asarray(T, dtype=np.float64).reshape(len(rows), -1)
    out = []
    for t in T.T:
        tk = [Fraction(float(v)) for v in t]
        A = [[sum(r[i] * r[j] for r in rows) + (alpha if i == j and i > 0 else 0)
              for j in range(p)] + [sum(r[i] * v for r, v in zip(rows, tk))] for i in range(p)]
        for i in range(p):
            piv = next(j for j in range(i, p) if A[j][i] != 0)
            A[i], A[piv] = A[piv], A[i]
            A[i] = [v / A[i][i] for v in A[i]]
            for j in range(p):
                if j != i and A[j][i] != 0:
                    f = A[j][i]
                    A[j] = [a - f * b for a, b in zip(A[j], A[i])]
        out.append([float(A[i][p]) for i in range(p)])
    return np.array(out).T  # (1 + D) x K


@pytest.mark.parametrize("name", ["ones", "tenths"])
def test_polynomial_fit_has_nine_digits(name):
    y, exact = poly_targets(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProblinWarning)  # well within QR's reach: no warning
        model = LinearRegression().fit(X_POLY, y)
    assert digits(np.r_[model.intercept_, model.coef_], exact) >= 9.0
    # as lstsq on the same design (the reference the issue measured)
    design = np.column_stack([np.ones(len(y)), X_POLY])
    assert digits(np.linalg.lstsq(design, y, rcond=None)[0], exact) >= 9.0
    # the residual is rounding: read from Q^T t, not Stt - 2 w.C + w.Gw
    assert model.noise_precision_ >= len(y) / (np.finfo(float).eps * np.sum((y - y.mean()) ** 2))


@pytest.mark.parametrize("name", ["ones", "tenths"])
def test_polynomial_partial_fit_in_chunks_has_nine_digits(name):
    y, exact = poly_targets(name)
    for chunks in chunkings(len(y)):
        model = LinearRegression()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ProblinWarning)  # early batches are rank-deficient
            for rows in chunks:
                model.partial_fit(X_POLY[rows], y[rows])
        assert digits(np.r_[model.intercept_, model.coef_], exact) >= 9.0, len(chunks)


def test_polynomial_without_intercept_and_weights():
    y, exact = poly_targets("ones")
    design = np.column_stack([np.ones(len(y)), X_POLY])
    model = LinearRegression(fit_intercept=False).fit(design, y)
    assert digits(model.coef_, exact) >= 9.0
    w = np.random.default_rng(0).integers(1, 4, size=len(y)).astype(float)
    weighted = LinearRegression().fit(X_POLY, y, sample_weight=w)
    assert digits(np.r_[weighted.intercept_, weighted.coef_], exact) >= 9.0


def test_polynomial_ridge_matches_exact_arithmetic():
    y, _ = poly_targets("tenths")
    want = exact_least_squares(X_POLY, y, alpha=Fraction(1, 1000))[:, 0]
    model = LinearRegression(alpha=1e-3).fit(X_POLY, y)
    assert digits(np.r_[model.intercept_, model.coef_], want) >= 9.0


@pytest.mark.parametrize("power", [-3, 4, 12, 20, 40, 100, 300])
def test_ridge_keeps_its_digits_at_any_penalty(power):
    """Ridge by the QR of ``[R; sqrt(alpha) I]`` formed the tiny coefficients of a large
    penalty as differences of terms of the targets' size: 7 digits at alpha = 1e20 |X|^2,
    none beyond ~1e32 |X|^2 (the coefficients came out exactly 0). The SVD's filter
    factors keep them to the digits of the well-posed problem, against exact arithmetic.
    (Random columns: the polynomial design's 1e6-fold column spread would make the exact
    normal equations of a huge penalty a test of Fraction sizes.)"""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 3)) * [1.0, 10.0, 0.1]
    y = X @ [1.0, -2.0, 3.0] + 0.5 * rng.normal(size=40) + 4.0
    alpha = 10.0 ** power
    want = exact_least_squares(X, y, alpha=Fraction(alpha))[:, 0]
    model = LinearRegression(alpha=alpha).fit(X, y)
    assert digits(np.r_[model.intercept_, model.coef_], want) >= 13.0


def test_least_squares_classifier_matches_exact_arithmetic():
    """1-of-K targets on the polynomial design: the same kernel, the same digits."""
    labels = np.array([0, 0, 1, 2, 1, 0, 2, 2, 1, 0, 0, 1, 2, 2, 0, 1, 1, 2, 0, 1, 2])
    T = (labels[:, None] == np.arange(3)).astype(float)
    want = exact_least_squares(X_POLY, T)
    model = LeastSquaresClassifier().fit(X_POLY, labels)
    assert digits(np.column_stack([model.intercept_, model.coef_]), want.T) >= 9.0
    design = np.column_stack([np.ones(len(labels)), X_POLY])
    assert digits(np.linalg.lstsq(design, T, rcond=None)[0], want) >= 9.0  # lstsq reaches 9


def test_ill_conditioned_design_warns_with_its_condition_number():
    """Two columns equal to 1e-11: about 5 digits at best, said with the condition number."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    X = np.column_stack([x, x + 1e-11 * rng.normal(size=200), rng.normal(size=200)])
    t = X @ [1.0, 2.0, 3.0] + 0.1 * rng.normal(size=200)
    with pytest.warns(NumericalWarning, match=r"condition number (\d\.\d+e\+1[01])") as record:
        LinearRegression().fit(X, t)
    condition = float(str(record[0].message).split("condition number ")[1].split()[0])
    assert 1e10 < condition < 1e12
    with warnings.catch_warnings():  # the noise-free polynomial needs no warning
        warnings.simplefilter("error", NumericalWarning)
        LinearRegression().fit(X_POLY, poly_targets("ones")[0])


@pytest.mark.parametrize("scale, shift", [(1e8, 0.0), (1e-8, 0.0), (1.0, 1e6), (1e8, 1e14),
                                          (1e-8, 1e-2)])
def test_coefficients_transform_exactly_with_units_and_offsets(scale, shift):
    """Column j scaled by c (1e+-8) and shifted by 1e6 of its standard deviations:
    ``coef_j / c``, the others unchanged, the intercept absorbing the shift -- to 1e-8
    relative. (A shift of 1e6 in absolute units would bury a column scaled by 1e-8
    below the resolution of its own values.)"""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 4)) @ rng.normal(size=(4, 4))
    t = X @ [1.0, -2.0, 0.5, 3.0] + 2.0 + rng.normal(size=500)
    base = LinearRegression().fit(X, t)
    moved = X.copy()
    moved[:, 1] = scale * X[:, 1] + shift
    model = LinearRegression().fit(moved, t)
    want = base.coef_.copy()
    want[1] /= scale
    np.testing.assert_allclose(model.coef_, want, rtol=1e-8)
    assert model.intercept_ == pytest.approx(base.intercept_ - want[1] * shift, rel=1e-8)
    want = base.predict(X)  # (the moved column's values carry rounding of 1e6 sd's)
    np.testing.assert_allclose(model.predict(moved), want, rtol=1e-8,
                               atol=1e-8 * np.max(np.abs(want)))


@pytest.mark.parametrize("shift", [0.0, 1e8])
def test_a_far_column_does_not_cost_other_columns_their_rank(shift):
    """Two columns 1e-7 apart (condition ~1e7, full rank) stay resolved when a third,
    unrelated column is moved far from zero: its rounding grows along its own direction
    only. The coefficients are those of exact arithmetic on the stored data, not the
    minimum-norm answer of a rank-2 fit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X[:, 2] = X[:, 1] + 1e-7 * rng.normal(size=50)
    t = 1.0 + X @ [1.0, 2.0, 3.0] + 0.1 * rng.normal(size=50)
    X[:, 0] += shift
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)  # (condition 2e7: warned, rightly)
        warnings.simplefilter("error", CollinearityWarning)
        model = LinearRegression().fit(X, t)
    exact = exact_least_squares(X, t)[:, 0]
    assert model.rank_ == 3
    assert digits(model.coef_, exact[1:]) > 7.5
    assert abs(model.coef_[1]) > 1e4  # (the minimum-norm answer is ~2.5)
    # The Bayesian posterior mean likewise: with alpha, beta fixed it is ridge with
    # penalty alpha / beta (flat intercept); the near-null direction is shrunk, not lost.
    bayes = BayesianLinearRegression(alpha=1e-6, beta=100.0).fit(X, t)
    exact = exact_least_squares(X, t, alpha=Fraction(1e-6) / 100)[:, 0]
    assert digits(bayes.coef_, exact[1:]) > 7.5
    assert abs(bayes.coef_[1] - bayes.coef_[2]) > 1.0  # (zeroed, it would be ~2.5 each)


def test_bayesian_partial_fit_in_chunks_equals_fit():
    """The evidence iterations from the chunked statistics reach the same fixed point."""
    rng = np.random.default_rng(5)
    x = np.linspace(0.0, 20.0, 400)
    X = np.column_stack([x ** p for p in range(1, 6)])
    t = X @ (0.1 ** np.arange(1, 6)) + 1.0 + 0.1 * rng.normal(size=400)
    whole = BayesianLinearRegression().fit(X, t)
    for chunks in chunkings(400, seeds=range(3)):
        model = BayesianLinearRegression()
        with warnings.catch_warnings():  # the evidence of 3 rows may have no maximum
            warnings.simplefilter("ignore", ConvergenceWarning)
            for rows in chunks:
                model.partial_fit(X[rows], t[rows])
        for name in ("coef_", "intercept_", "alpha_", "beta_", "log_evidence_"):
            np.testing.assert_allclose(getattr(model, name), getattr(whole, name), rtol=1e-10,
                                       err_msg=name)
        np.testing.assert_allclose(model.predict(X), whole.predict(X), rtol=1e-10)


def test_only_ill_conditioned_data_read_twice(monkeypatch):
    """Well-conditioned data keep the one-syrk-per-block Gram pass (its Cholesky factor
    loses nothing); the polynomial design is factored by Householder QR instead."""
    calls = []
    householder = least_squares._householder
    monkeypatch.setattr(least_squares, "_householder",
                        lambda *args: calls.append(1) or householder(*args))
    rng = np.random.default_rng(6)
    X = rng.normal(size=(5000, 6))
    LinearRegression().fit(X, X @ np.arange(6.0) + rng.normal(size=5000))
    assert not calls
    LinearRegression().fit(X_POLY, poly_targets("ones")[0])
    assert calls


@pytest.mark.parametrize("far", [False, True], ids=["gram", "householder"])
def test_inexact_constants_are_constant_columns(far):
    """A column of 0.1 is centred to rounding, not to zero: it is recognised as constant
    (zero coefficient, rank reduced) on either path, and a constant target keeps a
    finite noise precision (no overflow)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 3))
    if far:  # ill-conditioned: the rows are factored by Householder QR
        X[:, 2] = X[:, 0] + 1e-6 * X[:, 2]
    X[:, 1] = 0.1
    t = X @ [1.0, 5.0, -1.0] + 0.1 * rng.normal(size=300)
    with pytest.warns(ProblinWarning, match="rank 2 < 3"):
        model = LinearRegression().fit(X, t)
    assert model.coef_[1] == 0.0 and model.rank_ == 2
    assert BayesianLinearRegression().fit(X, t).coef_[1] == 0.0
    flat = LinearRegression().fit(X[:, [0]], np.full(300, 0.1))
    assert np.isfinite(flat.noise_precision_) and flat.coef_[0] == 0.0


@pytest.mark.parametrize("q", [1.5, 3.0])
def test_q_norm_fit_is_exact_whatever_the_units_of_y(q):
    """The q-norm solver stopped by tests with floors of 1 (in y's units): y * 1e-8 (with
    alpha scaled to the same problem) stopped after 3 iterations, a coefficient 3.2 off
    relative, silently; and MM's linear convergence left a shrunk coefficient 1.5e-5 off.
    Both now meet Newton's answer on the centred problem to ~1e-10."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3)) * [1.0, 1.0, 0.01]
    y = X @ [1.0, -0.2, 40.0] + rng.normal(size=100)
    Xc, yc = X - X.mean(0), y - y.mean()
    G, c, alpha = Xc.T @ Xc, Xc.T @ yc, 20.0

    def newton(w):
        for _ in range(60):
            a = np.abs(w)
            g = G @ w - c + 0.5 * alpha * q * np.sign(w) * a ** (q - 1)
            H = G + np.diag(0.5 * alpha * q * (q - 1) * a ** (q - 2))
            w = w - np.linalg.solve(H, g)
        return w

    fit = LinearRegression(alpha=alpha, q=q).fit(X, y)
    exact = newton(fit.coef_.copy())
    np.testing.assert_allclose(fit.coef_, exact, rtol=1e-9)
    small = LinearRegression(alpha=alpha * 1e-8 ** (2 - q), q=q).fit(X, y * 1e-8)
    np.testing.assert_allclose(small.coef_ / 1e-8, exact, rtol=1e-9)
