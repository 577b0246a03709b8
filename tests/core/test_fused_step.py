"""The fused Newton step (``advance``): one pass over X gives what separate passes give.

``GLMObjective.advance`` forms ``eta + X d``, the row derivatives there, the
gradient and (optionally) the Hessian while each block of X is in cache; the
engine tries the full step through it and falls back to backtracking. Both
must be invisible in the results.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from problin._core.labels import encode_classes
from problin._core.model.design import Design
from problin._core.model.families import BernoulliLogit, BernoulliProbit, largest_change
from problin._core.model.objective import GLMObjective, PriorPrecision
from problin._core.solvers.steps import evaluate, take_step


def _problem(family, sparse=False, n=20_000, d=7, seed=0, prior=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if sparse:
        X[rng.random((n, d)) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    y = (rng.random(n) < 0.4).astype(float)
    sw = rng.uniform(0.5, 2.0, n)
    P = PriorPrecision(np.full(d + 1, 0.7)) if prior else None
    return GLMObjective(Design(X, True, rows=1000), family, y, sw, P), rng


@pytest.mark.parametrize("family", [BernoulliLogit(), BernoulliProbit()], ids=["logit", "probit"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("gram", [None, "single", "double"])
def test_advance_equals_separate_passes(family, sparse, gram):
    objective, rng = _problem(family, sparse, prior=True)
    theta = rng.normal(0.0, 0.2, 8)
    d = rng.normal(0.0, 0.05, 8)
    eta = objective.linear_predictor(theta)
    trial = objective.advance(theta, eta, d, gram)
    eta_new, f, g, H = trial.eta, trial.f, trial.grad, trial.hess

    reference, _ = _problem(family, sparse, prior=True)
    eta_ref = reference.linear_predictor(theta + d)
    assert_allclose(eta_new, eta_ref, rtol=1e-12, atol=1e-14)
    if gram is None:
        f_ref, g_ref = reference.value_grad(theta + d, eta_ref)
        assert H is None
    else:
        f_ref, g_ref, H_ref = reference.value_grad_hess(theta + d, eta_ref,
                                                        single=gram == "single")
        rtol = 1e-6 if gram == "single" else 1e-12
        assert_allclose(H, H_ref, rtol=rtol, atol=rtol * np.abs(H_ref).max())
        assert_allclose(H, H.T, rtol=0, atol=0)
    assert f == pytest.approx(f_ref, rel=1e-13)
    assert_allclose(g, g_ref, rtol=1e-11, atol=1e-11 * np.abs(g_ref).max())
    # the derivatives at the new point are cached for the next value/gradient
    assert objective.value(theta + d, eta_new) == f


def test_evaluate_from_zero_equals_forward_pass():
    objective, rng = _problem(BernoulliLogit())
    theta = rng.normal(0.0, 0.3, 8)
    point = evaluate(objective, theta, "double")
    f, g, H = point.f, point.grad, point.hess
    reference, _ = _problem(BernoulliLogit())
    f_ref, g_ref, H_ref = reference.value_grad_hess(theta, reference.linear_predictor(theta))
    assert f == pytest.approx(f_ref, rel=1e-13)
    assert_allclose(g, g_ref, rtol=1e-11, atol=1e-11 * np.abs(g_ref).max())
    assert_allclose(H, H_ref, rtol=1e-12, atol=1e-12 * np.abs(H_ref).max())


def test_rejected_full_step_backtracks_to_the_armijo_point():
    objective, rng = _problem(BernoulliLogit())
    theta = np.zeros(8)
    point = evaluate(objective, theta)
    eta, f, g = point.eta, point.f, point.grad
    d = -40.0 * g / np.linalg.norm(g)  # far too long: the full step increases f
    step = take_step(objective, theta, eta, f, float(g @ d), d, "double")
    t, theta_new, eta_new, f_new, g_new, H_new, Xd = (
        step.t, step.theta, step.eta, step.f, step.grad, step.hess, step.Xd)
    assert t is not None and t < 1.0
    assert f_new < f and g_new is None and H_new is None  # the caller evaluates them
    assert_allclose(Xd, objective.linear_predictor(d), rtol=1e-10, atol=1e-12)
    assert_allclose(eta_new, objective.linear_predictor(theta_new), rtol=1e-10, atol=1e-12)
    assert f_new == pytest.approx(objective.value(theta_new, objective.linear_predictor(
        theta_new)), rel=1e-12)


def test_accepted_full_step_brings_gradient_and_hessian():
    objective, rng = _problem(BernoulliProbit())
    theta = np.zeros(8)
    point = evaluate(objective, theta, "double")
    eta, f, g, H = point.eta, point.f, point.grad, point.hess
    d = -np.linalg.solve(H, g)
    step = take_step(objective, theta, eta, f, float(g @ d), d, "single")
    t, theta_new, g_new, H_new, Xd = step.t, step.theta, step.grad, step.hess, step.Xd
    assert t == 1.0 and Xd is None and H_new.shape == (8, 8)
    assert_allclose(theta_new, theta + d)
    assert np.linalg.norm(g_new) < 0.1 * np.linalg.norm(g)


def test_integer_label_codes_never_alias_the_callers_array():
    y = np.array([0, 1, 1, 0, 1], dtype=np.intp)
    classes, t = encode_classes(y)
    assert not np.shares_memory(t, y)
    t[:] = 7
    assert y.tolist() == [0, 1, 1, 0, 1]
    classes, t = encode_classes(np.array([2.0, 4.0, 2.0]))
    assert classes.tolist() == [2.0, 4.0] and t.tolist() == [0, 1, 0]
    classes, t = encode_classes(np.array([5, 3, 9, 3]))
    assert classes.tolist() == [3, 5, 9] and t.tolist() == [1, 0, 2, 0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.uint8, np.int64, bool])
def test_two_labels_are_encoded_as_the_counting_path_encodes_them(dtype):
    from problin._core.labels import _integer_labels
    rng = np.random.default_rng(5)
    values = np.array([0, 1] if dtype is bool else [3, 7], dtype=dtype)
    y = values[(rng.random(200) < 0.3).astype(int)]
    classes, t = encode_classes(y)
    assert classes.dtype == y.dtype and classes.tolist() == values.tolist()
    assert t.dtype == np.intp and (classes[t] == y).all()
    as_int = _integer_labels(y)  # the general counting path's codes
    assert_allclose(t, (as_int - as_int.min()) // (as_int.max() - as_int.min()))
    t[:] = 0  # the codes are never the caller's array
    assert (classes[(y == values[1]).astype(int)] == y).all()


def test_two_labels_edge_cases_take_the_general_path():
    classes, t = encode_classes(np.array([-0.0, 1.0, 0.0]))
    assert classes.tolist() == [0.0, 1.0] and not np.signbit(classes[0])
    assert t.tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="continuous"):
        encode_classes(np.array([0.5, 1.5, 0.5]))
    with pytest.raises(ValueError, match="only one class"):
        encode_classes(np.array([1.0, 1.0]))
    classes, t = encode_classes(np.array([0, 2, 1, 2]))  # three labels: counting path
    assert classes.tolist() == [0, 1, 2] and t.tolist() == [0, 2, 1, 2]


def test_largest_change_by_chunks_is_the_exact_maximum():
    rng = np.random.default_rng(3)
    for shape in [(0,), (5,), (100_003,), (70_001, 3), (5_000, 9), (1_000, 40)]:
        old = rng.normal(size=shape)
        new = old + rng.normal(scale=1e-6, size=shape)
        if new.size:
            new.flat[rng.integers(new.size)] += 0.5  # one row moves far
        expected = float(np.abs(new - old).max()) if new.size else 0.0
        assert largest_change(old, new) == expected
    for where in (0, 39_999):  # a NaN anywhere is the answer, never hidden by a chunk
        new = np.zeros(40_000)
        new[where] = np.nan
        assert np.isnan(largest_change(np.zeros(40_000), new))
