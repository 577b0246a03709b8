"""The Newton engine's path for a penalty of the information (Firth's) with a row
sketch: full float32 Newton steps after the sketch's warm start, and the answer at the
first point whose exact score passes Fisher scoring's test."""
import numpy as np
from scipy import special

from problin._core.model.design import Design
from problin._core.model.families import BernoulliLogit
from problin._core.model.objective import GLMObjective
from problin._core.model.penalty_firth import JEFFREYS
from problin._core.solvers.newton import newton


def _firth_by_qr(Z, y, iterations=40):
    """Heinze & Schemper's (2002) modified score by Fisher scoring, the leverages from
    a QR factor of the weighted design (an independent float64 reference)."""
    theta = np.zeros(Z.shape[1])
    for _ in range(iterations):
        mu = special.expit(Z @ theta)
        w = mu * (1.0 - mu)
        Q = np.linalg.qr(np.sqrt(w)[:, None] * Z)[0]
        h = np.einsum("ij,ij->i", Q, Q)
        step = np.linalg.solve(Z.T @ (w[:, None] * Z), Z.T @ (y - mu + h * (0.5 - mu)))
        theta = theta + step
        if np.abs(step).max() < 1e-14:
            break
    return theta


def _firth_objective(X, y):
    design = Design(X, True)
    family = BernoulliLogit()
    return GLMObjective(design, family, y, penalty=JEFFREYS.bind(design, family, y, None, None))


def test_sketched_firth_newton_equals_fisher_scoring_reference():
    rng = np.random.default_rng(3)
    n, d = 6000, 5
    X = rng.normal(size=(n, d)) * np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    eta = -2.5 + X @ np.array([0.8, -0.4, 1.5, 0.0, 0.2])  # rare events: Firth shifts
    y = (rng.random(n) < special.expit(eta)).astype(float)
    sketch = np.sort(rng.choice(n, size=600, replace=False))
    objective = _firth_objective(X, y)
    rows, passes = objective.penalty.rows, []
    information = rows.information
    rows.information = lambda theta: passes.append(1) or information(theta)
    sketched = newton(objective, np.zeros(d + 1), sketch=sketch)
    # every step's pass formed the Gram the penalty read: no information pass of its own
    assert passes == []
    plain = newton(_firth_objective(X, y), np.zeros(d + 1))  # (no sketch: unchanged path)
    assert sketched.converged and plain.converged
    Z = np.column_stack((np.ones(n), X))
    ref = _firth_by_qr(Z, y)
    np.testing.assert_allclose(sketched.theta, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sketched.theta, plain.theta, rtol=0, atol=1e-9)
    # Newton's decrement of the reference's penalised score at the answer: Fisher
    # scoring's test, lambda^2 / 2 <= tol^2 (tol = 1e-8), with the score's own rounding
    mu = special.expit(Z @ sketched.theta)
    w = mu * (1.0 - mu)
    Q = np.linalg.qr(np.sqrt(w)[:, None] * Z)[0]
    score = Z.T @ (y - mu + np.einsum("ij,ij->i", Q, Q) * (0.5 - mu))
    assert score @ np.linalg.solve(Z.T @ (w[:, None] * Z), score) / 2 < 1e-15
    # the Hessian returned is the double one at the answer (with the held-leverage
    # curvature: logistf's covariance), as on the unsketched path
    np.testing.assert_allclose(sketched.hessian, plain.hessian, rtol=1e-7)
