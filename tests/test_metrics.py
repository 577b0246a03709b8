"""``problin.metrics``: the Brier score is scikit-learn's, the calibration error its own."""
import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from problin.metrics import brier_score, expected_calibration_error


def _proba(n, k, seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=n)
    return p, rng.integers(0, k, size=n)


@pytest.mark.parametrize("labels", [np.array([0, 1]), np.array(["no", "yes"]),
                                    np.array([3, 7])])
def test_binary_brier_is_sklearns_mean_squared_error_of_the_positive_class(labels):
    proba, codes = _proba(200, 2, seed=1)
    y = labels[codes]
    ours = brier_score(proba, y, labels)
    assert ours == pytest.approx(brier_score_loss(y, proba[:, 1], pos_label=labels[1]),
                                 rel=1e-12)
    assert ours == pytest.approx(brier_score_loss(y, proba, labels=labels), rel=1e-12)
    assert ours == pytest.approx(np.mean((proba[:, 1] - (codes == 1)) ** 2), rel=1e-12)
    # the unscaled sum over both classes is twice that (what problin printed before)
    assert brier_score(proba, y, labels, scale_by_half=False) == pytest.approx(2 * ours)


def test_multiclass_brier_is_sklearns_sum_over_classes():
    proba, codes = _proba(300, 4, seed=2)
    classes = np.array(["a", "b", "c", "d"])
    y = classes[codes]
    ours = brier_score(proba, y, classes)
    assert ours == pytest.approx(brier_score_loss(y, proba, labels=classes), rel=1e-12)
    assert ours == pytest.approx(
        brier_score_loss(y, proba, labels=classes, scale_by_half=False), rel=1e-12)
    assert brier_score(proba, y, classes, scale_by_half=True) == pytest.approx(0.5 * ours)


def test_brier_bounds_and_bad_scale():
    perfect = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert brier_score(perfect, [0, 1], [0, 1]) == 0.0
    assert brier_score(perfect[::-1], [0, 1], [0, 1]) == 1.0  # the worst binary score
    with pytest.raises(ValueError, match="scale_by_half"):
        brier_score(perfect, [0, 1], [0, 1], scale_by_half="half")


def test_expected_calibration_error_of_a_calibrated_forecaster_is_small():
    rng = np.random.default_rng(3)
    p1 = rng.uniform(size=20000)
    y = (rng.uniform(size=p1.size) < p1).astype(int)
    proba = np.column_stack([1 - p1, p1])
    assert expected_calibration_error(proba, y, [0, 1]) < 0.02
    assert expected_calibration_error(np.column_stack([p1, 1 - p1]), y, [0, 1]) > 0.2


def test_labels_outside_the_classes_are_errors():
    """A label with no probability column is an error, never scored as its neighbour in
    sorted order ('ab' between 'a' and 'b' was scored as 'b', a perfect prediction);
    classes must be distinct, in the columns' order (sorted, or an ordinal model's given
    order: the same scores); n_bins positive."""
    proba = [[0.9, 0.1], [0.2, 0.8]]
    for y in (["a", "ab"], ["a", "z"]):
        for metric in (brier_score, expected_calibration_error):
            with pytest.raises(ValueError, match="not among the classes"):
                metric(proba, y, ["a", "b"])
    with pytest.raises(ValueError, match="distinct labels"):
        expected_calibration_error(proba, ["a", "b"], ["a", "a"])
    flipped = np.asarray(proba)[:, ::-1]
    for metric in (brier_score, expected_calibration_error):
        assert metric(flipped, ["a", "b"], ["b", "a"]) == metric(proba, ["a", "b"], ["a", "b"])
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        expected_calibration_error(proba, ["a", "b"], ["a", "b"], n_bins=0)
    with pytest.raises(ValueError, match="one row per label"):
        brier_score(proba, ["a"], ["a", "b"])


@pytest.mark.parametrize("proba", [[[np.nan, 1.0]], [[1.5, -0.5]], [[0.7, 0.7]]])
@pytest.mark.parametrize("score", [brier_score, expected_calibration_error])
def test_rows_that_are_not_probabilities_are_an_error(score, proba):
    """A NaN gave brier_score NaN silently and ECE a numpy error about bincount; rows
    outside [0, 1] or not summing to 1 were scored as if they were probabilities."""
    with pytest.raises(ValueError, match=r"proba rows \[0\] are not probabilities"):
        score(proba, ["a"], ["a", "b"])


def test_n_bins_must_be_a_positive_integer_not_a_bool():
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        expected_calibration_error([[0.9, 0.1]], ["a"], ["a", "b"], n_bins=True)
