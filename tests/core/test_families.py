"""Bernoulli logit / probit families: loss, derivatives in eta, log-probabilities."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import log_loss

from problin._core.model.families import FAMILIES, BernoulliLogit, BernoulliProbit

FAMILY_LIST = [BernoulliLogit(), BernoulliProbit()]
IDS = ["logit", "probit"]

# Linear predictors for finite differences: moderately large values included.
ETA_GRID = np.r_[-30.0, -20.0, -12.5, -7.3, -3.0, -1.0, -0.25, 0.0, 0.4, 1.7, 5.0, 9.9, 15.0,
                 22.0, 30.0]


def _row_loss(family, y, eta, w=None):
    """Per-row loss vector from ``family.loss`` on single rows."""
    out = np.empty(len(eta))
    for i in range(len(eta)):
        wi = None if w is None else w[i:i + 1]
        out[i] = family.loss(y[i:i + 1], eta[i:i + 1], wi)
    return out


def _fd1(f, x, h):
    """Five-point first derivative: truncation O(h^4)."""
    return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h)


def _fd2(f, x, h):
    """Central second derivative: truncation O(h^2)."""
    return (f(x + h) - 2 * f(x) + f(x - h)) / (h * h)


@pytest.mark.parametrize("family", FAMILY_LIST, ids=IDS)
@pytest.mark.parametrize("label", [0.0, 1.0])
def test_gradient_matches_finite_differences_of_loss(family, label):
    eta = ETA_GRID
    y = np.full(eta.shape, label)
    loss, g, h = family.derivatives(y, eta)
    assert loss == pytest.approx(family.loss(y, eta), rel=1e-14)
    step = 1e-3
    fd = _fd1(lambda e: _row_loss(family, y, e), eta, step)
    # rounding ~ eps |loss_i| / step: loss_i <= ~450 at |eta| = 30 (probit).
    atol = 1e-13 * np.maximum(1.0, np.abs(_row_loss(family, y, eta))) / step
    np.testing.assert_allclose(g, fd, rtol=1e-8, atol=atol.max())
    # Per-element relative check where the gradient is not tiny.
    big = np.abs(g) > 1e-6
    np.testing.assert_allclose(g[big], fd[big], rtol=1e-7)


@pytest.mark.parametrize("family", FAMILY_LIST, ids=IDS)
@pytest.mark.parametrize("label", [0.0, 1.0])
def test_curvature_matches_finite_differences(family, label):
    eta = ETA_GRID
    y = np.full(eta.shape, label)
    _, g, h = family.derivatives(y, eta)
    assert np.all(h >= 0)
    # h = d g / d eta, with g already checked against the loss. The logit's
    # g = p - y carries an absolute rounding error ~eps (p - 1 for y = 1), so
    # its differences have absolute noise ~eps / step ~ 1e-13.
    fd = _fd1(lambda e: family.derivatives(y, e)[1], eta, 1e-3)
    np.testing.assert_allclose(h, fd, rtol=1e-7, atol=1e-12)
    # h = d^2 loss / d eta^2 directly (second differences: looser, rounding / step^2).
    fd2 = _fd2(lambda e: _row_loss(family, y, e), eta, 1e-4)
    scale = np.maximum(1.0, np.abs(_row_loss(family, y, eta)))
    np.testing.assert_allclose(h, fd2, rtol=1e-5, atol=float((1e-15 * scale / 1e-8).max()))


@pytest.mark.parametrize("family", FAMILY_LIST, ids=IDS)
def test_random_rows_and_weights_scale_everything(family):
    rng = np.random.default_rng(0)
    n = 200
    eta = rng.normal(scale=4.0, size=n)
    y = (rng.random(n) < 0.5).astype(float)
    w = rng.random(n) * 3
    for information in ("observed", "expected"):
        L, g, h = family.derivatives(y, eta, None, information)
        Lw, gw, hw = family.derivatives(y, eta, w, information)
        per_row = _row_loss(family, y, eta)
        assert L == pytest.approx(per_row.sum(), rel=1e-13)
        assert Lw == pytest.approx((w * per_row).sum(), rel=1e-13)
        assert Lw == pytest.approx(family.loss(y, eta, w), rel=1e-14)
        np.testing.assert_allclose(gw, w * g, rtol=1e-15)
        np.testing.assert_allclose(hw, w * h, rtol=1e-15)
        # Scalar-uniform weights scale the total.
        L2, g2, h2 = family.derivatives(y, eta, np.full(n, 2.5), information)
        assert L2 == pytest.approx(2.5 * L, rel=1e-14)
        np.testing.assert_allclose(g2, 2.5 * g, rtol=1e-15)
        np.testing.assert_allclose(h2, 2.5 * h, rtol=1e-15)
    # Zero weights remove rows.
    w0 = np.where(np.arange(n) < 50, 1.0, 0.0)
    L0, g0, h0 = family.derivatives(y, eta, w0)
    L50 = family.derivatives(y[:50], eta[:50])[0]
    assert L0 == pytest.approx(L50, rel=1e-14)
    assert not g0[50:].any() and not h0[50:].any()


def test_logit_derivatives_closed_form():
    fam = BernoulliLogit()
    eta = np.linspace(-30, 30, 121)
    p = 1 / (1 + np.exp(-eta))
    e = np.exp(-np.abs(eta))
    curvature = e / (1 + e) ** 2  # p (1 - p) without cancellation
    for label in (0.0, 1.0):
        y = np.full(eta.shape, label)
        L, g, h = fam.derivatives(y, eta)
        np.testing.assert_allclose(g, p - y, rtol=1e-12, atol=2.3e-16)
        # g = -(1 - p(observed class)) keeps full relative precision (no p - 1).
        s = 2 * label - 1
        np.testing.assert_allclose(g, -s / (1 + np.exp(s * eta)), rtol=1e-13, atol=0)
        np.testing.assert_allclose(h, curvature, rtol=1e-13, atol=0)
        Le, ge, he = fam.derivatives(y, eta, information="expected")
        assert Le == L
        np.testing.assert_array_equal(ge, g)
        np.testing.assert_array_equal(he, h)  # canonical link: identical


def test_probit_expected_information_matches_scipy():
    fam = BernoulliProbit()
    # |eta| <= 26: beyond, scipy's pdf**2 leaves the normal float range.
    eta = np.linspace(-26, 26, 209)
    pdf, cdf, sf = stats.norm.pdf(eta), stats.norm.cdf(eta), stats.norm.sf(eta)
    want = pdf ** 2 / (cdf * sf)
    for label in (0.0, 1.0):
        y = np.full(eta.shape, label)
        _, g, h = fam.derivatives(y, eta, information="expected")
        np.testing.assert_allclose(h, want, rtol=1e-12, atol=0)
        # The gradient does not depend on the information type.
        np.testing.assert_array_equal(g, fam.derivatives(y, eta)[1])
    # Expected information = E_y[observed information] at the model's own p.
    p = cdf
    h1 = fam.derivatives(np.ones_like(eta), eta)[2]
    h0 = fam.derivatives(np.zeros_like(eta), eta)[2]
    safe = np.abs(eta) <= 8
    np.testing.assert_allclose((p * h1 + sf * h0)[safe], want[safe], rtol=1e-10)


def test_probit_observed_information_matches_scipy():
    fam = BernoulliProbit()
    eta = np.linspace(-30, 30, 241)
    for label, z in ((1.0, eta), (0.0, -eta)):
        lam = stats.norm.pdf(z) / stats.norm.cdf(z)
        _, g, h = fam.derivatives(np.full(eta.shape, label), eta)
        s = 2 * label - 1
        np.testing.assert_allclose(g, -s * lam, rtol=1e-12, atol=0)
        # Where lambda + z does not cancel (z > -5) scipy's formula is accurate.
        ok = z > -5
        np.testing.assert_allclose(h[ok], (lam * (z + lam))[ok], rtol=1e-12, atol=0)


def test_invalid_information_raises():
    for fam in FAMILY_LIST:
        with pytest.raises(ValueError, match="information"):
            fam.derivatives(np.zeros(2), np.zeros(2), None, "fisher")


# ---------------------------------------------------------------- extremes

@pytest.mark.parametrize("family", FAMILY_LIST, ids=IDS)
@pytest.mark.parametrize("information", ["observed", "expected"])
def test_everything_finite_at_huge_eta(family, information):
    eta = np.array([-1e4, -1e3, -40.0, 40.0, 1e3, 1e4])
    for label in (0.0, 1.0):
        y = np.full(eta.shape, label)
        L, g, h = family.derivatives(y, eta, None, information)
        assert np.isfinite(L)
        assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
        assert np.all(h >= 0)
        assert np.isfinite(family.loss(y, eta))
        lp = family.log_proba(eta)
        assert np.all(np.isfinite(lp))
        # The right answer costs nothing, the wrong one ~|eta| (logit) or eta^2/2.
        right = (eta > 0) == (label == 1.0)
        per_row = _row_loss(family, y, eta)
        assert np.all(per_row[right] >= 0)
        assert np.all(per_row[right] <= 2 * np.exp(-np.abs(eta[right])))
        assert np.all(per_row[~right] >= np.abs(eta[~right]) * (1 - 1e-12))
        if isinstance(family, BernoulliProbit):
            np.testing.assert_allclose(per_row[~right], eta[~right] ** 2 / 2
                                       + np.log(np.abs(eta[~right]))
                                       + 0.5 * np.log(2 * np.pi), rtol=1e-6)
        # Gradient of a confidently wrong row: logit -> +-1, probit -> ~ -z.
        if isinstance(family, BernoulliLogit):
            np.testing.assert_allclose(np.abs(g[~right]), 1.0)
        else:
            a = np.abs(eta[~right])  # lambda(-a) = a + 1/a - 2/a^3 + O(a^-5)
            np.testing.assert_allclose(np.abs(g[~right]), a + 1 / a - 2 / a ** 3, rtol=1e-7)
        assert np.all(np.abs(g[right]) <= 1e-15)


def _mp_probit_curvature(z):
    import mpmath
    with mpmath.workdps(50):
        z = mpmath.mpf(z)
        lam = mpmath.npdf(z) / mpmath.ncdf(z)
        return float(lam * (z + lam))


def test_probit_observed_curvature_left_tail():
    # -d^2/dz^2 log Phi(z) = lambda(z) (z + lambda(z)) -> 1 - 1/z^2 as z -> -inf.
    # See test_probit_observed_curvature_far_tail for z down to -1e4.
    fam = BernoulliProbit()
    z = np.array([-100.0, -40.0, -10.0, -3.0])
    want = np.array([_mp_probit_curvature(v) for v in z])
    _, _, h = fam.derivatives(np.ones(4), z)
    np.testing.assert_allclose(h, want, rtol=1e-8)
    _, _, h0 = fam.derivatives(np.zeros(4), -z)
    np.testing.assert_allclose(h0, want, rtol=1e-8)


@pytest.mark.parametrize("eta", [-1e4, -3e3, -1e3, -300.0])
def test_probit_observed_curvature_far_tail(eta):
    fam = BernoulliProbit()
    want = _mp_probit_curvature(eta)
    _, _, h = fam.derivatives(np.ones(1), np.array([eta]))
    np.testing.assert_allclose(h, want, rtol=1e-7)
    _, _, h0 = fam.derivatives(np.zeros(1), np.array([-eta]))
    np.testing.assert_allclose(h0, want, rtol=1e-7)


@pytest.mark.parametrize("family", FAMILY_LIST, ids=IDS)
def test_log_proba(family):
    rng = np.random.default_rng(1)
    eta = np.r_[rng.normal(scale=10, size=100), -1e4, -1e3, 0.0, 1e3, 1e4]
    lp = family.log_proba(eta)
    assert lp.shape == (eta.size, 2)
    assert np.all(np.isfinite(lp)) and np.all(lp <= 0)
    np.testing.assert_allclose(np.exp(lp).sum(axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(np.logaddexp(lp[:, 0], lp[:, 1]), 0.0, atol=1e-15)
    np.testing.assert_allclose(np.exp(lp[:, 1]), family.mean(eta), rtol=1e-13, atol=1e-300)
    # loss is minus the log-probability of the observed class.
    y = (rng.random(eta.size) < 0.5).astype(float)
    assert family.loss(y, eta) == pytest.approx(-lp[np.arange(eta.size), y.astype(int)].sum(),
                                                rel=1e-14)


@pytest.mark.parametrize("family", FAMILY_LIST, ids=IDS)
def test_link_inverts_mean(family):
    # Up to eta = 3: beyond, mean(eta) rounds near 1 and no link can invert it.
    eta = np.linspace(-8, 3, 45)
    np.testing.assert_allclose(family.link(family.mean(eta)), eta, rtol=1e-9, atol=1e-9)


def test_logit_loss_equals_sklearn_log_loss():
    rng = np.random.default_rng(2)
    n = 500
    eta = rng.normal(scale=3, size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    w = rng.random(n) * 2
    fam = BernoulliLogit()
    p = fam.mean(eta)
    assert fam.loss(y, eta) == pytest.approx(log_loss(y, p, normalize=False), rel=1e-12)
    assert fam.loss(y, eta, w) == pytest.approx(
        log_loss(y, p, normalize=False, sample_weight=w), rel=1e-12)
    assert fam.derivatives(y, eta, w)[0] == pytest.approx(
        log_loss(y, np.column_stack([1 - p, p]), normalize=False, sample_weight=w), rel=1e-12)


def test_probit_loss_equals_sklearn_log_loss():
    rng = np.random.default_rng(3)
    eta = rng.normal(scale=2, size=300)
    y = (rng.random(300) < 0.5).astype(float)
    fam = BernoulliProbit()
    p = stats.norm.cdf(eta)
    assert fam.loss(y, eta) == pytest.approx(log_loss(y, p, normalize=False), rel=1e-12)


def test_registry():
    assert FAMILIES["logit"] is BernoulliLogit
    assert FAMILIES["probit"] is BernoulliProbit
    assert BernoulliLogit.name == "logit" and BernoulliProbit.name == "probit"


@pytest.mark.parametrize("contrast", [True, False])
def test_softmax_exact_complements_found_from_the_normaliser(contrast):
    # Rows with some p > 1/2 are found by one test over P; the
    # exact complements must be those of a full argmax over every row.
    from problin._core.model.families import CategoricalSoftmax, SoftmaxState
    rng = np.random.default_rng(3)
    family = CategoricalSoftmax(6, contrast=contrast)
    eta = rng.normal(0.0, 1.0, (4000, family.n_free)) * rng.choice([0.1, 3.0, 40.0], (4000, 1))
    t = rng.integers(0, 6, 4000)
    _, state = family.derivatives(t, eta)
    p0 = None
    if contrast:
        p0 = 1.0 - state.P.sum(axis=1)  # only for the reference; compare rows/cols below
    full = SoftmaxState(state.P, p0, state.free_t, None)
    for fast, slow in zip(state.fix[:2], full.fix[:2]):
        np.testing.assert_array_equal(fast, slow)
    assert state.fix[0].size > 100  # the test exercises the confident rows
    # and the complements are exact: 1 - p summed from the other classes in
    # long double from the logits
    rows, cols, q = state.fix
    logits = family.logits(eta[rows]).astype(np.longdouble)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    chosen = cols + int(contrast)
    mask = np.ones(e.shape, dtype=bool)
    mask[np.arange(rows.size), chosen] = False
    others = np.where(mask, e, 0.0).sum(axis=1)  # no cancellation
    exact = others / e.sum(axis=1)
    np.testing.assert_allclose(q, exact.astype(float), rtol=1e-13, atol=0)


@pytest.mark.parametrize("contrast", [True, False])
@pytest.mark.parametrize("scale", [1.0, 300.0, 2000.0])
def test_softmax_normaliser_with_and_without_a_shift(contrast, scale):
    # Logits below _EXP_SAFE are exponentiated as they are (contrasts) or relative to
    # the first class; larger ones take the per-row maximum. Either way the loss and
    # the probabilities equal a long-double reference to a few ulps.
    from problin._core.model.families import CategoricalSoftmax
    rng = np.random.default_rng(7)
    family = CategoricalSoftmax(5, contrast=contrast)
    eta = rng.normal(0.0, 1.0, (3000, family.n_free)) * scale
    t = rng.integers(0, 5, 3000)
    loss, state = family.derivatives(t, eta)
    logits = family.logits(eta).astype(np.longdouble)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=1)) + logits.max(axis=1)
    exact_loss = float(np.sum(log_z - logits[np.arange(3000), t]))
    np.testing.assert_allclose(loss, exact_loss, rtol=1e-13)
    P = np.exp(logits - log_z[:, None])[:, int(contrast):].astype(float)
    tiny = P < 1e-300  # (subnormal probabilities: absolute agreement)
    np.testing.assert_allclose(state.P[~tiny], P[~tiny], rtol=1e-13)
    np.testing.assert_allclose(state.P[tiny], P[tiny], rtol=0, atol=1e-300)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), contrast=st.booleans(), weighted=st.booleans(),
       cut=st.floats(0.05, 0.95))
def test_softmax_gradient_weights_by_row_range_and_by_chunk(seed, contrast, weighted, cut):
    # The weights P - T of rows lo:hi equal those rows of the whole array (the observed
    # classes are read by their flat positions, a row range by searchsorted), a state
    # joined from chunks equals the state of all rows, and on the observed class the
    # weight is -(1 - p) with 1 - p exact (long double from the logits).
    from problin._core.model.families import CategoricalSoftmax, SoftmaxState
    rng = np.random.default_rng(seed)
    n, family = 700, CategoricalSoftmax(4, contrast=contrast)
    eta = rng.normal(0.0, 1.0, (n, family.n_free)) * rng.choice([0.3, 5.0, 60.0], (n, 1))
    t = rng.integers(0, 4, n)
    sw = rng.uniform(0.0, 2.0, n) if weighted else None
    _, state = family.derivatives(t, eta, sw)
    G = state.gradient_weights()
    lo = int(cut * n) // 2
    hi = lo + 1 + int(cut * (n - lo - 1))
    np.testing.assert_array_equal(state.gradient_weights(lo, hi), G[lo:hi])
    split = int(cut * n)
    parts = [(0, family.derivatives(t[:split], eta[:split], None if sw is None else sw[:split])[1]),
             (split, family.derivatives(t[split:], eta[split:], None if sw is None else sw[split:])[1])]
    joined = SoftmaxState.concatenate(np.concatenate([p.P for _, p in parts]), parts,
                                      state.free_t, sw)
    np.testing.assert_array_equal(joined.observed, state.observed)
    np.testing.assert_array_equal(joined.gradient_weights(), G)
    rows = np.flatnonzero(state.free_t >= 0)
    logits = family.logits(eta).astype(np.longdouble)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    mask = np.ones(e.shape, dtype=bool)
    mask[rows, t[rows]] = False
    others = np.where(mask, e, 0.0)[rows].sum(axis=1)  # the other classes: no cancellation
    q = (others / e[rows].sum(axis=1)).astype(float)
    weight = np.ones(n) if sw is None else sw
    np.testing.assert_allclose(G[rows, state.free_t[rows]], -q * weight[rows], rtol=1e-12,
                               atol=1e-300)
    # 1 - p of every row's observed class, the reference class's rows included
    # (their 1 - p0 is the free classes' sum), exact as well.
    everyone = np.ones(e.shape, dtype=bool)
    everyone[np.arange(n), t] = False
    exact = np.where(everyone, e, 0.0).sum(axis=1) / e.sum(axis=1)
    np.testing.assert_allclose(state.observed_complements(), exact.astype(float), rtol=1e-12,
                               atol=1e-300)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), contrast=st.booleans(), weighted=st.booleans(),
       cut=st.floats(0.05, 0.95), n_classes=st.integers(2, 6))
def test_softmax_state_is_the_same_stored_class_by_class(seed, contrast, weighted, cut,
                                                         n_classes):
    # The small design's eta comes class by class (Fortran order). Every quantity of the
    # state is then what the row-major state gives, to the rounding of each row's sum of
    # M terms (BLAS adds them in another order): the loss, P, the gradient weights (all
    # rows, and a row range, which comes row-major), the exact complements of a row range
    # and of the observed classes.
    from problin._core.model.family_softmax import CategoricalSoftmax
    rng = np.random.default_rng(seed)
    n, family = 500, CategoricalSoftmax(n_classes, contrast=contrast)
    eta = rng.normal(0.0, 1.0, (n, family.n_free)) * rng.choice([0.3, 5.0, 60.0], (n, 1))
    t = rng.integers(0, n_classes, n)
    sw = rng.uniform(0.0, 2.0, n) if weighted else None
    eta_f = np.asfortranarray(eta)
    assert family.n_free == 1 or not eta_f.flags.c_contiguous
    loss_c, row_major = family.derivatives(t, eta, sw)
    out = np.empty(eta.shape, order="F")
    loss_f, class_major = family.derivatives(t, eta_f, sw, out=out)
    assert class_major.P is out and class_major.class_major == (family.n_free > 1)
    close = {"rtol": 1e-14, "atol": 1e-300}
    np.testing.assert_allclose(loss_f, loss_c, rtol=1e-14)
    np.testing.assert_allclose(family.loss(t, eta_f, sw), loss_c, rtol=1e-14)
    np.testing.assert_allclose(class_major.P, row_major.P, **close)
    G = class_major.gradient_weights()
    assert G.flags.f_contiguous or family.n_free == 1
    np.testing.assert_allclose(G, row_major.gradient_weights(), **close)
    lo = int(cut * n) // 2
    hi = lo + 1 + int(cut * (n - lo - 1))
    np.testing.assert_array_equal(class_major.gradient_weights(lo, hi), G[lo:hi])
    np.testing.assert_array_equal(class_major.complements(lo, hi), class_major.complements()[lo:hi])
    np.testing.assert_allclose(class_major.complements(), row_major.complements(), **close)
    np.testing.assert_allclose(class_major.observed_complements(),
                               row_major.observed_complements(), **close)
    assert class_major.fix[0].size == row_major.fix[0].size > 0  # near-1 rows exercised
    # A mismatched output buffer is not used (its positions would be eta's order's).
    _, other = family.derivatives(t, eta_f, sw, out=np.empty(eta.shape))
    np.testing.assert_array_equal(other.gradient_weights(), G)


@pytest.mark.parametrize("order", ["C", "F"])
def test_gradient_weights_without_the_full_fix_are_the_same(order):
    # A gradient alone sums the complements of the observed classes above 1/2 only;
    # the same weights, bit for bit, as from every entry's (formed for a Hessian).
    from problin._core.model.family_softmax import CategoricalSoftmax
    rng = np.random.default_rng(3)
    eta = np.asarray(rng.normal(size=(2000, 4)) * rng.choice([1.0, 10.0, 40.0], (2000, 1)),
                     order=order)
    t = rng.integers(0, 5, 2000)
    _, state = CategoricalSoftmax(5).derivatives(t, eta)
    lazy = state.gradient_weights()
    assert state._fix is None  # not formed for the gradient
    assert len(state.fix[0]) > 0
    np.testing.assert_array_equal(lazy, state.gradient_weights())
    assert np.abs(lazy).min() < 1e-80  # rows fitted with certainty keep their digits
    # So do the observed classes' complements (the diagnostics' certainty test).
    Q = state.complements()
    n = t.size
    want = np.where(t > 0, Q[np.arange(n), np.maximum(t - 1, 0)], state.P.sum(axis=1))
    np.testing.assert_allclose(state.observed_complements(), want, rtol=1e-15, atol=0)
