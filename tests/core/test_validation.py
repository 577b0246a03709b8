"""Input checks: sample weights (and class-label types)."""
import re

import numpy as np
import pandas as pd
import pytest

from problin._core.validation import (
    check_class_weights,
    check_label_types,
    check_sample_weight,
)


def test_none_passes_through():
    assert check_sample_weight(None, 5) is None
    assert check_sample_weight(None, 0) is None


@pytest.mark.parametrize("w", [
    [1, 2, 3],
    (0.5, 0.0, 2.0),
    np.array([1, 2, 3], dtype=np.int32),
    np.array([1.0, 2.0, 3.0], dtype=np.float32),
    np.array([True, False, True]),
    pd.Series([1.0, 0.0, 2.0]),
], ids=["list", "tuple", "int32", "float32", "bool", "series"])
def test_valid_weights_become_float64(w):
    out = check_sample_weight(w, 3)
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float64 and out.shape == (3,)
    np.testing.assert_array_equal(out, np.asarray(w, dtype=np.float64))


def test_valid_weights_are_not_aliased_when_converted():
    w = np.array([1, 2, 3], dtype=np.int64)
    out = check_sample_weight(w, 3)
    out[0] = 10
    assert w[0] == 1


def test_scalar_weight_broadcasts():
    out = check_sample_weight(2.5, 4)
    np.testing.assert_array_equal(out, np.full(4, 2.5))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(check_sample_weight(np.float32(1), 2), [1.0, 1.0])
    np.testing.assert_array_equal(check_sample_weight(3, 2), [3.0, 3.0])


def test_zeros_allowed_if_sum_positive():
    out = check_sample_weight([0.0, 0.0, 1e-300], 3)
    np.testing.assert_array_equal(out, [0.0, 0.0, 1e-300])


@pytest.mark.parametrize("w, count", [
    ([1.0, -1.0, 2.0], 1),
    ([-1e-300, 1.0, 1.0], 1),
    ([-1.0, -2.0, 3.0], 2),
])
def test_negative_weights(w, count):
    with pytest.raises(ValueError, match=rf"sample_weight has {count} negative values; "
                                         r"weights must be non-negative"):
        check_sample_weight(w, 3)


def test_negative_scalar_weight():
    with pytest.raises(ValueError, match="2 negative values"):
        check_sample_weight(-1.0, 2)


@pytest.mark.parametrize("w", [
    [1.0, np.nan, 2.0],
    [np.inf, 1.0, 1.0],
    [1.0, 1.0, -np.inf],
    [1, None, 2],  # None becomes NaN under float conversion
], ids=["nan", "inf", "-inf", "none"])
def test_non_finite_weights(w):
    with pytest.raises(ValueError, match="sample_weight contains NaN or infinity"):
        check_sample_weight(w, 3)


def test_nan_scalar_weight():
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_sample_weight(np.nan, 3)


@pytest.mark.parametrize("w, shape", [
    ([1.0, 2.0], "(2,)"),
    ([1.0, 2.0, 3.0, 4.0], "(4,)"),
    (np.ones((3, 1)), "(3, 1)"),
    (np.ones((1, 3)), "(1, 3)"),
    ([], "(0,)"),
], ids=["short", "long", "column", "row", "empty"])
def test_wrong_shape(w, shape):
    msg = f"sample_weight has shape {shape}, expected (3,)"
    with pytest.raises(ValueError, match=re.escape(msg)):
        check_sample_weight(w, 3)


@pytest.mark.parametrize("w", [[0.0, 0.0, 0.0], 0.0, np.zeros(3, dtype=int)],
                         ids=["zeros", "scalar", "int-zeros"])
def test_zero_sum(w):
    with pytest.raises(ValueError, match="sample_weight sums to zero: there is nothing to fit"):
        check_sample_weight(w, 3)


@pytest.mark.parametrize("w", [
    ["a", "b", "c"],
    [1.0, "x", 2.0],
    [1.0, {}, 2.0],
    [1 + 1j, 2, 3],
    [[1.0], [2.0, 3.0], [4.0]],
], ids=["strings", "mixed", "dict", "complex-list", "ragged"])
def test_non_numeric(w):
    with pytest.raises(TypeError, match="sample_weight must be numeric"):
        check_sample_weight(w, 3)


def test_non_numeric_scalar():
    with pytest.raises(TypeError, match="sample_weight must be numeric"):
        check_sample_weight("abc", 3)


def test_complex_array_rejected():
    with pytest.raises(TypeError, match="sample_weight must be numeric"):
        check_sample_weight(np.array([1 + 1j, 2, 3]), 3)


def test_error_order_shape_before_values():
    # A wrong-length array with NaNs reports the shape problem first.
    with pytest.raises(ValueError, match="shape"):
        check_sample_weight([np.nan, -1.0], 3)


# ---------------------------------------------------------------- labels

def test_check_label_types():
    check_label_types(np.array([0, 1, 1]))
    check_label_types(np.array(["a", "b"]))
    check_label_types(np.array(["a", "b"], dtype=object))
    check_label_types(np.array([0, 1.0, np.int64(2)], dtype=object))
    with pytest.raises(TypeError, match="mixes number, str"):
        check_label_types(np.array([0, "a"], dtype=object))


def test_check_class_weights_names_the_classes_without_weight():
    codes = np.array([0, 0, 1, 2, 2])
    check_class_weights(codes, None, ["a", "b", "c"])  # unit weights: nothing to check
    check_class_weights(codes, np.array([0.0, 1.0, 2.0, 0.0, 1.0]), ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"classes \['b'\] have zero total sample weight: "
                                         r"their parameters are undefined\. Drop"):
        check_class_weights(codes, np.array([1.0, 1.0, 0.0, 1.0, 1.0]), ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"classes \['a', 'c'\] .*: they would be -inf\."):
        check_class_weights(codes, np.array([0.0, 0.0, 1.0, 0.0, 0.0]), ["a", "b", "c"],
                            why="they would be -inf")


def test_sample_weights_summing_beyond_the_bound_are_refused():
    """Weighted sums of squares run over the total weight: beyond MAX_TOTAL_WEIGHT they
    could overflow (a logit fit with weights of 1e300 gave NaN standard errors and numpy
    overflow warnings). Large but bounded totals are fine."""
    from problin import LogisticRegression
    from problin._core.validation import MAX_TOTAL_WEIGHT, check_sample_weight
    with pytest.raises(ValueError, match="weights sum to 1e\\+300, beyond 1e\\+19"):
        check_sample_weight(np.array([1e300, 1.0]), 2)
    with pytest.raises(ValueError, match="too large"):
        check_sample_weight(np.full(3, np.finfo(float).max), 3)
    w = check_sample_weight(np.full(4, MAX_TOTAL_WEIGHT / 4), 4)
    assert w.sum() == MAX_TOTAL_WEIGHT
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = (X[:, 0] + rng.normal(size=50) > 0).astype(int)
    with pytest.raises(ValueError, match="sample_weight is too large"):
        LogisticRegression().fit(X, y, sample_weight=np.full(50, 1e300))
