"""The BFGS opening of the Newton engine (solvers.secant) and the start point's
Kronecker Hessian it starts from (model.start_curvature)."""
import numpy as np
import pytest

from problin._core.model.design import Design
from problin._core.model.design_small import SmallDenseDesign
from problin._core.model.families import CategoricalSoftmax
from problin._core.model.objective_softmax import SoftmaxObjective
from problin._core.model.prior import PriorPrecision
from problin._core.solvers.newton import newton
from problin._core.solvers.secant import _bfgs_update, secant_opening


def _softmax_problem(kind=SmallDenseDesign, *, n=600, d=4, K=4, weighted=False, alpha=0.0,
                     intercept=True, seed=0):
    rng = np.random.default_rng(seed)
    units = np.array([1.0, 10.0, 0.1, 3.0])[:d]
    X = rng.standard_normal((n, d)) * units + 2.0
    W = rng.normal(0.0, 0.8, (d, K))
    logits = ((X - 2.0) / units) @ W
    t = np.array([rng.choice(K, p=np.exp(r - r.max()) / np.exp(r - r.max()).sum())
                  for r in logits])
    sw = rng.uniform(0.2, 3.0, n) if weighted else None
    design = kind.standardised(X, intercept, sample_weight=sw)
    family = CategoricalSoftmax(K, contrast=alpha == 0)
    M, p = family.n_free, design.n_params
    prior = None
    if alpha:
        diag = np.full(M * p, alpha)
        prior = PriorPrecision(diag)
    objective = SoftmaxObjective(design, family, t, sw, prior)
    theta0 = np.zeros((M, p))
    if intercept:
        counts = np.bincount(t, weights=sw, minlength=K)
        log_freq = np.log(counts)
        theta0[:, 0] = log_freq[1:] - log_freq[0] if family.contrast else log_freq - log_freq.mean()
    return objective, theta0.ravel()


@pytest.mark.parametrize("kind", [SmallDenseDesign, Design])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("alpha", [0.0, 0.5])
@pytest.mark.parametrize("intercept", [True, False])
def test_start_hessian_is_the_exact_hessian(kind, weighted, alpha, intercept):
    objective, theta0 = _softmax_problem(kind, weighted=weighted, alpha=alpha,
                                         intercept=intercept)
    assert objective.shared_curvature(theta0)
    H_pass = objective.value_grad_hess(theta0, objective.linear_predictor(theta0))[2]
    H_start = objective.shared_hessian(theta0)
    np.testing.assert_allclose(H_start, H_pass, rtol=1e-12, atol=1e-12 * np.abs(H_pass).max())


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("intercept", [True, False])
def test_start_inverse_is_the_kronecker_inverse(weighted, intercept):
    # C^-1 (x) G^-1 from the two small factors: the inverse of the whole start Hessian.
    objective, theta0 = _softmax_problem(weighted=weighted, intercept=intercept)
    H = objective.shared_hessian(theta0)
    B = objective.shared_inverse(theta0)
    np.testing.assert_allclose(B @ H, np.eye(H.shape[0]), atol=1e-12)
    np.testing.assert_array_equal(B, B.T)


def test_start_inverse_defers_to_the_factorisation():
    # A prior breaks the Kronecker structure; a column collinear with others leaves the
    # Gram singular: no inverse offered (the opening factors the whole, or hands over
    # to the exact phase's data-span solve).
    objective, theta0 = _softmax_problem(alpha=0.5)
    assert objective.shared_inverse(theta0) is None
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    X = np.column_stack([X, X[:, 0] - 2.0 * X[:, 1]])
    design = SmallDenseDesign.standardised(X, True)
    t = rng.integers(0, 3, 200)
    objective = SoftmaxObjective(design, CategoricalSoftmax(3), t)
    theta0 = np.zeros(2 * design.n_params)
    assert objective.shared_inverse(theta0) is None
    result = newton(objective, theta0, tol=1e-10)  # the opening's fallback still fits
    assert result.converged and result.rank_deficient


def test_start_curvature_needs_zero_slopes():
    objective, theta0 = _softmax_problem()
    theta = theta0.copy()
    theta[1] = 1e-300  # any slope at all: rows differ
    assert not objective.shared_curvature(theta)


def test_bfgs_update_satisfies_the_secant_equation():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((6, 6))
    B = A @ A.T + 6 * np.eye(6)
    s, y = rng.standard_normal(6), rng.standard_normal(6)
    y += 3 * s  # y^T s > 0
    B = np.asfortranarray(B)
    B_new = _bfgs_update(B.copy(order="F"), s, y)
    # The estimate is the upper triangle (what BLAS's symmetric routines read).
    B_new = np.triu(B_new) + np.triu(B_new, 1).T
    np.testing.assert_allclose(B_new @ y, s, rtol=1e-12)  # the inverse maps y to s
    # The same update in full: (I - r s y^T) B (I - r y s^T) + r s s^T.
    r = 1.0 / (s @ y)
    V = np.eye(6) - r * np.outer(s, y)
    np.testing.assert_allclose(B_new, V @ B @ V.T + r * np.outer(s, s), rtol=1e-12)
    assert np.all(np.linalg.eigvalsh(B_new) > 0)
    # Fortran order: updated in place, no copy.
    C = B.copy(order="F")
    assert _bfgs_update(C, s, y) is C
    # no curvature along s (y^T s <= 0): the estimate stays as it is
    assert _bfgs_update(B, s, -s) is B


@pytest.mark.parametrize("weighted", [False, True])
def test_opening_ends_where_newton_ends(weighted):
    # The opening changes the path, never the answer: the same optimum as the
    # exact-Hessian engine from a start where no Kronecker Hessian is offered
    # (a tiny slope), to the tolerance of the convergence test.
    objective, theta0 = _softmax_problem(weighted=weighted)
    opened = newton(objective, theta0, tol=1e-10)
    start = theta0.copy()
    start[1] = 1e-9
    plain = newton(objective, start, tol=1e-10)
    assert opened.converged and plain.converged
    np.testing.assert_allclose(opened.value, plain.value, rtol=1e-13)
    np.testing.assert_allclose(opened.theta, plain.theta, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(opened.hessian, plain.hessian, rtol=1e-6,
                               atol=1e-9 * np.abs(plain.hessian).max())
    # the Hessian returned is the one at the answer
    H = objective.value_grad_hess(opened.theta, objective.linear_predictor(opened.theta))[2]
    np.testing.assert_allclose(opened.hessian, H, rtol=1e-6, atol=1e-9 * np.abs(H).max())


def test_opening_hands_over_with_the_exact_hessian():
    objective, theta0 = _softmax_problem()
    opening = secant_opening(objective, theta0, max_steps=30)
    assert 1 <= opening.n_steps < 30
    assert np.all(np.diff(opening.history) < 0)  # every step decreased f
    f, g, H = objective.value_grad_hess(opening.theta, objective.linear_predictor(opening.theta))
    np.testing.assert_allclose(opening.H, H, rtol=1e-13, atol=1e-13 * np.abs(H).max())
    np.testing.assert_allclose(opening.g, g, rtol=1e-12, atol=1e-12 * np.abs(g).max())
    assert opening.f == pytest.approx(f, rel=1e-14)


def test_opening_with_a_singular_start_hands_over_at_once():
    # A duplicated column: the start Hessian is singular and the exact phase's
    # data-span solve takes over from the start point.
    objective, theta0 = _softmax_problem()
    X = np.asarray(objective.design.X)
    Xdup = np.column_stack([X, X[:, 0]])
    design = SmallDenseDesign.standardised(Xdup, True)
    objective = SoftmaxObjective(design, objective.family, objective.t)
    p = design.n_params
    theta0 = np.zeros(objective.n_blocks * p)
    opening = secant_opening(objective, theta0, max_steps=30)
    assert opening.n_steps == 0
    result = newton(objective, theta0)
    assert result.converged and result.rank_deficient


def test_opening_respects_max_iter():
    objective, theta0 = _softmax_problem()
    result = newton(objective, theta0, max_iter=3)
    assert result.n_iter <= 3 and not result.converged


def test_float32_fit_from_the_start_takes_its_kronecker_hessian(monkeypatch):
    """A warm start (float32 Newton, no opening) at a shared-curvature point starts from
    the exact Kronecker Hessian, not a pass, and reaches the same point as the fit that
    computes its first Hessian from the rows."""
    objective, theta0 = _softmax_problem(Design, n=3000)
    grams = []
    original = Design.softmax_gram

    def counted(self, *args, **kwargs):
        grams.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Design, "softmax_gram", counted)
    warm = newton(objective, theta0, tol=1e-9, final_hessian=False, single=True)
    start = theta0.copy()
    start[1] = 1e-12  # no shared curvature: the first Hessian from the rows
    n_shared = len(grams)
    grams.clear()
    plain = newton(objective, start, tol=1e-9, final_hessian=False, single=True)
    assert warm.converged and plain.converged
    assert n_shared == len(grams) - 1  # one Hessian pass fewer
    np.testing.assert_allclose(warm.value, plain.value, rtol=1e-12)
    np.testing.assert_allclose(warm.theta, plain.theta, rtol=1e-5, atol=1e-6)
