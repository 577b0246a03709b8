"""``slopes``, ``comparisons`` and ``predictions``: what a fitted model's estimates mean.

The three methods of every model with a linear predictor and a covariance (the GLM
classifiers and regressors, least squares) and of :class:`~problin.Formula`, in the spirit
of R's ``marginaleffects`` (Arel-Bundock 2024) and Stata's ``margins`` (Williams 2012):

=========================  ==============================  ===============================
problin                    marginaleffects                 Stata / statsmodels
=========================  ==============================  ===============================
``slopes(data)``           ``avg_slopes(m)``               ``margins, dydx(*)``;
                                                           ``get_margeff(at="overall")``
``slopes(data, at="mean")````slopes(m, newdata="mean")``   ``margins, dydx(*) atmeans``
``comparisons(data)``      ``avg_comparisons(m)``          ``margins r.x`` (contrasts)
``predictions(data)``      ``avg_predictions(m)``          ``margins``
``by="g"``                 ``by = "g"``                    ``margins g``
=========================  ==============================  ===============================

A model supplies two things (:class:`EffectsSource`): its :class:`~problin.inference.
effects.EffectsModel` on the response or link scale (parameters, mean map, covariance,
z or t), and the encoding of data into its design (:class:`~problin.inference.
effects_spec.DataEncoding`): for a formula, the formula's (so that ``age`` in
``age*children`` is one variable); for a plain estimator, its columns (each column a
variable; the categorical columns of a DataFrame it encoded get contrasts).
"""
import dataclasses
from typing import Any, Protocol, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ._frames import ENCODING_ATTRIBUTE, as_pandas, encode_frame
from .inference.effects import (
    Design,
    EffectsModel,
    FloatArray,
    Sampling,
    average_rows,
    effects_frame,
)
from .inference.effects_draws import average_draws, draws_frame
from .inference.effects_sparse import Rows, SparseRows
from .inference.effects_spec import (
    OBSERVED,
    DataEncoding,
    Estimate,
    RowContrast,
    check_variables,
    comparison_estimates,
    groups,
    hypothesis_matrix,
    needed,
    plain_comparisons,
    plain_slopes,
    profile,
    row_weights,
    slope_estimates,
    variant,
)

__all__ = ["EffectsMethods", "EffectsSource", "column_data", "comparisons", "predictions",
           "slopes"]

TYPES = ("response", "link")


class EffectsSource(Protocol):
    """What the interpretation methods read of a fitted model."""

    def _effects_model(self, type: str) -> EffectsModel: ...  # pragma: no cover

    def _effects_data(self, data: Any) -> DataEncoding: ...  # pragma: no cover

    def _effects_draws(self, sampling: Sampling) -> FloatArray | None: ...  # pragma: no cover


def _check_type(type: str) -> str:
    if type not in TYPES:
        raise ValueError(f"type must be 'response' or 'link', got {type!r}")
    return type


def column_data(estimator: Any, data: Any) -> DataEncoding:
    """A plain estimator's data as variables: each column one (named by
    ``feature_names_in_``, else ``x0, x1, ...``); the categorical columns of a DataFrame
    that the estimator encoded (``input_encoding_``) are variables with their levels."""
    check_is_fitted(estimator)
    names = getattr(estimator, "feature_names_in_", None)
    if sp.issparse(data):
        return _sparse_data(estimator, data, names)
    frame = as_pandas(data)
    if not isinstance(frame, pd.DataFrame):
        X = np.asarray(data, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"data must be 2-D (rows x features), got shape {X.shape}")
        labels = ([str(n) for n in names] if names is not None
                  else [f"x{j}" for j in range(X.shape[1])])
        if len(labels) != X.shape[1]:
            raise ValueError(f"data have {X.shape[1]} columns, the model "
                             f"{len(labels)}")
        frame = pd.DataFrame(X, columns=labels, copy=False)  # (a view: read only)
    encoding = getattr(estimator, ENCODING_ATTRIBUTE, None)  # (only for encoded frames)
    if encoding is not None:
        encoding = encoding["columns"]
    linear: dict[str, int] = {}
    if encoding is not None:
        variables = {c["name"]: list(c["categories"]) if c["kind"] == "categorical" else None
                     for c in encoding}
        at = 0
        for c in encoding:  # (the encoded design: a column per numeric, L - 1 per factor)
            if c["kind"] == "numeric":
                linear[c["name"]] = at
            at += 1 if c["kind"] == "numeric" else len(c["categories"]) - 1
    else:
        variables = {str(c): None for c in frame.columns}
        linear = {name: j for j, name in enumerate(variables)}
    named = names is not None

    def design(block: pd.DataFrame) -> np.ndarray:
        X = encode_frame(estimator, block if named else block.to_numpy(), False)
        return np.asarray(validate_data(estimator, X, reset=False, dtype=np.float64))
    return DataEncoding(frame, variables, design, linear)


def _sparse_data(estimator: Any, data: Any, names: Any) -> DataEncoding:
    """Sparse data (CSR or CSC) as variables: each column one, a plain design column,
    read in sparse row blocks (:class:`~problin.inference.effects_sparse.SparseRows`);
    a grid's rows (``at=``) are dense and few."""
    if getattr(estimator, ENCODING_ATTRIBUTE, None) is not None:
        raise TypeError(f"{type(estimator).__name__} was fitted on a DataFrame whose "
                        "categorical columns it encoded: give slopes, comparisons and "
                        "predictions such a DataFrame, not a sparse matrix")
    X = check_array(data, accept_sparse=("csr", "csc"), dtype=np.float64)
    width = int(estimator.n_features_in_)
    if X.shape[1] != width:
        raise ValueError(f"data have {X.shape[1]} columns, the model {width}")
    labels = ([str(n) for n in names] if names is not None
              else [f"x{j}" for j in range(width)])
    frame = SparseRows(X, labels)

    def design(block: Rows) -> Any:
        if isinstance(block, SparseRows):
            return block.matrix
        rows = check_array(block[labels].to_numpy(dtype=np.float64), dtype=np.float64)
        return sp.csr_matrix(rows)
    return DataEncoding(frame, {name: None for name in labels}, design,
                        {name: j for j, name in enumerate(labels)})


def _row_values(frame: Rows, values: Any, name: str) -> Any:
    """``offset=``/``exposure=``: an array, or the name of a column of the data."""
    if not isinstance(values, str):
        return values
    if values not in frame.columns:
        raise ValueError(f"{name}={values!r} names no column of the data; its columns "
                         f"are {[str(c) for c in frame.columns][:20]}")
    return frame[values].to_numpy(dtype=np.float64)


def _offsets(model: EffectsModel, frame: Rows, rows: Rows, at: Any,
             offset: Any, exposure: Any) -> FloatArray | None:
    """The rows' offsets: each observed row its own; at a grid (``at``), every grid
    row the data's mean offset and mean exposure (as ``marginaleffects`` holds an
    exposure column at its mean in a grid)."""
    offset = _row_values(frame, offset, "offset")
    exposure = _row_values(frame, exposure, "exposure")
    found = model.offsets(offset, exposure, len(frame))
    if found is None or at is None:
        return found
    mean = {name: None if v is None else np.full(len(rows), float(np.mean(v)))
            for name, v in (("offset", offset), ("exposure", exposure))}
    return model.offsets(mean["offset"], mean["exposure"], len(rows))


def _table(source: EffectsSource, data: Any, estimates: list[Estimate], at: Any, by: Any,
           type: str, level: float, sample_weight: Any, kind: str,
           hypothesis: Any = None, sampling: Sampling = Sampling(),
           offset: Any = None, exposure: Any = None) -> pd.DataFrame:
    model = source._effects_model(_check_type(type))
    draws = source._effects_draws(sampling)
    if draws is not None:  # (a Bayesian model: each effect per posterior draw)
        model = dataclasses.replace(model, draws=draws)
    encoding = source._effects_data(data)
    frame = encoding.frame
    if len(frame) == 0:
        raise ValueError(f"{kind} needs at least one row of data")
    rows: Rows = frame
    if at is None:
        weights = row_weights(frame, sample_weight)
        by_names, grouped = groups(frame, by)
    else:
        if sample_weight is not None:
            raise ValueError("at= chooses the rows (one result per row of its grid): give "
                             "sample_weight= only with the observed data (at=None)")
        rows, by_names = (_sparse_grid(encoding, at) if sp.issparse(at)
                          else profile(encoding, at))
        weights = np.ones(len(rows))
        if by is not None:  # (the grid's rows averaged, with equal weights, by group)
            by_names, grouped = groups(rows, by)
        else:
            grouped = ([(tuple(rows.iloc[i][by_names]), np.array([i]))
                        for i in range(len(rows))] if by_names and not sp.issparse(at)
                       else [((i,), np.array([i])) for i in range(len(rows))] if by_names
                       else [((), np.arange(len(rows)))])
    offsets = _offsets(model, frame, rows, at, offset, exposure)
    variants = {key: variant(key) for key in needed(estimates)}
    functions = [part for e in estimates for part in e.parts]
    first = np.cumsum([0] + [len(e.parts) for e in estimates])
    shifts = encoding.shifts(variants)
    batched = {f: j for f, (j, _) in plain_slopes(functions, shifts).items()}
    # (a single-index model's plain-column elasticities from shared sums, every variable)
    elastic = (plain_slopes(functions, shifts, ("eyex", "dyex", "eydx"))
               if model.draws is None and model.blocks.shape[0] == 1 and
               model.outputs is None else {})
    index: list[tuple[Any, ...]] = []
    # per reported row: its estimate and the vector that maps linearly with it (its
    # Jacobian for the delta method; its draws for a Bayesian model, with no estimate)
    values, jacobians = [], []
    for label, idx in grouped:
        w = weights[idx]
        if w.sum() <= 0:
            continue
        block = rows.iloc[idx]
        if model.draws is None:
            A, J = average_rows(model, encoding.design, block, w, variants, functions,
                                shifts, batched, None if offsets is None else offsets[idx],
                                elastic, plain_comparisons(functions, shifts))
            found = [e.value(A[first[i]:first[i + 1]], J[first[i]:first[i + 1]])
                     for i, e in enumerate(estimates)]
        else:
            assert offsets is None, "the Bayesian models take no offsets"
            # (the draws' products read dense blocks: sparse rows are densified a block
            # at a time, average_draws' blocks hold at most max(2^21, 256 d) values)
            S = average_draws(model, _dense(encoding.design), cast(pd.DataFrame, block), w,
                              variants, functions, shifts, batched)  # (D, F, K)
            found = [(np.full(S.shape[2], np.nan), e.point(S[:, first[i]:first[i + 1]]).T)
                     for i, e in enumerate(estimates)]
        for e, (value, jac) in zip(estimates, found):
            for k in range(value.shape[0]):
                out = () if model.outputs is None else (model.outputs[k],)
                terms = (e.term, e.contrast) if kind != "predictions" else ()
                index.append(out + tuple(label) + terms)
                values.append(value[k])
                jacobians.append(jac[k])
    # (class outermost, as marginal_effects: rows of one class together)
    outputs = model.outputs
    order = sorted(range(len(index)), key=lambda i: outputs.index(index[i][0])) \
        if outputs is not None else list(range(len(index)))
    index = [index[i] for i in order]
    values = [values[i] for i in order]
    jacobians = [jacobians[i] for i in order]
    names = (([] if model.outputs is None else ["class"]) + by_names +
             (["term", "contrast"] if kind != "predictions" else []))
    if names:
        idx_out = pd.MultiIndex.from_tuples(index, names=names) if len(names) > 1 else \
            pd.Index([t[0] for t in index], name=names[0])
    else:
        idx_out = pd.Index(["average" if at is None else str(at)] * len(index),
                           name="prediction")
    estimate, jacobian = np.asarray(values), np.asarray(jacobians)
    if hypothesis is not None:
        labels = [", ".join(map(str, t)) if isinstance(t, tuple) else str(t) for t in idx_out]
        R, q, tests = hypothesis_matrix(hypothesis, labels)
        estimate, jacobian = R @ estimate - q, R @ jacobian
        if model.draws is not None:
            jacobian = jacobian - q[:, None]
        idx_out = pd.Index(tests, name="hypothesis")
    table = (effects_frame(idx_out, estimate, jacobian, model, level) if model.draws is None
             else draws_frame(idx_out, jacobian, level))
    table.attrs.update(kind=kind, type=type, at="data" if at is None else
                       "grid" if isinstance(at, pd.DataFrame) or sp.issparse(at) else at,
                       n_rows=len(rows))
    return table


def _sparse_grid(encoding: DataEncoding, at: Any) -> tuple[Rows, list[str]]:
    """``at=`` a sparse matrix: its rows, each a result (indexed by ``row``), for a model
    given sparse data."""
    frame = encoding.frame
    if not isinstance(frame, SparseRows):
        raise TypeError("at= a sparse matrix is for sparse data; give a dict or DataFrame "
                        "of the variables' values")
    grid = check_array(at, accept_sparse=("csr", "csc"), dtype=np.float64)
    if grid.shape[1] != len(frame.columns) or grid.shape[0] == 0:
        raise ValueError(f"at= has shape {grid.shape}; the data have "
                         f"{len(frame.columns)} columns (and it needs a row)")
    return SparseRows(grid, list(frame.columns)), ["row"]


def _dense(design: Design) -> Design:
    """A design whose blocks are dense arrays."""
    def dense(block: Rows) -> Any:
        X = design(block)
        return X.toarray() if sp.issparse(X) else X
    return dense


def slopes(source: EffectsSource, data: Any, variables: Any = None, *, slope: str = "dydx",
           at: Any = None, by: Any = None, type: str = "response", level: float = 0.95,
           sample_weight: Any = None, hypothesis: Any = None, n_draws: int | None = None,
           random_state: Any = None, offset: Any = None, exposure: Any = None
           ) -> pd.DataFrame:
    """See :meth:`EffectsMethods.slopes`."""
    encoding = source._effects_data(data)
    estimates = slope_estimates(encoding, check_variables(encoding, variables), slope)
    return _table(_Fixed(source, encoding), data, estimates, at, by, type, level,
                  sample_weight, "slopes", hypothesis, Sampling(n_draws, random_state),
                  offset, exposure)


def comparisons(source: EffectsSource, data: Any, variables: Any = None, *,
                change: Any = 1, levels: str = "reference", comparison: str = "difference",
                at: Any = None, by: Any = None, type: str = "response", level: float = 0.95,
                sample_weight: Any = None, hypothesis: Any = None,
                n_draws: int | None = None, random_state: Any = None,
                direction: str = "center", offset: Any = None, exposure: Any = None
                ) -> pd.DataFrame:
    """See :meth:`EffectsMethods.comparisons`."""
    if comparison not in ("difference", "ratio"):
        raise ValueError(f"comparison must be 'difference' or 'ratio', got {comparison!r}")
    encoding = source._effects_data(data)
    estimates = comparison_estimates(encoding, check_variables(encoding, variables), change,
                                     levels, comparison == "ratio", direction)
    table = _table(_Fixed(source, encoding), data, estimates, at, by, type, level,
                   sample_weight, "comparisons", hypothesis, Sampling(n_draws, random_state),
                   offset, exposure)
    table.attrs["comparison"] = comparison
    return table


def predictions(source: EffectsSource, data: Any, *, at: Any = None, by: Any = None,
                type: str = "response", level: float = 0.95,
                sample_weight: Any = None, hypothesis: Any = None,
                n_draws: int | None = None, random_state: Any = None,
                offset: Any = None, exposure: Any = None) -> pd.DataFrame:
    """See :meth:`EffectsMethods.predictions`."""
    return _table(source, data, [Estimate("prediction", "", (RowContrast(OBSERVED),))], at,
                  by, type, level, sample_weight, "predictions", hypothesis,
                  Sampling(n_draws, random_state), offset, exposure)


class _Fixed:
    """A source whose data encoding is already built (read once per call)."""

    def __init__(self, source: EffectsSource, encoding: DataEncoding) -> None:
        self.source, self.encoding = source, encoding

    def _effects_model(self, type: str) -> EffectsModel:
        return self.source._effects_model(type)

    def _effects_data(self, data: Any) -> DataEncoding:
        return self.encoding

    def _effects_draws(self, sampling: Sampling) -> FloatArray | None:
        return self.source._effects_draws(sampling)


class EffectsMethods:
    """The interpretation methods of a fitted model (its class supplies
    ``_effects_model`` and ``_effects_data``, :class:`EffectsSource`)."""

    def _effects_model(self, type: str) -> EffectsModel:  # pragma: no cover - abstract
        raise NotImplementedError

    def _effects_data(self, data: Any) -> DataEncoding:
        """Each column of ``data`` a variable (:func:`column_data`)."""
        return column_data(self, data)

    def _effects_draws(self, sampling: Sampling) -> FloatArray | None:
        """Posterior draws of the parameters (Bayesian models); None: the delta method."""
        if sampling != Sampling():
            raise ValueError(f"n_draws and random_state are for Bayesian models; "
                             f"{type(self).__name__} has no posterior to draw from")
        return None

    def slopes(self, data: Any, variables: Any = None, *, slope: str = "dydx",
               at: Any = None, by: Any = None, type: str = "response", level: float = 0.95,
               sample_weight: Any = None, hypothesis: Any = None, n_draws: int | None = None,
               random_state: Any = None, offset: Any = None, exposure: Any = None
               ) -> pd.DataFrame:
        """Average slopes ``d E[y] / d x`` of each variable, with delta-method errors.

        A numeric variable's slope is the central difference of the average prediction
        through the model's whole encoding of the variable (a formula's interactions and
        transforms included), step ``1e-4`` times its range; a categorical variable gets
        its contrasts against the reference level (as :meth:`comparisons`). Standard
        errors by the delta method with ``covariance_`` (robust or clustered as fitted).

        Parameters
        ----------
        data : DataFrame, array-like or sparse matrix
            The rows to average over (the training data for average marginal effects).
            A SciPy sparse matrix (CSR or CSC; formula-free models whose columns are the
            design's) is read in sparse row blocks, never densified.
        variables : str, int or list of them, optional
            The variables (data columns) to report, by name or position; all by default.
        slope : {"dydx", "eyex", "dyex", "eydx"}, default="dydx"
            The derivative, or an elasticity averaged over the rows as Stata's
            ``margins, eyex()`` and statsmodels' ``get_margeff(method=)``: ``dy/dx * x/y``,
            ``dy/dx * x``, ``dy/dx / y`` (``y`` the row's prediction on the observed data).
        at : None, "mean", "median", dict or DataFrame, optional
            None: the observed rows (average effects); ``"mean"``/``"median"``: at the
            variables' means (medians; modes for categorical ones); a dict of values per
            variable: one result per combination of them (a grid); a DataFrame: one
            result per row, its columns variables; the variables a grid does not set
            at their means (modes). With sparse ``data``, a sparse matrix of rows: one
            result per row (indexed by ``row``).
        by : str or list of str, optional
            Average within the groups of these columns of ``data``; with a grid
            (``at``), the average over the grid's rows within the groups of these
            variables (rows equally weighted).
        type : {"response", "link"}, default="response"
            The scale of the prediction: the mean (probability) or the linear predictor.
        level : float, default=0.95
            Confidence level of ``ci_low, ci_high``.
        sample_weight : array-like or str, optional
            Weights of the rows in the averages (or the name of a column of ``data``).
        hypothesis : str, optional
            Instead of the estimates ``b1, b2, ...`` (the table's rows in order), tests
            of linear combinations of them, as ``marginaleffects``: ``"b2 - b1 = 0"``,
            ``"pairwise"`` (every difference), ``"reference"`` (each minus the first);
            rows named by the hypotheses.
        n_draws : int, optional
            Bayesian models: the number of posterior draws (default: MCMC's stored
            samples, all of them, or evenly spaced ones of them; 1,000 draws of a
            Gaussian posterior, ``n_samples`` for ``BayesianLogisticRegression``).
        random_state : int, RandomState or None, optional
            Bayesian models with a Gaussian posterior: the seed of its draws.
        offset, exposure : array-like or str, optional
            The rows' offsets (binary GLM classifiers and GLM regressors) and exposures
            (regressors of the log link), as ``predict(X, offset=, exposure=)``: one
            value per row of ``data``, or the name of a column of it. Each row keeps
            its own in every counterfactual copy (a variable changes, the exposure does
            not); at a grid (``at``), every grid row takes their means over ``data``
            (as ``marginaleffects`` holds an exposure column at its mean). None: 0.

        Returns
        -------
        DataFrame
            ``estimate, std_err, z`` (``t`` where the model's tests are t), ``p_value,
            ci_low, ci_high``, indexed by ``(class,) (by...,) term, contrast``
            (``contrast`` is ``"dY/dX"`` for a slope, ``"b - a"`` for a level contrast).
            Bayesian models: ``estimate`` (the posterior median of the effect computed
            per draw), ``std_err`` (its posterior standard deviation), ``ci_low,
            ci_high`` (the equal-tailed credible interval at ``level``); no ``z``/``t``
            or ``p_value`` column.
        """
        return slopes(self, data, variables, slope=slope, at=at, by=by, type=type,
                      level=level, sample_weight=sample_weight, hypothesis=hypothesis,
                      n_draws=n_draws, random_state=random_state, offset=offset,
                      exposure=exposure)

    def comparisons(self, data: Any, variables: Any = None, *, change: Any = 1,
                    levels: str = "reference", comparison: str = "difference",
                    at: Any = None, by: Any = None, type: str = "response",
                    level: float = 0.95, sample_weight: Any = None,
                    hypothesis: Any = None, n_draws: int | None = None,
                    random_state: Any = None, direction: str = "center",
                    offset: Any = None, exposure: Any = None) -> pd.DataFrame:
        """Average discrete changes of the prediction, with delta-method errors.

        Numeric variables change by ``change`` centred on each row's value
        (``mu(x + d/2) - mu(x - d/2)``; ``"sd"``: one standard deviation; ``"minmax"``:
        every row at the maximum against the minimum); ``direction="forward"``: from
        each row's value (``mu(x + d) - mu(x)``, contrast ``"x+d - x"``; Stata's
        ``margeff, count`` and statsmodels' ``get_margeff(count=True)`` are the centred
        ``change=2`` halved, ``hypothesis="0.5 * b1"``); categorical ones are set to each level against the reference
        (``levels="pairwise"``: every pair).
        ``comparison="ratio"``: the ratio of the average predictions. ``at``, ``by``,
        ``type``, ``level``, ``sample_weight``, ``hypothesis``, ``n_draws``,
        ``random_state``, ``offset``, ``exposure`` and the table: as :meth:`slopes`.
        """
        return comparisons(self, data, variables, change=change, levels=levels,
                           comparison=comparison, at=at, by=by, type=type, level=level,
                           sample_weight=sample_weight, hypothesis=hypothesis,
                           n_draws=n_draws, random_state=random_state,
                           direction=direction, offset=offset, exposure=exposure)

    def predictions(self, data: Any, *, at: Any = None, by: Any = None,
                    type: str = "response", level: float = 0.95,
                    sample_weight: Any = None, hypothesis: Any = None,
                    n_draws: int | None = None, random_state: Any = None,
                    offset: Any = None, exposure: Any = None) -> pd.DataFrame:
        """The average prediction (per class, per group, per grid row), with
        delta-method errors. Arguments and table as :meth:`slopes` (without ``term``)."""
        return predictions(self, data, at=at, by=by, type=type, level=level,
                           sample_weight=sample_weight, hypothesis=hypothesis,
                           n_draws=n_draws, random_state=random_state, offset=offset,
                           exposure=exposure)
