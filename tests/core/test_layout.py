"""The parameter layouts answer what differs between binary and softmax models
(problin._core.model.layout), checked against scipy's closed forms."""
import mpmath
import numpy as np
import pytest
from scipy.special import expit, log_expit, logsumexp

from problin._core.model.families import BernoulliLogit, BernoulliProbit, class_family
from problin._core.model.layout import class_layout


class _Counts:
    def __init__(self, t, w):
        self.t, self.w = t, w

    def positive_fraction(self):
        return float(self.w @ self.t / self.w.sum())

    def binary_totals(self):
        return self.class_weights()

    def class_weights(self):
        return np.bincount(self.t, weights=self.w, minlength=3).astype(float)


def test_binary_layout_start_scores_and_classes():
    rng = np.random.default_rng(0)
    t, w = rng.integers(0, 2, 50), rng.uniform(0.5, 2.0, 50)
    logit = class_family(BernoulliLogit(), 2, contrast=True)
    assert logit.n_blocks == 1 and logit.score_columns is None
    p = float(w @ t / w.sum())
    theta0 = logit.start(_Counts(t, w), 4, True)
    np.testing.assert_allclose(theta0, [np.log(p / (1 - p)), 0, 0, 0], rtol=1e-15)
    eta = np.array([-800.0, -1.0, 0.0, 2.5])
    np.testing.assert_allclose(logit.scores_log_proba(eta),
                               np.column_stack([log_expit(-eta), log_expit(eta)]), rtol=1e-14)
    np.testing.assert_array_equal(logit.predicted_index(eta), [0, 0, 0, 1])
    G, h = logit.score_weights(t[:4], eta, None)  # gradient weights p - y, curvature p(1-p)
    np.testing.assert_allclose(G[:, 0], expit(eta) - t[:4], atol=1e-15)
    np.testing.assert_allclose(h, expit(eta) * expit(-eta), rtol=1e-12)
    assert class_family(BernoulliProbit(), 2, contrast=False).block_labels(
        np.array(["a", "b"]), 1) == [None]


@pytest.mark.parametrize("contrast", [True, False])
def test_softmax_layout_start_scores_and_classes(contrast):
    rng = np.random.default_rng(1)
    t, w = rng.integers(0, 3, 60), rng.uniform(0.5, 2.0, 60)
    softmax = class_family(BernoulliLogit(), 3, contrast=contrast)
    assert softmax.n_blocks == 3 - int(contrast) and softmax.score_columns == 3
    log_freq = np.log(np.bincount(t, weights=w, minlength=3))
    start = softmax.start(_Counts(t, w), 2, True).reshape(softmax.n_blocks, 2)
    # the start's class probabilities are the weighted class frequencies
    logits = start[:, 0] if not contrast else np.concatenate([[0.0], start[:, 0]])
    np.testing.assert_allclose(logits - logsumexp(logits), log_freq - logsumexp(log_freq),
                               rtol=1e-13)
    scores = rng.normal(size=(5, 3)) * 30
    with mpmath.workdps(50):
        exact = [[float(mpmath.mpf(a) - mpmath.log(sum(mpmath.exp(mpmath.mpf(b)) for b in row)))
                  for a in row] for row in scores.tolist()]  # (scipy's loses digits near 0)
    np.testing.assert_allclose(softmax.scores_log_proba(scores), exact, rtol=1e-13)
    np.testing.assert_array_equal(softmax.predicted_index(scores), scores.argmax(axis=1))
    with pytest.raises(ValueError, match="binary models only"):
        softmax.add_offset(scores, np.zeros(5))


def test_class_layout_of_per_class_scores():
    scores = np.array([[1.0, 3.0], [2.0, -1.0]])
    two = class_layout(2)
    assert two.score_columns is None
    np.testing.assert_array_equal(two.decision(scores), [2.0, -3.0])
    np.testing.assert_array_equal(two.targets(np.array([0, 1])), [-1.0, 1.0])
    three = class_layout(3)
    assert three.score_columns == 3
    np.testing.assert_array_equal(three.decision(np.eye(3)), np.eye(3))
    np.testing.assert_array_equal(three.weight_prediction(lambda: None, lambda: np.eye(3)),
                                  [0, 1, 2])
