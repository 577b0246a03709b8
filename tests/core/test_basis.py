"""ColumnBasis maps covariances back to raw coordinates as its parameter map dictates."""
import numpy as np
import pytest

from problin._core.model.basis import ColumnBasis


def _basis(rng, d, intercept, centred):
    scale = rng.uniform(0.01, 100.0, d)
    center = rng.normal(size=d) * 1e3 if centred else None
    return ColumnBasis(scale, center, intercept)


def _dense_map(basis, n_params):
    """T by columns: ``to_raw`` (the parameter map) of each unit vector."""
    return np.column_stack([basis.to_raw(e) for e in np.eye(n_params)])


CASES = [(intercept, centred, n_blocks) for intercept in (True, False)
         for centred in (True, False) for n_blocks in (1, 4) if intercept or not centred]


@pytest.mark.parametrize("intercept,centred,n_blocks", CASES)
def test_covariance_to_raw_is_the_parameter_maps_congruence(intercept, centred, n_blocks):
    rng = np.random.default_rng(0)
    d = 5
    basis = _basis(rng, d, intercept, centred)
    n_params = n_blocks * (d + int(intercept))
    A = rng.normal(size=(n_params, n_params))
    cov = A @ A.T
    cov[3, :] = cov[:, 3] = np.nan  # a parameter not identified
    T = _dense_map(basis, n_params)
    kept = np.zeros(n_params, bool)
    kept[3] = True
    expected = T @ np.where(np.isnan(cov), 0.0, cov) @ T.T
    expected[kept, :] = expected[:, kept] = np.nan
    got = basis.covariance_to_raw(cov, n_blocks)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.nanmax(abs(expected)))
    assert np.array_equal(got, got.T, equal_nan=True)


def test_flat_direction_moves_the_covariance_onto_the_raw_constraint():
    """With a flat direction ``u`` (the common intercept shift), the raw covariance
    is that of ``T Q theta_z`` with ``Q = I - u v^T / (v^T u)``, ``v = T^T u``: it has
    no variance along the raw constraint ``u^T theta = 0``."""
    rng = np.random.default_rng(1)
    d, n_blocks = 4, 3
    basis = _basis(rng, d, True, True)
    p = d + 1
    n_params = n_blocks * p
    u = np.tile(np.eye(p)[0], n_blocks)
    A = rng.normal(size=(n_params, n_params))
    cov = A @ A.T
    T = _dense_map(basis, n_params)
    v = T.T @ u
    Q = np.eye(n_params) - np.outer(u, v) / (v @ u)
    expected = T @ Q @ cov @ Q.T @ T.T
    got = basis.covariance_to_raw(cov, n_blocks, flat=u)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
    assert abs(u @ got @ u) <= 1e-9 * np.abs(got).max()


def test_from_sample_finds_constant_columns_by_their_values():
    """A column is constant when every row equals the first, whatever its weighted mean
    rounds to; one differing in the last bit of one row, or with values near the
    float64 limit (their differences overflow), is not."""
    rng = np.random.default_rng(3)
    n = 61
    X = rng.normal(size=(n, 6))
    X[:, 0] = 0.1                                # constant, mean rounds (1/61 weights)
    X[:, 1] = -0.0                               # constant zero (signed)
    X[:, 2] = 7.3
    X[17, 2] = np.nextafter(7.3, 8.0)            # one row differs in the last bit
    X[:, 4] = np.where(np.arange(n) % 2, 1e308, -1e308)  # differences overflow
    basis = ColumnBasis.from_sample(X)
    assert basis.scale[0] == 0.1 and basis.scale[1] == 1.0  # own magnitude, or 1
    assert basis.scale[2] > 0 and basis.scale[2] < 1e-14    # a true (tiny) spread
    sparse = ColumnBasis.from_sample(__import__("scipy.sparse").sparse.csr_matrix(X))
    for b in (basis, sparse):
        assert b.scale[0] == 0.1 and b.scale[1] == 1.0
    assert basis.scale[4] == 1.0  # the spread overflows: scale 1, not a constant column
    weights = np.ones(n)
    weights[17] = 0.0  # the differing row carries no weight: constant again
    assert ColumnBasis.from_sample(X[:, :3], weights=weights).scale[2] == 7.3
