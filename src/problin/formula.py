"""Formulas: a model written as ``y ~ a + b + C(c)``, its design built by formulaic.

:class:`Formula` wraps any problin estimator. The right-hand side of the formula is
expanded into a design matrix by `formulaic <https://matthewwardrop.github.io/formulaic/>`_
in Wilkinson & Rogers' (1973) notation, as patsy (and so ``statsmodels.formula.api``)
expands it: ``C(x)`` and text columns are coded by treatment contrasts against the first
level (the reference), ``a:b`` is the product of the columns of ``a`` and ``b``, ``a*b`` is
``a + b + a:b``, ``log(x)``, ``np.log(x)`` (a fixed set of element-wise functions), ``I(x**2)``
and the stateful ``center(x)``, ``scale(x)``, ``poly(x, 2)``, ``bs(x, df=4)`` transforms are
evaluated on the data, and ``- 1`` (or ``+ 0``) drops the intercept.

A formula is **not Python**: formulaic would evaluate its calls and ``{...}`` blocks with
``eval``; problin checks every term against a fixed language first and evaluates it with its
own interpreter (:mod:`problin._formula_language`, :mod:`problin._formula_design`), on the
API, the command line and model files alike. Anything outside the language (another call, an
attribute, a ``{...}`` block, more than 100 degrees of freedom) is a ValueError listing what a
formula may hold (the user guide's "What a formula may hold"). With an intercept the model is

.. math::

    \\eta_i = b + \\sum_j w_j\\, z_{ij}(x_i), \\qquad z(x) = \\text{the formula's columns},

where the intercept ``b`` is the estimator's own (``fit_intercept=True``: unpenalised,
named ``intercept`` in ``summary()``), never a column of ones; without one
(``- 1``) the estimator is fitted with ``fit_intercept=False``. The wrapped estimator is
fitted on a DataFrame whose columns carry the formula's names (``C(rank)[T.2]``,
``gre:gpa``, ``np.log(gre)``), so its summary, Wald tests and marginal effects name their
rows by them (Greene, *Econometric Analysis*, 8th ed., §6.2 on dummy variables and
interactions).

New data are encoded by the fitted model spec: the same levels and references, the
same transform state (``center``'s mean). A level not seen at fit time is an error naming
the column and the levels; so is a formula naming a column the data do not have (with the
closest column names). ``problin.save`` stores the formula and this state as data, never
pickled (:mod:`problin.io._formula_state`).
"""
import difflib
import functools
import types
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Self, cast

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ._effects_methods import comparisons, predictions, slopes
from ._formula_columns import categorical_columns, formula_columns
from ._formula_design import design_matrix, parse_formula
from ._formula_results import FormulaResults, if_has, warnings_at_caller
from ._frames import numeric_columns
from ._optional import import_optional
from .inference.effects import EffectsModel, Sampling
from .inference.effects_spec import DataEncoding
from ._state import AllOrNothingFit
from .bayesian import BayesianOrdinalRegression
from .glm import OrdinalRegression

__all__ = ["Formula"]

INTERCEPT = "Intercept"  # formulaic's name of the column of ones


@functools.cache
def formulaic_api() -> Any:
    """The names of formulaic that problin uses, imported on first use (formulaic is the
    ``formula`` extra: without it, a ``MissingDependencyError`` naming it): ``Parsed``
    (formulaic's ``Formula``), ``ModelSpec``, ``model_matrix``, ``FormulaicError``,
    ``DataMismatchWarning`` and ``Factor``."""
    what = "problin.Formula"
    formulaic = import_optional("formulaic", "formula", what)
    errors = import_optional("formulaic.errors", "formula", what)
    parser_types = import_optional("formulaic.parser.types", "formula", what)
    return types.SimpleNamespace(
        Parsed=formulaic.Formula, ModelSpec=formulaic.ModelSpec,
        model_matrix=formulaic.model_matrix, FormulaicError=errors.FormulaicError,
        DataMismatchWarning=errors.DataMismatchWarning, Factor=parser_types.Factor)


def _missing_message(missing: Iterable[str], columns: Iterable[Any], what: str) -> str:
    """Names absent from the data, each with its closest column names (difflib)."""
    names = [str(c) for c in columns]
    parts = []
    for name in missing:
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        parts.append(f"{name!r}{hint}")
    return (f"{what} names columns the data do not have: {', '.join(parts)}; the data's "
            f"columns are {names[:20]}{' ...' if len(names) > 20 else ''}")


#: The per-row arguments of the methods on new data that may name a column of the data.
_ROW_ARGUMENTS = ("offset", "exposure", "sample_weight", "trials")


def _frame(data: Any, parsed: Any) -> pd.DataFrame:
    """``data`` as a pandas frame with unique names (a polars or pyarrow frame converted),
    its ``object`` columns of numbers as float64 and its columns of dates or mixed values
    refused (formulaic would code each distinct value as a category), save the columns
    read inside ``C(...)`` of ``parsed``, which are categories whatever they hold, and
    those the formula does not read."""
    if isinstance(data, Mapping):
        data = pd.DataFrame(dict(data))
    columns = getattr(data, "columns", ())
    read = formula_columns(parsed) - categorical_columns(parsed)
    frame = numeric_columns(data, keep=[str(c) for c in columns if str(c) not in read])
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"a Formula reads its data from a DataFrame (pandas, polars or "
                        f"pyarrow; or a dict of columns), got {type(data).__name__}")
    return frame

#: Models whose cut-points are their intercepts: fitted without the formula's intercept.
_CUTPOINT_MODELS = (OrdinalRegression, BayesianOrdinalRegression)


class Formula(AllOrNothingFit, FormulaResults, MetaEstimatorMixin, BaseEstimator):
    """A problin estimator fitted to the design that a model formula builds from a DataFrame.

    Parameters
    ----------
    formula : str
        A Wilkinson formula, e.g. ``"admit ~ gre + gpa + C(rank)"`` (see the module
        docstring); the left-hand side names the response (a column, or a transform of
        one such as ``np.log(y)``). A one-sided formula (``"~ a + b"``) takes ``y`` in
        :meth:`fit`.
    estimator : estimator
        Any problin estimator; it is cloned. Its ``fit_intercept`` is set from the
        formula (an intercept unless ``- 1``); ``fit_intercept=False`` with a formula that
        has an intercept is an error. Estimators without ``fit_intercept`` (generative
        classifiers) get the design without its column of ones.

    Attributes
    ----------
    estimator_ : estimator
        The fitted clone, fitted on a DataFrame of the formula's columns.
    model_spec_ : formulaic.ModelSpec
        The formula's fitted encoding (levels, references, transform state).
    design_columns_ : list of str
        The formula's column names (``Intercept`` included where present).
    response_ : str or None
        The left-hand side of the formula.
    feature_names_in_ : ndarray of str
        The data columns the right-hand side reads.
    n_features_in_ : int

    Notes
    -----
    A formula model answers as the estimator it fitted (:mod:`problin._formula_results`):
    the estimator's fitted attributes (``coef_``, ``covariance_``, ``aic_``, ...), its
    methods that take no data (``summary``, ``summary_text`` naming the dependent
    variable, ``wald_test``) and those that take rows, given as raw ``data``
    (``predict_interval``, ``marginal_effects``, ``score``), each only where the estimator
    has it; :func:`problin.lr_test` compares two formula fits as their estimators.
    Warnings raised while the estimator fits point at the line that called :meth:`fit`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from problin import Formula, LinearRegression
    >>> df = pd.DataFrame({"y": [1., 3., 2., 5., 4., 7.], "x": [1., 2., 3., 4., 5., 6.],
    ...                    "g": ["a", "b", "a", "b", "a", "b"]})
    >>> model = Formula("y ~ x + C(g)", LinearRegression()).fit(df)
    >>> list(model.estimator_.feature_names_in_)
    ['x', 'C(g)[T.b]']
    """

    def __init__(self, formula: str, estimator: Any) -> None:
        formulaic_api()  # without formulaic: one error naming the extra, here
        self.formula = formula
        self.estimator = estimator

    # ------------------------------------------------------------------ parsing
    def _parse(self) -> Any:
        if not isinstance(self.formula, str) or not self.formula.strip():
            raise TypeError(f"formula must be a non-empty string, got {self.formula!r}")
        parsed = parse_formula(self.formula)  # checked first: formulaic's parser evaluates
        rhs = parsed.rhs if hasattr(parsed, "rhs") else parsed
        # (on the type: formulaic's required_variables is a property that evaluates)
        if not hasattr(type(rhs), "required_variables") or isinstance(rhs, tuple):
            raise ValueError(f"formula {self.formula!r}: only 'y ~ terms' formulas are "
                             "supported (no '|' parts)")
        return parsed

    # ---------------------------------------------------------------------- fit
    def fit(self, data: Any, y: Any = None, **fit_params: Any) -> Self:
        """Build the design from ``data`` and fit the estimator to it.

        Parameters
        ----------
        data : DataFrame
            The columns the formula names (the response among them, unless ``y``).
        y : array-like, optional
            The response of a one-sided formula (``"~ a + b"``).
        **fit_params
            Passed to the estimator's ``fit`` (``sample_weight=...``): a string names a
            column of ``data``, anything else is passed as it is.

        Returns
        -------
        self
        """
        parsed = self._parse()
        frame = _frame(data, parsed)
        rhs = parsed.rhs if hasattr(parsed, "rhs") else parsed
        lhs = parsed.lhs if hasattr(parsed, "rhs") else None
        self._check_columns(frame, formula_columns(parsed), f"formula {self.formula!r}")
        if lhs is not None and y is not None:
            raise ValueError(f"formula {self.formula!r} has a response; give y only with a "
                             "one-sided formula ('~ a + b')")
        if lhs is None and y is None:
            raise ValueError(f"formula {self.formula!r} has no response ('y ~ ...') and no "
                             "y was given")
        target = self._response(frame, lhs) if lhs is not None else y
        fm = formulaic_api()
        try:  # (levels outside C(g, levels=[...]): formulaic codes them as the reference)
            with warnings.catch_warnings():
                warnings.simplefilter("error", fm.DataMismatchWarning)
                matrix = design_matrix(rhs, frame, na_action="raise", ensure_full_rank=True,
                                       output="pandas")
        except (fm.FormulaicError, ValueError, fm.DataMismatchWarning) as exc:
            raise ValueError(f"formula {self.formula!r}: {exc}") from None
        columns = [str(c) for c in matrix.columns]
        if all(c == INTERCEPT for c in columns):  # else numpy's "at least one array" error
            raise ValueError(f"formula {self.formula!r} gives no feature columns (its design is "
                             f"{columns}): an intercept-only or empty right-hand side "
                             "('y ~ 1', 'y ~ 0') leaves nothing to fit; name at least one "
                             "column, e.g. 'y ~ x'")
        est = clone(self.estimator)
        has_intercept = INTERCEPT in columns
        if isinstance(est, _CUTPOINT_MODELS):
            # (R's polr: the intercept only sets the factors' treatment coding; the
            # cut-points are the model's intercepts, and its column is dropped)
            if not has_intercept:
                raise ValueError(f"formula {self.formula!r} drops the intercept: an ordinal "
                                 "model's cut-points are its intercepts, and without one "
                                 "every level of a factor would be a column beside them; "
                                 "keep the intercept (no '- 1')")
        elif "fit_intercept" in est.get_params(deep=False):
            if has_intercept and not est.get_params(deep=False)["fit_intercept"]:
                raise ValueError("the estimator has fit_intercept=False but the formula has an "
                                 "intercept: drop it in the formula ('... - 1') instead")
            est.set_params(fit_intercept=has_intercept)
        self._check_columns(frame, [v for v in fit_params.values() if isinstance(v, str)],
                            "fit parameters")
        params = {k: frame[v].to_numpy() if isinstance(v, str) else v
                  for k, v in fit_params.items()}
        with warnings_at_caller():  # (a warning of the fit names the user's line)
            est.fit(self._features(matrix, columns, frame.index), target, **params)
        self.estimator_ = est
        self.model_spec_ = matrix.model_spec
        self.design_columns_ = columns
        self.response_ = str(lhs) if lhs is not None else None
        # formulaic's required_variables miss the columns inside stateful transforms
        # (none for center(b), poly(a, 2)) and read a quoted `x.1` as x: the formula's
        # factors name them (problin._formula_columns).
        read = formula_columns(rhs)
        self.feature_names_in_ = np.asarray(
            [str(c) for c in frame.columns if c in read], dtype=object)
        self.n_features_in_ = len(self.feature_names_in_)
        return self

    @staticmethod
    def _check_columns(frame: pd.DataFrame, names: Iterable[str], what: str) -> None:
        missing = sorted(str(n) for n in names if n not in frame.columns)
        if missing:
            raise ValueError(_missing_message(missing, frame.columns, what))

    def _response(self, frame: pd.DataFrame, lhs: Any) -> np.ndarray:
        """The response: a column as it is (labels of any type), or a transform of one."""
        name = str(lhs)
        if name in frame.columns:
            return frame[name].to_numpy()
        fm = formulaic_api()
        try:
            values = design_matrix(lhs, frame, na_action="raise", output="pandas")
        except (fm.FormulaicError, ValueError) as exc:
            raise ValueError(f"formula {self.formula!r}: response {name!r}: {exc}") from None
        if values.shape[1] != 1:
            raise ValueError(f"formula {self.formula!r}: the response {name!r} gives "
                             f"{values.shape[1]} columns; write it as one numeric column")
        return np.asarray(values, dtype=np.float64)[:, 0]

    @staticmethod
    def _features(matrix: Any, columns: list[str], index: pd.Index) -> pd.DataFrame:
        """The design without its column of ones, as a float64 DataFrame."""
        keep = [j for j, c in enumerate(columns) if c != INTERCEPT]
        values = np.asarray(matrix, dtype=np.float64)[:, keep]
        return pd.DataFrame(values, columns=[columns[j] for j in keep], index=index)

    # ------------------------------------------------------------- new data
    def transform(self, data: Any) -> pd.DataFrame:
        """The design of new data (without the intercept column), encoded as at fit time.

        Raises
        ------
        ValueError
            If a column the formula reads is missing (the closest names are listed), a
            categorical column holds a level not seen at fit time (the column and the
            levels are named), or a value is missing.
        """
        check_is_fitted(self)
        frame = _frame(data, self._parse())
        self._check_columns(frame, self.feature_names_in_, f"formula {self.formula!r}")
        self._check_state_width()
        self._check_levels(frame)
        fm = formulaic_api()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", fm.DataMismatchWarning)
                # (a term wider than the fitted design is refused before it is built)
                matrix = design_matrix(self.model_spec_, frame,
                                       max_width=len(self.design_columns_), na_action="raise")
        except (fm.FormulaicError, ValueError, fm.DataMismatchWarning) as exc:
            raise ValueError(f"formula {self.formula!r}: {exc}") from None
        columns = [str(c) for c in matrix.columns]
        if columns != list(self.design_columns_):
            raise ValueError(f"formula {self.formula!r}: the data give the columns {columns}, "
                             f"not the fitted {list(self.design_columns_)}")
        return self._features(matrix, columns, frame.index)

    def _categories(self) -> Iterator[tuple[Any, str, list[Any]]]:
        """``(factor, column, levels)`` of each fitted categorical factor of one column
        (a transform of several columns is left to formulaic's own messages)."""
        fm = formulaic_api()
        for factor, (kind, state) in self.model_spec_.encoder_state.items():
            if fm.Factor.Kind(kind) is not fm.Factor.Kind.CATEGORICAL or \
                    "categories" not in state:
                continue
            try:
                variables = formula_columns(parse_formula(str(factor)))
            except (ValueError, TypeError):
                continue
            if len(variables) == 1:
                yield factor, str(next(iter(variables))), list(state["categories"])

    def _check_state_width(self) -> None:
        """A categorical factor of L levels gives at least L - 1 columns in every term that
        holds it: more levels than the fitted design can code are a damaged (or edited)
        model, refused before its columns are built (formulaic would allocate them)."""
        width = len(self.design_columns_)
        for factor, (_, state) in self.model_spec_.encoder_state.items():
            levels = len(state.get("categories", ()))
            if levels > width + 1:
                raise ValueError(f"formula {self.formula!r}: {factor} has {levels} fitted "
                                 f"levels, more than its design of {width} columns codes "
                                 "(a damaged or edited model)")

    def _text_columns(self) -> list[str]:
        """The columns read as categories whose fitted levels are all text: a file read
        for prediction must read them as text too (a column of "1", "2" and "x" at fit
        reads as integers where it holds only "1" and "2")."""
        return [column for _, column, levels in self._categories()
                if levels and all(isinstance(v, str) for v in levels)]

    def _check_levels(self, frame: pd.DataFrame) -> None:
        """An unseen level is an error naming the column (formulaic would make it NaN)."""
        for factor, column, levels in self._categories():
            if column not in frame.columns:
                continue
            seen = set(levels)
            unseen = sorted({v for v in frame[column].dropna().unique() if v not in seen},
                            key=str)
            if unseen:
                raise ValueError(
                    f"column {column!r} ({factor}) has levels not seen when the model was "
                    f"fitted: {unseen[:10]}; known levels: {levels[:20]}")

    def _design_and_rows(self, data: Any, kwargs: dict[str, Any]
                         ) -> tuple[pd.DataFrame, dict[str, Any]]:
        """The design of ``data`` and ``kwargs`` with each per-row argument given as a
        string (``offset="log_years"``) read as that column of ``data``, as :meth:`fit`
        reads its fit parameters."""
        named = {k: v for k, v in kwargs.items() if k in _ROW_ARGUMENTS and isinstance(v, str)}
        if not named:
            return self.transform(data), kwargs
        check_is_fitted(self)
        frame = _frame(data, self._parse())
        self._check_columns(frame, named.values(), "arguments")
        return self.transform(frame), {**kwargs, **{k: frame[v].to_numpy()
                                                    for k, v in named.items()}}

    # ------------------------------------------------------------- delegates
    @if_has("predict")
    def predict(self, data: Any, **kwargs: Any) -> Any:
        """The estimator's ``predict`` on the design of ``data`` (``offset=``,
        ``exposure=``: arrays, or the names of columns of ``data``)."""
        design, kwargs = self._design_and_rows(data, kwargs)
        return self.estimator_.predict(design, **kwargs)

    @if_has("predict_proba")
    def predict_proba(self, data: Any) -> Any:
        """The estimator's class probabilities on the design of ``data``."""
        return self.estimator_.predict_proba(self.transform(data))

    @if_has("predict_log_proba")
    def predict_log_proba(self, data: Any) -> Any:
        """The estimator's log class probabilities on the design of ``data``."""
        return self.estimator_.predict_log_proba(self.transform(data))

    @if_has("decision_function")
    def decision_function(self, data: Any) -> Any:
        """The estimator's linear predictors on the design of ``data``."""
        return self.estimator_.decision_function(self.transform(data))

    @if_has("predict_latent")
    def predict_latent(self, data: Any) -> Any:
        """The ordinal model's latent scores ``x^T beta`` on the design of ``data``."""
        return self.estimator_.predict_latent(self.transform(data))

    @if_has("signed_distance")
    def signed_distance(self, data: Any) -> Any:
        """The estimator's distances to its decision boundary, on the design of ``data``."""
        return self.estimator_.signed_distance(self.transform(data))

    @if_has("predict_interval")
    def predict_interval(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        """The estimator's prediction intervals on the design of ``data`` (``offset=``,
        ``exposure=``: arrays, or the names of columns of ``data``)."""
        design, kwargs = self._design_and_rows(data, kwargs)
        return self.estimator_.predict_interval(design, *args, **kwargs)

    @if_has("marginal_effects")
    def marginal_effects(self, data: Any = None, *args: Any, **kwargs: Any) -> Any:
        """The estimator's marginal effects of the formula's columns (at the design of
        ``data`` where given); rows are named by the formula's columns."""
        check_is_fitted(self)
        if data is None:
            return self.estimator_.marginal_effects(*args, **kwargs)
        design, kwargs = self._design_and_rows(data, kwargs)
        return self.estimator_.marginal_effects(design, *args, **kwargs)

    # ----------------------------------------------- slopes, comparisons, predictions
    def _effects_model(self, type: str) -> EffectsModel:
        return cast(EffectsModel, self.fitted_estimator()._effects_model(type))

    def _effects_draws(self, sampling: Sampling) -> Any:
        return self.fitted_estimator()._effects_draws(sampling)

    def _effects_data(self, data: Any) -> DataEncoding:
        """The data as the formula's variables (the columns it reads, categorical where
        the fitted encoding holds their levels), encoded by the fitted formula: so ``age``
        of ``age*children`` is one variable, differentiated through both columns."""
        check_is_fitted(self)
        frame = _frame(data, self._parse())
        self._check_columns(frame, self.feature_names_in_, f"formula {self.formula!r}")
        levels = {column: list(found) for _, column, found in self._categories()}
        variables = {str(v): levels.get(str(v)) for v in self.feature_names_in_}
        return DataEncoding(frame, variables,
                            lambda block: self.transform(block).to_numpy(dtype=np.float64))

    @if_has("slopes")
    def slopes(self, data: Any, variables: Any = None, **kwargs: Any) -> pd.DataFrame:
        """Average slopes of the formula's variables (data columns) through its encoding;
        see :meth:`problin.LogisticRegression.slopes`."""
        return slopes(self, data, variables, **kwargs)

    @if_has("comparisons")
    def comparisons(self, data: Any, variables: Any = None, **kwargs: Any) -> pd.DataFrame:
        """Average discrete changes of the formula's variables; see
        :meth:`problin.LogisticRegression.comparisons`."""
        return comparisons(self, data, variables, **kwargs)

    @if_has("predictions")
    def predictions(self, data: Any, **kwargs: Any) -> pd.DataFrame:
        """Average predictions; see :meth:`problin.LogisticRegression.predictions`."""
        return predictions(self, data, **kwargs)

    @if_has("score")
    def score(self, data: Any, y: Any = None, **kwargs: Any) -> float:
        """The estimator's score on ``data`` (the response read from it unless ``y``)."""
        check_is_fitted(self)
        frame = _frame(data, self._parse())
        y = self._response_or(frame, y, "score")
        design, kwargs = self._design_and_rows(frame, kwargs)
        return float(self.estimator_.score(design, y, **kwargs))

    @if_has("compute_covariance")
    def compute_covariance(self, data: Any, y: Any = None, **kwargs: Any) -> Self:
        """The estimator's ``compute_covariance`` on the design and response of the
        training ``data`` (``offset=``, ``sample_weight=``: arrays or column names)."""
        design, y, kwargs = self._training_rows(data, y, kwargs, "compute the covariance")
        self.estimator_.compute_covariance(design, y, **kwargs)
        return self

    def _training_rows(self, data: Any, y: Any, rows: dict[str, Any], what: str
                       ) -> tuple[pd.DataFrame, Any, dict[str, Any]]:
        """The design of the training ``data``, its response (unless ``y``) and the
        per-row arguments ``rows`` read (column names) as :meth:`fit` reads them."""
        check_is_fitted(self)
        frame = _frame(data, self._parse())
        y = self._response_or(frame, y, what)
        design, rows = self._design_and_rows(frame, rows)
        return design, y, rows

    @if_has("predict_activation")
    def predict_activation(self, data: Any) -> Any:
        """The estimator's activation mean and variance on the design of ``data``."""
        return self.estimator_.predict_activation(self.transform(data))

    @if_has("score_samples")
    def score_samples(self, data: Any) -> Any:
        """The estimator's log density of the design rows of ``data``."""
        return self.estimator_.score_samples(self.transform(data))

    def response(self, data: Any) -> np.ndarray:
        """The response the formula's left-hand side reads from ``data`` (a column as it
        is, or a transform of one).

        Raises
        ------
        ValueError
            For a one-sided formula, or data without the columns the response reads.
        """
        check_is_fitted(self)
        return cast(np.ndarray, self._response_or(_frame(data, self._parse()), None,
                                                  "read its response"))

    def _response_or(self, frame: pd.DataFrame, y: Any, what: str) -> Any:
        """``y``, or where it is None the response the formula reads from ``frame``."""
        if y is not None:
            return y
        parsed = self._parse()
        if not hasattr(parsed, "lhs"):
            raise ValueError(f"a one-sided formula needs y to {what}")
        return self._response(frame, parsed.lhs)

    @property
    def classes_(self) -> np.ndarray:
        """The class labels of a fitted classifier."""
        check_is_fitted(self)
        return np.asarray(self.estimator_.classes_)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        return tags
