"""Naive Bayes: parity with scikit-learn, sparse input, streaming, invariances, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from sklearn import naive_bayes as sknb
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine

from problin import BernoulliNB, GaussianNB, MultinomialNB

LOADERS = {"iris": load_iris, "wine": load_wine, "breast-cancer": load_breast_cancer,
           "digits": load_digits}
DATASETS = sorted(LOADERS)


def _data(name):
    return LOADERS[name](return_X_y=True)


def _counts(seed, n=120, d=8, k=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rates = rng.gamma(2.0, 1.0, size=(k, d))
    return rng.poisson(rates[y]).astype(float), y


# ------------------------------------------------------------------ parity
def _within_class_variances(X, y):
    """Each column's pooled within-class variance; a column constant within every class
    its variance over all the data, one constant over all of them the mean of the
    others' (the unit of GaussianNB's smoothing), by plain numpy."""
    pooled = sum(((X[y == k] - X[y == k].mean(axis=0)) ** 2).sum(axis=0)
                 for k in np.unique(y)) / len(y)
    total = X.var(axis=0)
    total = np.where(total > 0, total, total[total > 0].mean())
    return np.where(pooled > 0, pooled, total)


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("smoothing", [0.1, 1e-9])
def test_gaussian_nb_equals_sklearn(name, smoothing):
    # Our variance floor is var_smoothing times each feature's own pooled within-class
    # variance, sklearn's var_smoothing times the largest variance over all the data.
    # They agree where every feature has the same within-class variance: give sklearn
    # the features in those units, with the fraction that makes its floor the same,
    # and map its parameters back.
    X, y = _data(name)
    unit = np.sqrt(_within_class_variances(X, y))
    Z = X / unit
    ref = sknb.GaussianNB(var_smoothing=smoothing / Z.var(axis=0).max()).fit(Z, y)
    ours = GaussianNB(var_smoothing=smoothing).fit(X, y)
    assert_allclose(ours.epsilon_, smoothing * unit ** 2, rtol=1e-10)
    assert_allclose(ours.epsilon_, ref.epsilon_ * unit ** 2, rtol=1e-10)
    assert_allclose(ours.predict_proba(X), ref.predict_proba(Z), rtol=0, atol=1e-8)
    assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(Z), rtol=1e-8,
                    atol=1e-8)
    assert_allclose(ours.var_, ref.var_ * unit ** 2, rtol=1e-10)
    assert_allclose(ours.theta_, ref.theta_ * unit, rtol=1e-12, atol=1e-12)


def test_gaussian_nb_smooths_each_feature_in_its_own_units():
    # sklearn's floor 1e-9 max_j var_j swamps a feature in small units; ours does not.
    X, y = _data("iris")
    tiny = X * np.array([1e6, 1.0, 1.0, 1e-6])
    ours, ref = GaussianNB().fit(tiny, y), sknb.GaussianNB().fit(tiny, y)
    assert_allclose(ours.predict_proba(tiny), GaussianNB().fit(X, y).predict_proba(X),
                    atol=1e-12)
    assert_allclose(ours.epsilon_, 0.1 * _within_class_variances(tiny, y), rtol=1e-10)
    assert np.max(np.abs(ref.predict_proba(tiny) - ours.predict_proba(tiny))) > 0.1


def test_gaussian_nb_default_beats_sklearns_out_of_sample_on_digits():
    """The default smoothing (0.1 of each pixel's within-class variance) against
    scikit-learn's default (1e-9 of the largest variance), 3-fold cross-validated
    log-loss on digits: a pixel constant within a class (variance ~0) made one test
    image that differs in it cost ~1e9 nats. Full table: bench/bench_naive_bayes_smoothing.py."""
    from sklearn.metrics import log_loss
    from sklearn.model_selection import StratifiedKFold
    X, y = _data("digits")
    loss = {"ours": [], "sklearn": []}
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
        for key, model in (("ours", GaussianNB()), ("sklearn", sknb.GaussianNB())):
            p = model.fit(X[train], y[train]).predict_proba(X[test])
            loss[key].append(log_loss(y[test], p, labels=model.classes_))
    assert np.mean(loss["ours"]) < 0.6 * np.mean(loss["sklearn"])


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix])
def test_bernoulli_nb_equals_sklearn(name, container):
    X, y = _data(name)
    Xt = container(X - np.median(X, axis=0)) if container is np.asarray else container(X)
    for alpha, threshold in [(1.0, 0.0), (0.3, 2.0)]:
        ours = BernoulliNB(alpha=alpha, binarize=threshold).fit(Xt, y)
        ref = sknb.BernoulliNB(alpha=alpha, binarize=threshold).fit(Xt, y)
        assert_allclose(ours.predict_proba(Xt), ref.predict_proba(Xt), rtol=0, atol=1e-8)
        assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12)
        assert_allclose(ours.class_log_prior_, ref.class_log_prior_, rtol=1e-12)


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix])
def test_multinomial_nb_equals_sklearn(name, container):
    X, y = _data(name)
    Xt = container(X)
    for alpha in [1.0, 0.01]:
        ours = MultinomialNB(alpha=alpha).fit(Xt, y)
        ref = sknb.MultinomialNB(alpha=alpha).fit(Xt, y)
        assert_allclose(ours.predict_proba(Xt), ref.predict_proba(Xt), rtol=0, atol=1e-8)
        assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12)
        assert np.all(ours.predict(Xt) == ref.predict(Xt))


def test_laplace_smoothing_is_the_seeds_spam_filter():
    # phi_j|y = (#{x_j = 1, y} + 1) / (#{y} + 2); phi_y = #{y = 1} / m.
    rng = np.random.default_rng(0)
    X = (rng.random((50, 6)) < 0.3).astype(float)
    y = (rng.random(50) < 0.4).astype(int)
    nb = BernoulliNB(binarize=None).fit(X, y)
    for k in (0, 1):
        phi = (X[y == k].sum(axis=0) + 1) / ((y == k).sum() + 2)
        assert_allclose(np.exp(nb.feature_log_prob_[k]), phi, rtol=1e-14)
    phi_y = y.mean()
    # Posterior (7.55) with the smoothed phi, in closed form.
    phi0, phi1 = np.exp(nb.feature_log_prob_)  # rows follow classes_ = [0, 1]
    lik1 = np.prod(np.where(X == 1, phi1, 1 - phi1), axis=1) * phi_y
    lik0 = np.prod(np.where(X == 1, phi0, 1 - phi0), axis=1) * (1 - phi_y)
    assert_allclose(nb.predict_proba(X)[:, 1], lik1 / (lik1 + lik0), rtol=1e-12)


def test_sparse_input_stays_sparse_and_equals_dense():
    X, y = _counts(1, n=300, d=40)
    Xs = sp.csr_matrix(X)
    for model in (BernoulliNB(), MultinomialNB()):
        dense = model.fit(X, y).predict_log_proba(X)
        sparse = model.fit(Xs, y).predict_log_proba(Xs)
        assert_allclose(sparse, dense, rtol=1e-12, atol=1e-12)


def test_log_probabilities_are_exact_where_probabilities_underflow():
    X, y = _counts(2, d=20)
    nb = MultinomialNB().fit(X, y)
    far = 1e4 * np.eye(20)[:3]  # enormous counts: posteriors of 0 and 1 to the last bit
    lp = nb.predict_log_proba(far)
    assert np.all(np.isfinite(lp)) and np.all(lp <= 0) and lp.min() < -1000


# ----------------------------------------------------------------- streaming
@pytest.mark.parametrize("make", [GaussianNB, BernoulliNB, MultinomialNB])
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_over_chunks_equals_fit(make, sparse):
    if sparse and make is GaussianNB:
        pytest.skip("GaussianNB takes dense input")
    X, y = _counts(3, n=200)
    w = np.random.default_rng(4).uniform(0.2, 3.0, len(y))
    Xt = sp.csr_matrix(X) if sparse else X
    full = make().fit(Xt, y, sample_weight=w)
    stream = make()
    for chunk in np.array_split(np.arange(len(y)), 6):
        stream.partial_fit(Xt[chunk], y[chunk], classes=[0, 1, 2], sample_weight=w[chunk])
    assert_allclose(stream.predict_proba(Xt), full.predict_proba(Xt), rtol=1e-10, atol=1e-12)
    if make is GaussianNB:  # the smoothing uses the variance of all data seen
        assert_allclose(stream.epsilon_, full.epsilon_, rtol=1e-10)
        assert_allclose(stream.var_, full.var_, rtol=1e-10)
    else:
        assert_allclose(stream.feature_count_, full.feature_count_, rtol=1e-12)


# --------------------------------------------------------------- invariances
MODELS = st.sampled_from([GaussianNB, BernoulliNB, MultinomialNB])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), make=MODELS, data=st.data())
def test_duplicating_rows_equals_weight_two(seed, make, data):
    X, y = _counts(seed, n=60)
    i = data.draw(st.lists(st.integers(0, len(y) - 1), min_size=1, max_size=4, unique=True))
    dup = make().fit(np.vstack([X, X[i]]), np.append(y, y[i]))
    w = np.ones(len(y))
    w[i] = 2.0
    weighted = make().fit(X, y, sample_weight=w)
    assert_allclose(dup.predict_log_proba(X), weighted.predict_log_proba(X), rtol=1e-10,
                    atol=1e-10)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), make=MODELS, perm_seed=st.integers(0, 2**31))
def test_row_order_does_not_matter(seed, make, perm_seed):
    X, y = _counts(seed, n=60)
    perm = np.random.default_rng(perm_seed).permutation(len(y))
    a, b = make().fit(X, y), make().fit(X[perm], y[perm])
    assert_allclose(a.predict_log_proba(X), b.predict_log_proba(X), rtol=1e-10, atol=1e-10)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), make=MODELS, relabel=st.permutations(["x", "y", "z"]))
def test_relabelling_classes_permutes_the_columns(seed, make, relabel):
    X, y = _counts(seed, n=60)
    a, b = make().fit(X, y), make().fit(X, np.array(relabel)[y])
    cols = np.searchsorted(b.classes_, np.array(relabel))
    assert_allclose(b.predict_proba(X)[:, cols], a.predict_proba(X), atol=1e-12)


# ------------------------------------------------------------------ priors
def test_priors_override_the_class_frequencies():
    X, y = _counts(5)
    nb = MultinomialNB(priors=[0.7, 0.2, 0.1]).fit(X, y)
    assert_allclose(nb.class_log_prior_, np.log([0.7, 0.2, 0.1]))
    g = GaussianNB(priors=[0.7, 0.2, 0.1], var_smoothing=1e-9).fit(X, y)  # (both ~ML)
    ref = sknb.GaussianNB(priors=[0.7, 0.2, 0.1]).fit(X, y)
    assert_allclose(g.predict_proba(X), ref.predict_proba(X), atol=1e-10)


# ---------------------------------------------------------------- bad input
def test_multinomial_rejects_negative_counts():
    X, y = _counts(6)
    X[3, 2] = -1.0
    for Xt in (X, sp.csr_matrix(X)):
        with pytest.raises(ValueError, match="Negative values.*smallest is -1"):
            MultinomialNB().fit(Xt, y)


@pytest.mark.parametrize("make", [GaussianNB, BernoulliNB, MultinomialNB])
def test_nan_unseen_labels_and_shapes_are_clear_errors(make):
    X, y = _counts(7)
    with pytest.raises(ValueError, match="NaN"):
        make().fit(np.where(X > 3, np.nan, X), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        make().fit(X, y[:-1])
    model = make().partial_fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match=r"labels \[2\] that are not among the classes"):
        model.partial_fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="only one class"):
        make().fit(X, np.zeros(len(y)))


def test_bernoulli_threshold_checks():
    X, y = _counts(8)
    with pytest.raises(ValueError, match="binarize=None.*values other than 0 and 1"):
        BernoulliNB(binarize=None).fit(X, y)
    with pytest.raises(ValueError, match="densifying"):
        BernoulliNB(binarize=-1.0).fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="alpha"):
        BernoulliNB(alpha=-1.0).fit(X, y)


@pytest.mark.parametrize("make", ["lda", "gnb", "bnb", "mnb"])
def test_partial_fit_holds_the_streams_total_weight_to_the_bound(make):
    """Batches each within the total-weight bound were accepted however much they summed
    to; the stream's total is held to it too, and a refused batch leaves the model as it
    was."""
    from problin import BernoulliNB, GaussianNB, LinearDiscriminantAnalysis, MultinomialNB
    model = {"lda": LinearDiscriminantAnalysis, "gnb": GaussianNB, "bnb": BernoulliNB,
             "mnb": MultinomialNB}[make]()
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    y = np.tile([0, 1], 20)
    model.partial_fit(X[:10], y[:10], classes=[0, 1], sample_weight=np.full(10, 9e17))
    before = model.predict_proba(X[:3])
    with pytest.raises(ValueError, match="sample_weight is too large"):
        model.partial_fit(X[10:20], y[10:20], sample_weight=np.full(10, 9e17))  # 1.8e19
    np.testing.assert_array_equal(model.predict_proba(X[:3]), before)


def test_multinomial_score_samples_is_a_log_probability():
    """score_samples promised log p(x) but left out the multinomial coefficient: the
    probabilities of all count vectors of one total summed to 0.75, not 1."""
    import itertools

    import scipy.sparse as sp

    from problin import MultinomialNB
    X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 3, 2]])
    model = MultinomialNB().fit(X, [0, 0, 1, 1])
    for total in (1, 2, 4):
        vectors = np.array([v for v in itertools.product(range(total + 1), repeat=3)
                            if sum(v) == total])
        assert np.exp(model.score_samples(vectors)).sum() == pytest.approx(1.0, rel=1e-13)
    np.testing.assert_allclose(model.score_samples(sp.csr_matrix(X)), model.score_samples(X),
                               rtol=1e-14)
    two = MultinomialNB().fit(np.array([[2, 0], [0, 2], [1, 1], [1, 1]]), [0, 0, 1, 1])
    assert two.score_samples(np.array([[1, 1]]))[0] == pytest.approx(np.log(0.5), rel=1e-14)


@pytest.mark.parametrize("name", ["GaussianNB", "MultinomialNB", "LinearDiscriminantAnalysis"])
def test_a_batch_of_zero_weight_adds_nothing_to_a_stream(name):
    """partial_fit refused a later batch whose weights are all 0 ("sample_weight sums
    to zero"); it adds nothing (scikit-learn's GaussianNB takes it), its data are
    still checked, and a first batch of no weight is still an error."""
    import problin
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(60, 2)))
    y = np.repeat([0, 1, 2], 20)
    model = getattr(problin, name)().partial_fit(X, y, classes=[0, 1, 2])
    before = model.predict_proba(X)
    model.partial_fit(X[:10] * 7.0, y[:10], sample_weight=np.zeros(10))
    np.testing.assert_array_equal(model.predict_proba(X), before)
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(X[:10] * np.nan, y[:10], sample_weight=np.zeros(10))
    with pytest.raises(ValueError, match="sums to zero"):
        getattr(problin, name)().partial_fit(X[:10], y[:10], classes=[0, 1, 2],
                                             sample_weight=np.zeros(10))


def test_sparse_input_with_duplicate_entries_is_summed_first():
    """scipy allows a CSR matrix to store one entry twice (its value is the sum):
    BernoulliNB counted a present feature once per stored entry (p = 1.33) and
    MultinomialNB's score_samples took gammaln per entry. Both now see the sums."""
    dense = np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 3.0]])
    dup = sp.csr_matrix((np.array([1.0, 1.0, 1.0, 1.0, 3.0]), np.array([0, 0, 1, 1, 2]),
                         np.array([0, 3, 5])), shape=(2, 3))
    assert not dup.has_canonical_format
    np.testing.assert_array_equal(dup.toarray(), dense)
    y = [0, 1]
    for model in (BernoulliNB(), MultinomialNB()):
        a, b = clone_fit(model, dup, y), clone_fit(model, dense, y)
        np.testing.assert_allclose(a.feature_count_, b.feature_count_)
        np.testing.assert_allclose(a.predict_proba(dup), b.predict_proba(dense))
    mnb = MultinomialNB().fit(dense, y)
    np.testing.assert_allclose(mnb.score_samples(dup), mnb.score_samples(dense), rtol=1e-12)


def clone_fit(model, X, y):
    from sklearn.base import clone
    return clone(model).fit(X, y)


def test_multinomial_counts_are_non_negative_at_predict_too():
    """fit refused negative counts; score_samples took them (log p(x) > 0, or -inf)."""
    model = MultinomialNB().fit([[1.0, 2.0], [3.0, 0.0]], [0, 1])
    for method in (model.score_samples, model.predict_proba):
        with pytest.raises(ValueError, match="Negative values"):
            method([[-2.5, 1.0]])


# ------------------------------------------------------------ unsmoothed (alpha=0)
def _limit_posterior(log_factors, zero):
    """The alpha -> 0 posterior by hand: per class the count of zero-probability events
    and the sum of the other log factors; the classes with the fewest share the mass."""
    z = np.array([sum(row) for row in zero])
    f = np.array([sum(row) for row in log_factors])
    keep = z == z.min()
    p = np.where(keep, np.exp(f - f[keep].max()), 0.0)
    return p / p.sum()


def test_unsmoothed_bernoulli_is_the_maximum_likelihood_model():
    """alpha=0: p_kj = #{x_j = 1, C_k} / n_k (log 0 = -inf, no RuntimeWarning), one
    SeparationWarning, posteriors by the direct product where a class has positive
    probability, and the alpha -> 0 limit (never NaN) where none has."""
    from problin import SeparationWarning
    X = np.array([[1, 0, 1], [1, 1, 0], [1, 1, 1], [0, 1, 1], [0, 0, 1], [0, 1, 1]], float)
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(SeparationWarning, match=r"alpha=0\): 3 maximum-likelihood"):
        nb = BernoulliNB(alpha=0, binarize=None).fit(X, y)
    p = np.array([X[y == k].mean(axis=0) for k in (0, 1)])  # [[1, 2/3, 2/3], [0, 2/3, 1]]
    with np.errstate(divide="ignore"):
        assert_allclose(nb.feature_log_prob_, np.log(p), rtol=1e-15)
    rows = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 0]], float)
    got = nb.predict_proba(rows)
    assert not np.isnan(got).any() and not np.isnan(nb.predict_log_proba(rows)).any()
    for x, prob in zip(rows, got):
        n = np.array([3.0, 3.0])
        factors, zero = [], []
        for k in (0, 1):
            c = X[y == k].sum(axis=0)
            events = np.where(x == 1, c, n[k] - c)  # how often this row's value was seen
            zero.append(events == 0)
            factors.append(np.log(0.5) + np.log(np.where(events > 0, events, 1.0) / n[k]))
        assert_allclose(prob, _limit_posterior(factors, zero), rtol=1e-13, atol=1e-300)
    # [0, 0, 0] has probability 0 in both classes (x_1 = 0 never seen in class 0, x_3 = 0
    # never in class 1): the limit weighs the rest, 1/3 * 1/3 / 3 against 1 * 1/3 / 3.
    assert_allclose(got[3], [0.25, 0.75], rtol=1e-14)
    assert_allclose(got[0], [1.0, 0.0])
    assert np.isneginf(nb.score_samples(rows[3:4])[0])
    # ... the limit of smoothing: scikit-learn's forced alpha = 1e-10 is within 1e-9 of it.
    ref = sknb.BernoulliNB(alpha=1e-10, force_alpha=True, binarize=None).fit(X, y)
    assert_allclose(got, ref.predict_proba(rows), atol=1e-8)


def test_unsmoothed_multinomial_is_the_maximum_likelihood_model():
    from problin import SeparationWarning
    X = np.array([[3, 0, 1, 0], [2, 1, 0, 0], [0, 2, 3, 0], [0, 3, 2, 0]], float)
    y = np.array([0, 0, 1, 1])
    with pytest.warns(SeparationWarning, match="word probabilities"):
        nb = MultinomialNB(alpha=0).fit(X, y)
    theta = np.array([X[y == k].sum(axis=0) / X[y == k].sum() for k in (0, 1)])
    with np.errstate(divide="ignore"):
        assert_allclose(nb.feature_log_prob_, np.log(theta), rtol=1e-15)
    rows = np.array([[1, 1, 1, 0], [2, 1, 0, 0], [1, 0, 0, 2], [0, 0, 0, 0]], float)
    got = nb.predict_proba(rows)
    for x, prob in zip(rows, got):
        totals = [X[y == k].sum() for k in (0, 1)]
        counts = [X[y == k].sum(axis=0) for k in (0, 1)]
        zero = [x * (counts[k] == 0) for k in (0, 1)]
        factors = [np.log(0.5) + x * np.log(np.where(counts[k] > 0, counts[k], 1.0) / totals[k])
                   for k in (0, 1)]
        assert_allclose(prob, _limit_posterior(factors, zero), rtol=1e-13, atol=1e-300)
    assert_allclose(got[1], [1.0, 0.0])  # class 1 never saw the first word's second kind
    ref = sknb.MultinomialNB(alpha=1e-10, force_alpha=True).fit(X, y)
    assert_allclose(got, ref.predict_proba(rows), atol=1e-8)
    assert np.isneginf(nb.score_samples(rows[2:3])[0])  # 4th word: never seen at all
    joint = ref.predict_joint_log_proba(rows[:1])  # no -inf here: the smoothing's O(alpha)
    assert_allclose(nb.score_samples(rows[:1]) - mnb_coefficient(rows[:1]),
                    np.logaddexp(*joint.T), rtol=1e-9)


def mnb_coefficient(X):
    from scipy.special import gammaln
    return gammaln(X.sum(axis=1) + 1) - gammaln(X + 1).sum(axis=1)
