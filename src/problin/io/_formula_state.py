"""A fitted formula's encoding (formulaic's ``ModelSpec``) as plain data in a model file.

formulaic offers no serialisation but pickle, which a model file never holds (loading
must execute nothing from the file). What a fitted spec adds to its formula text is data:
the levels of each categorical factor (whose contrasts, reference level included, follow
from the formula text and the levels) and the state of stateful transforms such as
``center(x)`` (numbers). :func:`spec_to_data` keeps these; :func:`spec_from_data` rebuilds
the spec, and the formula's columns are checked against the fitted ones at the first
prediction (:meth:`problin.Formula.transform`).

A formula read from a file is checked before formulaic parses it, by the same check as
at fit (:func:`problin._formula_design.check_formula`: the formula language, no Python is
evaluated), and its fitted state is bounded before anything is built from it: a
categorical factor's levels and every list of a transform's state (knots, polynomial
coefficients) hold at most ``MAX_STATE_ITEMS`` entries, the transforms are at most
``MAX_TERMS``, and the encoders name factors of the formula. (At prediction the levels are
also checked against the fitted design's width, and a term wider than it is refused before
it is built: :meth:`problin.Formula.transform`.)

The stored state records the version of the formula language it was written under
(``language``; files without it are version 1, written before formulas were a checked
language: they evaluated Python). A file whose formula is outside this version's language,
or whose state does not read, says which version wrote it and that the model must be
refitted, instead of calling it malformed.
"""
import keyword
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._formula_design import MAX_TERMS, check_formula
from .._formula_language import MAX_BASIS
from ..formula import formulaic_api  # formulaic, imported on first use (the formula extra)

__all__ = ["FORMULA_LANGUAGE", "MAX_STATE_ITEMS", "check_formula_is_data", "spec_from_data",
           "spec_to_data"]

# 1: formulas evaluated as Python by formulaic (no version recorded); 2: the checked
# language of problin._formula_language, evaluated by problin.
FORMULA_LANGUAGE = 2
# Knots of a spline of MAX_BASIS degrees of freedom and degree, with their boundary
# repeats; poly's coefficients by degree.
MAX_STATE_ITEMS = 2 * MAX_BASIS + 8


def check_formula_is_data(formula: str, language: Any = FORMULA_LANGUAGE) -> None:
    """Raise ValueError unless ``formula`` is in the formula language (nothing is
    evaluated); ``language``: the version of the formula state stored with it (None:
    none stored), named in the message."""
    if language is None:
        language = FORMULA_LANGUAGE
    try:
        check_formula(formula)
    except (ValueError, TypeError) as exc:
        raise ValueError(_versioned(str(exc), language)) from None


def _versioned(message: str, language: Any) -> str:
    if language == FORMULA_LANGUAGE:
        return message
    if not isinstance(language, int) or isinstance(language, bool) or language < 1:
        return f"the formula state's language version {language!r} is not a version ({message})"
    if language > FORMULA_LANGUAGE:
        return (f"the formula was written by a newer problin (formula language version "
                f"{language}; this problin reads versions up to {FORMULA_LANGUAGE}): upgrade "
                f"problin to load it ({message})")
    return (f"the formula was written by an older problin (formula language version 1, "
            f"before version {FORMULA_LANGUAGE}: formulas checked as a language, no Python "
            f"evaluated) and this problin cannot read it: refit the model and save it again "
            f"({message})")


def _plain(values: Any, where: str) -> np.ndarray:
    """Category levels as an array of one plain type (strings, numbers or booleans)."""
    levels = list(values)
    a = np.asarray(levels)
    if a.dtype.kind not in "biufU" or (a.dtype.kind == "U" and
                                        not all(isinstance(v, str) for v in levels)):
        raise TypeError(f"cannot save the levels of {where}: they are not all strings, all "
                        "numbers or all booleans")
    return a


def spec_to_data(spec: Any) -> dict[str, Any]:
    """The fitted state of a formulaic ``ModelSpec`` as plain data (see the module
    docstring); :func:`spec_from_data` rebuilds the spec from it."""
    Factor = formulaic_api().Factor
    encoders = {}
    for factor, (kind, state) in spec.encoder_state.items():
        entry: dict[str, Any] = {"kind": Factor.Kind(kind).value}
        if "categories" in state:
            entry["categories"] = _plain(state["categories"], factor)
        encoders[str(factor)] = entry
    return {"language": FORMULA_LANGUAGE,
            "formula": _text(spec.formula, _has_intercept(spec.formula)),
            "ensure_full_rank": bool(spec.ensure_full_rank),
            "encoders": encoders, "transforms": _keyed_by_text(dict(spec.transform_state))}


# A transform's state may key numbers by integers (``poly``: its recurrence's
# coefficients by degree); a model file's mappings are keyed by text, so such a
# mapping is stored as its (key, value) pairs under this one key.
_INTEGER_KEYS = "integer-keyed pairs"


def _keyed_by_text(state: Any) -> Any:
    """``state`` with every mapping whose keys are integers stored as its pairs."""
    if not isinstance(state, Mapping):
        return state
    if state and all(isinstance(k, (int, np.integer)) for k in state):
        return {_INTEGER_KEYS: [[int(k), _keyed_by_text(v)] for k, v in state.items()]}
    return {k: _keyed_by_text(v) for k, v in state.items()}


def _integer_keys_restored(state: Any) -> Any:
    """The inverse of :func:`_keyed_by_text`."""
    if not isinstance(state, Mapping):
        return state
    if set(state) == {_INTEGER_KEYS}:
        pairs = state[_INTEGER_KEYS]
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], int) for p in pairs):
            raise TypeError("integer-keyed transform state is not a list of [int, value] pairs")
        return {k: _integer_keys_restored(v) for k, v in pairs}
    return {k: _integer_keys_restored(v) for k, v in state.items()}


def _has_intercept(formula: Any) -> bool:
    return any(str(term) == "1" for term in formula)


def _factor_text(factor: Any) -> str:
    """A factor as formula text: a column whose name is no identifier in backticks
    (formulaic writes `my col` as my col, which does not parse back)."""
    expr = str(factor.expr)
    lookup = factor.eval_method is formulaic_api().Factor.EvalMethod.LOOKUP
    if lookup and not (expr.isidentifier() and not keyword.iskeyword(expr)):
        return f"`{expr}`"
    return expr


def _text(formula: Any, intercept: bool) -> str:
    """A fitted formula's right-hand side as text that parses back to the same terms:
    formulaic writes ``a + b - 1`` as ``a + b``, which would parse with an intercept,
    and quoted column names unquoted."""
    if isinstance(formula, str):
        text = formula
    else:
        text = " + ".join(":".join(_factor_text(f) for f in term.factors) for term in formula)
    return text if intercept or not _has_intercept(formulaic_api().Parsed(text)) else \
        f"{text} - 1"


def spec_from_data(data: Mapping[str, Any], intercept: bool | None = None) -> Any:
    """The ``ModelSpec`` stored by :func:`spec_to_data`.

    ``intercept``: whether the fitted design has an intercept column, where known (a file
    written before :func:`spec_to_data` kept a formula's ``- 1`` has it only there).

    Raises
    ------
    ValueError
        If the data are malformed, larger than the bounds of the module docstring, or the
        formula is outside the formula language (:func:`check_formula_is_data`); a file
        of another formula language version says so.
    """
    fm = formulaic_api()
    language = data.get("language", 1) if isinstance(data, Mapping) else FORMULA_LANGUAGE
    if language != 1 and language != FORMULA_LANGUAGE:  # (a newer one, or no version)
        raise ValueError(_versioned("its formula state is of another layout", language))
    try:
        formula = data["formula"]
        if not isinstance(formula, str):
            raise TypeError("the formula is not a string")
        check_formula(formula)
        if intercept is False:
            formula = _text(formula, False)
        spec = fm.ModelSpec(formula=formula, materializer="pandas",
                            ensure_full_rank=bool(data["ensure_full_rank"]), na_action="raise",
                            output="pandas")
        factors = {str(f.expr) for term in spec.formula for f in term.factors}
        encoders = {}
        for factor, entry in dict(data["encoders"]).items():
            if factor not in factors:
                raise ValueError(f"an encoder names {factor[:80]!r}, not a factor of the "
                                 "formula")
            categories = {}
            if "categories" in entry:
                levels = entry["categories"]
                _check_size(levels, f"the levels of {factor!r}", 1_000_000)
                categories = {"categories": np.asarray(levels).tolist()}
            encoders[factor] = (fm.Factor.Kind(entry["kind"]), categories)
        transforms = dict(data["transforms"])
        if len(transforms) > MAX_TERMS:
            raise ValueError(f"{len(transforms)} transform states, more than {MAX_TERMS}")
        for name, state in transforms.items():
            _check_state(state, f"the state of {name[:80]!r}", 0)
        return spec.update(encoder_state=encoders,
                           transform_state=_integer_keys_restored(transforms))
    except (KeyError, TypeError, ValueError, AttributeError, fm.FormulaicError) as exc:
        if language != FORMULA_LANGUAGE:  # an older file: the version is the news
            raise ValueError(_versioned(f"{type(exc).__name__}: {exc}", language)) from None
        raise ValueError(f"malformed or unsafe formula state ({type(exc).__name__}: "
                         f"{exc})"[:2000]) from None


def _check_size(values: Any, what: str, cap: int) -> None:
    size = len(values) if isinstance(values, (list, dict, np.ndarray)) else None
    if size is None:
        raise TypeError(f"{what} are not a list")
    if size > cap:
        raise ValueError(f"{what} hold {size} entries, more than {cap}")


def _check_state(state: Any, what: str, depth: int) -> None:
    """A transform's state: numbers, flags and text in lists and mappings of at most
    ``MAX_STATE_ITEMS`` entries, at most three deep."""
    if isinstance(state, (list, dict, np.ndarray)):
        if depth > 3:
            raise ValueError(f"{what} nests deeper than a transform's state does")
        _check_size(state, what, MAX_STATE_ITEMS)
        values = state.values() if isinstance(state, dict) else state
        for v in values:
            _check_state(v, what, depth + 1)
    elif not (state is None or isinstance(state, (bool, int, float, str, np.generic))):
        raise TypeError(f"{what} holds a {type(state).__name__}")
