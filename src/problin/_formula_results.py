"""What a :class:`~problin.Formula` answers for the estimator it fitted: its results.

A formula model is the wrapped estimator fitted to the formula's design, so its fitted
attributes and the methods that need no data are the estimator's. They are delegated by
declaration, never by ``__getattr__``: each fitted attribute is a :class:`Fitted`
descriptor named in :class:`FormulaResults` (typed, listed by ``dir``, documented), and
each method exists only where the fitted estimator has it (scikit-learn's
``available_if``), so ``hasattr(model, "summary")`` answers as for the estimator. An
attribute the estimator lacks is an ``AttributeError`` naming the estimator, raised by the
estimator's own lookup (a property of the estimator that fails inside says its own
error); before ``fit``, scikit-learn's ``NotFittedError``.

The inference protocols read a formula as they read an estimator: :func:`~problin.lr_test`
reads ``NestedFit`` (the likelihood statistics are declared here with their types, and
``likelihood_fit`` hands the test the fitted estimator, so that its class and penalty
checks see what the formulas wrap); ``summary_text`` is the estimator's with the
dependent variable first in the header (statsmodels' "Dep. Variable").

Warnings raised while the estimator fits are re-issued at the caller's line
(:func:`warnings_at_caller`): the first frame outside problin, which is where the user's
``Formula(...).fit(data)`` is, not problin's own wrapper code.
"""
import sys
import warnings
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar, cast, overload

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .exceptions import caller_frame
from .inference import hypothesis
from .inference.hypothesis import NestedFit, Restrictions, TestResult
from .inference.text import SummaryText

__all__ = ["Fitted", "FormulaResults", "if_has", "warnings_at_caller"]

T = TypeVar("T")
_F = TypeVar("_F", bound=Callable[..., Any])
FloatArray = NDArray[np.float64]


def if_has(method: str) -> Callable[[_F], _F]:
    """A method that exists (``hasattr``) only where the fitted, else the given,
    estimator has ``method`` (scikit-learn's ``available_if``)."""
    def check(self: Any) -> bool:
        return hasattr(getattr(self, "estimator_", self.estimator), method)
    return cast(Callable[[_F], _F], available_if(check))


class Fitted(Generic[T]):
    """A fitted attribute of the estimator a formula wrapped, read through the formula
    (a non-data descriptor: the formula's own attributes of that name would win)."""

    name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> "Fitted[T]": ...

    @overload
    def __get__(self, obj: "FormulaResults", owner: type) -> T: ...

    def __get__(self, obj: "FormulaResults | None", owner: type) -> "T | Fitted[T]":
        if obj is None:
            return self
        estimator = obj.fitted_estimator()
        try:
            return cast(T, getattr(estimator, self.name))
        except AttributeError as exc:
            if exc.name != self.name or exc.obj is not estimator:
                raise  # (the estimator's own property failed: its message)
            raise AttributeError(f"{type(estimator).__name__} has no fitted attribute "
                                 f"{self.name!r} (the estimator of Formula({obj.formula!r}))",
                                 name=self.name, obj=obj) from None


class warnings_at_caller:  # (lower case: a context manager, as contextlib.suppress)
    """Re-issue the warnings of a ``with`` block at the first frame outside problin (the
    user's line), through the caller's filters and registry, as ``warnings.warn`` with
    the right ``stacklevel`` would (Python 3.12's ``skip_file_prefixes``). An "error"
    filter therefore raises when the block has finished, not inside it; a block that
    raises drops its warnings with it."""

    def __enter__(self) -> None:
        self._catcher = warnings.catch_warnings(record=True)
        self._caught = self._catcher.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, kind: type[BaseException] | None, *rest: Any) -> None:
        self._catcher.__exit__(kind, *rest)
        if kind is not None or not self._caught:
            return
        # (from the frame of the with statement, inside problin)
        frame = caller_frame(sys._getframe(1))[0]
        # (as warnings.warn does: the caller's module and registry, no module_globals,
        # whose loader may not give source, e.g. a script read from stdin)
        registry = frame.f_globals.setdefault("__warningregistry__", {})
        for w in self._caught:
            warnings.warn_explicit(w.message, w.category, frame.f_code.co_filename,
                                   frame.f_lineno, module=frame.f_globals.get("__name__"),
                                   registry=registry, source=w.source)


class FormulaResults:
    """The fitted estimator's results on a formula: its fitted attributes (declared
    below; ``n_features_in_``, ``feature_names_in_`` and ``classes_`` are the
    formula's own), the inference protocols and the methods that take no data."""

    formula: str
    estimator: Any
    estimator_: Any  # any problin estimator
    response_: str | None

    # --- likelihood statistics: what lr_test reads (NestedFit), typed
    n_obs_: Fitted[float] = Fitted()
    df_resid_: Fitted[float] = Fitted()
    df_model_: Fitted[float] = Fitted()
    log_likelihood_: Fitted[float | None] = Fitted()
    null_log_likelihood_: Fitted[float] = Fitted()
    deviance_: Fitted[float] = Fitted()
    null_deviance_: Fitted[float] = Fitted()
    scale_: Fitted[float] = Fitted()
    # --- the other model statistics
    aic_: Fitted[float] = Fitted()
    bic_: Fitted[float] = Fitted()
    pseudo_r2_: Fitted[float] = Fitted()
    lr_statistic_: Fitted[float] = Fitted()
    lr_pvalue_: Fitted[float] = Fitted()
    pearson_chi2_: Fitted[float] = Fitted()
    r2_: Fitted[float] = Fitted()
    adj_r2_: Fitted[float] = Fitted()
    f_statistic_: Fitted[float] = Fitted()
    f_pvalue_: Fitted[float] = Fitted()
    condition_number_: Fitted[float] = Fitted()
    log_evidence_: Fitted[float] = Fitted()
    scale_estimated_: Fitted[bool] = Fitted()
    cov_type_: Fitted[str] = Fitted()
    # --- parameters and their covariance
    coef_: Fitted[FloatArray] = Fitted()
    intercept_: Fitted[FloatArray | float] = Fitted()
    covariance_: Fitted[FloatArray] = Fitted()
    cutpoints_: Fitted[FloatArray] = Fitted()  # (an ordinal model's)
    theta_map_: Fitted[FloatArray] = Fitted()  # (the Bayesian ordinal model's MAP)
    identified_: Fitted[NDArray[np.bool_]] = Fitted()
    alpha_: Fitted[float] = Fitted()
    alpha_se_: Fitted[float] = Fitted()
    beta_: Fitted[float] = Fitted()
    gamma_: Fitted[float] = Fitted()
    noise_precision_: Fitted[float] = Fitted()
    posterior_mean_: Fitted[FloatArray] = Fitted()
    posterior_cov_: Fitted[FloatArray] = Fitted()
    rank_: Fitted[int] = Fitted()
    threshold_: Fitted[float] = Fitted()
    # --- the fit's path
    converged_: Fitted[bool] = Fitted()
    n_iter_: Fitted[int] = Fitted()
    solver_: Fitted[str] = Fitted()
    history_: Fitted[list[float]] = Fitted()
    loss_curve_: Fitted[list[float]] = Fitted()
    # --- generative classifiers and basis transformers (in the design's columns)
    priors_: Fitted[FloatArray] = Fitted()
    means_: Fitted[FloatArray] = Fitted()
    covariances_: Fitted[FloatArray] = Fitted()
    class_count_: Fitted[FloatArray] = Fitted()
    class_prior_: Fitted[FloatArray] = Fitted()
    class_log_prior_: Fitted[FloatArray] = Fitted()
    feature_count_: Fitted[FloatArray] = Fitted()
    feature_log_prob_: Fitted[FloatArray] = Fitted()
    theta_: Fitted[FloatArray] = Fitted()
    var_: Fitted[FloatArray] = Fitted()
    epsilon_: Fitted[float] = Fitted()
    distributions_: Fitted[list[str]] = Fitted()
    params_: Fitted[list[FloatArray]] = Fitted()
    components_: Fitted[FloatArray] = Fitted()
    explained_variance_ratio_: Fitted[FloatArray] = Fitted()
    mean_: Fitted[FloatArray] = Fitted()
    moments_: Fitted[Any] = Fitted()  # (a basis transformer's running moments record)
    centers_: Fitted[FloatArray] = Fitted()
    width_: Fitted[float] = Fitted()
    t_: Fitted[FloatArray] = Fitted()

    def fitted_estimator(self) -> Any:
        """The fitted estimator (scikit-learn's ``NotFittedError`` before ``fit``)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_

    # --------------------------------------------------------------- inference
    @if_has("lr_reference")
    def lr_reference(self) -> Literal["chi2", "F"]:
        """The estimator's reference distribution of likelihood-ratio tests."""
        return cast(Literal["chi2", "F"], self.fitted_estimator().lr_reference())

    def likelihood_fit(self) -> NestedFit:
        """The fitted estimator, whose likelihood :func:`~problin.lr_test` compares (its
        class and penalty, not the formula's, are checked); a ValueError naming an
        estimator that has none."""
        return hypothesis.likelihood_fit(self.fitted_estimator())

    def _training_rows(self, data: Any, y: Any, rows: dict[str, Any], what: str
                       ) -> tuple[pd.DataFrame, Any, dict[str, Any]]:
        """The design, response and per-row arguments of the training ``data`` (the
        formula reads them; see :class:`~problin.Formula`)."""
        raise NotImplementedError

    def _refit_rows(self, data: Any, y: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with the estimator's ``X, y`` read from the training ``data``: what
        the refits of profile intervals and likelihood-ratio tests need."""
        if data is None:
            return kwargs if y is None else {**kwargs, "y": y}
        design, y, rows = self._training_rows(data, y, kwargs, "refit the model")
        return {**rows, "X": design, "y": y}

    @if_has("summary")
    def summary(self, *args: Any, data: Any = None, y: Any = None, **kwargs: Any
                ) -> pd.DataFrame:
        """The estimator's coefficient table; rows are named by the formula's columns.
        ``ci="profile"`` and ``pvalues="lr"`` refit on the training ``data`` (its design
        and response; ``sample_weight=``, ``offset=``: arrays or column names)."""
        table = cast(pd.DataFrame, self.fitted_estimator().summary(
            *args, **self._refit_rows(data, y, kwargs)))
        table.attrs["formula"] = self.formula
        return table

    @if_has("summary_text")
    def summary_text(self, *args: Any, data: Any = None, y: Any = None, **kwargs: Any
                     ) -> SummaryText:
        """The estimator's text summary, its header naming the dependent variable
        (statsmodels' "Dep. Variable": the formula's left-hand side, or ``y`` for a
        one-sided formula fitted with ``y``), its rows the formula's full column names;
        ``data`` as in :meth:`summary`."""
        text = cast(SummaryText, self.fitted_estimator().summary_text(
            *args, **self._refit_rows(data, y, kwargs)))
        return text.with_header("Dep. Variable", self.response_ or "y")

    @if_has("restricted_lr_test")
    def restricted_lr_test(self, R: Restrictions, q: Any = None, *, data: Any, y: Any = None,
                           **kwargs: Any) -> TestResult:
        """The estimator's likelihood-ratio test of ``R beta = q`` refitted on the
        training ``data``; restrictions name the formula's columns."""
        return cast(TestResult, self.fitted_estimator().restricted_lr_test(
            R, q, **self._refit_rows(data, y, kwargs)))

    @if_has("brant_test")
    def brant_test(self, data: Any, y: Any = None, **kwargs: Any) -> Any:
        """The ordinal estimator's Brant test of proportional odds on the training ``data``
        (its design and response; ``sample_weight=``: an array or a column name)."""
        rows = self._refit_rows(data, y, kwargs)
        return self.fitted_estimator().brant_test(rows.pop("X"), rows.pop("y"), **rows)

    @if_has("proportional_odds_lr_test")
    def proportional_odds_lr_test(self, data: Any, y: Any = None, variables: Any = None,
                                  **kwargs: Any) -> Any:
        """The ordinal estimator's likelihood-ratio test of proportional odds on the training
        ``data``; ``variables`` name the formula's columns (default all)."""
        rows = self._refit_rows(data, y, kwargs)
        return self.fitted_estimator().proportional_odds_lr_test(
            rows.pop("X"), rows.pop("y"), variables=variables, **rows)

    @if_has("wald_test")
    def wald_test(self, R: Restrictions, *args: Any, **kwargs: Any) -> TestResult:
        """The estimator's Wald test; restrictions name the formula's columns
        (``"C(rank)[T.2] = 0, gre = gpa"``)."""
        return cast(TestResult, self.fitted_estimator().wald_test(R, *args, **kwargs))

    @if_has("parameter_names")
    def parameter_names(self) -> list[str]:
        """The estimator's parameter names (an ordinal model's slopes by the formula's
        columns, then its cut-points)."""
        return cast(list[str], self.fitted_estimator().parameter_names())

    @if_has("extra_parameters")
    def extra_parameters(self) -> list[tuple[str, float, float]]:
        """The estimator's parameters outside the linear predictor (the negative
        binomial's alpha), as ``(name, value, std_err)``."""
        return cast(list[tuple[str, float, float]],
                    self.fitted_estimator().extra_parameters())

    @if_has("get_family")
    def get_family(self) -> Any:
        """The GLM regressor's fitted family (distribution x link)."""
        return self.fitted_estimator().get_family()

    @if_has("sample_posterior")
    def sample_posterior(self, *args: Any, **kwargs: Any) -> FloatArray:
        """Draws of the estimator's posterior parameters (in the order of its
        ``coef_``, named by the formula's columns)."""
        return cast(FloatArray, self.fitted_estimator().sample_posterior(*args, **kwargs))

    @if_has("sample")
    def sample(self, *args: Any, **kwargs: Any) -> Any:
        """Draws of the generative classifier, in the formula's design columns."""
        return self.fitted_estimator().sample(*args, **kwargs)
