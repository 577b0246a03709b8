"""
Out-of-core logistic regression with Dask
=========================================

Every problin estimator fits a ``dask.array`` as it would a numpy array, chunk by
chunk, without collecting the rows in one place. For logistic regression each Newton
iteration (Bishop 2006, *Pattern Recognition and Machine Learning*, §4.3.3, iterative
reweighted least squares) is one pass over the data: every chunk returns its
contribution to the log-likelihood, the gradient ``Phi^T (y - t)`` and the Hessian
``Phi^T R Phi``, and these sums are merged in Dask's reduction tree. The result is the
in-memory fit, to rounding.

Here a 200,000-row data set is generated chunk by chunk, fitted on Dask's local threaded
scheduler, and compared with the fit of the same rows in memory. The last section does the
same from Parquet files on disk with :func:`problin.io.read_dask`. (Real out-of-core data
would be larger than memory; this one is kept small so that the example runs in seconds,
and the in-memory comparison is possible.)
"""

# %%
# A Dask array built from chunks
# ------------------------------
# Each chunk of 20,000 rows is made by its own seeded function call, so nothing is
# computed until a fit asks for it, and the data are the same on every run.

import os
import tempfile

import dask
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from problin import LogisticRegression
from problin.io import read_dask

dask.config.set(scheduler="threads")  # the local threaded scheduler

n_chunks, chunk_rows, n_features = 10, 20_000, 4
true_coef = np.array([1.5, -2.0, 0.5, 0.0])
true_intercept = -0.5


def make_chunk(i):
    rng = np.random.default_rng(i)
    X = rng.normal(size=(chunk_rows, n_features))
    p = 1 / (1 + np.exp(-(X @ true_coef + true_intercept)))
    return X, (rng.uniform(size=chunk_rows) < p).astype(np.int64)


parts = [dask.delayed(make_chunk, nout=2)(i) for i in range(n_chunks)]
X = da.concatenate([da.from_delayed(X_i, shape=(chunk_rows, n_features), dtype=np.float64)
                    for X_i, _ in parts])
y = da.concatenate([da.from_delayed(y_i, shape=(chunk_rows,), dtype=np.int64)
                    for _, y_i in parts])
print(X)

# %%
# Dask fit and in-memory fit
# --------------------------
# The same estimator, given the Dask arrays, then the computed numpy arrays.

dask_fit = LogisticRegression().fit(X, y)

X_np, y_np = dask.compute(X, y)
numpy_fit = LogisticRegression().fit(X_np, y_np)

coef_gap = np.abs(dask_fit.coef_ - numpy_fit.coef_).max()
intercept_gap = np.abs(dask_fit.intercept_ - numpy_fit.intercept_).max()
se_gap = np.abs(np.sqrt(np.diag(dask_fit.covariance_))
                - np.sqrt(np.diag(numpy_fit.covariance_))).max()
print(f"largest difference: coefficients {coef_gap:.1e}, intercept {intercept_gap:.1e}, "
      f"standard errors {se_gap:.1e}")
assert max(coef_gap, intercept_gap, se_gap) < 1e-10
print(dask_fit.summary().round(4))

# %%
# Convergence, lazy predictions and a calibration check
# -----------------------------------------------------
# ``history_`` holds Newton's objective (the negative log-likelihood) per iterate: the
# Dask fit, one pass over the chunks per iteration, takes the same steps as the numpy
# fit, converging quadratically. ``predict_proba`` on a Dask array returns a lazy Dask
# array; the calibration table (per bin of predicted probability: the mean prediction
# and the observed frequency of class 1) is three more reductions, computed together in
# one pass.

proba = dask_fit.predict_proba(X)[:, 1]
bins = da.minimum((proba * 10).astype(np.int64), 9)
counts, predicted, observed = dask.compute(da.bincount(bins, minlength=10),
                                           da.bincount(bins, weights=proba, minlength=10),
                                           da.bincount(bins, weights=y, minlength=10))
used = counts > 0
predicted, observed = predicted[used] / counts[used], observed[used] / counts[used]

fig, (ax_newton, ax_cal) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for label, model, style in (("Dask", dask_fit, "o-"), ("numpy", numpy_fit, "x--")):
    excess = model.history_[:-1] - model.history_[-1]  # objective above its final value
    ax_newton.semilogy(np.arange(excess.size), excess, style, label=f"{label} fit")
ax_newton.set(xlabel="Newton iteration", ylabel="objective minus its final value",
              title="Newton's convergence: the same steps")
ax_newton.legend()

ax_cal.plot([0, 1], [0, 1], color="0.6", ls="--")
ax_cal.plot(predicted, observed, "o-")
ax_cal.set(xlabel="mean predicted probability", ylabel="observed frequency of class 1",
           title="calibration on 200,000 rows (lazy)", aspect="equal")
plt.show()

# %%
# From Parquet files on disk
# --------------------------
# Written as one Parquet file per chunk, the data are read back lazily by
# :func:`problin.io.read_dask`, whose Dask arrays have one chunk per group of Parquet row
# groups; only the chunks being reduced are ever in memory. The fit is again the
# in-memory one.

with tempfile.TemporaryDirectory() as folder:
    for i, (X_i, y_i) in enumerate(dask.compute(*parts)):
        frame = pd.DataFrame(X_i, columns=[f"x{j}" for j in range(n_features)]).assign(y=y_i)
        frame.to_parquet(os.path.join(folder, f"part-{i:03d}.parquet"))
    data = read_dask(folder, "y")
    print(data.feature_names, data.X.chunks[0][:3], "...")
    file_fit = LogisticRegression().fit(data.X, data.y)

print(f"largest coefficient difference from the in-memory fit: "
      f"{np.abs(file_fit.coef_ - numpy_fit.coef_).max():.1e}")
