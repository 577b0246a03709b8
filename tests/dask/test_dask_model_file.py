"""A model fitted on Dask saves as the in-memory fit does: its lazy per-row diagnostic
(``separated_`` on separated data) is computed into the file (it was refused, 'values of
type dask.array.core.Array are not supported', so ``problin fit --engine dask`` could not
save a separated fit)."""
import warnings

import numpy as np
import pytest

import problin

da = pytest.importorskip("dask.array")


def test_a_separated_dask_fit_saves_and_loads_as_the_in_memory_one(tmp_path):
    x = np.linspace(-2.0, 2.0, 40)[:, None]
    y = (x[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", problin.ProblinWarning)
        lazy = problin.LogisticRegression().fit(da.from_array(x, chunks=10),
                                                da.from_array(y, chunks=10))
        eager = problin.LogisticRegression().fit(x, y)
    problin.save(lazy, tmp_path / "m.problin")
    loaded = problin.load(tmp_path / "m.problin")
    assert isinstance(loaded.separated_, np.ndarray)
    np.testing.assert_array_equal(loaded.separated_, eager.separated_)
    np.testing.assert_allclose(loaded.predict_proba(x), lazy.predict_proba(x), rtol=1e-12)
