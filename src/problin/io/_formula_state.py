"""A fitted formula's encoding (formulaic's ``ModelSpec``) as plain data in a model file.

formulaic offers no serialisation but pickle, which a model file never holds (loading
must execute nothing from the file). What a fitted spec adds to its formula text is data:
the levels of each categorical factor (whose contrasts, reference level included, follow
from the formula text and the levels) and the state of stateful transforms such as
``center(x)`` (numbers). :func:`spec_to_data` keeps these; :func:`spec_from_data` rebuilds
the spec, and the formula's columns are checked against the fitted ones at the first
prediction (:meth:`problin.Formula.transform`).

A formula is evaluated as Python by formulaic, so a formula read from a file is first
checked (:func:`check_formula_is_data`): its factors may only read columns, call the
formula transforms (``C``, ``I``, ``center``, ``scale``, ``poly``, ``bs`` ...), contrasts
(``Treatment(...)``, ``contr.treatment(...)``) and numpy's element-wise functions
(``np.log``, any ``numpy.ufunc``), with literals and arithmetic: no other call, attribute
or name beginning with an underscore, so a tampered file cannot run code. Arithmetic on
literals alone (which Python evaluates in unbounded integers) is computed here first and
refused beyond 65,536 bits, as are bit shifts and arithmetic on text or sequences, so
that it cannot run for ever either (``9**9**9``).
"""
import ast
import keyword
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..formula import formulaic_api  # formulaic, imported on first use (the formula extra)

__all__ = ["check_formula_is_data", "spec_from_data", "spec_to_data"]

_TRANSFORMS = frozenset({"C", "I", "Q", "center", "scale", "standardize", "poly", "bs", "cs",
                         "cr", "cc", "te", "hashed", "lag", "Treatment", "Sum", "Diff",
                         "Helmert", "Poly", "Custom"})
_CONTRASTS = frozenset({"treatment", "sum", "diff", "helmert", "poly", "custom"})
_NUMPY_EXTRA = frozenset({"clip", "where", "round", "around"})
_NODES = (ast.Expression, ast.Call, ast.Name, ast.Attribute, ast.Constant, ast.BinOp,
          ast.UnaryOp, ast.Compare, ast.BoolOp, ast.keyword, ast.Load, ast.Tuple, ast.List,
          ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def _allowed_attribute(node: ast.Attribute) -> bool:
    if not isinstance(node.value, ast.Name) or node.attr.startswith("_"):
        return False
    if node.value.id in ("np", "numpy"):
        return isinstance(getattr(np, node.attr, None), np.ufunc) or node.attr in _NUMPY_EXTRA
    return node.value.id == "contr" and node.attr in _CONTRASTS


def _as_evaluated(expr: str) -> str:
    """``expr`` as formulaic evaluates it: each `quoted name` (a column name) replaced
    by an identifier, by formulaic's own sanitiser, which skips backticks inside string
    literals. (A pattern of ours could disagree with it on where a quoted name ends, and
    then the code checked would not be the code run.) Sanitised names are prefixed, so
    that a column such as `1a` does not read as a private name."""
    from formulaic.utils.code import sanitize_variable_names
    return sanitize_variable_names(expr, {}, {}, template="quoted_{}")


# Arithmetic on literals alone is evaluated by Python's unbounded integers: a tampered
# file's `9**9**9` would run for ever. Such results may hold at most this many bits.
_LITERAL_BITS = 1 << 16
_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
               ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
               ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _literal_value(node: ast.AST, expr: str, seen: set[int]) -> Any:
    """The value of a subtree of numeric literals, computed within ``_LITERAL_BITS``
    (a ValueError beyond), or None where it reads a column or calls anything; the
    arithmetic nodes visited are added to ``seen`` (each is evaluated once)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (str, bytes)):
            return None
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal_value(node.operand, expr, seen)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if not isinstance(node, ast.BinOp):
        return None
    seen.add(id(node))
    a, b = _literal_value(node.left, expr, seen), _literal_value(node.right, expr, seen)
    if a is None or b is None:
        return None
    big = ValueError(f"factor {expr!r} computes a number beyond {_LITERAL_BITS} bits "
                     "from literals")
    if isinstance(node.op, ast.Pow):
        if isinstance(a, int) and isinstance(b, int) and b > 0 \
                and max(abs(a).bit_length() - 1, 0) * b > _LITERAL_BITS:
            raise big
        try:
            value = a ** b
        except (OverflowError, ZeroDivisionError):  # (floats: numpy would give inf)
            return 0.0
    elif type(node.op) in _ARITHMETIC:
        try:
            value = _ARITHMETIC[type(node.op)](a, b)
        except (OverflowError, ZeroDivisionError, TypeError):
            return 0.0
    else:
        raise ValueError(f"factor {expr!r} applies {type(node.op).__name__} to literals")
    if isinstance(value, int) and value.bit_length() > _LITERAL_BITS:
        raise big
    return value


def _check_expression(expr: str) -> None:
    try:
        tree = ast.parse(_as_evaluated(expr), mode="eval")
    except (SyntaxError, RecursionError, MemoryError):
        raise ValueError(f"factor {expr[:80]!r} is not an expression (or too deeply "
                         "nested)") from None
    seen: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            if any(isinstance(side, (ast.List, ast.Tuple)) or (isinstance(side, ast.Constant)
                   and isinstance(side.value, (str, bytes))) for side in (node.left, node.right)):
                raise ValueError(f"factor {expr!r} does arithmetic on a sequence or text")
            if isinstance(node.op, (ast.LShift, ast.RShift)):
                raise ValueError(f"factor {expr!r} shifts bits")
            if id(node) not in seen:
                try:
                    _literal_value(node, expr, seen)
                except RecursionError:
                    raise ValueError(f"factor {expr[:80]!r} is too deeply nested") from None
        if not isinstance(node, _NODES):
            raise ValueError(f"factor {expr!r} holds a {type(node).__name__}")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise ValueError(f"factor {expr!r} names {node.id!r}")
        if isinstance(node, ast.Attribute) and not _allowed_attribute(node):
            raise ValueError(f"factor {expr!r} reads the attribute {node.attr!r}")
        if isinstance(node, ast.Call) and not (
                (isinstance(node.func, ast.Name) and node.func.id in _TRANSFORMS)
                or isinstance(node.func, ast.Attribute)):
            raise ValueError(f"factor {expr!r} calls {ast.unparse(node.func)!r}, not a "
                             "formula transform or numpy function")


def check_formula_is_data(formula: str) -> None:
    """Raise ValueError unless every factor of ``formula`` is a column, a literal, or a
    formula transform / numpy function of them (see the module docstring)."""
    fm = formulaic_api()
    try:
        parsed = fm.Parsed(formula)
    except (fm.FormulaicError, SyntaxError) as exc:
        raise ValueError(f"cannot parse the formula {formula!r}: {exc}") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"cannot parse the formula {formula[:80]!r}...: too deeply "
                         "nested") from None
    parts = [parsed.lhs, parsed.rhs] if hasattr(parsed, "rhs") else [parsed]
    for part in parts:
        for term in part:
            for factor in term.factors:
                if factor.eval_method is fm.Factor.EvalMethod.PYTHON:
                    _check_expression(str(factor.expr))
                elif "__" in str(factor.expr):
                    raise ValueError(f"factor {str(factor.expr)!r} names a dunder attribute")


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
    return {"formula": _text(spec.formula, _has_intercept(spec.formula)),
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
        If the data are malformed or the formula is more than data
        (:func:`check_formula_is_data`).
    """
    fm = formulaic_api()
    try:
        formula = data["formula"]
        if not isinstance(formula, str):
            raise TypeError("the formula is not a string")
        check_formula_is_data(formula)
        if intercept is False:
            formula = _text(formula, False)
        encoders = {
            str(factor): (fm.Factor.Kind(entry["kind"]),
                          {"categories": np.asarray(entry["categories"]).tolist()}
                          if "categories" in entry else {})
            for factor, entry in dict(data["encoders"]).items()}
        return fm.ModelSpec(formula=formula, materializer="pandas",
                            ensure_full_rank=bool(data["ensure_full_rank"]), na_action="raise",
                            output="pandas", encoder_state=encoders,
                            transform_state=_integer_keys_restored(dict(data["transforms"])))
    except (KeyError, TypeError, ValueError, fm.FormulaicError) as exc:
        raise ValueError(f"malformed or unsafe formula state ({type(exc).__name__}: "
                         f"{exc})") from None
