"""After decoding: does the model file's estimator work? One row through every prediction.

The checksum of a model file is an integrity check that anyone can recompute, so a file
whose fitted state was edited (``classes_`` emptied, ``_result`` replaced by a number, an
array of the wrong shape or dtype) decodes into an estimator of a whitelisted class that
fails later, inside ``predict``, with an ``AttributeError`` or ``IndexError`` from deep in
problin. Most of its state has no declared type to check (:mod:`._types` checks what is
declared), and which attributes a class needs depends on its parameters. So the loaded
estimator is asked to do its job once, on a single row of zeros, by every prediction
method it has, and what it returns is held to scikit-learn's contract (one row out; one
probability per class; a predicted label among ``classes_``). Any exception, or a broken
contract, makes the file a :class:`ModelFileError` naming the method and the failure.

Why this is sound for every class of the whitelist:

- A row of zeros of ``n_features_in_`` columns is valid input to each of problin's
  estimators, to ``StandardScaler``/``MinMaxScaler`` and to a Pipeline of them (zero is a
  valid count for the naive Bayes models; the far-row code keeps predictions at any row
  finite). It is passed as an array, the form the command line uses, so an estimator
  fitted on a DataFrame warns that it has no feature names (the warning is dropped here).
  A model that encodes categorical DataFrame columns (``input_encoding_``, its own or
  that of the estimator reading its input first) may take no array at all (BayesDecision
  counts the raw columns): it gets one raw row built from its encoding instead (zero,
  and each categorical column's reference level), after the encoding's sizes are held
  to the model's width and the caps of :mod:`._encodings`.
- A :class:`~problin.Formula` evaluates its formula on raw columns, where zeros may be
  outside the domain (``np.log(x)``) or an unseen level: its fitted estimator is probed
  instead, on a DataFrame of the formula's columns (what the formula hands it), and the
  formula's own state is checked for shape (its spec is rebuilt by ``_formula_state``).
- Prediction has no side effects on the estimator (tests/io/test_model_file_state.py
  compares the whole state before and after the check), uses no randomness by default
  (Monte Carlo prediction is an option never asked for here) and costs one row: O(p) to
  O(K p^2), far below reading the arrays.
- The probe width is bounded by the number of stored values: a model of p features
  stores at least p numbers, so a tampered ``n_features_in_`` cannot make the probe
  allocate more than the file's own arrays.

What this does not check: the numbers themselves (a re-signed file may hold any finite or
NaN coefficients, as the format allows) and methods beyond prediction (``summary()``,
``wald_test``), whose cost is not one row's; a failure there stays a Python exception
(the command line reports it in one line).
"""
import inspect
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from ..formula import INTERCEPT, Formula
from ..naive_bayes import ExponentialFamilyNB
from ._encodings import encoding_problem
from .errors import ModelFileError

__all__ = ["check_model_works"]

_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform")
_PROBA = ("predict_proba", "predict_log_proba")


class _Broken(Exception):
    """What is wrong with the loaded model, raised inside this module only."""


def check_model_works(model: Any, path: Any, n_values: int,
                      is_estimator: Callable[[object], bool]) -> None:
    """Raise :class:`ModelFileError` unless ``model`` predicts one row (module docstring).

    ``n_values`` is the number of values in the file's arrays (bounds the probe width);
    ``is_estimator`` tells whether an object is of a whitelisted estimator class.
    """
    if _unfitted(model):
        return  # saved unfitted (save allows it): no state to check, predict says so itself
    try:
        _check(model, "model", n_values, is_estimator)
    except _Broken as exc:
        raise ModelFileError(f"{path}: the fitted state does not make a working model: "
                             f"{exc}") from exc.__cause__
    except Exception as exc:  # the checks themselves read untrusted state: same verdict
        raise ModelFileError(f"{path}: the fitted state does not make a working model "
                             f"({type(exc).__name__}: {exc})") from exc


def _unfitted(model: Any) -> bool:
    try:
        check_is_fitted(model)
    except NotFittedError:
        return True
    except Exception:  # broken state, not an unfitted model: the checks name the problem
        return False
    return False


def _check(est: Any, where: str, n_values: int, is_estimator: Callable[[object], bool],
           columns: list[str] | None = None) -> None:
    """Probe ``est``; ``columns``: the names of the DataFrame a formula hands it."""
    if isinstance(est, Formula):
        inner, features = _check_formula(est, where, is_estimator)
        _check(inner, f"{where}.estimator_", n_values, is_estimator, features)
        return
    steps = _pipeline_steps(est, where) if isinstance(est, Pipeline) else None
    if steps is not None and any(isinstance(s, Formula) for s in steps):
        for i, step in enumerate(steps):  # a formula step reads a DataFrame: each on its own
            _check(step, f"{where}.steps[{i}]", n_values, is_estimator)
        return
    width = _width(steps[0] if steps else est, where, n_values)
    _contract(est, where, width)
    encoding = _input_encoding(est, where)
    if encoding is not None:  # the model reads raw DataFrame columns: one raw row
        # its sizes first, before a row is built from them (the width is the encoding's
        # holder's: the model's or its first step's, not a meta-estimator's raw columns)
        holder = steps[0] if steps else est
        own = "input_encoding_" in getattr(holder, "__dict__", {})
        problem = encoding_problem(encoding, width if own else None, None)
        if problem:
            raise _Broken(f"{where}.input_encoding_: {problem}")
        _probe(est, where, _raw_row(encoding, where))
        return
    zeros = np.zeros((1, width))
    if isinstance(est, ExponentialFamilyNB):  # its Gamma columns exclude 0; 1 suits all
        zeros[:] = 1.0
    _probe(est, where, zeros if columns is None else pd.DataFrame(zeros, columns=columns))


def _input_encoding(est: Any, where: str) -> Any:
    """The encoding of categorical DataFrame columns (``input_encoding_``) that the model
    applies to its input: its own, or that of what reads its input first (the first step
    of a Pipeline; the wrapped ``estimator_`` of a meta-estimator such as BayesDecision,
    which hands its input on as it is)."""
    for _ in range(100):  # nesting is finite in a decoded file; the bound is a safeguard
        state = getattr(est, "__dict__", {})
        if "input_encoding_" in state:
            return state["input_encoding_"]
        if isinstance(est, Pipeline):
            est = _pipeline_steps(est, where)[0]
        elif "estimator_" in state:
            est = state["estimator_"]
        else:
            return None
    return None


def _pipeline_steps(pipe: Pipeline, where: str) -> list[Any]:
    steps = pipe.steps
    if not isinstance(steps, list) or not steps or not all(
            isinstance(s, tuple) and len(s) == 2 for s in steps):
        raise _Broken(f"{where}.steps is not a list of (name, estimator) pairs")
    kept = [s for _, s in steps if s is not None and not isinstance(s, str)]  # "passthrough"
    if not kept:
        raise _Broken(f"{where}.steps holds no estimator")
    return kept


def _check_formula(f: Formula, where: str,
                   is_estimator: Callable[[object], bool]) -> tuple[Any, list[str]]:
    """The fitted estimator of a formula and the names of the columns the formula gives it,
    after checking the formula's fitted state."""
    inner = getattr(f, "estimator_", None)
    if not is_estimator(inner):
        raise _Broken(f"{where}.estimator_ is not a fitted problin estimator")
    if getattr(f, "model_spec_", None) is None:
        raise _Broken(f"{where} lacks its fitted formula (model_spec_)")
    columns = getattr(f, "design_columns_", None)
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise _Broken(f"{where}.design_columns_ is not a list of column names")
    if getattr(f, "feature_names_in_", None) is None:  # the columns transform() reads
        raise _Broken(f"{where} lacks feature_names_in_")
    _names(f, where, getattr(f, "n_features_in_", None))
    features = [c for c in columns if c != INTERCEPT]
    if getattr(inner, "n_features_in_", None) != len(features):
        raise _Broken(f"{where}: the formula gives {len(features)} columns, its estimator "
                      f"takes {getattr(inner, 'n_features_in_', None)!r}")
    return inner, features


def _width(est: Any, where: str, n_values: int) -> int:
    width = _attribute(est, "n_features_in_", where)
    if not isinstance(width, numbers.Integral) or isinstance(width, (bool, np.bool_)):
        raise _Broken(f"{where}.n_features_in_ is {_shown(width)}, not a number of features")
    if not 1 <= int(width) <= n_values:
        raise _Broken(f"{where}.n_features_in_ = {width}: the file holds {n_values} values, "
                      "fewer than one per feature")
    return int(width)


def _names(est: Any, where: str, width: Any) -> None:
    names = getattr(est, "feature_names_in_", None)
    if names is not None and not (
            isinstance(names, np.ndarray) and names.ndim == 1 and len(names) == width
            and all(isinstance(n, str) for n in names)):
        raise _Broken(f"{where}.feature_names_in_ is {_shown(names)}, not an array of "
                      f"n_features_in_ = {width!r} column names")


def _contract(est: Any, where: str, width: int) -> None:
    """scikit-learn's fitted attributes: feature names, and the classes of a classifier."""
    _names(est, where, width)
    if is_classifier(est):
        classes = _attribute(est, "classes_", where)
        if not (isinstance(classes, np.ndarray) and classes.ndim == 1 and classes.size):
            raise _Broken(f"{where}.classes_ is {_shown(classes)}, not a non-empty array of "
                          "class labels")


def _attribute(est: Any, name: str, where: str) -> Any:
    try:
        return getattr(est, name)
    except Exception as exc:  # a property (Pipeline, Formula) reading broken state
        raise _Broken(f"{where} lacks {name} ({type(exc).__name__}: {exc})") from exc


def _shown(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"an array of {v.dtype} of shape {v.shape}"
    return repr(v)[:60]


def _probe(est: Any, where: str, X: Any, methods: tuple[str, ...] = _METHODS) -> None:
    classes = getattr(est, "classes_", None) if is_classifier(est) else None
    for name in methods:
        if not hasattr(est, name):
            continue
        method = getattr(est, name)
        calls: list[dict[str, Any]] = [{}]
        if name == "predict" and _takes(method, "return_std"):
            calls.append({"return_std": True})  # the predictive std: `predict --proba`
        for kwargs in calls:
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    out = method(X, **kwargs)
                problem = _breach(name, out, classes)
            except Exception as exc:  # any failure on a valid row: the state is broken
                raise _Broken(f"{where}.{name} fails on a row of zeros "
                              f"({type(exc).__name__}: {exc})") from exc
            if problem:
                raise _Broken(f"{where}.{name} on a row of zeros {problem}")


def _breach(name: str, out: Any, classes: np.ndarray | None) -> str | None:
    """How ``out`` breaks the prediction contract on one row, or None."""
    parts = out if isinstance(out, tuple) else (out,)
    for part in parts:
        shape = np.shape(part)
        if not shape or shape[0] != 1:
            return f"gives shape {shape}, not one row"
    if classes is None:
        return None
    if name in _PROBA and np.shape(out) != (1, classes.size):
        return f"gives shape {np.shape(out)}, not one column per class ({classes.size})"
    if name == "predict" and not any(np.asarray(out)[0] == c for c in classes):
        return f"predicts {np.asarray(out)[0]!r}, not one of classes_"
    return None


def _takes(method: Any, arg: str) -> bool:
    try:
        return arg in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _raw_row(encoding: Any, where: str) -> pd.DataFrame:
    """One raw row under an estimator's ``input_encoding_`` (:mod:`problin._frames`):
    zero in numeric columns, the reference (first) level in categorical ones."""
    try:
        row = {}
        for col in encoding["columns"]:
            row[str(col["name"])] = [0.0 if col["kind"] == "numeric"
                                     else str(col["categories"][0])]
        return pd.DataFrame(row)
    except (KeyError, TypeError, IndexError) as exc:
        raise _Broken(f"{where}.input_encoding_ is malformed ({type(exc).__name__}: "
                      f"{exc})") from exc
